"""``ubunye_rows_v1`` / ``ubunye_canonical_line`` in Spark SQL against the spec, the vectors and Spark itself."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import VECTORS
from tests.spark.conftest import jvm_lines, rows_v1, to_arrow, vector_frame
from tests.spark.tables import mixed_table
from ubunye.hashing.digest import finish


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_conformance_vector(spark: Any, vector: Any) -> None:
    from ubunye.hashing.jvm import hash_spark_jvm
    from ubunye.hashing.types import spark_schema_string

    df = vector_frame(spark, vector)
    assert jvm_lines(df) == sorted(vector.expected["lines"])
    h = rows_v1(df)
    assert h["row_count"] == vector.expected["row_count"]
    assert h["data_hash"] == vector.expected["data_hash"]
    assert spark_schema_string(df.schema) == vector.expected["schema"]
    fh = hash_spark_jvm(df)
    assert (fh.data_hash, fh.schema_hash, fh.engine) == (
        vector.expected["data_hash"],
        vector.expected["schema_hash"],
        "jvm",
    )


def test_spec_examples(spark: Any) -> None:
    """The examples written out in docs/rows-v1.md sections 2 to 6."""
    line = spark.sql(
        "SELECT ubunye_canonical_line(*) FROM VALUES (1L, 'Ana', 0.5D), (2L, null, null) AS t(id, name, score)"
    ).collect()
    assert [r[0] for r in line] == ['{"id":1,"name":"Ana","score":0.5}', '{"id":2}']
    one = spark.sql(
        """SELECT ubunye_canonical_line(*) FROM (SELECT
             concat('a"b\\\\c', char(9), char(1), '😀') AS s,
             X'0001FF' AS bin, date'2024-02-29' AS d,
             timestamp'2024-01-01 12:00:00+02:00' AS ts, timestamp_ntz'2024-01-01 12:00:00' AS ntz,
             cast(0 as decimal(38,18)) AS z, cast(1.50 as decimal(5,2)) AS p, cast(7 as decimal(3,0)) AS q,
             cast(0.000001 as decimal(10,6)) AS r, cast(0.0000000123 as decimal(20,10)) AS e,
             cast(-0.0000001 as decimal(10,7)) AS n, make_date(10000, 1, 1) AS big_year,
             make_date(-1, 12, 31) AS bc, -42 AS i, true AS b,
             array(named_struct('m', map('b', array(), 'a', array(1L, null)))) AS c,
             map(5, 'five') AS mi, map(1.5D, 1) AS mf, map(named_struct('a', 1), 'x') AS ms)"""
    ).first()[0]
    expected = (
        '{"b":true,"bc":"-0001-12-31","big_year":"+10000-01-01","bin":"AAH/","c":[{"m":{"a":[1,null],"b":[]}}],'
        '"d":"2024-02-29","e":1.23E-8,"i":-42,"mf":{"1.5":1},"mi":{"5":"five"},"ms":{"{\\"a\\":1}":"x"},'
        '"n":-1E-7,"ntz":"2024-01-01T12:00:00.000000","p":1.50,"q":7,"r":0.000001,'
        '"s":"a\\"b\\\\c\\t\\u0001😀","ts":"2024-01-01T10:00:00.000000Z","z":0E-18}'
    )
    assert one == expected


def test_doubles_where_jdk17_differs(spark: Any) -> None:
    rows = spark.sql(
        "SELECT ubunye_canonical_line(x) FROM VALUES (1e23D), (2.82879384806159E17D), (1.9400994884341945E25D), "
        "(4.9E-324D), (1.0E7D), (1.0E-4D), (0.001D), (1234567.0D), (-0.0D), (double('-Infinity')) AS t(x)"
    ).collect()
    assert [r[0] for r in rows] == [
        '{"x":1.0E23}',
        '{"x":2.82879384806159E17}',
        '{"x":1.9400994884341945E25}',
        '{"x":4.9E-324}',
        '{"x":1.0E7}',
        '{"x":1.0E-4}',
        '{"x":0.001}',
        '{"x":1234567.0}',
        '{"x":-0.0}',
        '{"x":"-Infinity"}',
    ]
    floats = spark.sql("SELECT ubunye_canonical_line(*) FROM (SELECT float(1e-45) AS f, float(0.1) AS g)").first()[0]
    assert floats == '{"f":1.4E-45,"g":0.1}'


def test_map_order_is_code_point_order(spark: Any) -> None:
    """Keys sort by UTF-8 bytes (U+FF61 before U+1F600), then by value; insertion order never matters."""
    a = spark.sql("SELECT ubunye_canonical_line(*) FROM (SELECT map('😀', 1, '｡', 2, 'a', 3) AS m)").first()[0]
    b = spark.sql("SELECT ubunye_canonical_line(*) FROM (SELECT map('a', 3, '｡', 2, '😀', 1) AS m)").first()[0]
    assert a == b == '{"m":{"a":3,"｡":2,"😀":1}}'
    names = spark.sql("SELECT ubunye_canonical_line(*) FROM (SELECT 1 AS `😀`, 2 AS `｡`)").first()[0]
    assert names == '{"｡":2,"😀":1}'


def test_to_json_oracle(spark: Any) -> None:
    """Flat primitive columns: the JVM line equals Spark's own to_json(struct(sorted columns)) with UTC
    microsecond timestamps, for values where section 5 says the two agree (doubles JDK 17 prints shortest)."""
    df = spark.range(300).selectExpr(
        "id",
        "cast(id % 100 as tinyint) as `b y`",
        "cast(id as smallint) as `a.b`",
        "cast(id * 7 as int) as i",
        "id % 3 = 0 as flag",
        "case when id % 7 = 0 then null else (id - 150) / 8.0D end as dbl",
        "cast(id / 4.0 as float) as flt",
        "case when id = 3 then double('NaN') when id = 4 then double('Infinity') else 0.1D * id end as odd",
        "cast(id * 1.25 as decimal(12,3)) as dec",
        "cast(0 as decimal(38,10)) as zero",
        "concat('x\"y\\\\', char(cast(id % 32 as int)), '/é😀', char(127)) as `é`",
        "cast(concat('b', id) as binary) as bin",
        "date_from_unix_date(cast(id * 101 as int)) as d",
        "timestamp_micros(id * 123456789) as ts",
    )
    cols = sorted(df.columns)
    struct = ", ".join(f"`{c}`" for c in cols)
    options = (
        "map('timestampFormat', \"yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'\", 'timeZone', 'UTC', 'dateFormat', 'yyyy-MM-dd')"
    )
    pairs = df.selectExpr("ubunye_canonical_line(*) AS ours", f"to_json(struct({struct}), {options}) AS spark")
    diffs = [(r.ours, r.spark) for r in pairs.collect() if r.ours != r.spark]
    assert diffs == []


def test_same_hash_however_the_rows_are_split_ordered_or_configured(spark: Any, conf: Any) -> None:
    df = mixed_table(spark).cache()
    base = rows_v1(df)
    assert base["row_count"] == 1000
    variants = {
        "1 partition": df.coalesce(1),
        "8 partitions": df.repartition(8),
        "200 partitions": df.repartition(200),
        "shuffled": df.orderBy(__import__("pyspark.sql.functions", fromlist=["rand"]).rand(7)),
        "reversed columns": df.select(*reversed(df.columns)),
    }
    for what, variant in variants.items():
        assert rows_v1(variant) == base, what
    conf("spark.sql.ansi.enabled", "false")
    assert rows_v1(df) == base, "ANSI off"
    conf("spark.sql.ansi.enabled", "true")
    assert rows_v1(df.repartition(3)) == base, "ANSI on"
    for zone in ("America/Sao_Paulo", "Asia/Kolkata"):
        conf("spark.sql.session.timeZone", zone)
        assert rows_v1(df) == base, zone
    df.unpersist()


def test_session_time_zone_never_shows(spark: Any, conf: Any) -> None:
    """One instant given in any zone is one line; timestamp_ntz is the wall clock, never shifted."""
    sql = (
        "SELECT ubunye_canonical_line(*) FROM (SELECT timestamp'2024-01-01 12:00:00.123456+02:00' AS ts, "
        "timestamp_ntz'2024-01-01 12:00:00.123456' AS ntz, timestamp'1969-12-31 23:59:59.999999Z' AS old)"
    )
    expected = (
        '{"ntz":"2024-01-01T12:00:00.123456","old":"1969-12-31T23:59:59.999999Z","ts":"2024-01-01T10:00:00.123456Z"}'
    )
    for zone in ("UTC", "America/Sao_Paulo", "Asia/Kolkata"):
        conf("spark.sql.session.timeZone", zone)
        assert spark.sql(sql).first()[0] == expected, zone


def test_sums_wrap_with_ansi_on(spark: Any, conf: Any) -> None:
    """Sums are 64-bit and overflow almost at once; ANSI mode must not turn that into an error."""
    conf("spark.sql.ansi.enabled", "true")
    h = rows_v1(spark.range(5000).repartition(4))
    assert h["row_count"] == 5000
    conf("spark.sql.ansi.enabled", "false")
    assert rows_v1(spark.range(5000)) == h


def test_empty_dataframe(spark: Any) -> None:
    df = spark.range(0).selectExpr("id", "cast(id as string) as name")
    h = rows_v1(df)
    expected = finish('struct<"id":int64,"name":string>', 0, 0, 0)
    assert h == {"row_count": 0, "sum1": 0, "sum2": 0, "data_hash": expected.data_hash}


def test_column_names_with_spaces_dots_unicode(spark: Any) -> None:
    df = spark.sql("SELECT 1 AS `a b`, 2 AS `a.b`, 3 AS `é`, 4 AS `A`, 5 AS `x``y`")
    assert jvm_lines(df) == ['{"A":4,"a b":1,"a.b":2,"x`y":5,"é":3}']
    h = rows_v1(df)
    assert (
        h["data_hash"]
        == finish('struct<"A":int32,"a b":int32,"a.b":int32,"x`y":int32,"é":int32>', 1, h["sum1"], h["sum2"]).data_hash
    )


def test_argument_names(spark: Any) -> None:
    """Columns are named after attributes and aliases; other expressions as Spark prints them."""
    from pyspark.sql import functions as F

    df = spark.range(1, 2)
    line = df.select(
        F.call_function("ubunye_canonical_line", F.col("id"), (F.col("id") * 2).alias("dbl"), F.col("id") + 1)
    ).first()[0]
    assert line == '{"(id + 1)":2,"dbl":2,"id":1}'
    h = df.agg(F.call_function("ubunye_rows_v1", F.col("id"))).first()[0]
    assert h == df.agg(F.expr("ubunye_rows_v1(*)")).first()[0]
    assert spark.sql("SELECT ubunye_rows_v1(t.id) FROM range(1, 2) t").first()[0] == h


def test_parity_with_the_twin(spark: Any) -> None:
    """The JVM and the Python twin (on the same rows as Arrow) give the same lines and data hash."""
    from ubunye.hashing.frame import canonical_lines, hash_arrow
    from ubunye.hashing.jvm import hash_spark_jvm

    df = mixed_table(spark, 200)
    table = to_arrow(df)
    assert sorted(canonical_lines(table)) == jvm_lines(df)
    assert hash_arrow(table).data_hash == hash_spark_jvm(df).data_hash


def test_no_columns(spark: Any) -> None:
    """A table with no columns: schema struct<>, every line {}; rows still count."""
    from ubunye.hashing.jvm import hash_spark_jvm

    df = spark.range(3).select()
    assert jvm_lines(df) == ["{}", "{}", "{}"]
    h = rows_v1(df)
    assert h["row_count"] == 3
    assert hash_spark_jvm(df).data_hash == finish("struct<>", 3, h["sum1"], h["sum2"]).data_hash == h["data_hash"]
