"""Spark faults found by hunt 17 on pyspark 3.5 (Databricks 14.3), tested on the installed Spark.

- An expectation whose SQL fails in the JVM with an error pyspark does not convert (a raw ``Py4JJavaError``: on
  pyspark 3.5 a CAST failing under ANSI, on any pyspark ``from_json`` in FAILFAST mode) recorded only py4j's own
  first line, "An error occurred while calling o98.collectToPython.", not what failed.
- ``from_pandas`` refused large_list, fixed_size_list and fixed_size_binary columns on pyspark 3.5 (no Spark type
  for them in its Arrow conversion), with advice about unsigned integers; they are lists and binary, hashed alike.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ubunye.config.model import Expectations
from ubunye.engines.spark_engine import SparkEngine
from ubunye.expectations import check
from ubunye.hashing import hash_frame


def test_an_expectation_failing_in_the_jvm_records_the_cause(spark) -> None:
    engine = SparkEngine(spark=spark)
    frame = engine.from_pandas(pd.DataFrame({"j": ['{"a": 1}', "{not json"]}))
    expr = "from_json(j, 'a INT', map('mode', 'FAILFAST')).a > 0"
    # what Spark raises for it, seen here: py4j's error, whose own first line says nothing
    with pytest.raises(Exception) as raised:
        engine.scalar(f"SELECT COUNT(*) FROM t WHERE NOT COALESCE(({expr}), FALSE)", {"t": frame})
    assert getattr(raised.value, "java_exception", None) is not None, type(raised.value)
    assert str(raised.value).startswith("An error occurred while calling")
    causes, cause = [], raised.value.java_exception
    while cause is not None:
        causes.append(f"{cause.getClass().getSimpleName()}: {cause.getMessage()}")
        cause = cause.getCause()

    [result] = check(Expectations("inputs.src", {"expression": expr}), frame, engine)
    assert result.passed is False
    assert "An error occurred while calling" not in result.error, result.error
    # the innermost cause with a message, first line (what ubunye.spark.errors.spark_reason gives)
    innermost = next(c for c in reversed(causes) if not c.endswith(": None"))
    assert result.error == innermost.splitlines()[0], (result.error, causes)


@pytest.mark.parametrize(
    "column",
    [
        pa.array([[1, 2], None, []], pa.large_list(pa.int64())),
        pa.array([[1, 2], None, [3, None]], pa.list_(pa.int64(), 2)),
        pa.array([b"ab", None, b"\x00\xff"], pa.binary(2)),
        pa.array(
            [{"x": [b"abcd"]}, None, {"x": None}],
            pa.struct([("x", pa.large_list(pa.binary(4)))]),
        ),
        pa.array([[("k", [1])], None, []], pa.map_(pa.string(), pa.list_(pa.int64(), 1))),
    ],
    ids=["large_list", "fixed_size_list", "fixed_size_binary", "nested", "map_of_fixed_size_list"],
)
def test_large_and_fixed_size_types_reach_spark_with_the_frames_hash(spark, column: pa.Array) -> None:
    frame = pa.table({"c": column}).to_pandas(types_mapper=pd.ArrowDtype)
    engine = SparkEngine(spark=spark)
    assert engine.hash(engine.from_pandas(frame)).data_hash == hash_frame(frame).data_hash


def test_a_type_spark_has_not_is_named_with_advice_that_fits_it(spark) -> None:
    from ubunye.exceptions import EngineError

    engine = SparkEngine(spark=spark)
    for column, why in [
        (pa.array([1], pa.uint16()), "(Spark has no unsigned integers): cast it first, e.g. to a signed type"),
        (pa.array([[1]], pa.list_(pa.uint8())), "(Spark has no unsigned integers): cast it first, e.g. to a signed"),
        (pa.array(np.array([1.5], np.float16)), "(Spark has no half-precision float): cast it first, e.g. to float32"),
    ]:
        frame = pa.table({"c": column}).to_pandas(types_mapper=pd.ArrowDtype)
        with pytest.raises(EngineError) as err:
            engine.from_pandas(frame)
        assert str(err.value).startswith(f"column 'c' of type {column.type} has no Spark type {why}"), str(err.value)


@pytest.mark.parametrize("mode", ["overwrite", "append"])
def test_a_file_where_a_local_delta_output_goes_is_refused_before_anything_runs(spark, tmp_path, mode) -> None:
    # Spark's check_output returned at once for Delta: the run read and transformed, then failed in the write with
    # Hadoop's ParentNotDirectoryException. Refused up front now, as on pandas and polars.
    from ubunye.config.model import IOConfig
    from ubunye.exceptions import EngineError

    blocker = tmp_path / "out"
    blocker.write_text("keep me")
    with pytest.raises(EngineError, match=r"^output 'o': .*out is a file(, not an output folder|; append needs a)"):
        SparkEngine(spark=spark).check_output(IOConfig("o", format="delta", path=str(blocker), mode=mode), tmp_path)
    assert blocker.read_text() == "keep me"
