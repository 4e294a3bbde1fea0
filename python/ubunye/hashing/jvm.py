"""The calls to the ubunye jar's SQL functions on a Spark DataFrame: ``ubunye_rows_v1``, ``ubunye_canonical_line``,
``ubunye_profile_v1`` and ``ubunye_bucket_v1`` (docs/rows-v1.md sections 8, 9 and 12.3).

The aggregations run where the data is; only numbers and hashes come back to the driver, where the FrameHash or
FrameProfile is rebuilt from the numbers and the jar's own hashes must agree with it. Whether a session can run
the functions is for ``ubunye.spark.jvm_usable`` to say; pyspark is imported only inside the calls.

Example:
    >>> hash_spark_jvm(spark.range(3)).row_count  # doctest: +SKIP
    3
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ubunye.exceptions import HashError, JarNotFoundError
from ubunye.hashing.digest import FrameHash, finish
from ubunye.hashing.profile import DEFAULT_BUCKETS, FrameProfile, ProfileSums, check_profile_options, merge
from ubunye.hashing.types import FLOAT_TYPES, spark_columns, spark_identifier, spark_schema_string
from ubunye.spark.session import FUNCTIONS

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Row

_ROWS, _LINE, _PROFILE, _BUCKET = FUNCTIONS


def _col(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.col(spark_identifier(name))


def _positional(df: DataFrame) -> DataFrame:
    """``df`` with its columns renamed ``_0``, ``_1``, ...: Spark resolves a name case-insensitively by default, so
    ``F.col("a")`` is ambiguous when ``a`` and ``A`` are both columns (legal in rows-v1, section 2); an ordinal
    name is not. :func:`_at` then gives the jar each column under its own name."""
    return df.toDF(*[f"_{i}" for i in range(len(df.columns))])


def _at(i: int, name: str) -> Column:
    """Column ``i`` of a :func:`_positional` frame as an argument of the jar's functions: they take a column's name
    from an alias argument (``UbunyeFunctions.columnName``), so the name hashed is the real one."""
    from pyspark.sql import functions as F

    return F.col(f"_{i}").alias(name)


def require_function(df: DataFrame, function: str) -> None:
    """A ``JarNotFoundError`` naming ``function`` (one of the jar's ``FUNCTIONS``) unless the DataFrame's session
    has it: a clear refusal before a query that would fail on an unknown function.

    Example:
        >>> require_function(spark.range(1), "ubunye_rows_v1")  # doctest: +SKIP
    """
    if not df.sparkSession.catalog.functionExists(function):
        from ubunye.spark.session import diagnose

        try:  # the jar of another Spark line or Scala, or none: said as ubunye.spark.require says it
            why = diagnose(df.sparkSession)
        except Exception:  # a session that cannot be asked (Spark Connect): the general reasons below
            why = None
        why = why or "no ubunye jar registered, or one older than profile-v1: docs/rows-v1.md section 12.3"
        msg = f"engine='jvm' needs the JVM function {function}, which this Spark session does not have ({why}); "
        msg += "use engine='arrow' or None"
        raise JarNotFoundError(msg)


# --- rows-v1 ----------------------------------------------------------------------------------------------------


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
    require_function(df, _ROWS)
    h = df.agg(F.expr(f"{_ROWS}(*)").alias("h")).collect()[0]["h"]  # an aggregation has one row
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
    """The canonical lines of a Spark DataFrame from the JVM (``ubunye_canonical_line(*)``), for diffing.

    Example:
        >>> spark_canonical_lines_jvm(spark.range(1))  # doctest: +SKIP
        ['{"id":0}']
    """
    from pyspark.sql import functions as F

    spark_schema_string(df.schema)
    require_function(df, _LINE)
    lines = df.select(F.expr(f"{_LINE}(*)").alias("line"))
    if limit is not None:
        lines = lines.limit(limit)
    return [str(r["line"]) for r in lines.collect()]


# --- profile-v1 -------------------------------------------------------------------------------------------------


def _decode(
    p: Row, schema: str, columns: tuple[tuple[str, str], ...], key: tuple[str, ...] | None, n: int
) -> ProfileSums:
    """The JVM's result struct (section 12.3) as ProfileSums; a HashError when it does not fit the schema."""
    got = [(c["name"], c["type"]) for c in p["columns"]]
    if got != list(columns):
        msg = (
            f"{_PROFILE} returned the columns {got} where {schema} has {list(columns)}: the jar and the "
            "Python package disagree (version mismatch?)"
        )
        raise HashError(msg)
    sums = []
    for c, (_, type_) in zip(p["columns"], columns, strict=True):
        floats = type_ in FLOAT_TYPES
        if (c["nans"] is None) == floats:
            raise HashError(f"{_PROFILE} gave nans={c['nans']} for column {c['name']!r} of type {type_}")
        sums.append((int(c["nulls"]), int(c["nans"] or 0), int(c["sum1"]), int(c["sum2"])))
    packed = p["buckets"]
    if (packed is None) != (n == 0):
        raise HashError(f"{_PROFILE} gave buckets={packed!r:.40} for n_buckets={n}")
    packed = bytes(packed or b"")
    if len(packed) != 24 * n:
        raise HashError(f"{_PROFILE} gave {len(packed)} bytes of buckets for n_buckets={n} ({24 * n} expected)")
    signed = ProfileSums(
        schema, columns, key, n, int(p["row_count"]), int(p["sum1"]), int(p["sum2"]), tuple(sums), packed
    )
    return merge([signed])  # the one part, its sums made unsigned as merge adds them: modulo 2^64


def profile_spark_jvm(
    df: DataFrame, key: Sequence[str] | None = None, buckets: int | None = DEFAULT_BUCKETS
) -> FrameProfile:
    """profile-v1 of a Spark DataFrame with the jar's aggregate ``ubunye_profile_v1`` (section 12.3).

    The JVM returns the numbers and its own data hash and fingerprints; the profile is rebuilt here from the
    numbers, and the JVM's texts must agree with it (a HashError says the jar and the package disagree).

    Example:
        >>> profile_spark_jvm(spark.range(3), key=["id"], buckets=4).hash.engine  # doctest: +SKIP
        'jvm'
    """
    schema, columns = spark_schema_string(df.schema), spark_columns(df.schema)
    names, n = check_profile_options(df.columns, key, buckets)
    require_function(df, _PROFILE)
    call = profile_call(names, n, df.columns, positional=True)
    p = _positional(df).agg(call.alias("p")).collect()[0]["p"]
    return checked_profile_sums(p, schema, columns, names, n).finish("jvm")


def profile_call(key: tuple[str, ...] | None, n: int, columns: Sequence[str], *, positional: bool = False) -> Column:
    """``ubunye_profile_v1(n, array(key...), columns...)`` as a Column (section 12.3), for ``agg``.

    With ``positional``, ``columns`` are every column of the frame in order and the call is for that frame renamed
    by :func:`_positional` (so that names differing only in case both resolve)."""
    from pyspark.sql import functions as F

    keys = F.array(*[F.lit(k) for k in key or ()])
    args = [_at(i, c) if positional else _col(c) for i, c in enumerate(columns)]
    return F.call_function(_PROFILE, F.lit(n), keys, *args)


def checked_profile_sums(
    p: Row, schema: str, columns: tuple[tuple[str, str], ...], key: tuple[str, ...] | None, n: int
) -> ProfileSums:
    """The numbers of one result of :func:`profile_call`, the JVM's own data hash and fingerprints checked against
    the ones rebuilt from them (a HashError says the jar and the package disagree)."""
    sums = _decode(p, schema, columns, key, n)
    profile = sums.finish("jvm")
    theirs = {c["name"]: c["fingerprint"] for c in p["columns"]}
    ours = {name: c.fingerprint for name, c in profile.columns.items()}
    if p["data_hash"] != profile.hash.data_hash or theirs != ours:
        msg = (
            f"{_PROFILE}'s data hash or fingerprints differ from the ones rebuilt from its sums for schema "
            f"{schema}: the jar and the Python package disagree (version mismatch?)"
        )
        raise HashError(msg)
    return sums


def spark_rows_in_buckets_jvm(df: DataFrame, key: tuple[str, ...] | None, n: int, wanted: list[int]) -> DataFrame:
    """``df.where(ubunye_bucket_v1(key..., n) IN (wanted))``, lazily: the rows of those buckets (section 12.2).

    Without a key the bucket is that of every column's key line, which is the row's own canonical line.

    Example:
        >>> spark_rows_in_buckets_jvm(spark.range(8), ("id",), 2, [0]).count()  # doctest: +SKIP
        4
    """
    from pyspark.sql import functions as F

    require_function(df, _BUCKET)
    names = list(df.columns)
    if not names:
        # The jar's function needs a column; with none, every row is the line {} (section 3), all in its bucket.
        import pyarrow as pa

        from ubunye.hashing.profile import batch_buckets

        rows = pa.record_batch({"_": pa.nulls(1)}).select([])
        return df if int(batch_buckets(rows, None, n)[0]) in wanted else df.where(F.lit(False))
    chosen = [names.index(k) for k in key] if key else range(len(names))  # key names are exact (section 2)
    bucket = F.call_function(_BUCKET, *[_at(i, names[i]) for i in chosen], F.lit(n))
    kept = _positional(df).where(bucket.isin(wanted) if wanted else F.lit(False))
    return kept.toDF(*names)


__all__ = [
    "checked_profile_sums",
    "hash_spark_jvm",
    "profile_call",
    "profile_spark_jvm",
    "require_function",
    "spark_canonical_lines_jvm",
    "spark_rows_in_buckets_jvm",
]
