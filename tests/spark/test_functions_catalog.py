"""Registration of the ubunye SQL functions, their DESC FUNCTION usage, and analysis-time errors."""

from __future__ import annotations

from typing import Any

import pytest

from tests.spark.conftest import spark_major
from ubunye.exceptions import HashError

# Name and arguments as DESCRIBE FUNCTION shows them (profile-v1: docs/rows-v1.md section 12.3).
FUNCTIONS = [
    ("ubunye_rows_v1", "(cols...)"),
    ("ubunye_canonical_line", "(cols...)"),
    ("ubunye_profile_v1", "(n_buckets, key, cols...)"),
    ("ubunye_bucket_v1", "(cols..., n_buckets)"),
]


def test_every_function_is_listed() -> None:
    import ubunye.spark.session as session

    assert [name for name, _ in FUNCTIONS] == list(session.FUNCTIONS)


@pytest.mark.parametrize(("name", "args"), FUNCTIONS)
def test_desc_function_shows_usage(spark: Any, name: str, args: str) -> None:
    text = "\n".join(r[0] for r in spark.sql(f"DESCRIBE FUNCTION EXTENDED {name}").collect())
    assert f"Function: {name}" in text
    assert f"Usage: {name}{args}" in text
    assert "Examples:" in text


def test_register_on_a_running_session(spark: Any) -> None:
    """register() puts the functions back into a session that lacks them (the Databricks notebook case)."""
    import ubunye.spark as us

    other = spark.newSession()
    # Extension functions cannot be dropped in SQL: take them out of this session's registry directly.
    other._jvm.ubunye.spark.UbunyeFunctions.unregisterAll(other._jsparkSession)
    assert not us.is_registered(other)
    with pytest.raises(Exception, match="ubunye_rows_v1"):
        us.require(other)
    us.register(other)
    assert us.is_registered(other)
    assert other.sql("SELECT ubunye_rows_v1(*).row_count FROM range(3)").first()[0] == 3
    us.register(other)  # twice is harmless
    assert other.sql("SELECT ubunye_canonical_line(*) FROM range(1)").first()[0] == '{"id":0}'
    p = other.sql("SELECT ubunye_profile_v1(4, array('id'), *) AS p FROM range(5)").first()["p"]
    assert p["row_count"] == 5
    assert len(p["buckets"]) == 4 * 24
    assert other.sql("SELECT count(*) FROM range(5) WHERE ubunye_bucket_v1(id, 1) = 0").first()[0] == 5


BAD = [
    ("SELECT ubunye_rows_v1(*) FROM (SELECT 1 AS a, interval '1' day AS iv)", "`iv`", "interval day"),
    ("SELECT ubunye_rows_v1(*) FROM (SELECT 1 AS a, null AS nothing)", "`nothing`", "void"),
    ("SELECT ubunye_rows_v1(*) FROM (SELECT parse_json('1') AS v)", "`v`", "variant"),
    (
        "SELECT ubunye_rows_v1(*) FROM (SELECT named_struct('x', array(interval '1' year)) AS st)",
        "`st` (field `st.x[]`)",
        "interval year",
    ),
    ("SELECT ubunye_rows_v1(*) FROM (SELECT 1 AS id, 2 AS id)", "duplicate column name `id`", ""),
    ("SELECT ubunye_rows_v1(*) FROM (SELECT named_struct('a', 1, 'a', 2) AS st)", "duplicate field name `a`", ""),
    ("SELECT ubunye_canonical_line(*) FROM (SELECT interval '1' day AS iv)", "`iv`", "interval day"),
    # section 12.3's errors name the value
    ("SELECT ubunye_profile_v1(3, array(), *) FROM range(1)", "n_buckets is 3", "power of two"),
    ("SELECT ubunye_profile_v1(4, array('nope'), *) FROM range(1)", "key column `nope`", "not one of the hashed"),
    ("SELECT ubunye_profile_v1(4, array('id', 'id'), *) FROM range(1)", "key column `id`", "listed twice"),
    ("SELECT ubunye_profile_v1(4, array(id), *) FROM range(1)", "key must be a literal array", ""),
    ("SELECT ubunye_bucket_v1(id, 0) FROM range(1)", "n_buckets is 0", "power of two"),
    ("SELECT ubunye_bucket_v1(id, id) FROM range(1)", "integer literal", ""),
]


@pytest.mark.parametrize(("sql", "names", "type_name"), BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_fails_at_analysis_naming_the_column(spark: Any, sql: str, names: str, type_name: str) -> None:
    from pyspark.errors import AnalysisException

    if "parse_json" in sql and spark_major() < 4:
        pytest.skip("variant (parse_json) arrived in Spark 4.0")
    with pytest.raises(AnalysisException) as err:
        spark.sql(sql)  # analysis only: no job runs
    message = str(err.value)
    assert names in message
    assert type_name in message


def test_python_schema_string_names_the_column(spark: Any) -> None:
    from ubunye.hashing.jvm import hash_spark_jvm
    from ubunye.hashing.types import spark_schema_string

    df = spark.sql("SELECT 1 AS a, named_struct('x', interval '1' day) AS st")
    with pytest.raises(HashError, match=r"column 'st' \(field 'st\.x'\) of Spark type interval day"):
        spark_schema_string(df.schema)
    with pytest.raises(HashError, match="two columns named 'a'"):
        hash_spark_jvm(spark.sql("SELECT 1 AS a, 2 AS a"))
