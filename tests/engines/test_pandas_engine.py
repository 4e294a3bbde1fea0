"""The pandas engine: formats, write modes, relative paths, Delta time travel, SQL."""

from __future__ import annotations

import datetime as dt
import time

import pandas as pd
import pytest

from ubunye.config.model import IOConfig
from ubunye.engines import get_engine, location
from ubunye.exceptions import EngineError

FRAME = pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", None], "score": [1.5, None, 3.0]})


@pytest.fixture
def engine():
    return get_engine("pandas")


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json", "delta"])
def test_round_trip_and_append(engine, tmp_path, fmt):
    io = IOConfig("t", format=fmt, path="data/t")
    # JSON has no NaN (refused, tests/engines/test_one_file_every_engine.py): there the missing score is null
    frame = FRAME.astype({"score": "Float64"}) if fmt == "json" else FRAME
    engine.write(frame, io, tmp_path)
    assert (tmp_path / "data/t").is_dir()  # relative to the usecase_dir
    back = engine.read(io, tmp_path)
    assert sorted(back["id"].tolist()) == [1, 2, 3]
    assert engine.hash(back).row_count == 3
    if fmt in ("parquet", "delta", "json"):
        assert engine.hash(back).data_hash == engine.hash(frame).data_hash
    engine.write(frame, IOConfig("t", format=fmt, path="data/t", mode="append"), tmp_path)
    assert len(engine.read(io, tmp_path)) == 6
    engine.write(frame, io, tmp_path)
    assert len(engine.read(io, tmp_path)) == 3


def test_int_column_with_nulls_keeps_its_type(engine, tmp_path):
    io = IOConfig("t", format="parquet", path="t")
    engine.write(pd.DataFrame({"n": pd.array([1, None], dtype="Int64")}), io, tmp_path)
    assert engine.hash(engine.read(io, tmp_path)).schema == 'struct<"n":int64>'


def test_delta_time_travel(engine, tmp_path):
    io = IOConfig("t", format="delta", path="t")
    engine.write(FRAME.head(1), io, tmp_path)
    time.sleep(0.05)
    between = dt.datetime.now(dt.timezone.utc).isoformat()
    time.sleep(0.05)
    engine.write(FRAME, io, tmp_path)
    assert len(engine.read(io, tmp_path)) == 3
    assert len(engine.read(IOConfig("t", format="delta", path="t", version=0), tmp_path)) == 1
    assert len(engine.read(IOConfig("t", format="delta", path="t", timestamp=between), tmp_path)) == 1


def test_sql_and_scalar(engine):
    out = engine.sql("SELECT CAST(COUNT(*) AS BIGINT) AS n FROM t WHERE name IS NOT NULL", {"t": FRAME})
    assert out["n"].tolist() == [2]
    assert engine.scalar('SELECT MAX("id") FROM t', {"t": FRAME}) == 3


def test_errors(engine, tmp_path):
    with pytest.raises(EngineError, match="need the spark engine"):
        engine.read(IOConfig("t", table="db.t"), tmp_path)
    with pytest.raises(EngineError, match="no such file or folder"):
        engine.read(IOConfig("t", format="parquet", path="missing"), tmp_path)
    with pytest.raises(EngineError, match="needs a pandas DataFrame"):
        engine.native([1, 2])


def test_location():
    from pathlib import Path

    assert location(IOConfig("t", format="parquet", path="x/y"), Path("/u")) == "/u/x/y"
    assert location(IOConfig("t", format="parquet", path="s3://b/k"), Path("/u")) == "s3://b/k"
    assert location(IOConfig("t", table="db.t"), Path("/u")) == "table:db.t"
