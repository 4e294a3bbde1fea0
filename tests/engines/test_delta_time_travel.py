"""A Delta input read ``timestamp:`` back: one instant on every engine (a time with no zone is UTC), and a time
before the table's first commit refused on every engine. Found by the Delta hunt: Spark read a zone-less time in
the session's zone (another version than pandas from the same config), pandas loaded version 0 for a time before
the table existed (recorded as if it had), and each engine refused forms of the time the other took."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pandas as pd
import pytest

from ubunye.config import IOConfig
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.exceptions import EngineError


def _two_versions(tmp_path: Path) -> dt.datetime:
    """A Delta table at tmp_path/t with versions 0 and 1; an instant between their commits (UTC)."""
    engine = PandasEngine()
    engine.write(pd.DataFrame({"a": [1]}), IOConfig("t", format="delta", path="t"), tmp_path)
    time.sleep(1.2)
    between = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    time.sleep(1.2)
    engine.write(pd.DataFrame({"a": [2]}), IOConfig("t", format="delta", path="t", mode="append"), tmp_path)
    return between


def _texts(between: dt.datetime) -> list[str]:
    """One instant written as the config takes it: with no zone (UTC), Z, z, an offset, an offset with seconds."""
    kolkata = between.astimezone(dt.timezone(dt.timedelta(hours=5, minutes=30)))
    seconds = between.astimezone(dt.timezone(dt.timedelta(seconds=30)))
    plain = between.replace(tzinfo=None).isoformat()
    return [plain, plain + "Z", plain + "z", kolkata.isoformat(), seconds.isoformat()]


@pytest.mark.parametrize("name", ["pandas", "polars"])
def test_one_version_for_every_form_of_one_instant_and_a_time_before_the_table_refused(tmp_path, name):
    if name == "polars":
        pytest.importorskip("polars")
    from ubunye.engines import get_engine

    between = _two_versions(tmp_path)
    engine = get_engine(name)
    for text in _texts(between):
        read = engine.read(IOConfig("t", format="delta", path="t", timestamp=text), tmp_path)
        assert list(read["a"]) == [1], text
    with pytest.raises(EngineError, match=r"the table has no version at or before 2000-01-01T00:00:00\+00:00"):
        engine.read(IOConfig("t", format="delta", path="t", timestamp="2000-01-01T00:00:00Z"), tmp_path)


def test_spark_reads_a_zone_less_time_as_utc_as_pandas_does(spark, tmp_path):
    from ubunye.engines.spark_engine import SparkEngine

    between = _two_versions(tmp_path)
    engine = SparkEngine(spark=spark)
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")  # 9 hours ahead: a zone-less time read there is v0
    try:
        for text in _texts(between):
            io = IOConfig("t", format="delta", path="t", timestamp=text)
            assert engine.delta_version(io, tmp_path) == 0, text
            assert [r.a for r in engine.read(io, tmp_path).collect()] == [1], text
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
