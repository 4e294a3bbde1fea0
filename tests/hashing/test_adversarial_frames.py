"""Frames an independent tester built to make the engines disagree or guess (docs/rows-v1.md sections 3, 5.3, 7, 9
and 11): pandas categories with missing values, tables of rows but no columns, polars ``Object`` columns, pandas
object columns of datetimes and lone surrogates, the port's silent coercions, and the object-column messages.

Where the bug was a disagreement, the engines are compared on the same table and against what
tests/vectors/derive.py (a hand-written reading of the spec, nothing of ubunye) derives for it.
"""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tests.vectors.derive import bucket_case, column_profile, expected, parse_type
from ubunye.exceptions import HashError
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.profile import bucket_of_rows, profile_frame, rows_in_buckets

try:  # an extra: the floors venvs (make floors) have no polars
    import polars as pl
except ImportError:
    pl = None
needs_polars = pytest.mark.skipif(pl is None, reason="polars is an extra; this venv (make floors) has no polars")

# --- 1. pandas category with missing values: nulls, as the same values as Arrow (plain or dictionary) ------------


def _derived(columns: list[tuple[str, str]], rows: list[list[object]]) -> tuple[str, int, dict[str, object]]:
    """data hash, row count and the first column's profile numbers, as derive.py writes them."""
    want = expected(columns, rows)
    name, tname = columns[0]
    col = column_profile(name, parse_type(tname), [r[0] for r in rows])
    return want["data_hash"], want["row_count"], col


@pytest.mark.parametrize(
    ("values", "tname", "cells"),
    [
        ([1.5, None], "float64", [{"float": "1.5"}, None]),
        ([True, None], "bool", [True, None]),
        ([1, None, 3], "int64", [1, None, 3]),
        (["a", None, "a"], "string", ["a", None, "a"]),
    ],
    ids=["float", "bool", "int-with-gap", "string"],
)
def test_pandas_category_missing_value_is_null_like_arrow(
    values: list[object], tname: str, cells: list[object]
) -> None:
    category = pd.DataFrame({"c": pd.Categorical(values)})
    plain = pa.table({"c": pa.array(values)})
    dictionary = pa.table({"c": pa.array(values).dictionary_encode()})
    data_hash, rows, col = _derived([("c", tname)], [[c] for c in cells])
    for frame in (category, plain, dictionary):
        h = hash_frame(frame)
        assert (h.data_hash, h.row_count) == (data_hash, rows)
        p = profile_frame(frame, buckets=1).columns["c"]
        assert (p.nulls, p.nans, p.fingerprint) == (col["nulls"], col["nans"], col["fingerprint"])
    assert canonical_lines(category) == canonical_lines(plain)


def test_pandas_category_all_missing_is_nulls_of_the_categories_type() -> None:
    frame = pd.DataFrame({"c": pd.Categorical([None, None], categories=pd.Index([], dtype="float64"))})
    data_hash, _rows, col = _derived([("c", "float64")], [[None], [None]])
    assert hash_frame(frame).data_hash == data_hash
    assert hash_frame(pa.table({"c": pa.array([None, None], pa.float64())})).data_hash == data_hash
    assert profile_frame(frame, buckets=0).columns["c"].nulls == col["nulls"] == 2


def test_pandas_category_of_unsupported_values_names_the_column() -> None:
    frame = pd.DataFrame({"c": pd.Categorical([1, "x", None])})  # object categories of two kinds
    with pytest.raises(HashError, match="'c'"):
        hash_frame(frame)


# --- 2. rows but no columns: each row is the line {} and counts ---------------------------------------------------


def _no_columns(kind: str) -> object:
    if kind == "polars":
        if pl is None:
            pytest.skip("polars is an extra; this venv (make floors) has no polars")
        return pl.DataFrame(height=3)
    return {
        "arrow": lambda: pa.table({"x": [1, 2, 3]}).drop_columns(["x"]),
        "record batch": lambda: pa.RecordBatch.from_pydict({"x": [1, 2, 3]}).select([]),
        "pandas": lambda: pd.DataFrame(index=range(3)),
    }[kind]()


@pytest.mark.parametrize("kind", ["arrow", "record batch", "polars", "pandas"])
def test_rows_without_columns_count_as_lines_of_nothing(kind: str) -> None:
    frame = _no_columns(kind)
    want = expected([], [[], [], []])
    h = hash_frame(frame)
    assert (h.schema, h.row_count, h.data_hash) == (want["schema"], 3, want["data_hash"])
    assert canonical_lines(frame) == want["lines"] == ["{}"] * 3
    assert canonical_lines(frame, limit=5) == ["{}"] * 3
    profile = profile_frame(frame, buckets=4)
    assert (profile.hash.row_count, profile.hash.data_hash) == (3, want["data_hash"])
    assert profile.columns == {}
    case = bucket_case([], [[], [], []], 4, None)
    assert profile.buckets is not None
    got = [[i, c, f"{s1:016x}", f"{s2:016x}"] for i, (c, s1, s2) in enumerate(profile.buckets.rows()) if c]
    assert got == case["buckets"]
    (bucket,) = {b[0] for b in case["buckets"]}
    assert list(bucket_of_rows(frame, buckets=4)) == [bucket] * 3
    assert len(rows_in_buckets(frame, [bucket], buckets=4)) == 3


def test_a_large_table_without_columns_counts_every_row() -> None:
    n = 65_536 + 5  # more than one batch: each slice must hold the rows left, not a whole batch
    frame = pd.DataFrame(index=range(n))
    assert hash_frame(frame).data_hash == expected([], [[]] * n)["data_hash"]
    assert profile_frame(frame, buckets=0).hash.row_count == n


# --- 3. polars Object: memory addresses are not data ----------------------------------------------------------------


@needs_polars
def test_polars_object_column_is_refused_naming_it() -> None:
    frame = pl.DataFrame({"ok": [1, 2], "c": pl.Series(["same", "value"], dtype=pl.Object)})
    for call in (hash_frame, canonical_lines, lambda f: profile_frame(f, buckets=0)):
        with pytest.raises(HashError, match=r"column 'c' of polars type Object"):
            call(frame)


@needs_polars
def test_polars_object_is_found_at_depth() -> None:
    from ubunye.hashing.stream import _polars_object

    assert _polars_object(pl.List(pl.Struct({"a": pl.Int64, "o": pl.Object})), "c") == "c[].o"
    assert _polars_object(pl.Array(pl.Int64, 2), "c") is None


# --- 4. pandas object columns of datetimes: nanoseconds and mixed zones at any depth ------------------------------

_NS = pd.Timestamp("2024-01-01T00:00:00.000000001")
_NAIVE = dt.datetime(2024, 1, 1, 5)
_AWARE = dt.datetime(2024, 1, 1, 5, tzinfo=dt.timezone(dt.timedelta(hours=5)))


@pytest.mark.parametrize(
    ("cells", "where", "what"),
    [
        ([_NS], "'c'", "sub-microsecond"),
        ([[_NS]], r"'c\[\]'", "sub-microsecond"),
        ([{"t": _NS}], "'c.t'", "sub-microsecond"),
        ([{"t": [_NS]}], r"'c\.t\[\]'", "sub-microsecond"),
        ([_NAIVE, _AWARE], "'c'", "with and without a time zone"),
        ([[_NAIVE, _AWARE]], r"'c\[\]'", "with and without a time zone"),
        ([{"t": _NAIVE}, {"t": _AWARE}], "'c.t'", "with and without a time zone"),
    ],
    ids=["top-ns", "list-ns", "dict-ns", "dict-list-ns", "top-mixed", "list-mixed", "dict-mixed"],
)
def test_pandas_object_datetimes_refused_rather_than_truncated_or_guessed(
    cells: list[object], where: str, what: str
) -> None:
    frame = pd.DataFrame({"c": pd.Series(cells, dtype=object)})
    with pytest.raises(HashError, match=rf"column 'c' of dtype object: {where} .*{what}"):
        hash_frame(frame)


def test_pandas_object_datetimes_of_whole_microseconds_still_hash_like_arrow() -> None:
    us = pd.Timestamp("2024-01-01T00:00:00.000001")
    frame = pd.DataFrame({"c": pd.Series([[us, None]], dtype=object)})
    table = pa.table({"c": pa.array([[dt.datetime(2024, 1, 1, 0, 0, 0, 1), None]], pa.list_(pa.timestamp("us")))})
    want = expected([("c", "list<timestamp_ntz>")], [[{"list": [{"ts": "2024-01-01T00:00:00.000001"}, None]}]])
    assert hash_frame(frame).data_hash == hash_frame(table).data_hash == want["data_hash"]
    aware = pd.DataFrame({"c": pd.Series([[_AWARE], [dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)]], dtype=object)})
    assert hash_frame(aware).schema == 'struct<"c":list<timestamp>>'


# --- 5. the port refuses what pyarrow would silently change ---------------------------------------------------------


class _Rows:
    def __init__(self, schema: list[tuple[str, str]], rows: list[object]) -> None:
        self.schema, self.rows = schema, rows

    def collect(self) -> list[object]:
        return self.rows


@pytest.mark.parametrize(
    ("tname", "value", "message"),
    [
        ("int64", 1.5, r"'x' of type int64: 1\.5 is a float"),
        ("int32", np.float64(2.0), r"'x' of type int32: .*is a float"),
        ("list<int64>", [1, 2.5], r"'x\[\]' of type list<int64>: 2\.5 is a float"),
        ("date", dt.datetime(2024, 1, 1, 23, 59), r"'x' of type date: .* is a datetime, not a date"),
        ("date", pd.Timestamp("2024-01-01"), r"'x' of type date: .* is a datetime"),
        ('struct<"a":int64>', {"a": 1, "b": 2}, r"'x' of type struct<\"a\":int64>: .*key 'b'"),
        ('struct<"a":int64>', (1, 2), r"'x' of type struct<\"a\":int64>: .*2 values for its 1 fields"),
        ('map<string,struct<"a":int64>>', {"k": {"a": 1, "z": 0}}, r"'x\{value\}' .*key 'z'"),
        ("float32", 1e39, r"'x' of type float32: 1e\+39 is beyond float32's range"),
        ("float32", -(10**40), r"'x' of type float32: .* is beyond float32's range"),
        ("int64", decimal.Decimal("1.5"), r"'x' of type int64: Decimal\('1\.5'\) is a Decimal"),
        ("float64", True, r"'x' of type float64: True is a bool"),
        ("list<string>", "ab", r"'x' of type list<string>: 'ab' is a str, not a list"),
    ],
    ids=["int-float", "int-npfloat", "list-int", "date-datetime", "date-timestamp", "struct-key", "struct-tuple",
         "map-struct-key", "float32-overflow", "float32-int-overflow", "int-decimal", "float-bool", "list-str"],
)  # fmt: skip
def test_port_refuses_silent_coercion(tname: str, value: object, message: str) -> None:
    with pytest.raises(HashError, match=message):
        hash_frame(_Rows([("x", tname)], [(value,)]))


def test_port_still_takes_what_fits() -> None:
    """The edges of what is refused: float32's largest value (a float64 a little above it rounds to it), an int in
    a float column, a date in a date column, a struct given every field or fewer keys."""
    cases = [
        ("float32", 3.4028235e38, [{"float": "3.4028235e38"}]),
        ("float64", 2, [{"float": "2"}]),
        ("date", dt.date(2024, 1, 1), [{"date": "2024-01-01"}]),
        ('struct<"a":int64,"b":int64>', {"a": 1}, [{"struct": {"a": 1}}]),
        ('struct<"a":int64,"b":int64>', (1, None), [{"struct": {"a": 1}}]),
    ]
    for tname, value, cells in cases:
        want = expected([("x", tname)], [cells])
        assert hash_frame(_Rows([("x", tname)], [(value,)])).data_hash == want["data_hash"], tname


# --- 7. lone surrogates in pandas object strings --------------------------------------------------------------------


@pytest.mark.parametrize(
    "cells",
    [[b"caf\xe9".decode("utf-8", "surrogateescape")], [["\udcff"]], [{"k": "\udcff"}]],
    ids=["top", "list", "dict"],
)
def test_pandas_lone_surrogate_is_a_hash_error_naming_the_column(cells: list[object]) -> None:
    frame = pd.DataFrame({"name": pd.Series(cells, dtype=object)})
    with pytest.raises(HashError, match=r"column 'name' .*not valid Unicode"):
        hash_frame(frame)


# --- 8. object-column messages say what was found and what to do ----------------------------------------------------


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ([1, 2], r"object column of numbers \(int\).*astype\('Int64'\)"),
        ([1.5, np.float32(2)], r"object column of numbers \(float, float32\).*numeric dtype"),
        ([np.int64(1), None], r"object column of numbers \(int64\)"),
        ([True, np.bool_(False)], r"object column of booleans.*astype\('boolean'\)"),
        (["a", pd.NaT], r"found str, NaT \(a missing datetime"),
        (["a", 1], r"one kind of supported value .*found int, str"),
    ],
    ids=["ints", "floats", "np-int", "bools", "str-nat", "str-int"],
)
def test_object_column_messages(cells: list[object], message: str) -> None:
    with pytest.raises(HashError, match=rf"column 'c' of dtype object: .*{message}"):
        hash_frame(pd.DataFrame({"c": pd.Series(cells, dtype=object)}))


def test_lists_from_arrow_to_pandas_hash_like_the_arrow_table() -> None:
    """Arrow's to_pandas() gives numpy arrays as list cells: they are lists (section 7), hashed as Arrow's."""
    table = pa.table({"l": [[1, 2], None, [3]], "s": [["a"], ["b", None], []], "st": [{"x": [1]}, None, {"x": []}]})
    frame = table.to_pandas()
    assert isinstance(frame["l"].iloc[0], np.ndarray)
    assert hash_frame(frame) == hash_frame(table)


def test_maps_from_arrow_to_pandas_say_what_to_do() -> None:
    table = pa.table({"m": pa.array([[("k", [1, 2])]], pa.map_(pa.string(), pa.list_(pa.int64())))})
    with pytest.raises(HashError, match=r"column 'm' .*lists of \(key, value\) tuples.*types_mapper=pd\.ArrowDtype"):
        hash_frame(table.to_pandas())
    assert hash_frame(table.to_pandas(types_mapper=pd.ArrowDtype)) == hash_frame(table)


def test_decimals_are_untouched_by_the_object_checks() -> None:
    frame = pd.DataFrame({"d": pd.Series([decimal.Decimal("1.50"), None], dtype=object)})
    assert (
        hash_frame(frame).data_hash == expected([("d", "decimal(3,2)")], [[{"decimal": "1.50"}], [None]])["data_hash"]
    )


# --- object columns of lists and dicts: one kind a place, str keys, no sets (an adversarial review's findings) ------


def _objects(values: list[object]) -> pd.DataFrame:
    return pd.DataFrame({"c": pd.Series(values, dtype=object)})


@pytest.mark.parametrize(
    ("values", "found"),
    [
        # Arrow took b"a" and "a" for one key: the second row's value was dropped, and row order changed the hash.
        ([{b"a": 1}, {"a": 2}], r"'c' holds a dict whose key b'a' is a bytes; dict keys must be str"),
        ([{1: "x"}], r"'c' holds a dict whose key 1 is a int"),
        # A set has no order: as a list it hashed in this process's string-hash order (PYTHONHASHSEED).
        ([[{"apple", "banana", "cherry"}]], r"'c\[\]' holds a set, which has no order"),
        ([{"k": frozenset({1})}], r"'c.k' holds a frozenset"),
        # Arrow made them one kind: the time of day dropped, str read as bytes, 1 read as 1.0.
        ([{"k": dt.date(2024, 1, 1)}, {"k": dt.datetime(2024, 1, 1, 5, tzinfo=dt.timezone.utc)}], r"'c.k' .*datetime"),
        ([[dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 23)]], r"'c\[\]' holds values of more than one kind"),
        ([[b"a", "a"]], r"'c\[\]' holds values of more than one kind \(\w+ .* and \w+ "),
        # integers and floats at one place are doubles, as Arrow reads them, unless a double would round one
        ([[2**53 + 1], [2.5]], r"'c\[\]' holds floats and the integer 9007199254740993, beyond 2\*\*53"),
        ([[np.array([2**60])], [np.array([1.5])]], r"'c\[\]\[\]' holds floats and the integer 1152921504606846976"),
        ([{"a.b": 1}, {"a": {"b": b"x"}}, {"a": {"b": "x"}}], r"'c.a.b' holds values of more than one kind"),
    ],
)
def test_nested_values_of_two_kinds_or_without_order_are_refused(values, found):
    with pytest.raises(HashError, match=r"column 'c' of dtype object: " + found):
        hash_frame(_objects(values))


@pytest.mark.parametrize(
    "rows",
    [
        [{"price": 10}, {"price": 10.5}],  # JSON's whole-number floats (json.loads gives an int)
        [[1, 2.5], [3], [1, float("nan")]],
        [[np.array([1, 2])], [np.array([1.5])]],  # pd.concat of two reads: int64 arrays in one row, float64 in another
        [{"a.b": 1}, {"a": {"b": "x"}}],  # a dotted key is its own field, not the path a.b
        [{"n": 2**53}, {"n": 0.5}],  # still exact as a double
    ],
)
def test_numbers_of_both_kinds_and_dotted_keys_hash_as_arrow_reads_them(rows):
    # A review of the first version: it refused these, which hashed before and are well defined (Arrow makes the
    # integers doubles, exactly below 2**53), and took the key "a.b" for the field b of a.
    expected = hash_frame(pa.table({"c": pa.array(rows)})).data_hash
    assert hash_frame(_objects(rows)).data_hash == expected


def test_nested_values_of_one_kind_still_hash_as_arrow_reads_them():
    # the control: what the checks let through hashes as before, as the same values typed by Arrow
    frame = _objects([[1, None, 3], [], None, [np.int64(4)]])
    assert hash_frame(frame).data_hash == hash_frame(pa.table({"c": pa.array([[1, None, 3], [], None, [4]])})).data_hash
    rows = [{"k": [1.5, float("nan")], "s": "x"}, {"k": None, "s": None}]
    assert hash_frame(_objects(rows)).data_hash == hash_frame(pa.table({"c": pa.array(rows)})).data_hash


def test_a_subclass_of_pandas_dataframe_is_read_by_the_pandas_rules():
    # frame_kind looked at the type's own name: a subclass went through pandas' Arrow export, which hashed the
    # index as a column and read NaN as null (section 7 says neither).
    class Orders(pd.DataFrame):
        @property
        def _constructor(self) -> type[Orders]:
            return Orders

    base = pd.DataFrame({"x": [1.0, np.nan]}, index=[7, 8])
    assert canonical_lines(Orders(base)) == canonical_lines(base) == ['{"x":1.0}', '{"x":"NaN"}']
    with pytest.raises(HashError, match="an object column of numbers"):
        hash_frame(Orders({"n": pd.Series([1, 2], dtype=object)}))


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame({"k": [1, 1], "c": pd.to_datetime(["2024-01-01", None], utc=True)}).groupby("k")["c"].agg(list),
        _objects([np.array(["2024-01-01"], dtype="datetime64[D]")]),
        pd.DataFrame({"c": pd.Series(["\ud800"], dtype="string[python]")}),
        pd.DataFrame({"c": np.array([1.0], dtype=np.longdouble)}),
        _objects([[2**70]]),
        _objects([{b"\xff": 1}]),
    ],
    ids=["list with NaT", "datetime64 arrays", "lone surrogate", "longdouble", "int over 64 bits", "bytes key"],
)
def test_what_pandas_or_arrow_cannot_convert_is_a_hash_error_naming_the_column(frame):
    frame = frame.to_frame() if isinstance(frame, pd.Series) else frame
    with pytest.raises(HashError, match=r"rows-v1 cannot hash column 'c' of dtype"):
        hash_frame(frame)


def test_a_column_name_that_is_not_unicode_is_a_hash_error():
    with pytest.raises(HashError, match=r"column names of valid Unicode; column '\\ud800'"):
        hash_frame(pd.DataFrame([[1]], columns=pd.Index(["\ud800"], dtype=object)))


def test_a_zone_offset_with_seconds_hashes_its_instants():
    # pandas keeps such a zone (UTC+00:00:30), Arrow refuses it: section 5.3 hashes the instant, so as in UTC.
    zone = dt.timezone(dt.timedelta(seconds=30))
    naive = pd.to_datetime(["2024-01-01 00:00:30.000000", "1969-12-31 23:59:59.500000"])  # one format: any pandas
    local = pd.Series(naive).dt.tz_localize(zone)
    in_utc = local.dt.tz_convert("UTC")
    assert hash_frame(pd.DataFrame({"t": local})) == hash_frame(pd.DataFrame({"t": in_utc}))
    objects = pd.DataFrame({"t": pd.Series([v.to_pydatetime() for v in local], dtype=object)})
    assert hash_frame(objects).data_hash == hash_frame(pd.DataFrame({"t": in_utc})).data_hash
    assert canonical_lines(objects)[0] == '{"t":"2024-01-01T00:00:00.000000Z"}'


def test_a_numpy_float_nan_in_an_object_column_is_missing_like_a_python_nan():
    got = hash_frame(_objects(["a", np.float32("nan"), float("nan")]))
    assert got == hash_frame(_objects(["a", None, None]))
    assert hash_frame(_objects([decimal.Decimal("1"), np.float64("nan")])) == hash_frame(
        _objects([decimal.Decimal("1"), None])
    )
