"""The polars engine: chosen by ENGINE.backend, reads and writes every format, SQL and expectations on polars."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lineage.usecase import last, write_task
from ubunye.config import IOConfig
from ubunye.exceptions import EngineError
from ubunye.runner import run_task

pl = pytest.importorskip("polars")

from ubunye.engines.polars_engine import PolarsEngine  # noqa: E402


def test_a_task_with_backend_polars_runs_on_polars(tmp_path: Path):
    usecase_dir = tmp_path / "uc"
    task_dir = write_task(
        usecase_dir,
        "squares",
        {
            "ENGINE": {"backend": "polars"},
            "CONFIG": {
                "outputs": {"squares": {"format": "parquet", "path": "out/squares"}},
                "transform": {"type": "task"},
                "expectations": {"squares": {"not_null": ["n"], "expression": "sq >= n"}},
                "monitors": ["lineage"],
            },
        },
        code=(
            "import polars as pl\nfrom ubunye import Task\n\n\nclass Squares(Task):\n"
            "    def transform(self, sources):\n"
            "        assert self.engine.name == 'polars'\n"
            "        return {'squares': pl.LazyFrame({'n': [1, 2, 3]}).with_columns(sq=pl.col('n') ** 2)}\n"
        ),
    )
    result = run_task(task_dir)
    assert result.status == "success"
    assert isinstance(result.outputs["squares"], pl.DataFrame)
    record = last(usecase_dir, "squares")
    assert record.backend == "polars"
    assert record.environment["polars"] == {"version": pl.__version__}
    assert [e.passed for e in record.expectations] == [True, True]
    (out,) = record.outputs
    assert (out.row_count, out.schema) == (3, 'struct<"n":int64,"sq":int64>')


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json", "delta"])
def test_write_then_read_every_format(tmp_path: Path, fmt: str):
    engine = PolarsEngine()
    frame = pl.DataFrame({"id": [1, 2], "name": ["a", None]})
    io = IOConfig(name="t", format=fmt, path="t")
    engine.write(frame, io, tmp_path)
    engine.write(frame, IOConfig(name="t", format=fmt, path="t", mode="append"), tmp_path)
    back = engine.read(io, tmp_path)
    assert sorted(back.rows()) == sorted(frame.rows() * 2)


def test_delta_time_travel(tmp_path: Path):
    engine = PolarsEngine()
    engine.write(pl.DataFrame({"v": [1]}), IOConfig(name="t", format="delta", path="d"), tmp_path)
    engine.write(pl.DataFrame({"v": [2]}), IOConfig(name="t", format="delta", path="d"), tmp_path)
    assert engine.read(IOConfig(name="t", format="delta", path="d", version=0), tmp_path)["v"].to_list() == [1]


def test_errors_name_the_input_and_the_engine(tmp_path: Path):
    engine = PolarsEngine()
    with pytest.raises(EngineError, match="input 'x': no such file or folder"):
        engine.read(IOConfig(name="x", format="parquet", path="missing"), tmp_path)
    with pytest.raises(EngineError, match=r"catalog tables .* need the spark engine"):
        engine.read(IOConfig(name="x", table="db.t"), tmp_path)
    with pytest.raises(EngineError, match=r"the polars engine needs a polars DataFrame, got builtins\.list"):
        engine.native([1])


def test_sql_and_scalar_quote_identifiers():
    engine = PolarsEngine()
    frame = pl.DataFrame({"odd name": [1, 2, 3]})
    col = engine.quote("odd name")
    assert engine.scalar(f"SELECT SUM({col}) FROM t", {"t": frame}) == 6
    assert engine.sql(f"SELECT {col} FROM t WHERE {col} > 1", {"t": frame}).height == 2


def _duplicate_key_map():
    import pyarrow as pa

    entries = pa.array([[("a", 1), ("a", 2)], [("b", 3)]], pa.map_(pa.string(), pa.int64()))
    deep = pa.struct([("x", pa.list_(pa.map_(pa.string(), pa.int64())))])
    return pa.table({"id": [1, 2], "m": entries, "deep": pa.array([{"x": [[("k", 1), ("k", 1)]]}, None], deep)})


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_maps_read_with_every_entry_a_duplicate_key_included(tmp_path: Path, fmt: str):
    # rows-v1 counts a duplicate key's entries (section 6); polars' own readers kept one per key
    import pandas as pd

    from ubunye.engines.pandas_engine import PandasEngine
    from ubunye.hashing import canonical_lines, hash_frame

    table = _duplicate_key_map()
    PandasEngine().write(table.to_pandas(types_mapper=pd.ArrowDtype), IOConfig("t", format=fmt, path="t"), tmp_path)
    back = PolarsEngine().read(IOConfig("t", format=fmt, path="t"), tmp_path)
    assert sorted(canonical_lines(back)) == sorted(canonical_lines(table))
    assert hash_frame(back).data_hash == hash_frame(table).data_hash


def test_maps_in_partition_folders_are_refused_naming_the_column(tmp_path: Path):
    import pyarrow.parquet as pq

    (tmp_path / "t" / "day=1").mkdir(parents=True)
    pq.write_table(_duplicate_key_map(), tmp_path / "t" / "day=1" / "part-0.parquet")
    with pytest.raises(EngineError, match=r"input 't': column 'm' is a map, and polars' parquet reader keeps one"):
        PolarsEngine().read(IOConfig("t", format="parquet", path="t"), tmp_path)
