"""Spark DataFrames through the JVM function ``ubunye_rows_v1`` (the jar), and Spark types as rows-v1 names.

Only three numbers and the data hash come back to the driver: the aggregation runs where the data is.
The jar-free path (the twin on the executors) lives elsewhere; this module never imports pyspark at its
top level.

Example:
    >>> from pyspark.sql import types as T  # doctest: +SKIP
    >>> spark_schema_string(T.StructType([T.StructField("id", T.LongType())]))  # doctest: +SKIP
    'struct<"id":int64>'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ubunye.exceptions import HashError
from ubunye.hashing.digest import FrameHash, finish
from ubunye.hashing.text import json_string

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructType

# Spark simpleString -> rows-v1 name, for the types without parameters (docs/rows-v1.md section 7).
_SIMPLE = {
    "tinyint": "int8",
    "smallint": "int16",
    "int": "int32",
    "bigint": "int64",
    "float": "float32",
    "double": "float64",
    "boolean": "bool",
    "string": "string",
    "binary": "binary",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
}


def _type_name(t: DataType, column: str, path: str) -> str:
    from pyspark.sql import types as T

    if isinstance(t, T.StringType | T.CharType | T.VarcharType):  # any collation: the bytes are the value
        return "string"
    if isinstance(t, T.DecimalType) and t.precision <= 38 and 0 <= t.scale <= t.precision:
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, T.ArrayType):
        return f"list<{_type_name(t.elementType, column, path + '[]')}>"
    if isinstance(t, T.MapType):
        key = _type_name(t.keyType, column, path + "{key}")
        return f"map<{key},{_type_name(t.valueType, column, path + '{value}')}>"
    if isinstance(t, T.StructType):
        return _struct_string([(f.name, f.dataType) for f in t.fields], column, path)
    name = _SIMPLE.get(t.simpleString())
    if name is None:
        where = f"column {column!r}" + (f" (field {path!r})" if path != column else "")
        msg = f"rows-v1 cannot hash {where} of Spark type {t.simpleString()} (docs/rows-v1.md sections 7 and 11)"
        raise HashError(msg)
    return name


def _struct_string(fields: list[tuple[str, DataType]], column: str | None, path: str) -> str:
    seen: set[str] = set()
    for name, _ in fields:
        if name in seen:
            where = f"struct {path!r} in column {column!r} has" if column else "the table has"
            msg = f"{where} two columns named {name!r}: rows-v1 needs unique names (docs/rows-v1.md section 2)"
            raise HashError(msg)
        seen.add(name)
    parts = []
    for name, t in sorted(fields, key=lambda f: f[0]):  # Python str order is code point order
        col = column if column is not None else name
        parts.append(json_string(name) + ":" + _type_name(t, col, f"{path}.{name}" if path else name))
    return "struct<" + ",".join(parts) + ">"


def spark_schema_string(schema: StructType) -> str:
    """The rows-v1 schema string (section 7) of a Spark schema; HashError names a bad column and its type.

    Example:
        >>> from pyspark.sql import types as T  # doctest: +SKIP
        >>> fields = [T.StructField("b", T.StringType()), T.StructField("a", T.IntegerType())]  # doctest: +SKIP
        >>> spark_schema_string(T.StructType(fields))  # doctest: +SKIP
        'struct<"a":int32,"b":string>'
    """
    return _struct_string([(f.name, f.dataType) for f in schema.fields], None, "")


def hash_spark_jvm(df: DataFrame) -> FrameHash:
    """rows-v1 of a Spark DataFrame with the JVM aggregate ``ubunye_rows_v1(*)`` (needs the jar registered).

    The JVM returns the row count, the two sums and its data hash; the FrameHash is rebuilt here from the
    schema string and the numbers, and the JVM's data hash must agree with it.

    Example:
        >>> hash_spark_jvm(spark.range(3)).row_count  # doctest: +SKIP
        3
    """
    from pyspark.sql import functions as F

    schema = spark_schema_string(df.schema)  # fails here, naming the column, before any job runs
    row = df.agg(F.expr("ubunye_rows_v1(*)").alias("h")).first()
    h: Any = row["h"]
    result = finish(schema, h["row_count"], h["sum1"], h["sum2"], engine="jvm")
    if h["data_hash"] != result.data_hash:
        msg = (
            f"the JVM's data hash {h['data_hash']} differs from the one rebuilt from its sums "
            f"({result.data_hash}) for schema {schema}: the jar and the Python package disagree on the "
            "schema string (version mismatch?)"
        )
        raise HashError(msg)
    return result


def spark_canonical_lines_jvm(df: DataFrame, limit: int | None = None) -> list[str]:
    """The canonical lines of a Spark DataFrame from the JVM (``ubunye_canonical_line(*)``), for diffing."""
    from pyspark.sql import functions as F

    spark_schema_string(df.schema)
    lines = df.select(F.expr("ubunye_canonical_line(*)").alias("line"))
    if limit is not None:
        lines = lines.limit(limit)
    return [r["line"] for r in lines.collect()]
