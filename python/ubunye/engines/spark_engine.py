"""The Spark engine: Spark's own readers and writers, Delta Lake through delta-spark, catalog tables, Spark SQL.

Delta needs the delta-spark jars on the session's classpath. :func:`configure_delta` adds them (resolved from
Maven Central through ``spark.jars.packages``) to a builder; a session started without them gets an
EngineError saying how to add them.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from functools import cache, reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ubunye.config import IOConfig
from ubunye.engines._io import TEXT_FORMATS, pandas_table, unwrap
from ubunye.engines.delta import COMMIT_MARK, sub_microsecond_column, timestamp_of
from ubunye.engines.inputs import check_alike, column_paths, csv_header, data_files, listing
from ubunye.engines.locks import output_lock
from ubunye.engines.partition_types import HIVE_NULL
from ubunye.engines.paths import is_url, local_path, location
from ubunye.engines.spark_read_back import check_partition_values, check_read_back, partition_columns, refuse_drift
from ubunye.engines.spark_tables import check_catalog_target, check_catalog_write, check_delta_append
from ubunye.engines.transaction import (
    CommitHook,
    merge,
    overwrite,
    refuse_file_at,
    refuse_remote_overwrite,
    target_of,
)
from ubunye.exceptions import EngineError, HashError, JarNotFoundError, SessionStartError, UbunyeError, error_text
from ubunye.hashing import FrameHash, FrameProfile, hash_frame, profile_frame
from ubunye.hashing.types import spark_identifier
from ubunye.spark.errors import spark_reason

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from ubunye.hashing.delta_files import SumsCache
    from ubunye.hashing.delta_hash import DeltaHash

log = logging.getLogger("ubunye")

#: The delta-spark jars' version. pip's delta-spark 4.4.1 asks for 4.4.1 jars, which Maven Central does not
#: have for Spark 4.2 (io.delta:delta-spark_4.2_2.13 stops at 4.4.0); override with UBUNYE_DELTA_VERSION.
DELTA_JARS_VERSION = "4.4.0"
#: Spark 4 lines with io.delta:delta-spark_<line>_2.13:4.4.0 on Maven Central (none yet for 4.3: README).
DELTA_SPARK_LINES = ("4.0", "4.1", "4.2")
#: io.delta:delta-spark_<scala>:3.3.3 serves Spark 3.5.3 and later 3.5 releases (Scala 2.12 and 2.13).
DELTA_JARS_VERSION_SPARK35 = "3.3.3"
#: Spark 3.5.0 to 3.5.2 (Databricks 15.4 LTS runs 3.5.0, 16.4 LTS 3.5.2): Delta 3.2.1 and later are built on
#: Spark 3.5.3 and declare pyspark >= 3.5.3; on 3.5.0 every SQL statement of a session with Delta 3.3's extension
#: failed (NoClassDefFoundError: catalyst.plans.logical.SupportsNonDeterministicExpression, absent from 3.5.0).
#: delta-spark 3.2.0 is built on Spark 3.5.0: the one pip installs beside those pysparks.
DELTA_JARS_VERSION_SPARK350 = "3.2.0"
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"


def _plain_type(t: pa.DataType, column: str) -> pa.DataType:
    """``t`` in types Spark's Arrow conversion takes, the values unchanged: views of text and bytes as the large
    types, ``date64`` as ``date32`` (cast safely: a time of day in it is refused), large and fixed-size lists as
    lists and fixed-size binary as binary (pyspark 3.5's conversion has no type for them; pyspark 4 makes arrays
    and binary of them alike, and rows-v1 hashes them as lists and binary), at any depth. A list view is refused
    naming the column: Arrow casts none of them safely (encode.py reads them slot by slot).

    Example:
        >>> import pyarrow as pa
        >>> _plain_type(pa.struct([("l", pa.large_list(pa.binary(4)))]), "c")
        StructType(struct<l: list<item: binary>>)
    """
    import pyarrow as pa

    from ubunye.hashing.types import is_binary_view, is_list_view, is_string_view

    if is_string_view(t):
        return pa.large_string()
    if is_binary_view(t):
        return pa.large_binary()
    if pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_date64(t):
        return pa.date32()
    if is_list_view(t):
        msg = f"column {column!r} holds a {t} (an Arrow list view), which Spark does not take: make it a list "
        msg += "first, e.g. pyarrow's pa.array(series.tolist(), pa.list_(...))"
        raise EngineError(msg)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(_plain_type(t.value_type, column)))
    if pa.types.is_map(t):
        return pa.map_(_plain_type(t.key_type, column), _plain_type(t.item_type, column))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_plain_type(f.type, column)) for f in t])
    return t


def _spark_arrow(table: pa.Table) -> pa.Table:
    """``table`` with the Arrow types pandas can hold and Spark cannot read (``string_view``, ``date64``...)
    cast to ones it reads as the same values (the same rows-v1 hash); an EngineError naming the column when a
    value would change."""
    import pyarrow as pa

    for i, field in enumerate(table.schema):
        plain = _plain_type(field.type, field.name)
        if plain != field.type:
            try:
                table = table.set_column(i, field.with_type(plain), table.column(i).cast(plain))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                msg = f"column {field.name!r} of type {field.type} cannot be handed to Spark as it is: {exc}"
                raise EngineError(msg) from exc
    return table


def _utc_text(io: IOConfig) -> str:
    """io.timestamp as the UTC instant it names (UTC when it names no zone, as the pandas and polars engines read
    it), in the one form Spark's cast reads: Spark took a zone-less time in the session's zone (another version than
    pandas read, from the same config) and refused forms the config takes (``...T05Z``, a lower-case ``z``).

    Example:
        >>> _utc_text(IOConfig("t", format="delta", timestamp="2026-12-06T09:30+05:30"))
        '2026-12-06T04:00:00.000000Z'
    """
    stamp = timestamp_of(io)
    assert stamp is not None
    return stamp.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _no_spark_type(schema: pa.Schema, exc: Exception) -> str:
    """Which column of ``schema`` has no Spark type (an unsigned integer, ...), in words naming it and what to cast
    it to (:func:`_cast_advice`)."""
    from pyspark.sql.pandas.types import from_arrow_type

    for field in schema:
        try:
            from_arrow_type(field.type)
        except Exception:
            why, advice = _cast_advice(field.type)
            msg = f"column {field.name!r} of type {field.type} has no Spark type ({why}): cast it first, {advice} "
            return msg + f"({error_text(exc)})"
    return f"the frame's columns have no Spark schema: {error_text(exc)}"


def _cast_advice(t: pa.DataType) -> tuple[str, str]:
    """Why a type (or a type inside it) has no Spark type, and what to cast it to.

    Example:
        >>> import pyarrow as pa
        >>> _cast_advice(pa.list_(pa.uint8()))
        ('Spark has no unsigned integers', 'e.g. to a signed type one size larger')
        >>> _cast_advice(pa.float16())[1]
        'e.g. to float32'
    """
    import pyarrow as pa

    leaves = [t]
    while leaves:
        leaf = leaves.pop(0)
        if pa.types.is_unsigned_integer(leaf):
            return "Spark has no unsigned integers", "e.g. to a signed type one size larger"
        if pa.types.is_float16(leaf):
            return "Spark has no half-precision float", "e.g. to float32"
        if pa.types.is_time(leaf):
            return "Spark has no time-of-day type", "e.g. to a string or an int64 of microseconds"
        leaves += [leaf.field(i).type for i in range(leaf.num_fields)]
    return "this pyspark converts no such Arrow type", "to a type Spark takes (string, int64, list, struct...)"


def _takes_arrow_tables() -> bool:
    """Whether this pyspark's createDataFrame takes a pyarrow Table (pyspark 4.0 and later)."""
    import pyspark

    return int(pyspark.__version__.split(".")[0]) >= 4


def python_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """The rows of ``table`` as tuples of the Python values pyspark's createDataFrame takes for its Spark schema:
    maps as dicts (Arrow gives lists of pairs), timestamps as ``datetime.datetime`` (Arrow gives a pandas Timestamp
    for nanoseconds), at any depth; everything else as pyarrow gives it. A timestamp with a sub-microsecond part
    (Spark keeps microseconds) is an EngineError naming the column.

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"id": [1, 2], "m": pa.array([[("a", 1)], None], pa.map_(pa.string(), pa.int64()))})
        >>> python_rows(t)
        [(1, {'a': 1}), (2, None)]
        >>> python_rows(pa.table({"t": pa.array([1_000], pa.timestamp("ns"))}))
        [(datetime.datetime(1970, 1, 1, 0, 0, 0, 1),)]
    """
    columns = [
        [_python_value(v, column.type, name) for v in _pylist(column, name)]
        for name, column in zip(table.column_names, table.columns, strict=True)
    ]
    return list(zip(*columns, strict=True)) if columns else [() for _ in range(table.num_rows)]


def _pylist(column: pa.ChunkedArray, name: str) -> list[Any]:
    """The column's Python values; one Python cannot hold (a zoned timestamp before year 1 or after 9999 in UTC,
    which Spark holds) an EngineError naming the column, not a bare OverflowError."""
    try:
        values: list[Any] = column.to_pylist()
    except (OverflowError, ValueError) as exc:
        msg = f"column {name!r} of type {column.type} holds a value Python's datetime cannot hold ({exc}): "
        msg += "pyspark 3.5's createDataFrame takes Python values; build the frame in Spark, or keep years 1 to 9999"
        raise EngineError(msg) from exc
    return values


def _python_value(value: object, arrow_type: pa.DataType, path: str) -> object:
    import datetime as dt

    import pyarrow as pa

    if value is None:
        return None
    if pa.types.is_map(arrow_type):
        key, item = arrow_type.key_type, arrow_type.item_type
        pairs = cast("list[tuple[object, object]]", value)
        entries = [
            (_python_value(k, key, f"{path}{{key}}"), _python_value(v, item, f"{path}{{value}}")) for k, v in pairs
        ]
        try:
            made = dict(entries)
        except TypeError as exc:  # a struct or list key is no dict key
            msg = f"map column {path!r} has keys of type {key}, which pyspark's createDataFrame takes only as dict "
            msg += f"keys ({exc}); build the frame in Spark, or make the keys text"
            raise EngineError(msg) from None
        if len(made) < len(pairs):  # a dict keeps one entry per key (-0.0 and 0.0 are one): rows-v1 counts each
            msg = f"map column {path!r} holds a map with a key twice (or -0.0 and 0.0), which the dict pyspark's "
            msg += "createDataFrame takes would make one entry: the frame would change; make the keys distinct"
            raise EngineError(msg)
        return made
    if pa.types.is_struct(arrow_type):
        fields = cast("dict[str, object]", value)
        return {f.name: _python_value(fields[f.name], f.type, f"{path}.{f.name}") for f in arrow_type}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or pa.types.is_fixed_size_list(arrow_type):
        return [_python_value(v, arrow_type.value_type, f"{path}[]") for v in cast("list[object]", value)]
    if pa.types.is_dictionary(arrow_type):
        return _python_value(value, arrow_type.value_type, path)
    if pa.types.is_timestamp(arrow_type) and type(value) is not dt.datetime:
        # A pandas Timestamp (pyarrow's value of a nanosecond timestamp: pandas before 3 parses to nanoseconds):
        # pyspark 3.5 takes datetime.datetime itself only (its type check is exact, CANNOT_ACCEPT_OBJECT_IN_TYPE)
        stamp = cast("pd.Timestamp", value)
        if stamp.nanosecond:
            msg = (
                f"column {path!r} holds {stamp}, which has a sub-microsecond part: Spark timestamps keep "
                "microseconds; floor the column first, e.g. series.dt.floor('us')"
            )
            raise EngineError(msg)
        return stamp.to_pydatetime()
    return value


def delta_package() -> str:
    """The Maven coordinate of the delta-spark jars for the installed pyspark (UBUNYE_DELTA_PACKAGE overrides)."""
    if os.environ.get("UBUNYE_DELTA_PACKAGE"):
        return os.environ["UBUNYE_DELTA_PACKAGE"]
    import pyspark

    major_minor = ".".join(pyspark.__version__.split(".")[:2])
    if major_minor == "3.5":  # Delta 3.3 is the last line for Spark 3.5; its jars carry only the Scala suffix
        from ubunye.spark.lines import installed_target

        patch = re.match(r"3\.5\.(\d+)", pyspark.__version__)
        default = DELTA_JARS_VERSION_SPARK35 if patch and int(patch.group(1)) >= 3 else DELTA_JARS_VERSION_SPARK350
        version = os.environ.get("UBUNYE_DELTA_VERSION", default)
        return f"io.delta:delta-spark_{installed_target().scala}:{version}"
    if major_minor not in DELTA_SPARK_LINES:
        msg = (
            f"no delta-spark jars on Maven Central for Spark {pyspark.__version__} (known lines: 3.5, "
            f"{', '.join(DELTA_SPARK_LINES)}): set UBUNYE_DELTA_PACKAGE to a coordinate that exists"
        )
        raise EngineError(msg)
    version = os.environ.get("UBUNYE_DELTA_VERSION", DELTA_JARS_VERSION)
    return f"io.delta:delta-spark_{major_minor}_2.13:{version}"


DELTA_HELP = (
    "Delta Lake is not available in this SparkSession: start it with the delta-spark jars, e.g. "
    "ubunye.engines.spark_engine.configure_delta(SparkSession.builder), which sets "
    "spark.jars.packages={pkg}, spark.sql.extensions=" + DELTA_EXTENSION + " and "
    "spark.sql.catalog.spark_catalog=" + DELTA_CATALOG + " (on Databricks Delta is built in)"
)


def _delta_package_text() -> str:
    try:
        return delta_package()
    except EngineError as exc:
        return f"<none: {exc}>"


#: Delta's session-wide commit message (every commit's ``userMetadata`` unless a write's option says otherwise).
_USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"


def _delta_jar_version(spark: SparkSession) -> str | None:
    """The version of the Delta jars the session's JVM loaded (their manifest's Implementation-Version), which is
    what reads and writes the tables: the pip package delta-spark, recorded among the packages, may be another
    version or absent (jars from spark.jars.packages, a Databricks runtime's own). None when the session has no
    Delta classes, no py4j gateway (Spark Connect) or a jar without that manifest entry."""
    try:
        jvm = spark.sparkContext._jvm
        found = None if jvm is None else jvm.org.apache.spark.sql.delta.DeltaLog
        if found is None or type(found).__name__ != "JavaClass":  # py4j names a missing class a JavaPackage
            return None
        version = found._java_lang_class.getPackage().getImplementationVersion()
    except Exception:  # no gateway, no JVM any more: not a fact this run can tell
        return None
    return str(version) if version else None


def configure_delta(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the Delta jars (from Maven Central), extension and catalog to a SparkSession builder.

    Keeps the packages and extensions the builder already has.

    Example:
        >>> from pyspark.sql import SparkSession  # doctest: +SKIP
        >>> spark = configure_delta(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
    """
    options = getattr(builder, "_options", {})
    packages = [p for p in str(options.get("spark.jars.packages", "")).split(",") if p]
    extensions = [e for e in str(options.get("spark.sql.extensions", "")).split(",") if e]
    if not any(p.startswith("io.delta:") for p in packages):
        try:
            packages.append(delta_package())
        except EngineError as exc:  # a Spark line without Delta jars still gets a session, without Delta
            log.warning("%s", exc)
            return builder
    if DELTA_EXTENSION not in extensions:
        extensions.append(DELTA_EXTENSION)
    return (
        builder.config("spark.jars.packages", ",".join(packages))
        .config("spark.sql.extensions", ",".join(extensions))
        .config("spark.sql.catalog.spark_catalog", DELTA_CATALOG)
    )


def new_session(spark_conf: dict[str, str] | None = None) -> SparkSession:
    """A SparkSession with Delta and (when built) the ubunye jar: ``spark.master`` defaults to local[2]."""
    from pyspark.sql import SparkSession

    import ubunye.spark as us

    conf = dict(spark_conf or {})
    master = conf.pop("spark.master", "local[2]")
    if master.startswith("local"):  # small data on one machine: few partitions
        conf.setdefault("spark.sql.shuffle.partitions", "4")
        conf.setdefault("spark.databricks.delta.snapshotPartitions", "2")
        conf.setdefault("spark.ui.enabled", "false")
        conf.setdefault("spark.ui.showConsoleProgress", "false")
    conf.setdefault(_TIMESTAMP_TYPE, "TIMESTAMP_MICROS")  # see _micros_timestamps
    # Dates and times as written, in the proleptic Gregorian calendar every other engine uses: Spark 4's default.
    # Spark 3.5's is EXCEPTION, which fails a read or write of a date before 1582-10-15 (pyarrow writes them).
    for rebase in _REBASE_MODES:
        conf.setdefault(rebase, "CORRECTED")
    builder = SparkSession.builder.master(master).appName("ubunye")
    for key, value in conf.items():
        builder = builder.config(key, value)
    builder = configure_delta(builder)
    try:
        builder = us.configure(builder)
    except JarNotFoundError as exc:
        log.info("ubunye jar not attached (%s); hashing runs the Python twin on the executors", exc)
    with _jvm_output_to_stderr():
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel(os.environ.get("UBUNYE_SPARK_LOG_LEVEL", "ERROR"))
    return session


@contextmanager
def _jvm_output_to_stderr() -> Iterator[None]:
    """Standard output pointed at standard error while the JVM starts: the JVM inherits the descriptor and keeps
    it, and Ivy and Spark print there (":: loading settings ..."), which mixed into what ubunye prints (``ubunye
    hash --json`` was no longer JSON)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no descriptor 1 to save (a closed or replaced stdout): leave it be
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _refuse_empty_partition_values(spark: SparkSession, frame: DataFrame, io: IOConfig) -> None:
    """An empty string in a ``partition_by`` column is refused before anything is written: Spark writes it as its
    null partition (``__HIVE_DEFAULT_PARTITION__``, Delta's null partition value), so it reads back as null and
    the data would not be the frame the record hashes (one job, on string partition columns only)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    # partitionBy resolves names as the session does: ignoring case, or exactly under spark.sql.caseSensitive=true,
    # where `a` and `A` are two columns (a lower-cased lookup checked the other one, and let '' through)
    fields = {f.name: f for f in frame.schema.fields}
    strings = (T.StringType, T.VarcharType, T.CharType)
    found_fields = [fields[c] for c in partition_columns(spark, frame, io)]
    text = [f.name for f in found_fields if isinstance(f.dataType, strings)]
    if not text:
        return
    # the text of the null partition itself is stored as that null too
    nulls = ("", HIVE_NULL)
    tests = [F.col(spark_identifier(c)).isin(*nulls) for c in text]
    found = frame.where(reduce(lambda a, b: a | b, tests)).select(*[spark_identifier(c) for c in text]).first()
    if found is None:
        return
    column, value = next((c, v) for c, v in zip(text, found, strict=True) if v in nulls)
    what = "an empty string" if value == "" else f"the text {value!r}"
    msg = f"output {io.name!r}: partition column {column!r} holds {what}, which Spark stores as its null "
    msg += "partition (it reads back as null, so the data would not be the frame the record hashes); nothing was "
    msg += "written: replace it (e.g. with a placeholder) or leave the column out of partition_by"
    raise EngineError(msg)


def _always_utc(zone: str) -> bool:
    """Whether a session time zone is UTC at every instant: an offset of zero (``Z``, ``+00:00``, ``UTC``,
    ``GMT+0``) or a region whose offset is zero in winter and summer alike (``Etc/Universal``, ``Africa/Abidjan``).

    Example:
        >>> [_always_utc(z) for z in ("Etc/Zulu", "+00:00", "Europe/London", "America/St_Johns")]
        [True, True, False, False]
    """
    import datetime as dt
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    text = zone.strip()
    if re.fullmatch(r"(?i)(z|utc|gmt|ut)?\s*([+-]0{1,2}(:?0{2})?)?", text) and text:
        return True
    try:
        info = ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    # zero in January and July of a few years apart: a zone with summer time, or one that changed, is not UTC
    days = [dt.datetime(y, m, 1, 12) for y in (1970, 2000, 2024) for m in (1, 7)]
    return all(d.replace(tzinfo=info).utcoffset() == dt.timedelta(0) for d in days)


def _delta_text(spark: SparkSession) -> str | None:
    """delta-spark's version in a classic session's JVM (``io.delta.VERSION``); None when it cannot be told
    (Spark Connect, no delta-spark on the classpath, a vendor's Delta without it)."""
    try:
        return str(spark._jvm.io.delta.package.VERSION())  # type: ignore[union-attr]
    except Exception:
        return None


def _zoneless_delta(spark: SparkSession) -> bool:
    """Whether the session's delta-spark is older than 3.3 (what configure_delta picks for Spark 3.5.0 to 3.5.2):
    it writes a timestamp partition value as ``2024-01-01 12:00:00`` without a zone (3.3 writes
    ``2024-01-01T12:00:00Z``), and each reader reads it in its own session's time zone."""
    found = re.match(r"(\d+)\.(\d+)\.", _delta_text(spark) or "")
    return found is not None and (int(found.group(1)), int(found.group(2))) < (3, 3)


def _refuse_timestamp_partitions(spark: SparkSession, frame: DataFrame, io: IOConfig) -> None:
    """A timestamp (an instant) in a ``partition_by`` column of a parquet, csv or json folder is refused before
    anything is written: Spark names the partition folder by the local time in the session's time zone, with no
    offset (``t=2024-01-01 08%3A30%3A00`` in America/St_Johns for 12:00 UTC), and reads the name back as a local
    time of the reading session's zone (pyspark 4.2 does; a name it cannot parse as a timestamp reads as a string):
    another type, or other instants, than the frame the record hashes. Delta keeps partition values as UTC
    instants in its log."""
    from pyspark.sql import types as T

    fields = {f.name: f for f in frame.schema.fields}
    stamps = [n for n in partition_columns(spark, frame, io) if isinstance(fields[n].dataType, T.TimestampType)]
    if stamps and io.format == "delta" and spark.version.startswith("3.") and _zoneless_delta(spark):
        msg = f"output {io.name!r}: partition column {stamps[0]!r} is a timestamp, and Delta {_delta_text(spark)} "
        msg += "writes it as a local time without a zone, which every reader reads in its own session's time zone "
        msg += "(other instants than the frame the record hashes outside UTC); nothing was written: partition by a "
        msg += "date or string made from it, or use delta-spark 3.3 or later (Spark 3.5.3 or later), which writes UTC"
        raise EngineError(msg)
    if stamps and io.format == "delta" and spark.version.startswith("3."):
        # delta-spark 3.x (Spark 3.5) writes a timestamp partition value as the session zone's local time marked
        # UTC ("2024-01-01T08:30:00Z" in America/St_Johns for 12:00 UTC): every reader then reads another instant
        zone = str(spark.conf.get("spark.sql.session.timeZone", "UTC"))
        if not _always_utc(zone):
            msg = f"output {io.name!r}: partition column {stamps[0]!r} is a timestamp, and Delta on Spark "
            msg += f"{spark.version} writes it as the local time of the session's time zone ({zone}) marked UTC, "
            msg += "so every reader would read other instants than the frame the record hashes; nothing was "
            msg += "written: set spark.sql.session.timeZone to UTC for this job, or partition by a date or string "
            msg += "made from it"
            raise EngineError(msg)
    if io.table is not None or io.format not in ("parquet", "csv", "json"):
        return
    if stamps:
        msg = f"output {io.name!r}: partition column {stamps[0]!r} is a timestamp, which Spark stores in {io.format} "
        msg += "as the local time of the session's time zone in a folder name, without the zone (it reads back "
        msg += "as a string, or as other instants in another time zone), so the data would not be the frame "
        msg += "the record hashes; nothing was written: write format: delta (it keeps partition values as UTC "
        msg += "instants), partition by a date or string made from it, or leave it out of partition_by"
        raise EngineError(msg)


_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?$")


def _setting(value: object) -> object:
    """A Spark setting's value as compared: numbers as numbers (``8`` is ``8.0``), sizes in bytes (``4g`` is
    ``4096m``), anything else as lower-case text."""
    text = str(value).strip().lower()
    found = _SIZE.match(text)
    if found is None:
        return text
    number, unit = float(found.group(1)), found.group(2)
    return number * 1024 ** "kmgtp".index(unit) * 1024 if unit else number


def _warn_unapplied(spark: SparkSession, spark_conf: Mapping[str, str]) -> None:
    """Say which settings of config.yaml's ``spark_conf`` the session given or already running (a notebook's, a
    Databricks job's) does not have: they apply to a session ubunye starts, and were ignored without a word."""
    differing = []
    for key, value in spark_conf.items():
        try:
            now = spark.conf.get(key)  # a setting at its default too (with a default argument, that would be it)
        except Exception:  # a setting neither set nor known to this session
            now = None
        if now is None or _setting(now) != _setting(value):
            differing.append(f"{key}={value} (the session has {now if now is not None else 'none'})")
    if differing:
        log.warning(
            "ENGINE.spark_conf is not applied to a SparkSession that was already running; it has other values for: "
            "%s. Set them on the session (spark.conf.set for spark.sql.* settings, the cluster's configuration "
            "for the others).",
            "; ".join(differing),
        )


def _plain_csv(named: Mapping[str, str], sep: str) -> bool:
    """Whether ``csv_header`` reads the header as Spark does with these (lower-cased) options: a one-character
    separator, the double quote (doubled inside quotes: ``escape`` as this engine sets it), no comment lines, no
    other line separator."""
    quote, escape = named.get("quote", '"'), named.get("escape", '"')
    return len(sep) == 1 and quote == '"' and escape == '"' and not named.get("comment") and not named.get("linesep")


def _check_files_alike(
    io: IOConfig,
    files: list[Path],
    root: Path,
    options: Mapping[str, str],
    *,
    case_sensitive: bool = False,
    parquet_schema: Callable[[Path], pa.Schema] | None = None,
) -> None:
    """Refuse (EngineError naming two files) the files of one input that Spark would read otherwise than they are:
    csv files whose headers differ (Spark pairs every file's values with one file's header by position: columns
    in another order were swapped, silently) and parquet files whose columns or types differ (Spark takes one
    file's schema: another file's extra column was dropped, another type failed mid-hash). json files are read by
    name and their schemas merged: not checked. Partition folders must match as on the other engines."""
    if io.format == "csv":
        named = {k.lower(): v for k, v in options.items()}  # Spark takes option names in any case
        sep = named.get("sep", named.get("delimiter", ","))
        if named.get("header", "true").lower() != "true" or not _plain_csv(named, sep):
            # no header (Spark names the columns _c0, _c1... by position in every file alike), or one Python's csv
            # cannot read as Spark does (a separator of two characters, comment lines, another quote): the
            # partition folders alone
            check_alike(io, files, root, lambda file: [])
            return
        headers: dict[Path, list[str]] = {}

        def header(file: Path) -> list[str]:
            if file not in headers:
                headers[file] = _unique_header(io, file, csv_header(file, sep), case_sensitive)
            return headers[file]

        header(files[0])
        check_alike(io, files, root, header, ordered=True)
    elif io.format == "parquet":
        import pyarrow.parquet as pq

        schema_of = parquet_schema or pq.read_schema
        # Names, nested ones too; not types: pyarrow's differ where Spark's do not (large_string and string,
        # INT96 and INT64 timestamps), and a type Spark cannot read alike fails its read in one line
        check_alike(io, files, root, lambda file: column_paths(schema_of(file)))
    else:  # json: read by name, the files' schemas merged
        check_alike(io, files, root, lambda file: [])


def _refuse_arrow_only_types(io: IOConfig, files: list[Path], schema_of: Callable[[Path], pa.Schema]) -> None:
    """Raise EngineError naming the input, file, column (or nested field) and type when a parquet file holds, at
    any depth, an Arrow type rows-v1 refuses (docs/rows-v1.md section 11, ``parquet_leaves.arrow_only``): an
    unsigned integer (parquet's UINT_8 to UINT_64), a null (pandas' all-None column), a half float, or an Arrow
    duration or extension type (kept in the ``ARROW:schema`` of its footer: ``arrow.uuid``, ``arrow.json``,
    ``arrow.bool8``). The pandas and polars engines refuse to hash them, but Spark reads them as other types
    (uint8 as smallint, uint64 as decimal(20,0), a null as int, a duration as its int64 count, arrow.json as a
    string, arrow.bool8 as a byte), which its hash would have taken for the data: one table, a hash on one engine
    and none on the others; or fails naming no column (a half float: "cannot read file footer" on Spark 3.5)."""
    import pyarrow as pa

    from ubunye.engines.parquet_leaves import arrow_only, refuse_logical_only  # imported when a parquet is read

    for file in files:
        refuse_logical_only(io.name, file, str(file))  # pyarrow 14 gives JSON and UUID no extension type
        for field in schema_of(file):
            found = arrow_only(field.type, field.name)
            if found is None:
                continue
            path, t = found
            where = f"column {path!r}" if path == field.name else f"field {path!r}"
            kind = f"a {t}" if pa.types.is_duration(t) or pa.types.is_unsigned_integer(t) else f"of type {t}"
            msg = f"input {io.name!r}: {where} of {file} is {kind}, which rows-v1 does not hash (docs/rows-v1.md "
            if pa.types.is_duration(t):
                msg += "section 11) and Spark would read as its int64 count of units: store it as an int64 of "
                msg += "microseconds (or as text) first"
            elif pa.types.is_null(t):
                msg += "section 11: every value null, it has no type) and Spark would read as an int: give it a "
                msg += "type first (e.g. cast to string)"
            elif pa.types.is_float16(t):
                msg += "section 11: half floats have no rows-v1 type), nor Spark reads: cast it to float32 first"
            elif isinstance(t, pa.BaseExtensionType):
                msg += f"section 11) and Spark would read as its storage type, {t.storage_type}: store it as a "
                msg += "plain type (its storage, or text) first"
            else:
                msg += "section 11) and Spark would read as a wider signed type (uint64 as a decimal): store it as "
                msg += "a signed integer one size larger first"
            raise EngineError(msg)


def _unique_header(io: IOConfig, file: Path, names: list[str], case_sensitive: bool) -> list[str]:
    """``names``, the csv header of ``file``, unless it names a column twice (ignoring case, unless the session
    is case sensitive): Spark then renames both (``a,A`` and ``a,a`` read as ``a0``, ``A1``), columns no other
    engine reads (pandas and polars refuse ``a,a`` and keep ``a,A``)."""
    seen: dict[str, str] = {}
    for name in names:
        folded = name if case_sensitive else name.lower()
        if name and folded in seen:
            msg = f"input {io.name!r}: csv header of {file} names column {seen[folded]!r} twice ({name!r}"
            msg += "" if case_sensitive else ": Spark compares names ignoring case"
            msg += ", and would rename both); every column needs a name of its own"
            raise EngineError(msg)
        seen[folded] = name
    return names


@contextmanager
def _spark_failures() -> Iterator[None]:
    """Spark's own errors while hashing as an EngineError in one line. Spark reads lazily: a file it cannot read (a
    malformed csv row, parquet files whose column types differ) fails first here, with a py4j error whose text is
    pages of JVM stack."""
    try:
        yield
    except UbunyeError:
        raise
    except Exception as exc:
        if getattr(exc, "java_exception", None) is None and not type(exc).__module__.startswith("pyspark"):
            raise  # not Spark's: our own defect, which must show as one
        # EngineError, not HashError: a HashError means "rows-v1 cannot hash these rows", which callers may pass
        # over (a csv output's read-back check does); a read that failed must fail what asked for it.
        raise EngineError(
            f"Spark failed computing the rows to hash (reading them, or the query making them): {spark_reason(exc)}"
        ) from exc


def _reader_options(io: IOConfig) -> dict[str, str]:
    """The options Spark reads ``io`` with: its own, over the defaults for csv (a header, inferred types, and
    records spanning lines: every writer quotes a value holding a line break, and Spark's line-by-line default
    would split it into rows of garbage; a quote inside quotes doubled, as RFC 4180, pyarrow and polars have it,
    not Spark's backslash, which the other readers take as text)."""
    options = {str(k): str(v) for k, v in io.options.items()}
    if io.format == "csv":
        options = {"header": "true", "inferSchema": "true", "multiLine": "true", "escape": '"', **options}
    if io.format in ("csv", "json") and not any(k.lower() == "mode" for k in options):
        # Spark's default (PERMISSIVE) reads a malformed row as nulls, drops a csv row's extra fields and adds a
        # _corrupt_record column for broken json: rows no other engine reads, hashed as data. FAILFAST refuses the
        # file, as the pandas and polars engines do; `mode: PERMISSIVE` in the input's options asks for Spark's.
        options["mode"] = "FAILFAST"
    return options


_TIMESTAMP_TYPE = "spark.sql.parquet.outputTimestampType"
_REBASE_MODES = tuple(
    f"spark.sql.{fmt}.{kind}RebaseModeIn{side}"
    for fmt in ("parquet", "avro")
    for kind in ("datetime", "int96")
    for side in ("Read", "Write")
    if not (fmt == "avro" and kind == "int96")
)


@contextmanager
def _micros_timestamps(spark: SparkSession, io: IOConfig) -> Iterator[None]:
    """Parquet files (a parquet output, a Delta table's data files) written as every engine reads them, for the
    length of one write, the session's settings put back after: timestamps as TIMESTAMP_MICROS (Spark's default,
    INT96, carries no time zone: pyarrow, polars and DuckDB read it as timestamp_ntz, and polars clamps one past
    2262 to it without a word; TIMESTAMP_MILLIS drops the microseconds), dates and timestamps not rebased to the
    hybrid calendar (a session's LEGACY write mode stores 1000-01-01 as what other readers read as 1000-01-06)."""
    fmt = io.format
    if fmt is None and io.table is not None:  # a catalog table without a format: the session's default source
        try:
            fmt = str(spark.conf.get("spark.sql.sources.default", "parquet")).lower()
        except Exception:
            fmt = "parquet"
    if fmt not in ("parquet", "delta"):
        yield
        return
    pins = {_TIMESTAMP_TYPE: "TIMESTAMP_MICROS"}
    pins.update(
        (name, "CORRECTED") for name in _REBASE_MODES if name.startswith("spark.sql.parquet.") and "Write" in name
    )
    saved: dict[str, str | None] = {}
    try:
        for key, value in pins.items():
            try:
                before = spark.conf.get(key, None)
            except Exception:  # a session that keeps its settings to itself: Spark's own default then
                before = None
            if str(before).upper() != value:
                try:
                    spark.conf.set(key, value)
                except Exception as exc:  # a platform that locks its settings (Databricks serverless allows few)
                    log.warning("could not set %s=%s for this write (%s): other engines may read its parquet files "
                                "otherwise than Spark", key, value, error_text(exc))  # fmt: skip
                    continue
                saved[key] = before  # once set: a set refused puts nothing back
        yield
    finally:
        for key, before in saved.items():
            if before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, before)


def _keeps_files(io: IOConfig, folder: Path, staging: Path, *, partitions_only: bool) -> bool:
    """Whether the commit of ``staging`` (Spark's new files) into ``folder`` keeps data files already there: any,
    for an append; those of partitions the new data has none of, for a dynamic partition overwrite (as
    ``transaction.merge`` links them)."""
    if not folder.is_dir():
        return False
    for file in listing(io, folder):
        part = file.parent.relative_to(folder)
        if not partitions_only or (part != Path(".") and not (staging / part).is_dir()):
            return True
    return False


#: What Hadoop's path globbing (Spark's reader, and its read-back of a staged output) takes as a pattern.
_GLOB = re.compile(r"[*?\[\]{}\\]")


def _refuse_glob(io: IOConfig, where: str, verb: str) -> None:
    """Raise EngineError when Spark would read ``where`` as a glob pattern: ``data/[ab]`` reads ``data/a`` and
    ``data/b``, not the folder named so, while the record names the folder (the other engines read it)."""
    found = _GLOB.search(where)
    if found is None:
        return
    msg = f"{verb} {io.name!r}: {where} holds {found.group()!r}, which Spark reads as a glob pattern (it would "
    msg += "read other folders than the one named, and the record would name this one): rename the folder"
    raise EngineError(msg)


def _start_reason(exc: BaseException) -> str:
    """Why a SparkSession did not start, in one line: the JVM's innermost cause (``ClassNotFoundException:
    no.such.Serializer`` for a ``spark.serializer`` that names no class), else pyspark's own words
    (``[JAVA_GATEWAY_EXITED] Java gateway process exited...``: spark-submit refused a setting, ``spark.executor.memory:
    1x``, and the JVM exited before it could answer; its lines are on standard error above).

    Example:
        >>> _start_reason(RuntimeError("[JAVA_GATEWAY_EXITED] Java gateway process exited.\\nmore"))
        "RuntimeError: [JAVA_GATEWAY_EXITED] Java gateway process exited. (the JVM's own lines are on standard error)"
    """
    reason = spark_reason(exc)
    if getattr(exc, "java_exception", None) is None and "JAVA_GATEWAY" in str(exc):
        reason += " (the JVM's own lines are on standard error)"
    return reason


#: The session settings recorded among a run's Spark facts (``environment.spark``) because the same query or read
#: gives other data under another value, though nothing in the task changed: ``lineage compare`` names the one
#: that moved. Spark's own default counts (Spark 4 turned ANSI on): read from the session, never assumed.
RESULT_SETTINGS = {
    "session_time_zone": "spark.sql.session.timeZone",  # timestamps cast to and from text, dates of instants
    "ansi_enabled": "spark.sql.ansi.enabled",  # an overflow or a bad cast fails instead of null; size(NULL) null
    "store_assignment_policy": "spark.sql.storeAssignmentPolicy",  # how a value is cast into a table's column
    "time_parser_policy": "spark.sql.legacy.timeParserPolicy",  # how dates and times are parsed from text
    "parquet_datetime_rebase_read": "spark.sql.parquet.datetimeRebaseModeInRead",  # old dates in parquet files
    "parquet_int96_rebase_read": "spark.sql.parquet.int96RebaseModeInRead",  # old INT96 timestamps
    # Impala's INT96 (a local time) shifted by the session zone on read: other instants from the same file
    "parquet_int96_conversion": "spark.sql.parquet.int96TimestampConversion",
    "decimal_precision_loss": "spark.sql.decimalOperations.allowPrecisionLoss",  # decimal products and quotients
}


def _is_delta_missing(exc: BaseException) -> bool:
    text = str(exc)
    return "DATA_SOURCE_NOT_FOUND" in text or ("delta" in text.lower() and "ClassNotFound" in text)


class SparkEngine:
    """Runs tasks on Spark DataFrames (``pyspark.sql.DataFrame``, classic or Connect), in the given session, the
    active one, or a new local one."""

    name = "spark"

    def __init__(self, spark: SparkSession | None = None, spark_conf: dict[str, str] | None = None) -> None:
        self._spark = spark
        self.spark_conf = dict(spark_conf or {})
        self._default_fs_local: bool | None = None
        self._start_failed: SessionStartError | None = None  # raised again: one JVM start per engine, not per call
        self._persisted: set[int] = set()  # ids of the frames hold() persisted (release() unpersists those only)
        if spark is not None:
            _warn_unapplied(spark, self.spark_conf)

    @property
    def spark(self) -> SparkSession:
        """The SparkSession (created on first use when there is no active one)."""
        if self._spark is None:
            from pyspark.sql import SparkSession

            if self._start_failed is not None:
                raise self._start_failed
            active = SparkSession.getActiveSession()
            if active is not None:
                _warn_unapplied(active, self.spark_conf)
                self._spark = active
            else:
                try:
                    self._spark = new_session(self.spark_conf)
                except Exception as exc:
                    self._start_failed = SessionStartError(f"the Spark session could not start: {_start_reason(exc)}")
                    raise self._start_failed from exc
        return self._spark

    def _fail(self, io: IOConfig, verb: str, where: str, exc: Exception) -> EngineError:
        if io.format == "delta" and _is_delta_missing(exc):
            return EngineError(f"{verb} {io.name!r} at {where}: " + DELTA_HELP.format(pkg=_delta_package_text()))
        action = "read" if verb == "input" else "write"
        why = spark_reason(exc)
        return EngineError(f"{verb} {io.name!r}: cannot {action} {io.format or 'table'} at {where}: {why}")

    def local_root(self, where: str) -> Path | None:
        """The driver-local path ``where`` names, or None when Spark resolves it elsewhere (HDFS, DBFS, s3...).

        A ``file://`` URL is local; a plain path is local when the session's default filesystem (fs.defaultFS)
        is ``file:``; on Spark Connect, where the client cannot see the server's filesystem, it is not.

        Example:
            >>> SparkEngine(spark=object()).local_root("s3://bucket/out") is None
            True
        """
        if is_url(where):
            return local_path(where)
        if self._default_fs_local is None:
            self._default_fs_local = self._default_fs_is_local()
        return Path(where) if self._default_fs_local else None

    def _default_fs_is_local(self) -> bool:
        # A session that cannot start raises here (SessionStartError): taken for "not local", it was reported as
        # "cannot overwrite parquet at <a local path> safely: that storage has no atomic rename"
        spark = self.spark
        try:
            default_fs = spark.sparkContext._jsc.hadoopConfiguration().get("fs.defaultFS")
        except Exception:  # Spark Connect: no JVM here, and the server's disk is not ours to rename on
            return False
        return str(default_fs or "file:///").startswith("file:")

    def read(self, io: IOConfig, base_dir: Path) -> DataFrame:
        where = location(io, base_dir)
        options = _reader_options(io)
        if io.version is not None:
            options["versionAsOf"] = str(io.version)
        if io.timestamp is not None:
            options["timestampAsOf"] = _utc_text(io)
        if io.table is None and self.local_root(where) is not None:
            # On the driver's disk the folder named is checked (inputs.data_files) and must be what Spark reads. A
            # pattern on an object store (s3a://b/logs/2026-12-*) is Spark's to expand, and what the record names.
            _refuse_glob(io, where, "input")
        try:
            if io.table is None and io.format in ("parquet", "csv", "json"):
                local = self.local_root(where)
                # Checked as on the other engines: no stray file, no empty folder, UTF-8 text (inputs.py).
                files = data_files(io, str(local)) if local is not None else None
                if files == []:
                    from pyspark.sql.types import StructType

                    return self.spark.createDataFrame([], StructType([]))  # allow_empty, no declared schema
                if files and local is not None:
                    import pyarrow.parquet as pq

                    sensitive = self._setting("spark.sql.caseSensitive", "false").lower() == "true"
                    # each footer read once, for both checks (its Arrow schema: the ARROW:schema a pyarrow keeps)
                    schemas = cache(pq.read_schema)
                    _check_files_alike(io, files, local, options, case_sensitive=sensitive, parquet_schema=schemas)
                    if io.format == "parquet":
                        _refuse_arrow_only_types(io, files, schemas)
            reader = self.spark.read.options(**options)
            if io.table is not None:
                return reader.table(io.table)
            return reader.load(where, format=io.format)
        except EngineError:
            raise
        except Exception as exc:
            raise self._fail(io, "input", where, exc) from exc

    def write(
        self, frame: DataFrame, io: IOConfig, base_dir: Path, *, before_commit: Callable[[], None] | None = None
    ) -> int | None:
        """Write one output, all of it or nothing; the Delta version a Delta write (at a path, or to a Delta
        catalog table) committed, found by the mark its commit carries as Delta's ``userMetadata``, else None.

        A local parquet/csv/json folder: Spark writes into a staging sibling, which is swapped in whole
        (``engines.transaction``); ``before_commit`` runs just before the swap. Delta and catalog tables commit
        through Delta's log (or the catalog) in Spark's one save job, so ``before_commit`` runs just before it.
        Overwriting parquet/csv/json elsewhere (HDFS, DBFS, object stores) is refused; appending there is Spark's.

        Example:
            >>> engine = SparkEngine(spark=object())
            >>> engine.write(None, IOConfig("o", format="csv", path="s3://b/o"), Path("/u"))
            Traceback (most recent call last):
            ubunye.exceptions.EngineError: output 'o': cannot overwrite csv at s3://b/o safely: ...
        """
        where = location(io, base_dir)
        options = {str(k): str(v) for k, v in io.options.items()}
        if io.format == "csv":
            options = {"header": "true", "escape": '"', **options}
        hook = CommitHook(before_commit)
        local = None if io.table is not None else self.local_root(where)
        self.check_output(io, base_dir)
        try:
            _refuse_empty_partition_values(self.spark, frame, io)
            _refuse_timestamp_partitions(self.spark, frame, io)
            writer = frame.write.options(**options)
            if io.partition_by:
                writer = writer.partitionBy(*io.partition_by)
            if io.format is not None:
                writer = writer.format(io.format)
            if io.table is not None:
                provider = check_catalog_write(self.spark, frame, io)
                if io.format is None and provider is not None:  # the table's own, not the session's default
                    writer = writer.format(provider)
                delta = self._catalog_provider(io, provider) == "delta"
                mark = None if not delta or self._own_metadata(options) else f"{COMMIT_MARK}={uuid.uuid4().hex}"
                if mark is not None:  # no lock serialises writers of a catalog table: its commit is found by this
                    writer = writer.option("userMetadata", mark)
                hook()
                with _micros_timestamps(self.spark, io):
                    writer.mode(io.mode).saveAsTable(io.table)
                return self._table_version(io, mark) if delta else None
            elif io.format == "delta" or local is None:
                mark = None
                # A user's own userMetadata (the output's option, or the session's setting, which the option would
                # override) is kept: no mark then, and the version recorded is the latest (_written_version).
                if io.format == "delta" and not self._own_metadata(options):
                    mark = f"{COMMIT_MARK}={uuid.uuid4().hex}"
                    writer = writer.option("userMetadata", mark)
                # the folder really written (a symlink's target), as the local engines and a run lock it
                with output_lock(str(target_of(local))) if local is not None else nullcontext():
                    if io.format == "delta":
                        check_delta_append(self.spark, frame, io, where)
                    hook()
                    with _micros_timestamps(self.spark, io):
                        writer.mode(io.mode).save(where)
                return None if mark is None else self._committed_version(io, where, mark)
            else:
                merged = io.mode == "append" or bool(io.partition_by and self._dynamic_overwrite(options))
                if io.mode == "append":
                    stage = merge(io, local, hook)
                elif merged:
                    stage = merge(io, local, hook, partitions_only=True)
                else:
                    stage = overwrite(io, local, hook)
                expected = self._text_hash(frame, io)
                if io.mode == "append" and expected is not None and expected.row_count == 0:
                    hook()  # a day without rows adds nothing (an empty csv or json part reads back as no table)
                    return None
                with stage as staging, _micros_timestamps(self.spark, io):
                    # Spark's overwrite deletes before it writes: here it deletes only our empty staging folder.
                    target = f"file://{staging}" if is_url(where) else str(staging)
                    writer.mode("overwrite").save(target)
                    # Read back with the frame's types only when existing files join the new ones at the commit
                    # (the types a reader infers then come from all of them: refuse_drift); the first append to an
                    # empty folder is all the folder will hold, so it is read back as the next read will read it.
                    typed = merged and _keeps_files(io, local, staging, partitions_only=io.mode != "append")
                    if expected is not None:  # the staging folder holds the new files alone until the commit
                        opts = _reader_options(io)
                        check_read_back(self.spark, frame, expected, io, target, opts, typed=typed)
                    elif io.partition_by and io.format == "parquet" and not typed:  # else inferred from all folders
                        check_partition_values(self.spark, frame, io, target, _reader_options(io))
                    if merged:  # the existing files join the new ones at the commit: they must read alike
                        refuse_drift(self.spark, frame, io, local, staging, _reader_options(io))
        except Exception as exc:
            if hook.raised is not None:
                if hook.raised is exc:
                    raise
                raise hook.raised from exc
            if isinstance(exc, EngineError):
                raise
            raise self._fail(io, "output", where, exc) from exc
        return None

    def _committed_version(self, io: IOConfig, where: str, mark: str) -> int | None:
        """The version of the Delta table at ``where`` whose commit carries ``mark`` as its userMetadata; None when
        none does or the history does not read (the data is committed all the same: the runner then records the
        latest version)."""
        try:
            return self._marked_version(f"delta.{self.quote(where)}", mark)
        except Exception as exc:
            log.warning("output %r: could not read back the Delta version written: %s", io.name, spark_reason(exc))
        return None

    def _marked_version(self, table: str, mark: str) -> int | None:
        """The version of the Delta ``table`` (SQL: a catalog name or ``delta.`path```) whose commit carries
        ``mark`` as its userMetadata, among the newest commits first, then the whole history; None when none does.
        Each commit is its own row of ``DESCRIBE HISTORY``, numbered by its log file: another writer's commit,
        before or after this one, has another version and no such mark."""
        for limit in (" LIMIT 32", ""):  # just committed: among the newest unless many others followed it
            history = self.spark.sql(f"DESCRIBE HISTORY {table}{limit}")
            found = history.where(history["userMetadata"] == mark).select("version").head(1)
            if found:
                return int(found[0][0])
        return None

    def _own_metadata(self, options: Mapping[str, str]) -> bool:
        """Whether a Delta write carries the user's own userMetadata (the output's option, in any case, or Delta's
        session-wide setting, which a write option would override): it is kept, and the write then has no mark."""
        return "usermetadata" in {k.lower() for k in options} or self._setting(_USER_METADATA, "") != ""

    def _catalog_provider(self, io: IOConfig, provider: str | None) -> str:
        """The provider a write to the catalog table of ``io`` stores: the table's (``provider``, from
        ``check_catalog_write``), for a new table the config's format or else the session's default source (Delta
        on Databricks); "" when the catalog does not say and the config gives no format."""
        if provider:
            return provider
        if io.format:
            return io.format.lower()
        return self._setting("spark.sql.sources.default", "parquet").strip().lower() if provider is None else ""

    def _table_version(self, io: IOConfig, mark: str | None) -> int | None:
        """The version the write to the Delta catalog table of ``io`` committed: the one whose commit carries
        ``mark``. None, with a warning saying why, when it cannot be told: the write carried the user's own
        userMetadata (no mark), or the history does not read or holds no commit with the mark. Never the latest:
        nothing serialises the writers of a catalog table (no lock on the driver's disk), so it may be another's."""
        assert io.table is not None
        why = None
        if mark is None:
            why = "the write carries its own userMetadata (the output's option or Delta's session setting), which "
            why += "leaves no mark to find its commit by, and the latest version may be another writer's"
        else:
            try:
                found = self._marked_version(io.table, mark)
            except Exception as exc:
                why = f"its history (DESCRIBE HISTORY) did not read: {spark_reason(exc)}"
            else:
                if found is not None:
                    return found
                why = f"no commit in its history carries this write's mark (userMetadata {mark})"
        log.warning("output %r: the Delta version written to the catalog table %s is not recorded: %s", io.name,
                    io.table, why)  # fmt: skip
        return None

    def _text_hash(self, frame: DataFrame, io: IOConfig) -> FrameHash | None:
        """The hash a csv or json output must read back with (None for other formats, or a frame rows-v1
        refuses: the record then holds no hash either)."""
        if io.format not in TEXT_FORMATS:
            return None
        try:
            return self.hash(frame)
        except HashError:
            return None

    def check_output(self, io: IOConfig, base_dir: Path) -> None:
        """Raise EngineError if this output cannot be written, judged from its config and location alone, so the
        runner can refuse before reading anything: parquet/csv/json overwrite off the driver's disk (no atomic
        rename there), a file where a local output folder goes; a catalog table that is a view, of another
        provider than ``format``, or overwritten without an atomic commit (:func:`check_catalog_target`).
        ``write`` checks again.

        Example:
            >>> SparkEngine(spark=object()).check_output(IOConfig("o", format="json", path="s3://b/o"), Path("/u"))
            Traceback (most recent call last):
            ubunye.exceptions.EngineError: output 'o': cannot overwrite json at s3://b/o safely: ...
        """
        if io.table is not None:
            try:
                check_catalog_target(self.spark, io)
            except EngineError:
                raise
            except Exception as exc:  # the catalog itself failed: say which output asked it
                raise self._fail(io, "output", io.table, exc) from exc
            return
        where = location(io, base_dir)
        _refuse_glob(io, where, "output")
        local = self.local_root(where)
        if io.format == "delta":  # Delta's log commits atomically wherever it is; a file is no table's folder
            if local is not None:
                refuse_file_at(io, local)
            return
        if local is None:
            if io.mode == "overwrite":
                refuse_remote_overwrite(io, where)
            return
        refuse_file_at(io, local)

    def _setting(self, key: str, default: str) -> str:
        """A session setting, or ``default`` where the session cannot say (Spark Connect, a stopped session)."""
        try:
            return str(self.spark.conf.get(key, default))
        except Exception:
            return default

    def _dynamic_overwrite(self, options: dict[str, str]) -> bool:
        """Spark's partitionOverwriteMode=dynamic: an overwrite replaces only the partitions it writes."""
        # Spark takes option names in any case: partitionoverwritemode missed here was an overwrite of every partition
        mode = next((v for k, v in options.items() if k.lower() == "partitionoverwritemode"), None)
        if mode is None:
            mode = self._setting("spark.sql.sources.partitionOverwriteMode", "static")
        return str(mode).lower() == "dynamic"

    def _views(self, sources: Mapping[str, object]) -> list[str]:
        for name, frame in sources.items():
            self.native(frame).createOrReplaceTempView(name)
        return list(sources)

    def _drop(self, names: list[str]) -> None:
        for name in names:
            self.spark.catalog.dropTempView(name)

    def sql(self, query: str, sources: Mapping[str, object]) -> DataFrame:
        names = self._views(sources)
        try:
            return self.spark.sql(query)
        finally:
            self._drop(names)

    def scalar(self, query: str, sources: Mapping[str, object]) -> Any:  # noqa: ANN401 (one SQL value, any type)
        names = self._views(sources)
        try:
            return self.spark.sql(query).head(1)[0][0]
        finally:
            self._drop(names)

    def quote(self, column: str) -> str:
        return spark_identifier(column)

    def hash(self, frame: DataFrame) -> FrameHash:
        with _spark_failures():
            return hash_frame(frame)

    def profile(self, frame: DataFrame, *, key: list[str] | None, buckets: int) -> FrameProfile:
        with _spark_failures():
            return profile_frame(frame, key=key, buckets=buckets)

    def delta_version(self, io: IOConfig, base_dir: Path) -> int | None:
        """From the table's history (``DESCRIBE HISTORY``): io.version, the last commit at or before
        io.timestamp (what ``timestampAsOf`` reads), or the latest."""
        if io.format != "delta" or io.table is not None:
            return None
        if io.version is not None:
            return io.version
        from pyspark.sql import functions as F

        where = location(io, base_dir)
        try:
            if io.timestamp is None:  # the latest: the newest commit alone (a run asks before and after each write)
                latest = self.spark.sql(f"DESCRIBE HISTORY delta.{self.quote(where)} LIMIT 1").select("version")
                first = latest.head(1)
                return int(first[0][0]) if first else None
            history = self.spark.sql(f"DESCRIBE HISTORY delta.{self.quote(where)}")
            if io.timestamp is not None:
                history = history.where(F.col("timestamp") <= F.lit(_utc_text(io)).cast("timestamp"))
            found = history.agg(F.max("version")).head(1)[0][0]
        except Exception as exc:
            raise self._fail(io, "input", where, exc) from exc
        if found is None:
            msg = f"input {io.name!r}: Delta table at {where} has no version at or before {io.timestamp}"
            raise EngineError(msg)
        return int(found)

    def hash_delta(self, io: IOConfig, base_dir: Path, *, version: int | None, cache: SumsCache) -> DeltaHash | None:
        """The Delta path input's hash (and profile, when ``io.profile``) as ``spark.read.format("delta")`` reads
        it, its log read by deltalake (which cannot open every location Spark can, e.g. ``dbfs:``: it then raises)."""
        if io.format != "delta" or io.table is not None:
            return None
        from ubunye.hashing.delta_hash import hash_delta

        where = location(io, base_dir)
        storage = io.storage_options or None
        return hash_delta(
            where, cache=cache, version=version, spark=self.spark, storage_options=storage,
            profile=io.profile, key=io.key or None, buckets=io.buckets,
        )  # fmt: skip

    def native(self, frame: object) -> DataFrame:
        frame = unwrap(frame)
        if type(frame).__module__.startswith("pyspark.sql") and hasattr(frame, "createOrReplaceTempView"):
            return cast("DataFrame", frame)  # classic or Connect (pyspark 3.5's Connect frame is no subclass)
        msg = f"the spark engine needs a Spark DataFrame, got {type(frame).__module__}.{type(frame).__name__}"
        raise EngineError(msg)

    def from_pandas(self, frame: pd.DataFrame) -> DataFrame:
        from pyspark.sql.pandas.types import from_arrow_schema

        table = _spark_arrow(pandas_table(frame, strict=True))
        # Spark reads a zone-less Arrow timestamp as an instant unless told; rows-v1 (and pandas) call it
        # timestamp_ntz, so say so (found by ubunye.testing.backend_conformance).
        try:
            schema = from_arrow_schema(table.schema, prefer_timestamp_ntz=True)
        except Exception as exc:  # pyspark's own words name the type only: find the column
            raise EngineError(_no_spark_type(table.schema, exc)) from exc
        if _takes_arrow_tables():
            # Spark keeps microseconds and drops the rest of an Arrow nanosecond without a word (the Python rows
            # below refuse it, naming the column): refused alike here.
            name = sub_microsecond_column(table)
            if name is not None:
                msg = f"column {name!r} holds a timestamp with a sub-microsecond part: Spark timestamps keep "
                msg += "microseconds; floor the column first, e.g. series.dt.floor('us')"
                raise EngineError(msg)
            return self.spark.createDataFrame(table, schema=schema)
        # pyspark 3.5 (classic and Connect) takes no Arrow table: Python rows, which it checks against the schema.
        return self.spark.createDataFrame(python_rows(table), schema=schema)

    def hold(self, frame: DataFrame) -> DataFrame:
        try:
            if frame.is_cached:  # the user's own cache (a frame a notebook keeps): used, and left as it was
                return frame
            held = frame.persist()
        except Exception:  # Spark Connect on some runtimes: run without caching
            return frame
        self._persisted.add(id(held))
        return held

    def release(self, frame: DataFrame) -> None:
        if id(frame) not in self._persisted:
            return
        self._persisted.discard(id(frame))
        try:
            frame.unpersist()
        except Exception:
            log.debug("unpersist failed", exc_info=True)

    def environment(self) -> dict[str, str | None]:
        """The Spark version, the JVM's, the Delta jars' and the session settings that change what a query or a
        read gives (:data:`RESULT_SETTINGS`), each None where the session cannot say."""
        spark = self.spark
        facts: dict[str, str | None] = {"version": spark.version}
        for fact, key in RESULT_SETTINGS.items():
            try:
                value = spark.conf.get(key)
            except Exception:  # a setting this Spark does not know, or a session that keeps it to itself
                value = None
            facts[fact] = None if value is None else str(value)
        try:
            jvm = spark.sparkContext._jvm
            facts["jvm_version"] = None if jvm is None else jvm.System.getProperty("java.version")
        except Exception:  # Spark Connect: no py4j gateway
            facts["jvm_version"] = None
        facts["delta_version"] = _delta_jar_version(spark)
        return facts
