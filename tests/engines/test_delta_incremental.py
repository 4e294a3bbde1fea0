"""Incremental rows-v1 and profile-v1 of Delta tables on Arrow (deltalake): always those of the table read whole.

The reference is what the pandas engine hashes and profiles: ``hash_frame`` / ``profile_frame`` of
``DeltaTable(path).to_pyarrow_table()``. Random sequences of appends, deletes, updates, overwrites, OPTIMIZE,
VACUUM and schema-merging appends are checked after every step, on plain and partitioned tables, with and without
a key, with the cache in a local folder.
"""

from __future__ import annotations

import gzip
import json
import logging
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hashing.profile_checks import assert_same_profile
from ubunye.hashing import hash_frame
from ubunye.hashing.delta_hash import hash_delta
from ubunye.hashing.profile import profile_frame
from ubunye.lineage.file_sums import FileSumsCache

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("day", pa.string())])
EXTRA = pa.schema([*SCHEMA, ("score", pa.float64())])


def _full(path: Path):
    return hash_frame(DeltaTable(str(path)).to_pyarrow_table())


def _full_profile(path: Path, key, buckets):
    return profile_frame(DeltaTable(str(path)).to_pyarrow_table(), key=key, buckets=buckets)


def _rows(ids: list[int], schema: pa.Schema, day: str | None = None) -> pa.Table:
    columns = {
        "id": ids,
        "name": [None if i % 4 == 0 else f"n{i}é" for i in ids],
        "day": [day if day is not None else (None if i % 5 == 0 else f"d{i % 3} a/b%") for i in ids],
    }
    if "score" in schema.names:  # nulls and NaNs: a float column's profile counts both
        columns["score"] = [None if i % 2 else float("nan") if i % 3 == 0 else i / 3 for i in ids]
    return pa.table(columns, schema=schema)


def _schema(path: Path) -> pa.Schema:
    return EXTRA if "score" in DeltaTable(str(path)).schema().to_arrow().names else SCHEMA  # type: ignore[attr-defined]


def _apply(path: Path, step: tuple[str, int], partitioned: bool, counter: list[int]) -> None:
    op, arg = step
    table = DeltaTable(str(path))
    partition_by = ["day"] if partitioned else None
    if op in ("append", "overwrite", "merge"):
        start = counter[0]
        counter[0] += arg + 1
        schema = EXTRA if op == "merge" else _schema(path)
        rows = _rows(list(range(start, start + arg + 1)), schema)
        mode = "overwrite" if op == "overwrite" else "append"
        write_deltalake(
            str(path), rows, mode=mode, partition_by=partition_by, schema_mode="merge" if op == "merge" else None
        )
    elif op == "delete":
        table.delete(f"id % 4 = {arg % 4}")
    elif op == "update":
        table.update(updates={"name": "'upd'"}, predicate=f"id % 3 = {arg % 3}")
    elif op == "optimize":
        table.optimize.compact()
    elif op == "vacuum":
        table.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)


STEPS = st.lists(
    st.tuples(st.sampled_from(["append", "append", "delete", "update", "overwrite", "optimize", "vacuum", "merge"]),
              st.integers(0, 6)),
    min_size=1,
    max_size=6,
)  # fmt: skip


KEYS = st.sampled_from([None, ["id"], ["name", "day"]])
BUCKETS = st.sampled_from([0, 1, 16, 256])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS, partitioned=st.booleans(), key=KEYS, buckets=BUCKETS)
def test_incremental_equals_full_after_every_step(tmp_path_factory, steps, partitioned, key, buckets):
    path = tmp_path_factory.mktemp("table") / "t"
    cache = FileSumsCache(tmp_path_factory.mktemp("records"))
    write_deltalake(str(path), _rows([0, 1, 2], SCHEMA), partition_by=["day"] if partitioned else None)
    counter = [3]
    before = hash_delta(str(path), cache=cache)
    assert before.hash == _full(path) and before.hash_mode == "full"
    key = key if buckets else None  # a key places rows in buckets: none without them
    profiled = hash_delta(str(path), cache=cache, profile=True, key=key, buckets=buckets)
    assert profiled.hash_mode == "full"  # the sums cached just before are no profiles
    assert_same_profile(profiled.profile, _full_profile(path, key, buckets))
    for step in steps:
        _apply(path, step, partitioned, counter)
        for got in (
            hash_delta(str(path), cache=cache),
            hash_delta(str(path), cache=cache, profile=True, key=key, buckets=buckets),
        ):
            assert got.hash == _full(path), step
            assert got.version == DeltaTable(str(path)).version()
            assert got.files == len(DeltaTable(str(path)).file_uris()) == got.files_reused + got.files_read
            assert (got.hash_mode == "incremental") == (got.files_reused > 0)
            assert (got.reason is None) == (got.hash_mode == "incremental")
        assert_same_profile(got.profile, _full_profile(path, key, buckets))
        assert got.profile.hash == got.hash


def _table_of(path: Path, files: int, partitioned: bool = False) -> None:
    for i in range(files):
        write_deltalake(
            str(path), _rows([3 * i, 3 * i + 1], SCHEMA, day=f"d{i % 2}"), mode="append",
            partition_by=["day"] if partitioned else None,
        )  # fmt: skip


@pytest.mark.parametrize("partitioned", [False, True])
def test_only_the_added_file_is_read(tmp_path, partitioned):
    path = tmp_path / "t"
    cache = FileSumsCache(tmp_path / "records")
    _table_of(path, 5, partitioned)
    first = hash_delta(str(path), cache=cache)
    assert (first.hash_mode, first.files_read, first.reason) == ("full", 5, "no sums of this table are cached yet")
    old = [Path(u) for u in DeltaTable(str(path)).file_uris()]
    write_deltalake(
        str(path), _rows([100], SCHEMA, day="d1"), mode="append", partition_by=["day"] if partitioned else None
    )
    expected = _full(path)
    for f in old:  # an old file that were read now would fail the hash: only the new one may be read
        f.write_bytes(b"not parquet")
    got = hash_delta(str(path), cache=cache)
    assert got.hash == expected
    assert (got.hash_mode, got.reason, got.files_reused, got.files_read) == ("incremental", None, 5, 1)


def test_removed_files_are_not_counted(tmp_path):
    path = tmp_path / "t"
    cache = FileSumsCache(tmp_path / "records")
    _table_of(path, 4)
    hash_delta(str(path), cache=cache)
    DeltaTable(str(path)).delete("id < 3")  # the first file's rows only: it is removed, nothing is added
    got = hash_delta(str(path), cache=cache)
    assert got.hash == _full(path)
    assert (got.hash_mode, got.files_removed, got.files_read, got.files_reused) == ("incremental", 1, 0, 3)


def test_without_a_cache_every_file_is_read(tmp_path):
    path = tmp_path / "t"
    _table_of(path, 2)
    got = hash_delta(str(path))
    assert got.hash == _full(path)
    assert (got.hash_mode, got.reason, got.files_read) == ("full", "no cache of per-file sums was given", 2)


def test_an_older_version_is_hashed_as_read_at_it(tmp_path):
    path = tmp_path / "t"
    cache = FileSumsCache(tmp_path / "records")
    _table_of(path, 3)
    hash_delta(str(path), cache=cache)
    got = hash_delta(str(path), cache=cache, version=1)
    assert got.version == 1
    assert got.hash == hash_frame(DeltaTable(str(path), version=1).to_pyarrow_table())
    assert (got.hash_mode, got.files_reused) == ("incremental", 2)


def test_a_schema_change_hashes_in_full_and_says_so(tmp_path):
    path = tmp_path / "t"
    cache = FileSumsCache(tmp_path / "records")
    _table_of(path, 2)
    hash_delta(str(path), cache=cache)
    write_deltalake(str(path), _rows([50], EXTRA), mode="append", schema_mode="merge")
    got = hash_delta(str(path), cache=cache)
    assert got.hash == _full(path)
    assert got.hash_mode == "full"
    assert got.reason == (
        'the table\'s schema changed since its sums were cached (was struct<"day":string,"id":int64,"name":string>, '
        'now struct<"day":string,"id":int64,"name":string,"score":float64>)'
    )
    assert hash_delta(str(path), cache=cache).hash_mode == "incremental"  # cached again under the new schema


def _edited(data: bytes) -> bytes:
    body = json.loads(gzip.decompress(data))
    s1 = body["files"][0][5]
    body["files"][0][5] = f"{(int(s1, 16) + 1) % 2**64:016x}"
    return gzip.compress(json.dumps(body).encode())


def _documents(cache: FileSumsCache, path: Path) -> list[Path]:
    return sorted(Path(cache.where(str(path.resolve()), "deltalake")).glob("*.json.gz"))


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # cut short
        lambda data: b"\x00" * len(data),  # not gzip
        lambda data: gzip.compress(b"[1, 2"),  # not JSON
        # a sum changed without its checksum: the one fault a plain JSON reader would take for the truth
        lambda data: _edited(data),
    ],
    ids=["truncated", "not-gzip", "not-json", "edited"],
)
def test_a_corrupt_cache_is_ignored_with_a_warning(tmp_path, caplog, damage):
    path = tmp_path / "t"
    cache = FileSumsCache(tmp_path / "records")
    _table_of(path, 3)
    hash_delta(str(path), cache=cache)
    [doc] = _documents(cache, path)
    doc.write_bytes(damage(doc.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        got = hash_delta(str(path), cache=cache)
    assert got.hash == _full(path)
    assert got.hash_mode == "full"
    assert got.reason.startswith("cached sums ignored: ") and "corrupt cached sums" in got.reason
    assert str(doc) in got.reason
    assert any("cached file sums ignored" in r.getMessage() for r in caplog.records)
    again = hash_delta(str(path), cache=cache)  # the cache was written anew
    assert (again.hash_mode, again.files_read) == ("incremental", 0)
    assert [d.name for d in _documents(cache, path)] != [doc.name]


def test_another_tables_cache_is_never_used(tmp_path, caplog):
    a, b = tmp_path / "a", tmp_path / "b"
    cache = FileSumsCache(tmp_path / "records")
    _table_of(a, 2)
    _table_of(b, 2)
    hash_delta(str(a), cache=cache)
    [doc] = _documents(cache, a)
    folder = Path(cache.where(str(b.resolve()), "deltalake"))
    folder.mkdir(parents=True)
    shutil.copy(doc, folder / doc.name)  # a's document where b's would be
    got = hash_delta(str(b), cache=cache)
    assert got.hash == _full(b) and got.hash_mode == "full"
    assert "not this table's" in got.reason and str(a.resolve()) in got.reason


def test_a_table_recreated_at_the_same_path_is_another_table(tmp_path, caplog):
    path = tmp_path / "t"
    cache = FileSumsCache(tmp_path / "records")
    _table_of(path, 2)
    hash_delta(str(path), cache=cache)
    shutil.rmtree(path)
    _table_of(path, 2)
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        got = hash_delta(str(path), cache=cache)
    assert got.hash == _full(path) and got.hash_mode == "full"
    assert got.reason.startswith("the cached sums are of another table at this location (id ")
    assert any("another table" in r.getMessage() for r in caplog.records)


def test_the_cache_in_an_object_store(tmp_path):
    path = tmp_path / "t"
    cache = FileSumsCache("memory://delta-incremental-test/records")
    _table_of(path, 3)
    assert hash_delta(str(path), cache=cache).hash_mode == "full"
    write_deltalake(str(path), _rows([99], SCHEMA), mode="append")
    got = hash_delta(str(path), cache=cache)
    assert got.hash == _full(path)
    assert (got.hash_mode, got.files_read, got.files_reused) == ("incremental", 1, 3)


def test_a_cache_that_cannot_be_written_costs_nothing_but_a_warning(tmp_path, caplog):
    path = tmp_path / "t"
    _table_of(path, 2)
    blocked = tmp_path / "records"
    blocked.write_text("a file where the cache folder would be")
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        got = hash_delta(str(path), cache=FileSumsCache(blocked))
    assert got.hash == _full(path)
    assert any("could not keep the per-file sums" in r.getMessage() for r in caplog.records)


def test_deltalake_deletes_rewrite_files_so_the_hash_stays_incremental(tmp_path):
    # deltalake's delete writes no deletion vectors: it rewrites the files it touches (checked here, since a
    # deletion vector would make a file's rows differ from its Parquet file's).
    path = tmp_path / "t"
    cache = FileSumsCache(tmp_path / "records")
    _table_of(path, 3)
    hash_delta(str(path), cache=cache)
    DeltaTable(str(path)).delete("id = 4")
    assert "deletionVectors" not in (DeltaTable(str(path)).protocol().reader_features or [])
    got = hash_delta(str(path), cache=cache)
    assert got.hash == _full(path)
    assert (got.hash_mode, got.files_read, got.files_reused, got.files_removed) == ("incremental", 1, 2, 1)


def test_a_table_deltalakes_arrow_reader_refuses_is_refused_alike(tmp_path):
    # deletion vectors allowed by the protocol: to_pyarrow_table (the pandas engine's read) refuses the table,
    # and so does the hash, with the same error, rather than hash rows no engine here reads.
    path = tmp_path / "t"
    write_deltalake(str(path), _rows([1, 2], SCHEMA), configuration={"delta.enableDeletionVectors": "true"})
    with pytest.raises(Exception) as full:
        DeltaTable(str(path)).to_pyarrow_table()
    with pytest.raises(type(full.value), match="deletionVectors"):
        hash_delta(str(path), cache=FileSumsCache(tmp_path / "records"))


def test_engine_jvm_needs_spark(tmp_path):
    with pytest.raises(ValueError, match="engine='jvm' hashes through Spark"):
        hash_delta(str(tmp_path), engine="jvm")


def test_the_document_is_compact_json(tmp_path):
    path = tmp_path / "t"
    cache = FileSumsCache(tmp_path / "records")
    _table_of(path, 2)
    got = hash_delta(str(path), cache=cache)
    [doc] = _documents(cache, path)
    body = json.loads(gzip.decompress(doc.read_bytes()))
    assert body["table"] == str(path.resolve()) and body["reader"] == "deltalake" and body["version"] == got.version
    actions = pa.table(DeltaTable(str(path)).get_add_actions())
    logged = dict(zip(actions.column("path").to_pylist(), actions.column("size_bytes").to_pylist(), strict=True))
    assert {f[0]: f[1] for f in body["files"]} == logged
    for name, _size, _modified, dv, n, _s1, _s2 in body["files"]:  # each file's count is its Parquet row count
        assert (dv, n) == (None, pq.read_metadata(path / name).num_rows)


# --- profile-v1 from per-file partials -------------------------------------------------------------------------


def _profile(path: Path, cache, key=("id",), buckets=16):
    return hash_delta(str(path), cache=cache, profile=True, key=list(key) if key else None, buckets=buckets)


def _profile_documents(cache: FileSumsCache, path: Path, key=("id",), buckets=16) -> list[Path]:
    return sorted(Path(cache.where_profiles(str(path.resolve()), "deltalake", key, buckets)).glob("*.json.gz"))


@pytest.mark.parametrize("key", [("id",), None])
def test_a_profiled_append_reads_only_the_added_file(tmp_path, key):
    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    _table_of(path, 5, partitioned=True)
    first = _profile(path, cache, key)
    assert (first.hash_mode, first.files_read) == ("full", 5)
    assert (
        first.reason
        == f"no per-file profiles of this table (key {list(key) if key else None}, 16 buckets) are cached yet"
    )
    old = [Path(u) for u in DeltaTable(str(path)).file_uris()]
    write_deltalake(str(path), _rows([100, 101], EXTRA, day="d1"), mode="append", schema_mode="merge")
    write_deltalake(str(path), _rows([102], EXTRA, day="d0"), mode="append")
    got = _profile(path, cache, key)  # the schema changed: every file read, and cached under the new schema
    assert (got.hash_mode, got.files_read) == ("full", 7)
    assert got.reason.startswith("the table's schema changed since its profiles were cached (was ")
    write_deltalake(str(path), _rows([104, 105], EXTRA, day="d0"), mode="append")
    want = _full_profile(path, list(key) if key else None, 16)
    for f in old:  # an old file that were read now would fail the profile: only the new one may be read
        f.write_bytes(b"not parquet")
    got = _profile(path, cache, key)
    assert (got.hash_mode, got.reason, got.files_reused, got.files_read) == ("incremental", None, 7, 1)
    assert_same_profile(got.profile, want)
    assert got.profile.columns["score"].nans == 1 and got.profile.columns["score"].nulls > 0  # id 102 is the one NaN


def test_partials_of_another_key_or_bucket_count_are_never_used(tmp_path):
    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    _table_of(path, 3)
    _profile(path, cache, ("id",), 16)
    for key, buckets in ((None, 16), (("id",), 32), (("day", "id"), 16)):
        got = _profile(path, cache, key, buckets)
        shown = list(key) if key else None
        assert (got.hash_mode, got.files_read) == ("full", 3)
        assert got.reason == f"no per-file profiles of this table (key {shown}, {buckets} buckets) are cached yet"
        assert_same_profile(got.profile, _full_profile(path, shown, buckets))
    again = _profile(path, cache, ("id",), 16)  # each key and bucket count keeps its own partials
    assert (again.hash_mode, again.files_read) == ("incremental", 0)
    # A document of key id, 16 buckets where those of no key, 16 buckets are kept is refused for what it is.
    [doc] = _profile_documents(cache, path, ("id",), 16)
    [other] = _profile_documents(cache, path, None, 16)
    other.write_bytes(doc.read_bytes())
    got = _profile(path, cache, None, 16)
    assert got.hash_mode == "full" and got.reason.startswith("cached profiles ignored: ")
    assert "cached profiles of key ['id'] and 16 buckets, not of key None and 16 buckets" in got.reason
    assert_same_profile(got.profile, _full_profile(path, None, 16))


def _forged(change):
    def forge(data: bytes) -> bytes:  # a checksum that is right for a changed body: only the content checks remain
        from ubunye.lineage.file_sums import checksum

        body = json.loads(gzip.decompress(data))
        body.pop("checksum")
        change(body)
        body["checksum"] = checksum(body)
        return gzip.compress(json.dumps(body).encode())

    return forge


def _bumped_bucket(body) -> None:
    import base64

    raw = bytearray(base64.b64decode(body["files"][0][4]))
    raw[-1] ^= 1  # the last bucket's sum2: the buckets no longer add up to the file's sums
    body["files"][0][4] = base64.b64encode(bytes(raw)).decode()


def _more_nans(body) -> None:
    import base64

    import numpy as np

    words = np.frombuffer(base64.b64decode(body["files"][0][4]), dtype=">u8").copy()
    words[4] = 1  # the first column's (day, a string) NaN count
    body["files"][0][4] = base64.b64encode(words.tobytes()).decode()


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda data: data[: len(data) // 2], "corrupt cached profiles (the gzip stream is cut short)"),
        (lambda data: gzip.compress(b"[1, 2"), "corrupt cached profiles (not JSON"),
        (_forged(lambda b: None), None),  # rewritten but valid: reused (so the forging alone refuses nothing)
        (_forged(lambda b: b.__setitem__("ubunye_version", "0.0.1")), "ubunye_version '0.0.1'"),
        (_forged(_bumped_bucket), "corrupt cached profiles (files[0] is malformed or repeated)"),
        (_forged(_more_nans), "corrupt cached profiles (files[0] is malformed or repeated)"),
        (_forged(lambda b: b.__setitem__("columns", b["columns"][::-1])), "corrupt cached profiles (columns"),
    ],
    ids=["truncated", "not-json", "intact", "other-version", "bucket-sums", "nans-of-a-string", "columns-order"],
)
def test_a_corrupt_profile_cache_is_a_full_profile_with_a_warning(tmp_path, caplog, damage, why):
    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    _table_of(path, 3)
    _profile(path, cache)
    [doc] = _profile_documents(cache, path)
    doc.write_bytes(damage(doc.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        got = _profile(path, cache)
    assert_same_profile(got.profile, _full_profile(path, ["id"], 16))
    if why is None:
        assert (got.hash_mode, got.files_read) == ("incremental", 0)
        return
    assert got.hash_mode == "full" and got.reason.startswith(f"cached profiles ignored: {doc}: ")
    assert why in got.reason
    assert any("cached file profiles ignored" in r.getMessage() for r in caplog.records)
    again = _profile(path, cache)  # the full read wrote the cache anew
    assert (again.hash_mode, again.files_read) == ("incremental", 0)


def test_a_profile_key_naming_no_column_is_refused_before_any_read(tmp_path):
    from ubunye.hashing.profile import ProfileOptionError

    path = tmp_path / "t"
    _table_of(path, 1)
    for f in DeltaTable(str(path)).file_uris():
        Path(f).write_bytes(b"not parquet")  # read, it would fail otherwise
    with pytest.raises(ProfileOptionError, match="key column 'idd' is not a column of the table"):
        hash_delta(str(path), profile=True, key=["idd"], buckets=16)


def test_profiles_too_large_to_read_back_are_not_written(tmp_path, caplog, monkeypatch):
    from ubunye.lineage import file_sums

    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    _table_of(path, 3)
    monkeypatch.setattr(file_sums, "MAX_CACHE_BYTES", 200)  # the 3 files' partials take more
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        got = _profile(path, cache)
    assert_same_profile(got.profile, _full_profile(path, ["id"], 16))
    assert _profile_documents(cache, path) == []
    assert any(
        "could not keep the per-file profiles" in r.getMessage() and "not kept" in r.getMessage()
        for r in caplog.records
    )
    again = _profile(path, cache)
    assert again.hash_mode == "full" and again.reason.startswith("no per-file profiles of this table")


def test_profiles_whose_unzipped_document_is_too_large_to_read_back_are_not_written(tmp_path, monkeypatch):
    # The reader bounds the unzipped document: one that fits only compressed must not be written either.
    import gzip

    from ubunye.lineage import file_sums

    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    _table_of(path, 3)
    _profile(path, cache)
    (doc,) = _profile_documents(cache, path)
    packed, unpacked = doc.stat().st_size, len(gzip.decompress(doc.read_bytes()))
    assert packed < unpacked
    doc.unlink()
    monkeypatch.setattr(file_sums, "MAX_CACHE_BYTES", (packed + unpacked) // 2)
    got = _profile(path, cache)
    assert got.hash_mode == "full"
    assert_same_profile(got.profile, _full_profile(path, ["id"], 16))
    assert _profile_documents(cache, path) == []


def test_cached_sums_counting_other_rows_than_the_log_are_not_reused(tmp_path):
    # A well-formed document (its checksum right) whose sums of one file count a row more than that file's
    # numRecords: those sums are not the file's, whatever its identity says, so the file is read again.
    from dataclasses import replace

    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    _table_of(path, 3)
    hash_delta(str(path), cache=cache)
    kept = cache.load(str(path.resolve()), "deltalake")
    assert kept is not None
    first = sorted(kept.files)[0]
    identity, (n, s1, s2) = kept.files[first]
    cache.save(replace(kept, files={**kept.files, first: (identity, (n + 1, s1 ^ 1, s2))}))
    got = hash_delta(str(path), cache=cache)
    assert got.hash == _full(path)
    assert (got.hash_mode, got.files_reused, got.files_read) == ("incremental", 2, 1)


def test_a_data_file_gone_from_storage_fails_as_the_full_read_does(tmp_path):
    # The cached sums of a deleted file were counted: an incremental hash of 3 rows where the read fails.
    path, cache = tmp_path / "t", FileSumsCache(tmp_path / "records")
    _table_of(path, 2)
    hash_delta(str(path), cache=cache)
    sorted(path.glob("*.parquet"))[0].unlink()
    with pytest.raises(OSError):
        DeltaTable(str(path)).to_pyarrow_table()
    with pytest.raises(OSError):
        hash_delta(str(path), cache=cache)


@pytest.mark.parametrize("spelling", ["file:{}", "file://{}", "{}"])
def test_every_spelling_of_a_local_table_is_one_table_in_the_cache(tmp_path, spelling):
    # file:/data/t, as Spark and Hadoop print a path, was taken as a relative path named "file:": never incremental,
    # and its data files "not in storage"
    path = tmp_path / "t"
    cache = FileSumsCache(tmp_path / "records")
    write_deltalake(str(path), pa.table({"id": [1, 2]}))
    first = hash_delta(spelling.format(path), cache=cache)
    write_deltalake(str(path), pa.table({"id": [3]}), mode="append")
    got = hash_delta(spelling.format(path), cache=cache)
    assert first.hash_mode == "full" and got.hash_mode == "incremental", (got.hash_mode, got.reason)
    assert got.hash == _full(path)
