"""Parquet files the pandas and polars engines would read as other values than Spark, found from their footers.

- Spark 2.x, and Spark 3.x writing with ``spark.sql.parquet.datetimeRebaseModeInWrite`` (or
  ``int96RebaseModeInWrite``) ``LEGACY``, store dates before 1582-10-15 and timestamps before 1900 in the hybrid
  Julian + Gregorian calendar, and say so in the footer (``org.apache.spark.legacyDateTime``,
  ``org.apache.spark.legacyINT96``, or an ``org.apache.spark.version`` before 3.0.0 / 3.1.0 for INT96). Spark
  rebases such values on read; pyarrow and polars read the stored day as a proleptic Gregorian one, another day
  (``DATE'1000-01-01'`` reads as 1000-01-06). A timestamp's rebase depends on the writer's time zone, so these
  engines do not rebase: :func:`refuse_legacy_dates` refuses a file holding such a value, naming it. Values after
  those dates are stored alike in both calendars, so a legacy file without them is read as it is.
- Files of one input must be alike in column names (``check_alike``); a column stored as an unsigned integer or a
  duration in one file and as another type in the first would be cast to the first file's type by pyarrow, or
  refused by polars without a file named: :func:`refuse_unsigned_drift` names the file, column and type (rows-v1
  has no unsigned integers nor durations, docs/rows-v1.md section 11).

Both read footers only, except that a legacy file's column whose footer statistics lack a minimum (INT96 has none)
is read to find its smallest value.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ubunye.engines.parquet_leaves import leaf_arrays, leaf_types, unsigned_or_duration
from ubunye.exceptions import EngineError

__all__ = [
    "LegacyCalendarError",
    "legacy_footer",
    "refuse_legacy_dates",
    "refuse_legacy_file",
    "refuse_unsigned_drift",
    "stored_alike_from",
]


class LegacyCalendarError(EngineError):
    """A file stores a date or timestamp in Spark's legacy hybrid calendar that pyarrow and polars would read as
    another day (:func:`refuse_legacy_file`): the rows read would be wrong, so no hash of them may stand in."""


_VERSION = b"org.apache.spark.version"
_LEGACY_DATETIME = b"org.apache.spark.legacyDateTime"
_LEGACY_INT96 = b"org.apache.spark.legacyINT96"

#: 1582-10-15, the first Gregorian day, in days since 1970-01-01: stored days before it are Julian in a legacy file.
_FIRST_GREGORIAN_DAY = (dt.date(1582, 10, 15) - dt.date(1970, 1, 1)).days
#: Spark rebases a legacy timestamp before 1900-01-01 in the writer's zone (java.util.TimeZone has no history
#: before 1900, java.time has); one day later in UTC covers every zone's offset.
_LAST_REBASED_INSTANT = dt.datetime(1900, 1, 2, tzinfo=dt.timezone.utc)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_PER_SECOND = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _version(text: bytes) -> tuple[int, ...]:
    """``b"3.5.9"`` as ``(3, 5, 9)``; an unparsable version as ``()`` (older than any)."""
    parts: list[int] = []
    for part in text.decode("utf-8", "replace").split("-")[0].split("."):
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts)


def _legacy(metadata: dict[bytes, bytes]) -> tuple[bool, bool]:
    """Whether a file's dates and INT64 timestamps, and its INT96 timestamps, are in the hybrid calendar, as
    Spark's DataSourceUtils decides it on read (the legacy keys, or a Spark version before 3.0.0 / 3.1.0)."""
    version = metadata.get(_VERSION)
    old = _version(version) if version is not None else None
    dates = _LEGACY_DATETIME in metadata or (old is not None and old < (3, 0, 0))
    int96 = _LEGACY_INT96 in metadata or (old is not None and old < (3, 1, 0))
    return dates, int96


def legacy_footer(metadata: Mapping[bytes, bytes] | None) -> bool:
    """Whether a Parquet footer's key-value ``metadata`` says Spark wrote some dates or timestamps in its legacy
    hybrid calendar (its legacy keys, or a Spark version before 3.0.0 / 3.1.0): only such a file needs
    :func:`refuse_legacy_file`'s look at its values.

    Example:
        >>> old, new = {b"org.apache.spark.version": b"2.4.8"}, {b"org.apache.spark.version": b"3.5.1"}
        >>> legacy_footer(old), legacy_footer(new), legacy_footer({b"org.apache.spark.legacyDateTime": b""})
        (True, False, True)
    """
    return any(_legacy(dict(metadata or {})))


def stored_alike_from(kind: pa.DataType) -> dt.date | dt.datetime | None:
    """The first value of an Arrow ``kind`` that a legacy file stores alike in both calendars (values from it on
    read as Spark reads them): 1582-10-15 for a date, 1900-01-02 UTC for a timestamp; None for any other type. A
    timestamp without a zone counts too: Spark writes it as INT64 and never rebases it, but one stored as INT96
    (by another writer) is rebased, and only the file's footer tells which (:func:`refuse_legacy_file`).

    Example:
        >>> stored_alike_from(pa.date32()), stored_alike_from(pa.string()) is None
        (datetime.date(1582, 10, 15), True)
    """
    if pa.types.is_date(kind):
        return dt.date(1970, 1, 1) + dt.timedelta(days=_FIRST_GREGORIAN_DAY)
    if pa.types.is_timestamp(kind):
        return _LAST_REBASED_INSTANT
    return None


def _julian(days: int) -> str:
    """The hybrid calendar's label of ``days`` since 1970-01-01 (Julian before 1582-10-15, Gregorian after): the
    date Spark reads a legacy file's stored day as."""
    if days >= _FIRST_GREGORIAN_DAY:
        return (dt.date(1970, 1, 1) + dt.timedelta(days=days)).isoformat()
    # Julian calendar from the Julian day number (Richards' algorithm), which holds for years before 1 too
    c = days + 2440588 + 32082
    d = (4 * c + 3) // 1461
    e = c - 1461 * d // 4
    m = (5 * e + 2) // 153
    day, month, year = e - (153 * m + 2) // 5 + 1, m + 3 - 12 * (m // 10), d - 4800 + m // 10
    return f"{year:04d}-{month:02d}-{day:02d}" if year >= 0 else f"-{-year:04d}-{month:02d}-{day:02d}"


def _described(kind: str, value: int, unit: str) -> str:
    """A stored value in words: a date as the hybrid calendar's day Spark reads; a timestamp as its UTC time of
    day on that day (Spark's own reading also shifts by the writer's zone before 1900)."""
    if kind == "date":
        return f"date {_julian(value)} (stored as day {value} since 1970-01-01)"
    per_day = 86_400 * _PER_SECOND[unit]
    days, rest = divmod(value, per_day)
    clock = (dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=rest * 1_000_000 // _PER_SECOND[unit])).time()
    return f"timestamp {_julian(days)} {clock.isoformat()} UTC (stored as {value} {unit} since 1970)"


def _kind(column: pq.ColumnSchema, dates: bool, int96: bool) -> tuple[str, int, str] | None:
    """What a leaf column of a legacy file is rebased as by Spark: ``(kind, first value not rebased, unit)``,
    or None when Spark reads it as stored (a timestamp without a zone, Spark's ``timestamp_ntz``, is never
    rebased; nor an integer)."""
    if column.physical_type == "INT96":
        seconds = int((_LAST_REBASED_INSTANT - _EPOCH).total_seconds())
        return ("timestamp", seconds * _PER_SECOND["us"], "us") if int96 else None
    if not dates:
        return None
    logical = column.logical_type.type
    if column.physical_type == "INT32" and (logical == "DATE" or column.converted_type == "DATE"):
        return "date", _FIRST_GREGORIAN_DAY, "days"
    if column.physical_type != "INT64":
        return None
    if logical == "TIMESTAMP":
        text = column.logical_type.to_json()
        if '"isAdjustedToUTC":true' not in text.replace(" ", ""):
            return None
        unit = "ms" if "milli" in text else "ns" if "nano" in text else "us"
    elif column.converted_type in ("TIMESTAMP_MICROS", "TIMESTAMP_MILLIS"):  # Spark 2.x: instants
        unit = "ms" if column.converted_type == "TIMESTAMP_MILLIS" else "us"
    else:
        return None
    seconds = int((_LAST_REBASED_INSTANT - _EPOCH).total_seconds())
    return "timestamp", seconds * _PER_SECOND[unit], unit


def _stored_minimum(file: pq.ParquetFile, index: int) -> int | None:
    """The smallest value stored in leaf column ``index`` of ``file`` (as a raw integer in its unit), from the
    row groups' statistics, or else by reading its top-level column (INT96 as microseconds); None if all null."""
    metadata = file.metadata
    found: list[int] = []
    for group in range(metadata.num_row_groups):
        stats = metadata.row_group(group).column(index).statistics
        if stats is None or not stats.has_min_max:
            if stats is not None and stats.has_null_count and stats.null_count == stats.num_values:
                continue  # no value in this row group
            return _read_minimum(file, index)
        found.append(int(stats.min_raw))
    return min(found, default=None)


def _read_minimum(file: pq.ParquetFile, index: int) -> int | None:
    """:func:`_stored_minimum` by reading the values: the top-level column holding leaf ``index``, its leaves
    walked in parquet's order to that one."""
    first = 0
    for top in file.schema_arrow:  # its leaves are parquet's next ones (a name may hold a dot: not split)
        count = len(leaf_types(top.type))
        if index < first + count:
            break
        first += count
    table = file.read(columns=[top.name])
    least: int | None = None
    for chunk in table.column(0).chunks:
        leaf = leaf_arrays(chunk)[index - first]
        storage = leaf.cast(pa.int32() if pa.types.is_date32(leaf.type) else pa.int64())
        low = pc.min(storage).as_py()
        if low is not None:
            least = low if least is None else min(least, low)
    return least


def _why_legacy(metadata: dict[bytes, bytes], int96: bool) -> str:
    """The footer entry that makes Spark rebase a column: its legacy key, or the Spark version that wrote it."""
    key = _LEGACY_INT96 if int96 else _LEGACY_DATETIME
    if key in metadata:
        return f"footer key {key.decode()}"
    return f"written by Spark {metadata.get(_VERSION, b'?').decode('utf-8', 'replace')}"


def refuse_legacy_file(what: str, path: str, file: pq.ParquetFile) -> None:
    """Raise EngineError naming ``what`` (an input, a Delta table), the file at ``path``, the column and the
    value when ``file`` (opened with INT96 in microseconds) stores a date or timestamp in Spark's legacy hybrid
    calendar that pyarrow and polars would read as another day (see the module's docstring). A file without
    Spark's legacy keys or an old Spark version is only looked at in its footer (:func:`legacy_footer`).

    Raises:
        LegacyCalendarError: (an EngineError) naming ``what``, ``path``, the column and the value.
    """
    metadata = file.metadata.metadata or {}
    dates, int96 = _legacy(metadata)
    if not (dates or int96):
        return
    schema = file.metadata.schema
    for index in range(len(schema)):
        column = schema.column(index)
        rebased = _kind(column, dates, int96)
        if rebased is None:
            continue
        kind, first, unit = rebased
        low = _stored_minimum(file, index)
        if low is None or low >= first:  # stored alike in both calendars: read as Spark reads it
            continue
        why = _why_legacy(metadata, column.physical_type == "INT96")
        msg = f"{what}: {path}: column {column.path!r} holds {_described(kind, low, unit)} in Spark's legacy "
        msg += f"hybrid calendar ({why}), which Spark rebases on read and pyarrow and polars would read as "
        msg += "another day: read it with the Spark engine, or rewrite it with Spark's "
        msg += "spark.sql.parquet.datetimeRebaseModeInWrite (int96RebaseModeInWrite for INT96) = CORRECTED"
        raise LegacyCalendarError(msg)


def refuse_legacy_dates(name: str, files: Iterable[Path | str]) -> None:
    """:func:`refuse_legacy_file` for each local parquet file of input ``name``.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "part-0.parquet"
        >>> table = pa.table({"d": pa.array([-354280], pa.int32()).cast(pa.date32())})
        >>> # as Spark 3.5 writes with datetimeRebaseModeInWrite LEGACY (it reads the legacy key beside its version)
        >>> footer = {"org.apache.spark.version": "3.5.1", "org.apache.spark.legacyDateTime": ""}
        >>> pq.write_table(table.replace_schema_metadata(footer), path)
        >>> refuse_legacy_dates("i", [path])
        Traceback (most recent call last):
        ubunye.engines.legacy_dates.LegacyCalendarError: input 'i': .../part-0.parquet: column 'd' holds date ...
    """
    for path in files:
        refuse_legacy_file(f"input {name!r}", str(path), pq.ParquetFile(path, coerce_int96_timestamp_unit="us"))


def refuse_unsigned_drift(name: str, schemas: Sequence[tuple[str, pa.Schema]]) -> None:
    """Raise EngineError naming the file, column and type when a parquet file of input ``name`` stores a column
    whose type differs from the first file's, either holding an unsigned integer or a duration: pyarrow would cast
    it to the first file's type silently (polars refuses it naming no file), and rows-v1 hashes neither type
    (docs/rows-v1.md section 11). ``schemas``: each file's ``(name as shown, Arrow schema from its footer)``, the
    first file first, read by the caller from wherever the files are (a local folder, a URL's store); the first
    file's own unsigned column is refused when hashed.

    Example:
        >>> first = pa.schema([("v", pa.int64())])
        >>> refuse_unsigned_drift("i", [("part-0.parquet", first), ("part-1.parquet", pa.schema([("v", pa.uint64())]))])
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'i': part-1.parquet: column 'v' is uint64 where part-0.parquet has ...
    """
    if len(schemas) < 2:
        return
    first_file, first = schemas[0]
    for file, schema in schemas[1:]:
        for field in schema:
            index = first.get_field_index(field.name)
            theirs = first.field(index).type if index >= 0 else None
            if theirs is None or theirs == field.type:
                continue
            if unsigned_or_duration(field.type, field.name) or unsigned_or_duration(theirs, field.name):
                msg = f"input {name!r}: {file}: column {field.name!r} is {field.type} where {first_file} has it as "
                msg += f"{theirs}: rows-v1 has no unsigned integers nor durations (docs/rows-v1.md section 11), and "
                msg += "one would be read as the other's type; cast the column to one signed type in every file"
                raise EngineError(msg)
