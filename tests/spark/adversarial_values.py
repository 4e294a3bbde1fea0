"""Adversarial values for the rows-v1 line writers, and an independent text of floats (docs/rows-v1.md 5.1).

Shared by tests/spark/test_jvm_writer_adversarial.py (the main suite) and tests/lines/test_line_writer_adversarial.py
(the other Spark lines, whose venvs have no Hypothesis): cells in the conformance vectors' JSON form (section 10),
so tests/vectors/derive.py derives their lines independently of every engine.
"""

from __future__ import annotations

import decimal
import math
import random
import struct
from typing import Any

import numpy as np


def chunks(cells: list[Any], size: int) -> list[list[Any]]:
    return [cells[i : i + size] for i in range(0, len(cells), size)]


def pad(columns: list[list[Any]]) -> list[list[Any]]:
    """Columns of cells (lists of unequal length) as rows, shorter columns padded with nulls."""
    n = max(len(c) for c in columns)
    return [[c[i] if i < len(c) else None for c in columns] for i in range(n)]


def shortest(x: float, bits: int) -> tuple[str, int]:
    """(digits, e10), x ~ d.ddd x 10^e10: the shortest decimal that reads back as x in its width, the closest to x
    of those. Python's repr for float64 and numpy's Dragon4 in unique mode for float32; both take the rounding
    interval as it is, so a power of two (whose interval is narrower below than above) gets its shortest digits."""
    text = repr(x) if bits == 64 else np.format_float_scientific(np.float32(x), unique=True, trim="-")
    mant, _, exp = text.lower().partition("e")
    ip, _, fp = mant.partition(".")
    digits = (ip + fp).lstrip("0")
    lead = len(ip + fp) - len(digits)  # zeros before the first significant digit
    e10 = len(ip) - 1 - lead + (int(exp) if exp else 0)
    return digits.rstrip("0") or "0", e10


def java_float(x: float, bits: int) -> str:
    """Section 5.1 from the digits of :func:`shortest`: the two-digit rule, then Double.toString's layout."""
    if math.isnan(x):
        return '"NaN"'
    if math.isinf(x):
        return '"Infinity"' if x > 0 else '"-Infinity"'
    if x == 0:
        return "-0.0" if math.copysign(1, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    digits, e10 = shortest(abs(x), bits)
    if len(digits) == 1:  # the closest two-digit decimal, its trailing zero dropped
        two = decimal.Context(prec=2, rounding=decimal.ROUND_HALF_EVEN).plus(decimal.Decimal(abs(x))).as_tuple()
        assert isinstance(two.exponent, int)
        digits = "".join(map(str, two.digits)).rstrip("0") or "0"
        e10 = two.exponent + len(two.digits) - 1
    if 0 <= e10 < 7:
        return f"{sign}{digits[: e10 + 1].ljust(e10 + 1, '0')}.{digits[e10 + 1 :] or '0'}"
    if -3 <= e10 < 0:
        return f"{sign}0.{'0' * (-e10 - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e10}"


def powers_of_two() -> list[tuple[float, int]]:
    doubles = [(math.ldexp(1.0, e), 64) for e in range(-1074, 1024)]
    floats = [(math.ldexp(1.0, e), 32) for e in range(-149, 128)]
    return doubles + floats


def double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits & (2**64 - 1)))[0]


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def float32(bits: int) -> float:
    return float(np.array([bits & 0xFFFFFFFF], dtype=np.uint32).view(np.float32)[0])


def f32_bits(x: float) -> int:
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def neighbours(x: float, k: int) -> list[float]:
    b = f64_bits(x)
    return [double(b + d) for d in range(-k, k + 1) if 0 <= b + d < 0x7FF0000000000000]


def adversarial_doubles(seed: int = 20261204, n_random: int = 600) -> list[float]:
    """Every class of double: specials, the smallest subnormals (the two-digit rule), the largest subnormal and the
    smallest normal, every power of two (the asymmetric interval), powers of ten and their neighbours, integers
    near 2^53 and 2^63, the plain/scientific edges 1e-3 and 1e7, short decimals at every decade (the s >= 100
    branch and trailing zeros), and random bit patterns; each with its negation."""
    rng = random.Random(seed)
    out = [0.0, -0.0, math.nan, math.inf, -math.inf, 1e23, 2.82879384806159e17, 1.9400994884341945e25]
    out += [double(t) for t in range(1, 64)]  # 4.9E-324, 9.9E-324, 1.5E-323, ...
    out += [double(t) for t in (99, 100, 101, 1000, 2**20, 2**51, 2**52 - 1)]
    out += neighbours(2.2250738585072014e-308, 3)  # the smallest normal
    out += [math.ldexp(1.0, e) for e in range(-1074, 1024, 7)]
    out += [
        x for e in (-1022, -1021, -1000, -1, 0, 1, 52, 53, 54, 63, 64, 1023) for x in neighbours(math.ldexp(1.0, e), 1)
    ]
    for k in [*list(range(-324, 309, 17)), -5, -4, -3, -2, -1, 0, 1, 5, 6, 7, 8, 15, 16, 17, 18, 19, 22, 23]:
        out += neighbours(float(f"1e{k}"), 2)
        for digits in (1, 2, 3, 9, 15, 16, 17):
            s = str(rng.randint(10 ** (digits - 1), 10**digits - 1))
            out += neighbours(float(f"{s}e{k - digits + 1}"), 1)
    out += [float(2**53 + i) for i in range(-4, 5)] + [float(2**63 + i * 2048) for i in range(-2, 3)]
    out += [float(10**k + i) for k in (7, 15, 16) for i in (-1, 0, 1)]
    out += neighbours(1e-3, 4) + neighbours(1e7, 4) + neighbours(9999999.999999998, 2)
    out += [123000.0, 1.5e20, 1e22, 0.25, 0.1, 1 / 3, 2 / 3, 1234567.0, 1234567.125, 0.0012345]
    out += [1.7976931348623157e308, double(0x000FFFFFFFFFFFFF)]
    out += [double(rng.getrandbits(64)) for _ in range(n_random)]
    out += [double(rng.getrandbits(52)) for _ in range(100)]  # random subnormals
    return out + [-x for x in out]


def adversarial_floats(seed: int = 17, n_random: int = 600) -> list[float]:
    """The float32 classes: every subnormal significand below 40 (the two-digit rule is below 8), the smallest
    normal, powers of two, powers of ten and neighbours, the 1e-3 and 1e7 edges, 2^24 and random bits."""
    rng = random.Random(seed)
    bits = [*list(range(1, 40)), 8388607, 8388608, 8388609, 2139095039, 2147483648]
    bits += [f32_bits(math.ldexp(1.0, e)) for e in range(-149, 128, 3)]
    for k in range(-45, 39):
        b = f32_bits(float(f"1e{k}"))
        bits += [b + d for d in (-1, 0, 1) if 0 <= b + d < 0x7F800000]
    for edge in (1e-3, 1e7, 16777216.0, 0.1, 3.4028234663852886e38):
        b = f32_bits(edge)
        bits += [b + d for d in range(-3, 4) if 0 <= b + d < 0x7F800000]
    bits += [rng.getrandbits(32) for _ in range(n_random)]
    out = [float32(b) for b in bits] + [math.nan, math.inf, -math.inf]
    return out + [-x for x in out]


def fcell(x: float) -> dict[str, str]:
    """A float cell: repr round-trips the double exactly (float32 values are exact doubles)."""
    return {
        "float": "NaN" if math.isnan(x) else "Infinity" if x == math.inf else "-Infinity" if x == -math.inf else repr(x)
    }


def unscaled_candidates(seed: int) -> list[int]:
    """Unscaled values at every byte-width edge of their two's complement (1, 8 bytes exactly, 9+), the 2^62 edge
    of the jar's Long fast path, powers of ten and their neighbours, and random ones up to 127 bits."""
    rng = random.Random(seed)
    out = {0, 1, -1, 5, -5}
    for b in (7, 8, 15, 16, 31, 32, 55, 56, 61, 62, 63, 64, 65, 71, 72, 100, 120, 126):
        for d in (-1, 0, 1):
            out |= {2**b + d, -(2**b) + d, -(2**b) - d}
    for k in range(0, 39):
        for d in (-1, 0, 1):
            out |= {10**k + d, -(10**k) - d}
    out |= {rng.getrandbits(rng.randint(1, 126)) * rng.choice((1, -1)) for _ in range(30)}
    return sorted(out)


def dcell(u: int, scale: int) -> dict[str, str]:
    """A decimal cell: the value u x 10^-scale as exact text (scientific, so no context rounds it)."""
    return {"decimal": f"{u}E-{scale}"}


def decimal_types() -> list[tuple[int, int]]:
    types = [(1, 0), (1, 1), (9, 4), (18, 0), (18, 6), (18, 7), (18, 18)]
    for p in range(19, 39):
        for s in sorted({0, 1, 7, 18, 19, p // 2, p}):
            if s <= p:
                types.append((p, s))
    return types


SPECIAL = [
    '"',
    "\\",
    "\x00",
    "\x01",
    "\x08",
    "\t",
    "\n",
    "\x0b",
    "\x0c",
    "\r",
    "\x1f",
    "\x7f",
    "/",
    "é",
    "€",
    "😀",
    "\u2028",
    "\ufffd",
    "\uffff",
]


BAD_BYTES = ["FF", "C3", "80", "E282", "EDA080", "EDBFBF", "F09F98", "F4908080", "C080", "E08080", "C2"]


def strings_every_length_and_position() -> list[str]:
    """Every length 0..40 with one special character at every position, and all-special strings: the 8-byte
    words and the overlapping last word see each byte at each offset."""
    out = [""]
    for n in range(1, 41):
        base = "".join(chr(ord("a") + i % 26) for i in range(n))
        out.append(base)
        for i in range(n):
            for ch in SPECIAL:
                out.append(base[:i] + ch + base[i + 1 :])
    for ch in SPECIAL:
        out += [ch * n for n in (1, 7, 8, 9, 15, 16, 17, 33)]
    return out


def bad_strings() -> list[dict[str, str]]:
    """Invalid UTF-8 after i ASCII bytes and before n - i more (plain or ones that need escaping): every i for
    n up to 24, and for n up to 40 the positions around each 8-byte word edge and the last word."""
    out = []
    for n in range(0, 41):
        edges = {0, 1, 6, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, *range(n - 9, n + 1)}
        for i in range(n + 1) if n <= 24 else sorted(e for e in edges if 0 <= e <= n):
            for bad in BAD_BYTES:
                for fill in ("61", "22" if i % 3 == 0 else "5C" if i % 3 == 1 else "0A"):
                    out.append({"string_bytes": "61" * i + bad + fill * (n - i)})
    return out
