"""Dates and timestamps as rows-v1 writes them: section 5.3 of docs/rows-v1.md.

Days since the epoch become proleptic Gregorian dates with integer arithmetic on whole arrays
(H. Hinnant's civil_from_days), so every year an engine can hold is written, not only 1..9999.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ubunye.exceptions import HashError

_US_PER_DAY = 86_400_000_000
_US_PER_UNIT = {"s": 1_000_000, "ms": 1_000, "us": 1}


def _civil(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    z = days.astype(np.int64) + 719_468
    era = np.floor_divide(z, 146_097)
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year, month, day


def _pad(values: np.ndarray, width: int) -> pa.Array:
    return pc.utf8_lpad(pc.cast(pa.array(values), pa.string()), width=width, padding="0")


def _year_text(year: np.ndarray) -> pa.Array:
    text = _pad(year, 4)
    if ((year < 0) | (year > 9999)).any():
        # java.time.LocalDate: '+' above 9999, '-' and at least four digits below 0.
        neg = pc.binary_join_element_wise("-", _pad(-year, 4), "")
        big = pc.binary_join_element_wise("+", pc.cast(pa.array(year), pa.string()), "")
        text = pc.if_else(pa.array(year < 0), neg, pc.if_else(pa.array(year > 9999), big, text))
    return text


def _digits(out: np.ndarray, col: int, values: np.ndarray, width: int) -> None:
    """Write ``values`` as ``width`` zero-padded ASCII digits into columns col.. of a byte matrix."""
    v = values.astype(np.int64)
    for k in range(width - 1, -1, -1):
        out[:, col + k] = 48 + v % 10
        v = v // 10


def _four_digit_years(year: np.ndarray) -> bool:
    return bool(len(year) == 0 or (year.min() >= 0 and year.max() <= 9999))


def _date_rows(days: np.ndarray, before: str = "", after: str = "") -> tuple[np.ndarray, np.ndarray | None] | None:
    """A table of ``before + yyyy-MM-dd + after`` texts (an (m, width) byte matrix) and the row of each day in it
    (None: row i is day i), or None if a year falls outside 0..9999.

    Columns of dates span few distinct days: when the span is no longer than the column, each day of the span
    is written once into the table, and the constant texts with it.
    """
    head, tail = before.encode("utf-8"), after.encode("utf-8")
    width = len(head) + 10 + len(tail)
    if len(days) == 0:
        return np.empty((0, width), dtype=np.uint8), None
    lo, hi = int(days.min()), int(days.max())
    span = np.arange(lo, hi + 1, dtype=np.int64) if hi - lo < max(len(days), 4096) else days
    year, month, day = _civil(span)
    if not _four_digit_years(year):
        return None
    table = np.empty((len(span), width), dtype=np.uint8)
    table[:] = np.frombuffer(head + b"0000-00-00" + tail, dtype=np.uint8)
    at = len(head)
    _digits(table, at, year, 4)
    _digits(table, at + 5, month, 2)
    _digits(table, at + 8, day, 2)
    return table, None if span is days else days - lo


def _date_block(days: np.ndarray, before: str = "", after: str = "") -> np.ndarray | None:
    """``before + yyyy-MM-dd + after`` of each day as an (n, width) byte matrix, or None if a year falls outside
    0..9999 (gathering whole rows with the constant texts costs less than placing narrow blocks side by side)."""
    rows = _date_rows(days, before, after)
    if rows is None:
        return None
    table, index = rows
    return table if index is None else np.take(table, index, axis=0)


def _field(out: np.ndarray, at: int, dtype: type[np.unsignedinteger]) -> np.ndarray:
    """Bytes ``at``.. of every row of a byte matrix as one native integer of ``dtype`` each (unaligned: numpy
    reads and writes those too)."""
    n, width = out.shape
    view: np.ndarray = np.ndarray(shape=(n,), dtype=dtype, buffer=out, offset=at, strides=(width,))
    return view


_WORDS: tuple[tuple[int, type[np.unsignedinteger]], ...] = (
    (8, np.uint64),
    (4, np.uint32),
    (2, np.uint16),
    (1, np.uint8),
)


def _as_words(table: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """The columns of a byte table as runs of 8, 4, 2 and 1 bytes, each read as one native integer per row:
    ``(first byte, integers)``."""
    out, k, width = [], 0, table.shape[1]
    for size, dtype in _WORDS:
        while width - k >= size:
            out.append((k, np.ascontiguousarray(table[:, k : k + size]).view(dtype).ravel()))
            k += size
    return out


def _gather(out: np.ndarray, at: int, words: list[tuple[int, np.ndarray]], index: np.ndarray | None) -> None:
    """Write row ``index[i]`` of a table (:func:`_as_words`) into bytes ``at``.. of row i of ``out``: gathers of
    whole integers cost a fraction of numpy's gathers of narrow byte rows placed side by side."""
    for k, column in words:
        _field(out, at + k, column.dtype.type)[:] = column if index is None else column[index]


def _table(kind: str) -> np.ndarray:
    """Byte tables built once: every ``HH:mm:ss`` of a day (86,400 x 8) and every ``000``..``999`` (1,000 x 3)."""
    if kind not in _TABLES:
        if kind == "clock":
            secs = np.arange(86_400)
            t = np.empty((86_400, 8), dtype=np.uint8)
            t[:] = np.frombuffer(b"00:00:00", dtype=np.uint8)
            _digits(t, 0, secs // 3600, 2)
            _digits(t, 3, secs // 60 % 60, 2)
            _digits(t, 6, secs % 60, 2)
        else:
            t = np.empty((1000, 3), dtype=np.uint8)
            _digits(t, 0, np.arange(1000), 3)
        _TABLES[kind] = t
    return _TABLES[kind]


_TABLES: dict[str, np.ndarray] = {}
_TABLE_WORDS: dict[str, list[tuple[int, np.ndarray]]] = {}


def _table_words(kind: str) -> list[tuple[int, np.ndarray]]:
    """:func:`_table` as :func:`_as_words` reads it, built once."""
    if kind not in _TABLE_WORDS:
        _TABLE_WORDS[kind] = _as_words(_table(kind))
    return _TABLE_WORDS[kind]


def _matrix_text(blocks: list[np.ndarray]) -> pa.Array:
    """Rows of side-by-side byte blocks as an Arrow string array (one copy, no per-row work)."""
    out = np.ascontiguousarray(blocks[0] if len(blocks) == 1 else np.hstack(blocks))
    n, width = out.shape
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(out.reshape(-1)))


def _date_text(days: np.ndarray) -> pa.Array:
    year, month, day = _civil(days)
    return pc.binary_join_element_wise(_year_text(year), _pad(month, 2), _pad(day, 2), "-")


#: Writes a column's texts with a constant text before and after each (``prefix + text + suffix``), in the pass
#: that writes the texts; null slots stay null.
Writer = Callable[[str, str], pa.Array]


def _nulls_kept(arr: pa.Array, text: pa.Array) -> pa.Array:
    return text if arr.null_count == 0 else pc.if_else(arr.is_valid(), text, pa.nulls(len(arr), pa.string()))


_MS_PER_DAY = 86_400_000


def _days(arr: pa.Array, path: str) -> np.ndarray:
    """Days since the epoch of each slot (0 where null). A date64 is milliseconds at a midnight (Arrow's format):
    one that is not is a HashError naming the row, never a day guessed by rounding."""
    if pa.types.is_date64(arr.type):
        ms = arr.cast(pa.int64()).fill_null(0).to_numpy()
        whole = ms // _MS_PER_DAY
        odd = np.flatnonzero((ms % _MS_PER_DAY != 0) | (whole < -(2**31)) | (whole >= 2**31))
        if len(odd):
            i = int(odd[0])
            why = "not a midnight, so not a date" if ms[i] % _MS_PER_DAY else "beyond a 32-bit count of days"
            msg = (
                f"rows-v1 cannot hash column {path!r} of type {arr.type}: row {i} ({ms[i]} ms since the epoch) is "
                f"{why} (Arrow's date64 holds whole days in milliseconds, rows-v1 dates are date32's; docs/rows-v1.md "
                "section 5.3)"
            )
            raise HashError(msg)
        days: np.ndarray = whole.astype(np.int32)
        return days
    days = pc.cast(arr, pa.date32()).cast(pa.int32()).fill_null(0).to_numpy()
    return days


def date_writer(arr: pa.Array, path: str) -> Writer:
    """:func:`format_dates` with a prefix and suffix written in the same pass (a member of the row's object)."""
    days = _days(arr, path)

    def write(prefix: str, suffix: str) -> pa.Array:
        block = _date_block(days, prefix + '"', '"' + suffix)
        if block is not None:
            text = _matrix_text([block])
        else:
            text = pc.binary_join_element_wise(prefix + '"', _date_text(days), '"' + suffix, "")
        return _nulls_kept(arr, text)

    return write


def format_dates(arr: pa.Array, path: str = "") -> pa.Array:
    """rows-v1 text (quoted) of a date32/date64 array; nulls stay null.

    Example:
        >>> import pyarrow as pa, datetime as dt
        >>> format_dates(pa.array([dt.date(2024, 2, 29)])).to_pylist()
        ['"2024-02-29"']
    """
    return date_writer(arr, path)("", "")


def _micros(arr: pa.Array, path: str) -> np.ndarray:
    """Microseconds since the epoch of each slot (0 where null); a HashError naming the column when a
    nanosecond value is not a whole microsecond."""
    t = arr.type
    raw: np.ndarray = arr.cast(pa.int64()).fill_null(0).to_numpy()
    if t.unit == "us":
        return raw
    if t.unit != "ns":
        # Seconds and milliseconds far from the epoch have no microsecond count in 64 bits (Spark's range): numpy's
        # product would wrap to another instant.
        # Two comparisons, not np.abs: the absolute value of -2**63 wraps to itself (and its product to 0, the epoch).
        limit = (2**63 - 1) // _US_PER_UNIT[t.unit]
        far = ((raw > limit) | (raw < -limit)) & arr.is_valid().to_numpy(zero_copy_only=False)
        if far.any():
            i = int(np.flatnonzero(far)[0])
            msg = (
                f"rows-v1 cannot hash column {path!r} of type {t}: row {i} ({raw[i]} {t.unit} since the epoch) is "
                "beyond the range of rows-v1 timestamps, a signed 64-bit count of microseconds (docs/rows-v1.md "
                "section 5.3)"
            )
            raise HashError(msg)
        return raw * _US_PER_UNIT[t.unit]
    rem = np.remainder(raw, 1000)
    bad = (rem != 0) & arr.is_valid().to_numpy(zero_copy_only=False)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        msg = (
            f"rows-v1 cannot hash column {path!r} of type {t}: row {i} has a non-zero sub-microsecond part "
            f"({arr[i]}); rows-v1 timestamps have microsecond precision (docs/rows-v1.md section 5.3). "
            "Floor the column first, e.g. series.dt.floor('us')."
        )
        raise HashError(msg)
    return np.asarray(np.floor_divide(raw, 1000))


def timestamp_writer(arr: pa.Array, path: str) -> Writer:
    """:func:`format_timestamps` with a prefix and suffix written in the same pass (a member of the row's object).
    The values are checked here, before anything is written: an error names the column as soon as it is met."""
    micros = _micros(arr, path)
    zone = 'Z"' if arr.type.tz is not None else '"'

    def write(prefix: str, suffix: str) -> pa.Array:
        days = np.floor_divide(micros, _US_PER_DAY)
        tod = micros - days * _US_PER_DAY
        secs, frac = np.divmod(tod, 1_000_000)
        dates = _date_rows(days)
        if len(micros) == 0:
            text = pa.array([], pa.string())
        elif dates is not None:
            # Every row is one template, ``prefix"yyyy-MM-ddTHH:mm:ss.ffffffZ"suffix``, with the variable parts
            # gathered into it from tables, a whole integer at a time.
            head = (prefix + '"').encode("utf-8")
            template = head + b"0000-00-00T00:00:00.000000" + (zone + suffix).encode("utf-8")
            out = np.empty((len(micros), len(template)), dtype=np.uint8)
            out[:] = np.frombuffer(template, dtype=np.uint8)
            at = len(head)
            _gather(out, at, _as_words(dates[0]), dates[1])
            _gather(out, at + 11, _table_words("clock"), secs)
            micro3 = _table_words("micro3")
            milli, micro = np.divmod(frac, 1000)
            _gather(out, at + 20, micro3, milli)
            _gather(out, at + 23, micro3, micro)
            text = _matrix_text([out])
        else:
            hh, rest = np.divmod(secs, 3600)
            mm, ss = np.divmod(rest, 60)
            clock = pc.binary_join_element_wise(_pad(hh, 2), _pad(mm, 2), _pad(ss, 2), ":")
            text = pc.binary_join_element_wise(
                prefix + '"', _date_text(days), "T", clock, ".", _pad(frac, 6), zone + suffix, ""
            )
        return _nulls_kept(arr, text)

    return write


def format_timestamps(arr: pa.Array, path: str) -> pa.Array:
    """rows-v1 text (quoted) of a timestamp array: UTC with ``Z`` if it has a zone, wall clock if not.

    Example:
        >>> import pyarrow as pa, datetime as dt
        >>> format_timestamps(pa.array([dt.datetime(2024, 1, 1, 12)], pa.timestamp("us")), "t").to_pylist()
        ['"2024-01-01T12:00:00.000000"']
    """
    return timestamp_writer(arr, path)("", "")
