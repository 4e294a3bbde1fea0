"""Floats and decimals as rows-v1 writes them: sections 5.1 and 5.2 of docs/rows-v1.md.

Arrow's cast to string gives the shortest round-trip digits (float32 digits for float32): the same text on
every pyarrow from 14 to 26 (measured on 470,000 values of every exponent). Java's layout of those digits is
written here with Arrow's string kernels (numpy 1.x has no vectorised string functions to do it with). Decimals:
Arrow's plain text, and section 5.2's scientific form written here (pyarrow before 18 casts -1E-7 to ``-1.E-7``).
"""

from __future__ import annotations

import decimal
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# Below these magnitudes a float is subnormal: the only place Java's two-digit rule changes the digits.
_SMALLEST_NORMAL = {64: 2.2250738585072014e-308, 32: 1.1754943508222875e-38}
# Any text Arrow writes for a finite float: optional sign, digits, optional fraction, optional exponent.
_FLOAT_TEXT = r"^(?P<neg>-?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?:e(?P<exp>[-+]?[0-9]+))?$"


def _lengths(arr: pa.Array) -> np.ndarray:
    """Code-point lengths of a string array without nulls, as int64."""
    return np.asarray(pc.utf8_length(arr).to_numpy(zero_copy_only=False), dtype=np.int64)


def _int_text(values: np.ndarray) -> pa.Array:
    return pc.cast(pa.array(values, pa.int64()), pa.string())


def _java_sci(text: pa.Array) -> pa.Array:
    """Shortest-digit texts (any layout, finite, non-zero, no nulls) to Java's ``d.dddE[-]n`` (section 5.1)."""
    parts = pc.extract_regex(text, _FLOAT_TEXT)
    neg, int_part = parts.field("neg"), parts.field("int")
    exp_text = pc.replace_substring(parts.field("exp"), "+", "")
    exp = pc.cast(pc.if_else(pc.equal(exp_text, ""), "0", exp_text), pa.int64()).to_numpy(zero_copy_only=False)
    all_digits = pc.binary_join_element_wise(int_part, parts.field("frac"), "")
    stripped = pc.utf8_ltrim(all_digits, characters="0")
    leading_zeros = _lengths(all_digits) - _lengths(stripped)
    digits = pc.utf8_rtrim(stripped, characters="0")
    e10 = _lengths(int_part) + exp - leading_zeros - 1
    rest = pc.utf8_slice_codeunits(digits, 1)
    rest = pc.if_else(pc.equal(rest, ""), "0", rest)
    first = pc.utf8_slice_codeunits(digits, 0, 1)
    return pc.binary_join_element_wise(neg, first, ".", rest, "E", _int_text(e10), "")


def _digit_count(shortest: str) -> int:
    mantissa = shortest.lstrip("-").split("e")[0]
    return len(mantissa.replace(".", "").strip("0"))


def _two_digit_subnormal(value: float) -> str:
    """Java's rule for a one-digit shortest result: the closest two-digit decimal (subnormals only)."""
    exact = decimal.Decimal(value)
    ctx = decimal.Context(prec=2, rounding=decimal.ROUND_HALF_EVEN)
    two = ctx.plus(exact)
    sign, digits, exponent = two.as_tuple()
    assert isinstance(exponent, int)  # a finite value: never "n", "N" or "F"
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
        mag = np.abs(values.astype(np.float64, copy=False))
        plain = ((mag >= 1e-3) & (mag < 1e7)) | (mag == 0)
    shortest = pc.cast(arr, pa.string())
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    special = ~np.isfinite(values) & valid
    # Plain range: Arrow prints the same digits without Java's ".0" on integral values, and those alone lack a
    # point there (decimal notation, shortest digits). Told from the values, not by a search of every text;
    # texts outside the range are replaced below whatever they hold.
    with np.errstate(invalid="ignore"):
        integral = plain & valid & ~special & (values == np.trunc(values))
    if integral.any():
        out = pc.if_else(pa.array(integral), pc.binary_join_element_wise(shortest, ".0", ""), shortest)
    else:
        out = shortest
    if special.any():
        names = np.where(np.isnan(values), '"NaN"', np.where(values > 0, '"Infinity"', '"-Infinity"'))
        out = pc.if_else(pa.array(special), pa.array(names.astype(object), pa.string()), out)
    other = ~plain & ~special & valid
    if other.any():
        idx = np.flatnonzero(other)
        texts = pc.take(shortest, pa.array(idx))
        sci = _java_sci(texts)
        tiny = np.flatnonzero(mag[idx] < _SMALLEST_NORMAL[bits])
        if len(tiny):
            fixed = sci.to_pylist()
            for j in tiny:
                if _digit_count(texts[int(j)].as_py()) == 1:
                    fixed[j] = _two_digit_subnormal(float(values[idx[j]]))
            sci = pa.array(fixed, pa.string())
        mask = np.zeros(len(values), dtype=bool)
        mask[idx] = True
        out = pc.replace_with_mask(out, pa.array(mask), sci)
    return out


def _scientific_decimals(arr: pa.Array) -> pa.Array:
    """Section 5.2's scientific form of non-null decimals with adjusted < -6, from their unscaled integers."""
    scale = arr.type.scale
    wide = arr if pa.types.is_decimal128(arr.type) else arr.cast(pa.decimal128(38, scale))
    # The same 128-bit values read at scale 0 are the unscaled integers u (value u x 10^-s).
    unscaled = pa.Array.from_buffers(pa.decimal128(38, 0), len(wide), wide.buffers(), offset=wide.offset)
    text = pc.cast(unscaled, pa.string())
    digits = pc.utf8_ltrim(text, characters="-")
    n = _lengths(digits)
    point = pc.if_else(pa.array(n > 1), ".", "")
    first, rest = pc.utf8_slice_codeunits(digits, 0, 1), pc.utf8_slice_codeunits(digits, 1)
    sign = pc.if_else(pc.starts_with(text, "-"), "-", "")
    return pc.binary_join_element_wise(sign, first, point, rest, "E", _int_text(n - 1 - scale), "")


def _plain_decimals(arr: pa.Array) -> pa.Array:
    """Arrow's text of a decimal array (the plain form), from the unscaled integers when each fits in 64 bits: an
    int64 cast and one inserted point cost about half of Arrow's decimal cast. Values with no more digits than the
    scale (written with leading zeros, ``0.05``) keep Arrow's own text; any other array is cast as it is."""
    t, n = arr.type, len(arr)
    scale = t.scale
    if not pa.types.is_decimal128(t) or not 0 <= scale <= 18 or n == 0 or sys.byteorder != "little":
        return pc.cast(arr, pa.string())
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=2 * n, offset=16 * arr.offset).reshape(n, 2)
    low = np.ascontiguousarray(words[:, 0])
    valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else None
    fits = words[:, 1] == (low >> 63)  # the high word only extends the sign: the value is the low word
    if not (fits.all() if valid is None else fits[valid].all()):
        return pc.cast(arr, pa.string())
    text = pc.cast(pa.array(low, pa.int64(), mask=None if valid is None else ~valid), pa.string())
    if scale == 0:
        return text
    # At least scale + 1 digits: the point goes `scale` places from the end, after a digit. (abs of -2^63 wraps
    # to a negative number, so that value is short here and keeps Arrow's text.)
    short = np.abs(low) < 10**scale
    if valid is not None:
        short &= valid
    text = pc.binary_replace_slice(text, -scale, -scale, ".")
    if short.any():
        mask = pa.array(short)
        text = pc.replace_with_mask(text, mask, pc.cast(arr.filter(mask), pa.string()))
    return text


def _as_decimal128(arr: pa.Array) -> pa.Array:
    """A decimal32/decimal64 array (pyarrow 18 and later) as decimal128 of the same precision and scale: the same
    values, and the type Arrow's kernels all take (``abs`` and ``less`` have none for the narrow ones). Told by
    bit width, not by ``pa.types.is_decimal32``, which older pyarrow lacks."""
    t = arr.type
    if t.bit_width < 128:
        return arr.cast(pa.decimal128(t.precision, t.scale))
    return arr


def format_decimals(arr: pa.Array) -> pa.Array:
    """rows-v1 text of a decimal Arrow array: Java's ``BigDecimal.toString`` at the column's scale (section 5.2).

    Arrow's cast writes the plain form (``adjusted >= -6``) as BigDecimal does, on every pyarrow measured (14 to
    26); the scientific form it writes differently before pyarrow 18 (``-1.E-7``), so those values, exactly the
    ones with ``|value| < 10^-6``, are written here from their unscaled integers.

    Example:
        >>> import pyarrow as pa
        >>> from decimal import Decimal
        >>> t = pa.decimal128(10, 7)
        >>> format_decimals(pa.array([Decimal("0"), Decimal("-0.0000001"), Decimal("1.5"), None], t)).to_pylist()
        ['0E-7', '-1E-7', '1.5000000', None]
    """
    arr = _as_decimal128(arr)
    text = _plain_decimals(arr)
    scale = arr.type.scale
    if scale < 7:  # adjusted = (digits of |u|) - 1 - s >= -s > -7: always plain
        return text
    # adjusted < -6 <=> |u| has at most s - 6 digits <=> |value| < 10^-6
    tiny = pc.fill_null(pc.less(pc.abs(arr), pa.scalar(decimal.Decimal(1).scaleb(-6), arr.type)), False)
    if not pc.any(tiny).as_py():
        return text
    return pc.replace_with_mask(text, tiny, _scientific_decimals(pc.filter(arr, tiny)))
