"""An error raised while a signal unwinds the task is the signal's: pyspark's ``toPandas`` calls ``getResult()``
in a ``finally`` after Ctrl-C, and its SPARK_JOB_CANCELLED error replaces the KeyboardInterrupt (kept only as its
``__context__``). The run is recorded and exits as interrupted, as with ``.collect()``, not as that error."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lineage.usecase import write_task
from ubunye.exceptions import RunInterrupted, TaskError
from ubunye.lineage import RecordStore
from ubunye.runner import run_task

CANCELLED = """
import os, signal, time
from ubunye import Task

class Cancelled(Task):
    def transform(self, sources):
        sig = int(self.params["signal"])
        try:
            if sig:
                os.kill(os.getpid(), sig)
                time.sleep(30)  # the signal's exception arrives here
        finally:
            raise RuntimeError("[SPARK_JOB_CANCELLED] Job 3 cancelled part of cancelled job group")
"""


@pytest.fixture(autouse=True)
def ctrl_c_raises() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt, as in the CLI (an earlier test's pyspark may have left its own handler)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def run(tmp_path: Path, sig: int) -> pytest.ExceptionInfo[TaskError]:
    cfg = {
        "CONFIG": {
            "outputs": {"out": {"format": "parquet", "path": "data/out", "mode": "overwrite"}},
            "transform": {"type": "task", "params": {"signal": str(int(sig))}},  # 3.10's str() is "Signals.SIGINT"
            "monitors": ["lineage"],
        }
    }
    with pytest.raises(TaskError) as err:
        run_task(write_task(tmp_path, "cancelled", cfg, CANCELLED), engine="pandas")
    return err


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_error_raised_while_a_signal_unwinds_is_the_interruption(tmp_path: Path, sig: int, code: int) -> None:
    err = run(tmp_path, sig)
    # Before: a TaskError (exit 2) saying RuntimeError [SPARK_JOB_CANCELLED], recorded as a RuntimeError.
    name = signal.Signals(sig).name
    assert isinstance(err.value, RunInterrupted) and err.value.exit_code == code
    assert f"failed in transform: interrupted by {name}" in str(err.value)
    (record,) = RecordStore(tmp_path).records("shop", "daily", "cancelled")
    assert record.status == "failed" and record.error is not None
    assert f"interrupted by {name}" in record.error.message
    assert record.error.type == ("KeyboardInterrupt" if sig == signal.SIGINT else "Interrupted")


def test_the_same_error_without_a_signal_stays_the_error(tmp_path: Path) -> None:
    err = run(tmp_path, 0)
    assert not isinstance(err.value, RunInterrupted)
    assert "SPARK_JOB_CANCELLED" in str(err.value)
