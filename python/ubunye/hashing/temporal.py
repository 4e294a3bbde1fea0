"""Dates and timestamps as rows-v1 writes them: section 5.3 of docs/rows-v1.md.

Days since the epoch become proleptic Gregorian dates with integer arithmetic on whole arrays
(H. Hinnant's civil_from_days), so every year an engine can hold is written, not only 1..9999.
"""

from __future__ import annotations

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


def _date_block(days: np.ndarray) -> np.ndarray | None:
    """``yyyy-MM-dd`` of each day as an (n, 10) byte matrix, or None if a year falls outside 0..9999.

    Columns of dates span few distinct days: when the span is no longer than the column, each day of the span
    is written once into a table and the rows are gathered from it.
    """
    if len(days) == 0:
        return np.empty((0, 10), dtype=np.uint8)
    lo, hi = int(days.min()), int(days.max())
    span = np.arange(lo, hi + 1, dtype=np.int64) if hi - lo < max(len(days), 4096) else days
    year, month, day = _civil(span)
    if not _four_digit_years(year):
        return None
    table = np.empty((len(span), 10), dtype=np.uint8)
    table[:] = np.frombuffer(b"0000-00-00", dtype=np.uint8)
    _digits(table, 0, year, 4)
    _digits(table, 5, month, 2)
    _digits(table, 8, day, 2)
    return table if span is days else np.take(table, days - lo, axis=0)


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


def _const(text: str, n: int) -> np.ndarray:
    return np.broadcast_to(np.frombuffer(text.encode("ascii"), dtype=np.uint8), (n, len(text)))


def _matrix_text(blocks: list[np.ndarray]) -> pa.Array:
    """Rows of side-by-side byte blocks as an Arrow string array (one copy, no per-row work)."""
    out = np.ascontiguousarray(np.hstack(blocks))
    n, width = out.shape
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(out.reshape(-1)))


def _date_text(days: np.ndarray) -> pa.Array:
    year, month, day = _civil(days)
    return pc.binary_join_element_wise(_year_text(year), _pad(month, 2), _pad(day, 2), "-")


def format_dates(arr: pa.Array) -> pa.Array:
    """rows-v1 text (quoted) of a date32/date64 array; nulls stay null.

    Example:
        >>> import pyarrow as pa, datetime as dt
        >>> format_dates(pa.array([dt.date(2024, 2, 29)])).to_pylist()
        ['"2024-02-29"']
    """
    days = pc.cast(arr, pa.date32()).cast(pa.int32()).fill_null(0).to_numpy()
    block = _date_block(days)
    if block is not None:
        text = _matrix_text([_const('"', len(days)), block, _const('"', len(days))])
    else:
        text = pc.binary_join_element_wise('"', _date_text(days), '"', "")
    return text if arr.null_count == 0 else pc.if_else(arr.is_valid(), text, pa.nulls(len(arr), pa.string()))


def format_timestamps(arr: pa.Array, path: str) -> pa.Array:
    """rows-v1 text (quoted) of a timestamp array: UTC with ``Z`` if it has a zone, wall clock if not.

    Example:
        >>> import pyarrow as pa, datetime as dt
        >>> format_timestamps(pa.array([dt.datetime(2024, 1, 1, 12)], pa.timestamp("us")), "t").to_pylist()
        ['"2024-01-01T12:00:00.000000"']
    """
    t = arr.type
    raw = arr.cast(pa.int64()).fill_null(0).to_numpy()
    if t.unit == "ns":
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
        micros = np.floor_divide(raw, 1000)
    else:
        micros = raw * _US_PER_UNIT[t.unit]
    days = np.floor_divide(micros, _US_PER_DAY)
    tod = micros - days * _US_PER_DAY
    secs, frac = np.divmod(tod, 1_000_000)
    zone = 'Z"' if t.tz is not None else '"'
    block = _date_block(days)
    if block is not None:
        n, micro3 = len(micros), _table("micro3")
        text = _matrix_text(
            [
                _const('"', n),
                block,
                _const("T", n),
                np.take(_table("clock"), secs, axis=0),
                _const(".", n),
                np.take(micro3, frac // 1000, axis=0),
                np.take(micro3, frac % 1000, axis=0),
                _const(zone, n),
            ]
        )
    else:
        hh, rest = np.divmod(secs, 3600)
        mm, ss = np.divmod(rest, 60)
        clock = pc.binary_join_element_wise(_pad(hh, 2), _pad(mm, 2), _pad(ss, 2), ":")
        text = pc.binary_join_element_wise('"', _date_text(days), "T", clock, ".", _pad(frac, 6), zone, "")
    return text if arr.null_count == 0 else pc.if_else(arr.is_valid(), text, pa.nulls(len(arr), pa.string()))
