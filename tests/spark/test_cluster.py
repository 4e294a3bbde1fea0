"""A cluster of separate JVMs (local-cluster: a standalone master and worker with 2 executor processes, all
on this machine): the executors get the jar through spark.jars, as on Databricks, and agree with local[2]."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.spark.jdk import default_java_home, run_hash_job, spark_ready_home
from tests.spark.tables import mixed_table

pytestmark = pytest.mark.slow


def test_executors_in_other_jvms_give_the_same_hash(spark: Any, tmp_path: Path) -> None:
    result = run_hash_job(spark_ready_home(default_java_home(), tmp_path), "--master", "local-cluster[2,1,1024]")
    assert result["executors"] == 2, result
    here = mixed_table(spark, 3000).selectExpr("ubunye_rows_v1(*) AS h").first()["h"]
    assert (result["row_count"], result["data_hash"]) == (here["row_count"], here["data_hash"])
