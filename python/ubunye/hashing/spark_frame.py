"""Spark DataFrames: the JVM aggregate when the jar is registered, else the twin on the executors.

The jar-free path runs the Arrow twin inside ``mapInArrow`` (so it works on Spark Connect, where there is no
py4j) and adds the per-partition sums with one aggregation. Each 64-bit sum is split into two 32-bit halves
before Spark adds them, so the additions never overflow a bigint whatever ``spark.sql.ansi.enabled`` says;
the driver recombines them modulo 2^64. Five numbers come back, no rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from ubunye.hashing.digest import FrameHash, check_engine, finish, sum_lines
from ubunye.hashing.encode import encode_batch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_PARTIAL_SCHEMA = "n long, s1_hi long, s1_lo long, s2_hi long, s2_lo long"
_LO = (1 << 32) - 1


def _positional(df: DataFrame) -> tuple[DataFrame, list[str]]:
    """Columns renamed _0, _1, ...: mapInArrow resolves names itself and trips on dots in them."""
    names = list(df.columns)
    return df.toDF(*[f"_{i}" for i in range(len(names))]), names


def _renamed(batch: pa.RecordBatch, names: list[str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(batch.columns, names=names)


def _partition_sums(batches: Iterator[pa.RecordBatch], names: list[str]) -> Iterator[pa.RecordBatch]:
    n = s1 = s2 = 0
    for batch in batches:
        if batch.num_rows:
            lines = encode_batch(_renamed(batch, names))
            bn, b1, b2 = sum_lines(lines.cast(pa.binary()).to_pylist())
            n, s1, s2 = n + bn, (s1 + b1) & 0xFFFFFFFFFFFFFFFF, (s2 + b2) & 0xFFFFFFFFFFFFFFFF
    yield pa.RecordBatch.from_pydict(
        {"n": [n], "s1_hi": [s1 >> 32], "s1_lo": [s1 & _LO], "s2_hi": [s2 >> 32], "s2_lo": [s2 & _LO]},
        schema=pa.schema([(c, pa.int64()) for c in ("n", "s1_hi", "s1_lo", "s2_hi", "s2_lo")]),
    )


def _engine(df: DataFrame, engine: str | None) -> str:
    """``engine`` checked, or the one the DataFrame's session can run when it is None."""
    check_engine(engine, none_too=True)
    if engine is not None:
        return engine
    from ubunye.spark import jvm_usable

    return "jvm" if jvm_usable(df.sparkSession) else "arrow"


def hash_spark_arrow(df: DataFrame) -> FrameHash:
    """rows-v1 of a Spark DataFrame without the jar: the twin runs on the executors (``engine="arrow"``).

    Example:
        >>> hash_spark_arrow(spark.range(3)).row_count  # doctest: +SKIP
        3
    """
    from pyspark.sql import functions as F

    from ubunye.hashing._spark import spark_schema_string

    schema = spark_schema_string(df.schema)  # refuses bad columns before any job runs
    positional, names = _positional(df)
    parts = positional.mapInArrow(lambda it: _partition_sums(it, names), _PARTIAL_SCHEMA)
    row = parts.agg(*[F.sum(c).alias(c) for c in ("n", "s1_hi", "s1_lo", "s2_hi", "s2_lo")]).first()
    n = int(row["n"] or 0)
    s1 = ((int(row["s1_hi"] or 0) << 32) + int(row["s1_lo"] or 0)) & 0xFFFFFFFFFFFFFFFF
    s2 = ((int(row["s2_hi"] or 0) << 32) + int(row["s2_lo"] or 0)) & 0xFFFFFFFFFFFFFFFF
    return finish(schema, n, s1, s2, engine="arrow")


def hash_spark(df: DataFrame, engine: str | None = None) -> FrameHash:
    """rows-v1 of a Spark DataFrame: ``engine="jvm"`` (the jar), ``"arrow"`` (no jar), or None to choose.

    None picks the JVM function when it is registered in the DataFrame's session and can run there
    (``ubunye.spark.jvm_usable``: a jar of another Spark line or Scala is refused with a ``JarWarning``).
    Any other value is a ``ValueError`` naming it, before Spark is asked anything.

    Example:
        >>> hash_spark(None, engine="jvn")
        Traceback (most recent call last):
        ValueError: engine='jvn' is not one of 'arrow', 'jvm' or None (choose)
    """
    if _engine(df, engine) == "jvm":
        from ubunye.hashing._spark import hash_spark_jvm

        return hash_spark_jvm(df)
    return hash_spark_arrow(df)


def _lines_of(batches: Iterator[pa.RecordBatch], names: list[str]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        if batch.num_rows:
            yield pa.RecordBatch.from_arrays([encode_batch(_renamed(batch, names))], names=["line"])


def spark_canonical_lines(df: DataFrame, limit: int | None = None, engine: str | None = None) -> list[str]:
    """The canonical lines of a Spark DataFrame, brought to the driver: for debugging a mismatch only.

    ``engine`` is as for :func:`hash_spark`.
    """
    from ubunye.hashing._spark import spark_canonical_lines_jvm, spark_schema_string

    if _engine(df, engine) == "jvm":
        return spark_canonical_lines_jvm(df, limit)
    spark_schema_string(df.schema)
    positional, names = _positional(df)
    lines = positional.mapInArrow(lambda it: _lines_of(it, names), "line string")
    if limit is not None:
        lines = lines.limit(limit)
    return [r["line"] for r in lines.collect()]
