"""Helpers of the Spark tier; the one SparkSession of the run is the `spark` fixture in tests/conftest.py.

Spark tests are marked ``spark`` by the fixture they take (tests/conftest.py; ``pytest -m "not spark"`` skips them
all); heavy ones mark themselves ``slow``.
"""

from __future__ import annotations

from typing import Any

from ubunye.hashing.types import parse_type, spark_type
from ubunye.testing.vectors import Vector


def vector_frame(spark: Any, vector: Vector) -> Any:
    """A conformance vector's table as a Spark DataFrame with the exact Spark types of its rows-v1 types."""
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField(n, spark_type(parse_type(t))) for n, t in vector.columns])
    return spark.createDataFrame(vector.arrow(), schema=schema)


def rows_v1(df: Any, cols: str = "*") -> dict[str, Any]:
    """``ubunye_rows_v1(<cols>)`` of a DataFrame as a dict: row_count, sum1, sum2, data_hash."""
    from pyspark.sql import functions as F

    return df.agg(F.expr(f"ubunye_rows_v1({cols})").alias("h")).first()["h"].asDict()


def jvm_lines(df: Any) -> list[str]:
    """The JVM's canonical lines of every row, sorted (rows have no order)."""
    from pyspark.sql import functions as F

    return sorted(r[0] for r in df.select(F.expr("ubunye_canonical_line(*)")).collect())
