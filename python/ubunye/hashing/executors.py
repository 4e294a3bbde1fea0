"""The jar-free path on Spark: the Python twin runs on the executors inside ``mapInArrow`` (so it works on Spark
Connect too, where there is no py4j), and only a few numbers per partition come back to the driver, never rows.

- rows-v1 (docs/rows-v1.md sections 8 and 9): each partition sends its row count and two sums, each sum split
  into two 32-bit halves so that Spark's bigint additions of them never overflow, whatever
  ``spark.sql.ansi.enabled`` says; the driver puts the halves back together.
- profile-v1 (section 12.3): each partition sends one blob of its numbers (``ProfileSums.to_bytes``: counts,
  sums and only the buckets it filled) and the driver merges them in Python; no Spark arithmetic touches a sum.
- the rows of some buckets (section 12.2): a ``mapInArrow`` filter with the twin's bucket of every row.

Example:
    >>> hash_spark_arrow(spark.range(3)).row_count  # doctest: +SKIP
    3
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ubunye.hashing.digest import FrameHash, add_sums, finish, from_halves, sum_lines, to_halves
from ubunye.hashing.encode import encode_batch
from ubunye.hashing.pieces import pieces
from ubunye.hashing.profile import (
    DEFAULT_BUCKETS,
    FrameProfile,
    Profiler,
    ProfileSums,
    batch_buckets,
    check_profile_options,
    empty_sums,
    merge,
)
from ubunye.hashing.types import spark_columns, spark_schema_string

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_PARTS = ("n", "s1_hi", "s1_lo", "s2_hi", "s2_lo")


def _positional(df: DataFrame) -> tuple[DataFrame, list[str]]:
    """Columns renamed _0, _1, ...: mapInArrow resolves names itself and trips on dots in them.

    A frame of no columns gets one constant column instead: Spark's Arrow batches of no columns carry no rows, yet
    each row counts as the line ``{}`` (docs/rows-v1.md sections 3 and 9); :func:`_renamed` drops it again."""
    from pyspark.sql import functions as F

    names = list(df.columns)
    if not names:
        return df.select(F.lit(True).alias("_rows")), names
    return df.toDF(*[f"_{i}" for i in range(len(names))]), names


def _renamed(batch: pa.RecordBatch, names: list[str]) -> pa.RecordBatch:
    if not names:
        return batch.select([])  # the rows without the column that carried them (a batch keeps its row count)
    return pa.RecordBatch.from_arrays(batch.columns, names=names)


# --- rows-v1 ----------------------------------------------------------------------------------------------------


def _partition_sums(batches: Iterator[pa.RecordBatch], names: list[str]) -> Iterator[pa.RecordBatch]:
    lines = (encode_batch(piece) for b in batches if b.num_rows for piece in pieces(_renamed(b, names)))
    n, s1, s2 = add_sums(sum_lines(batch) for batch in lines)
    values = (n, *to_halves(s1), *to_halves(s2))
    yield pa.RecordBatch.from_pydict(
        {c: [v] for c, v in zip(_PARTS, values, strict=True)}, schema=pa.schema([(c, pa.int64()) for c in _PARTS])
    )


def hash_spark_arrow(df: DataFrame) -> FrameHash:
    """rows-v1 of a Spark DataFrame without the jar: the twin runs on the executors (``engine="arrow"``).

    Example:
        >>> hash_spark_arrow(spark.range(3)).row_count  # doctest: +SKIP
        3
    """
    from pyspark.sql import functions as F

    schema = spark_schema_string(df.schema)  # refuses bad columns before any job runs
    positional, names = _positional(df)
    parts = positional.mapInArrow(lambda it: _partition_sums(it, names), ", ".join(f"{c} long" for c in _PARTS))
    row = parts.agg(*[F.sum(c).alias(c) for c in _PARTS]).collect()[0]  # an aggregation has one row
    n, s1_high, s1_low, s2_high, s2_low = (int(row[c] or 0) for c in _PARTS)
    return finish(schema, n, from_halves(s1_high, s1_low), from_halves(s2_high, s2_low), engine="arrow")


def _lines_of(batches: Iterator[pa.RecordBatch], names: list[str]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        if batch.num_rows:
            for piece in pieces(_renamed(batch, names)):
                yield pa.RecordBatch.from_arrays([encode_batch(piece)], names=["line"])


def spark_canonical_lines_arrow(df: DataFrame, limit: int | None = None) -> list[str]:
    """The canonical lines of a Spark DataFrame, written by the twin on the executors.

    Example:
        >>> spark_canonical_lines_arrow(spark.range(1))  # doctest: +SKIP
        ['{"id":0}']
    """
    spark_schema_string(df.schema)
    positional, names = _positional(df)
    lines = positional.mapInArrow(lambda it: _lines_of(it, names), "line string")
    if limit is not None:
        lines = lines.limit(limit)
    return [str(r["line"]) for r in lines.collect()]


# --- profile-v1 -------------------------------------------------------------------------------------------------


def _partition_blob(
    batches: Iterator[pa.RecordBatch], names: list[str], key: tuple[str, ...] | None, n: int
) -> Iterator[pa.RecordBatch]:
    profiler = None
    for batch in batches:
        if batch.num_rows:
            batch = _renamed(batch, names)
            profiler = profiler or Profiler(batch.schema, key, n)
            profiler.add(batch)
    if profiler is not None:  # an empty partition sends nothing: the driver starts from zero
        yield pa.RecordBatch.from_pydict(
            {"blob": [profiler.sums().to_bytes()]}, schema=pa.schema([("blob", pa.binary())])
        )


def profile_spark_arrow(
    df: DataFrame, key: Sequence[str] | None = None, buckets: int | None = DEFAULT_BUCKETS
) -> FrameProfile:
    """profile-v1 of a Spark DataFrame without the jar: the twin on the executors (``engine="arrow"``).

    Example:
        >>> profile_spark_arrow(spark.range(3), buckets=0).hash.engine  # doctest: +SKIP
        'arrow'
    """
    schema, columns = spark_schema_string(df.schema), spark_columns(df.schema)
    names, n = check_profile_options(df.columns, key, buckets)
    positional, real = _positional(df)
    blobs = positional.mapInArrow(lambda it: _partition_blob(it, real, names, n), "blob binary").collect()
    zero = empty_sums(schema, columns, names, n)
    return merge([zero, *(ProfileSums.from_bytes(r["blob"]) for r in blobs)]).finish("arrow")


# --- rows of some buckets ---------------------------------------------------------------------------------------


def _filter_partition(
    batches: Iterator[pa.RecordBatch], names: list[str], key: tuple[str, ...] | None, n: int, wanted: list[int]
) -> Iterator[pa.RecordBatch]:
    chosen = np.array(wanted, dtype=np.int64)
    for batch in batches:
        if batch.num_rows:
            mask = np.isin(batch_buckets(_renamed(batch, names), key, n), chosen)
            if mask.any():
                yield batch.filter(pa.array(mask))


def spark_rows_in_buckets_arrow(df: DataFrame, key: tuple[str, ...] | None, n: int, wanted: list[int]) -> DataFrame:
    """The rows of ``df`` whose bucket (section 12.2) is in ``wanted``, lazily: a ``mapInArrow`` filter.

    Example:
        >>> spark_rows_in_buckets_arrow(spark.range(8), ("id",), 2, [0]).count()  # doctest: +SKIP
        4
    """
    positional, real = _positional(df)
    kept = positional.mapInArrow(lambda it: _filter_partition(it, real, key, n, wanted), positional.schema)
    return kept.toDF(*real) if real else kept.select()  # no columns: drop the one that carried the rows


__all__ = ["hash_spark_arrow", "profile_spark_arrow", "spark_canonical_lines_arrow", "spark_rows_in_buckets_arrow"]
