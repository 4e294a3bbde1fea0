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
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from ubunye.exceptions import EngineError

#: The folder value Spark and Hive write for a null partition value.
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
# A digit as Java's Character.digit(ch, 10) takes it: any Unicode decimal digit of the Basic Multilingual Plane
# ("\u0663" is 3). Python's \d takes those beyond it too, which Java holds as two chars, neither a digit ("\U0001d7cf"
# is a string in Spark). (Every decimal digit Unicode added since Java's and Python's oldest tables lies beyond it.)
_DIGIT = r"[^\D\U00010000-\U0010FFFF]"
# Java's Integer.parseInt / Long.parseLong: a sign and digits, nothing else (no blanks, no "_")
_INTEGER = re.compile(rf"[+-]?{_DIGIT}+")
# java.math.BigDecimal(String): digits with an optional point and an optional exponent
_BIG_DECIMAL = re.compile(rf"[+-]?(?:{_DIGIT}+\.?{_DIGIT}*|\.{_DIGIT}+)(?:[eE][+-]?{_DIGIT}+)?")
# Java's Double.parseDouble, after it trims characters up to U+0020: NaN, Infinity, a decimal number or a hex one,
# with an optional f/F/d/D suffix on numbers (Python's float() takes "inf", "nan" and "1_0", which Java refuses)
_JAVA_DOUBLE = re.compile(
    r"(?P<sign>[+-]?)(?:(?P<special>NaN|Infinity)"
    r"|(?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?"
    r"|(?P<hex>0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)"
)
# Spark's DateFormatter.defaultPattern "yyyy-MM-dd" (java.time's "uuuu-MM-dd", parsed strictly: two-digit month and
# day; the year's sign rules are in _epoch_day). java.time and Spark's cast to date take ASCII digits only:
# "\u0662\u0660\u0662\u0664-01-01" is a string in Spark
_YMD = r"(?P<sign>[+-]?)(?P<year>[0-9]{4,})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
_DATE = re.compile(_YMD)
# Spark's PartitioningUtils.timestampPartitionPattern "yyyy-MM-dd HH:mm:ss[.S]", on the unescaped text: one fraction
# digit at most ("10:00:00.12" is a string in Spark 3.5 to 4.3)
_TIMESTAMP = re.compile(_YMD + r" (?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})(?:\.[0-9])?")
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


def _java_hex(pair: str) -> int:
    """Integer.parseInt(pair, 16), or -1 where it throws: a sign, then digits as Character.digit(ch, 16) takes
    them (Unicode decimal digits of the Basic Multilingual Plane, ASCII and fullwidth a-f/A-F)."""
    sign, digits = (pair[0], pair[1:]) if pair[:1] in ("+", "-") else ("", pair)
    values = [_java_hex_digit(c) for c in digits]
    if not values or min(values) < 0:
        return -1
    value = int("".join(f"{v:x}" for v in values), 16)
    return -value if sign == "-" else value


def _java_hex_digit(c: str) -> int:
    """Character.digit(c, 16), or -1."""
    for first in ("a", "A", "\uff41", "\uff21"):  # ASCII and fullwidth letters
        if 0 <= ord(c) - ord(first) < 6:
            return 10 + ord(c) - ord(first)
    return unicodedata.decimal(c, -1) if ord(c) < 0x10000 else -1


def _unescape_spark35(text: str) -> str:
    """``text`` as Spark 3.5's unescapePathName reads it: each ``%`` and the two chars after it that
    Integer.parseInt(_, 16) takes, to a non-negative code, is that character (``%+1`` is U+0001, ``%\u0663\u0663``
    is ``3``); Spark 4 decodes two ASCII hex digits only, as :func:`unescape_path_name`.

    Example:
        >>> _unescape_spark35("a%+1%41%-1%4"), unescape_path_name("a%+1%41%-1%4")
        ('a\\x01A%-1%4', 'a%+1A%-1%4')
    """
    out, i = [], 0
    while i < len(text):
        code = _java_hex(text[i + 1 : i + 3]) if text[i] == "%" and i + 2 < len(text) else -1
        out.append(chr(code) if code >= 0 else text[i])
        i += 3 if code >= 0 else 1
    return "".join(out)


def _refuse_line_escape(what: str, text: str) -> None:
    """Raise EngineError (starting with ``what``) when Spark 3.5 and Spark 4 read ``text``'s %-escapes
    otherwise: no reading of it is every Spark line's."""
    if _unescape_spark35(text) != unescape_path_name(text):
        msg = f"{what} {text!r}, whose %-escapes Spark 3.5 reads as {_unescape_spark35(text)!r} and Spark 4 as "
        msg += f"{unescape_path_name(text)!r}: the pandas and polars engines cannot read it as every Spark line "
        msg += "does: rename the folder (a % followed by two hex digits 0-9a-f is one character on every line)"
        raise EngineError(msg)


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
        EngineError: naming the column, for a timestamp column, a value Spark refuses (an empty one, a folder
            ``k=``; an int of digits other than 0-9 in a double column, ``k=\u0661`` beside ``k=1.5``) or one
            Spark 3.5 and 4 unescape otherwise (``%+1``).

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
    for raw in texts:
        if raw is not None:
            _refuse_line_escape(f"partition column {name!r} holds", raw)
    column = pa.null()
    for raw in texts:
        column = _wider(column, pa.null() if raw is None else _value_type(raw))
    values = [_typed(raw, column) for raw in texts]
    if pa.types.is_floating(column):  # an int of non-ASCII digits ("\u0661"), which Double.parseDouble refuses
        failed = next((r for r, v in zip(texts, values, strict=True) if r not in (None, HIVE_NULL) and v is None), None)
        if failed is not None:
            msg = f"partition column {name!r} holds {failed!r} beside doubles, which Spark fails to read "
            msg += f"(INVALID_PARTITION_VALUE: Double.parseDouble refuses {failed!r}, an int of digits other than "
            msg += "0-9): rename the folder with digits 0-9"
            raise EngineError(msg)
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
    (every file sits in the same ones: inputs.check_alike).

    Example:
        >>> options = text_partitioning([Path("/d/dt=2024-01-01/k=7/p.parquet")], Path("/d"))
        >>> options["partitioning"].schema.types, options["partition_base_dir"]
        ([DataType(string), DataType(string)], '/d')
        >>> text_partitioning([Path("/d/p.parquet")], Path("/d"))
        {}
    """
    import pyarrow.dataset as ds

    names = [name for name, _ in folder_values(files[0], root)] if files else []
    if not names:
        return {}
    schema = pa.schema([(name, pa.string()) for name in names])
    return {"partitioning": ds.HivePartitioning(schema, segment_encoding="none"), "partition_base_dir": str(root)}


def typed_partitions(source: str, table: pa.Table, files: Sequence[Path], root: Path) -> pa.Table:
    """``table`` read with :func:`text_partitioning`, its partition columns (holding their folder text) typed and
    named as Spark reads them (:func:`partition_column`); errors name the input ``source``.

    Example:
        >>> read = pa.table({"v": [1, 2], "k": ["007", "3000000000"], "s%2Fx": ["a%2Fb", "c"]})
        >>> files = [Path("/d/k=007/s%2Fx=a%2Fb/p.parquet"), Path("/d/k=3000000000/s%2Fx=c/q.parquet")]
        >>> typed_partitions("i", read, files, Path("/d")).to_pydict()
        {'v': [1, 2], 'k': [7, 3000000000], 's/x': ['a/b', 'c']}
    """
    for raw, _ in folder_values(files[0], root) if files else []:
        name, at = unescape_path_name(raw), table.schema.get_field_index(raw)
        try:
            table = table.set_column(at, name, partition_column(name, table.column(at)))
        except EngineError as exc:
            raise EngineError(f"input {source!r}: {exc}") from exc
    return table


def _refuse_layout(source: str, files: Sequence[Path], root: Path) -> None:
    """Raise EngineError for partition folders Spark refuses to read: a folder with no column name (``=1``:
    EMPTY_PARTITION_COLUMN_NAME) or two naming one column (``k=1/k=2``, ``K=1/k=2``: COLUMN_ALREADY_EXISTS, names
    compared in lower case as Spark's are), or a name Spark 3.5 and 4 unescape otherwise. pyarrow and polars read
    them (or fail naming no folder), so a table Spark refuses would be hashed."""
    seen: dict[str, str] = {}
    for raw, value in folder_values(files[0], root) if files else []:
        folder, name = f"{raw}={value}", unescape_path_name(raw)
        if not name:
            msg = f"input {source!r}: the partition folder {folder!r} names no column (nothing before '='), which "
            msg += "Spark refuses to read (EMPTY_PARTITION_COLUMN_NAME): rename it name=value"
            raise EngineError(msg)
        _refuse_line_escape(f"input {source!r}: the partition folder {folder!r} names column", raw)
        # Spark's SchemaUtils.checkColumnNameDuplication: names in lower case (spark.sql.caseSensitive off)
        if name.lower() in seen:
            first = seen[name.lower()]
            named = unescape_path_name(first.partition("=")[0])
            both = f"{name!r}" if named == name else f"{named!r} and {name!r}, as Spark's names ignore case"
            msg = f"input {source!r}: the partition folders {first!r} and {folder!r} name one column ({both}), "
            msg += "which Spark refuses to read (COLUMN_ALREADY_EXISTS): rename one of them"
            raise EngineError(msg)
        seen[name.lower()] = folder


def refuse_overlap(source: str, columns: Sequence[str], files: Sequence[Path], root: Path) -> None:
    """Raise EngineError when a partition folder of ``files`` (under ``root``) names a column the files hold too
    (``columns``), compared ignoring case as Spark resolves names: Spark reads the folder's value in its place
    and drops the files' column; pyarrow refuses to merge the two or keeps both (``K`` and ``k``), so each engine
    would read another table. Refused, naming both, rather than one engine's choice taken silently. Folders Spark
    refuses to read are refused first: one with no column name (``=1``), two naming one column (``k=1/K=2``).

    Example:
        >>> refuse_overlap("i", ["K", "x"], [Path("/d/k=1/p.parquet")], Path("/d"))
        Traceback (most recent call last):
        ...
        ubunye.exceptions.EngineError: input 'i': the partition folder 'k=1' names column 'k', which the files ...
        >>> refuse_overlap("i", ["x"], [Path("/d/K=1/k=2/p.parquet")], Path("/d"))
        Traceback (most recent call last):
        ...
        ubunye.exceptions.EngineError: input 'i': the partition folders 'K=1' and 'k=2' name one column ('K' and ...
    """
    _refuse_layout(source, files, root)
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
    rows one file after another (``rows[i]`` rows from ``files[i]``); errors name the input ``source``.

    Example:
        >>> files = [Path("/d/dt=2024-01-01/k=1/a.parquet"), Path("/d/dt=2024-01-02/k=1.5/b.parquet")]
        >>> columns = partition_columns("i", files, Path("/d"), [2, 1])
        >>> columns["dt"].to_pylist(), columns["k"].to_pylist()
        ([datetime.date(2024, 1, 1), datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)], [1.0, 1.0, 1.5])
    """
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
