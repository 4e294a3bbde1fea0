"""Derive the rows-v1 conformance vectors' expected values, independently of the twin.

This is a deliberately plain, row-at-a-time reading of docs/rows-v1.md: Python ``decimal``, ``datetime``,
and ``hashlib``, text built by hand (no ``json.dumps`` for values, no pyarrow, no ubunye.hashing).
The twin (vectorised, Arrow-based) and the JVM aggregate are then tested against what this writes.

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

from ubunye.testing.vectors import parse_type

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
    """(digits, e10) with x ~ d.ddd x 10^e10, the fewest digits that round back to x in its width."""
    for prec in range(1, 18):
        text = f"{x:.{prec - 1}e}"
        back = float(text) if bits == 64 else _f32(float(text))
        if back == x:
            mant, exp = text.split("e")
            digits = mant.replace(".", "").rstrip("0") or "0"
            return digits, int(exp)
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
        return ts_text(dt.datetime.fromisoformat(v).astimezone(dt.UTC), zone=True)
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
                ktext = json.loads(ktext)  # unquote: a JSON string's text
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


def render(vector: dict[str, Any]) -> str:
    cols = [(c["name"], c["type"]) for c in vector["columns"]]
    exp = expected(cols, vector["rows"])

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
    ]
    return "{\n" + ",\n".join(parts) + "\n}\n"


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
