"""Incremental rows-v1 and profile-v1 of Delta tables on Spark (delta-spark): always the hash and profile of
``spark.read.format("delta")``.

Random sequences of appends, deletes (with and without deletion vectors), updates, overwrites, OPTIMIZE, VACUUM
and schema-merging appends, on plain and partitioned tables, are checked after every step with the JVM function
and with the twin on the executors, the hash and the profile (with and without a key) against one full profile of
the table (whose hash is the full hash). Few examples: every step is three Spark jobs.
"""

from __future__ import annotations

import datetime as dt
import logging
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hashing.profile_checks import assert_same_profile
from ubunye.hashing.delta_files import read_snapshot
from ubunye.hashing.delta_hash import hash_delta
from ubunye.hashing.delta_numbers import RowSums
from ubunye.hashing.delta_spark import SparkDeltaFiles, log_struct
from ubunye.hashing.spark import hash_spark, profile_spark
from ubunye.hashing.types import spark_columns
from ubunye.lineage.file_sums import FileSumsCache

ENGINES = ["jvm", "arrow"]
COLUMNS = "id bigint, name string, day string, k int"


def _full(spark, path, engine):
    return hash_spark(spark.read.format("delta").load(path), engine=engine)


def _full_profile(spark, path, engine, key, buckets):
    return profile_spark(spark.read.format("delta").load(path), key=key, buckets=buckets, engine=engine)


def _rows(spark, start, count, extra=False):
    rows = [
        (
            i,
            None if i % 4 == 0 else f"n{i}é",
            None if i % 5 == 0 else f"d{i % 3} a/b%",
            i % 2,
            *([float("nan") if i % 3 == 0 else None if i % 2 else i / 3] if extra else []),
        )
        for i in range(start, start + count)
    ]
    return spark.createDataFrame(rows, COLUMNS + (", score double" if extra else ""))


def _create(spark, path, partitioned, dvs, count=6):
    writer = _rows(spark, 0, count).repartition(2).write.format("delta")
    (writer.partitionBy("day", "k") if partitioned else writer).save(path)
    spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.enableDeletionVectors' = '{str(dvs).lower()}')")


def _apply(spark, path, op, arg, counter):
    table = f"delta.`{path}`"
    if op in ("append", "merge", "overwrite"):
        start, counter[0] = counter[0], counter[0] + arg + 1
        extra = op == "merge" or "score" in spark.read.format("delta").load(path).columns
        writer = _rows(spark, start, arg + 1, extra).write.format("delta")
        if op == "merge":
            writer = writer.option("mergeSchema", "true")
        writer.mode("overwrite" if op == "overwrite" else "append").save(path)
    elif op == "delete":
        spark.sql(f"DELETE FROM {table} WHERE id % 4 = {arg % 4}")
    elif op == "update":
        spark.sql(f"UPDATE {table} SET name = 'upd' WHERE id % 3 = {arg % 3}")
    elif op == "optimize":
        spark.sql(f"OPTIMIZE {table}")
    elif op == "vacuum":
        spark.sql(f"VACUUM {table} RETAIN 0 HOURS")


STEPS = st.lists(
    st.tuples(st.sampled_from(["append", "delete", "update", "overwrite", "optimize", "vacuum", "merge"]),
              st.integers(0, 5)),
    min_size=2,
    max_size=3,
)  # fmt: skip


@pytest.mark.parametrize("engine", ENGINES)
def test_incremental_equals_full_after_every_step(spark, conf, tmp_path_factory, engine):
    conf("spark.databricks.delta.retentionDurationCheck.enabled", "false")

    @settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        steps=STEPS,
        partitioned=st.booleans(),
        dvs=st.booleans(),
        profile=st.sampled_from([(None, 16), (["id"], 8), (["name", "day"], 256), (None, 0)]),
    )
    def run(steps, partitioned, dvs, profile):
        key, buckets = profile
        path = str(tmp_path_factory.mktemp("table") / "t w")
        cache = FileSumsCache(tmp_path_factory.mktemp("records"))
        _create(spark, path, partitioned, dvs)
        counter = [6]
        full = _full_profile(spark, path, engine, key, buckets)
        assert hash_delta(path, cache=cache, spark=spark, engine=engine).hash == full.hash
        profiled = hash_delta(path, cache=cache, spark=spark, engine=engine, profile=True, key=key, buckets=buckets)
        assert_same_profile(profiled.profile, full)
        for op, arg in steps:
            _apply(spark, path, op, arg, counter)
            full = _full_profile(spark, path, engine, key, buckets)  # its hash is the full hash (profile_spark's tests)
            for got in (
                hash_delta(path, cache=cache, spark=spark, engine=engine),
                hash_delta(path, cache=cache, spark=spark, engine=engine, profile=True, key=key, buckets=buckets),
            ):
                assert got.hash == full.hash, (op, arg)
                assert got.hash.engine == engine
                assert (got.hash_mode == "incremental") == (got.files_reused > 0) == (got.reason is None)
            assert_same_profile(got.profile, full)

    run()


@pytest.mark.parametrize("engine", ENGINES)
def test_an_append_reads_only_the_new_file(spark, tmp_path, engine):
    path, cache = str(tmp_path / "t w"), FileSumsCache(tmp_path / "records")
    _create(spark, path, partitioned=True, dvs=False, count=20)
    first = hash_delta(path, cache=cache, spark=spark, engine=engine)
    assert (first.hash_mode, first.reason) == ("full", "no sums of this table are cached yet")
    _rows(spark, 100, 1).write.format("delta").mode("append").save(path)  # one row: one file, partition values rebuilt
    got = hash_delta(path, cache=cache, spark=spark, engine=engine)
    assert got.hash == _full(spark, path, engine)
    assert (got.hash_mode, got.reason, got.files_read, got.files_reused) == ("incremental", None, 1, first.files)


def _log_vectors(spark, path, version):
    log = spark.read.json(f"{path}/_delta_log/{version:020d}.json").where("add is not null")
    return log.where("add.deletionVector is not null").count()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_file_with_a_deletion_vector_is_read_alone_without_its_deleted_rows(spark, tmp_path, engine):
    path, cache = str(tmp_path / "t w"), FileSumsCache(tmp_path / "records")
    _create(spark, path, partitioned=False, dvs=True, count=40)
    _rows(spark, 200, 5).write.format("delta").mode("append").save(path)  # a file the deletes leave alone
    profiled = {"profile": True, "key": ["id"], "buckets": 16}
    first = hash_delta(path, cache=cache, spark=spark, engine=engine, **profiled)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 3 OR id BETWEEN 10 AND 14 OR id = 30")
    assert _log_vectors(spark, path, 3) >= 1  # the delete did write deletion vectors
    got = hash_delta(path, cache=cache, spark=spark, engine=engine, **profiled)
    assert_same_profile(got.profile, _full_profile(spark, path, engine, ["id"], 16))
    assert (got.hash_mode, got.reason) == ("incremental", None)
    assert 0 < got.files_read < first.files
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 11 OR id = 31")  # vectors grow: their identities change
    again = hash_delta(path, cache=cache, spark=spark, engine=engine, **profiled)
    assert_same_profile(again.profile, _full_profile(spark, path, engine, ["id"], 16))
    assert again.hash_mode == "incremental"
    _rows(spark, 100, 1).write.format("delta").mode("append").save(path)
    after = hash_delta(path, cache=cache, spark=spark, engine=engine)
    assert after.hash == _full(spark, path, engine)


def _scattered(spark, path, partitioned):
    """A table whose big file (of partition p = 0) gets a deletion vector of more long runs than a filter tests,
    beside a small file (of p = 1)."""
    from ubunye.hashing.delta_spark import MAX_RANGES

    rows = 80 * (MAX_RANGES + 10)
    big = spark.range(rows).selectExpr("id", "cast(id % 2 AS int) AS p").coalesce(1).write.format("delta")
    big = big.partitionBy("p") if partitioned else big
    big.option("delta.enableDeletionVectors", "true").save(path)
    spark.range(rows + 1, rows + 20, 2).selectExpr("id", "1 AS p").write.format("delta").mode("append").save(path)
    # runs of 20 deleted rows (40 ids apart in the unpartitioned file, every other id in p = 0's)
    where = "id % 40 < 20" if not partitioned else "p = 0 AND id % 80 < 40"
    return rows, f"DELETE FROM delta.`{path}` WHERE {where} AND id < {rows}"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_scattered_deletion_vector_reads_an_unpartitioned_table_whole_and_says_why(spark, tmp_path, engine):
    from ubunye.hashing.delta_spark import MAX_RANGES

    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    rows, delete = _scattered(spark, path, partitioned=False)
    hash_delta(path, cache=cache, spark=spark, engine=engine)
    spark.sql(delete)
    assert _log_vectors(spark, path, 2) == 1
    got = hash_delta(path, cache=cache, spark=spark, engine=engine)
    assert got.hash == _full(spark, path, engine)
    assert got.hash_mode == "full"
    assert got.reason == (
        "1 file(s) to read have deletion vectors too scattered to filter by row index (more than 4,096 deleted "
        f"rows in short runs or {MAX_RANGES} longer runs) or no row count in the log, which Spark's Delta reader "
        "applies only reading the whole table (it is not partitioned)"
    )
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = {rows + 3}")  # the small file: one run, read alone
    again = hash_delta(path, cache=cache, spark=spark, engine=engine)
    assert again.hash == _full(spark, path, engine)
    assert (again.hash_mode, again.files_read) == ("incremental", 1)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_scattered_deletion_vector_of_a_partitioned_table_reads_its_partition(spark, tmp_path, engine):
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    _, delete = _scattered(spark, path, partitioned=True)
    first = hash_delta(path, cache=cache, spark=spark, engine=engine)
    spark.sql(delete)
    got = hash_delta(path, cache=cache, spark=spark, engine=engine)
    assert got.hash == _full(spark, path, engine)
    assert (got.hash_mode, got.files_read, got.files_reused) == ("incremental", 1, first.files - 1)


def test_thousands_of_short_deleted_runs_are_one_listed_filter(spark, tmp_path):
    # 2,048 runs of two rows: as 2,048 ranges in an OR, Spark's planner overflowed its stack (a bare Py4JJavaError)
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    spark.range(10_000).selectExpr("id", "repeat('x', 20) || id AS s").coalesce(1).write.format("delta").option(
        "delta.enableDeletionVectors", "true"
    ).save(path)
    spark.range(10_000, 10_010).selectExpr("id", "'y' AS s").write.format("delta").mode("append").save(path)
    hash_delta(path, cache=cache, spark=spark, engine="jvm")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id % 4 IN (0, 1) AND id < 8192")
    got = hash_delta(path, cache=cache, spark=spark, engine="jvm")
    assert got.hash == _full(spark, path, "jvm")
    assert (got.hash_mode, got.files_read, got.files_reused) == ("incremental", 1, got.files - 1)


def test_more_vector_files_than_reads_alone_read_their_partitions(spark, tmp_path, monkeypatch):
    import ubunye.hashing.delta_spark as delta_spark

    monkeypatch.setattr(delta_spark, "MAX_PARTITIONS_ALONE", 2)  # stands for 256: three files of one partition
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    spark.range(300).selectExpr("id", "cast(id % 2 AS int) AS p").repartition(3).write.format("delta").partitionBy(
        "p"
    ).option("delta.enableDeletionVectors", "true").save(path)
    first = hash_delta(path, cache=cache, spark=spark, engine="jvm")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE p = 0 AND id % 10 = 0")
    got = hash_delta(path, cache=cache, spark=spark, engine="jvm")
    assert got.hash == _full(spark, path, "jvm")
    assert (got.hash_mode, got.files_read, got.files_reused) == ("incremental", 3, first.files - 3)


@pytest.mark.parametrize("engine", ENGINES)
def test_deletion_vectors_of_a_partitioned_table_are_read_alone_too(spark, tmp_path, engine):
    path, cache = str(tmp_path / "t w"), FileSumsCache(tmp_path / "records")
    _create(spark, path, partitioned=True, dvs=True, count=60)
    profiled = {"profile": True, "key": ["id"], "buckets": 16}
    first = hash_delta(path, cache=cache, spark=spark, engine=engine, **profiled)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 7")  # day 'd1 a/b%', k 1: one partition
    got = hash_delta(path, cache=cache, spark=spark, engine=engine, **profiled)
    assert_same_profile(got.profile, _full_profile(spark, path, engine, ["id"], 16))
    assert (got.hash_mode, got.files_read, got.files_reused) == ("incremental", 1, first.files - 1)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 13")  # the same file's vector grows: its identity changes
    again = hash_delta(path, cache=cache, spark=spark, engine=engine)  # rows-v1 alone: its own cache, filled now
    assert again.hash == _full(spark, path, engine) and again.hash_mode == "full"
    again = hash_delta(path, cache=cache, spark=spark, engine=engine, **profiled)
    assert again.hash_mode == "incremental"
    assert_same_profile(again.profile, _full_profile(spark, path, engine, ["id"], 16))


def test_a_schema_merge_hashes_in_full_and_says_so(spark, tmp_path):
    path, cache = str(tmp_path / "t w"), FileSumsCache(tmp_path / "records")
    _create(spark, path, partitioned=False, dvs=False)
    hash_delta(path, cache=cache, spark=spark)
    _rows(spark, 50, 2, extra=True).write.format("delta").mode("append").option("mergeSchema", "true").save(path)
    got = hash_delta(path, cache=cache, spark=spark)
    assert got.hash == _full(spark, path, None)
    assert got.hash_mode == "full" and got.reason.startswith("the table's schema changed since its sums were cached")
    _rows(spark, 60, 1, extra=True).write.format("delta").mode("append").save(path)
    after = hash_delta(path, cache=cache, spark=spark)  # old files, without the new column, read alone: nulls
    assert after.hash == _full(spark, path, None)
    assert (after.hash_mode, after.files_read) == ("incremental", 1)


def test_column_mapping_reads_the_whole_table_and_says_why(spark, tmp_path):
    path, cache = str(tmp_path / "t w"), FileSumsCache(tmp_path / "records")
    _create(spark, path, partitioned=False, dvs=False)
    spark.sql(
        f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name', "
        "'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')"
    )
    spark.sql(f"ALTER TABLE delta.`{path}` RENAME COLUMN name TO label")
    hash_delta(path, cache=cache, spark=spark)
    hash_delta(path, cache=cache, spark=spark, profile=True)
    _rows(spark, 50, 1).withColumnRenamed("name", "label").write.format("delta").mode("append").save(path)
    got = hash_delta(path, cache=cache, spark=spark)
    profiled = hash_delta(path, cache=cache, spark=spark, profile=True)
    assert got.hash == _full(spark, path, None)
    reason = "column mapping (delta.columnMapping.mode=name): Spark's Delta reader reads the whole table"
    assert (got.hash_mode, got.reason) == (profiled.hash_mode, profiled.reason) == ("full", reason)
    assert_same_profile(profiled.profile, _full_profile(spark, path, None, None, 256))


def test_a_corrupt_cache_is_a_full_hash_with_a_warning(spark, tmp_path, caplog):
    from pathlib import Path

    path, cache = str(tmp_path / "t w"), FileSumsCache(tmp_path / "records")
    _create(spark, path, partitioned=False, dvs=False)
    hash_delta(path, cache=cache, spark=spark)
    [doc] = Path(cache.where(str(Path(path).resolve()), "spark")).glob("*.json.gz")
    doc.write_bytes(b"\x1f\x8b junk")
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        got = hash_delta(path, cache=cache, spark=spark)
    assert got.hash == _full(spark, path, None)
    assert got.hash_mode == "full" and "corrupt cached sums" in got.reason
    assert any("cached file sums ignored" in r.getMessage() for r in caplog.records)


def test_a_corrupt_profile_cache_is_a_full_profile_with_a_warning(spark, tmp_path, caplog):
    from pathlib import Path

    path, cache = str(tmp_path / "t w"), FileSumsCache(tmp_path / "records")
    _create(spark, path, partitioned=False, dvs=False)
    hash_delta(path, cache=cache, spark=spark, profile=True, key=["id"], buckets=8)
    [doc] = Path(cache.where_profiles(str(Path(path).resolve()), "spark", ("id",), 8)).glob("*.json.gz")
    doc.write_bytes(doc.read_bytes()[:-9])  # cut short
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        got = hash_delta(path, cache=cache, spark=spark, profile=True, key=["id"], buckets=8)
    assert_same_profile(got.profile, _full_profile(spark, path, None, ["id"], 8))
    assert got.hash_mode == "full" and "corrupt cached profiles" in got.reason and str(doc) in got.reason
    assert any("cached file profiles ignored" in r.getMessage() for r in caplog.records)
    other = hash_delta(path, cache=cache, spark=spark, profile=True, key=None, buckets=8)  # another key: not reused
    assert (other.hash_mode, other.reason) == (
        "full",
        "no per-file profiles of this table (key None, 8 buckets) are cached yet",
    )


# Files read alone (Spark's Parquet reader, the schema taken from the Delta log) against what Spark's Delta reader
# gives each file: timestamps with and without a time zone, decimals, nested types, partition columns of every
# rebuilt type (nulls, a value needing escapes, a negative zero), a column comment, and a nullable column added by a
# schema merge, which the older files lack.
TYPED = (
    "id bigint, ts timestamp, ntz timestamp_ntz, wide decimal(38,10), small decimal(5,2), f float, bin binary, "
    "arr array<int>, st struct<x:int,y:string>, m map<string,int>, p_int int, p_day date, p_dec decimal(7,2), "
    "p_ok boolean, p_txt string, p_dbl double, p_short smallint"
)
TYPED_PARTS = ["p_int", "p_day", "p_dec", "p_ok", "p_txt", "p_dbl", "p_short"]
_PARTITION_VALUES = [
    (1, dt.date(2024, 2, 29), Decimal("-12.50"), True, "a b/c%=é", 0.1, -3),
    (None, None, None, None, None, None, None),
    (-7, dt.date(1969, 12, 31), Decimal("0.01"), False, "", -0.0, 0),
]


def _typed_rows(spark, start, count, extra=False):
    rows = []
    for i in range(start, start + count):
        nulls = i % 5 == 4
        rows.append(
            (
                i,
                None if nulls else dt.datetime(2024, 3, 31, 23, 59, i % 60, 999999),
                None if nulls else dt.datetime(1900, 1, 1, 0, 0, 0, i),
                None if nulls else Decimal(f"-{i}12345678901234567.0123456789"),
                None if nulls else Decimal(f"{i % 1000}.5"),
                None if nulls else float("nan") if i % 7 == 0 else i / 3,
                None if nulls else bytes([i % 256, 0]),
                None if nulls else [i, None],
                None if nulls else (i, f"y{i}"),
                None if nulls else {f"k{i}": i},
                *_PARTITION_VALUES[i % 3],
                *([None if i % 2 else i * 1.5] if extra else []),
            )
        )
    return spark.createDataFrame(rows, TYPED + (", extra double" if extra else ""))


@pytest.mark.parametrize("engine", ENGINES)
def test_files_read_alone_are_the_delta_readers_rows_of_them(spark, tmp_path, engine, monkeypatch):
    from deltalake import DeltaTable

    from ubunye.hashing import delta_spark

    path, cache = str(tmp_path / "t w"), FileSumsCache(tmp_path / "records")
    _typed_rows(spark, 0, 6).write.format("delta").partitionBy(*TYPED_PARTS).save(path)
    spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN id COMMENT 'the key'")  # field metadata the log keeps
    writer = _typed_rows(spark, 6, 3, extra=True).write.format("delta").mode("append")
    writer.option("mergeSchema", "true").save(path)  # the six files before it have no column extra
    snap = read_snapshot(DeltaTable(path), deletion_vectors=True)
    files = SparkDeltaFiles(spark, path, snap, engine)
    assert files._table is None  # the schema came from the log: Spark's Delta reader not opened
    numbers = RowSums(files.schema)
    alone, total, why = files.read(snap.files, numbers)
    assert (total, why, files._table) == (None, "", None)
    per_file, _ = files.read_table(numbers)  # the reader's own (its schema string checked against the log's)
    assert alone == per_file and len(alone) == len(snap.files) > 3
    monkeypatch.setattr(delta_spark, "ONE_TASK_BYTES", 0)  # as files too big for one task: Spark's split, a shuffle
    assert files.read(snap.files, numbers) == (alone, None, "")
    assert spark_columns(files.struct) == spark_columns(spark.read.format("delta").load(path).schema)

    profiled = {"profile": True, "key": ["id"], "buckets": 8}
    hash_delta(path, cache=cache, spark=spark, engine=engine)
    hash_delta(path, cache=cache, spark=spark, engine=engine, **profiled)
    _typed_rows(spark, 20, 1, extra=True).write.format("delta").mode("append").save(path)
    got = hash_delta(path, cache=cache, spark=spark, engine=engine)
    assert got.hash == _full(spark, path, engine)
    assert (got.hash_mode, got.files_read) == ("incremental", 1)
    got = hash_delta(path, cache=cache, spark=spark, engine=engine, **profiled)
    assert_same_profile(got.profile, _full_profile(spark, path, engine, ["id"], 8))
    assert (got.hash_mode, got.files_read) == ("incremental", 1)


def test_a_char_column_written_unpadded_is_read_alone_padded(spark, tmp_path):
    import pyarrow as pa
    from deltalake import write_deltalake

    path, cache = str(tmp_path / "t w"), FileSumsCache(tmp_path / "records")
    spark.sql(f"CREATE TABLE delta.`{path}` (id INT, c CHAR(5), v VARCHAR(5)) USING delta")
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 'ab', 'ab')")
    hash_delta(path, cache=cache, spark=spark)
    # deltalake knows nothing of CHAR: its file holds 'xy', which Spark's Delta reader pads to 'xy   '
    write_deltalake(path, pa.table({"id": pa.array([2], pa.int32()), "c": ["xy"], "v": ["xy"]}), mode="append")
    assert spark.read.format("delta").load(path).where("id = 2").first()["c"] == "xy   "
    got = hash_delta(path, cache=cache, spark=spark)
    assert got.hash == _full(spark, path, None)
    assert (got.hash_mode, got.files_read) == ("incremental", 1)


def test_the_log_schema_is_taken_only_when_the_reader_gives_it_as_it_is():
    def field(type_, metadata=None):
        return {"name": "a", "type": type_, "nullable": True, "metadata": metadata or {}}

    def schema(*fields):
        import json

        return json.dumps({"type": "struct", "fields": list(fields)})

    array = {"type": "array", "elementType": "decimal(38,2)", "containsNull": True}
    nested = {"type": "map", "keyType": "string", "valueType": array, "valueContainsNull": True}
    assert log_struct(schema(field(nested), field("timestamp_ntz", {"comment": "x"}))) is not None
    for odd in (
        field("void"),  # the reader drops it
        field("string", {"__CHAR_VARCHAR_TYPE_STRING": "char(3)"}),
        field("string", {"delta.columnMapping.physicalName": "col-1"}),
        field({"type": "array", "elementType": "void", "containsNull": True}),
        field("interval"),
    ):
        assert log_struct(schema(odd)) is None, odd
    assert log_struct("not json") is None


@pytest.mark.parametrize("alone", [256, 1])  # files read alone; 1: read through their partitions
def test_date_partitions_before_1582_and_1000_hash_incrementally(spark, tmp_path, monkeypatch, alone):
    # pyspark hands a date literal to the JVM as a java.sql.Date (hybrid calendar): 1582-10-10 was rebuilt as
    # 1582-10-20 (a wrong hash) and 0999-06-15 refused; Spark's own dates are proleptic Gregorian
    import ubunye.hashing.delta_spark as delta_spark

    monkeypatch.setattr(delta_spark, "MAX_PARTITIONS_ALONE", alone)
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")

    def add(start: int) -> None:
        day = "CASE WHEN id % 2 = 0 THEN date'1582-10-10' ELSE date'0999-06-15' END AS d"
        spark.range(start, start + 6).selectExpr("id", day).write.format("delta").mode("append").partitionBy(
            "d"
        ).option("delta.enableDeletionVectors", "true").save(path)

    add(0)
    hash_delta(path, cache=cache, spark=spark, engine="jvm")
    add(6)
    got = hash_delta(path, cache=cache, spark=spark, engine="jvm")  # two new files: two reads alone, or the table
    assert (got.hash, got.hash_mode) == (_full(spark, path, "jvm"), "incremental" if alone > 1 else "full")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id % 3 = 0")  # deletion vectors in both partitions
    got = hash_delta(path, cache=cache, spark=spark, engine="jvm")
    assert got.hash == _full(spark, path, "jvm")  # with alone=1 through a filter on both dates: every file
    assert (got.hash_mode, got.reason) == (
        ("incremental", None) if alone > 1 else ("full", "every file of the table had to be read")
    )
    assert sorted(str(r.d) for r in spark.read.format("delta").load(path).select("d").distinct().collect()) == [
        "0999-06-15",
        "1582-10-10",
    ]


# --- session settings and storage the cache once ignored (an adversarial helper, thirteenth session) -------------


def _with_conf(spark, key, value):
    """Sets ``key`` for the rest of the test and gives back how to put the old value back."""
    old = spark.conf.get(key, None)
    spark.conf.set(key, value)
    return lambda: spark.conf.unset(key) if old is None else spark.conf.set(key, old)


def test_a_zoneless_timestamp_partition_is_hashed_again_in_another_session_time_zone(spark, tmp_path):
    import pyarrow as pa
    from deltalake import write_deltalake

    # deltalake writes the partition value without a zone; Spark reads it in the session's time zone
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    stamp = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone.utc)
    write_deltalake(
        path, pa.table({"id": [1, 2], "q": pa.array([stamp] * 2, pa.timestamp("us", "UTC"))}), partition_by=["q"]
    )
    undo = _with_conf(spark, "spark.sql.session.timeZone", "UTC")
    try:
        hash_delta(path, cache=cache, spark=spark)
        spark.conf.set("spark.sql.session.timeZone", "America/New_York")
        got = hash_delta(path, cache=cache, spark=spark)
        assert got.hash == _full(spark, path, None)
        assert got.hash_mode == "full" and "session time zone America/New_York" in got.reason
    finally:
        undo()


def test_dates_of_a_table_are_hashed_again_under_another_rebase_mode(spark, tmp_path):
    import pyarrow as pa
    from deltalake import write_deltalake

    # files deltalake writes have no Spark version: LEGACY reads 1500-01-01 as 1499-12-23
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    write_deltalake(path, pa.table({"id": [1, 2], "d": pa.array([dt.date(1500, 1, 1), dt.date(1200, 6, 1)])}))
    undo = _with_conf(spark, "spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED")
    try:
        hash_delta(path, cache=cache, spark=spark)
        spark.conf.set("spark.sql.parquet.datetimeRebaseModeInRead", "LEGACY")
        got = hash_delta(path, cache=cache, spark=spark)
        assert got.hash == _full(spark, path, None)
        assert got.hash_mode == "full" and "datetimeRebaseModeInRead=LEGACY" in got.reason
    finally:
        undo()


def test_a_data_file_gone_from_storage_is_not_counted_from_the_cache(spark, tmp_path):
    from pathlib import Path

    import pyarrow as pa
    from deltalake import write_deltalake

    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    write_deltalake(path, pa.table({"id": [1, 2]}))
    write_deltalake(path, pa.table({"id": [3]}), mode="append")
    hash_delta(path, cache=cache, spark=spark)
    sorted(Path(path).glob("*.parquet"))[0].unlink()
    undo = _with_conf(spark, "spark.sql.files.ignoreMissingFiles", "true")  # the full read skips its rows
    try:
        got = hash_delta(path, cache=cache, spark=spark)
        assert got.hash == _full(spark, path, None) and got.hash.row_count < 3
        assert got.hash_mode == "full" and "is not in storage" in got.reason
    finally:
        undo()


def test_double_partitions_of_minus_zero_and_nan_are_told_apart_and_found(spark, tmp_path):
    # 0.0 and -0.0 are two partitions to Delta (p=0, p=-0) but equal to Python: their new files were read as one
    # group, every row given the first's sign (the incremental hash differed from the full one). A NaN partition's
    # files were not found among the snapshot's (a NaN equals no NaN): "a file that is not one of the snapshot's".
    import pyarrow as pa
    from deltalake import write_deltalake

    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    batch = pa.table({"id": [1, 2], "p": pa.array([0.0, -0.0])})
    write_deltalake(path, batch, partition_by=["p"])
    assert hash_delta(path, cache=cache, spark=spark).hash_mode == "full"
    write_deltalake(path, batch, mode="append", partition_by=["p"])
    got = hash_delta(path, cache=cache, spark=spark)
    assert (got.hash_mode, got.files_read) == ("incremental", 2) and got.hash == _full(spark, path, "jvm")

    nan_path, nan_cache = str(tmp_path / "n"), FileSumsCache(tmp_path / "records-n")
    write_deltalake(nan_path, pa.table({"id": range(10000), "p": [float("nan")] * 10000}), partition_by=["p"])
    write_deltalake(nan_path, pa.table({"id": [10000], "p": [float("nan")]}), mode="append", partition_by=["p"])
    hash_delta(nan_path, cache=nan_cache, spark=spark)
    spark.sql(f"ALTER TABLE delta.`{nan_path}` SET TBLPROPERTIES ('delta.enableDeletionVectors' = true)")
    spark.sql(f"DELETE FROM delta.`{nan_path}` WHERE id % 2 = 0 AND id < 10000")  # 5,000 scattered: read by partition
    got = hash_delta(nan_path, cache=nan_cache, spark=spark)
    assert got.hash == _full(spark, nan_path, "jvm")
    assert got.reason is None or "not one of the snapshot's" not in got.reason, got.reason
