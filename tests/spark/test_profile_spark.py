"""profile-v1 on Spark (docs/rows-v1.md section 12.3): the jar's ubunye_profile_v1, the jar-free path (the twin in
mapInArrow) and the twin on the same rows agree, whatever the session time zone and the partitioning; and
rows_in_buckets on Spark selects the rows the twin selects."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from tests.conftest import VECTORS
from tests.spark.conftest import arrow_frame, to_arrow, vector_frame
from tests.spark.tables import mixed_table
from tests.spark.test_connect import connect_confs
from ubunye.exceptions import HashError
from ubunye.hashing import canonical_lines
from ubunye.hashing.profile import ProfileOptionError, bucket_of_rows, profile_frame, rows_in_buckets
from ubunye.hashing.spark import profile_spark, spark_rows_in_buckets
from ubunye.spark import jvm_usable
from ubunye.testing.generated import generated_tables


@pytest.fixture(scope="module")
def jvm(spark):
    """Skips, saying so, when the session's jar has no profile-v1 functions yet (checked at run time)."""
    try:
        spark.sql("SELECT ubunye_profile_v1(4, array(), 1) AS p, ubunye_bucket_v1(1, 4) AS b").first()
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        pytest.skip(f"ubunye_profile_v1 / ubunye_bucket_v1 are missing from the session's jar ({first})")
    return spark


def same(profile, twin):
    """Profiles equal but for the engine that ran."""
    assert profile.hash.data_hash == twin.hash.data_hash
    assert (profile.hash.schema, profile.hash.row_count) == (twin.hash.schema, twin.hash.row_count)
    assert profile.columns == twin.columns
    assert profile.buckets == twin.buckets


def arrow_of(df):
    return to_arrow(df)


CASES = [(None, 0), (None, 1), (None, 256), ("first", 16), ("first", 65536)]


def key_of(df, which):
    return None if which is None else [df.columns[0]]


# --- the jar-free path ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_jar_free_path_equals_the_twin_on_every_vector(spark, vector):
    df = vector_frame(spark, vector)
    table = vector.arrow()
    for which, n in CASES:
        key = key_of(df, which) if df.columns else None
        got = profile_spark(df, key=key, buckets=n, engine="arrow")
        assert got.hash.engine == "arrow"
        same(got, profile_frame(table, key=key, buckets=n))


@pytest.mark.parametrize("zone", ["America/Sao_Paulo", "Asia/Kolkata"])
@pytest.mark.parametrize("partitions", [1, 3, 8])
def test_jar_free_path_ignores_time_zone_and_partitioning(spark, conf, zone, partitions):
    conf("spark.sql.session.timeZone", zone)
    df = mixed_table(spark, 300)
    twin = profile_frame(arrow_of(df), key=["id", "d"], buckets=64)
    got = profile_spark(df.repartition(partitions), key=["id", "d"], buckets=64, engine="arrow")
    same(got, twin)
    vector = next(v for v in VECTORS if v.name == "timestamps")
    same(
        profile_spark(vector_frame(spark, vector), buckets=8, engine="arrow"), profile_frame(vector.arrow(), buckets=8)
    )


def test_generated_tables_profile_alike(spark):
    for table in generated_tables().values():
        df = arrow_frame(spark, table).repartition(5)
        key = [table.schema.names[0]]
        # createDataFrame reads a naive timestamp as Spark's timestamp (an instant): the rows Spark holds decide.
        same(profile_spark(df, key=key, buckets=32, engine="arrow"), profile_frame(arrow_of(df), key=key, buckets=32))


def test_odd_column_names(spark):
    table = pa.table({"a.b": [1, 2, 3], "c`d": ["x", None, "z"], "é 😀": [0.5, float("nan"), None]})
    df = arrow_frame(spark, table)
    for key in (["a.b"], ["c`d", "é 😀"], None):
        same(profile_spark(df, key=key, buckets=8, engine="arrow"), profile_frame(table, key=key, buckets=8))


@pytest.mark.parametrize("ansi", ["true", "false"])
def test_sums_wrap_whatever_ansi_says(spark, conf, ansi):
    conf("spark.sql.ansi.enabled", ansi)
    df = spark.range(0, 5000, numPartitions=8).selectExpr("id", "cast(id * 7 as string) as s")
    # 5000 random 64-bit halves: every sum wraps; only the driver adds them, in Python.
    same(profile_spark(df, key=["s"], buckets=4, engine="arrow"), profile_frame(arrow_of(df), key=["s"], buckets=4))


def test_bad_options_fail_before_any_job(spark):
    df = spark.range(3)
    with pytest.raises(ProfileOptionError, match="key column 'nope' is not a column"):
        profile_spark(df, key=["nope"], engine="arrow")
    with pytest.raises(ProfileOptionError, match="buckets=3 is not a power of two"):
        profile_spark(df, buckets=3)
    with pytest.raises(ProfileOptionError, match="buckets=0 is not a power of two"):
        spark_rows_in_buckets(df, [0], buckets=0, engine="arrow")
    with pytest.raises(ProfileOptionError, match=r"wanted bucket 9 is not an index from 0 to 3"):
        rows_in_buckets(df, [9], key=["id"], buckets=4)
    with pytest.raises(HashError, match="a Spark DataFrame has not"):
        bucket_of_rows(df, buckets=4)
    with pytest.raises(HashError, match="interval"):
        profile_spark(spark.sql("SELECT INTERVAL 1 DAY AS i"), engine="arrow")


def test_profile_frame_on_spark_chooses_a_path(spark):
    df = mixed_table(spark, 50)
    got = profile_frame(df, key=["id"], buckets=8)
    assert got.hash.engine == ("jvm" if jvm_usable(spark) else "arrow")
    same(got, profile_frame(arrow_of(df), key=["id"], buckets=8))


# --- rows of some buckets -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [["id"], ["d", "s"], None], ids=["id", "d-s", "keyless"])
def test_rows_in_buckets_on_spark_without_the_jar_are_the_twin_rows(spark, key):
    df = mixed_table(spark, 300).repartition(4)
    table = arrow_of(df)
    wanted = [0, 5, 6]
    got = spark_rows_in_buckets(df, wanted, key=key, buckets=8, engine="arrow")
    assert got.columns == df.columns
    want = rows_in_buckets(table.to_pandas(types_mapper=pd_arrow()), wanted, key=key, buckets=8)
    assert 0 < len(want) < table.num_rows
    assert sorted(canonical_lines(got)) == sorted(canonical_lines(want))


def pd_arrow():
    import pandas as pd

    return pd.ArrowDtype


# --- the jar -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_jvm_equals_jar_free_equals_twin_on_every_vector(jvm, vector):
    df = vector_frame(jvm, vector)
    table = vector.arrow()
    for which, n in CASES:
        key = key_of(df, which) if df.columns else None
        got = profile_spark(df, key=key, buckets=n, engine="jvm")
        assert got.hash.engine == "jvm"
        twin = profile_frame(table, key=key, buckets=n)
        same(got, twin)
        same(profile_spark(df, key=key, buckets=n, engine="arrow"), twin)


@pytest.mark.parametrize("zone", ["America/Sao_Paulo", "Asia/Kolkata"])
@pytest.mark.parametrize("partitions", [1, 3, 8])
def test_jvm_ignores_time_zone_and_partitioning(jvm, conf, zone, partitions):
    conf("spark.sql.session.timeZone", zone)
    df = mixed_table(jvm, 300).repartition(partitions)
    for key, n in ((["id", "d"], 64), (None, 16), (["s"], 0)):
        twin = profile_frame(arrow_of(df), key=key, buckets=n)
        same(profile_spark(df, key=key, buckets=n, engine="jvm"), twin)
        same(profile_spark(df, key=key, buckets=n, engine="arrow"), twin)


def test_jvm_odd_column_names(jvm):
    table = pa.table({"a.b": [1, 2, 3], "c`d": ["x", None, "z"], "é 😀": [0.5, float("nan"), None]})
    df = arrow_frame(jvm, table)
    for key in (["a.b"], ["c`d", "é 😀"], None):
        same(profile_spark(df, key=key, buckets=8, engine="jvm"), profile_frame(table, key=key, buckets=8))


def test_the_jar_is_usable_for_profiles(jvm):
    assert jvm_usable(jvm)


@pytest.mark.parametrize("key", [["id"], ["d", "s"], None], ids=["id", "d-s", "keyless"])
def test_rows_in_buckets_with_the_jar_are_the_twin_rows(jvm, key):
    df = mixed_table(jvm, 300).repartition(3)
    table = arrow_of(df)
    wanted = [1, 2, 7]
    got = spark_rows_in_buckets(df, wanted, key=key, buckets=8, engine="jvm")
    assert "ubunye_bucket_v1" in got._jdf.queryExecution().analyzed().toString()
    want = rows_in_buckets(table, wanted, key=key, buckets=8)
    assert 0 < want.num_rows < table.num_rows
    assert sorted(canonical_lines(got)) == sorted(canonical_lines(want))
    assert sorted(canonical_lines(spark_rows_in_buckets(df, [], key=key, buckets=8, engine="jvm"))) == []


# --- Spark Connect: no py4j on the client ---------------------------------------------------------------------

_CONNECT_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    import ubunye.spark as us
    from ubunye.hashing import canonical_lines
    from ubunye.hashing.profile import bucket_of_rows, profile_frame, rows_in_buckets
    from ubunye.hashing.spark import profile_spark, spark_rows_in_buckets

    builder = SparkSession.builder.remote("local[2]").config("spark.ui.enabled", "false")
    for key, value in json.loads(sys.argv[1]).items():  # connect_confs() of the test
        builder = builder.config(key, value)
    spark = us.configure(builder).getOrCreate()
    spark.conf.set("spark.sql.session.timeZone", "Asia/Kolkata")
    df = spark.range(2000, numPartitions=3).selectExpr(
        "id", "cast(id % 13 as string) as `s.x`", "timestamp_micros(id * 1000003) as ts", "array(id, null) as a",
    )
    if hasattr(df, "toArrow"):
        table = df.toArrow()
    else:  # pyspark 3.5's Connect client: toArrow arrived in 4.0, the client's own Arrow fetch is what toPandas uses
        table = spark.client.to_table(df._plan.to_proto(spark.client))[0]
    out = {"client_has_jvm": hasattr(spark, "_jvm"), "jvm_usable": us.jvm_usable(spark)}
    engines = ["arrow", "jvm"] if out["jvm_usable"] else ["arrow"]
    for engine in engines:
        for key in (["s.x"], None):
            p = profile_spark(df, key=key, buckets=64, engine=engine)
            t = profile_frame(table, key=key, buckets=64)
            out[f"{engine}-{key}"] = [p.hash.data_hash == t.hash.data_hash, p.columns == t.columns,
                                      p.buckets == t.buckets]
            wanted = sorted(set(bucket_of_rows(table, key=key, buckets=64).tolist()))[:2]
            got = spark_rows_in_buckets(df, wanted, key=key, buckets=64, engine=engine)
            want = rows_in_buckets(table, wanted, key=key, buckets=64)
            same = sorted(canonical_lines(got)) == sorted(canonical_lines(want))
            out[f"rows-{engine}-{key}"] = same and 0 < want.num_rows < table.num_rows
    spark.stop()
    print("RESULT " + json.dumps(out))
    """
)


@pytest.mark.slow
def test_spark_connect_profiles_like_the_twin(spark_child_env):
    pytest.importorskip("grpc", reason="Spark Connect needs pyspark[connect] (grpcio), in the test extras")
    args = [sys.executable, "-c", _CONNECT_SCRIPT, json.dumps(connect_confs())]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=900, env=spark_child_env, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    result = json.loads(lines[-1][len("RESULT ") :])
    assert result.pop("client_has_jvm") is False  # really a Connect client: no py4j
    result.pop("jvm_usable")
    assert result and all(v is True or v == [True, True, True] for v in result.values()), result
