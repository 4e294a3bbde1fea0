"""Frames analysts have, written by the pandas and polars engines and read back as the next run reads them: the
record's hash must be the hash of what is read back, or the write is refused with an error naming the column.

Bugs found here, each with a test that failed before its fix:

- polars ``Enum`` and ``Array`` columns written to Delta committed, and then polars' own Delta reader refused the
  table ("data type mismatch for column c: incoming: Enum([...]) != target: String"): the next run could not read
  the output. A Categorical or Enum partition column was refused by deltalake naming no column ("failed to read
  partition column value as Scalar"). The polars engine now writes them to Delta as String and List.
- a pandas ``ArrowDtype(dictionary)`` column (a parquet of categoricals read back) as a Delta partition column: the
  same deltalake refusal; and a ``decimal256`` of precision <= 38 (a rows-v1 decimal) was refused by deltalake. The
  pandas engine now writes them as their values and as ``decimal128``.
- a polars list or struct holding binary written as json made polars panic in Rust; the PanicException (a
  BaseException) passed the engine's error handling. It is now an EngineError naming the column and field, and any
  other polars writer panic an EngineError naming the output.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from tests.lineage.usecase import last, write_task
from ubunye.config import IOConfig
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame
from ubunye.runner import run_task

pl = pytest.importorskip("polars")
pytest.importorskip("deltalake")

from ubunye.engines.polars_engine import PolarsEngine  # noqa: E402

D = decimal.Decimal


def _polars_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": [1, 2, 3],
            "enum": pl.Series(["a", None, "b"], dtype=pl.Enum(["b", "a", "unused"])),
            "cat": pl.Series(["x", "y", None], dtype=pl.Categorical),
            "arr": pl.Series([[1, None], None, [None, None]], dtype=pl.Array(pl.Int64, 2)),
            "nested": pl.Series(
                [{"e": [["a"], None]}, None, {"e": None}],
                dtype=pl.Struct({"e": pl.List(pl.Array(pl.Enum(["a"]), 1))}),
            ),
            "dec": pl.Series([D("1.50"), None, D("0")], dtype=pl.Decimal(10, 2)),
        }
    )


def _arrow_of_polars_frame() -> pa.Table:
    """The same values as :func:`_polars_frame`, in plain Arrow types (written out by hand)."""
    return pa.table(
        {
            "id": [1, 2, 3],
            "enum": pa.array(["a", None, "b"]),
            "cat": pa.array(["x", "y", None]),
            "arr": pa.array([[1, None], None, [None, None]], pa.list_(pa.int64())),
            "nested": pa.array(
                [{"e": [["a"], None]}, None, {"e": None}], pa.struct([("e", pa.list_(pa.list_(pa.string())))])
            ),
            "dec": pa.array([D("1.50"), None, D("0")], pa.decimal128(10, 2)),
        }
    )


@pytest.mark.parametrize("partition_by", [[], ["enum"], ["cat"]], ids=["plain", "by-enum", "by-categorical"])
def test_polars_enum_and_array_columns_written_to_delta_read_back_with_their_hash(
    tmp_path: Path, partition_by: list[str]
) -> None:
    engine, frame = PolarsEngine(), _polars_frame()
    want = hash_frame(frame)
    assert want == hash_frame(_arrow_of_polars_frame())
    io = IOConfig(name="o", format="delta", path="o", partition_by=partition_by)
    engine.write(frame, io, tmp_path)
    back = engine.read(IOConfig(name="o", format="delta", path="o"), tmp_path)
    assert hash_frame(back) == want
    assert hash_frame(PandasEngine().read(IOConfig(name="o", format="delta", path="o"), tmp_path)) == want


def test_a_polars_enum_delta_output_is_the_next_runs_input_with_the_recorded_hash(tmp_path: Path) -> None:
    usecase_dir = tmp_path / "uc"
    code = (
        "import polars as pl\nfrom ubunye import Task\n\n\nclass W(Task):\n    def transform(self, sources):\n"
        "        return {'o': pl.DataFrame({'c': pl.Series(['a', None], dtype=pl.Enum(['b', 'a'])),\n"
        "                                   'a': pl.Series([[1, 2], None], dtype=pl.Array(pl.Int64, 2))})}\n"
    )
    outputs = {"o": {"format": "delta", "path": "out/o"}}
    config = {"ENGINE": {"backend": "polars"}, "CONFIG": {"outputs": outputs, "monitors": ["lineage"]}}
    assert run_task(write_task(usecase_dir, "w", config, code)).status == "success"
    written = last(usecase_dir, "w").outputs[0]
    assert written.written and written.data_hash is not None

    code = "from ubunye import Task\n\n\nclass R(Task):\n    def transform(self, sources):\n"
    code += "        return {'p': sources['i']}\n"
    config = {
        "ENGINE": {"backend": "polars"},
        "CONFIG": {
            "inputs": {"i": {"format": "delta", "path": "out/o"}},
            "outputs": {"p": {"format": "parquet", "path": "out/p"}},
            "monitors": ["lineage"],
        },
    }
    assert run_task(write_task(usecase_dir, "r", config, code)).status == "success"
    record = last(usecase_dir, "r")
    assert record.inputs[0].data_hash == written.data_hash == record.outputs[0].data_hash
    assert record.inputs[0].schema == 'struct<"a":list<int64>,"c":string>'


def test_pandas_dictionary_partition_and_decimal256_columns_write_to_delta(tmp_path: Path) -> None:
    table = pa.table(
        {
            "region": pa.array(["north", "south", "north", None]).dictionary_encode(),
            "amount": pa.array([D("1.50"), None, D("-2.25"), D("0")], pa.decimal256(20, 2)),
            "id": [1, 2, 3, 4],
        }
    )
    frame = table.to_pandas(types_mapper=pd.ArrowDtype)
    plain = pa.table(
        {
            "region": ["north", "south", "north", None],
            "amount": pa.array([D("1.50"), None, D("-2.25"), D("0")], pa.decimal128(20, 2)),
            "id": [1, 2, 3, 4],
        }
    )
    want = hash_frame(frame)
    assert want == hash_frame(plain)
    engine = PandasEngine()
    engine.write(frame, IOConfig(name="o", format="delta", path="o", partition_by=["region"]), tmp_path)
    assert hash_frame(engine.read(IOConfig(name="o", format="delta", path="o"), tmp_path)) == want
    assert hash_frame(PolarsEngine().read(IOConfig(name="o", format="delta", path="o"), tmp_path)) == want


@pytest.mark.parametrize(
    ("column", "path"),
    [
        (pl.Series("b", [[b"\x00", None], None], dtype=pl.List(pl.Binary)), "b[]"),
        (pl.Series("b", [{"x": b"\xff"}, None], dtype=pl.Struct({"x": pl.Binary})), "b.x"),
        (pl.Series("b", [[{"x": [b"y"]}]], dtype=pl.List(pl.Struct({"x": pl.List(pl.Binary)}))), "b[].x[]"),
    ],
    ids=["list", "struct", "deep"],
)
def test_polars_binary_inside_a_list_or_struct_is_refused_for_json_naming_the_field(
    tmp_path: Path, column: pl.Series, path: str
) -> None:
    frame = pl.DataFrame([column, pl.Series("id", range(len(column)))])
    message = re.escape(f"output 'o': json cannot hold column 'b' (field '{path}' of type binary)")
    with pytest.raises(EngineError, match=message):
        PolarsEngine().write(frame, IOConfig(name="o", format="json", path="o"), tmp_path)
    assert not (tmp_path / "o").exists()
    parquet = IOConfig(name="o", format="parquet", path="o")
    PolarsEngine().write(frame, parquet, tmp_path)  # parquet holds it
    assert hash_frame(PolarsEngine().read(parquet, tmp_path)) == hash_frame(frame)


def test_a_polars_writer_panic_is_an_engine_error_naming_the_output(tmp_path: Path, monkeypatch) -> None:
    class PanicException(BaseException):  # pyo3's: a BaseException, named so
        pass

    def panic(self: object, *args: object, **kwargs: object) -> None:
        raise PanicException("not yet implemented: Writing SomeType to JSON\nstack backtrace: ...")

    monkeypatch.setattr(pl.DataFrame, "write_ndjson", panic)
    frame = pl.DataFrame({"id": [1]})
    with pytest.raises(EngineError, match=r"output 'o': polars cannot write this frame as json \(it panicked: not yet"):
        PolarsEngine().write(frame, IOConfig(name="o", format="json", path="o"), tmp_path)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_polars_and_pandas_frames_of_one_table_write_what_they_hash(tmp_path: Path, fmt: str) -> None:
    """Both engines, one table of the types analysts have: each writes it, reads it back, and gets the hash of the
    other engine's frame and of the Arrow table of the same values."""
    polars_frame = _polars_frame().with_columns(
        t=pl.Series(
            [dt.datetime(2024, 10, 27, 0, 30), None, dt.datetime(1950, 1, 1)], dtype=pl.Datetime("ns", "UTC")
        ).dt.convert_time_zone("Europe/Berlin"),
        f=pl.Series([float("nan"), -0.0, None], dtype=pl.Float32),
        d=pl.Series([dt.date(2024, 2, 29), None, dt.date(1, 1, 1)]),
    )
    pandas_frame = polars_frame.to_pandas(use_pyarrow_extension_array=True)
    want = hash_frame(polars_frame)
    assert hash_frame(pandas_frame) == want
    for engine, frame in ((PolarsEngine(), polars_frame), (PandasEngine(), pandas_frame)):
        io = IOConfig(name="o", format=fmt, path=f"{engine.name}/o")
        engine.write(frame, io, tmp_path)  # type: ignore[attr-defined]
        assert hash_frame(engine.read(io, tmp_path)) == want  # type: ignore[attr-defined]
