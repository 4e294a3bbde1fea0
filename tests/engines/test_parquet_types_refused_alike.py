"""Parquet columns of types rows-v1 does not hash (docs/rows-v1.md sections 2 and 11) are refused by every local
engine alike, naming the column: the polars engine hashed a parquet UUID (an ``arrow.uuid`` column) as plain
binary, where pandas and Spark refuse it, and panicked on a struct naming a field twice ("Duplicate(...)"), where
pandas names the column. The Spark engine's side is tests/spark/test_parquet_types_refused_spark.py."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.optional import LOCAL_ENGINES, needs_polars
from ubunye.config.model import IOConfig
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.engines.parquet_leaves import arrow_only
from ubunye.exceptions import UbunyeError
from ubunye.hashing import hash_frame

HAVE_EXTENSIONS = all(hasattr(pa, name) for name in ("uuid", "json_", "bool8"))  # pyarrow >= 19
needs_extensions = pytest.mark.skipif(not HAVE_EXTENSIONS, reason="this pyarrow has no uuid/json/bool8 types")


def _uuids() -> pa.Array:
    return pa.array([b"0123456789abcdef", None], pa.binary(16)).cast(pa.uuid())


def _refusal(folder: Path, engine: str) -> str:
    """What ``engine`` says reading the parquet folder and hashing it: it must refuse one or the other."""
    if engine == "polars":
        from ubunye.engines.polars_engine import PolarsEngine

        reader: object = PolarsEngine()
    else:
        reader = PandasEngine()
    io = IOConfig("i", format="parquet", path=str(folder))
    with pytest.raises(UbunyeError) as raised:
        hash_frame(reader.read(io, folder.parent))  # type: ignore[attr-defined]
    return str(raised.value)


def _write(tmp_path: Path, table: pa.Table) -> Path:
    folder = tmp_path / "t"
    folder.mkdir()
    pq.write_table(table, folder / "part-0.parquet")
    return folder


@needs_extensions
@pytest.mark.parametrize("engine", LOCAL_ENGINES)
@pytest.mark.parametrize("nested", [False, True])
def test_a_parquet_uuid_is_refused_naming_the_column(tmp_path: Path, engine: str, nested: bool) -> None:
    uuids = _uuids()
    column = pa.StructArray.from_arrays([uuids], ["u"]) if nested else uuids
    folder = _write(tmp_path, pa.table({"c": column, "i": [1, 2]}))
    message = _refusal(folder, engine)
    assert ("field 'c.u'" if nested else "column 'c'") in message, message
    assert "arrow.uuid" in message and "rows-v1" in message, message


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
@pytest.mark.parametrize("nested", [False, True])
def test_a_struct_naming_a_field_twice_is_refused_naming_the_column(tmp_path: Path, engine: str, nested: bool) -> None:
    twice = pa.StructArray.from_arrays([pa.array([1]), pa.array([2])], ["x", "x"])
    column = pa.StructArray.from_arrays([twice], ["t"]) if nested else twice
    message = _refusal(_write(tmp_path, pa.table({"s": column})), engine)
    assert ("'s.t'" if nested else "column 's'") in message, message
    assert "two fields named 'x'" in message and "docs/rows-v1.md section 2" in message, message


@needs_polars
def test_polars_names_the_file_as_pandas_names_the_column(tmp_path: Path) -> None:
    twice = pa.StructArray.from_arrays([pa.array([1]), pa.array([2])], ["x", "x"])
    folder = _write(tmp_path, pa.table({"s": twice}))
    pandas, polars = _refusal(folder, "pandas"), _refusal(folder, "polars")
    assert polars == f"input 'i': {folder / 'part-0.parquet'}: {pandas}"
    assert "Panic" not in polars


@pytest.mark.parametrize(
    "kind",
    [
        pa.null(),
        pa.list_(pa.null()),
        pa.struct([("x", pa.null()), ("y", pa.int64())]),
        pa.float16(),
        pa.uint8(),
        pa.map_(pa.string(), pa.duration("us")),
        *([pa.uuid(), pa.json_(), pa.bool8()] if HAVE_EXTENSIONS else []),
    ],
    ids=str,
)
def test_every_type_the_local_engines_refuse_is_one_spark_refuses_too(tmp_path: Path, kind: pa.DataType) -> None:
    # arrow_only is the Spark engine's pre-check: a type pandas refuses to hash that it left out, Spark hashed
    found = arrow_only(kind, "c")
    assert found is not None
    path, leaf = found
    with pytest.raises(UbunyeError) as raised:
        hash_frame(pa.table({"c": pa.nulls(1, kind) if not pa.types.is_map(kind) else pa.array([None], kind)}))
    assert repr(path) in str(raised.value) and str(leaf) in str(raised.value)


@pytest.mark.parametrize("kind", [pa.int64(), pa.string(), pa.list_(pa.struct([("a", pa.float32())]))], ids=str)
def test_types_rows_v1_hashes_are_not_refused(kind: pa.DataType) -> None:
    assert arrow_only(kind, "c") is None
