"""ISO 8601 times, read alike on every Python the package supports.

Python 3.10's ``datetime.fromisoformat`` takes only what ``isoformat()`` writes (no ``Z``, fractions of three or six
digits); 3.11 takes far more (basic format, week dates, ``+0200``). Records, config times and ``lineage list
--since`` are read here, by one grammar checked on every Python, so a config or record that reads on one reads the
same on another (a Databricks 14.3 LTS cluster runs 3.10).
"""

from __future__ import annotations

import datetime as dt
import re

# The extended format: a date, optionally a time (hours, then minutes and seconds, a fraction of any length, cut
# to microseconds) and an offset (Z, or +HH, +HHMM, +HH:MM, with seconds); T or a space between date and time.
_TIME = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[T ](?P<hour>\d{2})(?::(?P<minute>\d{2})(?::(?P<second>\d{2})(?:[.,](?P<fraction>\d+))?)?)?"
    r"(?P<zone>[Zz]|(?P<sign>[+-])(?P<zh>\d{2})(?::?(?P<zm>\d{2})(?::?(?P<zs>\d{2})(?:[.,](?P<zf>\d+))?)?)?)?)?",
    re.ASCII,  # digits 0-9 only: not the other scripts' digits \d matches in str patterns
)


def parse_time(text: str) -> dt.datetime:
    """The datetime an ISO 8601 text (extended format) names; ``Z`` (or ``z``) is UTC. Raises ValueError for
    anything else, on every Python.

    Aware when the text has an offset, naive when not; a date alone is its midnight.

    Example:
        >>> parse_time("2026-12-01T02:00:00.5Z").isoformat()
        '2026-12-01T02:00:00.500000+00:00'
        >>> parse_time("2026-12-01").isoformat()
        '2026-12-01T00:00:00'
    """
    m = _TIME.fullmatch(text)
    if m is None:
        raise ValueError(f"not an ISO 8601 time (extended format): {text!r}")
    canonical = m["date"]
    if m["hour"] is not None:
        canonical += f"T{m['hour']}:{m['minute'] or '00'}:{m['second'] or '00'}"
        if m["fraction"]:
            canonical += "." + m["fraction"][:6].ljust(6, "0")
    if m["zone"] in ("Z", "z"):
        canonical += "+00:00"
    elif m["zone"]:
        canonical += f"{m['sign']}{m['zh']}:{m['zm'] or '00'}"
        if m["zs"]:
            canonical += f":{m['zs']}" + ("." + m["zf"][:6].ljust(6, "0") if m["zf"] else "")
    # What isoformat() writes, which fromisoformat reads on 3.10 and later alike (it checks the ranges).
    return dt.datetime.fromisoformat(canonical)
