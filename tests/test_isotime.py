"""ubunye.isotime: ISO 8601 times read the same on Python 3.10 (whose fromisoformat takes only isoformat()'s own
output) and 3.11+. Expected values are built field by field, not by fromisoformat."""

from __future__ import annotations

import datetime as dt

import pytest

from ubunye.isotime import parse_time

UTC = dt.timezone.utc


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("2026-12-01T02:00:00Z", dt.datetime(2026, 12, 1, 2, tzinfo=UTC)),
        ("2026-12-01T02:00:00z", dt.datetime(2026, 12, 1, 2, tzinfo=UTC)),
        ("2026-12-01T02:00:00.5Z", dt.datetime(2026, 12, 1, 2, 0, 0, 500000, tzinfo=UTC)),
        ("2026-12-01T02:00:00.123456789Z", dt.datetime(2026, 12, 1, 2, 0, 0, 123456, tzinfo=UTC)),
        (
            "2026-12-01T02:00:00,25+02:00",
            dt.datetime(2026, 12, 1, 2, 0, 0, 250000, tzinfo=dt.timezone(dt.timedelta(hours=2))),
        ),
        ("2026-12-01 02:00:00.123456", dt.datetime(2026, 12, 1, 2, 0, 0, 123456)),
        ("2026-12-01T02:00", dt.datetime(2026, 12, 1, 2)),
        ("2026-12-01", dt.datetime(2026, 12, 1)),
        ("2026-12-01T02:00:00+0200", dt.datetime(2026, 12, 1, 2, tzinfo=dt.timezone(dt.timedelta(hours=2)))),
        ("2026-12-01T02:00:00-05", dt.datetime(2026, 12, 1, 2, tzinfo=dt.timezone(dt.timedelta(hours=-5)))),
        (
            "2026-12-01T02:00:00.5+02:00:00.25",
            dt.datetime(2026, 12, 1, 2, 0, 0, 500000, tzinfo=dt.timezone(dt.timedelta(hours=2, microseconds=250000))),
        ),
        ("2026-12-01T02", dt.datetime(2026, 12, 1, 2)),
    ],
)
def test_times_read_alike_on_every_python(text: str, want: dt.datetime) -> None:
    got = parse_time(text)
    assert got == want
    assert got.utcoffset() == want.utcoffset()


@pytest.mark.parametrize(
    "text",
    [
        *("yesterday", "", "2026-13-01", "2026-12-01T25:00:00Z", "Z", "2026-12-01T02:00:00.Z"),
        # 3.11's fromisoformat reads these, 3.10's does not: refused on both (one grammar everywhere)
        *("20261201", "20261201T020000Z", "2026-12-01T020000Z", "2026-W48-2", "2026-12-01T02:00:00ZZ"),
        *(" 2026-12-01", "2026-12-01T02:00:00Z ", "2026-12-01T2:00", "\uff12026-12-01", "2026-12-01T0\u0662:00"),
    ],
)
def test_anything_else_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time(text)
