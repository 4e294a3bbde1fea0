"""Hostile histories of Delta tables on Arrow (deltalake): the incremental hash and profile are always those of
``DeltaTable(path).to_pyarrow_table()`` (the pandas engine's read) at the version hashed, or ``hash_mode`` says
full and why.

Probed here (each step of a long history compared with a full read, older versions too, with one cache):
partition columns of many types (null, dates, timestamps, negative numbers, ``=``, ``/``, ``%``, ``%25``, spaces,
unicode, ``#``) in the middle of the schema, schema merges adding a column and a nested struct field, deletes,
updates and merges (files rewritten), a replaceWhere overwrite, compaction and Z-order, checkpoints with the older
log entries cleaned away, RESTORE to an older version, vacuum, time travel with a cache filled at a newer version;
a table reached through another spelling of its path (a trailing slash, a ``file://`` URL, a symlink); tables
sharing one cache; and a table replaced at its path by another whose log is longer than the cached one's.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from tests.hashing.profile_checks import assert_same_profile
from ubunye.hashing import hash_frame
from ubunye.hashing.delta_hash import hash_delta
from ubunye.hashing.profile import profile_frame
from ubunye.lineage.file_sums import FileSumsCache

KEY, BUCKETS = ["id"], 16
UTC = dt.timezone.utc

#: String partition values that need escaping in a folder name or a URL, or look like an escape already.
ODD = [None, "a=b", "x/y", "50%", "%25", "a b", "ü", "#h", "q?r", "c:d", "t\tab", "+plus"]


def _schema(extra: bool = False, wider: bool = False) -> pa.Schema:
    fields: list[pa.Field] = [
        pa.field("id", pa.int64()),
        pa.field("p", pa.string()),  # partition columns in the middle of the schema
        pa.field("day", pa.date32()),
        pa.field("v", pa.float64()),
        pa.field("n", pa.int32()),
        pa.field("at", pa.timestamp("us", "UTC")),
        pa.field("s", pa.struct([("x", pa.int32()), *([("y", pa.string())] if wider else [])])),
    ]
    if extra:
        fields.append(pa.field("extra", pa.decimal128(12, 3)))
    return pa.schema(fields)


def _rows(ids: list[int], schema: pa.Schema) -> pa.Table:
    wider = "y" in [f.name for f in schema.field("s").type]
    data = {
        "id": ids,
        "p": [ODD[i % len(ODD)] for i in ids],
        "day": [None if i % 7 == 3 else dt.date(1969 + i % 3, 12, 31) for i in ids],
        "v": [float("nan") if i % 5 == 0 else None if i % 5 == 1 else i / 7 for i in ids],
        "n": [-(i % 4) for i in ids],
        "at": [dt.datetime(2024, 3, 31, 23, 59, i % 60, 123456, tzinfo=UTC) for i in ids],
        "s": [None if i % 6 == 5 else {"x": i, **({"y": f"y{i}"} if wider else {})} for i in ids],
    }
    if "extra" in schema.names:
        data["extra"] = [None if i % 2 else Decimal(f"-{i}.125") for i in ids]
    return pa.table(data, schema=schema)


def _full(path: Path, version: int | None = None):
    return hash_frame(DeltaTable(str(path), version=version).to_pyarrow_table())


def _full_profile(path: Path, version: int | None = None):
    return profile_frame(DeltaTable(str(path), version=version).to_pyarrow_table(), key=KEY, buckets=BUCKETS)


def _check(path: Path, cache: FileSumsCache, version: int | None = None, where: str | None = None) -> tuple:
    """Hash and profile ``path`` (or the spelling ``where``) incrementally, each checked against a full read;
    returns the two results."""
    uri = where or str(path)
    got = hash_delta(uri, cache=cache, version=version)
    assert got.hash == _full(path, version), (version, got)
    assert (got.hash_mode == "incremental") == (got.files_reused > 0) == (got.reason is None), got
    profiled = hash_delta(uri, cache=cache, version=version, profile=True, key=KEY, buckets=BUCKETS)
    assert profiled.profile is not None
    assert_same_profile(profiled.profile, _full_profile(path, version))
    assert profiled.version == got.version == (version if version is not None else DeltaTable(str(path)).version())
    return got, profiled


def _ids(counter: list[int], n: int) -> list[int]:
    start = counter[0]
    counter[0] += n
    return list(range(start, start + n))


def test_a_long_history_hashes_as_read_at_every_version(tmp_path):
    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    counter = [0]
    parts = ["p", "day", "n"]
    write_deltalake(str(path), _rows(_ids(counter, 24), _schema()), partition_by=parts)
    modes: list[str] = []

    def step(_what: str, older: bool = True) -> None:
        got, profiled = _check(path, cache)
        modes.extend([got.hash_mode, profiled.hash_mode])
        latest = DeltaTable(str(path)).version()
        if older and latest > 1:  # an older version, with the cache filled at a newer one, then the latest again
            _check(path, cache, version=latest - 2)
            _check(path, cache)

    step("create")
    write_deltalake(str(path), _rows(_ids(counter, 5), _schema()), mode="append", partition_by=parts)
    step("append")
    write_deltalake(
        str(path), _rows(_ids(counter, 6), _schema(extra=True, wider=True)), mode="append", schema_mode="merge"
    )
    step("schema merge: a column and a nested field added")
    write_deltalake(str(path), _rows(_ids(counter, 3), _schema(extra=True, wider=True)), mode="append")
    step("append after the merge: old files lack extra and s.y")
    DeltaTable(str(path)).delete("id % 4 = 1")
    step("delete")
    DeltaTable(str(path)).update(updates={"v": "v * 2"}, predicate="id % 3 = 0")
    step("update")
    source = _rows([2, 5, 100, 101], _schema(extra=True, wider=True))
    (
        DeltaTable(str(path))
        .merge(source, predicate="t.id = s.id", source_alias="s", target_alias="t")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    step("merge")
    # ids with n = 0 (id % 4 == 0): the rows replacing those of that partition value
    replacing = _rows([200, 212, 224], _schema(extra=True, wider=True))
    write_deltalake(str(path), replacing, mode="overwrite", predicate="n = 0")
    step("replaceWhere overwrite of one partition value")
    DeltaTable(str(path)).optimize.compact()
    step("compact")
    DeltaTable(str(path)).optimize.z_order(["id"])
    step("z-order")
    v_before = DeltaTable(str(path)).version()
    write_deltalake(str(path), _rows(_ids(counter, 4), _schema(extra=True, wider=True)), mode="append")
    step("append")
    DeltaTable(str(path)).restore(v_before - 3)
    step("restore to an older version")
    write_deltalake(str(path), _rows(_ids(counter, 2), _schema(extra=True, wider=True)), mode="append")
    step("append after the restore")
    DeltaTable(str(path)).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    step("vacuum", older=False)  # older versions lost files to the vacuum
    assert modes.count("incremental") >= len(modes) // 2, modes  # the history is mostly hashed incrementally


def test_a_log_cleaned_down_to_its_checkpoint_hashes_incrementally(tmp_path):
    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    counter = [0]
    for _ in range(4):
        write_deltalake(str(path), _rows(_ids(counter, 3), _schema()), mode="append", partition_by=["p"])
    _check(path, cache)
    DeltaTable(str(path)).create_checkpoint()
    write_deltalake(str(path), _rows(_ids(counter, 3), _schema()), mode="append", partition_by=["p"])
    DeltaTable(str(path)).create_checkpoint()
    for entry in sorted((path / "_delta_log").glob("*.json"))[:-1]:  # what log cleanup leaves: the checkpoint
        entry.unlink()
    got, _ = _check(path, cache)
    assert (got.hash_mode, got.files_read) == ("incremental", 3)
    write_deltalake(str(path), _rows(_ids(counter, 1), _schema()), mode="append", partition_by=["p"])
    got, _ = _check(path, cache)
    assert (got.hash_mode, got.files_read) == ("incremental", 1)


@pytest.mark.parametrize("kind", ["date", "timestamp", "int", "decimal", "bool", "odd strings"])
def test_typed_partition_values_hash_incrementally(tmp_path, kind):
    values = {
        "date": [dt.date(1582, 10, 10), dt.date(1, 1, 1), None, dt.date(9999, 12, 31)],
        "timestamp": [dt.datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=UTC), None, dt.datetime(1969, 12, 31, tzinfo=UTC)],
        "int": [-(2**63), 0, None, 2**63 - 1],
        "decimal": [Decimal("1.50"), None, Decimal("0.00"), Decimal("99999.99")],
        "bool": [True, None, False],
        "odd strings": ODD,
    }[kind]
    kinds = {
        "date": pa.date32(),
        "timestamp": pa.timestamp("us", "UTC"),
        "int": pa.int64(),
        "decimal": pa.decimal128(7, 2),
        "bool": pa.bool_(),
        "odd strings": pa.string(),
    }
    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    for i, value in enumerate(values):
        rows = pa.table({"id": [i, i + 100], "q": pa.array([value, value], kinds[kind])})
        write_deltalake(str(path), rows, mode="append", partition_by=["q"])
        got, profiled = _check(path, cache)
        if i:
            assert (got.hash_mode, got.files_read, profiled.files_read) == ("incremental", 1, 1), got.reason
    assert DeltaTable(str(path)).to_pyarrow_table().num_rows == 2 * len(values)


@pytest.mark.parametrize("spelling", ["slash", "file url", "symlink", "relative"])
def test_another_spelling_of_the_path_reuses_the_cache_and_hashes_the_same(tmp_path, spelling, monkeypatch):
    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    counter = [0]
    write_deltalake(str(path), _rows(_ids(counter, 4), _schema()))
    _check(path, cache)
    write_deltalake(str(path), _rows(_ids(counter, 4), _schema()), mode="append")
    if spelling == "symlink":
        os.symlink(path, tmp_path / "link")
        where = str(tmp_path / "link")
    elif spelling == "relative":
        monkeypatch.chdir(tmp_path)
        where = "t"
    else:
        where = {"slash": str(path) + "/", "file url": path.as_uri()}[spelling]
    got, profiled = _check(path, cache, where=where)
    assert (got.hash_mode, got.files_read, profiled.hash_mode, profiled.files_read) == (
        "incremental",
        1,
        "incremental",
        1,
    )


def test_tables_sharing_a_cache_never_use_each_others_sums(tmp_path):
    cache = FileSumsCache(tmp_path / "records")
    a, b = tmp_path / "a", tmp_path / "b"
    counter = [0]
    for _ in range(3):
        for path in (a, b):
            write_deltalake(str(path), _rows(_ids(counter, 2), _schema()), mode="append", partition_by=["p"])
            _check(path, cache)
    shutil.copytree(a, tmp_path / "a copy")  # the same table id, files and log at another path
    write_deltalake(str(tmp_path / "a copy"), _rows(_ids(counter, 2), _schema()), mode="append")
    got, _ = _check(tmp_path / "a copy", cache)
    assert got.hash_mode == "full"  # its own cache folder: nothing of a's is taken for it
    got, _ = _check(a, cache)
    assert (got.hash_mode, got.files_read) == ("incremental", 0)


def test_a_table_replaced_by_a_copy_of_an_older_state_of_itself_hashes_as_read(tmp_path):
    # The cache was filled at a newer version than the table at that path now holds (same table id: the table
    # restored from a backup copy), then both histories diverge.
    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    counter = [0]
    for _ in range(2):
        write_deltalake(str(path), _rows(_ids(counter, 3), _schema()), mode="append")
    shutil.copytree(path, tmp_path / "backup")
    DeltaTable(str(path)).delete("id = 0")  # rewrites the first file only
    write_deltalake(str(path), _rows(_ids(counter, 3), _schema()), mode="append")
    _check(path, cache)
    shutil.rmtree(path)
    shutil.copytree(tmp_path / "backup", path)
    got, _ = _check(path, cache)
    assert (got.hash_mode, got.files_read) == ("incremental", 1)  # its second file the newer version still had
    write_deltalake(str(path), _rows(_ids(counter, 3), _schema()), mode="overwrite")
    got, _ = _check(path, cache)
    assert got.hash_mode == "full"


def test_the_dataset_read_without_statistics_guarantees_is_deltalakes_own_table(tmp_path):
    # arrow_dataset hands deltalake only the partition columns (its per-file statistics guarantees cost a quarter of
    # a millisecond a file): the values read must still be to_pyarrow_table()'s, partitions, nulls and a column
    # added later (missing from the older files) included.
    from ubunye.hashing.delta_files import arrow_dataset

    path = str(tmp_path / "t")
    days = [dt.date(2024, 1, 1), None, dt.date(1, 1, 1)]
    for i, (tag, day) in enumerate(zip(["a b", "", None], days, strict=True)):
        rows = pa.table({"id": [i, i + 10], "tag": [tag, tag], "day": [day, day], "x": [1.5, float("nan")]})
        write_deltalake(path, rows, mode="append", partition_by=["tag", "day"])
    later = pa.table({"id": [99], "tag": ["z"], "day": [days[0]], "x": [None], "extra": ["new"]})
    write_deltalake(path, later, mode="append", partition_by=["tag", "day"], schema_mode="merge")
    table = DeltaTable(path)
    got, want = arrow_dataset(table).to_table().sort_by("id"), table.to_pyarrow_table().sort_by("id")
    assert got.schema == want.schema
    assert repr(got.to_pylist()) == repr(want.to_pylist())  # repr: NaN is no NaN's equal
    assert hash_frame(got) == hash_frame(want) == hash_frame(table.to_pyarrow_dataset().to_table())
    assert got.column("extra").null_count == got.num_rows - 1 and got.column("tag").null_count == 4
