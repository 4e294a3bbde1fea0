"""The Spark engine under session settings real clusters use (``spark.sql.caseSensitive``, far time zones,
``partitionOverwriteMode=dynamic`` session-wide, ``outputTimestampType=INT96``): a write's record is the data as
the next read reads it, or the write is refused before the commit, naming the output and the column, and every
setting the engine touches is put back.

Each test sets what it needs through the ``conf`` fixture (tests/spark/conftest.py), which restores it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.spark.conftest import spark_major
from tests.spark.tables import same_as_read_back
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.engines.spark_engine import SparkEngine
from ubunye.exceptions import EngineError

SETTINGS = (
    "spark.sql.caseSensitive",
    "spark.sql.session.timeZone",
    "spark.sql.parquet.outputTimestampType",
    "spark.sql.sources.partitionOverwriteMode",
    "spark.sql.ansi.enabled",
)


def _settings(spark: Any) -> dict[str, str | None]:
    return {k: spark.conf.get(k, None) for k in SETTINGS}


def test_case_sensitive_partition_column_is_the_one_named(spark: Any, conf: Any, tmp_path: Path) -> None:
    # caseSensitive=true: `a` and `A` are two columns and partitionBy("a") takes `a`. The empty-string check looked
    # names up lower-cased and checked `A`: a '' in the partition column `a` was written as Spark's null partition
    # (read back as null: the record lied), and a '' in the data column `A` was refused, naming 'A'.
    conf("spark.sql.caseSensitive", "true")
    engine = get_engine("spark", spark=spark)
    bad = spark.sql("SELECT * FROM VALUES ('', 1), ('x', 2) AS t(a, A)")
    for fmt in ("parquet", "csv"):
        with pytest.raises(EngineError, match=r"output 'o': partition column 'a' holds an empty string"):
            engine.write(bad, IOConfig("o", format=fmt, path=fmt, partition_by=["a"]), tmp_path)
        assert not (tmp_path / fmt).exists()
    fine = spark.sql("SELECT * FROM VALUES (1, ''), (2, 'x') AS t(a, A)")
    io = IOConfig("o", format="parquet", path="fine", partition_by=["a"])
    engine.write(fine, io, tmp_path)
    want, got = engine.hash(fine), engine.hash(engine.read(io, tmp_path))  # this session, case-sensitive, reads it
    assert (got.schema, got.row_count, got.data_hash) == (want.schema, want.row_count, want.data_hash)
    # Read where names ignore case (Spark's default), the folder `a=` hides the files' column `A`: Spark drops it
    # without a word, so pandas (which has no such setting) refuses the folder, naming both
    with pytest.raises(EngineError, match=r"the partition folder 'a=1' names column 'a', which the files hold too"):
        get_engine("pandas").read(IOConfig("o", format="parquet", path="fine"), tmp_path)
    conf("spark.sql.caseSensitive", "false")
    assert spark.read.parquet(str(tmp_path / "fine")).columns == ["a"]


def test_case_sensitive_append_reads_back_the_other_case_column(spark: Any, conf: Any, tmp_path: Path) -> None:
    # The typed read-back of an append left out of the data columns every column whose name matched a partition
    # column ignoring case: `A` was dropped, and the append refused ("column 'A' of the frame does not read back").
    conf("spark.sql.caseSensitive", "true")
    engine = get_engine("spark", spark=spark)
    frame = spark.sql("SELECT * FROM VALUES (1, 'x'), (2, 'y') AS t(a, A)")
    io = IOConfig("o", format="csv", path="c", partition_by=["a"], mode="append")
    engine.write(frame, io, tmp_path)
    engine.write(frame, io, tmp_path)
    assert engine.read(io, tmp_path).count() == 4


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_first_append_reads_back_as_the_next_read(spark: Any, fmt: str, tmp_path: Path) -> None:
    # An append to a missing folder was read back with the frame's types (as for an existing folder, whose types
    # come from all its files): json's int32 column comes back int64, csv's bigint int32 and '007' as 7, on the
    # next read, while the record held the frame's types. The first files are all the folder holds: read them as
    # the next read will.
    engine = get_engine("spark", spark=spark)
    frame = spark.sql("SELECT 1 AS n, 'x' AS s" if fmt == "json" else "SELECT CAST(1 AS BIGINT) AS n, 'x' AS s")
    io = IOConfig("o", format=fmt, path="a", mode="append")
    with pytest.raises(EngineError, match=rf"output 'o': {fmt} does not read back as the frame written: column 'n'"):
        engine.write(frame, io, tmp_path)
    assert not (tmp_path / "a").exists()
    ok = frame.selectExpr("CAST(n AS BIGINT) AS n", "s") if fmt == "json" else frame.selectExpr("CAST(n AS INT)", "s")
    engine.write(ok, io, tmp_path)
    same_as_read_back(engine, ok, io, tmp_path)


def test_dynamic_partition_overwrite_set_session_wide_of_a_new_folder(spark: Any, conf: Any, tmp_path: Path) -> None:
    conf("spark.sql.sources.partitionOverwriteMode", "dynamic")
    before = _settings(spark)
    engine = get_engine("spark", spark=spark)
    frame = spark.sql("SELECT * FROM VALUES (1, '007', 'p'), (2, '8', 'q') AS t(n, code, day)")
    io = IOConfig("o", format="csv", path="d", partition_by=["day"])
    with pytest.raises(EngineError, match=r"output 'o': csv does not read back .* column 'code' is string"):
        engine.write(frame, io, tmp_path)
    assert not (tmp_path / "d").exists()
    assert _settings(spark) == before


def test_parquet_partition_values_must_read_back(spark: Any, tmp_path: Path) -> None:
    # parquet is not read back whole, but a partition column is text in a folder name, which Spark reads back by
    # guessing: the string '007' came back as the number 7 (and '7' and '07' as the same), the record holding '007'
    engine = get_engine("spark", spark=spark)
    frame = spark.sql("SELECT * FROM VALUES (1, '007'), (2, '8') AS t(n, p)")
    io = IOConfig("o", format="parquet", path="p", partition_by=["p"])
    with pytest.raises(EngineError, match=r"output 'o': parquet partitioned by p .* partition column 'p' differ"):
        engine.write(frame, io, tmp_path)
    assert not (tmp_path / "p").exists()
    days = spark.sql("SELECT * FROM VALUES (1, '2024-01-01'), (2, 'b') AS t(n, p)")
    engine.write(days, io, tmp_path)  # a mixed folder reads back as strings
    same_as_read_back(engine, days, io, tmp_path)


@pytest.mark.parametrize("zone", ["America/St_Johns", "Pacific/Kiritimati"])
def test_timestamp_partitions_are_refused_in_files_kept_in_delta(
    spark: Any, conf: Any, zone: str, tmp_path: Path
) -> None:
    # A timestamp partition folder is named by the session zone's local time without the zone: Spark 4 read it
    # back as a string (parquet and csv), and another zone reads other instants. Delta keeps UTC instants.
    conf("spark.sql.session.timeZone", zone)
    engine = get_engine("spark", spark=spark)
    frame = spark.sql("SELECT 1 AS n, TIMESTAMP'2024-01-01 12:00:00.123456Z' AS t")
    for fmt in ("parquet", "csv"):
        io = IOConfig("o", format=fmt, path=fmt, partition_by=["t"])
        with pytest.raises(EngineError, match=r"output 'o': partition column 't' is a timestamp"):
            engine.write(frame, io, tmp_path)
        assert not (tmp_path / fmt).exists()
    io = IOConfig("o", format="delta", path="delta", partition_by=["t"])
    if spark_major() < 4:  # Delta 3 on Spark 3.5 writes the zone's local time marked UTC: refused, nothing written
        with pytest.raises(EngineError, match=r"partition column 't' is a timestamp, and Delta on Spark 3\.5"):
            engine.write(frame, io, tmp_path)
        assert not (tmp_path / "delta").exists()
        return
    engine.write(frame, io, tmp_path)
    same_as_read_back(engine, frame, io, tmp_path)
    conf("spark.sql.session.timeZone", "UTC")
    same_as_read_back(engine, frame, io, tmp_path)


def test_int96_set_by_the_user_is_put_back_and_parquet_reads_alike(spark: Any, conf: Any, tmp_path: Path) -> None:
    conf("spark.sql.parquet.outputTimestampType", "INT96")
    conf("spark.sql.session.timeZone", "America/St_Johns")
    before = _settings(spark)
    engine = get_engine("spark", spark=spark)
    frame = spark.sql("SELECT 1 AS n, TIMESTAMP'2024-01-01 12:00:00.123456Z' AS t, DATE'1500-01-01' AS d")
    for mode in ("overwrite", "append"):
        io = IOConfig("o", format="parquet", path=mode, mode=mode)
        engine.write(frame, io, tmp_path)
        same_as_read_back(engine, frame, io, tmp_path)
        assert _settings(spark) == before


def test_a_frame_the_user_cached_stays_cached_after_a_run_holds_it(spark):
    # hold() persisted and release() unpersisted whatever the transform returned: a notebook's own cache too
    engine = SparkEngine(spark=spark)
    mine = spark.range(3).cache()
    mine.count()
    engine.release(engine.hold(mine))
    assert mine.is_cached
    fresh = spark.range(4)
    held = engine.hold(fresh)
    assert held.is_cached
    engine.release(held)
    assert not held.is_cached


def test_spark_conf_not_applied_to_a_running_session_is_said(spark, caplog):
    # config.yaml's ENGINE.spark_conf applies to a session ubunye starts; a notebook's was ignored without a word
    now = int(spark.conf.get("spark.sql.shuffle.partitions"))
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        SparkEngine(spark=spark, spark_conf={"spark.sql.shuffle.partitions": str(now + 1)})
    assert f"spark.sql.shuffle.partitions={now + 1} (the session has {now})" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        SparkEngine(spark=spark, spark_conf={"spark.sql.shuffle.partitions": str(now)})
        SparkEngine(spark=spark, spark_conf={"spark.sql.shuffle.partitions": f"{now}.0"})  # the same number
        SparkEngine(spark=spark, spark_conf={"spark.sql.autoBroadcastJoinThreshold": _as_kib(spark)})  # same size
    assert "spark_conf" not in caplog.text


def _as_kib(spark) -> str:
    """The session's broadcast threshold written in KiB, as a config.yaml might (Spark reports it in bytes)."""
    raw = str(spark.conf.get("spark.sql.autoBroadcastJoinThreshold"))
    number = int(raw[:-1]) * 1024 * 1024 if raw.lower().endswith("m") else int(raw.rstrip("bB"))
    return f"{number // 1024}k"


def test_a_pipeline_task_whose_spark_conf_differs_from_the_first_task_s_is_said(spark, caplog, tmp_path):
    # run_pipeline kept one engine per backend: the second task's spark_conf was dropped without a word
    from tests.lineage.usecase import write_task
    from ubunye.runner import run_pipeline

    now = int(spark.conf.get("spark.sql.shuffle.partitions"))
    for task, partitions in (("a", now), ("b", now + 3)):
        cfg = {
            "ENGINE": {"spark_conf": {"spark.sql.shuffle.partitions": str(partitions)}},
            "CONFIG": {"outputs": {"o": {"format": "parquet", "path": f"data/{task}"}},
                       "transform": {"type": "sql", "query": "SELECT 1 AS x"}},
        }  # fmt: skip
        write_task(tmp_path, task, cfg)
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        run_pipeline(tmp_path, "shop", "daily", ["a", "b"], engine="spark", spark=spark, lineage=False)
    said = [r.getMessage() for r in caplog.records if "spark_conf" in r.getMessage()]
    assert len(said) == 1 and f"spark.sql.shuffle.partitions={now + 3} (the session has {now})" in said[0], said
