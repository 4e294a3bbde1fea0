"""Strings as rows-v1 writes them: Jackson's escaping and the reading of invalid UTF-8, section 4 of docs/rows-v1.md."""

from __future__ import annotations

import codecs

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ubunye.exceptions import HashError

#: Most bytes of text one Arrow ``string`` array holds (its offsets are 32-bit; Arrow's builders stop one short of
#: them): a value whose text, or a row whose line, would pass it cannot be written (docs/rows-v1.md section 11).
STRING_LIMIT = 2**31 - 2

_SHORT = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}
# U+0000..U+001F: the five short escapes, the rest \u00XX with UPPER-case hex (Jackson, unlike Python's json).
_CONTROL = {chr(c): _SHORT.get(c, f"\\u{c:04X}") for c in range(0x20)}
_TABLE = str.maketrans({'"': '\\"', "\\": "\\\\", **_CONTROL})
_MOST_GROWTH = 6  # the most bytes escaping writes for one (a control character: \u0001)

# A whole value of well-formed UTF-8 (Unicode Table 3-7). Arrow matches binary arrays byte by byte (RE2 in
# Latin-1 mode), so this tells, per value and in C, which values hold an invalid sequence.
_WELL_FORMED = (
    r"^(?:[\x00-\x7F]|[\xC2-\xDF][\x80-\xBF]|\xE0[\xA0-\xBF][\x80-\xBF]|[\xE1-\xEC\xEE\xEF][\x80-\xBF]{2}"
    r"|\xED[\x80-\x9F][\x80-\xBF]|\xF0[\x90-\xBF][\x80-\xBF]{2}|[\xF1-\xF3][\x80-\xBF]{3}|\xF4[\x80-\x8F][\x80-\xBF]{2})*$"
)
_REPLACE_AS_JAVA = "ubunye-rows-v1-replace"


def _replace_as_java(exc: UnicodeError) -> tuple[str, int]:
    """One U+FFFD per malformed sequence, counted as Java's UTF-8 decoder counts them (section 4).

    Python reports each maximal subpart (Unicode's recommended practice), which is Java's count too except for
    an encoded surrogate: Java reads ED A0..BF and a following continuation byte as ONE malformed sequence,
    Python as up to three (measured on JDK 17 and 25: ED A0 80 is one U+FFFD in Java, three in Python).
    """
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    b, i = exc.object, exc.start
    if b[i] == 0xED and i + 1 < len(b) and 0xA0 <= b[i + 1] <= 0xBF:
        end = i + 3 if i + 2 < len(b) and 0x80 <= b[i + 2] <= 0xBF else i + 2
        return "\ufffd", end
    return "\ufffd", exc.end


codecs.register_error(_REPLACE_AS_JAVA, _replace_as_java)


def decode_text(value: bytes) -> str:
    """The text of a string value's bytes (section 4): UTF-8, each malformed sequence one U+FFFD as in Java.

    Example:
        >>> [decode_text(b) for b in (b"a\\xffb", b"\\xe2\\x82", b"\\xed\\xa0\\x80", b"\\xe0\\x80\\x80")]
        ['a\\ufffdb', '\\ufffd', '\\ufffd', '\\ufffd\\ufffd\\ufffd']
    """
    return value.decode("utf-8", _REPLACE_AS_JAVA)


def as_text(arr: pa.Array) -> pa.Array:
    """A string, large_string or string_view array as a ``string`` array of valid UTF-8 (section 4).

    Arrow strings can hold bytes that are not UTF-8 (Spark's toArrow and mapInArrow hand over what a cast from
    binary left; an unchecked cast makes them too). Such a value is replaced by its text as Java reads it,
    which is what the JVM prints and hashes; valid values are passed through untouched. One validation of the
    whole array decides (the common case: nothing to repair); only the invalid values go through Python.

    Example:
        >>> bad = pa.array([b"ok", b"a\\xffb", None], pa.binary()).cast(pa.string(), safe=False)
        >>> as_text(bad).to_pylist()
        ['ok', 'a\\ufffdb', None]
    """
    text = arr if arr.type == pa.string() else arr.cast(pa.string())
    try:
        text.validate(full=True)
        return text
    except pa.ArrowInvalid:
        pass
    raw = text.cast(pa.binary())
    invalid = pc.invert(pc.fill_null(pc.match_substring_regex(raw, _WELL_FORMED), True))
    repaired = [decode_text(v) for v in pc.filter(raw, invalid).to_pylist()]
    return pc.replace_with_mask(text, invalid, pa.array(repaired, pa.string()))


def json_string(s: str) -> str:
    """One Python string as a rows-v1 JSON string, quotes included.

    Example:
        >>> print(json_string('a"b\\\\c\\t\\x01'))
        "a\\"b\\\\c\\t\\u0001"
    """
    return '"' + s.translate(_TABLE) + '"'


def json_strings(arr: pa.Array, path: str | None = None, t: pa.DataType | None = None) -> pa.Array:
    """Vectorised ``json_string`` over an Arrow string array (already ``as_text``); nulls stay null. ``path`` and
    ``t``, the column (or field) and its type, name them in an error (see :func:`escaped`)."""
    return pc.binary_join_element_wise('"', escaped(arr, path, t), '"', "")


def too_long(path: str | None, t: pa.DataType | None, what: str) -> HashError:
    """The error for a text Arrow's ``string`` arrays cannot hold: ``what`` ("a row's line") would pass 2 GiB."""
    where = "a string column" if path is None else f"column {path!r}"
    of = "" if t is None else f" of type {t}"
    return HashError(
        f"rows-v1 cannot hash {where}{of}: {what} would pass 2 GiB, Arrow's limit for one string "
        "(docs/rows-v1.md section 11)"
    )


def _nothing_to_escape(arr: pa.Array) -> bool:
    """True when no byte the values of a ``string`` array span is ``"``, ``\\`` or below 0x20 (UTF-8 never uses
    those bytes inside a multi-byte character): one scan of the data buffer, a few ns a value where a regular
    expression costs ~40. Bytes under null slots are scanned too: a false alarm only costs the exact check."""
    if arr.type != pa.string() or len(arr) == 0:
        return False
    _, offsets, data = arr.buffers()
    spans = np.frombuffer(offsets, dtype=np.int32, count=len(arr) + 1, offset=4 * arr.offset)
    start, stop = int(spans[0]), int(spans[-1])
    if data is None or stop <= start:
        return True
    view = np.frombuffer(data, dtype=np.uint8, count=stop - start, offset=start)
    return not (view.min() < 0x20 or (view == 0x22).any() or (view == 0x5C).any())


def _span(arr: pa.Array) -> int:
    """Bytes the values of a ``string`` array span (null slots' too): two offsets read, no pass over the data."""
    if len(arr) == 0:
        return 0
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=4 * arr.offset)
    return int(offsets[-1]) - int(offsets[0])


def _escaped_size(data: np.ndarray) -> int:
    """The bytes of ``data`` (UTF-8) escaped as section 4 says: `"` and `\\` two, the short escapes two, the other
    controls six (``\\u0001``), any other byte itself. A few passes over the bytes, no copy but the controls'."""
    controls = data[data < 0x20]
    short = sum(int(np.count_nonzero(controls == c)) for c in _SHORT)
    quotes = int(np.count_nonzero(data == 0x22)) + int(np.count_nonzero(data == 0x5C))
    return len(data) + quotes + 5 * len(controls) - 4 * short


def _check_escaped_fits(arr: pa.Array, path: str | None, t: pa.DataType | None) -> None:
    """Raise unless ``arr`` escaped fits one ``string`` array. Arrow's ``replace_substring`` does not check its
    32-bit offsets: past 2 GiB it writes garbage or crashes the process. Called only when the values span more
    than a sixth of 2 GiB (a few hundred MB): the bytes that escape are counted, a few passes over the data.

    A value whose text (quotes included) would pass 2 GiB is a HashError (its line cannot be written); values
    that fit one by one but not together are Arrow's own ArrowCapacityError, as its other kernels raise: batches
    are cut into pieces first (ubunye.hashing.pieces), so within one only a single row's values can.
    """
    lengths = np.diff(np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=4 * arr.offset))
    if arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        if lengths[~valid].any():  # bytes under a null slot are no text: the valid values alone, packed
            arr = pc.filter(arr, valid)
            lengths = lengths[valid]
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=4 * arr.offset)
    start, stop = int(offsets[0]), int(offsets[-1])
    if stop <= start:
        return
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8, count=stop - start, offset=start)
    total = _escaped_size(data)
    if total <= STRING_LIMIT:
        return
    # Only a value of more than a sixth of 2 GiB can escape to more than 2 GiB: at most a handful, each counted.
    for i in np.flatnonzero(_MOST_GROWTH * lengths.astype(np.int64) + 2 > STRING_LIMIT):
        lo, hi = int(offsets[i]) - start, int(offsets[i + 1]) - start
        size = (total if hi - lo == len(data) else _escaped_size(data[lo:hi])) + 2  # with its quotes
        if size > STRING_LIMIT:
            raise too_long(path, t, f"a value's line (its escaped text alone {size:,} bytes)")
    raise pa.ArrowCapacityError(
        f"the escaped text of {'a string column' if path is None else repr(path)} in this batch would pass 2 GiB "
        f"({total:,} bytes), Arrow's limit for one string array: hash it in pieces (ubunye.hashing.pieces)"
    )


def escaped(arr: pa.Array, path: str | None = None, t: pa.DataType | None = None) -> pa.Array:
    """The string array (already ``as_text``) escaped as section 4 says, without the quotes; nulls stay null.

    A value whose escaped text would pass 2 GiB is a HashError naming ``path`` (the column, or field) and ``t``
    (its type). Values are checked only when they span so many bytes that escaping could reach 2 GiB: a few
    arithmetic operations on the offsets otherwise.
    """
    if _nothing_to_escape(arr) or not pc.any(pc.match_substring_regex(arr, r'["\\\x00-\x1f]')).as_py():
        return arr  # the common case: nothing to escape
    if arr.type == pa.string() and _MOST_GROWTH * _span(arr) > STRING_LIMIT:
        _check_escaped_fits(arr, path, t)
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
