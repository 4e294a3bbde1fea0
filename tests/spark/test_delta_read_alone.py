"""Files of a Delta table read alone on Spark (``ubunye.hashing.delta_spark``) are read through SQL text: partition
values as typed literals, strings as their bytes, the jar's calls with their arguments spelt out. Checked here: the
text gives what the Column API gave (``F.lit(value).cast(type)``), whatever the session's parser and ANSI settings,
and an incremental hash or profile is the full one whatever the table's path, partition values and column names
hold (quotes, backticks, commas, spaces, ``%``, unicode), for one file read alone (named by a constant), several
(named by Spark) and partitions read through Spark's Delta reader (its filter in SQL text too).
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hashing.profile_checks import assert_same_profile
from ubunye.hashing.delta_hash import hash_delta
from ubunye.hashing.delta_spark import _sql_value, _typed_literal, sql_string
from ubunye.hashing.spark import hash_spark, profile_spark
from ubunye.lineage.file_sums import FileSumsCache

ENGINES = ["jvm", "arrow"]
#: Characters SQL text and paths must carry as they are (``%25`` would be decoded by a careless unquote).
ODD = "q'uo`te, sp ace %25 é😀"
NAN, INF = float("nan"), float("inf")


def _values():
    from pyspark.sql import types as T

    return [
        (T.ByteType(), [-128, 127, 0, None]),
        (T.ShortType(), [-32768, 32767, -3]),
        (T.IntegerType(), [-(2**31), 2**31 - 1, -7]),
        (T.LongType(), [-(2**63), 2**63 - 1, 2**40]),
        (T.FloatType(), [0.10000000149011612, -0.0, NAN, INF, -INF, 3.4028234663852886e38, 1e-45, None]),
        (T.DoubleType(), [0.1, -0.0, NAN, INF, -INF, 1e-07, 5e-324, 1.7976931348623157e308, 1e22]),
        (T.DecimalType(7, 2), [Decimal("-12.50"), Decimal("0.00"), Decimal("-0.00"), Decimal("99999.99"), None]),
        (T.DecimalType(38, 10), [Decimal("-1234567890123456789012345678.0123456789"), Decimal("1E-10")]),
        (T.BooleanType(), [True, False, None]),
        (
            T.DateType(),
            [
                dt.date(1582, 10, 10),
                dt.date(999, 6, 15),
                dt.date(1, 1, 1),
                dt.date(9999, 12, 31),
                dt.date(1969, 12, 31),
            ],
        ),
        (T.StringType(), ["a b/c%=é", "q'\\`\"", "😀", "\n\t\x00", "${x}", "\\u0041", ODD, None]),
    ]


def _column_literal(value, t):
    """What the partition values were rebuilt with before SQL text: ``F.lit(value).cast(t)``, a date as ISO text."""
    from pyspark.sql import functions as F

    if isinstance(value, dt.date):
        return F.lit(value.isoformat()).cast(t)
    return F.lit(value).cast(t)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("ansi", ["true", "false"])
def test_typed_literals_are_the_column_api_literals(spark, conf, ansi):
    conf("spark.sql.ansi.enabled", ansi)
    pairs = [(t, v) for t, values in _values() for v in values]
    frame = spark.range(1).select(*[_column_literal(v, t).alias(f"a{i}") for i, (t, v) in enumerate(pairs)])
    frame = frame.selectExpr("*", *[f"{_typed_literal(v, t)} AS b{i}" for i, (t, v) in enumerate(pairs)])
    row = frame.first()
    for i, (t, v) in enumerate(pairs):
        assert frame.schema[f"b{i}"].dataType == frame.schema[f"a{i}"].dataType == t, (t, v)
        assert _same(row[f"a{i}"], row[f"b{i}"]), (t, v, row[f"a{i}"], row[f"b{i}"])


def test_a_value_with_no_exact_literal_says_so():
    for odd in (Decimal("NaN"), dt.datetime(2024, 1, 1), "\ud800", b"x"):
        with pytest.raises(ValueError):
            _sql_value(odd)


@pytest.mark.parametrize("escaped", ["true", "false"])
def test_sql_strings_are_their_text_whatever_the_parser_does_with_escapes(spark, conf, escaped):
    conf("spark.sql.parser.escapedStringLiterals", escaped)

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.text(), min_size=1, max_size=12))
    def run(texts):
        row = spark.sql("SELECT " + ", ".join(f"{sql_string(s)} AS s{i}" for i, s in enumerate(texts))).first()
        assert list(row) == texts

    run()
    assert spark.sql(f"SELECT {sql_string(ODD)} AS s").first()["s"] == ODD


def _odd_rows(spark, start, count, part):
    rows = [(i, f"n{i}", part if i % 3 else None, i % 2) for i in range(start, start + count)]
    return spark.createDataFrame(rows, "id bigint, `k'e``y.é` string, p string, q int")


@pytest.mark.parametrize("engine", ENGINES)
def test_odd_paths_and_values_hash_incrementally(spark, tmp_path, monkeypatch, engine):
    from delta.tables import DeltaTable

    import ubunye.hashing.delta_spark as delta_spark

    # The folder holds every odd character but '%' (deltalake, which reads the log, refuses a local path with one).
    path, cache = str(tmp_path / f"t {ODD.replace('%', '')}"), FileSumsCache(tmp_path / "records")
    profiled = {"profile": True, "key": ["k'e`y.é"], "buckets": 8}
    writer = _odd_rows(spark, 0, 12, ODD).write.format("delta").partitionBy("p", "q")
    writer.option("delta.enableDeletionVectors", "true").save(path)

    def full():
        return profile_spark(spark.read.format("delta").load(path), key=["k'e`y.é"], buckets=8, engine=engine)

    def check(files_read, mode="incremental"):
        got = hash_delta(path, cache=cache, spark=spark, engine=engine)
        profile = hash_delta(path, cache=cache, spark=spark, engine=engine, **profiled)
        reference = full()
        assert got.hash == reference.hash == hash_spark(spark.read.format("delta").load(path), engine=engine)
        assert_same_profile(profile.profile, reference)
        assert (got.hash_mode, got.reason, got.files_read) == (mode, None, files_read)
        assert (profile.hash_mode, profile.files_read) == (mode, files_read)

    hash_delta(path, cache=cache, spark=spark, engine=engine)
    hash_delta(path, cache=cache, spark=spark, engine=engine, **profiled)
    _odd_rows(spark, 100, 1, ODD).write.format("delta").mode("append").save(path)  # one file: named by a constant
    check(files_read=1)
    _odd_rows(spark, 200, 4, ODD).where("q = 1").repartition(2).write.format("delta").mode("append").save(path)
    check(files_read=2)  # two files of one partition read together: named by Spark
    DeltaTable.forPath(spark, path).delete("id = 4")  # a deletion vector, read alone by its row indices
    check(files_read=1)
    monkeypatch.setattr(delta_spark, "MAX_PARTITIONS_ALONE", 0)  # vectors through Spark's Delta reader instead
    DeltaTable.forPath(spark, path).delete("id = 5")
    got = hash_delta(path, cache=cache, spark=spark, engine=engine)
    assert got.hash == full().hash and got.hash_mode == "incremental" and got.files_read >= 1


TYPED = (
    "id bigint, p_int int, p_day date, p_dec decimal(7,2), p_ok boolean, p_txt string, p_dbl double, p_short smallint"
)
PARTS = ["p_int", "p_day", "p_dec", "p_ok", "p_txt", "p_dbl", "p_short"]
_PARTITION_VALUES = [
    (1, dt.date(1582, 10, 10), Decimal("-12.50"), True, ODD, 0.1, -3),
    (None, None, None, None, None, None, None),
    (-7, dt.date(999, 6, 15), Decimal("0.01"), False, "x", -0.0, 0),
]


@pytest.mark.parametrize("alone", [256, 0])  # 0: files with deletion vectors read through their partitions
def test_typed_partitions_with_deletion_vectors_hash_incrementally(spark, tmp_path, monkeypatch, alone):
    from delta.tables import DeltaTable

    import ubunye.hashing.delta_spark as delta_spark

    monkeypatch.setattr(delta_spark, "MAX_PARTITIONS_ALONE", alone)
    path, cache = str(tmp_path / "t"), FileSumsCache(tmp_path / "records")

    def add(start: int) -> None:
        rows = [(i, *_PARTITION_VALUES[i % 3]) for i in range(start, start + 9)]
        frame = spark.createDataFrame(rows, TYPED).coalesce(1)  # one file per partition
        writer = frame.write.format("delta").mode("append").partitionBy(*PARTS)
        writer.option("delta.enableDeletionVectors", "true").save(path)

    add(0)
    hash_delta(path, cache=cache, spark=spark, engine="jvm")
    add(9)
    got = hash_delta(path, cache=cache, spark=spark, engine="jvm")
    full = hash_spark(spark.read.format("delta").load(path), engine="jvm")
    # read alone, or (no read alone allowed) the whole table
    assert (got.hash, got.hash_mode, got.files_read) == ((full, "incremental", 3) if alone else (full, "full", 6))
    hash_delta(path, cache=cache, spark=spark, engine="jvm")
    DeltaTable.forPath(spark, path).delete("id IN (4, 12)")  # a vector in the null partition and in (1, ...)
    got = hash_delta(path, cache=cache, spark=spark, engine="jvm")
    assert got.hash == hash_spark(spark.read.format("delta").load(path), engine="jvm")
    # the two files alone, or (through Spark's Delta reader) every file of their two partitions
    assert (got.hash_mode, got.files_read) == ("incremental", 2 if alone else 4)


def test_a_path_spark_would_glob_is_not_read_alone(spark, tmp_path):
    from dataclasses import replace

    from deltalake import DeltaTable

    from ubunye.hashing.delta_files import read_snapshot
    from ubunye.hashing.delta_spark import SparkDeltaFiles

    path = str(tmp_path / "t")
    spark.range(3).coalesce(1).write.format("delta").save(path)
    snap = read_snapshot(DeltaTable(path), deletion_vectors=True)
    files = SparkDeltaFiles(spark, path, snap, "jvm")
    [f] = snap.files
    assert files._alone_reason([f]) == ""
    # log paths are URL-encoded: these name a folder or file with '[', '*', '{' in it, which Spark would expand
    for odd in ("p=a%5B1%5D/x.parquet", "x%2A.parquet", "p=%7Ba,b%7D/x.parquet"):
        assert files._alone_reason([replace(f, path=odd)]) == f"a path Spark would not read as given ({odd!r})"
