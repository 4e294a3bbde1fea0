"""pandas frames: every supported dtype hashes like the same data as Arrow; every refusal names the column."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ubunye.exceptions import HashError
from ubunye.hashing import canonical_lines, hash_frame


def _same(frame: pd.DataFrame, table: pa.Table) -> None:
    assert canonical_lines(frame) == canonical_lines(table)
    assert hash_frame(frame) == hash_frame(table)


def test_numpy_dtypes_match_arrow():
    frame = pd.DataFrame(
        {
            "i8": np.array([1, -2], dtype=np.int8),
            "i64": np.array([2**62, -1], dtype=np.int64),
            "f32": np.array([0.1, np.nan], dtype=np.float32),
            "f64": [1e23, np.nan],
            "b": [True, False],
        }
    )
    table = pa.table(
        {
            "i8": pa.array([1, -2], pa.int8()),
            "i64": pa.array([2**62, -1], pa.int64()),
            "f32": pa.array(np.array([0.1, np.nan], dtype=np.float32), from_pandas=False),
            "f64": pa.array([1e23, float("nan")], from_pandas=False),
            "b": [True, False],
        }
    )
    _same(frame, table)
    assert canonical_lines(frame)[1] == '{"b":false,"f32":"NaN","f64":"NaN","i64":-1,"i8":-2}'


def test_nullable_dtypes_keep_null_apart_from_nan():
    frame = pd.DataFrame(
        {
            "i": pd.array([1, None], dtype="Int64"),
            "f": pd.array([None, 2.5], dtype="Float64"),
            "b": pd.array([None, True], dtype="boolean"),
            "s": pd.array(["x", None], dtype="string"),
        }
    )
    table = pa.table(
        {
            "i": pa.array([1, None], pa.int64()),
            "f": pa.array([None, 2.5], pa.float64()),
            "b": pa.array([None, True]),
            "s": pa.array(["x", None]),
        }
    )
    _same(frame, table)
    assert canonical_lines(frame) == ['{"i":1,"s":"x"}', '{"b":true,"f":2.5}']


@pytest.mark.parametrize("dtype", ["str", "string[pyarrow]", "string[python]", object])
def test_string_dtypes(dtype):
    frame = pd.DataFrame({"s": pd.Series(["a", None, "é😀"], dtype=dtype)})
    _same(frame, pa.table({"s": pa.array(["a", None, "é😀"])}))


def test_datetimes_naive_and_zoned_ns_and_us():
    naive = pd.Series(pd.to_datetime(["2024-01-01 12:00:00.123456", None]))
    zoned = naive.dt.tz_localize("America/Sao_Paulo")
    frame = pd.DataFrame({"ntz": naive, "ts": zoned, "us": naive.astype("datetime64[us]")})
    lines = canonical_lines(frame)
    assert lines[0] == (
        '{"ntz":"2024-01-01T12:00:00.123456","ts":"2024-01-01T15:00:00.123456Z","us":"2024-01-01T12:00:00.123456"}'
    )
    assert lines[1] == "{}"
    assert hash_frame(frame).schema == 'struct<"ntz":timestamp_ntz,"ts":timestamp,"us":timestamp_ntz>'


def test_one_instant_in_several_zones_is_one_line():
    instant = pd.Timestamp("2024-06-01 10:00", tz="UTC")
    frames = [pd.DataFrame({"t": [instant.tz_convert(z)]}) for z in ["UTC", "Asia/Kolkata", "America/Sao_Paulo"]]
    assert len({hash_frame(f).data_hash for f in frames}) == 1


def test_categorical_hashes_as_its_values():
    frame = pd.DataFrame({"c": pd.Categorical(["b", "a", None, "b"])})
    _same(frame, pa.table({"c": pa.array(["b", "a", None, "b"])}))


def test_object_columns_of_one_kind():
    frame = pd.DataFrame(
        {
            "bytes": [b"\x00\xff", None],
            "date": [dt.date(2024, 2, 29), None],
            "dec": [decimal.Decimal("1.5"), decimal.Decimal("-12.25")],
            "dict": [{"a": 1, "b": "x"}, None],
            "list": [[1, 2], []],
        }
    )
    h = hash_frame(frame)
    assert h.schema == (
        'struct<"bytes":binary,"date":date,"dec":decimal(4,2),"dict":struct<"a":int64,"b":string>,"list":list<int64>>'
    )
    assert canonical_lines(frame) == [
        '{"bytes":"AP8=","date":"2024-02-29","dec":1.50,"dict":{"a":1,"b":"x"},"list":[1,2]}',
        '{"dec":-12.25,"list":[]}',
    ]


def test_arrow_dtype_columns_hash_as_their_arrow_type():
    t = pa.map_(pa.string(), pa.int64())
    frame = pd.DataFrame({"m": pd.Series([[("b", 2), ("a", 1)]], dtype=pd.ArrowDtype(t))})
    assert canonical_lines(frame) == ['{"m":{"a":1,"b":2}}']


def test_index_is_not_data():
    a = pd.DataFrame({"x": [1, 2]}, index=[10, 20])
    assert hash_frame(a) == hash_frame(pd.DataFrame({"x": [1, 2]}))


@pytest.mark.parametrize(
    ("frame", "needle"),
    [
        (pd.DataFrame({"mixed": ["a", 1]}), "column 'mixed' of dtype object"),
        (pd.DataFrame({"empty": [None, None]}), "column 'empty' of dtype object"),
        (pd.DataFrame({"u": np.array([1], dtype=np.uint32)}), "column 'u' of dtype uint32"),
        (pd.DataFrame({"td": pd.to_timedelta([1], unit="s")}), "column 'td' of dtype timedelta64"),
        (pd.DataFrame({"ns": pd.to_datetime(["2024-01-01 00:00:00.000000001"])}), "column 'ns' of type timestamp"),
        (pd.DataFrame([[1, 2]], columns=["a", "a"]), "two columns named 'a'"),
        (pd.DataFrame({"x": [1]}).rename(columns={"x": 5}), "column 5 is a int"),
        (pd.DataFrame({"p": pd.period_range("2024-01", periods=1, freq="M")}), "column 'p' of dtype period"),
    ],
)
def test_refusals_name_the_column_and_type(frame, needle):
    with pytest.raises(HashError, match="rows-v1") as info:
        hash_frame(frame)
    assert needle in str(info.value)


def test_arrow_refusals_name_nested_field():
    table = pa.table({"s": pa.array([{"d": 1}], pa.struct([("d", pa.duration("s"))]))})
    with pytest.raises(HashError, match=r"field 's\.d' of type duration\[s\]"):
        hash_frame(table)


def test_unknown_frame_kind_is_refused():
    with pytest.raises(HashError, match=r"cannot hash a builtins\.list"):
        hash_frame([1, 2])


@pytest.mark.parametrize(
    ("missing", "none"),
    [
        ([[pd.NA, 1], [2]], [[None, 1], [2]]),
        ([[pd.NaT, dt.datetime(2024, 1, 1)]], [[None, dt.datetime(2024, 1, 1)]]),
        ([{"a": pd.NA}, {"a": 1}], [{"a": None}, {"a": 1}]),
        ([{"l": [pd.NA, 1.5, float("nan")]}], [{"l": [None, 1.5, float("nan")]}]),
    ],
    ids=["list", "list-nat", "dict", "nested-nan-kept"],
)
def test_pandas_missing_values_inside_lists_and_dicts_are_nulls(missing, none):
    # Section 7: missing values take any place. Arrow took only None there (NA and NaT were refused); NaN stays NaN.
    got = canonical_lines(pd.DataFrame({"c": pd.Series(missing, dtype=object)}))
    assert got == canonical_lines(pd.DataFrame({"c": pd.Series(none, dtype=object)}))
    if any(isinstance(v, dict) and "l" in v for v in missing):  # NaN stays a value, beside the null NA became
        assert got == ['{"c":{"l":[null,1.5,"NaN"]}}']
