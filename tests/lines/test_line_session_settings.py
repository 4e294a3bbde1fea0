"""The Spark engine under cluster session settings on this Spark line (pyspark 3.5 infers partition and json
types, resolves names and names its confs as Spark 4 does, or not: this file is here to see): the record is the
data as the next read reads it, or the write is refused naming the output and column; settings are put back.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.spark.tables import same_as_read_back
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.exceptions import EngineError
from ubunye.hashing.delta_files import DELTALAKE_PYARROW


def test_case_sensitive_partition_column_is_the_one_named(spark: Any, conf: Any, tmp_path: Path) -> None:
    conf("spark.sql.caseSensitive", "true")
    engine = get_engine("spark", spark=spark)
    with pytest.raises(EngineError, match=r"output 'o': partition column 'a' holds an empty string"):
        engine.write(spark.sql("SELECT * FROM VALUES ('', 1) AS t(a, A)"), IOConfig("o", format="parquet",
                     path="p", partition_by=["a"]), tmp_path)  # fmt: skip
    fine = spark.sql("SELECT * FROM VALUES (1, 'y'), (2, 'x') AS t(a, A)")
    io = IOConfig("o", format="csv", path="c", partition_by=["a"], mode="append")
    engine.write(fine, io, tmp_path)
    same_as_read_back(engine, fine, io, tmp_path)


def test_first_append_and_partition_values_read_back_as_the_next_read(spark: Any, tmp_path: Path) -> None:
    engine = get_engine("spark", spark=spark)
    with pytest.raises(EngineError, match=r"output 'o': json does not read back .* column 'n' is int32"):
        engine.write(spark.sql("SELECT 1 AS n, 'x' AS s"), IOConfig("o", format="json", path="j", mode="append"),
                     tmp_path)  # fmt: skip
    frame = spark.sql("SELECT * FROM VALUES (1, '007'), (2, '8') AS t(n, p)")
    with pytest.raises(EngineError, match=r"output 'o': parquet partitioned by p .* partition column 'p' differ"):
        engine.write(frame, IOConfig("o", format="parquet", path="p", partition_by=["p"]), tmp_path)
    assert not (tmp_path / "j").exists() and not (tmp_path / "p").exists()


def test_timestamp_partitions_in_a_far_time_zone(spark: Any, conf: Any, tmp_path: Path) -> None:
    conf("spark.sql.session.timeZone", "America/St_Johns")
    engine = get_engine("spark", spark=spark)
    frame = spark.sql("SELECT 1 AS n, TIMESTAMP'2024-01-01 12:00:00.123456Z' AS t")
    with pytest.raises(EngineError, match=r"output 'o': partition column 't' is a timestamp"):
        engine.write(frame, IOConfig("o", format="parquet", path="p", partition_by=["t"]), tmp_path)
    if "io.delta.sql.DeltaSparkSessionExtension" in spark.conf.get("spark.sql.extensions", ""):
        io = IOConfig("o", format="delta", path="d", partition_by=["t"])
        delta = str(spark._jvm.io.delta.package.VERSION())
        if spark.version.startswith("3.") and delta.startswith(("3.0.", "3.1.", "3.2.")):
            # delta-spark 3.2 (Spark 3.5.0 to 3.5.2) wrote '2024-01-01 12:00:00.123456', no zone, even from a UTC
            # session: read back as other instants in Pacific/Kiritimati. Refused in every zone, nothing written
            for zone in ("America/St_Johns", "UTC"):
                conf("spark.sql.session.timeZone", zone)
                with pytest.raises(EngineError, match=rf"partition column 't' is a timestamp, and Delta {delta} wr"):
                    engine.write(frame, io, tmp_path)
                assert not (tmp_path / "d").exists()
            return
        if spark.version.startswith("3."):
            # delta-spark 3.3 wrote the partition value as St_Johns local time marked UTC (08:30Z for 12:00Z)
            with pytest.raises(EngineError, match=r"output 'o': partition column 't' is a timestamp, and Delta"):
                engine.write(frame, io, tmp_path)
            assert not (tmp_path / "d").exists()
            conf("spark.sql.session.timeZone", "UTC")
        engine.write(frame, io, tmp_path)
        conf("spark.sql.session.timeZone", "Pacific/Kiritimati")
        if tuple(int(p) for p in pa.__version__.split(".")[:2]) >= DELTALAKE_PYARROW:
            same_as_read_back(engine, frame, io, tmp_path)
            return
        # pyarrow older than deltalake declares (Databricks 17.3 LTS ships 19): Spark reads the table back as written;
        # the pandas engine reads it alike, or (pyarrow 14 and 15) fails inside deltalake and says so by name
        back = engine.hash(engine.read(IOConfig("o", format="delta", path="d"), tmp_path))
        want = engine.hash(frame)
        assert (back.schema, back.row_count, back.data_hash) == (want.schema, want.row_count, want.data_hash)
        pandas = get_engine("pandas")
        try:
            got = pandas.hash(pandas.read(IOConfig("o", format="delta", path="d"), tmp_path))
        except EngineError as exc:
            assert re.search(r"input 'o' \(Delta at .*\): deltalake failed .* needs pyarrow >= 21", str(exc)), exc
        else:
            assert (got.schema, got.row_count, got.data_hash) == (want.schema, want.row_count, want.data_hash)


def test_int96_and_dynamic_overwrite_set_by_the_user(spark: Any, conf: Any, tmp_path: Path) -> None:
    conf("spark.sql.parquet.outputTimestampType", "INT96")
    conf("spark.sql.sources.partitionOverwriteMode", "dynamic")
    conf("spark.sql.ansi.enabled", "true")
    keys = (
        "spark.sql.parquet.outputTimestampType",
        "spark.sql.sources.partitionOverwriteMode",
        "spark.sql.ansi.enabled",
    )
    before = {k: spark.conf.get(k, None) for k in keys}
    engine = get_engine("spark", spark=spark)
    frame = spark.sql("SELECT 1 AS n, TIMESTAMP'2024-01-01 12:00:00.123456Z' AS t, 'a' AS day")
    io = IOConfig("o", format="parquet", path="p", partition_by=["day"])
    engine.write(frame, io, tmp_path)
    same_as_read_back(engine, frame, io, tmp_path)
    engine.write(frame.selectExpr("2 AS n", "t", "'b' AS day"), io, tmp_path)  # dynamic: day=a is kept
    assert sorted(r.day for r in engine.read(io, tmp_path).collect()) == ["a", "b"]
    assert {k: spark.conf.get(k, None) for k in keys} == before
