"""Floats and decimals as rows-v1 writes them: sections 5.1 and 5.2 of docs/rows-v1.md.

Arrow's cast to string gives the shortest round-trip digits (float32 digits for float32) and, for decimals,
exactly Java's ``BigDecimal.toString``. What is left is Java's layout of the float digits, done here with
numpy's vectorised string functions on the values outside the plain range.
"""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.dtypes import StringDType

# Below these magnitudes a float is subnormal: the only place Java's two-digit rule changes the digits.
_SMALLEST_NORMAL = {64: 2.2250738585072014e-308, 32: 1.1754943508222875e-38}


def _java_sci(text: np.ndarray) -> np.ndarray:
    """Shortest-digit texts (any layout, finite, non-zero) to Java's ``d.dddE[-]n``."""
    ns = np.strings
    neg = ns.startswith(text, "-")
    body = ns.lstrip(text, "-")
    mantissa, _, exp_text = ns.partition(body, np.array("e", dtype=StringDType()))
    exp = np.where(ns.str_len(exp_text) > 0, exp_text, "0").astype(np.int64)
    int_part, _, frac_part = ns.partition(mantissa, np.array(".", dtype=StringDType()))
    all_digits = ns.add(int_part, frac_part)
    stripped = ns.lstrip(all_digits, "0")
    leading_zeros = ns.str_len(all_digits) - ns.str_len(stripped)
    digits = ns.rstrip(stripped, "0")
    e10 = ns.str_len(int_part) + exp - leading_zeros - 1
    first = ns.slice(digits, 0, 1)
    rest = ns.slice(digits, 1, None)
    rest = np.where(ns.str_len(rest) > 0, rest, "0")
    out = ns.add(ns.add(ns.add(first, "."), rest), ns.add("E", e10.astype(StringDType())))
    return np.where(neg, ns.add("-", out), out)


def _digit_count(shortest: str) -> int:
    mantissa = shortest.lstrip("-").split("e")[0]
    return len(mantissa.replace(".", "").strip("0"))


def _two_digit_subnormal(value: float) -> str:
    """Java's rule for a one-digit shortest result: the closest two-digit decimal (subnormals only)."""
    exact = decimal.Decimal(value)
    ctx = decimal.Context(prec=2, rounding=decimal.ROUND_HALF_EVEN)
    two = ctx.plus(exact)
    sign, digits, exponent = two.as_tuple()
    d = "".join(map(str, digits)).ljust(2, "0")
    e10 = exponent + len(digits) - 1
    text = f"{d[0]}.{d[1]}E{e10}"
    return ("-" if sign else "") + text


def format_floats(arr: pa.Array) -> pa.Array:
    """Vectorised rows-v1 text of a float32/float64 Arrow array; nulls stay null.

    Example:
        >>> import pyarrow as pa
        >>> format_floats(pa.array([1e23, 0.001, 1234567.0, -0.0, float("nan"), 5e-324])).to_pylist()
        ['1.0E23', '0.001', '1234567.0', '-0.0', '"NaN"', '4.9E-324']
    """
    bits = 32 if pa.types.is_float32(arr.type) else 64
    values = arr.to_numpy(zero_copy_only=False)
    with np.errstate(invalid="ignore"):
        mag = np.abs(values.astype(np.float64))
        plain = ((mag >= 1e-3) & (mag < 1e7)) | (mag == 0)
    shortest = pc.cast(arr, pa.string())
    # Plain range: Arrow prints the same digits without Java's ".0" on integral values.
    has_point = pc.match_substring(shortest, ".")
    if pc.all(has_point).as_py() is False:
        out = pc.if_else(has_point, shortest, pc.binary_join_element_wise(shortest, ".0", ""))
    else:
        out = shortest
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    special = (np.isnan(values) | np.isinf(values)) & valid
    if special.any():
        names = np.where(np.isnan(values), '"NaN"', np.where(values > 0, '"Infinity"', '"-Infinity"'))
        out = pc.if_else(pa.array(special), pa.array(names.astype(object), pa.string()), out)
    other = ~plain & ~special & valid
    if other.any():
        idx = np.flatnonzero(other)
        texts = np.asarray(pc.take(shortest, pa.array(idx)).to_numpy(zero_copy_only=False)).astype(StringDType())
        sci = _java_sci(texts)
        tiny = mag[idx] < _SMALLEST_NORMAL[bits]
        for j in np.flatnonzero(tiny):
            if _digit_count(str(texts[j])) == 1:
                sci[j] = _two_digit_subnormal(float(values[idx[j]]))
        mask = np.zeros(len(values), dtype=bool)
        mask[idx] = True
        out = pc.replace_with_mask(out, pa.array(mask), pa.array(sci.astype(object), pa.string()))
    return out


def format_decimals(arr: pa.Array) -> pa.Array:
    """rows-v1 text of a decimal Arrow array (Java ``BigDecimal.toString`` at the column's scale).

    Example:
        >>> import pyarrow as pa
        >>> from decimal import Decimal
        >>> format_decimals(pa.array([Decimal("0")], pa.decimal128(38, 10))).to_pylist()
        ['0E-10']
    """
    # Arrow's decimal-to-string follows BigDecimal.toString (plain if adjusted >= -6, else d.dddE-n);
    # the conformance vectors pin this against an independent derivation.
    return pc.cast(arr, pa.string())
