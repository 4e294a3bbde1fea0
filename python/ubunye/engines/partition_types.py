"""Partition columns read from ``name=value`` folder names as Spark reads them (pure functions).

Spark and Databricks write partitioned parquet, csv and json as folders such as ``dt=2024-01-01/k=7``; every
reader turns the folder names back into columns, each guessing a type from the text. pyarrow and polars guess
otherwise than Spark (pyarrow ``k=0`` as int32 and ``dt=2024-01-01`` as a string, polars both as int64 and a date),
so one folder hashed differently on each engine. :func:`partition_column` types a column as Spark does, so the
pandas and polars engines read the folder as the Spark engine reads it (docs/tasks-and-records.md, "A folder inside").
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from ubunye.exceptions import EngineError

#: The folder value Spark and Hive write for a null partition value.
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
# Java's Integer.parseInt / Long.parseLong: a sign and digits, nothing else (no blanks, no "_")
_INTEGER = re.compile(r"[+-]?\d+")
# java.math.BigDecimal(String): digits with an optional point and an optional exponent
_BIG_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# Java's Double.parseDouble, after it trims characters up to U+0020: NaN, Infinity, a decimal number or a hex one,
# with an optional f/F/d/D suffix on numbers (Python's float() takes "inf", "nan" and "1_0", which Java refuses)
_JAVA_DOUBLE = re.compile(
    r"(?P<sign>[+-]?)(?:(?P<special>NaN|Infinity)"
    r"|(?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?"
    r"|(?P<hex>0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)"
)
# Spark's DateFormatter.defaultPattern "yyyy-MM-dd" (strict: two-digit month and day; a sign or a fifth year digit
# is taken too)
_DATE = re.compile(r"[+-]?\d{4,}-\d{2}-\d{2}")
# Spark's PartitioningUtils.timestampPartitionPattern "yyyy-MM-dd HH:mm:ss[.S]", on the unescaped text
_TIMESTAMP = re.compile(r"([+-]?\d{4,}-\d{2}-\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d+)?")


def unescape_path_name(text: str) -> str:
    """A folder name's text as Spark reads it (ExternalCatalogUtils.unescapePathName): each ``%xx`` is the
    character of that code.

    Example:
        >>> unescape_path_name("a%2Fb%3A%zz")
        'a/b:%zz'
    """
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def _java_double(raw: str) -> float | None:
    """``raw`` as Java's Double.parseDouble reads it, or None where it throws."""
    found = _JAVA_DOUBLE.fullmatch(raw.strip("".join(map(chr, range(33)))))
    if found is None:
        return None
    sign = -1.0 if found.group("sign") == "-" else 1.0
    if found.group("special"):
        return sign * (float("nan") if found.group("special") == "NaN" else float("inf"))
    if found.group("hex"):
        return sign * float.fromhex(found.group("hex"))
    return sign * float(found.group("dec"))


def _big_decimal(raw: str) -> decimal.Decimal | None:
    """``raw`` as Spark's partition inference takes a decimal: a java.math.BigDecimal of scale <= 0 (no digit
    after the point: ``1e3`` and ``1.0E1`` are, ``1.0`` is not) and at most 38 digits once written with scale 0
    (Spark allows no negative scale: ``1e3`` is decimal(4,0))."""
    if _BIG_DECIMAL.fullmatch(raw) is None:
        return None
    value = decimal.Decimal(raw)
    digits, exponent = value.as_tuple().digits, int(value.as_tuple().exponent)
    if exponent < 0 or len(digits) + exponent > 38:
        return None
    return value.quantize(decimal.Decimal(1), context=decimal.Context(prec=40))


def _date(raw: str) -> dt.date | None:
    """``raw`` as Spark's partition date formatter (``yyyy-MM-dd``, strict) reads it, or None (a string)."""
    if _DATE.fullmatch(raw) is None:
        return None
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):  # "-2024-01-01", "12024-01-01": Spark's dates, not Python's
        raise ValueError(f"Spark may read {raw!r} as a date of a year Python's dates do not hold (1 to 9999)")
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:  # 2024-02-30, 2024-13-01: Spark's strict formatter refuses it too (a string)
        return None


def _timestamp(raw: str) -> bool:
    """Whether Spark reads ``raw`` as a timestamp (``yyyy-MM-dd HH:mm:ss[.S]`` on the unescaped text: Spark
    writes ``10%3A00%3A00``)."""
    found = _TIMESTAMP.fullmatch(unescape_path_name(raw))
    if found is None:
        return False
    hour, minute, second = (int(found.group(i)) for i in (2, 3, 4))
    try:
        day = _date(found.group(1))
    except ValueError:  # a year Python's dates do not hold: a timestamp all the same (refused)
        return True
    return day is not None and hour < 24 and minute < 60 and second < 60


def _value_type(raw: str) -> pa.DataType:
    """The type Spark infers for one folder value, in Spark's order (PartitioningUtils.inferPartitionColumnValue):
    int, bigint, decimal(p,0), double, timestamp, date, else string; the null folder is null."""
    if _INTEGER.fullmatch(raw):
        number = int(raw)
        if _INT32[0] <= number <= _INT32[1]:
            return pa.int32()
        if _INT64[0] <= number <= _INT64[1]:
            return pa.int64()
    whole = _big_decimal(raw)
    if whole is not None:
        return pa.decimal128(max(len(whole.as_tuple().digits), 1), 0)
    if _java_double(raw) is not None:
        return pa.float64()
    if _timestamp(raw):
        return pa.timestamp("us", "UTC")
    if _date(raw) is not None:
        return pa.date32()
    return pa.null() if raw == HIVE_NULL else pa.string()


def _decimal_digits(t: pa.DataType) -> int:
    """The digits of an integral type as Spark widens it to a decimal (DecimalType.forType)."""
    if pa.types.is_int32(t):
        return 10
    if pa.types.is_int64(t):
        return 20
    return int(t.precision)


def _wider(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """One type for two values of a column (PartitioningUtils.findWiderTypeForPartitionColumn, then
    TypeCoercion.findWiderTypeForTwo): null takes the other, int and bigint widen to bigint or a decimal, int and
    double to double, date and timestamp to timestamp; bigint or a decimal with double, and any other pair, to
    string (no precision lost)."""
    if a == b:
        return a
    if pa.types.is_null(a) or pa.types.is_null(b):
        return b if pa.types.is_null(a) else a
    pair = {a, b}
    if pair == {pa.int32(), pa.int64()}:
        return pa.int64()
    if pair == {pa.int32(), pa.float64()}:
        return pa.float64()
    integral = all(pa.types.is_integer(t) or pa.types.is_decimal(t) for t in pair)
    if integral:
        return pa.decimal128(max(_decimal_digits(a), _decimal_digits(b)), 0)
    if pair == {pa.date32(), pa.timestamp("us", "UTC")}:
        return pa.timestamp("us", "UTC")
    return pa.string()


def partition_column(name: str, raws: Sequence[str | None] | pa.Array | pa.ChunkedArray) -> pa.Array:
    """The values of partition column ``name`` typed as Spark types them, from the text of its folder names
    (``raws``: one per row or per folder, as written in the folder name: ``%xx`` escapes kept; None or
    ``__HIVE_DEFAULT_PARTITION__`` is null).

    Spark (spark.sql.sources.partitionColumnTypeInference.enabled, the default) types each value by itself, then
    takes one type for the column; each value is then read from its text as that type (so ``007`` in an int column
    is 7, in a string column ``007``). An all-null column has Spark's void type (Arrow null). A timestamp column is
    refused: Spark reads the folder's local time in its session's time zone, which the pandas and polars engines
    do not have.

    Raises:
        EngineError: for a timestamp column, or a date Python cannot hold, naming the column.

    Example:
        >>> partition_column("k", ["0", "3000000000", None]).type, partition_column("k", ["007", "1.5"]).to_pylist()
        (DataType(int64), [7.0, 1.5])
        >>> partition_column("d", ["2024-01-01", "__HIVE_DEFAULT_PARTITION__"]).to_pylist()
        [datetime.date(2024, 1, 1), None]
        >>> partition_column("s", ["3000000000", "1.5", "a%2Fb"]).to_pylist()
        ['3000000000', '1.5', 'a/b']
    """
    # Spark's source: sql/core/src/main/scala/org/apache/spark/sql/execution/datasources/PartitioningUtils.scala,
    # inferPartitionColumnValue (each value), resolveTypeConflicts and findWiderTypeForPartitionColumn (the
    # column's type) and castPartValueToDesiredType (each value as that type); alike in Spark 3.5 and 4.x
    if isinstance(raws, pa.ChunkedArray):
        raws = raws.combine_chunks()
    texts_in = raws.cast(pa.string()) if isinstance(raws, pa.Array) else pa.array(raws, pa.string())
    codes = texts_in.dictionary_encode()  # each distinct folder value typed once, however many rows hold it
    texts: list[str | None] = codes.dictionary.to_pylist()
    try:
        column = pa.null()
        for raw in texts:
            column = _wider(column, pa.null() if raw is None else _value_type(raw))
        values = [_typed(raw, column) for raw in texts]
    except ValueError as exc:
        raise EngineError(f"partition column {name!r}: {exc}") from exc
    if pa.types.is_timestamp(column):
        shown = next(unescape_path_name(r) for r in texts if r is not None and _timestamp(r))
        msg = f"partition column {name!r} holds {shown!r}, which Spark reads as a timestamp: the local time of "
        msg += "its session's time zone, which the pandas and polars engines do not have, so they cannot read it "
        msg += "as Spark does: read this input with the spark engine, or write the folders as dates or strings"
        raise EngineError(msg)
    return pa.array(values, column).take(codes.indices)


def _typed(raw: str | None, column: pa.DataType) -> object:
    """One folder value read as the column's type (PartitioningUtils.castPartValueToDesiredType)."""
    if raw is None or raw == HIVE_NULL or pa.types.is_null(column):
        return None
    if pa.types.is_string(column):
        return unescape_path_name(raw)
    if pa.types.is_integer(column):
        return int(raw)
    if pa.types.is_decimal(column):
        return decimal.Decimal(raw).quantize(decimal.Decimal(1), context=decimal.Context(prec=80))
    if pa.types.is_floating(column):
        return _java_double(raw)
    if pa.types.is_date(column):
        return _date(raw)
    return None  # a timestamp column is refused by the caller


def folder_values(file: Path, root: Path) -> list[tuple[str, str]]:
    """The ``(name, value)`` of each ``name=value`` folder between ``root`` and ``file``, as written (escaped).

    Example:
        >>> folder_values(Path("/d/dt=2024-01-01/s=a%2Fb/p.parquet"), Path("/d"))
        [('dt', '2024-01-01'), ('s', 'a%2Fb')]
    """
    pairs = [part.partition("=") for part in file.relative_to(root).parent.parts]
    return [(name, value) for name, sep, value in pairs if sep]


def text_partitioning(files: Sequence[Path], root: Path) -> dict[str, Any]:
    """pyarrow dataset options (``ds.dataset(..., **options)``) reading the partition columns of ``files`` under
    ``root`` as their folder text, names and values as written (no type guessed, no %xx decoded): what
    :func:`typed_partitions` then types as Spark does. No options when the files sit in no partition folder
    (every file sits in the same ones: inputs.check_alike)."""
    import pyarrow.dataset as ds

    names = [name for name, _ in folder_values(files[0], root)] if files else []
    if not names:
        return {}
    schema = pa.schema([(name, pa.string()) for name in names])
    return {"partitioning": ds.HivePartitioning(schema, segment_encoding="none"), "partition_base_dir": str(root)}


def typed_partitions(source: str, table: pa.Table, files: Sequence[Path], root: Path) -> pa.Table:
    """``table`` read with :func:`text_partitioning`, its partition columns (holding their folder text) typed and
    named as Spark reads them (:func:`partition_column`); errors name the input ``source``."""
    for raw, _ in folder_values(files[0], root) if files else []:
        name, at = unescape_path_name(raw), table.schema.get_field_index(raw)
        try:
            table = table.set_column(at, name, partition_column(name, table.column(at)))
        except EngineError as exc:
            raise EngineError(f"input {source!r}: {exc}") from exc
    return table


def partition_columns(source: str, files: Sequence[Path], root: Path, rows: Sequence[int]) -> dict[str, pa.Array]:
    """The partition columns of ``files`` (under ``root``) as Spark reads them, by name, for a table of their
    rows one file after another (``rows[i]`` rows from ``files[i]``); errors name the input ``source``."""
    import numpy as np

    pairs = [folder_values(file, root) for file in files]
    at = pa.array(np.repeat(np.arange(len(files)), np.asarray(rows, dtype=np.int64)))
    columns: dict[str, pa.Array] = {}
    for i, (raw, _) in enumerate(pairs[0] if pairs else []):
        name = unescape_path_name(raw)
        try:
            columns[name] = partition_column(name, [p[i][1] for p in pairs]).take(at)
        except EngineError as exc:
            raise EngineError(f"input {source!r}: {exc}") from exc
    return columns


__all__ = [
    "HIVE_NULL",
    "folder_values",
    "partition_column",
    "partition_columns",
    "text_partitioning",
    "typed_partitions",
    "unescape_path_name",
]
