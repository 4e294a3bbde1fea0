"""Spark DataFrames hashed and profiled where they are: the jar's functions (:mod:`ubunye.hashing.jvm`) when the
session can run them, else the twin on the executors (:mod:`ubunye.hashing.executors`).

Every function takes ``engine``: ``"jvm"`` (the jar), ``"arrow"`` (no jar), or None to choose, which picks the
jar when ``ubunye.spark.jvm_usable`` says its functions run in the DataFrame's session (a jar of another Spark
line, Scala or ubunye version is refused with a ``JarWarning``). Any other value is a ``ValueError`` naming the
choices, before Spark is asked anything; a column rows-v1 cannot hash is a ``HashError`` before any job runs.

Example:
    >>> hash_spark(spark.range(3)).row_count  # doctest: +SKIP
    3
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ubunye.hashing import executors, jvm
from ubunye.hashing.digest import FrameHash, check_engine
from ubunye.hashing.profile import DEFAULT_BUCKETS, FrameProfile, check_profile_options, wanted_buckets
from ubunye.hashing.types import spark_columns

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def choose_engine(df: DataFrame, engine: str | None) -> str:
    """``engine`` checked, or the one the DataFrame's session can run when it is None (``"jvm"`` when
    ``ubunye.spark.jvm_usable`` says so, else ``"arrow"``).

    Example:
        >>> choose_engine(None, "arrow")
        'arrow'
    """
    check_engine(engine, none_too=True)
    return engine if engine is not None else session_engine(df.sparkSession, None)


def session_engine(spark: SparkSession, engine: str | None) -> str:
    """As :func:`choose_engine`, for a session (no DataFrame needed: ``hash_delta`` may read none whole).

    Example:
        >>> session_engine(None, "jvm")
        'jvm'
    """
    check_engine(engine, none_too=True)
    if engine is not None:
        return engine
    from ubunye.spark import jvm_usable

    return "jvm" if jvm_usable(spark) else "arrow"


def hash_spark(df: DataFrame, engine: str | None = None) -> FrameHash:
    """rows-v1 of a Spark DataFrame: ``engine="jvm"`` (the jar), ``"arrow"`` (no jar), or None to choose.

    Example:
        >>> hash_spark(None, engine="jvn")
        Traceback (most recent call last):
        ValueError: engine='jvn' is not one of 'arrow', 'jvm' or None (choose)
    """
    if choose_engine(df, engine) == "jvm":
        return jvm.hash_spark_jvm(df)
    return executors.hash_spark_arrow(df)


def spark_canonical_lines(df: DataFrame, limit: int | None = None, engine: str | None = None) -> list[str]:
    """The canonical lines of a Spark DataFrame, brought to the driver: for debugging a mismatch only.

    Example:
        >>> spark_canonical_lines(None, engine="JVM")
        Traceback (most recent call last):
        ValueError: engine='JVM' is not one of 'arrow', 'jvm' or None (choose)
    """
    if choose_engine(df, engine) == "jvm":
        return jvm.spark_canonical_lines_jvm(df, limit)
    return executors.spark_canonical_lines_arrow(df, limit)


def profile_spark(
    df: DataFrame, *, key: Sequence[str] | None = None, buckets: int | None = DEFAULT_BUCKETS, engine: str | None = None
) -> FrameProfile:
    """profile-v1 of a Spark DataFrame (docs/rows-v1.md section 12.3); bad options are a ``ProfileOptionError``
    naming the value, before any job runs.

    Example:
        >>> profile_spark(None, engine="jvn")
        Traceback (most recent call last):
        ValueError: engine='jvn' is not one of 'arrow', 'jvm' or None (choose)
    """
    check_engine(engine, none_too=True)
    check_profile_options(df.columns, key, buckets)
    if choose_engine(df, engine) == "jvm":
        return jvm.profile_spark_jvm(df, key, buckets)
    return executors.profile_spark_arrow(df, key, buckets)


def spark_rows_in_buckets(
    df: DataFrame, wanted: Iterable[int], *, key: Sequence[str] | None = None, buckets: int, engine: str | None = None
) -> DataFrame:
    """The rows of ``df`` whose bucket (section 12.2) is in ``wanted``, as a lazy DataFrame of the same columns.

    Without a key the bucket is that of every column's key line, which is the row's own canonical line.

    Example:
        >>> spark_rows_in_buckets(spark.range(8), [0], key=["id"], buckets=2).count()  # doctest: +SKIP
        4
    """
    check_engine(engine, none_too=True)  # before the frame is touched
    spark_columns(df.schema)  # the type checks and errors of the profile, before any job runs
    names, n = check_profile_options(df.columns, key, buckets, zero_ok=False)
    chosen = [int(w) for w in wanted_buckets(wanted, n)]
    if choose_engine(df, engine) == "jvm":
        return jvm.spark_rows_in_buckets_jvm(df, names, n, chosen)
    return executors.spark_rows_in_buckets_arrow(df, names, n, chosen)


__all__ = [
    "choose_engine",
    "hash_spark",
    "profile_spark",
    "session_engine",
    "spark_canonical_lines",
    "spark_rows_in_buckets",
]
