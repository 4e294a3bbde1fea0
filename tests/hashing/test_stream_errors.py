"""Columns an Arrow stream producer exports in a format Arrow cannot import (polars Int128) are section-11 errors
naming the column and the type (docs/rows-v1.md section 11), never a raw ArrowInvalid."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pytest

from tests.hashing.compat import import_or_skip
from ubunye.exceptions import HashError
from ubunye.hashing import canonical_lines, hash_frame

pl = import_or_skip("polars")


@pytest.mark.parametrize(
    ("frame", "needle"),
    [
        (
            lambda: pl.DataFrame({"id": [1, 2], "big": pl.Series([1, -(2**100)], dtype=pl.Int128)}),
            "column 'big' of type Int128 (Arrow format '_pli128')",
        ),
        (lambda: pl.DataFrame({"u": pl.Series([1], dtype=pl.UInt128)}), "column 'u' of type UInt128"),
        (
            lambda: pl.DataFrame({"l": pl.Series([[1]], dtype=pl.List(pl.Int128))}),
            "field 'l[]' of column 'l' of type Int128",
        ),
        (
            lambda: pl.DataFrame(
                {"s": pl.Series([{"a": 1, "b": 2}], dtype=pl.Struct({"a": pl.Int64, "b": pl.Int128}))}
            ),
            "field 's.b' of column 's' of type Int128",
        ),
    ],
)
def test_int128_is_a_section_11_error_naming_column_and_type(frame, needle):
    for fn in (hash_frame, canonical_lines):
        with pytest.raises(HashError) as info:
            fn(frame())
        message = str(info.value)
        assert needle in message
        assert "integers wider than 64 bits are not rows-v1 types" in message
        assert "section 11" in message
        assert not isinstance(info.value, pa.ArrowException)


def test_the_suggested_casts_hash():
    frame = pl.DataFrame({"big": pl.Series([1, -(2**62), None], dtype=pl.Int128)})
    as_decimal = frame.with_columns(pl.col("big").cast(pl.Decimal(38, 0)))
    want = pa.table({"big": pa.array([decimal.Decimal(1), decimal.Decimal(-(2**62)), None], pa.decimal128(38, 0))})
    assert hash_frame(as_decimal) == hash_frame(want)
    assert hash_frame(frame.with_columns(pl.col("big").cast(pl.Int64))).schema == 'struct<"big":int64>'


def test_other_import_failures_become_hash_errors():
    class Broken:
        def __arrow_c_stream__(self, requested_schema=None):
            raise pa.ArrowInvalid("producer failed")

    with pytest.raises(HashError, match=r"cannot read the .*Broken through Arrow \(producer failed\)"):
        hash_frame(Broken())
