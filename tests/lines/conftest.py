"""The Spark-lines tier: the conformance vectors and JVM = jar-free = twin on another pyspark line.

``make spark-lines`` runs it in a venv per pyspark line (pyspark 3.5 with the Scala 2.12 jar, the newest 4.x),
each in a fresh local session of its own (``spark`` here overrides the main suite's: one jar, the one
``ubunye.spark.configure`` picks for the installed pyspark, and Delta where the line has delta-spark jars). The
main suite skips this folder: it runs only when ``UBUNYE_SPARK_LINE_TIER=1`` (the main venv's own session is the
main suite's).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

TIER_ENV = "UBUNYE_SPARK_LINE_TIER"

if os.environ.get(TIER_ENV) != "1":
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A fresh local[2] session of this venv's pyspark with the ubunye jar of its line (UTC, 4 partitions)."""
    from pyspark.sql import SparkSession

    import ubunye.spark as us

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("ubunye-spark-lines")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="ubunye-lines-"))
        # The vectors enter through Parquet files written by pyarrow: proleptic Gregorian dates, any year.
        .config("spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED")
        .config("spark.sql.parquet.int96RebaseModeInRead", "CORRECTED")
    )
    from ubunye.engines.spark_engine import configure_delta

    # Delta where this line has delta-spark jars on Maven Central (3.5: Delta 3.3; none for 4.3 yet, where
    # configure_delta leaves the builder as it is and the Delta tests skip, saying so).
    session = us.configure(configure_delta(builder)).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    us.require(session)
    yield session
    session.stop()
