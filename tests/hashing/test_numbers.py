"""Float and decimal text against the independent row-at-a-time reading of the spec (tests/vectors/derive.py)."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa

from tests.vectors.derive import java_decimal, java_float
from ubunye.hashing.numbers import format_decimals, format_floats


def _random_doubles(n: int, seed: int) -> np.ndarray:
    # Random bit patterns cover every exponent, subnormals included, far better than uniform floats do.
    bits = np.random.default_rng(seed).integers(0, 2**64, size=n, dtype=np.uint64)
    return bits.view(np.float64)


def test_float64_random_bit_patterns_match_reference():
    values = _random_doubles(20_000, 1)
    got = format_floats(pa.array(values, from_pandas=False)).to_pylist()
    want = [java_float(float(v), 64) for v in values]
    assert got == want


def test_float64_layout_boundaries_match_reference():
    edges = [1e-3, np.nextafter(1e-3, 0), 1e7, np.nextafter(1e7, 0), 5e-324, 1e-323, 2.2250738585072014e-308]
    values = np.array(edges + [-e for e in edges])
    assert format_floats(pa.array(values)).to_pylist() == [java_float(float(v), 64) for v in values]


def test_float32_random_bit_patterns_match_reference():
    bits = np.random.default_rng(2).integers(0, 2**32, size=20_000, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    got = format_floats(pa.array(values, from_pandas=False)).to_pylist()
    want = [java_float(float(v), 32) for v in values]
    assert got == want


def test_nulls_stay_null_and_nan_is_a_string():
    got = format_floats(pa.array([None, float("nan"), 1.0], pa.float64())).to_pylist()
    assert got == [None, '"NaN"', "1.0"]


def test_decimals_random_match_bigdecimal_reference():
    rng = np.random.default_rng(3)
    for precision, scale in [(38, 18), (38, 0), (10, 7), (20, 10), (5, 5), (12, 3)]:
        texts = []
        for _ in range(500):
            digits = int(rng.integers(1, precision + 1))
            unscaled = int(rng.integers(0, 10 ** min(digits, 18))) * (10 ** max(0, digits - 18))
            sign = -1 if rng.random() < 0.5 else 1
            texts.append(str(decimal.Decimal(sign * unscaled).scaleb(-scale)))
        arr = pa.array([decimal.Decimal(t) for t in texts], pa.decimal128(precision, scale))
        assert format_decimals(arr).to_pylist() == [java_decimal(t, scale) for t in texts], (precision, scale)
