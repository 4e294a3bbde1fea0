"""Derive the rows-v1 conformance vectors' expected values, independently of the twin.

This is a deliberately plain, row-at-a-time reading of docs/rows-v1.md: Python ``decimal``, ``datetime``,
and ``hashlib``, text built by hand (no ``json.dumps`` for values, no pyarrow, nothing of ubunye: not even its
type-name parser, so a parser bug cannot land in the twin and in the expected values alike).
The twin (vectorised, Arrow-based) and the JVM aggregate are then tested against what this writes.

Beside ``expected`` (sections 2 to 9) every vector gets ``expected_profile`` (section 12.4): the column
fingerprints of section 12.1 and the row buckets of section 12.2 for a few cases, made from the same hand-built
text (a column line is ``{`` + that column's member + ``}``, a key line is the row's line restricted to the key).

Run ``python tests/vectors/derive.py`` to rewrite tests/vectors/*.json (and tests/vectors/bytes/*.json, the vectors
whose strings are not all UTF-8); a test checks the files are current.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent


# ---- section 4: strings ------------------------------------------------------------------------------------
def jstr(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20:
            out.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(o, f"\\u{o:04X}"))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


# ---- section 4.1: invalid UTF-8, read byte by byte (never bytes.decode, whose "replace" counts surrogates apart)
def _second_byte_range(lead: int) -> tuple[int, int, int] | None:
    """(continuation bytes needed, lowest and highest allowed second byte) of a lead byte (Unicode Table 3-7).

    ED is given 80..BF like the other three-byte leads: section 4.1 reads an encoded surrogate (ED A0..BF ..) as
    one three-byte sequence, which is then malformed as a whole.
    """
    if 0xC2 <= lead <= 0xDF:
        return 1, 0x80, 0xBF
    if lead == 0xE0:
        return 2, 0xA0, 0xBF
    if 0xE1 <= lead <= 0xEF:
        return 2, 0x80, 0xBF
    if lead == 0xF0:
        return 3, 0x90, 0xBF
    if 0xF1 <= lead <= 0xF3:
        return 3, 0x80, 0xBF
    if lead == 0xF4:
        return 3, 0x80, 0x8F
    return None  # 80..C1, F5..FF start no sequence


def text_of_bytes(b: bytes) -> str:
    out = []
    i, n = 0, len(b)
    while i < n:
        lead = b[i]
        if lead < 0x80:
            out.append(chr(lead))
            i += 1
            continue
        shape = _second_byte_range(lead)
        if shape is None:
            out.append("\ufffd")
            i += 1
            continue
        need, lo, hi = shape
        j = i + 1
        while j - i - 1 < need and j < n and (lo <= b[j] <= hi if j == i + 1 else 0x80 <= b[j] <= 0xBF):
            j += 1
        surrogate = lead == 0xED and j > i + 1 and b[i + 1] >= 0xA0
        if j - i - 1 == need and not surrogate:
            cp = lead & (0x7F >> (need + 1))
            for k in range(i + 1, j):
                cp = (cp << 6) | (b[k] & 0x3F)
            out.append(chr(cp))
        else:
            out.append("\ufffd")  # one per maximal subpart (an encoded surrogate included)
        i = j
    return "".join(out)


# ---- section 5.1: floats -----------------------------------------------------------------------------------
def _f32(x: float) -> float:
    # Round to the nearest float32 (ties to even), as pyarrow and Spark do when they build a float column.
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def _shortest_digits(x: float, bits: int) -> tuple[str, int]:
    """(digits, e10) with x ~ d.ddd x 10^e10: of the decimals with the fewest digits that round back to x in its
    width, the closest to x (the even one on a tie).

    At each length the correctly rounded decimal is the closest, but when x is a power of two the values rounding
    to it reach twice as far above it as below, so the correctly rounded decimal can fall outside them while the
    next one up (or down) of the same length is inside: those neighbours are tried too.
    """
    exact = decimal.Decimal(x)
    for prec in range(1, 18):
        nearest = decimal.Decimal(f"{x:.{prec - 1}e}")
        unit = decimal.Decimal(1).scaleb(nearest.adjusted() - prec + 1)
        found = []
        for c in (nearest, nearest + unit, nearest - unit):
            t = c.normalize().as_tuple()
            digits = "".join(map(str, t.digits))
            back = float(c) if bits == 64 else _f32(float(c))
            if c > 0 and len(digits) <= prec and back == x:
                found.append((abs(c - exact), int(digits[-1]) % 2, digits, c.adjusted()))
        if found:
            _, _, digits, e10 = min(found)
            return digits, e10
    raise AssertionError(x)


def java_float(x: float, bits: int) -> str:
    if math.isnan(x):
        return '"NaN"'
    if math.isinf(x):
        return '"Infinity"' if x > 0 else '"-Infinity"'
    if x == 0:
        return "-0.0" if math.copysign(1, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    digits, e10 = _shortest_digits(abs(x), bits)
    if len(digits) == 1:
        # Java's two-digit rule: the closest two-digit decimal, trailing zero dropped.
        two = decimal.Context(prec=2, rounding=decimal.ROUND_HALF_EVEN).plus(decimal.Decimal(abs(x)))
        t = two.as_tuple()
        digits = "".join(map(str, t.digits)).rstrip("0") or "0"
        e10 = t.exponent + len(t.digits) - 1
    if -3 <= e10 < 7:
        if e10 >= 0:
            ip = digits[: e10 + 1].ljust(e10 + 1, "0")
            fp = digits[e10 + 1 :] or "0"
        else:
            ip, fp = "0", "0" * (-e10 - 1) + digits
        return f"{sign}{ip}.{fp}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e10}"


# ---- section 5.2: decimals ---------------------------------------------------------------------------------
def java_decimal(text: str, scale: int) -> str:
    ctx = decimal.Context(prec=100)
    q = decimal.Decimal(text).quantize(decimal.Decimal(1).scaleb(-scale), context=ctx)
    unscaled = int(q.scaleb(scale, context=ctx))
    digits = str(abs(unscaled))
    adjusted = len(digits) - 1 - scale
    sign = "-" if unscaled < 0 else ""
    if adjusted >= -6:
        if scale == 0:
            return sign + digits
        digits = digits.rjust(scale + 1, "0")
        return f"{sign}{digits[:-scale]}.{digits[-scale:]}"
    return sign + digits[0] + ("." + digits[1:] if len(digits) > 1 else "") + f"E{adjusted}"


# ---- section 5.3: dates and times --------------------------------------------------------------------------
def year_text(y: int) -> str:
    if y > 9999:
        return f"+{y}"
    if y < 0:
        return "-" + str(-y).rjust(4, "0")
    return str(y).rjust(4, "0")


def date_text(d: dt.date) -> str:
    return f"{year_text(d.year)}-{d.month:02d}-{d.day:02d}"


def ts_text(t: dt.datetime, zone: bool) -> str:
    body = f"{date_text(t.date())}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}.{t.microsecond:06d}"
    return jstr(body + ("Z" if zone else ""))


# ---- section 7: type names, parsed here rather than by ubunye's own parser (a bug of that parser would
# otherwise land in the twin and in the expected values alike). The tree has the shape the twin's has: "int64",
# ("list", T), ("map", K, V), ("struct", ((name, T), ...)), ("decimal", p, s).
_SIMPLE_TYPES = frozenset(
    "int8 int16 int32 int64 float32 float64 bool string binary date timestamp timestamp_ntz".split()
)
_UNESCAPE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_DIGITS = frozenset("0123456789")


def parse_type(name: str) -> Any:
    """The tree of a rows-v1 type name (section 7); ValueError saying where the name stops making sense."""
    tree, rest = _type_at(name)
    if rest:
        raise ValueError(f"trailing text {rest!r} after the type in {name!r}")
    return tree


def _type_at(s: str) -> tuple[Any, str]:
    end = 0
    while end < len(s) and (s[end] in _DIGITS or s[end] == "_" or "a" <= s[end] <= "z"):
        end += 1
    word, rest = s[:end], s[end:]
    if word == "list":
        inner, rest = _type_at(_skip(rest, "<"))
        return ("list", inner), _skip(rest, ">")
    if word == "map":
        key, rest = _type_at(_skip(rest, "<"))
        value, rest = _type_at(_skip(rest, ","))
        return ("map", key, value), _skip(rest, ">")
    if word == "struct":
        rest = _skip(rest, "<")
        fields: list[tuple[str, Any]] = []
        while not rest.startswith(">"):
            if fields:
                rest = _skip(rest, ",")
            fname, rest = _quoted_at(rest)
            ftype, rest = _type_at(_skip(rest, ":"))
            fields.append((fname, ftype))
        return ("struct", tuple(fields)), rest[1:]
    if word == "decimal":
        body, closed, rest = _skip(rest, "(").partition(")")
        p_text, comma, s_text = body.partition(",")
        if not (closed and comma and p_text and s_text and set(p_text + s_text) <= _DIGITS):
            raise ValueError(f"expected decimal(p,s) at {s!r}")
        p, scale = int(p_text), int(s_text)
        if not 1 <= p <= 38 or scale > p:
            raise ValueError(f"decimal({p},{scale}) is not a rows-v1 type (1 <= precision <= 38, scale <= precision)")
        return ("decimal", p, scale), rest
    if word in _SIMPLE_TYPES:
        return word, rest
    raise ValueError(f"unknown rows-v1 type at {s!r}")


def _skip(s: str, token: str) -> str:
    if not s.startswith(token):
        raise ValueError(f"expected {token!r} at {s!r}")
    return s[len(token) :]


def _quoted_at(s: str) -> tuple[str, str]:
    """A JSON string (section 4: a field name, a map key's text) at the start of ``s``, and the text after it."""
    if not s.startswith('"'):
        raise ValueError(f"expected a quoted name at {s!r}")
    out, i = [], 1
    while i < len(s):
        ch = s[i]
        if ch == '"':
            return "".join(out), s[i + 1 :]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        esc = s[i + 1 : i + 2]
        if esc in _UNESCAPE:
            out.append(_UNESCAPE[esc])
            i += 2
            continue
        hex4 = s[i + 2 : i + 6]
        # Section 4 writes \u only for U+0000..U+001F, so no surrogate pair is ever to be joined.
        if esc != "u" or len(hex4) != 4 or not set(hex4.upper()) <= set("0123456789ABCDEF"):
            raise ValueError(f"bad escape in a quoted name at {s[i:]!r}")
        if 0xD800 <= int(hex4, 16) <= 0xDFFF:
            raise ValueError(f"a surrogate is not a character, in a quoted name at {s[i:]!r}")
        out.append(chr(int(hex4, 16)))
        i += 6
    raise ValueError(f"unterminated quoted name in {s!r}")


# ---- sections 3 and 6: values and nesting ------------------------------------------------------------------
def type_name(tree: Any) -> str:
    if isinstance(tree, str):
        return tree
    if tree[0] == "list":
        return f"list<{type_name(tree[1])}>"
    if tree[0] == "map":
        return f"map<{type_name(tree[1])},{type_name(tree[2])}>"
    if tree[0] == "decimal":
        return f"decimal({tree[1]},{tree[2]})"
    fields = sorted(tree[1], key=lambda f: f[0])
    return "struct<" + ",".join(f"{jstr(n)}:{type_name(t)}" for n, t in fields) + ">"


def encode(cell: Any, tree: Any) -> str:
    """The canonical JSON of one non-null cell."""
    if tree == "bool":
        return "true" if cell else "false"
    if tree in ("int8", "int16", "int32", "int64"):
        return str(int(cell))
    if tree == "string":
        if isinstance(cell, dict):
            return jstr(text_of_bytes(bytes.fromhex(cell["string_bytes"])))
        return jstr(cell)
    ((_tag, v),) = cell.items()
    if tree in ("float64", "float32"):
        bits = 64 if tree == "float64" else 32
        x = float(v) if bits == 64 else _f32(float(v))
        return java_float(x, bits)
    if tree == "binary":
        return jstr(base64.b64encode(base64.b64decode(v)).decode())
    if tree == "date":
        return jstr(date_text(dt.date.fromisoformat(v)))
    if tree == "timestamp":
        return ts_text(dt.datetime.fromisoformat(v).astimezone(dt.timezone.utc), zone=True)
    if tree == "timestamp_ntz":
        return ts_text(dt.datetime.fromisoformat(v), zone=False)
    if tree[0] == "decimal":
        return java_decimal(v, tree[2])
    if tree[0] == "list":
        return "[" + ",".join("null" if c is None else encode(c, tree[1]) for c in v) + "]"
    if tree[0] == "struct":
        return obj([(n, v.get(n)) for n, _ in tree[1]], dict(tree[1]))
    if tree[0] == "map":
        members = []
        for k, x in v:
            ktext = encode(k, tree[1])
            if ktext.startswith('"'):
                ktext, _ = _quoted_at(ktext)  # unquote: a JSON string's text (section 4 read back)
            members.append((ktext.encode("utf-8"), "null" if x is None else encode(x, tree[2])))
        members.sort()
        return "{" + ",".join(f"{jstr(k.decode('utf-8'))}:{val}" for k, val in members) + "}"
    raise AssertionError(tree)


def obj(pairs: list[tuple[str, Any]], types: dict[str, Any]) -> str:
    present = [(n, c) for n, c in pairs if c is not None]
    present.sort(key=lambda p: p[0].encode("utf-8"))
    return "{" + ",".join(f"{jstr(n)}:{encode(c, types[n])}" for n, c in present) + "}"


def expected(columns: list[tuple[str, str]], rows: list[list[Any]]) -> dict[str, Any]:
    trees = {n: parse_type(t) for n, t in columns}
    names = sorted((n for n, _ in columns), key=lambda n: n.encode("utf-8"))
    schema = "struct<" + ",".join(f"{jstr(n)}:{type_name(trees[n])}" for n in names) + ">"
    lines = [obj([(columns[i][0], row[i]) for i in range(len(columns))], trees) for row in rows]
    s1 = s2 = 0
    for line in lines:
        h = hashlib.sha256(line.encode("utf-8")).digest()
        s1 = (s1 + int.from_bytes(h[:8], "big")) % 2**64
        s2 = (s2 + int.from_bytes(h[8:16], "big")) % 2**64
    digest_input = f"rows-v1\n{schema}\n{len(lines)}\n{s1:016x}\n{s2:016x}"
    return {
        "schema": schema,
        "lines": lines,
        "row_count": len(lines),
        "sum1": f"{s1:016x}",
        "sum2": f"{s2:016x}",
        "data_hash": "sha256:" + hashlib.sha256(digest_input.encode("utf-8")).hexdigest(),
        "schema_hash": "sha256:" + hashlib.sha256(("rows-v1-schema\n" + schema).encode("utf-8")).hexdigest(),
    }


# ---- section 12: profile-v1 --------------------------------------------------------------------------------
def _sha_cut(line: str) -> tuple[bytes, int, int]:
    """SHA-256 of a line, and its bytes 0..7 and 8..15 as big-endian unsigned integers (section 8)."""
    h = hashlib.sha256(line.encode("utf-8")).digest()
    return h, int.from_bytes(h[:8], "big"), int.from_bytes(h[8:16], "big")


def column_line(name: str, tree: Any, cell: Any) -> str:
    """Section 12.1: ``{`` + the column's member of the row's line + ``}``; ``{}`` for a null value."""
    return obj([(name, cell)], {name: tree})


def key_line(row: dict[str, Any], key: list[str], trees: dict[str, Any]) -> str:
    """Section 12.2: the row's canonical line restricted to the key columns (sorted, nulls left out)."""
    return obj([(n, row[n]) for n in key], trees)


def column_profile(name: str, tree: Any, cells: list[Any]) -> dict[str, Any]:
    """Section 12.1: the column's type, nulls, nans, sums of its column lines and fingerprint."""
    s1 = s2 = 0
    for cell in cells:
        _, a, b = _sha_cut(column_line(name, tree, cell))
        s1 = (s1 + a) % 2**64
        s2 = (s2 + b) % 2**64
    tname = type_name(tree)
    nans = None
    if tree in ("float32", "float64"):
        nans = sum(1 for c in cells if c is not None and math.isnan(float(c["float"])))
    fp_input = f"profile-v1-column\n{jstr(name)}\n{tname}\n{len(cells)}\n{s1:016x}\n{s2:016x}"
    return {
        "type": tname,
        "nulls": sum(1 for c in cells if c is None),
        "nans": nans,
        "sum1": f"{s1:016x}",
        "sum2": f"{s2:016x}",
        "fingerprint": "sha256:" + hashlib.sha256(fp_input.encode("utf-8")).hexdigest(),
    }


def bucket_case(columns: list[tuple[str, str]], rows: list[list[Any]], n: int, key: list[str] | None) -> dict[str, Any]:
    """Section 12.2: ``[index, count, sum1, sum2]`` of every bucket that holds a row, by index."""
    if n not in [2**i for i in range(17)]:
        raise ValueError(f"n = {n}: not a power of two from 1 to 65,536")
    names = [c for c, _ in columns]
    if key is not None and (not key or len(set(key)) != len(key) or not set(key) <= set(names)):
        raise ValueError(f"key {key}: not a non-empty list of distinct columns of {names}")
    trees = {c: parse_type(t) for c, t in columns}
    acc: dict[int, tuple[int, int, int]] = {}
    for row in rows:
        cells = dict(zip(names, row, strict=True))
        h, a, b = _sha_cut(obj(list(cells.items()), trees))
        k = h if key is None else hashlib.sha256(key_line(cells, key, trees).encode("utf-8")).digest()
        i = int.from_bytes(k[28:32], "big") % n
        count, x, y = acc.get(i, (0, 0, 0))
        acc[i] = (count + 1, (x + a) % 2**64, (y + b) % 2**64)
    return {"n": n, "key": key, "buckets": [[i, c, f"{x:016x}", f"{y:016x}"] for i, (c, x, y) in sorted(acc.items())]}


def expected_profile(
    columns: list[tuple[str, str]], rows: list[list[Any]], cases: list[dict[str, Any]], table: dict[str, Any]
) -> dict[str, Any]:
    """Section 12.4: ``columns`` by name (code point order) and the bucket ``cases``; ``table`` is ``expected``."""
    order = sorted(range(len(columns)), key=lambda i: columns[i][0].encode("utf-8"))
    profile = {
        "columns": {
            columns[i][0]: column_profile(columns[i][0], parse_type(columns[i][1]), [r[i] for r in rows]) for i in order
        },
        "buckets": [bucket_case(columns, rows, c["n"], c["key"]) for c in cases],
    }
    # What section 12.2 says follows from the rules; a derivation that breaks it is wrong, not the vector.
    for case in profile["buckets"]:
        counts = sum(b[1] for b in case["buckets"])
        sums = [sum(int(b[j], 16) for b in case["buckets"]) % 2**64 for j in (2, 3)]
        assert counts == table["row_count"] and [f"{x:016x}" for x in sums] == [table["sum1"], table["sum2"]], case
        if case["n"] == 1 and table["row_count"]:
            assert case["buckets"] == [[0, table["row_count"], table["sum1"], table["sum2"]]], case
    return profile


def render(vector: dict[str, Any]) -> str:
    cols = [(c["name"], c["type"]) for c in vector["columns"]]
    exp = expected(cols, vector["rows"])
    # Every vector: no key with 8 buckets and with 1 (section 12.2's example); then the vector's own cases.
    cases = [{"n": 8, "key": None}, {"n": 1, "key": None}, *vector.get("bucket_cases", [])]
    prof = expected_profile(cols, vector["rows"], cases, exp)

    def dump(x: Any) -> str:
        return json.dumps(x, ensure_ascii=False)

    # One row, one line per entry: readable diffs when a vector changes.
    parts = [
        f' "name": {dump(vector["name"])}',
        f' "description": {dump(vector["description"])}',
        ' "columns": [\n' + ",\n".join("  " + dump(c) for c in vector["columns"]) + "\n ]",
        ' "rows": [\n' + ",\n".join("  " + dump(r) for r in vector["rows"]) + "\n ]",
        ' "expected": {\n'
        + ",\n".join(
            f"  {dump(k)}: " + ("[\n" + ",\n".join("   " + dump(x) for x in v) + "\n  ]" if k == "lines" else dump(v))
            for k, v in exp.items()
        )
        + "\n }",
        ' "expected_profile": {\n  "columns": '
        + _block([f"{dump(n)}: {dump(c)}" for n, c in prof["columns"].items()], "{}", "   ", "  ")
        + ',\n  "buckets": '
        + _block([dump(c) for c in prof["buckets"]], "[]", "   ", "  ")
        + "\n }",
    ]
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _block(items: list[str], brackets: str, indent: str, close_indent: str) -> str:
    if not items:
        return brackets
    return brackets[0] + "\n" + ",\n".join(indent + x for x in items) + "\n" + close_indent + brackets[1]


def main(argv: list[str]) -> int:
    from vector_sources import VECTORS  # the inputs, kept apart from the derivation

    check = "--check" in argv
    stale = []
    for vector in VECTORS:
        path = HERE / vector.get("folder", ".") / f"{vector['name']}.json"
        text = render(vector)
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(HERE)))
        else:
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print("stale vectors (run python tests/vectors/derive.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main(sys.argv[1:]))
