"""One file or one pandas frame, taken by each local engine: the same table (the same rows-v1 hash and schema), or
a refusal naming the column. Found by a pandas dtype battery run against the engines; each test failed before
its fix:

- the pandas engine read a parquet file's pandas index columns (``set_index("id").to_parquet``) as the frame's
  index: ``id`` was left out of the hash (two files differing only there hashed alike) and out of every output;
- ``from_pandas`` on polars (and Spark) converted a frame rows-v1 refuses as pyarrow does (a date column holding
  a datetime kept its day) and hashed the result as the frame;
- polars read a ``date64`` (from a pandas frame, or a parquet file whose Arrow schema says date64) as a datetime;
- the pandas engine wrote NaN into json as a bare token, which is no JSON (polars refused the file);
- polars read the quoted csv header ``"a""b"`` as the name ``a""b``;
- a timestamp with a fixed-offset zone (``pd.to_datetime("... +05:30")``) made polars panic on read, a bare
  traceback, and ``from_pandas`` fail naming no column;
- polars ``from_pandas`` named a column named "" ``column_0``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ubunye.config import IOConfig
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame

pl = pytest.importorskip("polars")

from ubunye.engines.polars_engine import PolarsEngine  # noqa: E402

ENGINES = [PandasEngine(), PolarsEngine()]


def _read_hashes(io: IOConfig, base: Path) -> list[tuple[str, str]]:
    return [(h.schema, h.data_hash) for h in (hash_frame(e.read(io, base)) for e in ENGINES)]


def test_pandas_index_columns_in_a_parquet_file_are_columns_on_every_engine(tmp_path: Path) -> None:
    hashes = {}
    for name, ids in (("a", ["a1", "a2"]), ("b", ["zz", "qq"])):
        (tmp_path / name).mkdir()
        frame = pd.DataFrame({"id": ids, "v": ["x", "y"]}).set_index("id")
        frame.to_parquet(tmp_path / name / "part-0.parquet")  # id is a column of the file, marked as pandas' index
        io = IOConfig("i", format="parquet", path=name)
        (on_pandas, on_polars) = _read_hashes(io, tmp_path)
        assert on_pandas == on_polars and on_pandas[0] == 'struct<"id":string,"v":string>', (on_pandas, on_polars)
        hashes[name] = on_pandas[1]
    assert hashes["a"] != hashes["b"]  # the files differ in id only


def test_from_pandas_refuses_what_rows_v1_refuses_instead_of_hashing_pyarrows_conversion() -> None:
    frame = pd.DataFrame({"d": [dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 5, 30)]})
    with pytest.raises(EngineError, match=r"from_pandas: rows-v1 cannot hash column 'd'.*found date, datetime"):
        PolarsEngine().from_pandas(frame)


def test_a_date64_column_is_a_date_on_every_engine(tmp_path: Path) -> None:
    days = pa.array([dt.date(2024, 1, 1), None, dt.date(1969, 12, 31)], pa.date64())
    frame = pd.DataFrame({"day": pd.Series(days, dtype=pd.ArrowDtype(pa.date64())), "n": [1, 2, 3]})
    expected = hash_frame(frame)
    assert expected.schema == 'struct<"day":date,"n":int64>'
    assert hash_frame(PolarsEngine().from_pandas(frame)) == expected
    io = IOConfig("o", format="parquet", path="o")
    PandasEngine().write(frame, io, tmp_path)
    assert _read_hashes(io, tmp_path) == [(expected.schema, expected.data_hash)] * 2
    # a file another tool wrote with date64 in its Arrow schema (nested too): polars read datetimes
    (tmp_path / "ext").mkdir()
    nested = pa.array([[dt.date(2024, 1, 2)], None, []], pa.list_(pa.date64()))
    pq.write_table(pa.table({"day": days, "days": nested}), tmp_path / "ext" / "part-0.parquet")
    ext = _read_hashes(IOConfig("i", format="parquet", path="ext"), tmp_path)
    assert ext[0] == ext[1] and ext[0][0] == 'struct<"day":date,"days":list<date>>', ext


def test_json_has_no_nan_so_the_pandas_engine_refuses_it_naming_the_column(tmp_path: Path) -> None:
    io = IOConfig("o", format="json", path="o", mode="overwrite")
    good = pd.DataFrame({"id": [1], "x": [1.5]})
    PandasEngine().write(good, io, tmp_path)
    before = sorted(p.read_bytes() for p in (tmp_path / "o").iterdir())
    for bad, said in (
        (np.nan, r"NaN, .*astype\('Float64'\)"),
        (np.inf, r"inf, .*replace"),
        (-np.inf, r"-inf, .*replace"),
    ):
        frame = pd.DataFrame({"id": [1, 2], "x": [1.5, bad]})
        with pytest.raises(EngineError, match=r"^output 'o': column 'x' holds " + said):
            PandasEngine().write(frame, io, tmp_path)
    # the advice each gives works: NaN made null by Float64, an infinity replaced
    fixed = pd.DataFrame({"id": [1, 2], "x": [1.5, np.nan]}).astype({"x": "Float64"})
    inf = pd.DataFrame({"id": [1, 2], "x": [1.5, np.inf]})
    for frame in (fixed, inf.assign(x=inf["x"].replace([np.inf, -np.inf], None))):
        PandasEngine().write(frame, IOConfig("p", format="json", path="p", mode="overwrite"), tmp_path)
    # from Arrow: pandas 2.2's ArrowDtype constructor makes a NaN of a Python value null (pandas 3 keeps it)
    nested_nan = pa.array([{"f": float("nan")}], pa.struct([("f", pa.float64())]))
    nested = pd.DataFrame({"s": pd.Series(pd.arrays.ArrowExtensionArray(nested_nan))})
    with pytest.raises(EngineError, match=r"column 's' holds NaN or Infinity inside its values"):
        PandasEngine().write(nested, io, tmp_path)
    assert sorted(p.read_bytes() for p in (tmp_path / "o").iterdir()) == before  # the good output is intact
    assert _read_hashes(io, tmp_path) == [(hash_frame(good).schema, hash_frame(good).data_hash)] * 2


def test_a_quoted_csv_header_with_a_doubled_quote_is_one_name_on_every_engine(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "part-0.csv").write_text('"a""b","c"\n1,"x""y"\n2,z\n')
    on_pandas, on_polars = _read_hashes(IOConfig("i", format="csv", path="c"), tmp_path)
    assert on_pandas == on_polars and on_pandas[0] == 'struct<"a\\"b":int64,"c":string>', (on_pandas, on_polars)


def test_a_fixed_offset_zone_is_refused_by_polars_naming_the_column(tmp_path: Path) -> None:
    frame = pd.DataFrame({"id": [1], "t": pd.to_datetime(["2024-01-01 05:00+05:30"])})
    io = IOConfig("o", format="parquet", path="o")
    PandasEngine().write(frame, io, tmp_path)
    assert hash_frame(PandasEngine().read(io, tmp_path)) == hash_frame(frame)
    said = r"column 't' has the time zone '\+05:30', which polars does not take"
    with pytest.raises(EngineError, match=r"input 'o': polars cannot read .*part-.*\.parquet: " + said):
        PolarsEngine().read(io, tmp_path)
    with pytest.raises(EngineError, match="polars cannot hold this frame: " + said):
        PolarsEngine().from_pandas(frame)
    utc = frame.assign(t=frame["t"].dt.tz_convert("UTC"))  # the same instants in a zone polars takes
    assert hash_frame(PolarsEngine().from_pandas(utc)) == hash_frame(frame)


def test_polars_from_pandas_keeps_a_column_named_empty() -> None:
    frame = pd.DataFrame({"": [1], "b": [2]})
    assert hash_frame(PolarsEngine().from_pandas(frame)) == hash_frame(frame)
    assert PolarsEngine().from_pandas(frame).columns == ["", "b"]


def test_from_pandas_takes_a_frame_whose_conversion_changes_nothing_hashed() -> None:
    # An empty day (object columns with no value) or a uint8: pyarrow's conversion is refused by rows-v1 too, so
    # the run goes on with hash_error as on pandas, rather than failing in the transform on polars only.
    empty = pd.DataFrame([], columns=["order_id", "customer"])
    assert PolarsEngine().from_pandas(empty).height == 0
    assert PolarsEngine().from_pandas(pd.DataFrame({"u": np.array([1], np.uint8)}))["u"].to_list() == [1]
    with pytest.raises(EngineError, match=r"^from_pandas: rows-v1 needs string column names; column 0 is a int"):
        PolarsEngine().from_pandas(pd.DataFrame({0: [1]}))  # pyarrow would name it "0", and hash that
