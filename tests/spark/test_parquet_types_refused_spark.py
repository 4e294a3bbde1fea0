"""Parquet columns of Arrow types rows-v1 does not hash (docs/rows-v1.md section 11) are refused by the Spark
engine as by the pandas and polars engines, naming the file and the column: Spark read a null column (pandas'
all-None column) as int, an ``arrow.json`` as string and an ``arrow.bool8`` as a byte, and hashed them; a half
float failed as "CANNOT_READ_FILE_FOOTER" (Spark 3.5), naming no column. The local engines' side is
tests/engines/test_parquet_types_refused_alike.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.optional import LOCAL_ENGINES
from ubunye.config.model import IOConfig
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.engines.spark_engine import SparkEngine
from ubunye.exceptions import UbunyeError
from ubunye.hashing import hash_frame

HAVE_EXTENSIONS = all(hasattr(pa, name) for name in ("uuid", "json_", "bool8"))  # pyarrow >= 19


def _extension(name: str) -> pa.Table:
    if name == "json":
        return pa.table({"c": pa.array(['{"a":1}', None]).cast(pa.json_()), "i": [1, 2]})
    if name == "bool8":
        return pa.table({"c": pa.array([1, 0], pa.int8()).cast(pa.bool8()), "i": [1, 2]})
    return pa.table({"c": pa.array([b"0123456789abcdef", None], pa.binary(16)).cast(pa.uuid()), "i": [1, 2]})


#: (name, the table written, the column or field refused, its type as pyarrow names it)
CASES: list[tuple[str, Callable[[], pa.Table], str, str]] = [
    ("null", lambda: pa.table({"c": pa.nulls(2), "i": [1, 2]}), "column 'c'", "null"),
    ("null-in-list", lambda: pa.table({"c": pa.array([[None], []], pa.list_(pa.null()))}), "field 'c[]'", "null"),
    (
        "null-in-struct",
        lambda: pa.table({"c": pa.array([{"x": None, "y": 1}], pa.struct([("x", pa.null()), ("y", pa.int64())]))}),
        "field 'c.x'",
        "null",
    ),
    ("half-float", lambda: pa.table({"c": pa.array([1.5, None], pa.float16())}), "column 'c'", "halffloat"),
]
if HAVE_EXTENSIONS:
    CASES += [(n, lambda n=n: _extension(n), "column 'c'", f"arrow.{n}") for n in ("json", "bool8", "uuid")]


def _local_refusal(folder: Path, engine: str) -> str:
    if engine == "polars":
        from ubunye.engines.polars_engine import PolarsEngine

        reader: object = PolarsEngine()
    else:
        reader = PandasEngine()
    with pytest.raises(UbunyeError) as raised:
        hash_frame(reader.read(IOConfig("i", format="parquet", path=str(folder)), folder.parent))  # type: ignore[attr-defined]
    return str(raised.value)


@pytest.mark.parametrize(("name", "table", "where", "kind"), CASES, ids=[c[0] for c in CASES])
def test_every_engine_refuses_the_type_naming_the_column(
    spark, tmp_path: Path, name: str, table: Callable[[], pa.Table], where: str, kind: str
) -> None:
    folder = tmp_path / name
    folder.mkdir()
    pq.write_table(table(), folder / "part-0.parquet")
    io = IOConfig("i", format="parquet", path=name)
    with pytest.raises(UbunyeError) as raised:
        hash_frame(SparkEngine(spark=spark).read(io, tmp_path))
    message = str(raised.value)
    assert f"input 'i': {where} of {folder / 'part-0.parquet'}" in message, message
    assert kind in message and "docs/rows-v1.md section 11" in message, message
    for engine in LOCAL_ENGINES:  # the other engines refuse the same file, naming the same place
        local = _local_refusal(folder, engine)
        assert repr(where.split()[1].strip("'")) in local and kind in local, (engine, local)


def test_pandas_all_none_column_is_refused_on_spark(spark, tmp_path: Path) -> None:
    # the everyday way to write one: an object column holding only None, which pyarrow stores as null
    folder = tmp_path / "notes"
    folder.mkdir()
    pd.DataFrame({"id": [1, 2], "note": [None, None]}).to_parquet(folder / "part-0.parquet")
    with pytest.raises(UbunyeError, match=r"column 'note' of .*part-0\.parquet is of type null, which rows-v1"):
        SparkEngine(spark=spark).read(IOConfig("i", format="parquet", path="notes"), tmp_path)
