"""Shared fixtures: the conformance vectors and the one session-scoped `spark` fixture of the whole run."""

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


# --- the shared SparkSession: every test that takes the `spark` fixture, in any folder --------------------------
# ONE session per test run: local[2], Delta Lake (jars from Maven Central) and the ubunye jar.


@pytest.fixture(scope="session")
def spark():
    """A local[2] SparkSession with Delta and the ubunye jar, session time zone UTC, 4 shuffle partitions."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    import ubunye.spark as us
    from ubunye.engines.spark_engine import configure_delta

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("ubunye-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="ubunye-warehouse-"))
    )
    # Built with the helpers users call; no jar is an error (JarNotFoundError says to run `make jar`), not a skip.
    builder = us.configure(configure_delta(builder))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    us.require(session)
    yield session
    session.stop()
