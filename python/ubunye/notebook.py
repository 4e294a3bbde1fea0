"""Running a task from a notebook: reuses the active SparkSession, stores records like every other entry.

Example (in a Databricks notebook: the task runs on Spark in the notebook's session):
    >>> from ubunye import notebook
    >>> result = notebook.run("/Workspace/jobs/shop/daily/revenue", dt="2026-12-01")  # doctest: +SKIP
    >>> result.outputs["revenue"].show()  # doctest: +SKIP

The same call anywhere, here on pandas in a temporary copy of the example usecase:
    >>> import shutil, tempfile
    >>> from pathlib import Path
    >>> import ubunye.testing
    >>> usecase_dir = Path(tempfile.mkdtemp())
    >>> _ = shutil.copytree(Path(ubunye.testing.__file__).parent / "data/examples/shop", usecase_dir / "shop")
    >>> result = notebook.run(usecase_dir / "shop/daily/orders", dt="2026-12-01", engine="pandas")
    >>> result.status, len(result.outputs["orders"]), result.record_path is not None
    ('success', 500, True)
    >>> shutil.rmtree(usecase_dir)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ubunye.context import RunOptions
from ubunye.runner import RunResult, run_task

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def active_spark() -> SparkSession | None:
    """The active SparkSession, or None (also when pyspark is not installed)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    return SparkSession.getActiveSession()


def run(
    task_dir: str | Path,
    *,
    dt: str | None = None,
    dtf: str | None = None,
    mode: str | None = None,
    engine: str | None = None,
    lineage: bool | None = True,
    spark: SparkSession | None = None,
    monitors: Sequence[object] = (),
    records: str | Path | None = None,
    storage_options: dict[str, Any] | None = None,
) -> RunResult:
    """Run one task in this notebook's session and return its result (outputs included).

    With an active SparkSession (Databricks, a local notebook) and no ``engine`` given, the task runs on Spark
    in that session; without one it runs on config.yaml's backend. The record goes to the same store as a
    CLI run of the task (``lineage=True`` by default: a notebook run leaves a record); ``records`` sends it
    elsewhere, e.g. a Unity Catalog volume (``/Volumes/main/ops/records``) or ``s3://bucket/records``, which
    outlive the cluster (see :func:`ubunye.runner.run_task`).
    """
    options = RunOptions.resolve(lineage=lineage, records=records, storage_options=storage_options)
    spark = spark or active_spark()
    if engine is None and spark is not None:
        engine = "spark"
    return run_task(
        task_dir,
        dt=dt,
        dtf=dtf,
        mode=mode,
        engine=engine,
        spark=spark,
        monitors=monitors,
        entry_point="notebook",
        options=options,
    )
