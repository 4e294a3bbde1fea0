"""The port (collect() + rows-v1 schema) and Arrow-stream frames (polars, DuckDB) hash like the reference twin."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tests.conftest import VECTORS
from tests.hashing.compat import import_or_skip
from ubunye.exceptions import HashError
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.port import RowsFrame, is_rows_frame
from ubunye.hashing.types import parse_type
from ubunye.testing.vectors import cell_value


class Rows:
    """The smallest port frame: a schema and a list of rows."""

    def __init__(self, schema, rows):
        self.schema = schema
        self._rows = rows

    def collect(self):
        return list(self._rows)


def _port_frame(vector) -> Rows:
    trees = [parse_type(t) for _, t in vector.columns]
    rows = [tuple(cell_value(c, tree) for c, tree in zip(row, trees, strict=True)) for row in vector.rows]
    return Rows(vector.columns, rows)


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_port_frames_of_the_vectors_hash_as_expected(vector):
    frame = _port_frame(vector)
    assert isinstance(frame, RowsFrame)
    h = hash_frame(frame)
    assert (h.schema, h.row_count, h.data_hash) == (
        vector.expected["schema"],
        vector.expected["row_count"],
        vector.expected["data_hash"],
    )
    assert canonical_lines(frame) == vector.expected["lines"]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_polars_and_duckdb_hash_like_arrow_and_pandas(vector):
    pl = import_or_skip("polars")
    duckdb = import_or_skip("duckdb")
    table = vector.arrow()
    con = duckdb.connect()
    try:
        hashes = {
            "arrow": hash_frame(table),
            "pandas": hash_frame(table.to_pandas(types_mapper=pd.ArrowDtype)),
            "polars": hash_frame(pl.from_arrow(table)),
            "duckdb": hash_frame(con.from_arrow(table)),
        }
        lines = canonical_lines(con.from_arrow(table))
    finally:
        con.close()
    assert {name: h.data_hash for name, h in hashes.items()} == dict.fromkeys(hashes, vector.expected["data_hash"])
    assert sorted(lines) == sorted(vector.expected["lines"])


def test_mapping_rows_and_missing_keys_are_nulls():
    frame = Rows([("id", "int64"), ("name", "string")], [{"id": 1, "name": "Ana"}, {"id": 2}])
    assert canonical_lines(frame) == ['{"id":1,"name":"Ana"}', '{"id":2}']
    same = pa.table({"id": [1, 2], "name": ["Ana", None]})
    assert hash_frame(frame) == hash_frame(same)


def test_the_schema_is_what_the_backend_names():
    ints = Rows([("n", "int32")], [(1,), (2,)])
    assert hash_frame(ints).schema == 'struct<"n":int32>'
    assert hash_frame(ints) == hash_frame(pa.table({"n": pa.array([1, 2], pa.int32())}))
    assert hash_frame(ints) != hash_frame(Rows([("n", "int64")], [(1,), (2,)]))


def test_timestamps_need_the_right_kind_of_datetime():
    at = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    utc = Rows([("t", "timestamp")], [(at,)])
    assert canonical_lines(utc) == ['{"t":"2024-01-01T10:00:00.000000Z"}']
    with pytest.raises(HashError, match=r"'t' of type timestamp: .* not time-zone aware"):
        hash_frame(Rows([("t", "timestamp")], [(at.replace(tzinfo=None),)]))
    with pytest.raises(HashError, match=r"'t\[\]' of type list<timestamp_ntz>: .* not naive"):
        hash_frame(Rows([("t", "list<timestamp_ntz>")], [([at],)]))


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (Rows([("a", "integer")], []), r"column 'a' of type 'integer': not a rows-v1 type name"),
        (Rows([("a", "int64"), ("a", "string")], []), r"two columns named 'a'"),
        (Rows([("a", "int64")], [(1, 2)]), r"row 0: it has 2 values for the 1 columns"),
        (Rows([("a", "int64")], [{"b": 1}]), r"row 0: column 'b' is not in the frame's schema"),
        (Rows([("d", "decimal(5,2)")], [(1.5,)]), r"column 'd' of type decimal\(5,2\): its values do not fit"),
        (Rows({"a": 5}, []), r"schema is not \(name, rows-v1 type name\) pairs"),
    ],
)
def test_port_errors_name_the_column_and_type(frame, message):
    with pytest.raises(HashError, match=message):
        hash_frame(frame)


def test_mapping_schema_is_accepted():
    assert hash_frame(Rows({"a": "int64"}, [(1,)])) == hash_frame(pa.table({"a": [1]}))


def test_a_lazy_polars_frame_is_hashed_as_its_rows():
    # A LazyFrame has collect() and a schema, so it looks like a port frame; it is a query, collected as the polars
    # engine collects one a transform returns (it was refused, asking the caller to collect it).
    pl = import_or_skip("polars")
    eager = pl.DataFrame({"a": [1, None], "b": ["x", "y"]})
    assert is_rows_frame(eager.lazy())
    assert hash_frame(eager.lazy()) == hash_frame(eager) == hash_frame(eager.to_arrow())


# numpy's bool is no int subclass to Python, and pyarrow takes it into an int column as 0 or 1 (Python's True it
# refuses): the port refuses both, as it refuses a bool in a float column. The other mixes pyarrow refuses itself
# (numpy 1 writes np.True_ as "True", numpy 2 as "np.True_").
@pytest.mark.parametrize(
    ("tname", "value", "message"),
    [
        ("int64", np.True_, r"'c' of type int64: (np\.)?True_? is a bool, not an integer"),
        ("int64", True, r"'c' of type int64: True is a bool, not an integer"),
        ("int8", np.False_, r"'c' of type int8: (np\.)?False_? is a bool, not an integer"),
        ("list<int32>", [1, np.True_], r"'c\[\]' of type list<int32>: (np\.)?True_? is a bool"),
        ("map<int16,string>", {np.True_: "x"}, r"'c\{key\}' of type map<int16,string>: (np\.)?True_? is a bool"),
        ("float64", np.True_, r"'c' of type float64: (np\.)?True_? is a bool, not a number"),
        ("float32", np.False_, r"'c' of type float32: (np\.)?False_? is a bool, not a number"),
        ("decimal(5,2)", np.True_, r"column 'c' of type decimal\(5,2\): its values do not fit"),
        ("decimal(5,2)", True, r"column 'c' of type decimal\(5,2\): its values do not fit"),
        ("bool", np.int64(1), r"column 'c' of type bool: its values do not fit"),
        ("bool", np.float64(0.0), r"column 'c' of type bool: its values do not fit"),
        ("bool", 1, r"column 'c' of type bool: its values do not fit"),
    ],
    ids=["int-npbool", "int-bool", "int8-npbool", "list-npbool", "mapkey-npbool", "float-npbool", "float32-npbool",
         "decimal-npbool", "decimal-bool", "bool-npint", "bool-npfloat", "bool-int"],
)  # fmt: skip
def test_bools_and_numbers_are_not_taken_for_each_other(tname, value, message):
    with pytest.raises(HashError, match=message):
        hash_frame(Rows([("c", tname)], [(value,)]))


def test_numpy_scalars_of_the_column_kind_are_taken():
    ints = Rows([("i", "int64"), ("b", "bool"), ("f", "float64")], [(np.int64(1), np.True_, np.float64(0.5))])
    assert canonical_lines(ints) == ['{"b":true,"f":0.5,"i":1}']


@pytest.mark.parametrize(
    ("tname", "value", "message"),
    [
        # pyarrow takes numbers as days or microseconds since the epoch (5.5 truncated to 5 us): a unit guessed
        ("date", 5, r"'c' of type date: 5 is a number, not a date"),
        ("timestamp_ntz", 5.5, r"'c' of type timestamp_ntz: 5\.5 is a number, not a datetime"),
        ("list<timestamp>", [np.int64(5)], r"'c\[\]' of type list<timestamp>: .*5\)? is a number, not a datetime"),
        # pyarrow drops a pandas Timestamp's nanoseconds; the pandas path refuses the same value
        ("timestamp", pd.Timestamp("2024-01-01T00:00:00.000000001Z"), r"'c' of type timestamp: .*sub-microsecond"),
        ("list<timestamp_ntz>", [pd.Timestamp("2024-01-01T00:00:00.000000999")], r"'c\[\]' .*sub-microsecond"),
        # no order: a list or struct of its items would hash in this process's string-hash order
        ("list<string>", {"b", "a"}, r"'c' of type list<string>: .* is a set, which has no order"),
        ("list<timestamp_ntz>", [pd.NaT], r"'c\[\]' of type list<timestamp_ntz>: pandas NaT is no value: give None"),
        ("struct<\"a\":string,\"b\":string>", frozenset({"x", "y"}), r"'c' .* is a frozenset, which has no order"),
        # pyarrow takes UTF-8 bytes as text and text as its bytes; rows-v1 writes the two differently (section 5)
        ("string", b"abc", r"'c' of type string: b'abc' is bytes, not text"),
        ("list<string>", [bytearray(b"x")], r"'c\[\]' of type list<string>: b'x' is bytes, not text"),
        ("binary", "abc", r"'c' of type binary: 'abc' is a str, not bytes"),
        ("map<string,binary>", {"k": np.str_("v")}, r"'c\{value\}' of type map<string,binary>: 'v' is a str"),
    ],
    ids=["date-int", "timestamp-float", "list-npint", "timestamp-ns", "list-ns", "list-set", "list-nat",
         "struct-frozenset", "string-bytes", "list-string-bytearray", "binary-str", "map-binary-npstr"],
)  # fmt: skip
def test_values_that_would_be_guessed_or_cut_are_refused(tname, value, message):
    with pytest.raises(HashError, match=message):
        hash_frame(Rows([("c", tname)], [(value,)]))


def test_a_whole_microsecond_pandas_timestamp_is_taken_as_its_datetime():
    at = pd.Timestamp("2024-01-01T00:00:00.000001Z")
    assert hash_frame(Rows([("c", "timestamp")], [(at,)])) == hash_frame(
        Rows([("c", "timestamp")], [(at.to_pydatetime(),)])
    )
