"""Partition folders are typed on the pandas and polars engines as the live Spark types them.

tests/engines/test_partition_types.py holds what Spark gave for each folder value, copied by hand; this reads the
same folders (and more: Java's number parsers' odd inputs, digits other than 0-9, layouts Spark refuses) with the
installed Spark (``spark.read.parquet``, the shared session: zone UTC) and with the pandas and polars engines, and
compares the rows-v1 schema and hash. Where Spark fails, the engines must refuse; where the engines refuse on
purpose (a timestamp column, which Spark reads in its session's zone; a %-escape Spark 3.5 and 4 read otherwise),
Spark's reading is checked to be what the refusal says. Nothing here depends on Spark's error texts, which differ
between lines: run on a Spark line's venv with ``.venv-spark-<v>/bin/pytest -p no:cacheprovider <this file>``.
"""

from __future__ import annotations

import functools
import importlib.util
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.engines.test_partition_types import (
    LINE_ESCAPES,
    LINE_LAYOUTS,
    READ_LAYOUTS,
    SPARK_DIGITS,
    SPARK_EDGES,
    SPARK_READ,
    SPARK_REFUSED_LAYOUTS,
)
from ubunye.cli.hash import hash_target
from ubunye.engines.partition_types import _unescape_spark35, unescape_path_name
from ubunye.exceptions import EngineError, HashError, UbunyeError
from ubunye.hashing import hash_frame

#: The local engines of this venv (the Spark-line venvs have no polars).
ENGINES = ["pandas", "polars"] if importlib.util.find_spec("polars") else ["pandas"]

# Java's number parsers at their edges (blanks Double.parseDouble trims, suffixes, hex, exponents), calendar and
# clock edges, and columns whose values widen to one type: each a list of folder values of one column
MORE = [
    [" 1"], ["1 "], ["\t1"], ["1\u00a0"], ["1f"], ["1e5f"], ["0x1p3"], ["0x1p3d"], ["-NaN"], ["+Infinity"],
    [".5e1"], ["1.e5"], ["0.0e1"], ["0.00e1"], ["1e38"], ["1" * 38], ["1" * 39], ["1e-0"], ["0e0"], ["00"],
    ["1.5e1"], ["15e-1"], ["-2147483649"], ["9223372036854775808"], ["%2B1"], ["%+"], ["-"],
    ["1", "1e5"], ["3000000000", "1e5"], ["1", "1.5", "3000000000"], ["1.5", "1e5"],
    ["2024-01-01", "__HIVE_DEFAULT_PARTITION__", "7"],
    ["0000-01-01"], ["99999-01-01"], ["+99999-01-01"], ["-0001-01-01"],
    ["2024-01-01 24%3A00%3A00"], ["2024-01-01 10%3A00%3A60"], ["2024-01-01 10%3A00%3A00.12"],
    ["2024-01-01 10%3A00%3A00", "x"], ["2024-01-01 10%3A00%3A00", "1"],
    ["2024-01-01 10%3A00%3A00"], ["2024-01-01 10%3A00%3A00.1"], ["2024-01-01", "2024-01-02 10%3A00%3A00"],
    ["", "a"],  # an empty value: Spark refuses it
    ["\u0661", "1.5"],  # an int of other digits in a double column: Spark fails to cast it
]  # fmt: skip
CASES = list(
    dict.fromkeys(
        tuple(raws) for raws in [*(c[0] for c in [*SPARK_READ, *SPARK_EDGES, *SPARK_DIGITS]), *MORE, *LINE_ESCAPES]
    )
)
LAYOUTS = [*SPARK_REFUSED_LAYOUTS, *LINE_LAYOUTS, *READ_LAYOUTS]


def _spark_4(spark: Any) -> bool:
    return int(spark.version.split(".")[0]) >= 4


#: Per partition column type, the Arrow type and how its text (:func:`_as_text`) is read back; a timestamp has none.
_READ_BACK = {
    "int": (pa.int32(), int),
    "bigint": (pa.int64(), int),
    "double": (pa.float64(), float.fromhex),
    "string": (pa.string(), str),
    "void": (pa.null(), str),
    "date": (pa.int32(), int),  # a day count, any year (Python's dates hold years 1 to 9999)
}


def _arrow(kind: str) -> pa.DataType | None:
    """The Arrow type of a Spark partition column's type (simpleString), or None for a timestamp."""
    if kind.startswith("decimal("):
        precision, scale = kind[len("decimal(") : -1].split(",")
        return pa.decimal128(int(precision), int(scale))
    return pa.date32() if kind == "date" else _READ_BACK[kind][0] if kind in _READ_BACK else None


def _as_text(column: Any, kind: str) -> Any:
    """A partition column as exact text, so that every case's columns are read in one Spark job: doubles in hex
    (java.util.Formatter's %a), dates as day counts."""
    from pyspark.sql import functions as F

    if kind == "double":
        return F.when(F.isnan(column) | (F.abs(column) == float("inf")), column.cast("string")).otherwise(
            F.format_string("%a", column)
        )
    if kind == "date":
        return F.datediff(column, F.lit("1970-01-01").cast("date")).cast("string")
    return column.cast("string")


Read = pa.Table | Exception


@pytest.fixture(scope="module")
def spark_reads(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Read]:
    """What Spark reads from each case's folder (by :func:`_key`): its table as Arrow (a timestamp column as nulls
    typed timestamp), or the error Spark raised. One Spark job for all (each read alone took seconds)."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    base = tmp_path_factory.mktemp("partitions")
    roots = {_key(raws): _folders(base / f"c{i}", raws) for i, raws in enumerate(CASES)}
    roots.update({_key(folders): _layout(base / f"l{i}", folders) for i, folders in enumerate(LAYOUTS)})
    reads: dict[str, Read] = {}
    kinds: dict[str, list[tuple[str, str]]] = {}
    texts = []
    for key, root in roots.items():
        try:  # the data column as declared: Spark infers the partition columns only (no job)
            frame = spark.read.schema("v bigint").parquet(str(root))
        except Exception as exc:  # Spark's error classes and texts differ between lines: any refusal counts
            reads[key] = exc
            continue
        kinds[key] = [(f.name, f.dataType.simpleString()) for f in frame.schema.fields if f.name != "v"]
        for name, kind in kinds[key]:
            text = _as_text(F.col(f"`{name}`"), kind)
            texts.append(frame.select(F.lit(key).alias("key"), "v", F.lit(name).alias("name"), text.alias("text")))
    rows = functools.reduce(DataFrame.unionAll, texts).collect()
    for key, columns in kinds.items():
        mine = [r for r in rows if r["key"] == key]
        vs = sorted({r["v"] for r in mine})
        table = {"v": pa.array(vs, pa.int64())}
        for name, kind in columns:
            by_v = {r["v"]: r["text"] for r in mine if r["name"] == name}
            arrow = _arrow(kind)
            if arrow is None:
                table[name] = pa.nulls(len(vs), pa.timestamp("us", "UTC"))
                continue
            parse = Decimal if pa.types.is_decimal(arrow) else _READ_BACK[kind][1]
            values = [None if by_v[v] is None else parse(by_v[v]) for v in vs]
            at = pa.array(values, pa.int32() if kind == "date" else arrow)
            table[name] = at.cast(pa.date32()) if kind == "date" else at
        reads[key] = pa.table(table)
    return reads


def _key(case: tuple[str, ...] | str) -> str:
    return ascii(case)


def _ours(root: Path, engine: str) -> tuple[str, str] | UbunyeError:
    """The rows-v1 schema and hash ``engine`` reads from ``root``, or the error it refused it with."""
    try:
        read = hash_target(str(root), engine=engine)
    except UbunyeError as exc:
        return exc
    return read["schema"], read["data_hash"]


def _assert_hashed_alike(ours: tuple[str, str] | UbunyeError, spark: pa.Table, engine: str) -> None:
    """``ours`` is the hash of Spark's table, or a HashError where rows-v1 has none for it (an all-null column:
    Spark's void)."""
    try:
        expected = hash_frame(spark)
    except HashError:
        assert isinstance(ours, HashError), (engine, ours, spark.schema)
        return
    assert ours == (expected.schema, expected.data_hash), (engine, ours, spark.schema, spark.to_pydict())


def _folders(root: Path, raws: tuple[str, ...]) -> Path:
    """A folder ``k=<raw>`` per value, holding one row ``v`` = its index."""
    for i, raw in enumerate(raws):
        (root / f"k={raw}").mkdir(parents=True)
        pq.write_table(pa.table({"v": pa.array([i], pa.int64())}), root / f"k={raw}" / "part-0.parquet")
    return root


def _layout(root: Path, folders: str) -> Path:
    """The folders ``folders`` (``a=1/b=2``), holding one row ``v`` = 7."""
    (root / folders).mkdir(parents=True)
    pq.write_table(pa.table({"v": pa.array([7], pa.int64())}), root / folders / "part-0.parquet")
    return root


def _has_timestamp(table: pa.Table) -> bool:
    return any(pa.types.is_timestamp(t) for t in table.schema.types)


@pytest.mark.parametrize("raws", CASES, ids=[ascii(list(c))[:40] for c in CASES])
def test_partition_values_read_as_live_spark_reads_them(
    spark: Any, spark_reads: dict[str, Read], tmp_path: Path, raws: tuple[str, ...]
) -> None:
    read, root = spark_reads[_key(raws)], _folders(tmp_path / "t", raws)
    if list(raws) in LINE_ESCAPES:  # refused on purpose: Spark reads this line's unescape, as the error says
        assert isinstance(read, pa.Table), read
        line, other = (
            (unescape_path_name, _unescape_spark35) if _spark_4(spark) else (_unescape_spark35, unescape_path_name)
        )
        assert read.column("k").to_pylist() == [line(raw) for raw in raws]
        assert [line(raw) for raw in raws] != [other(raw) for raw in raws]
    for engine in ENGINES:
        ours = _ours(root, engine)
        if isinstance(read, Exception) or _has_timestamp(read) or list(raws) in LINE_ESCAPES:
            assert isinstance(ours, EngineError), (engine, ours, read)
        else:
            _assert_hashed_alike(ours, read, engine)


@pytest.mark.parametrize("folders", LAYOUTS, ids=ascii)
def test_partition_layouts_read_or_refused_as_live_spark(
    spark: Any, spark_reads: dict[str, Read], tmp_path: Path, folders: str
) -> None:
    read, root = spark_reads[_key(folders)], _layout(tmp_path / "t", folders)
    if folders in SPARK_REFUSED_LAYOUTS:
        assert isinstance(read, Exception), read
    else:
        assert isinstance(read, pa.Table), read
    if folders in LINE_LAYOUTS:  # refused on purpose: the column's name is this line's unescape of the folder's
        line = unescape_path_name if _spark_4(spark) else _unescape_spark35
        assert isinstance(read, pa.Table) and read.column_names[-1] == line(folders.split("=")[0])
    for engine in ENGINES:
        ours = _ours(root, engine)
        if folders in READ_LAYOUTS:
            assert isinstance(read, pa.Table)
            _assert_hashed_alike(ours, read, engine)
        else:
            assert isinstance(ours, EngineError), (engine, ours)
