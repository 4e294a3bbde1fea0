"""Incremental Delta hashing on this Spark line (Delta 3.3 on Spark 3.5, Scala 2.12: most of Databricks): after
every step of a fixed sequence (append, deletes writing deletion vectors, update, OPTIMIZE), the incremental hash
and profile equal those of ``spark.read.format("delta")``, with the jar and with the twin on the executors, and
the deletes are hashed reading only the files they touched.

The main suite's property tests run random sequences on pyspark 4.2; this fixed one checks that what they rely on
(``_metadata.file_path`` and ``row_index``, Delta's log and reader of this line) holds here too.
"""

from __future__ import annotations

from typing import Any

import pytest

from ubunye.hashing.delta_hash import hash_delta
from ubunye.hashing.spark import hash_spark, profile_spark
from ubunye.lineage.file_sums import FileSumsCache

COLUMNS = (
    "id",
    "cast(id % 7 AS string) AS k",
    "id * 0.5 AS x",
    "date_add(date'2020-01-01', cast(id AS int)) AS d",
    "timestamp_micros(id * 1000000007) AS ts",
    "cast(id AS decimal(25,3)) AS dec",
)
PROFILE = {"key": ["id"], "buckets": 16}


def _delta(spark: Any) -> None:
    # configure_delta adds Delta's extension only with the delta-spark jars of this line
    if "io.delta.sql.DeltaSparkSessionExtension" not in spark.conf.get("spark.sql.extensions", ""):
        pytest.skip(f"no delta-spark jars for Spark {spark.version} on Maven Central (README, 'The jars')")


def _append(spark: Any, path: str, start: int, count: int, parts: int = 1) -> None:
    spark.range(start, start + count).selectExpr(*COLUMNS).repartition(parts).write.format("delta").mode(
        "append"
    ).option("delta.enableDeletionVectors", "true").save(path)


@pytest.mark.parametrize("engine", ["jvm", "arrow"])
def test_incremental_delta_equals_the_delta_readers_hash(spark: Any, tmp_path: Any, engine: str) -> None:
    _delta(spark)
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")
    _append(spark, path, 0, 300, parts=6)
    steps = [
        ("append", lambda: _append(spark, path, 300, 50)),
        ("delete", lambda: spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 5 OR id BETWEEN 40 AND 45")),
        ("update", lambda: spark.sql(f"UPDATE delta.`{path}` SET k = 'u' WHERE id = 17 OR id = 310")),
        ("append", lambda: _append(spark, path, 400, 20)),
        ("optimize", lambda: spark.sql(f"OPTIMIZE delta.`{path}`")),
    ]
    modes = []
    for name, step in steps:
        step()
        table = spark.read.format("delta").load(path)
        full = profile_spark(table, engine=engine, **PROFILE)
        assert full.hash == hash_spark(table, engine=engine)
        got = hash_delta(path, cache=cache, spark=spark, engine=engine)
        profiled = hash_delta(path, cache=cache, spark=spark, engine=engine, profile=True, **PROFILE)
        assert got.hash == full.hash, name
        assert profiled.profile == full, name
        modes.append((name, got.hash_mode, got.files_read < got.files, got.reason))
    # The first hash fills the cache; the deletes (deletion vectors) and the update read only the files they hit.
    assert [m[:3] for m in modes[1:4]] == [
        ("delete", "incremental", True),
        ("update", "incremental", True),
        ("append", "incremental", True),
    ], modes


def test_delta_sql_runs_with_the_delta_jars_configure_delta_picks_for_this_release(spark: Any, tmp_path: Any) -> None:
    # Once Delta's extension is in a session every statement goes through its parser: on pyspark 3.5.0 (Databricks
    # 15.4 LTS's Spark) Delta 3.3's failed them all, even SELECT 1 (NoClassDefFoundError: SupportsNonDeterministic-
    # Expression, a Spark 3.5.3 class); configure_delta now picks the Delta a pip install would put beside it.
    from ubunye.engines.spark_engine import delta_package

    _delta(spark)
    assert spark.sql("SELECT 1 AS one").first()[0] == 1, delta_package()
    path = str(tmp_path / "t")
    spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT, s STRING) USING delta")
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 'a'), (2, NULL)")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 1")
    assert [tuple(r) for r in spark.sql(f"SELECT id, s FROM delta.`{path}`").collect()] == [(2, None)]
    assert spark.sql(f"DESCRIBE HISTORY delta.`{path}`").count() == 3
