"""hash_frame on Spark: the JVM aggregate, the jar-free path and the twin agree on the same table."""

from __future__ import annotations

import pytest

from tests.conftest import VECTORS
from tests.spark.conftest import arrow_frame, vector_frame
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.spark import hash_spark, spark_canonical_lines


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_three_engines_agree_on_every_vector(spark, vector):
    df = vector_frame(spark, vector)
    twin = hash_frame(vector.arrow())
    jvm = hash_frame(df)
    arrow = hash_spark(df, engine="arrow")
    assert jvm.engine == "jvm"
    assert arrow.engine == "arrow"
    assert (jvm.data_hash, jvm.schema, jvm.row_count) == (twin.data_hash, twin.schema, twin.row_count)
    assert (arrow.data_hash, arrow.schema, arrow.row_count) == (twin.data_hash, twin.schema, twin.row_count)
    assert twin.data_hash == vector.expected["data_hash"]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_lines_agree_on_every_vector(spark, vector):
    df = vector_frame(spark, vector)
    want = sorted(canonical_lines(vector.arrow()))
    assert sorted(spark_canonical_lines(df, engine="jvm")) == want
    assert sorted(spark_canonical_lines(df, engine="arrow")) == want


@pytest.mark.parametrize("zone", ["America/Sao_Paulo", "Asia/Kolkata"])
def test_session_time_zone_does_not_matter_to_either_path(spark, conf, zone):
    vector = next(v for v in VECTORS if v.name == "timestamps")
    conf("spark.sql.session.timeZone", zone)
    df = vector_frame(spark, vector)
    assert hash_spark(df, engine="jvm").data_hash == vector.expected["data_hash"]
    assert hash_spark(df, engine="arrow").data_hash == vector.expected["data_hash"]


@pytest.mark.parametrize("ansi", ["true", "false"])
def test_jar_free_path_wraps_sums_under_ansi(spark, conf, ansi):
    conf("spark.sql.ansi.enabled", ansi)
    df = spark.range(0, 5000, numPartitions=8).selectExpr("id", "cast(id * 7 as string) as s")
    arrow, jvm = hash_spark(df, engine="arrow"), hash_spark(df, engine="jvm")
    assert (arrow.data_hash, arrow.row_count) == (jvm.data_hash, jvm.row_count)
    # 5000 random 64-bit halves: the partial sums certainly overflow a signed bigint, so wrapping is exercised.
    assert arrow.data_hash == hash_frame(df.toPandas()).data_hash


def test_random_decimals_and_dates_jvm_lines_equal_twin_lines(spark):
    import decimal

    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(11)
    cols = {}
    for p, s in [(20, 2), (10, 7), (18, 18), (18, 0), (38, 10), (9, 3)]:
        values = []
        for _ in range(400):
            digits = int(rng.integers(1, p + 1))
            u = int(rng.integers(0, 10 ** min(digits, 18))) * 10 ** max(0, digits - 18)
            values.append(decimal.Decimal(-u if rng.random() < 0.5 else u).scaleb(-s))
        values[:2] = [decimal.Decimal(0).scaleb(-s), None]
        cols[f"d{p}_{s}"] = pa.array(values, pa.decimal128(p, s))
    days = rng.integers(-1_000_000, 1_000_000, 400).astype(np.int32)
    cols["day"] = pa.array(days, pa.date32())
    cols["ts"] = pa.array(rng.integers(-(10**16), 10**16, 400), pa.timestamp("us", tz="UTC"))
    table = pa.table(cols)
    df = arrow_frame(spark, table)
    assert sorted(spark_canonical_lines(df, engine="jvm")) == sorted(canonical_lines(table))
    assert hash_spark(df, engine="jvm").data_hash == hash_frame(table).data_hash
