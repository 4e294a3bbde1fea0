"""Strings as rows-v1 writes them: Jackson's escaping, section 4 of docs/rows-v1.md."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

_SHORT = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}
# U+0000..U+001F: the five short escapes, the rest \u00XX with UPPER-case hex (Jackson, unlike Python's json).
_CONTROL = {chr(c): _SHORT.get(c, f"\\u{c:04X}") for c in range(0x20)}
_TABLE = str.maketrans({'"': '\\"', "\\": "\\\\", **_CONTROL})


def json_string(s: str) -> str:
    """One Python string as a rows-v1 JSON string, quotes included.

    Example:
        >>> print(json_string('a"b\\\\c\\t\\x01'))
        "a\\"b\\\\c\\t\\u0001"
    """
    return '"' + s.translate(_TABLE) + '"'


def json_strings(arr: pa.Array) -> pa.Array:
    """Vectorised ``json_string`` over an Arrow string array; nulls stay null."""
    return pc.binary_join_element_wise('"', escaped(arr), '"', "")


def escaped(arr: pa.Array) -> pa.Array:
    """The string array escaped as section 4 says, without the quotes; nulls stay null."""
    if not pc.any(pc.match_substring_regex(arr, r'["\\\x00-\x1f]')).as_py():
        return arr  # the common case: nothing to escape
    s = pc.replace_substring(arr, "\\", "\\\\")
    s = pc.replace_substring(s, '"', '\\"')
    has_control = pc.match_substring_regex(s, r"[\x00-\x1f]")
    if pc.any(has_control).as_py():
        # Control characters are rare: escape only the rows that hold one, 32 passes over those alone.
        sub = pc.filter(s, has_control)
        for ch, esc in _CONTROL.items():
            sub = pc.replace_substring(sub, ch, esc)
        s = pc.replace_with_mask(s, pc.fill_null(has_control, False), sub.cast(s.type))
    return s
