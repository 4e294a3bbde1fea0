"""docs/backends.md: its smallest complete backend runs the conformance suite as written, and passes it."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "backends.md"

pytest_plugins = ["pytester"]


def example_source() -> str:
    """The python block after ``<!-- example: rows_backend -->`` in docs/backends.md."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- example: rows_backend -->\n```python\n(.*?)```", text, re.S)
    assert match, "docs/backends.md lost its example block"
    return match.group(1)


def test_the_documented_backend_passes_the_suite(pytester):
    pytester.makepyfile(test_rows_backend=example_source())
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    vectors = len(list((DOC.parents[1] / "tests" / "vectors").glob("*.json")))
    byte_vectors = len(list((DOC.parents[1] / "tests" / "vectors" / "bytes").glob("*.json")))
    # each vector's hash and profile, generated tables' hash and profile, round trips, 2 example tasks; skipped: one
    # example task, and the hash and profile of the vectors of non-UTF-8 strings (invalid_utf8_strings not claimed)
    result.assert_outcomes(passed=2 * vectors + 2 + 2 + 2 + 2, skipped=1 + 2 * byte_vectors)
