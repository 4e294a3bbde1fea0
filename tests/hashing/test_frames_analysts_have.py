"""Frames as pandas and polars hand them over, hashed through ``hash_frame`` and ``profile_frame``, each compared with
the Arrow table (or the pandas frame) of the same values (docs/rows-v1.md section 7): the same hash, or a HashError
naming the column and its type.

Bugs found here, each with a test that failed before its fix:

- a pandas ``category`` of Python objects (Decimal, mixed kinds, naive and aware datetimes) took its type from every
  category, the unused ones too: ``Decimal("1.5")`` in a column whose categories also held ``Decimal("100.125")``
  hashed as ``decimal(6,3)`` (``1.500``), not as the ``decimal(2,1)`` of the same values in an object column, and an
  unused category of another kind made the column unhashable. Section 7: values no row uses play no part.
- a polars ``LazyFrame`` was refused as a malformed port frame (after resolving its schema, with polars'
  PerformanceWarning); it is now collected, as the polars engine collects one.

The rest pins what already held (one table, every engine alike) so that it keeps holding.
"""

from __future__ import annotations

import datetime as dt
import decimal
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ubunye.exceptions import HashError
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.profile import profile_frame
from ubunye.hashing.types import parse_schema

try:  # an extra: the floors venvs (make floors) have no polars
    import polars as pl
except ImportError:
    pl = None
needs_polars = pytest.mark.skipif(pl is None, reason="polars is an extra; this venv (make floors) has no polars")

D = decimal.Decimal


def _alike(*frames: object) -> None:
    """Every frame has one hash, one profile (with a key and buckets) and the same lines as the first."""
    first = frames[0]
    want = hash_frame(first)
    key = [parse_schema(want.schema)[0][0]]  # the first column (in code point order)
    want_profile = profile_frame(first, key=key, buckets=8)
    for frame in frames[1:]:
        assert hash_frame(frame) == want
        assert sorted(canonical_lines(frame)) == sorted(canonical_lines(first))
        assert profile_frame(frame, key=key, buckets=8) == want_profile


# --- pandas category of Python objects: the type of the values rows use -------------------------------------------


@pytest.mark.parametrize(
    ("rows", "categories", "arrow"),
    [
        ([D("1.5"), None], [D("1.5"), D("100.125")], pa.array([D("1.5"), None], pa.decimal128(2, 1))),
        ([D("1.5"), D("1.5")], [D("100.125"), D("1.5")], pa.array([D("1.5"), D("1.5")], pa.decimal128(2, 1))),
        (["a", None, "a"], ["a", 1], pa.array(["a", None, "a"])),
        (
            [dt.datetime(2024, 1, 1), None],
            [dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)],
            pa.array([dt.datetime(2024, 1, 1), None], pa.timestamp("us")),
        ),
        ([(1, 2), None], [(1, 2), ("x",)], pa.array([[1, 2], None])),
    ],
    ids=["decimal-unused-wider", "decimal-all-rows-one-value", "unused-int-beside-str", "unused-aware", "tuples"],
)
def test_an_object_category_has_the_type_of_the_values_rows_use(
    rows: list[object], categories: list[object], arrow: pa.Array
) -> None:
    category = pd.DataFrame({"c": pd.Categorical(rows, categories=categories)})
    plain = pd.DataFrame({"c": pd.Series(rows, dtype=object)})
    _alike(category, plain, pa.table({"c": arrow}), pd.DataFrame({"c": category["c"].astype(object)}))


def test_an_object_category_no_row_uses_keeps_the_type_of_its_categories() -> None:
    frame = pd.DataFrame({"c": pd.Categorical([None, None], categories=[D("1.25"), D("-3.5")])})
    assert hash_frame(frame) == hash_frame(pa.table({"c": pa.array([None, None], pa.decimal128(3, 2))}))


def test_an_object_category_of_two_kinds_in_use_is_still_refused_naming_the_column() -> None:
    frame = pd.DataFrame({"c": pd.Categorical(["a", 1, "a"], categories=["a", 1, D("2")])})
    with pytest.raises(HashError, match=r"column 'c' of dtype object: .*found int, str"):
        hash_frame(frame)


def test_a_category_of_typed_values_keeps_its_dtype_whatever_is_used() -> None:
    # int64, float and datetime categories carry their type: unused ones change nothing there
    frame = pd.DataFrame({"c": pd.Categorical([1, None], categories=[1, 2**40])})
    _alike(frame, pd.DataFrame({"c": pd.array([1, None], dtype="Int64")}), pa.table({"c": pa.array([1, None])}))
    unsigned = pd.DataFrame({"c": pd.Categorical([1, None], categories=pd.Index([1, 2], dtype="uint8"))})
    # (pandas 1.5 has no uint8 Index: its categories are uint64 there)
    with pytest.raises(HashError, match=r"column 'c' of dtype uint(8|64): unsigned"):
        hash_frame(unsigned)


# --- pandas dtypes an analyst has, against Arrow ---------------------------------------------------------------------


def test_pandas_nullable_and_string_dtypes_hash_like_arrow() -> None:
    arrow = pa.table(
        {
            "i": pa.array([1, None, -3], pa.int8()),
            "f": pa.array([1.5, None, -0.0], pa.float32()),
            "b": pa.array([True, None, False]),
            "s": pa.array(["a", None, "ü"]),
        }
    )
    for strings in ("string[python]", "string[pyarrow]", object):
        frame = pd.DataFrame(
            {
                "i": pd.array([1, None, -3], dtype="Int8"),
                "f": pd.array([1.5, None, -0.0], dtype="Float32"),
                "b": pd.array([True, None, False], dtype="boolean"),
                "s": pd.Series(["a", None, "ü"], dtype=strings),
            }
        )
        _alike(arrow, frame)


def test_a_dst_ambiguous_wall_time_is_two_instants() -> None:
    wall = pd.Series(pd.to_datetime(["2024-10-27 02:30", "2024-10-27 02:30"]))
    berlin = wall.dt.tz_localize("Europe/Berlin", ambiguous=np.array([True, False]))
    utc = [dt.datetime(2024, 10, 27, 0, 30), dt.datetime(2024, 10, 27, 1, 30)]
    arrow = pa.table({"t": pa.array(utc, pa.timestamp("us", "UTC"))})
    frames: list[object] = [pd.DataFrame({"t": berlin})]
    if pl is not None:
        frames.append(pl.DataFrame({"t": berlin}))
    _alike(arrow, *frames)
    assert canonical_lines(arrow) == ['{"t":"2024-10-27T00:30:00.000000Z"}', '{"t":"2024-10-27T01:30:00.000000Z"}']


@pytest.mark.parametrize(
    ("column", "dtype"),
    [
        (pd.period_range("2024-01", periods=2, freq="M"), "period"),
        (pd.interval_range(0, 2), "interval"),
        (pd.to_timedelta([1, 2], unit="s"), "timedelta64"),
        (pd.arrays.SparseArray([0, 1.0]), "Sparse"),
    ],
    ids=["period", "interval", "timedelta", "sparse"],
)
def test_pandas_dtypes_without_a_rows_v1_type_name_column_and_dtype(column: object, dtype: str) -> None:
    with pytest.raises(HashError, match=rf"column 'p' of dtype {dtype}"):
        hash_frame(pd.DataFrame({"p": column}))


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")]), r"column \('a', 'x'\) is a tuple"),
        ([0, 1], "column 0 is a int"),
        (["a", "a"], "two columns named 'a'"),
    ],
    ids=["multiindex", "ints", "duplicates"],
)
def test_column_names_that_are_not_unique_strings_are_refused(columns: object, message: str) -> None:
    with pytest.raises(HashError, match=message):
        hash_frame(pd.DataFrame([[1, 2]], columns=columns))


def test_the_index_is_not_data() -> None:
    named = pd.DataFrame({"a": [1, 2]}, index=pd.Index([5, 6], name="id"))
    assert hash_frame(named) == hash_frame(pd.DataFrame({"a": [1, 2]}))
    assert hash_frame(named.reset_index()) == hash_frame(pa.table({"id": [5, 6], "a": [1, 2]}))


# --- polars types against Arrow and pandas ----------------------------------------------------------------------------


@needs_polars
def test_polars_dictionaries_decimals_and_arrays_hash_like_arrow() -> None:
    strings = ["a", None, "b", "a"]
    frame = pl.DataFrame(
        {
            "cat": pl.Series(strings, dtype=pl.Categorical),
            "enum": pl.Series(strings, dtype=pl.Enum(["b", "a", "unused"])),
            "dec": pl.Series([D("1.50"), None, D("-0.25"), D("0")], dtype=pl.Decimal(38, 10)),
            "arr": pl.Series([[1, None], None, [None, None], [3, 4]], dtype=pl.Array(pl.Int64, 2)),
            "st": pl.Series(
                [{"e": ["a", None]}, None, {"e": None}, {"e": []}], dtype=pl.Struct({"e": pl.List(pl.Enum(["a"]))})
            ),
        }
    )
    arrow = pa.table(
        {
            "cat": pa.array(strings),
            "enum": pa.array(strings),
            "dec": pa.array([D("1.50"), None, D("-0.25"), D("0")], pa.decimal128(38, 10)),
            "arr": pa.array([[1, None], None, [None, None], [3, 4]]),
            "st": pa.array(
                [{"e": ["a", None]}, None, {"e": None}, {"e": []}], pa.struct([("e", pa.list_(pa.string()))])
            ),
        }
    )
    _alike(arrow, frame, frame.to_pandas(use_pyarrow_extension_array=True))


@needs_polars
@pytest.mark.parametrize("unit", ["ns", "us", "ms"])
@pytest.mark.parametrize("zone", [None, "UTC", "America/New_York"])
def test_polars_datetimes_of_every_unit_hash_like_pandas(unit: str, zone: str | None) -> None:
    wall = [dt.datetime(2024, 3, 10, 1, 30, 0, 123000), None, dt.datetime(1950, 1, 1)]
    frame = pl.DataFrame({"t": pl.Series(wall, dtype=pl.Datetime(unit))})
    pandas = pd.DataFrame({"t": pd.Series(wall, dtype="datetime64[us]")})
    if zone is not None:
        frame = frame.with_columns(pl.col("t").dt.replace_time_zone(zone))
        pandas["t"] = pandas["t"].dt.tz_localize(zone)
    _alike(pandas, frame)


@needs_polars
def test_polars_floats_keep_nan_negative_zero_and_null_apart() -> None:
    values = [float("nan"), -0.0, 0.0, float("inf"), float("-inf"), None, 0.1]
    for polars_type, arrow_type in ((pl.Float32, pa.float32()), (pl.Float64, pa.float64())):
        arrow = pa.table({"f": pa.array(values, arrow_type, from_pandas=False)})
        _alike(arrow, pl.DataFrame({"f": pl.Series(values, dtype=polars_type)}))
        profile = profile_frame(pl.DataFrame({"f": pl.Series(values, dtype=polars_type)}), buckets=1)
        assert (profile.columns["f"].nulls, profile.columns["f"].nans) == (1, 1)


@needs_polars
@pytest.mark.parametrize(
    ("series", "message"),
    [
        (lambda: pl.Series([dt.time(1, 2)]), r"column 'x' of type time64\[ns\]: time-of-day"),
        (lambda: pl.Series([dt.timedelta(1)]), r"column 'x' of type duration\[us\]: durations"),
        (lambda: pl.Series([None, None]), "column 'x' of type null"),
        (lambda: pl.Series([[None]], dtype=pl.List(pl.Null)), r"field 'x\[\]' of type null"),
        (lambda: pl.Series([2**63 + 5], dtype=pl.UInt64), "column 'x' of type uint64: unsigned"),
        (lambda: pl.Series([2**100], dtype=pl.Int128), r"column 'x' of type Int128 \(Arrow format '_pli128'\)"),
        (lambda: pl.Series([1.0], dtype=pl.Float16), "column 'x' of type halffloat"),
        (lambda: pl.Series([object()], dtype=pl.Object), "column 'x' of polars type Object"),
    ],
    ids=["time", "duration", "null", "list-of-null", "uint64", "int128", "float16", "object"],
)
def test_polars_types_without_a_rows_v1_type_name_column_and_type(series: object, message: str) -> None:
    try:
        values = series()  # type: ignore[operator]
    except (TypeError, ValueError, AttributeError) as exc:  # a polars without this type
        pytest.skip(f"this polars cannot build it: {exc}")
    with pytest.raises(HashError, match=message):
        hash_frame(pl.DataFrame({"x": values}))


@needs_polars
def test_a_polars_lazy_frame_is_collected_and_hashed_as_its_rows() -> None:
    lazy = pl.LazyFrame({"a": [1, 2, 3]}).with_columns(b=pl.col("a") * 2).filter(pl.col("a") > 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no PerformanceWarning from resolving its schema
        assert hash_frame(lazy) == hash_frame(pa.table({"a": [2, 3], "b": [4, 6]}))
        assert profile_frame(lazy, key=["a"], buckets=4) == profile_frame(lazy.collect(), key=["a"], buckets=4)
        assert canonical_lines(lazy) == ['{"a":2,"b":4}', '{"a":3,"b":6}']


@needs_polars
def test_a_polars_lazy_frame_with_a_bad_column_still_names_it() -> None:
    with pytest.raises(HashError, match=r"column 't' of type time64"):
        hash_frame(pl.LazyFrame({"t": [dt.time(1)]}))


def test_a_series_or_an_array_is_one_column_not_a_table() -> None:
    # Arrow refused them as "ArrowSchema describes non-struct type int64", naming nothing the user wrote.
    import pandas as pd

    columns = [pd.Series([1, 2], name="a"), pa.array([1]), pa.chunked_array([[1]])]
    if pl is not None:  # polars is an extra (the floors venvs have none)
        columns.append(pl.Series("a", [1, 2]))
    for column in columns:
        with pytest.raises(HashError, match=r"rows-v1 hashes tables: a (pandas|polars|pyarrow)\.\w+ is one column"):
            hash_frame(column)
