"""profile-v1 of Spark DataFrames (docs/rows-v1.md section 12.3): the jar's ``ubunye_profile_v1`` when the session
can run it, else the twin on the executors.

The jar-free path runs the twin inside ``mapInArrow`` (so it works on Spark Connect, where there is no py4j):
each partition sends back one blob of its numbers (``ProfileSums.to_bytes``: counts, sums and only the buckets
it filled), and the driver adds them in Python, modulo 2^64. No Spark arithmetic touches a sum, so nothing can
overflow whatever ``spark.sql.ansi.enabled`` says, and only small numbers come back, never rows.

``spark_rows_in_buckets`` filters lazily: ``WHERE ubunye_bucket_v1(key..., n) IN (...)`` with the jar, a
``mapInArrow`` filter with the twin without it. A bucket of whole rows (no key) is the bucket of the key line made
of every column, which is the row's canonical line itself (section 12.2).

Example:
    >>> profile_spark(spark.range(3), key=["id"], buckets=4).hash.row_count  # doctest: +SKIP
    3
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ubunye.exceptions import HashError, JarNotFoundError
from ubunye.hashing.digest import check_engine
from ubunye.hashing.profile import (
    DEFAULT_BUCKETS,
    FrameProfile,
    ProfileSums,
    _batch_buckets,
    _options,
    _Profiler,
    _sums,
    _wanted,
    merge,
)
from ubunye.hashing.text import json_string

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

PROFILE_FUNCTION = "ubunye_profile_v1"
BUCKET_FUNCTION = "ubunye_bucket_v1"
_MASK = (1 << 64) - 1
_USABLE: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def _quoted(name: str) -> str:
    """A column name as a Spark identifier: backticks, a backtick in it doubled (dots, unicode stay as they are)."""
    return "`" + name.replace("`", "``") + "`"


def _col(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.col(_quoted(name))


def _spark_columns(df: DataFrame) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The schema string and ``(name, type name)`` per column in code point order, as the twin names them."""
    from pyspark.sql import types as T

    from ubunye.hashing._spark import spark_schema_string

    schema = spark_schema_string(df.schema)  # refuses bad columns, naming them, before any job runs
    columns = []
    for f in sorted(df.schema.fields, key=lambda f: f.name):
        one = spark_schema_string(T.StructType([f]))  # struct<"name":type>
        columns.append((f.name, one[len("struct<" + json_string(f.name) + ":") : -1]))
    return schema, tuple(columns)


def _empty(schema: str, columns: tuple[tuple[str, str], ...], key: tuple[str, ...] | None, n: int) -> ProfileSums:
    import numpy as np

    return _sums(schema, columns, key, np.zeros(3 + 4 * len(columns), np.uint64), np.zeros((n, 3), np.uint64))


# --- which path -------------------------------------------------------------------------------------------------


def _probe(spark: Any) -> str | None:
    """None when the jar's profile functions run here and agree with the twin on a small table; else why not."""
    from ubunye.hashing.profile import bucket_of_rows, profile_frame

    sql = (
        f"SELECT {PROFILE_FUNCTION}(4, array('k'), k, `x.y`, s) AS p, "
        f"collect_list(named_struct('k', k, 'b', {BUCKET_FUNCTION}(k, 4))) AS b "
        "FROM VALUES (1, 0.5D, 'a\"'), (2, CAST('NaN' AS DOUBLE), null), (3, null, 'é') AS t(k, `x.y`, s)"
    )
    try:
        row = spark.sql(sql).first()
    except Exception as exc:  # the JVM's error, whatever its class: a jar without the functions fails in many ways
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        return f"{PROFILE_FUNCTION} fails in this session ({exc.__class__.__name__}: {first})"
    table = pa.table(
        {
            "k": pa.array([1, 2, 3], pa.int32()),
            "x.y": pa.array([0.5, float("nan"), None], pa.float64()),  # a NaN and a null
            "s": pa.array(['a"', None, "é"], pa.string()),
        }
    )
    want = profile_frame(table, key=["k"], buckets=4)
    try:
        got = _decode(row["p"], *_columns_of(want), ("k",), 4)
    except HashError as exc:
        return str(exc)
    buckets = dict(zip([1, 2, 3], bucket_of_rows(table, key=["k"], buckets=4).tolist(), strict=True))
    jvm_buckets = {r["k"]: r["b"] for r in row["b"]}
    if got.finish("jvm") != _as_engine(want, "jvm") or jvm_buckets != buckets:
        return f"{PROFILE_FUNCTION} disagrees with the twin on a three-row probe (a jar of another ubunye version?)"
    return None


def _columns_of(profile: FrameProfile) -> tuple[str, tuple[tuple[str, str], ...]]:
    return profile.hash.schema, tuple((c.name, c.type) for c in profile.columns.values())


def _as_engine(profile: FrameProfile, engine: str) -> FrameProfile:
    from dataclasses import replace

    return replace(profile, hash=replace(profile.hash, engine=engine))


def profile_jvm_usable(spark: Any) -> bool:
    """True when the session can run the jar's ``ubunye_profile_v1`` and ``ubunye_bucket_v1``: the rows-v1 function
    is usable (``ubunye.spark.jvm_usable``), both are registered, and they agree with the twin on a probe (run
    once per session). A jar that has ``ubunye_rows_v1`` but not these (one older than profile-v1) gives False
    and a ``JarWarning`` saying so.

    Example:
        >>> profile_jvm_usable(spark)  # doctest: +SKIP
        True
    """
    try:
        return _USABLE[spark]
    except KeyError:
        pass
    except TypeError:  # a session object that cannot be weakly referenced: check every time
        return _check(spark)
    usable = _check(spark)
    _USABLE[spark] = usable
    return usable


def _check(spark: Any) -> bool:
    from ubunye.spark import JarWarning, jvm_usable

    if not jvm_usable(spark):
        return False
    missing = [f for f in (PROFILE_FUNCTION, BUCKET_FUNCTION) if not spark.catalog.functionExists(f)]
    problem = f"the ubunye jar has no {' or '.join(missing)} (a jar older than profile-v1?)" if missing else None
    problem = problem or _probe(spark)
    if problem is None:
        return True
    warnings.warn(f"{problem}; profiling without the jar (engine='arrow')", JarWarning, stacklevel=5)
    return False


def _engine(df: DataFrame, engine: str | None) -> str:
    check_engine(engine, none_too=True)
    if engine is not None:
        return engine
    return "jvm" if profile_jvm_usable(df.sparkSession) else "arrow"


def _require(df: DataFrame, function: str) -> None:
    if not df.sparkSession.catalog.functionExists(function):
        msg = (
            f"engine='jvm' needs the JVM function {function}, which this Spark session does not have "
            "(no ubunye jar registered, or one older than profile-v1: docs/rows-v1.md section 12.3); "
            "use engine='arrow' or None"
        )
        raise JarNotFoundError(msg)


# --- the profile ------------------------------------------------------------------------------------------------


def _decode(
    p: Any, schema: str, columns: tuple[tuple[str, str], ...], key: tuple[str, ...] | None, n: int
) -> ProfileSums:
    """The JVM's result struct (section 12.3) as ProfileSums; a HashError when it does not fit the schema."""
    got = [(c["name"], c["type"]) for c in p["columns"]]
    if got != list(columns):
        msg = (
            f"{PROFILE_FUNCTION} returned the columns {got} where {schema} has {list(columns)}: the jar and the "
            "Python package disagree (version mismatch?)"
        )
        raise HashError(msg)
    sums = []
    for c, (_, type_) in zip(p["columns"], columns, strict=True):
        floats = type_ in ("float32", "float64")
        if (c["nans"] is None) == floats:
            raise HashError(f"{PROFILE_FUNCTION} gave nans={c['nans']} for column {c['name']!r} of type {type_}")
        sums.append((int(c["nulls"]), int(c["nans"] or 0), int(c["sum1"]) & _MASK, int(c["sum2"]) & _MASK))
    packed = p["buckets"]
    if (packed is None) != (n == 0):
        raise HashError(f"{PROFILE_FUNCTION} gave buckets={packed!r:.40} for n_buckets={n}")
    packed = bytes(packed or b"")
    if len(packed) != 24 * n:
        raise HashError(f"{PROFILE_FUNCTION} gave {len(packed)} bytes of buckets for n_buckets={n} ({24 * n} expected)")
    row = (int(p["row_count"]), int(p["sum1"]) & _MASK, int(p["sum2"]) & _MASK)
    return ProfileSums(schema, columns, key, n, *row, tuple(sums), packed)


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
    from pyspark.sql import functions as F

    schema, columns = _spark_columns(df)
    names, n = _options(df.columns, key, buckets)
    _require(df, PROFILE_FUNCTION)
    keys = F.array(*[F.lit(k) for k in names or ()])
    call = F.call_function(PROFILE_FUNCTION, F.lit(n), keys, *[_col(c) for c in df.columns])
    p = df.agg(call.alias("p")).first()["p"]
    profile = _decode(p, schema, columns, names, n).finish("jvm")
    theirs = {c["name"]: c["fingerprint"] for c in p["columns"]}
    ours = {name: c.fingerprint for name, c in profile.columns.items()}
    if p["data_hash"] != profile.hash.data_hash or theirs != ours:
        msg = (
            f"{PROFILE_FUNCTION}'s data hash or fingerprints differ from the ones rebuilt from its sums for schema "
            f"{schema}: the jar and the Python package disagree (version mismatch?)"
        )
        raise HashError(msg)
    return profile


def _positional(df: DataFrame) -> tuple[DataFrame, list[str]]:
    """Columns renamed _0, _1, ...: mapInArrow resolves names itself and trips on dots in them."""
    names = list(df.columns)
    return df.toDF(*[f"_{i}" for i in range(len(names))]), names


def _renamed(batch: pa.RecordBatch, names: list[str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(batch.columns, names=names)


def _partition_blob(
    batches: Iterator[pa.RecordBatch], names: list[str], key: tuple[str, ...] | None, n: int
) -> Iterator[pa.RecordBatch]:
    profiler = None
    for batch in batches:
        if batch.num_rows:
            batch = _renamed(batch, names)
            profiler = profiler or _Profiler(batch.schema, key, n)
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
    schema, columns = _spark_columns(df)
    names, n = _options(df.columns, key, buckets)
    positional, real = _positional(df)
    blobs = positional.mapInArrow(lambda it: _partition_blob(it, real, names, n), "blob binary").collect()
    parts = [ProfileSums.from_bytes(r["blob"]) for r in blobs]
    return merge([_empty(schema, columns, names, n), *parts]).finish("arrow")


def profile_spark(
    df: DataFrame, *, key: Sequence[str] | None = None, buckets: int | None = DEFAULT_BUCKETS, engine: str | None = None
) -> FrameProfile:
    """profile-v1 of a Spark DataFrame: ``engine="jvm"`` (the jar), ``"arrow"`` (no jar), or None to choose
    (the JVM when :func:`profile_jvm_usable`). Any other engine is a ``ValueError`` naming it, before Spark is
    asked anything; bad options are a ``ProfileOptionError``, before any job runs.

    Example:
        >>> profile_spark(None, engine="jvn")
        Traceback (most recent call last):
        ValueError: engine='jvn' is not one of 'arrow', 'jvm' or None (choose)
    """
    check_engine(engine, none_too=True)
    _options(df.columns, key, buckets)
    if _engine(df, engine) == "jvm":
        return profile_spark_jvm(df, key, buckets)
    return profile_spark_arrow(df, key, buckets)


# --- rows of some buckets ---------------------------------------------------------------------------------------


def _filter_partition(
    batches: Iterator[pa.RecordBatch], names: list[str], key: tuple[str, ...] | None, n: int, wanted: list[int]
) -> Iterator[pa.RecordBatch]:
    import numpy as np

    chosen = np.array(wanted, dtype=np.int64)
    for batch in batches:
        if batch.num_rows:
            mask = np.isin(_batch_buckets(_renamed(batch, names), key, n), chosen)
            if mask.any():
                yield batch.filter(pa.array(mask))


def spark_rows_in_buckets(
    df: DataFrame, wanted: Iterable[int], *, key: Sequence[str] | None = None, buckets: int, engine: str | None = None
) -> DataFrame:
    """The rows of ``df`` whose bucket (section 12.2) is in ``wanted``, as a lazy DataFrame of the same columns.

    With the jar: ``df.where(ubunye_bucket_v1(key..., n) IN (...))``; without it (or ``engine="arrow"``): a
    ``mapInArrow`` filter with the twin. Without a key the bucket is that of every column's key line, which is
    the row's own canonical line.

    Example:
        >>> spark_rows_in_buckets(spark.range(8), [0], key=["id"], buckets=2).count()  # doctest: +SKIP
        4
    """
    check_engine(engine, none_too=True)  # before pyspark is imported or the frame touched
    from pyspark.sql import functions as F

    _spark_columns(df)  # the type checks and errors of the profile, before any job runs
    names, n = _options(df.columns, key, buckets, zero_ok=False)
    chosen = [int(w) for w in _wanted(wanted, n)]
    if _engine(df, engine) == "jvm":
        _require(df, BUCKET_FUNCTION)
        bucket = F.call_function(BUCKET_FUNCTION, *[_col(c) for c in (names or df.columns)], F.lit(n))
        return df.where(bucket.isin(chosen) if chosen else F.lit(False))
    positional, real = _positional(df)
    kept = positional.mapInArrow(lambda it: _filter_partition(it, real, names, n, chosen), positional.schema)
    return kept.toDF(*real)
