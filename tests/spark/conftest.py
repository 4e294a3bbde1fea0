"""Helpers of the Spark tier; the one SparkSession of the run is the `spark` fixture in tests/conftest.py.

Spark tests are marked ``spark`` by the fixture they take (tests/conftest.py; ``pytest -m "not spark"`` skips them
all); heavy ones mark themselves ``slow``.

The tier runs on every Spark line we support, 3.5 included: Arrow goes in through :func:`arrow_frame` and comes out
through :func:`to_arrow` (``createDataFrame`` of an Arrow table and ``DataFrame.toArrow`` are pyspark 4 only).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ubunye.hashing.types import parse_type, spark_type
from ubunye.testing.vectors import Vector


def vector_frame(spark: Any, vector: Vector) -> Any:
    """A conformance vector's table as a Spark DataFrame with the exact Spark types of its rows-v1 types."""
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField(n, spark_type(parse_type(t))) for n, t in vector.columns])
    return arrow_frame(spark, vector.arrow(), schema)


def spark_major() -> int:
    """The major version of the installed pyspark: 3 or 4."""
    import pyspark

    return int(pyspark.__version__.split(".")[0])


def arrow_frame(spark: Any, table: pa.Table, schema: Any = None) -> Any:
    """An Arrow table as a Spark DataFrame on a local relation, on every Spark line.

    ``spark.createDataFrame(table, schema)`` on pyspark 4; on 3.5 the same Arrow path its pandas conversion takes
    (Arrow batches sent to the JVM, a LocalRelation), so the bytes Spark holds are the table's own: no Python
    objects in between (invalid UTF-8, NaN payloads, dates before year 1 survive) and no file scan.
    Example: ``arrow_frame(spark, pa.table({"a": [1, 2]})).count() == 2``.
    """
    if spark_major() >= 4:
        return spark.createDataFrame(table) if schema is None else spark.createDataFrame(table, schema=schema)
    return _arrow_frame_35(spark, table, schema)


def _arrow_frame_35(spark: Any, table: pa.Table, schema: Any) -> Any:
    """pyspark 3.5's createDataFrame-from-pandas tail, fed Arrow (pyspark 4's _create_from_arrow_table does this)."""
    from pyspark.sql import DataFrame
    from pyspark.sql.pandas.serializers import ArrowStreamSerializer
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

    if schema is None:  # as pyspark 4 does unless spark.sql.timestampType says NTZ: a naive timestamp is an instant
        schema = from_arrow_schema(table.schema)
    zone = spark.conf.get("spark.sql.session.timeZone")
    pairs = zip(table.columns, schema.fields, strict=True)
    columns = [_localize(c.combine_chunks(), f.dataType, zone) for c, f in pairs]
    if schema.fields:  # a cast of no columns would lose the row count
        table = pa.Table.from_arrays(columns, names=table.column_names).cast(to_arrow_schema(schema))
    jvm = spark._jvm
    jiter = spark._sc._serialize_to_jvm(
        table.to_batches(),
        ArrowStreamSerializer(),
        lambda path: jvm.PythonSQLUtils.readArrowStreamFromFile(path),
        lambda: jvm.ArrowIteratorServer(),
    )
    return DataFrame(jvm.PythonSQLUtils.toDataFrame(jiter, schema.json(), spark._jsparkSession), spark)


def _localize(a: pa.Array, dt: Any, zone: str) -> pa.Array:
    """Timestamps as pyspark 4 hands them to Spark, at any depth: floored to microseconds, and a naive one that
    becomes a Spark timestamp (an instant) read as wall time in the session zone (a timestamp_ntz stays naive)."""
    import pyarrow.compute as pc
    from pyspark.sql import types as T

    t = a.type
    if pa.types.is_timestamp(t):
        if t.unit == "ns":
            a = pc.floor_temporal(a, unit="microsecond")
        return pc.assume_timezone(a, zone) if t.tz is None and isinstance(dt, T.TimestampType) else a
    mask = a.is_null() if a.null_count else None
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return type(a).from_arrays(a.offsets, _localize(a.values, dt.elementType, zone), mask=mask)
    if pa.types.is_map(t):
        keys, items = _localize(a.keys, dt.keyType, zone), _localize(a.items, dt.valueType, zone)
        return pa.MapArray.from_arrays(a.offsets, keys, items, mask=mask)
    if pa.types.is_struct(t):
        fields = [_localize(a.field(i), f.dataType, zone) for i, f in enumerate(dt.fields)]
        return pa.StructArray.from_arrays(fields, [t.field(i).name for i in range(t.num_fields)], mask=mask)
    if pa.types.is_dictionary(t):
        return pa.DictionaryArray.from_arrays(a.indices, _localize(a.dictionary, dt, zone))
    return a


def to_arrow(df: Any) -> pa.Table:
    """The rows of a Spark DataFrame as Arrow, on every Spark line (``DataFrame.toArrow`` is pyspark 4.0+).

    Example: ``to_arrow(spark.range(3)).num_rows == 3``.
    """
    if hasattr(df, "toArrow"):
        return df.toArrow()
    if hasattr(df, "_collect_as_arrow_table"):
        return df._collect_as_arrow_table()
    from pyspark.sql.pandas.types import to_arrow_schema

    batches = df._collect_as_arrow()  # pyspark 3.5: the Arrow batches toPandas builds from; none for no rows
    return pa.Table.from_batches(batches) if batches else to_arrow_schema(df.schema).empty_table()


def rows_v1(df: Any, cols: str = "*") -> dict[str, Any]:
    """``ubunye_rows_v1(<cols>)`` of a DataFrame as a dict: row_count, sum1, sum2, data_hash."""
    from pyspark.sql import functions as F

    return df.agg(F.expr(f"ubunye_rows_v1({cols})").alias("h")).first()["h"].asDict()


def jvm_lines(df: Any) -> list[str]:
    """The JVM's canonical lines of every row, sorted (rows have no order)."""
    from pyspark.sql import functions as F

    return sorted(r[0] for r in df.select(F.expr("ubunye_canonical_line(*)")).collect())
