"""ISO 8601 times, read alike on every Python the package supports.

Python 3.10's ``datetime.fromisoformat`` takes only what ``isoformat()`` writes: no ``Z``, and fractions of exactly
three or six digits. 3.11 takes both. Records, config times and ``lineage list --since`` are read here, so a
record written on one Python reads the same on another (a Databricks 14.3 LTS cluster runs 3.10).
"""

from __future__ import annotations

import datetime as dt
import re
import sys

# The seconds' fraction of the time of day (the first one: an offset's seconds come after it), any length.
_FRACTION = re.compile(r"(\d{2}:\d{2}:\d{2})[.,](\d+)")


def parse_time(text: str) -> dt.datetime:
    """The datetime an ISO 8601 text names; ``Z`` (or ``z``) is UTC. Raises ValueError for anything else.

    Aware when the text has an offset, naive when not; a date alone is its midnight.

    Example:
        >>> parse_time("2026-12-01T02:00:00.5Z").isoformat()
        '2026-12-01T02:00:00.500000+00:00'
        >>> parse_time("2026-12-01").isoformat()
        '2026-12-01T00:00:00'
    """
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    if sys.version_info < (3, 11):
        # 3.11 reads any number of fraction digits (keeping six); 3.10 only three or six.
        text = _FRACTION.sub(lambda m: f"{m.group(1)}.{m.group(2)[:6].ljust(6, '0')}", text, count=1)
    return dt.datetime.fromisoformat(text)
