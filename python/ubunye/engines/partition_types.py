"""Partition columns read from ``name=value`` folder names as Spark reads them (pure functions).

Spark and Databricks write partitioned parquet, csv and json as folders such as ``dt=2024-01-01/k=7``; every
reader turns the folder names back into columns, each guessing a type from the text. pyarrow and polars guess
otherwise than Spark (pyarrow ``k=0`` as int32 and ``dt=2024-01-01`` as a string, polars both as int64 and a date),
so one folder hashed differently on each engine. :func:`partition_column` types a column as Spark does, so the
pandas and polars engines read the folder as the Spark engine reads it (docs/tasks-and-records.md, "A folder inside").
"""

from __future__ import annotations

import calendar
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
# Spark's DateFormatter.defaultPattern "yyyy-MM-dd" (java.time's "uuuu-MM-dd", parsed strictly: two-digit month and
# day; the year's sign rules are in _epoch_day)
_YMD = r"(?P<sign>[+-]?)(?P<year>\d{4,})-(?P<month>\d{2})-(?P<day>\d{2})"
_DATE = re.compile(_YMD)
# Spark's PartitioningUtils.timestampPartitionPattern "yyyy-MM-dd HH:mm:ss[.S]", on the unescaped text: one fraction
# digit at most ("10:00:00.12" is a string in Spark 3.5 to 4.3)
_TIMESTAMP = re.compile(_YMD + r" (?P<hour>\d{2}):(?P<minute>\d{2}):(?P<second>\d{2})(?:\.\d)?")
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
# the first and last days on which Spark's timestamp (microseconds in a long) holds a local time in some session
# zone; on these two, a time beyond it is taken for a timestamp all the same (refused, never misread)
_TIMESTAMP_DAYS = (-106_751_992, 106_751_991)


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


def _big_decimal(raw: str) -> int | None:
    """The precision of the decimal(p,0) Spark's partition inference takes ``raw`` for, or None: a
    java.math.BigDecimal of scale <= 0 (no digit after the point: ``1e3`` and ``1.0E1`` are, ``1.0`` is not), its
    precision that of the value written with scale 0 (Decimal.set: Spark allows no negative scale), at most 38.
    The precision counts the exponent's zeros whatever the digits: ``1e3`` is decimal(4,0), ``0e5`` decimal(6,0).

    Example:
        >>> _big_decimal("0e5"), _big_decimal("00e2"), _big_decimal("0100"), _big_decimal("1.5")
        (6, 3, 3, None)
    """
    if _BIG_DECIMAL.fullmatch(raw) is None:
        return None
    # Python's digits are the BigDecimal's unscaled value without leading zeros (one digit for zero), as Java's
    # precision counts them; Python's exponent is minus the BigDecimal's scale
    parts = decimal.Decimal(raw).as_tuple()
    exponent = int(parts.exponent)
    precision = len(parts.digits) + exponent
    return precision if exponent >= 0 and precision <= 38 else None


def _epoch_day(found: re.Match[str]) -> int | None:
    """The day (since 1970-01-01, proleptic Gregorian, year 0 = 1 BC) of a :data:`_YMD` match as Spark's strict
    ``yyyy-MM-dd`` reads it, or None where Spark reads a string: a sign only on more than four year digits
    (``+12024-01-01``; ``+2024-01-01`` and ``12024-01-01`` are strings), ``-`` on any but zero (``-2024-01-01`` is
    a date, ``-0000-01-01`` a string), and a day of the month. (Measured on Spark 3.5.9, 4.0.5, 4.2.0, 4.3.0.)"""
    sign, digits = found.group("sign"), found.group("year")
    year, month, day = int(sign + digits), int(found.group("month")), int(found.group("day"))
    if (sign == "" and len(digits) > 4) or (sign == "+" and len(digits) == 4) or (sign == "-" and year == 0):
        return None
    if not 1 <= month <= 12 or not 1 <= day <= _MONTH_DAYS[month - 1] + (month == 2 and calendar.isleap(year)):
        return None
    # days from the civil date (H. Hinnant's algorithm): years from March, so a leap day ends its year
    y = year - (month <= 2)
    era, of_era = divmod(y, 400)
    day_of_year = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    return era * 146097 + of_era * 365 + of_era // 4 - of_era // 100 + day_of_year - 719468


def _date(raw: str) -> int | None:
    """The day (since 1970-01-01) Spark's partition inference reads ``raw`` as, or None (not a date): the strict
    formatter (:func:`_epoch_day`), then a cast to date (four to seven year digits, a day within Spark's DateType:
    32 bits, as Arrow's date32). Years Python's dates do not hold are dates all the same (``-2024-01-01``).

    Example:
        >>> _date("2024-01-01"), _date("+02024-01-01"), _date("-0001-12-31"), _date("2024-02-30")
        (19723, 19723, -719529, None)
    """
    found = _DATE.fullmatch(raw)
    if found is None or len(found.group("year")) > 7:
        return None
    day = _epoch_day(found)
    return day if day is not None and _INT32[0] <= day <= _INT32[1] else None


def _timestamp(raw: str) -> bool:
    """Whether Spark reads ``raw`` as a timestamp (``yyyy-MM-dd HH:mm:ss[.S]`` on the unescaped text: Spark
    writes ``10%3A00%3A00``; the year as in :func:`_epoch_day`, at most six digits, within a timestamp's range)."""
    found = _TIMESTAMP.fullmatch(unescape_path_name(raw))
    if found is None or len(found.group("year")) > 6:
        return False
    day = _epoch_day(found)
    hour, minute, second = (int(found.group(key)) for key in ("hour", "minute", "second"))
    in_range = day is not None and _TIMESTAMP_DAYS[0] <= day <= _TIMESTAMP_DAYS[1]
    return in_range and hour < 24 and minute < 60 and second < 60


def _value_type(raw: str) -> pa.DataType:
    """The type Spark infers for one folder value, in Spark's order (PartitioningUtils.inferPartitionColumnValue):
    int, bigint, decimal(p,0), double, timestamp, date, else string; the null folder is null."""
    if _INTEGER.fullmatch(raw):
        number = int(raw)
        if _INT32[0] <= number <= _INT32[1]:
            return pa.int32()
        if _INT64[0] <= number <= _INT64[1]:
            return pa.int64()
    precision = _big_decimal(raw)
    if precision is not None:
        return pa.decimal128(precision, 0)
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
    is 7, in a string column ``007``). An all-null column has Spark's void type (Arrow null). A date column holds
    every day Spark's does, in years Python's dates do not hold too (``-2024-01-01``). A timestamp column is
    refused: Spark reads the folder's local time in its session's time zone, which the pandas and polars engines
    do not have.

    Raises:
        EngineError: for a timestamp column, or an empty value (a folder ``k=``, which Spark refuses), naming the
            column.

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
    if "" in texts:  # Spark's parsePartition asserts: "Empty partition column value in 'k='"
        msg = f"partition column {name!r} has an empty value (a folder named {name + '='!r}), which Spark refuses "
        msg += "to read: no engine reads a value for it (a null partition is __HIVE_DEFAULT_PARTITION__)"
        raise EngineError(msg)
    column = pa.null()
    for raw in texts:
        column = _wider(column, pa.null() if raw is None else _value_type(raw))
    values = [_typed(raw, column) for raw in texts]
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
        return _date(raw)  # days since 1970-01-01, as date32 holds them
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


def refuse_overlap(source: str, columns: Sequence[str], files: Sequence[Path], root: Path) -> None:
    """Raise EngineError when a partition folder of ``files`` (under ``root``) names a column the files hold too
    (``columns``), compared ignoring case as Spark resolves names: Spark reads the folder's value in its place
    and drops the files' column; pyarrow refuses to merge the two or keeps both (``K`` and ``k``), so each engine
    would read another table. Refused, naming both, rather than one engine's choice taken silently.

    Example:
        >>> refuse_overlap("i", ["K", "x"], [Path("/d/k=1/p.parquet")], Path("/d"))
        Traceback (most recent call last):
        ...
        ubunye.exceptions.EngineError: input 'i': the partition folder 'k=1' names column 'k', which the files ...
    """
    held = {name.casefold(): name for name in columns}
    for raw, value in folder_values(files[0], root) if files else []:
        name = unescape_path_name(raw)
        if name.casefold() in held:
            msg = f"input {source!r}: the partition folder {raw + '=' + value!r} names column {name!r}, which the "
            msg += f"files hold too (as {held[name.casefold()]!r}; Spark, whose names ignore case, reads the "
            msg += "folder's value in its place and drops the files' column, other engines keep both or fail): "
            msg += "rename the folder or the column"
            raise EngineError(msg)


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
    "refuse_overlap",
    "text_partitioning",
    "typed_partitions",
    "unescape_path_name",
]
