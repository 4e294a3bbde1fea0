"""An expectation checks a column's type from the frame the engine read: on pandas every column is an Arrow dtype
(``pd.ArrowDtype``), which pandas 1.5's ``is_integer_dtype`` and kin do not recognise. There the type check was
skipped, and ``expression: i + 1`` passed as true (Databricks 14.3's pandas 1.5.3). Run in the floors tier too."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import pyarrow as pa
import pytest

from ubunye.expectations import _kind

#: (Arrow type, a value, the kind an expectation sees: integer, number, boolean, string, or None for the rest).
CASES = [
    (pa.int8(), 1, "integer"),
    (pa.int64(), 1, "integer"),
    (pa.uint32(), 1, "integer"),
    (pa.float32(), 1.5, "number"),
    (pa.float64(), 1.5, "number"),
    (pa.decimal128(10, 2), Decimal("1.50"), "number"),
    (pa.bool_(), True, "boolean"),
    (pa.string(), "a", "string"),
    (pa.large_string(), "a", "string"),
    (pa.date32(), dt.date(2026, 12, 1), None),
    (pa.timestamp("us", "UTC"), dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc), None),
    (pa.binary(), b"a", None),
]


@pytest.mark.parametrize(("arrow", "value", "kind"), CASES, ids=[str(c[0]) for c in CASES])
def test_an_arrow_column_has_the_kind_of_its_arrow_type(arrow: pa.DataType, value: object, kind: str | None) -> None:
    frame = pa.table({"c": pa.array([value, None], type=arrow)}).to_pandas(types_mapper=pd.ArrowDtype)
    assert isinstance(frame["c"].dtype, pd.ArrowDtype)
    assert _kind(frame, "c") == kind, (pd.__version__, frame["c"].dtype)


def test_numpy_columns_keep_their_kinds() -> None:
    # an object column may hold anything: no kind (pandas 3 reads ["a"] as its own string dtype, so it is built so)
    frame = pd.DataFrame({"i": [1], "f": [1.5], "b": [True], "t": [pd.Timestamp("2026-12-01")]})
    frame["o"] = pd.Series(["a"], dtype=object)
    assert [_kind(frame, c) for c in frame.columns] == ["integer", "number", "boolean", None, None]


def test_a_non_boolean_expression_fails_the_rule_on_an_arrow_frame() -> None:
    pytest.importorskip("duckdb", reason="the pandas engine's SQL is DuckDB's: not installed in the floors tier")
    from ubunye.config.model import Expectations
    from ubunye.engines import get_engine
    from ubunye.expectations import check

    frame = pa.table({"i": pa.array([1, 2], type=pa.int64())}).to_pandas(types_mapper=pd.ArrowDtype)
    rules = Expectations("outputs.o", {"expression": "i + 1"})
    [result] = check(rules, frame, get_engine("pandas"))
    assert not result.passed and "not a boolean" in (result.error or ""), result
