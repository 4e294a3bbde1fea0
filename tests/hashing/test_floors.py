"""Where old numpy / pyarrow differ, the twin's text against the independent reference (tests/vectors/derive.py).

Measured for `make floors` (python/pyproject.toml's floors): pyarrow before 18 casts a decimal whose coefficient
has one digit to ``-1.E-7`` instead of BigDecimal's ``-1E-7`` (docs/rows-v1.md section 5.2), and numpy before 2
has no vectorised string functions (the float layout of section 5.1). These run on every venv, the floors too.
"""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest

from tests.vectors.derive import java_decimal, java_float
from ubunye.hashing import canonical_lines
from ubunye.hashing.numbers import format_decimals, format_floats
from ubunye.hashing.types import is_binary, is_list_view, is_string


def _decimal_texts(scale: int, precision: int, n: int, seed: int) -> list[str | None]:
    rng = np.random.default_rng(seed)
    out: list[str | None] = []
    for _ in range(n):
        # Mostly one- and two-digit coefficients: the scientific form (adjusted < -6) and its one-digit case.
        digits = int(rng.choice([1, 1, 2, 3, precision]))
        unscaled = int(rng.integers(0, 10 ** min(digits, 18))) * 10 ** max(0, digits - 18)
        sign = -1 if rng.random() < 0.5 else 1
        out.append(None if rng.random() < 0.1 else str(decimal.Decimal(sign * unscaled).scaleb(-scale)))
    return out


@pytest.mark.parametrize("make", [pa.decimal128, pa.decimal256], ids=["decimal128", "decimal256"])
@pytest.mark.parametrize(("precision", "scale"), [(10, 7), (38, 10), (38, 38), (7, 7), (8, 6), (19, 18)])
def test_small_decimals_are_written_as_bigdecimal_writes_them(make, precision, scale):
    texts = _decimal_texts(scale, precision, 400, seed=precision * 100 + scale)
    arr = pa.array([None if t is None else decimal.Decimal(t) for t in texts], make(precision, scale))
    want = [None if t is None else java_decimal(t, scale) for t in texts]
    assert format_decimals(arr).to_pylist() == want
    # A slice: the unscaled integers are read at the array's offset, not from the buffer's start.
    assert format_decimals(arr.slice(37)).to_pylist() == want[37:]


def test_one_digit_decimals_in_a_line():
    t = pa.decimal128(10, 7)
    table = pa.table({"d": pa.array([decimal.Decimal("-0.0000001"), decimal.Decimal("0"), None], t)})
    assert canonical_lines(table) == ['{"d":-1E-7}', '{"d":0E-7}', "{}"]


@pytest.mark.parametrize("bits", [32, 64])
def test_float_layout_outside_the_plain_range_on_slices_with_nulls(bits):
    dtype = np.float32 if bits == 32 else np.float64
    rng = np.random.default_rng(bits)
    values = (rng.standard_normal(3000) * 10.0 ** rng.integers(-45 if bits == 32 else -320, 38, 3000)).astype(dtype)
    values[::7] = 0.0
    values[1::11] = -0.0
    mask = rng.random(3000) < 0.1
    arr = pa.array(values, mask=mask)
    want = [None if m else java_float(float(v), bits) for v, m in zip(values, mask, strict=True)]
    assert format_floats(arr).to_pylist() == want
    assert format_floats(arr.slice(101, 500)).to_pylist() == want[101:601]


def test_type_checks_answer_for_types_an_old_pyarrow_lacks():
    # On pyarrow < 16 there is no view type to ask about; the checks still answer for every other type.
    assert is_string(pa.large_string()) and not is_string(pa.binary())
    assert is_binary(pa.binary(3)) and not is_binary(pa.string())
    assert not is_list_view(pa.list_(pa.int64()))
    if hasattr(pa, "list_view"):
        assert is_list_view(pa.list_view(pa.int64())) and is_string(pa.string_view()) and is_binary(pa.binary_view())
