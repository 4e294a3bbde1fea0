"""On this venv's pyspark line: the jar it picks, the conformance vectors, and JVM = jar-free = twin.

Runs on pyspark 3.5 (Scala 2.12 jar) and the newest 4.x through ``make spark-lines`` (see conftest.py). Only
APIs every line has: DataFrames come from SQL or from Parquet files pyarrow writes (``createDataFrame`` of an
Arrow table and ``DataFrame.toArrow`` are Spark 4 only).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ubunye.spark as us
from tests.conftest import VECTORS
from tests.spark.conftest import jvm_lines, rows_v1, to_arrow
from tests.spark.tables import mixed_table
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.spark import hash_spark, spark_canonical_lines
from ubunye.hashing.types import parse_type, spark_type

ROOT = Path(__file__).resolve().parents[2]


def _vector_frame(spark: Any, vector: Any, folder: Path) -> Any:
    """A vector's table through a Parquet file, read with the exact Spark types of its rows-v1 types."""
    from pyspark.sql import types as T

    path = folder / f"{vector.name}.parquet"
    pq.write_table(vector.arrow(), path)
    schema = T.StructType([T.StructField(n, spark_type(parse_type(t))) for n, t in vector.columns])
    return spark.read.schema(schema).parquet(str(path))


def test_the_jar_of_this_line(spark: Any) -> None:
    import pyspark

    target = us.installed_target()
    assert target.spark_version == pyspark.__version__ == spark.version
    assert us.session_target(spark).jar_name == target.jar_name == us.jar_path().name
    info = spark._jvm.ubunye.spark.JarInfo
    assert info.jarName() == target.jar_name and info.mismatch() is None
    assert us.diagnose(spark) is None and us.jvm_usable(spark)
    print(f"\npyspark {pyspark.__version__}, Scala {target.scala_version}, jar {target.jar_name}")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("vectors")


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_conformance_vector(spark: Any, vector: Any, folder: Path) -> None:
    df = _vector_frame(spark, vector, folder)
    want_lines = sorted(vector.expected["lines"])
    assert jvm_lines(df) == want_lines
    assert rows_v1(df)["data_hash"] == vector.expected["data_hash"]
    jvm, arrow = hash_spark(df, engine="jvm"), hash_spark(df, engine="arrow")
    assert jvm.data_hash == arrow.data_hash == vector.expected["data_hash"]
    assert jvm.schema_hash == arrow.schema_hash == vector.expected["schema_hash"]
    assert sorted(spark_canonical_lines(df, engine="arrow")) == want_lines


def test_mixed_table_jvm_jar_free_and_twin_agree(spark: Any) -> None:
    """int, double, string, timestamp, decimal, array<struct>, map and more, over several partitions."""
    df = mixed_table(spark, 3000).repartition(5).cache()
    jvm, arrow = hash_frame(df), hash_spark(df, engine="arrow")
    twin = hash_frame(to_arrow(df))
    assert (jvm.engine, arrow.engine) == ("jvm", "arrow")
    assert jvm.row_count == arrow.row_count == twin.row_count == 3000
    assert jvm.data_hash == arrow.data_hash == twin.data_hash
    assert jvm.schema == twin.schema
    sample = df.limit(50)
    assert sorted(spark_canonical_lines(sample, engine="jvm")) == sorted(canonical_lines(to_arrow(sample)))
    df.unpersist()


def test_empty_lists_in_whole_batches(spark: Any) -> None:
    """Batches whose lists are all empty or null: Spark <= 4.1 hands the twin garbage offsets for them."""
    df = spark.range(0, 4000, numPartitions=4).selectExpr(
        "id",
        "case when id < 3000 then array() else array(named_struct('m', map('k', array(id)), 'n', 1)) end AS c",
        "case when id % 2 = 0 then null else map() end AS e",
    )
    c_type, e_type = "array<struct<m: map<string, array<bigint>>, n: int>>", "map<string, array<int>>"
    df = df.selectExpr("id", f"cast(c as {c_type}) AS c", f"cast(e as {e_type}) AS e")
    assert hash_spark(df, engine="arrow").data_hash == hash_spark(df, engine="jvm").data_hash


def test_every_spark_method_the_jar_calls_is_in_this_spark(ubunye_jar: Path) -> None:
    """Linkage, read from the class files (no JVM): a method the jar calls that this Spark lacks would fail
    only when the first query reaches it."""
    import pyspark

    from tests.lines.linkage import unresolved

    assert unresolved(ubunye_jar, Path(pyspark.__file__).parent / "jars") == []


def test_sql_surface(spark: Any) -> None:
    """Where Catalyst internals are called: naming a computed argument, DESCRIBE's usage text, analysis errors."""
    sql = "SELECT ubunye_canonical_line(id, id + 1, s) FROM (SELECT id, cast(id AS string) AS s FROM range(1, 2))"
    line = spark.sql(sql).first()[0]
    assert line == '{"(id + 1)":2,"id":1,"s":"1"}'
    text = "\n".join(r[0] for r in spark.sql("DESCRIBE FUNCTION EXTENDED ubunye_rows_v1").collect())
    assert "Usage: ubunye_rows_v1(cols...)" in text
    text = "\n".join(r[0] for r in spark.sql("DESCRIBE FUNCTION EXTENDED ubunye_profile_v1").collect())
    assert "Usage: ubunye_profile_v1(n_buckets, key, cols...)" in text
    with pytest.raises(Exception, match="column `iv` has type interval day"):
        spark.sql("SELECT ubunye_rows_v1(*) FROM (SELECT interval '1' day AS iv)").collect()
    h = spark.sql("SELECT ubunye_rows_v1(id + 1) AS h FROM range(3)").first()["h"]
    assert h["row_count"] == 3
    # profile-v1 (docs/rows-v1.md section 12.3): the same numbers as ubunye_rows_v1, an empty array() key (its
    # element type differs between lines), and the bucket function in a WHERE clause.
    p = spark.sql("SELECT ubunye_profile_v1(4, array(), id + 1) AS p FROM range(3)").first()["p"]
    assert (p["row_count"], p["sum1"], p["sum2"], p["data_hash"]) == (3, h["sum1"], h["sum2"], h["data_hash"])
    assert [c["name"] for c in p["columns"]] == ["(id + 1)"]
    keyed = spark.sql("SELECT ubunye_profile_v1(4, array('id'), *) AS p FROM range(40)").first()["p"]
    counts = [int.from_bytes(keyed["buckets"][24 * i : 24 * i + 8], "big") for i in range(4)]
    where = "SELECT count(*) FROM range(40) WHERE ubunye_bucket_v1(id, 4) = {}"
    assert counts == [spark.sql(where.format(i)).first()[0] for i in range(4)]
    with pytest.raises(Exception, match="n_buckets is 3"):
        spark.sql("SELECT ubunye_profile_v1(3, array(), *) FROM range(1)").collect()


def test_register_on_a_running_session(spark: Any) -> None:
    """register(): the registry key form of this line (bare name up to 4.1, system.builtin.<name> from 4.2)."""
    other = spark.newSession()
    other._jvm.ubunye.spark.UbunyeFunctions.unregisterAll(other._jsparkSession)
    assert not us.is_registered(other)
    us.register(other)
    us.register(other)  # twice is harmless
    assert other.sql("SELECT ubunye_rows_v1(*).row_count FROM range(7)").first()[0] == 7


_WRONG_JAR = textwrap.dedent(
    """
    import json, os, sys, warnings
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    import ubunye.spark as us
    from ubunye.exceptions import JarNotFoundError
    from ubunye.hashing import hash_frame

    builder = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
               .config("spark.jars", sys.argv[1]).config("spark.sql.extensions", us.EXTENSIONS))
    spark = builder.getOrCreate()
    out = {"registered": us.is_registered(spark)}
    for name, call in (("require", us.require), ("register", us.register)):
        try:
            call(spark)
            out[name] = None
        except JarNotFoundError as e:
            out[name] = str(e)
    from ubunye.hashing.spark import hash_spark, profile_spark, spark_canonical_lines
    asked = {"hash_jvm": hash_spark, "lines_jvm": spark_canonical_lines, "profile_jvm": profile_spark}
    for name, call in asked.items():  # engine="jvm" asked outright: refused, naming the jar to attach
        try:
            call(spark.range(2), engine="jvm")
            out[name] = None
        except Exception as e:
            out[name] = f"{type(e).__name__}: {e}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        h = hash_frame(spark.range(10).selectExpr("id", "array(map('k', id)) AS m"))
    out["engine"], out["data_hash"] = h.engine, h.data_hash
    out["warnings"] = [str(w.message) for w in caught if issubclass(w.category, us.JarWarning)]
    spark.stop()
    print("RESULT " + json.dumps(out))
    """
)


def test_the_jar_of_another_line_is_told_apart_from_no_jar(spark: Any) -> None:
    """A session holding the jar of another line: nothing registered, require/register name the right jar,
    hash_frame warns and takes the jar-free path (its own process: spark.jars is fixed at start)."""
    right = us.installed_target().jar_name
    wrong_line = {"3.5": "4.1", "4.0": "4.1", "4.1": "4.0"}[us.installed_target().line]
    wrong = us.jar_path(wrong_line, "2.13")  # 3.5: another Scala and Spark line at once; 4.x: the other 4.x jar
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    proc = subprocess.run(
        [sys.executable, "-c", _WRONG_JAR, str(wrong)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
        check=False,
    )
    found = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and found, proc.stdout[-2000:] + proc.stderr[-4000:]
    out = json.loads(found[-1][len("RESULT ") :])
    assert out["registered"] is False  # the extension refused to add functions that would fail on every call
    for what in ("require", "register"):
        assert f"({wrong.name}) is built for Spark {wrong_line} / Scala 2.13" in out[what], out[what]
        assert f"attach {right} instead" in out[what], out[what]
    for what in ("hash_jvm", "lines_jvm", "profile_jvm"):  # Spark's bare UNRESOLVED_ROUTINE for two of them
        assert out[what].startswith("JarNotFoundError: engine='jvm' needs the JVM function"), out[what]
        assert f"attach {right} instead" in out[what], out[what]
    assert out["engine"] == "arrow"
    assert out["warnings"] and right in out["warnings"][0]
    # The twin on the same rows: id, and a list of one map per row.
    maps = pa.array([[[("k", i)]] for i in range(10)], pa.list_(pa.map_(pa.string(), pa.int64())))
    expected = hash_frame(pa.table({"id": pa.array(range(10), pa.int64()), "m": maps}))
    assert out["data_hash"] == expected.data_hash
