"""The per-file sums cache in a record store: written whole, newest wins, nothing untrusted is ever used."""

from __future__ import annotations

import gzip
import json
import logging
import uuid
from pathlib import Path

import pytest

from ubunye.exceptions import RecordError
from ubunye.hashing.delta_files import FileSums
from ubunye.lineage.file_sums import FileSumsCache
from ubunye.lineage.record import RunRecord
from ubunye.lineage.store import RecordStore

TABLE = "/data/sales"


def _sums(version: int = 1, s1: int = 7, table: str = TABLE) -> FileSums:
    files = {
        "day=1/a.parquet": ((100, 5, None), (3, s1, 2**64 - 1)),
        "b%20c.parquet": ((9, 6, "sha256:" + "d" * 64), (0, 0, 0)),
    }
    return FileSums(table, "table-id", "spark", 'struct<"a":int64>', version, files)


def _docs(cache: FileSumsCache) -> list[Path]:
    return sorted(Path(cache.where(TABLE, "spark")).glob("*.json.gz"))


def test_round_trip_and_the_newest_replaces_the_older(tmp_path):
    cache = FileSumsCache(tmp_path)
    assert cache.load(TABLE, "spark") is None
    cache.save(_sums(1))
    cache.save(_sums(2, s1=8))
    assert cache.load(TABLE, "spark") == _sums(2, s1=8)
    assert len(_docs(cache)) == 1  # the older one was deleted once the newer was in place
    assert cache.load(TABLE, "deltalake") is None  # another reader's sums are other sums


def test_file_urls_name_local_folders(tmp_path):
    FileSumsCache(tmp_path.as_uri()).save(_sums())
    assert FileSumsCache(tmp_path).load(TABLE, "spark") == _sums()


def test_an_untrusted_newest_document_yields_to_an_older_one_with_a_warning(tmp_path, caplog):
    cache = FileSumsCache(tmp_path)
    cache.save(_sums(1))
    [good] = _docs(cache)
    bad = good.with_name("99999999999999999999-x.json.gz")  # sorts newest
    bad.write_bytes(b"junk")
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        assert cache.load(TABLE, "spark") == _sums(1)
    assert any(str(bad) in r.getMessage() and "not gzip" in r.getMessage() for r in caplog.records)


def _rewritten(doc: Path, change) -> None:
    body = json.loads(gzip.decompress(doc.read_bytes()))
    change(body)
    doc.write_bytes(gzip.compress(json.dumps(body).encode()))


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda b: b["files"][0].__setitem__(4, 4), "checksum does not match"),
        (lambda b: b.__setitem__("format", "other"), "not a document of cached Delta file sums"),
        (lambda b: b.__setitem__("format_version", 2), "format_version 2"),
        (lambda b: b.__setitem__("table", "/data/other"), "table '/data/other'"),
        (lambda b: b.__setitem__("method", "rows-v2"), "method 'rows-v2'"),
        (lambda b: b.__setitem__("ubunye_version", "0.6.0"), "ubunye_version '0.6.0'"),  # sums of another ubunye
        (lambda b: b.pop("checksum"), "checksum does not match"),
    ],
)
def test_a_document_that_is_not_exactly_this_tables_is_refused(tmp_path, change, why):
    cache = FileSumsCache(tmp_path)
    cache.save(_sums())
    [doc] = _docs(cache)
    _rewritten(doc, change)
    with pytest.raises(RecordError, match=why) as err:
        cache.load(TABLE, "spark")
    assert str(err.value).startswith(str(doc))


@pytest.mark.parametrize(
    "entry",
    [
        ["p", 1, 2, None, 3, "00000000000000zz", "0000000000000000"],  # not hex
        ["p", 1, 2, None, -3, "0000000000000000", "0000000000000000"],  # negative count
        ["p", True, 2, None, 3, "0000000000000000", "0000000000000000"],  # a bool is no size
        ["p", 1, 2, 5, 3, "0000000000000000", "0000000000000000"],  # a deletion vector is a digest or null
        ["p", 1, 2, None, 3, "0000000000000000"],  # too short
        ["", 1, 2, None, 3, "0000000000000000", "0000000000000000"],  # no path
    ],
)
def test_a_malformed_entry_refuses_the_document_even_with_a_matching_checksum(tmp_path, entry):
    from ubunye.lineage import file_sums

    cache = FileSumsCache(tmp_path)
    cache.save(_sums())
    [doc] = _docs(cache)

    def forge(body):  # a document whose checksum is right for a malformed entry
        body.pop("checksum")
        body["files"][0] = entry
        body["checksum"] = file_sums.checksum(body)

    _rewritten(doc, forge)
    with pytest.raises(RecordError, match=r"files\[0\] is malformed"):
        cache.load(TABLE, "spark")


def test_the_record_store_never_sees_the_cache(tmp_path):
    store = RecordStore(records=tmp_path)
    store.write(RunRecord(run_id="r1", usecase="u", package="p", task="t", status="success"))
    FileSumsCache(tmp_path).save(_sums())
    entries = store.entries()
    assert [(e.record.run_id if e.record else None, e.problem) for e in entries] == [("r1", None)]


def test_an_object_store_keeps_one_document_written_once(tmp_path):
    root = f"memory://file-sums-{uuid.uuid4().hex}/records"
    cache = FileSumsCache(root)
    cache.save(_sums(1))
    cache.save(_sums(2))
    assert cache.load(TABLE, "spark") == _sums(2)
    store = RecordStore(records=root)
    assert store.entries() == []  # the cache's objects are not records, nor problems
    import fsspec

    fs = fsspec.filesystem("memory")
    assert len([p for p in fs.find(root.removeprefix("memory://")) if p.endswith(".json.gz")]) == 1
