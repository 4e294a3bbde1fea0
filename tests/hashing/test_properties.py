"""The promises of the ADR as properties: order-free, column-order-free, sees any one-cell change."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ubunye.hashing import hash_frame

_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)
_row = st.tuples(
    st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
    st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
    st.one_of(st.none(), _text),
    st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(-5, 5)), max_size=3)),
)
_rows = st.lists(_row, min_size=1, max_size=20)


def _table(rows: list[tuple]) -> pa.Table:
    cols = list(zip(*rows, strict=True))
    return pa.table(
        {
            "i": pa.array(cols[0], pa.int64()),
            "f": pa.array(cols[1], pa.float64(), from_pandas=False),
            "s": pa.array(cols[2], pa.string()),
            "l": pa.array(cols[3], pa.list_(pa.int64())),
        }
    )


@settings(max_examples=60, deadline=None)
@given(_rows, st.randoms(use_true_random=False))
def test_row_order_does_not_matter(rows, rnd):
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    assert hash_frame(_table(shuffled)) == hash_frame(_table(rows))


@settings(max_examples=40, deadline=None)
@given(_rows, st.permutations(["i", "f", "s", "l"]))
def test_column_order_does_not_matter(rows, order):
    table = _table(rows)
    assert hash_frame(table.select(order)) == hash_frame(table)


@settings(max_examples=60, deadline=None)
@given(_rows, st.data())
def test_any_one_cell_change_changes_the_hash(rows, data):
    r = data.draw(st.integers(0, len(rows) - 1))
    c = data.draw(st.integers(0, 3))
    new = data.draw(_row)[c]
    old = rows[r][c]
    both_nan = isinstance(new, float) and isinstance(old, float) and math.isnan(new) and math.isnan(old)
    zero_sign_flip = isinstance(new, float) and new == 0.0 == old and math.copysign(1, new) != math.copysign(1, old)
    assume(not (new == old or both_nan) or zero_sign_flip)  # the same value again is no change: draw another
    changed = [list(x) for x in rows]
    changed[r][c] = new
    assert hash_frame(_table([tuple(x) for x in changed])) != hash_frame(_table(rows))


def test_null_and_nan_differ():
    a = pa.table({"f": pa.array([None], pa.float64())})
    b = pa.table({"f": pa.array([float("nan")], pa.float64(), from_pandas=False)})
    assert hash_frame(a).data_hash != hash_frame(b).data_hash


def test_negative_zero_is_not_zero():
    assert hash_frame(pa.table({"f": [-0.0]})) != hash_frame(pa.table({"f": [0.0]}))


@settings(max_examples=40, deadline=None)
@given(_rows)
def test_pandas_and_arrow_agree(rows):
    table = _table(rows)
    cols = list(zip(*rows, strict=True))
    frame = pd.DataFrame(
        {
            "i": pd.array(cols[0], dtype="Int64"),
            # Built from the Arrow array: pandas' own constructors turn NaN into NA for Arrow dtypes.
            "f": pd.Series(pd.arrays.ArrowExtensionArray(table.column("f"))),
            "s": pd.Series(list(cols[2]), dtype="string"),
            "l": pd.Series(pd.array(cols[3], dtype=pd.ArrowDtype(pa.list_(pa.int64())))),
        }
    )
    assert hash_frame(frame) == hash_frame(table)
