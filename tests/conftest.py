"""Shared fixtures. Spark tests use the one session-scoped `spark` fixture (see tests/spark/conftest.py)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

from ubunye.testing.vectors import load_vectors

ROOT = Path(__file__).resolve().parent.parent
VECTOR_DIR = ROOT / "tests" / "vectors"
VECTORS = load_vectors(VECTOR_DIR)


# --- the shared SparkSession (issue 4: run records; used by tests/engines, tests/lineage, tests/cli) ---------------
# ONE session per test run: local[2], Delta Lake (jars from Maven Central) and the ubunye jar when built.
# tests/spark/conftest.py may shadow this fixture for its folder; getOrCreate() then hands back this same session.


@pytest.fixture(scope="session")
def spark():
    """A local[2] SparkSession with Delta and (when built) the ubunye jar, UTC, 4 shuffle partitions."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    from ubunye.engines.spark_engine import configure_delta
    from ubunye.exceptions import JarNotFoundError

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("ubunye-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="ubunye-warehouse-"))
    )
    builder = configure_delta(builder)
    try:
        import ubunye.spark as us

        builder = us.configure(builder)
    except (ImportError, JarNotFoundError):
        pass
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
