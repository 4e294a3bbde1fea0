"""Runs hash a Delta input from the per-file sums kept in the record store: ``hash_mode`` and ``hash_reason`` in
the record, the hash always the table's full hash."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from typer.testing import CliRunner

from tests.lineage.usecase import last, records, write_task
from tests.optional import needs_polars
from ubunye.cli.main import app
from ubunye.exceptions import TaskError
from ubunye.hashing import hash_frame
from ubunye.hashing.profile import profile_frame
from ubunye.lineage import RecordStore
from ubunye.lineage.compare import compare_datasets
from ubunye.lineage.profiles import profile_fields
from ubunye.runner import run_task

SUMS = ".ubunye/lineage/.cache/delta-file-sums"


def _task(
    uc: Path,
    *,
    profile: bool = False,
    out_format: str = "parquet",
    mode: str = "overwrite",
    key: list[str] | None = None,
    buckets: int | None = None,
) -> Path:
    events: dict[str, object] = {"format": "delta", "path": "data/events", "profile": profile}
    if key:
        events["key"] = key
    if buckets is not None:
        events["buckets"] = buckets
    config = {
        "ENGINE": {"backend": "pandas"},
        "CONFIG": {
            "inputs": {"events": events},
            "outputs": {"total": {"format": out_format, "path": "data/total", "mode": mode, "profile": False}},
            "transform": {"type": "sql", "query": "SELECT CAST(COUNT(*) AS BIGINT) AS n, MAX(id) AS top FROM events"},
            "monitors": ["lineage"],
        },
    }
    return write_task(uc, "count", config)


def _append(uc: Path, start: int, count: int = 3) -> None:
    ids = list(range(start, start + count))
    rows = pa.table({"id": ids, "name": [None if i % 2 else f"n{i}" for i in ids]})
    write_deltalake(str(uc / "data/events"), rows, mode="append")


def _full(uc: Path):
    return hash_frame(DeltaTable(str(uc / "data/events")).to_pyarrow_table())


@pytest.fixture
def uc(tmp_path):
    usecase_dir = tmp_path / "uc"
    for start in (0, 10):
        _append(usecase_dir, start)
    return usecase_dir


def test_second_run_hashes_a_delta_input_incrementally(uc):
    task = _task(uc)
    run_task(task)
    first = last(uc, "count").inputs[0]
    assert (first.hash_mode, first.hash_reason) == ("full", "no sums of this table are cached yet")
    assert first.data_hash == _full(uc).data_hash
    cached = sorted((uc / SUMS / "deltalake").glob("*/*.json.gz"))
    assert len(cached) == 1  # in the record store, beside the records
    _append(uc, 20)
    run_task(task)
    a, b = records(uc, "count")  # the store still lists exactly the two runs
    second, full = b.inputs[0], _full(uc)
    assert (second.hash_mode, second.hash_reason) == ("incremental", None)
    assert (second.row_count, second.data_hash, second.schema_hash) == (9, full.data_hash, full.schema_hash)
    assert second.version == DeltaTable(str(uc / "data/events")).version() == 2
    assert b.outputs[0].hash_mode is None  # an output is hashed from the frame, before its commit
    # A change of hash mode alone is no data change.
    assert compare_datasets("inputs", second, dataclasses.replace(second, hash_mode="full")).data == "unchanged"
    where = ["-d", str(uc), "-u", "shop", "-p", "daily", "-t", "count"]
    full_shown = [["hash_mode", "full"], ["hash_reason", "no sums of this table are cached yet"]]
    for run, expected in ((a, full_shown), (b, [["hash_mode", "incremental"]])):  # an empty reason is not shown
        shown = CliRunner().invoke(app, ["lineage", "trace", run.run_id, *where])
        assert shown.exit_code == 0, shown.output
        lines = [x.split(None, 1) for x in shown.output.splitlines() if x.startswith("  hash_")]
        assert [x for x in lines if x[0] in ("hash_mode", "hash_reason")] == expected


def test_a_corrupt_cache_costs_a_full_hash_never_a_wrong_one(uc):
    task = _task(uc)
    run_task(task)
    (cached,) = (uc / SUMS / "deltalake").glob("*/*.json.gz")
    cached.write_bytes(b"not gzip")
    _append(uc, 20)
    run_task(task)
    got = last(uc, "count").inputs[0]
    assert got.hash_mode == "full" and got.hash_reason is not None
    assert got.hash_reason.startswith(f"cached sums ignored: {cached}: corrupt cached sums (not gzip")
    assert got.data_hash == _full(uc).data_hash
    run_task(task)  # the full read refilled the cache
    assert last(uc, "count").inputs[0].hash_mode == "incremental"


@needs_polars
@pytest.mark.parametrize("profile", [False, True])
def test_polars_hashes_delta_inputs_whole(uc, profile):
    task = _task(uc, profile=profile)
    for _ in range(2):
        run_task(task, engine="polars")
    got = last(uc, "count").inputs[0]
    reason = "EngineError: the polars engine reads Delta tables with polars and hashes what it read whole"
    assert (got.hash_mode, got.hash_reason, got.data_hash) == ("full", reason, _full(uc).data_hash)
    assert (got.columns is not None) == profile


PROFILE_FIELDS = ("columns", "buckets", "key", "profile_method", "profile_error")


def _profile_of(record) -> dict:
    return {name: getattr(record, name) for name in PROFILE_FIELDS}


@pytest.mark.parametrize("key", [None, ["id"]])
def test_a_profiled_delta_input_is_hashed_incrementally_with_the_full_profile(uc, key):
    task = _task(uc, profile=True, key=key, buckets=16)
    run_task(task)
    first = last(uc, "count").inputs[0]
    reason = f"no per-file profiles of this table (key {key}, 16 buckets) are cached yet"
    assert (first.hash_mode, first.hash_reason) == ("full", reason)
    assert len(list((uc / ".ubunye/lineage/.cache/delta-file-profiles/deltalake").glob("*/*.json.gz"))) == 1
    _append(uc, 20)
    run_task(task)
    second = last(uc, "count").inputs[0]
    assert (second.hash_mode, second.hash_reason) == ("incremental", None)
    full = profile_frame(DeltaTable(str(uc / "data/events")).to_pyarrow_table(), key=key, buckets=16)
    assert _profile_of(second) == profile_fields(full)
    assert (second.row_count, second.data_hash, second.schema_hash) == (9, full.hash.data_hash, full.hash.schema_hash)
    assert second.buckets is not None and second.buckets.n == 16 and second.key == key
    # Reader options the pandas engine would ignore are refused before anything is read or written.
    config = task / "config.yaml"
    config.write_text(config.read_text().replace("path: data/events", "path: data/events\n      options: {a: b}", 1))
    before = records(uc, "count")
    with pytest.raises(TaskError, match=r"input 'events': the pandas engine does not apply option a='b' to delta"):
        run_task(task)
    assert len(records(uc, "count")) == len(before) + 1 and last(uc, "count").status == "failed"


def test_a_profile_key_naming_no_column_of_a_delta_input_fails_the_run_naming_the_key(uc):
    task = _task(uc, profile=True, key=["nope"], buckets=16)
    # As for any input: the run fails in its hash step, naming the file and key, before any output is written.
    where = r"config\.yaml: CONFIG\.inputs\.events\.key: profile-v1: key column 'nope' is not a column of the table"
    with pytest.raises(TaskError, match=where):
        run_task(task)
    assert not (uc / "data/total").exists()


def test_inputs_not_hashed_or_not_delta_have_no_hash_mode(uc):
    task = _task(uc, out_format="delta")
    run_task(task)
    (out,) = last(uc, "count").outputs
    assert (out.hash_mode, out.hash_reason) == (None, None)
    from ubunye.context import RunOptions

    run_task(task, options=RunOptions.resolve(lineage=True, hash_inputs=False))
    got = last(uc, "count").inputs[0]
    assert (got.data_hash, got.hash_mode) == (None, None)


@pytest.mark.parametrize("profile", [False, True])
def test_spark_run_hashes_a_delta_input_incrementally(spark, tmp_path, profile):
    from ubunye.hashing.spark import hash_spark, profile_spark

    uc = tmp_path / "uc"
    path = str(uc / "data/events")
    spark.range(0, 6, numPartitions=2).selectExpr("id", "CAST(id AS STRING) AS name").write.format("delta").save(path)
    task = _task(uc, out_format="delta", mode="append", profile=profile, key=["id"] if profile else None)
    run_task(task, engine="spark", spark=spark)
    spark.range(6, 8).selectExpr("id", "CAST(NULL AS STRING) AS name").write.format("delta").mode("append").save(path)
    run_task(task, engine="spark", spark=spark)
    got, full = last(uc, "count").inputs[0], hash_spark(spark.read.format("delta").load(path))
    assert (got.hash_mode, got.hash_reason) == ("incremental", None)
    assert (got.row_count, got.data_hash, got.schema_hash) == (8, full.data_hash, full.schema_hash)
    assert (uc / SUMS / "spark").is_dir() != profile  # a profiled input keeps profiles, not sums
    if profile:
        whole = profile_spark(spark.read.format("delta").load(path), key=["id"], buckets=256)
        assert _profile_of(got) == profile_fields(whole)
        assert (uc / ".ubunye/lineage/.cache/delta-file-profiles/spark").is_dir()


def test_the_cache_of_an_object_store_is_in_that_store(uc):
    import fsspec

    bucket = f"delta-sums-{uuid.uuid4().hex}"
    fsspec.filesystem("memory").mkdir(bucket)  # a bucket that exists, as the store checks before a run
    task, store = _task(uc), f"memory://{bucket}/records"
    run_task(task, records=store)
    _append(uc, 20)
    run_task(task, records=store)
    got = RecordStore(records=store).records("shop", "daily", "count")[-1].inputs[0]
    assert (got.hash_mode, got.data_hash) == ("incremental", _full(uc).data_hash)
    assert fsspec.filesystem("memory").glob(f"{bucket}/records/.cache/delta-file-sums/deltalake/*/*.json.gz")
    assert not (uc / SUMS).exists()


@pytest.mark.parametrize("profile", [False, True])
def test_a_delta_input_read_with_options_is_hashed_whole_on_spark(spark, tmp_path, profile):
    from ubunye.hashing.spark import hash_spark, profile_spark

    uc = tmp_path / "uc"
    path = str(uc / "data/events")
    spark.range(0, 6, numPartitions=2).selectExpr("id", "CAST(id AS STRING) AS name").write.format("delta").save(path)
    task = _task(uc, out_format="delta", profile=profile, key=["id"] if profile else None)
    config = task / "config.yaml"
    option = "path: data/events\n      options: {datetimeRebaseMode: CORRECTED}"
    config.write_text(config.read_text().replace("path: data/events", option, 1))
    for _ in range(2):  # the second run has cached sums, and still hashes the frame it read
        run_task(task, engine="spark", spark=spark)
    got = last(uc, "count").inputs[0]
    reason = "read with options (datetimeRebaseMode): the frame read is hashed whole"
    full = hash_spark(spark.read.format("delta").load(path))
    assert (got.hash_mode, got.hash_reason, got.data_hash, got.row_count) == ("full", reason, full.data_hash, 6)
    if profile:
        whole = profile_spark(spark.read.format("delta").load(path), key=["id"], buckets=256)
        assert _profile_of(got) == profile_fields(whole)
