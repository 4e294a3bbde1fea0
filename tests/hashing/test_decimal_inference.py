"""pandas object columns of Decimal get the decimal(p,s) pyarrow infers (docs/rows-v1.md section 7)."""

from __future__ import annotations

import decimal
import random

import pandas as pd
import pyarrow as pa
import pytest

from ubunye.exceptions import HashError
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.pandas_frame import pandas_to_arrow

D = decimal.Decimal
THIRTY_EIGHT = "0." + "12345678901234567890123456789012345678"


def _object(values: list[decimal.Decimal | None]) -> pd.DataFrame:
    return pd.DataFrame({"d": pd.Series(values, dtype=object)})


@pytest.mark.parametrize(
    ("values", "want"),
    [
        (["0.5"], "decimal(1,1)"),
        (["0E-18"], "decimal(18,18)"),
        ([THIRTY_EIGHT], "decimal(38,38)"),
        (["-" + THIRTY_EIGHT, "0.1"], "decimal(38,38)"),
        (["0"], "decimal(1,0)"),
        (["7", "-9"], "decimal(1,0)"),
        (["0.0"], "decimal(1,1)"),
        (["-0.00"], "decimal(2,2)"),
        (["0", "0.5"], "decimal(2,1)"),  # the zero has one integer digit (its coefficient digit), as in pyarrow
        (["1E+2"], "decimal(3,0)"),
        (["0E+3"], "decimal(4,0)"),
        (["123.45", "0.001"], "decimal(6,3)"),
        (["1.50", "-12.25"], "decimal(4,2)"),
        (["1E+37"], "decimal(38,0)"),
    ],
)
def test_pandas_infers_what_pyarrow_infers(values, want):
    decimals = [D(v) for v in values]
    frame, table = _object([*decimals, None]), pa.table({"d": pa.array([*decimals, None])})
    assert hash_frame(frame).schema == f'struct<"d":{want}>'
    assert canonical_lines(frame) == canonical_lines(table)
    assert hash_frame(frame) == hash_frame(table)


def test_the_issue_values_print_as_their_type_says():
    assert canonical_lines(_object([D("0.5")])) == ['{"d":0.5}']
    assert canonical_lines(_object([D("0E-18")])) == ['{"d":0E-18}']
    assert canonical_lines(_object([D(THIRTY_EIGHT)])) == ['{"d":' + THIRTY_EIGHT + "}"]


@pytest.mark.parametrize(("values", "need"), [(["1E+38"], "decimal(39,0)"), ([THIRTY_EIGHT, "1"], "decimal(39,38)")])
def test_above_38_is_refused_naming_column_and_need(values, need):
    with pytest.raises(HashError, match=r"column 'd' of dtype object") as info:
        hash_frame(_object([D(v) for v in values]))
    assert need in str(info.value)


def test_random_columns_agree_with_pyarrow():
    rng = random.Random(7)

    def value() -> decimal.Decimal:
        digits = "".join(rng.choice("0123456789") for _ in range(rng.choice([1, 1, 2, 5, 18, 30, 38])))
        return D(f"{rng.choice(['', '-'])}{digits}E{rng.randint(-40, 4)}")

    checked = 0
    for _ in range(3000):
        values = [value() for _ in range(rng.randint(1, 4))]
        try:
            inferred = pa.array(values).type
        except pa.ArrowInvalid:  # above decimal256's 76 digits
            inferred = pa.decimal256(76, 0)
        if inferred.precision > 38:
            with pytest.raises(HashError):
                pandas_to_arrow(_object(values))
            continue
        assert pandas_to_arrow(_object(values)).column("d").type == inferred, values
        checked += 1
    assert checked > 1000
