"""Shared fixtures: the conformance vectors and the one session-scoped `spark` fixture of the whole run.

A test that needs Spark says so by the fixture it takes: ``spark`` (the session), ``spark_child_env`` (Spark in a
child process of its own) or ``ubunye_jar`` (the built jar), directly or through another fixture. The hook below
marks each such test ``spark`` (no test marks itself), so ``pytest -m "not spark"`` (``make quick``) starts no
JVM and needs no jar.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.optional import HAVE_POLARS, NO_POLARS, deltalake_arrow_refusal
from ubunye.testing.vectors import load_vectors

ROOT = Path(__file__).resolve().parent.parent
VECTOR_DIR = ROOT / "tests" / "vectors"
VECTORS = load_vectors(VECTOR_DIR)


# Generated tests (hypothesis) draw the same examples on every run of the gate (`make test`): a gate that passes on
# one commit and fails on the next for an example no one had drawn before blocks unrelated work. Drawing fresh
# examples finds defects the fixed ones miss, so it has a target of its own: `make fuzz` (--hypothesis-profile
# explore, more examples). derandomize takes each test's examples from a hash of the test itself.
# The Spark-lines and Databricks-stack venvs hold pyspark, pytest and the package only: their tier has no
# generated tests, and this file is loaded there too.
try:
    from hypothesis import settings
except ImportError:
    pass
else:
    settings.register_profile("gate", derandomize=True, database=None, print_blob=True)
    settings.register_profile("explore", derandomize=False, database=None, print_blob=True)
    settings.load_profile("gate")

#: The fixtures that need a JVM or the ubunye jar.
SPARK_FIXTURES = frozenset({"spark", "spark_child_env", "ubunye_jar"})


@pytest.hookimpl(tryfirst=True)  # before -m deselects: the marks must be there when it looks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``spark`` every test whose fixture closure holds one of :data:`SPARK_FIXTURES`."""
    for item in items:
        # A parametrize argument is in the closure too, and may be called `spark` (a version string): not the fixture.
        params = item.callspec.params if isinstance(item, pytest.Function) and hasattr(item, "callspec") else {}
        if SPARK_FIXTURES.intersection(set(getattr(item, "fixturenames", ())) - set(params)):
            item.add_marker(pytest.mark.spark)
        polars_case = any(isinstance(v, str) and v == "polars" for v in params.values())
        if not HAVE_POLARS and polars_case and item.get_closest_marker("runs_without_polars") is None:
            item.add_marker(pytest.mark.skip(reason=NO_POLARS))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "pyarrow_floor: a test of what deltalake's Arrow side does on an older pyarrow (works or is refused): its "
        "failures stay failures (tests/conftest.py skips others that deltalake's Arrow side fails on such a pyarrow)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """A test that stopped on deltalake's Arrow side failing on a pyarrow older than deltalake declares (pyarrow
    >= 21; Databricks 14.3 to 16.4 LTS run 14 or 15) is reported skipped, saying so: the product refused there as
    it should, with an error naming the table and what to do, and could not reach what the test checks. Only
    that failure (:func:`tests.optional.deltalake_arrow_refusal`): any other, a bare one from the product
    included, still fails the test. Tests marked ``pyarrow_floor`` check that refusal themselves and keep theirs."""
    report: pytest.TestReport = yield
    if report.failed and report.when in ("setup", "call") and call.excinfo is not None:
        why = None if item.get_closest_marker("pyarrow_floor") else deltalake_arrow_refusal(call.excinfo.value)
        if why is not None:
            path, line, _ = item.reportinfo()
            report.outcome = "skipped"
            report.longrepr = (os.fspath(path), (line or 0) + 1, f"Skipped: {why}")
    return report


@pytest.fixture
def spark_child_env() -> dict[str, str]:
    """The environment for a test that starts Spark in a child process of its own (Spark Connect, a session
    without Delta): this one, with this Python for the workers."""
    pytest.importorskip("pyspark")
    return dict(os.environ, PYSPARK_PYTHON=sys.executable)


@pytest.fixture
def ubunye_jar() -> Path:
    """The ubunye jar of the installed pyspark (``make jar``); JarNotFoundError, not a skip, when it is missing."""
    pytest.importorskip("pyspark")
    import ubunye.spark as us

    return us.jar_path()


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


@pytest.fixture
def conf(spark: Any) -> Iterator[Any]:
    """Set session confs for one test: ``conf("spark.sql.ansi.enabled", "false")``; restored afterwards (any
    folder's ``spark``: the shared session here, a line's own in tests/lines)."""
    saved: dict[str, str | None] = {}

    def set_conf(key: str, value: str) -> None:
        if key not in saved:
            saved[key] = spark.conf.get(key, None)
        spark.conf.set(key, value)

    yield set_conf
    for key, value in saved.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)
