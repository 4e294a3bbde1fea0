"""Hostile histories of Delta tables on Spark (delta-spark): the incremental hash (and profile) is always that of
``spark.read.format("delta")`` at the version hashed, or ``hash_mode`` says full and why, or ``hash_delta``
refuses (the runner then hashes the frame read whole and records why).

Probed: one long history over most table features at once (identity and generated columns, change data feed,
row tracking, deletion vectors from UPDATE, MERGE and DELETE, timestamp_ntz, a partition column in the middle,
v2 checkpoints every two commits, REORG PURGE, RESTORE, OPTIMIZE, a nested column added, the log cleaned down to
its checkpoint); renames and a drop and re-add under column mapping (the schema string unchanged, each name now
reading another physical column); CHAR columns made STRING and the session's CHAR padding turned off (the same
files, other values); a CHAR partition column (padded by the reader, not in the log); type widening; ``file://``
URLs that deltalake and Spark read as two places.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from tests.hashing.profile_checks import assert_same_profile
from tests.spark.conftest import spark_major
from ubunye.exceptions import EngineError
from ubunye.hashing.delta_hash import hash_delta
from ubunye.hashing.spark import hash_spark, profile_spark
from ubunye.lineage.file_sums import FileSumsCache


def _full(spark, path):
    return hash_spark(spark.read.format("delta").load(path))


def _check(spark, path, cache, profile=False):
    got = hash_delta(path, cache=cache, spark=spark)
    assert got.hash == _full(spark, path), got
    assert (got.hash_mode == "incremental") == (got.files_reused > 0) == (got.reason is None), got
    if profile:
        profiled = hash_delta(path, cache=cache, spark=spark, profile=True, key=["k"], buckets=8)
        full = profile_spark(spark.read.format("delta").load(path), key=["k"], buckets=8)
        assert profiled.profile is not None
        assert_same_profile(profiled.profile, full)
    return got


_FEATURES = {
    "delta.enableDeletionVectors": "true",
    "delta.enableChangeDataFeed": "true",
    "delta.enableRowTracking": "true",
    "delta.checkpointInterval": "2",
    "delta.checkpointPolicy": "v2",
}


def _create_featured_table(spark, path):
    """The long history's table: identity and generated columns, timestamp_ntz, partitioned by p in the middle."""
    if spark_major() >= 4:
        props = ", ".join(f"'{k}' = '{v}'" for k, v in _FEATURES.items())
        spark.sql(
            f"""CREATE TABLE delta.`{path}` (id bigint GENERATED ALWAYS AS IDENTITY, k int, p int,
            g int GENERATED ALWAYS AS (k * 2), t timestamp_ntz, c string) USING delta PARTITIONED BY (p)
            TBLPROPERTIES ({props})"""
        )
        return
    # Spark 3.5's SQL parser has no GENERATED ALWAYS AS IDENTITY (Spark 4 added it); Delta 3.3's builder makes the
    # same table.
    from delta.tables import DeltaTable as SparkDeltaTable
    from delta.tables import IdentityGenerator

    builder = (
        SparkDeltaTable.create(spark)
        .location(path)
        .addColumn("id", "BIGINT", generatedAlwaysAs=IdentityGenerator())
        .addColumn("k", "INT")
        .addColumn("p", "INT")
        .addColumn("g", "INT", generatedAlwaysAs="k * 2")
        .addColumn("t", "TIMESTAMP_NTZ")
        .addColumn("c", "STRING")
        .partitionedBy("p")
    )
    for key, value in _FEATURES.items():
        builder = builder.property(key, value)
    builder.execute()


def test_a_long_history_over_many_table_features_hashes_as_read(spark, tmp_path):
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    table = f"delta.`{path}`"
    _create_featured_table(spark, path)

    def insert(n: int, offset: int) -> None:
        spark.sql(
            f"INSERT INTO {table} (k, p, t, c) SELECT id + {offset}, CAST(id % 2 AS int), "
            f"timestamp_ntz'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id), CAST(id AS string) "
            f"FROM range({n})"
        )

    modes = []
    insert(20, 0)
    _check(spark, path, cache, profile=True)
    insert(5, 100)
    modes.append(_check(spark, path, cache).hash_mode)
    spark.sql(f"UPDATE {table} SET c = 'u' WHERE k % 3 = 0")  # deletion vectors on the old files, new files
    modes.append(_check(spark, path, cache).hash_mode)
    spark.sql(
        f"MERGE INTO {table} t USING (SELECT id AS k, CAST(id % 2 AS int) AS p FROM range(3, 8)) s ON t.k = s.k "
        "WHEN MATCHED THEN UPDATE SET c = 'm' WHEN NOT MATCHED THEN INSERT (k, p, t, c) VALUES (s.k, s.p, null, 'n')"
    )
    modes.append(_check(spark, path, cache, profile=True).hash_mode)
    spark.sql(f"DELETE FROM {table} WHERE k = 4")
    modes.append(_check(spark, path, cache).hash_mode)
    before_purge = DeltaTable(path).version()
    spark.sql(f"REORG TABLE {table} APPLY (PURGE)")
    modes.append(_check(spark, path, cache).hash_mode)
    spark.sql(f"RESTORE TABLE {table} TO VERSION AS OF {before_purge - 1}")  # files with older deletion vectors
    modes.append(_check(spark, path, cache).hash_mode)
    spark.sql(f"ALTER TABLE {table} ADD COLUMNS (s struct<a: int>)")
    _check(spark, path, cache)  # the schema changed: full
    spark.sql(f"INSERT INTO {table} (k, p, t, c, s) VALUES (500, 1, null, 'x', named_struct('a', 5))")
    modes.append(_check(spark, path, cache).hash_mode)
    spark.sql(f"OPTIMIZE {table}")
    insert(3, 900)
    log = Path(path) / "_delta_log"
    assert list(log.glob("*.checkpoint.*.json")) or list(log.glob("*.checkpoint.*.parquet"))  # v2 checkpoints
    newest = max(int(p.name[:20]) for p in log.glob("*.checkpoint*") if p.name[:20].isdigit())
    for entry in log.glob("*.json"):  # what log cleanup leaves: the checkpoint and the commits after it
        if entry.name[:20].isdigit() and int(entry.name[:20]) < newest:
            entry.unlink()
    modes.append(_check(spark, path, cache, profile=True).hash_mode)
    assert modes.count("incremental") >= len(modes) - 1, modes


@pytest.mark.parametrize("mode", ["name", "id"])
def test_renames_and_drops_under_column_mapping_never_reuse_another_columns_sums(spark, tmp_path, mode):
    # Under column mapping a rename changes no file: swapping two names of one type (or dropping a column and
    # adding another of its name and type) keeps the schema string, and every file was reused, unread: the hash
    # of the columns as they were named before.
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    table = f"delta.`{path}`"
    spark.sql(
        f"CREATE TABLE {table} (k int, a int, b int) USING delta TBLPROPERTIES ('delta.columnMapping.mode' = '{mode}')"
    )
    spark.sql(f"INSERT INTO {table} VALUES (1, 10, 20), (2, 11, 21)")
    _check(spark, path, cache, profile=True)
    for stmt in ("RENAME COLUMN a TO tmp", "RENAME COLUMN b TO a", "RENAME COLUMN tmp TO b"):
        spark.sql(f"ALTER TABLE {table} {stmt}")
    got = _check(spark, path, cache, profile=True)
    assert got.hash_mode == "full" and "read otherwise" in got.reason
    spark.sql(f"ALTER TABLE {table} DROP COLUMN b")
    spark.sql(f"ALTER TABLE {table} ADD COLUMN b int")  # another physical column: null in the old files
    got = _check(spark, path, cache, profile=True)
    assert got.hash_mode == "full"
    spark.sql(f"INSERT INTO {table} VALUES (3, 12, 22)")
    _check(spark, path, cache)
    again = _check(spark, path, cache)  # nothing changed since: the cached sums of this mapping are the rows
    assert again.files_read == 0


def _char_table(spark, path, partitioned=False):
    spark.sql(
        f"CREATE TABLE delta.`{path}` (k INT, c CHAR(5), v VARCHAR(5)) USING delta"
        + (" PARTITIONED BY (c)" if partitioned else "")
    )
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 'ab', 'ab')")
    # deltalake knows nothing of CHAR: its file holds 'xy', which Spark's Delta reader pads to 'xy   '
    rows = pa.table({"k": pa.array([2], pa.int32()), "c": ["xy"], "v": ["xy"]})
    write_deltalake(path, rows, mode="append", partition_by=["c"] if partitioned else None)


def test_a_char_column_made_a_string_is_read_unpadded(spark, tmp_path):
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    _char_table(spark, path)
    _check(spark, path, cache, profile=True)
    assert spark.read.format("delta").load(path).where("k = 2").first()["c"] == "xy   "
    spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN c TYPE string")  # no file changes, nor the schema string
    assert spark.read.format("delta").load(path).where("k = 2").first()["c"] == "xy"
    got = _check(spark, path, cache, profile=True)
    assert got.hash_mode == "full" and "read otherwise" in got.reason
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (3, 'cd', 'cd')")
    assert (_check(spark, path, cache, profile=True).hash_mode, _check(spark, path, cache).files_read) == (
        "incremental",
        0,
    )


@pytest.mark.parametrize(
    "setting", [("spark.sql.readSideCharPadding", "false"), ("spark.sql.legacy.charVarcharAsString", "true")]
)
def test_a_session_that_does_not_pad_char_values_never_reuses_padded_sums(spark, conf, tmp_path, setting):
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    _char_table(spark, path)
    _check(spark, path, cache, profile=True)
    conf(*setting)
    assert spark.read.format("delta").load(path).where("k = 2").first()["c"] == "xy"
    got = _check(spark, path, cache, profile=True)
    assert got.hash_mode == "full" and f"{setting[0]}={setting[1]}" in got.reason.split("now", 1)[1], got.reason


def test_a_char_partition_column_is_padded_as_spark_reads_it(spark, tmp_path):
    # The log holds a CHAR partition value unpadded ('ab', Spark's own write too); Spark's Delta reader pads it.
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    spark.sql(f"CREATE TABLE delta.`{path}` (k INT, c CHAR(5), v VARCHAR(5)) USING delta PARTITIONED BY (c)")
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 'ab', 'ab')")
    _check(spark, path, cache)
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (2, 'cd', 'cd')")
    got = _check(spark, path, cache, profile=True)
    assert got.hash_mode == "full" and "pads its values" in got.reason
    write_deltalake(path, pa.table({"k": pa.array([3], pa.int32()), "c": ["xy"], "v": ["xy"]}), mode="append",
                    partition_by=["c"])  # fmt: skip
    _check(spark, path, cache, profile=True)
    assert {r["c"] for r in spark.read.format("delta").load(path).collect()} == {"ab   ", "cd   ", "xy   "}


@pytest.mark.parametrize("odd", ["t%20w", "t#w"])
def test_a_url_deltalake_reads_as_another_place_than_spark_is_refused(spark, tmp_path, odd):
    # deltalake decodes "%20" and ends a URL's path at "#"; Spark's Hadoop paths keep both: the log read would be
    # the other table's, the files Spark's.
    plain = odd.replace("%20", " ").replace("#w", "")
    spark.range(3).write.format("delta").save(str(tmp_path / plain))
    spark.range(100, 110).write.format("delta").save(str(tmp_path / odd))
    url = "file://" + str(tmp_path / odd)
    assert spark.read.format("delta").load(url).count() == 10
    assert DeltaTable(url).to_pyarrow_table().num_rows == 3  # deltalake: the other folder
    cache = FileSumsCache(tmp_path / "records")
    for _ in range(2):
        with pytest.raises(EngineError, match="Spark reads them as the characters they are"):
            hash_delta(url, cache=cache, spark=spark)
        spark.range(200, 201).write.format("delta").mode("append").save(url)
    assert hash_delta(url, cache=cache).hash_mode == "full"  # without Spark, deltalake reads it as the read does


#: The widening history per Spark line (keyed by "Spark 4 or later"): Delta 3.3, the last line for Spark 3.5, widens
#: only byte -> short -> int (int -> bigint, decimals and float -> double came with Delta 4; docs.delta.io 3.3.1,
#: "Delta type widening"); the rows inserted after the widening need the wider types.
_WIDENING = {
    True: {
        "columns": "k int, d decimal(5,2), f float",
        "first": "(1, 1.25, 0.1), (2147483647, -999.99, 1e30)",
        "widen": ("k TYPE bigint", "d TYPE decimal(10,4)", "f TYPE double"),
        "wide": "(9999999999, 123456.1234, 0.1)",
        "last": "(3, 0.5, 0.25)",
    },
    False: {
        "columns": "k tinyint, d smallint, f float",
        "first": "(1, 125, 0.1), (127, -32768, 1e30)",
        "widen": ("k TYPE smallint", "d TYPE int"),
        "wide": "(32767, 2147483647, 0.1)",
        "last": "(3, 5, 0.25)",
    },
}


def test_type_widening_hashes_in_full_on_spark_and_is_refused_by_deltalake_by_name(spark, tmp_path):
    from ubunye.config import IOConfig
    from ubunye.engines.pandas_engine import PandasEngine

    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    steps = _WIDENING[spark_major() >= 4]
    spark.sql(
        f"CREATE TABLE delta.`{path}` ({steps['columns']}) USING delta "
        "TBLPROPERTIES ('delta.enableTypeWidening' = 'true')"
    )
    spark.sql(f"INSERT INTO delta.`{path}` VALUES {steps['first']}")
    _check(spark, path, cache, profile=True)
    for stmt in steps["widen"]:
        spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN {stmt}")  # old files keep the narrow types
    spark.sql(f"INSERT INTO delta.`{path}` VALUES {steps['wide']}")
    assert _check(spark, path, cache).hash_mode == "full"  # the schema changed
    spark.sql(f"INSERT INTO delta.`{path}` VALUES {steps['last']}")
    got = _check(spark, path, cache, profile=True)  # old files read as the wider types
    assert got.hash_mode == "full" and "typeWidening" in got.reason
    with pytest.raises(Exception, match="typeWidening"):  # deltalake's own error, as its read gives
        hash_delta(path, cache=cache)
    with pytest.raises(EngineError, match="typeWidening") as read:
        PandasEngine().read(IOConfig("src", format="delta", path=path), tmp_path)
    assert path in str(read.value)
