"""The per-file cache under hostile conditions: forged documents with a matching checksum, a file where a folder
should be, two runs saving at once (parts included, past PART_BYTES). The hash is always the full one; a cache
that cannot be used or kept is a warning, never a failed hash."""

from __future__ import annotations

import gzip
import json
import logging
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from ubunye.exceptions import RecordError
from ubunye.hashing import hash_frame
from ubunye.hashing.delta_files import FileProfiles, FileSums
from ubunye.hashing.delta_hash import hash_delta
from ubunye.hashing.profile import profile_frame, profile_sums
from ubunye.lineage import file_sums
from ubunye.lineage.file_sums import FileSumsCache

TABLE = "/data/sales"


def _profiles(count: int, skip: int | None = None) -> FileProfiles:
    files = {}
    for i in range(count):
        if i != skip:
            part = profile_sums(pa.table({"x": pa.array([float(i), i / 3, None])}), key=["x"], buckets=8)
            files[f"part-{i:04d}.parquet"] = ((100 + i, 7, None), part)
    first = next(iter(files.values()))[1]
    return FileProfiles(TABLE, "table-id", "spark", first.schema, 1, ("x",), 8, files)


class _Interleaved(FileSumsCache):
    """A cache whose save of profiles lets another run save in full right after its document is written (before
    it cleans up parts): the worst interleaving of two runs saving one table at once."""

    def __init__(self, root: Path, other: FileSumsCache, theirs: FileProfiles) -> None:
        super().__init__(root)
        self._other, self._theirs = other, theirs

    def _write(self, folder: str, data: bytes) -> None:
        super()._write(folder, data)
        if self._theirs is not None and "profiles" in folder:
            theirs, self._theirs = self._theirs, None
            self._other.save_profiles(theirs)


def test_two_runs_saving_profiles_at_once_never_delete_each_others_parts(tmp_path, monkeypatch):
    import ubunye.lineage.file_profiles as file_profiles

    monkeypatch.setattr(file_profiles, "PART_BYTES", 4_000)  # several parts: the layout past 64 MiB
    before, after = _profiles(45, skip=44), _profiles(45)
    assert len(file_profiles.profiles_objects(before)[1]) >= 4
    FileSumsCache(tmp_path).save_profiles(before)
    # This run saves `after` (one part changed); the other saves `before` again (an older snapshot) meanwhile, its
    # document the newest, naming the part this run's listing found and no longer needs.
    _Interleaved(tmp_path, FileSumsCache(tmp_path), before).save_profiles(after)
    assert FileSumsCache(tmp_path).load_profiles(TABLE, "spark", ("x",), 8) == before


def test_profiles_saved_from_threads_at_once_always_load(tmp_path, monkeypatch):
    import ubunye.lineage.file_profiles as file_profiles

    monkeypatch.setattr(file_profiles, "PART_BYTES", 4_000)
    versions = [_profiles(30 + i) for i in range(4)]
    errors: list[BaseException] = []

    def save(p: FileProfiles) -> None:
        try:
            for _ in range(5):
                FileSumsCache(tmp_path).save_profiles(p)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(p,)) for p in versions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert FileSumsCache(tmp_path).load_profiles(TABLE, "spark", ("x",), 8) in versions


def _sums() -> FileSums:
    files = {"a.parquet": ((100, 5, None), (3, 7, 2**64 - 1))}
    return FileSums(TABLE, "table-id", "deltalake", 'struct<"a":int64>', 1, files)


def _forged(cache: FileSumsCache, change) -> None:
    """The document rewritten by ``change``, its checksum made to match: what only the field checks can refuse."""
    [doc] = Path(cache.where(TABLE, "deltalake")).glob("*.json.gz")
    body = json.loads(gzip.decompress(doc.read_bytes()))
    body.pop("checksum")
    change(body)
    body["checksum"] = file_sums.checksum(body)
    doc.write_bytes(gzip.compress(json.dumps(body).encode()))


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b["files"][0].__setitem__(4, "3"),  # a count as a string
        lambda b: b["files"][0].__setitem__(4, 3.0),  # a count as a float
        lambda b: b["files"][0].__setitem__(1, -100),  # a negative size
        lambda b: b["files"][0].__setitem__(5, "1" + "0" * 16),  # a sum over 2^64
        lambda b: b["files"][0].__setitem__(6, "FFFFFFFFFFFFFFFF"),  # upper case: not the form written
        lambda b: b["files"][0].__setitem__(0, 5),  # a path that is no string
        lambda b: b.__setitem__("files", {"a.parquet": []}),  # files no list
        lambda b: b.__setitem__("version", "1"),
        lambda b: b.__setitem__("schema", None),
        lambda b: b.__setitem__("table_id", 7),
        lambda b: b["files"].append(b["files"][0]),  # a file twice
        lambda b: b.__setitem__("reader", "spark"),  # another engine's
    ],
)
def test_a_forged_document_with_a_matching_checksum_is_refused(tmp_path, change):
    cache = FileSumsCache(tmp_path)
    cache.save(_sums())
    _forged(cache, change)
    with pytest.raises(RecordError):
        cache.load(TABLE, "deltalake")


def test_json_nested_too_deep_to_parse_is_a_corrupt_document(tmp_path):
    cache = FileSumsCache(tmp_path)
    cache.save(_sums())
    [doc] = Path(cache.where(TABLE, "deltalake")).glob("*.json.gz")
    doc.write_bytes(gzip.compress(b"[" * 100_000 + b"]" * 100_000))  # RecursionError in json, not a ValueError
    with pytest.raises(RecordError, match="corrupt cached sums"):
        cache.load(TABLE, "deltalake")


def _table(path: Path, n: int) -> None:
    for i in range(n):
        write_deltalake(str(path), pa.table({"id": np.arange(i * 3, i * 3 + 3), "s": [f"v{i}"] * 3}), mode="append")


@pytest.mark.parametrize("where", [".cache", ".cache/delta-file-sums", ".cache/delta-file-sums/deltalake"])
def test_a_file_where_a_cache_folder_should_be_is_a_full_hash_with_a_warning(tmp_path, caplog, where):
    path, records = tmp_path / "t", tmp_path / "records"
    _table(path, 2)
    (records / where).parent.mkdir(parents=True, exist_ok=True)
    (records / where).write_text("not a folder")
    cache = FileSumsCache(records)
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        for _ in range(2):
            got = hash_delta(str(path), cache=cache)
            assert got.hash == hash_frame(DeltaTable(str(path)).to_pyarrow_table())
            assert got.hash_mode == "full"
            profiled = hash_delta(str(path), cache=cache, profile=True, key=["id"], buckets=4)
            assert profiled.profile == profile_frame(DeltaTable(str(path)).to_pyarrow_table(), key=["id"], buckets=4)
    assert any("could not keep the per-file sums" in r.getMessage() for r in caplog.records)


def test_a_folder_where_a_document_should_be_is_skipped(tmp_path, caplog):
    path, records = tmp_path / "t", tmp_path / "records"
    _table(path, 2)
    cache = FileSumsCache(records)
    hash_delta(str(path), cache=cache)
    folder = Path(cache.where(str(path.resolve()), "deltalake"))
    (folder / "99999999999999999999-x.json.gz").mkdir()  # sorts newest
    _table(path, 1)
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        got = hash_delta(str(path), cache=cache)
    assert got.hash == hash_frame(DeltaTable(str(path)).to_pyarrow_table())
    assert (got.hash_mode, got.files_read) == ("incremental", 1)
