"""Float and decimal text against the independent row-at-a-time reading of the spec (tests/vectors/derive.py)."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest

from tests.hashing.compat import import_or_skip
from tests.vectors.derive import java_decimal, java_float
from ubunye.hashing import canonical_lines, hash_frame, profile_frame
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


# decimal32 and decimal64 came with pyarrow 18 (an older pyarrow has none, so none can reach the twin there). Scales
# of 7 and more may need section 5.2's scientific form (|value| < 10^-6), which is where Arrow's kernels had none.
NARROW = [pytest.param(name, p, id=name) for name, p in (("decimal32", 9), ("decimal64", 18))]
needs_narrow = pytest.mark.skipif(not hasattr(pa, "decimal64"), reason=f"pyarrow {pa.__version__} has no decimal64")


def _narrow_texts(precision: int, scale: int) -> list[str]:
    tiny = str(decimal.Decimal(1).scaleb(-scale))  # the smallest step: scientific form once scale >= 7
    big = ("9" * (precision - scale) or "0") + ("." + "9" * scale if scale else "")  # the largest that fits
    ones = ["-2", "0.5" if scale else "1"] if precision > scale else ["0.5", "-0.25"]
    return ["0", tiny, "-" + tiny, *ones, big, "-" + big]


@needs_narrow
@pytest.mark.parametrize(("name", "precision"), NARROW)
def test_narrow_decimals_print_as_bigdecimal(name, precision):
    for scale in sorted({0, 2, 6, 7, 8, precision}):
        texts = _narrow_texts(precision, scale)
        arr = pa.array([decimal.Decimal(t) for t in texts] + [None], getattr(pa, name)(precision, scale))
        assert format_decimals(arr).to_pylist() == [java_decimal(t, scale) for t in texts] + [None], scale
        assert format_decimals(arr.slice(1, 2)).to_pylist() == [java_decimal(t, scale) for t in texts[1:3]], scale


@needs_narrow
@pytest.mark.parametrize(("name", "precision"), NARROW)
def test_narrow_decimals_hash_and_profile_as_decimal128(name, precision):
    scale = precision - 2
    texts = _narrow_texts(precision, scale)
    values = [decimal.Decimal(t) for t in texts] + [None]
    narrow = pa.table({"d": pa.array(values, getattr(pa, name)(precision, scale))})
    wide = pa.table({"d": pa.array(values, pa.decimal128(precision, scale))})
    assert canonical_lines(narrow) == canonical_lines(wide)
    assert hash_frame(narrow) == hash_frame(wide)
    assert profile_frame(narrow) == profile_frame(wide)
    nested = pa.table({"l": pa.ListArray.from_arrays(pa.array([0, 8], pa.int32()), narrow.column("d").chunk(0))})
    assert canonical_lines(nested) == ['{"l":[' + ",".join([java_decimal(t, scale) for t in texts] + ["null"]) + "]}"]
    pd = import_or_skip("pandas")
    assert hash_frame(narrow.to_pandas(types_mapper=pd.ArrowDtype)) == hash_frame(wide)
