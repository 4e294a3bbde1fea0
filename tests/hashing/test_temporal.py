"""Dates and timestamps against the independent reading of section 5.3 (tests/vectors/derive.py)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa

from tests.vectors.derive import year_text
from ubunye.hashing.temporal import format_dates, format_timestamps

_EPOCH = dt.date(1970, 1, 1)


def _civil_reference(day: int) -> str:
    # Python's date covers years 1..9999 only; beyond it, shift by whole 400-year cycles (146,097 days).
    cycles = 0
    while not (dt.date.min - _EPOCH).days <= day <= (dt.date.max - _EPOCH).days:
        step = 146_097 if day < 0 else -146_097
        day += step
        cycles += -400 if step > 0 else 400
    d = _EPOCH + dt.timedelta(days=day)
    return f"{year_text(d.year + cycles)}-{d.month:02d}-{d.day:02d}"


def test_dates_in_a_short_span_and_across_every_year_form():
    rng = np.random.default_rng(5)
    short = 19_000 + rng.integers(0, 400, 3000)  # the table path: a span shorter than the column
    wide = rng.integers(-3_000_000, 3_000_000, 3000)  # years below 0 and above 9999 too
    for days in (short, wide, np.array([-719_528, -719_163, 2_932_896, 2_932_897])):
        got = format_dates(pa.array(days.astype(np.int32), pa.date32())).to_pylist()
        assert got == [f'"{_civil_reference(int(d))}"' for d in days]


def test_timestamps_with_and_without_zone():
    rng = np.random.default_rng(6)
    micros = rng.integers(-(10**17), 10**17, 2000)
    micros[:3] = [0, -1, 86_400_000_000 - 1]
    for tz, tail in ((None, ""), ("Asia/Kolkata", "Z")):
        arr = pa.array(micros, pa.timestamp("us", tz=tz))
        want = []
        for m in micros.tolist():
            day, rest = divmod(m, 86_400_000_000)
            secs, frac = divmod(rest, 1_000_000)
            clock = f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}.{frac:06d}"
            want.append(f'"{_civil_reference(day)}T{clock}{tail}"')
        assert format_timestamps(arr, "t").to_pylist() == want


def test_seconds_and_milliseconds_beyond_64_bit_microseconds_are_refused_naming_the_column():
    # 2**63 - 1 microseconds is the range (Spark's); numpy's product would wrap past it to another instant.
    import pytest

    from ubunye.exceptions import HashError
    from ubunye.hashing import hash_frame

    for unit, per in (("s", 10**6), ("ms", 10**3)):
        edge = (2**63 - 1) // per
        inside = pa.table({"when": pa.array([-edge, None, edge], pa.int64()).cast(pa.timestamp(unit, "UTC"))})
        assert hash_frame(inside).row_count == 3
        # The edges written from their exact microsecond counts: Spark's extreme instants are
        # +294247-01-10T04:00:54.775807 (2**63 - 1 us) and -290308-12-21T19:59:05.224192 (-2**63 us).
        texts = format_timestamps(pa.array([edge, -edge], pa.int64()).cast(pa.timestamp(unit)), "when").to_pylist()
        assert texts == (
            ['"+294247-01-10T04:00:54.000000"', '"-290308-12-21T19:59:06.000000"']
            if unit == "s"
            else ['"+294247-01-10T04:00:54.775000"', '"-290308-12-21T19:59:05.225000"']
        )
        # -2**63: its absolute value wraps to itself in int64, and its product to 0 (the epoch)
        for beyond in (edge + 1, -edge - 1, -(2**63), 2**63 - 1):
            outside = pa.table({"when": pa.array([0, None, beyond], pa.int64()).cast(pa.timestamp(unit))})
            with pytest.raises(HashError, match=r"column 'when'.*row 2 .*beyond the range"):
                hash_frame(outside)


def test_date64_is_a_date_when_it_is_a_midnight_and_an_error_naming_the_row_when_not():
    import pytest

    from ubunye.exceptions import HashError
    from ubunye.hashing import hash_frame
    from ubunye.hashing.profile import profile_frame

    days = [-719_528, -1, 0, 19_000, None]  # year 0, the day before the epoch, the epoch, 2022
    as32 = pa.table({"d": pa.array(days, pa.date32())})
    as64 = pa.table({"d": pa.array([None if d is None else d * 86_400_000 for d in days], pa.date64())})
    assert format_dates(as64.column("d").combine_chunks()).to_pylist() == [
        None if d is None else f'"{_civil_reference(d)}"' for d in days
    ]
    assert hash_frame(as64) == hash_frame(as32)
    odd = pa.table({"when": pa.array([0, 86_400_000 + 1], pa.date64())})
    for run in (hash_frame, profile_frame):
        with pytest.raises(HashError, match=r"column 'when' of type date64\[ms\]: row 1 \(86400001 ms since"):
            run(odd)


def test_a_date64_beyond_32_bit_days_is_an_error_not_a_wrapped_date():
    import pytest

    from ubunye.exceptions import HashError
    from ubunye.hashing import hash_frame

    far = pa.table({"d": pa.array([(2**31 + 5) * 86_400_000], pa.date64())})  # a midnight, 2^31 + 5 days out
    with pytest.raises(HashError, match=r"column 'd' of type date64\[ms\]: row 0 .* beyond a 32-bit count of days"):
        hash_frame(far)
