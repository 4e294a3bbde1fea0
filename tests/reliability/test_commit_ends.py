"""What a run's record says about an output whose commit happened but whose run did not end cleanly: a folder fsync
failing after the rename, a kill between the commit and the final record.

The rename is the commit: from then on the new rows are what every reader sees. A record saying "failed, not
written" about them is believed (an append retried adds its rows twice), so after the rename a failing fsync is a
warning, and the checkpoint written just before the commit says ``written: null`` (not known) for that output.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import ubunye.engines.transaction as transaction
from tests.lineage.usecase import write_task
from ubunye.lineage import RecordStore
from ubunye.runner import run_task

CLI = [sys.executable, "-c", "from ubunye.cli.main import main; main()"]


def _usecase(tmp_path: Path, mode: str, fmt: str = "parquet", monitors: list[str] | None = None) -> Path:
    uc = tmp_path / "uc"
    (uc / "data" / "src").mkdir(parents=True)
    pd.DataFrame({"k": range(5)}).to_parquet(uc / "data" / "src" / "part-0.parquet")
    cfg = {
        "CONFIG": {
            "inputs": {"src": {"format": "parquet", "path": "data/src"}},
            "outputs": {"out": {"format": fmt, "path": "data/out", "mode": mode}},
            "transform": {"type": "sql", "query": "SELECT k, 'day {{ dt }}' AS day FROM src"},
            "monitors": monitors or ["lineage"],
        }
    }
    write_task(uc, "t", cfg)
    return uc


def _days(uc: Path, fmt: str = "parquet") -> dict[str, int]:
    files = sorted((uc / "data" / "out").glob(f"*.{fmt}"))
    frame = pd.concat(pd.read_parquet(f) if fmt == "parquet" else pd.read_csv(f) for f in files)
    return frame["day"].value_counts().to_dict()


@pytest.mark.parametrize("mode", ["overwrite", "append"])
def test_an_fsync_failing_after_the_commit_is_a_warning_not_a_failed_write(tmp_path, monkeypatch, caplog, mode):
    # The record said failed / written: false while the new rows were in place (and the old ones deleted)
    uc = _usecase(tmp_path, mode)
    run_task(uc / "shop/daily/t", dt="2026-12-01", engine="pandas")
    real, calls = transaction.fsync_dir, []

    def eio_once(folder: Path) -> None:  # the disk's answer to the fsync that follows the commit's rename
        calls.append(folder)
        if len(calls) == 1:
            raise OSError(errno.EIO, "Input/output error")
        real(folder)

    monkeypatch.setattr(transaction, "fsync_dir", eio_once)
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        result = run_task(uc / "shop/daily/t", dt="2026-12-02", engine="pandas")
    assert calls, "the post-commit fsync was not reached"
    assert result.status == "success"
    record = RecordStore(uc).load(result.run_id)
    assert (record.status, record.outputs[0].written) == ("success", True)
    want = {"day 2026-12-02": 5} if mode == "overwrite" else {"day 2026-12-01": 5, "day 2026-12-02": 5}
    assert _days(uc) == want
    assert any("was committed, but the folder could not be synced" in r.getMessage() for r in caplog.records)
    assert not [p for p in (uc / "data").iterdir() if "ubunye-staging" in p.name]


KILLER = """
import os, signal

class KillInTaskEnd:
    def task_end(self, **kw):
        if os.environ.get("KILL") == "1":
            os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("mode", ["overwrite", "append"])
def test_a_run_killed_after_its_commit_leaves_written_not_known(tmp_path, mode):
    # The checkpoint said written: false about rows that were in place: an append retried on that word adds twice.
    # Monitors other than the recorder end before the final record is written, so this kill lands after the commit.
    uc = _usecase(tmp_path, mode, fmt="csv", monitors=["lineage", "killer:KillInTaskEnd"])
    (uc / "killer.py").write_text(KILLER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(uc), *sys.path])}
    run = [*CLI, "run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "t"]
    subprocess.run([*run, "-dt", "2026-12-01"], env=env, check=True, capture_output=True, timeout=300)
    killed = subprocess.run([*run, "-dt", "2026-12-02"], env={**env, "KILL": "1"}, capture_output=True, timeout=300)
    assert killed.returncode == -9
    want = {"day 2026-12-02": 5} if mode == "overwrite" else {"day 2026-12-01": 5, "day 2026-12-02": 5}
    assert _days(uc, "csv") == want
    last = [r for r in RecordStore(uc).records("shop", "daily", "t") if r.template_vars.get("dt") == "2026-12-02"]
    assert [(r.status, r.outputs[0].written, r.outputs[0].row_count) for r in last] == [("running", None, 5)]
    trace = subprocess.run(
        [*CLI, "lineage", "trace", last[0].run_id, "-d", str(uc)], env=env, capture_output=True, text=True, timeout=120
    )
    assert "not known: the run stopped while committing it" in trace.stdout, trace.stdout + trace.stderr
    if mode == "append":
        return  # an append's record hashes the rows it added, not the location
    # the record's hash tells which rows are in place: the killed run's
    hashed = subprocess.run(
        [*CLI, "hash", str(uc / "data/out"), "--format", "csv", "--json"], env=env, capture_output=True, text=True
    )
    assert json.loads(hashed.stdout)["data_hash"] == last[0].outputs[0].data_hash, hashed.stdout + hashed.stderr


def test_a_write_failing_after_its_checkpoint_says_written_only_what_is_known(tmp_path):
    # Spark's save, saveAsTable and deltalake commit inside one call: an error after their commit said "not written"
    # about rows in place. Now: False where nothing can have landed, None (not known) where it may have.
    from ubunye.config import IOConfig
    from ubunye.engines import get_engine, location
    from ubunye.lineage.record import DatasetRecord
    from ubunye.runner import _delta_now, _written_after_failure

    engine = get_engine("pandas")
    delta = IOConfig("o", format="delta", path="d")

    def after(io, before, checkpointed=True):
        where = location(io, tmp_path) if io.table is None else io.table
        record = DatasetRecord("o", location=where, written=None if checkpointed else False)
        return _written_after_failure(record, engine, io, tmp_path, before)

    before = _delta_now(engine, delta, tmp_path)
    assert before == -1  # no table there yet
    assert after(delta, before) is False  # and still none
    engine.write(pd.DataFrame({"a": [1]}), delta, tmp_path)  # a commit happened (version 0)
    assert after(delta, before) is None  # rows may be in place: not known
    now = _delta_now(engine, delta, tmp_path)
    assert now == 0 and after(delta, now) is False  # the version did not move: nothing landed
    assert after(delta, now, checkpointed=False) is False  # failed before its checkpoint: never committed
    assert after(IOConfig("o", format="parquet", path="p"), None) is False  # a local folder: the rename is the commit
    assert after(IOConfig("o", format="parquet", path="s3://b/p"), None) is None  # inside the writer's call
    assert after(IOConfig("o", table="db.t"), None) is None
    # Delta 4 makes _delta_log/_staged_commits before its first commit: a failed first write leaves that folder
    # alone, which said "not known" where nothing can have landed.
    fresh = IOConfig("o", format="delta", path="fresh")
    (tmp_path / "fresh" / "_delta_log" / "_staged_commits").mkdir(parents=True)
    assert _delta_now(engine, fresh, tmp_path) == -1 and after(fresh, -1) is False
    (tmp_path / "fresh" / "_delta_log" / "_staged_commits" / f"{0:020d}.{'a' * 8}.json").write_text("{}")
    assert after(fresh, -1) is None  # a staged commit may be one (a commit coordinator): not known


def test_no_table_is_said_only_where_the_driver_s_disk_holds_the_output(tmp_path):
    # A Spark session lost with its write (Spark Connect, HDFS): no _delta_log on this disk said "no table", and a
    # first write that may have committed on the cluster was recorded written: false
    from ubunye.config import IOConfig
    from ubunye.engines.spark_engine import SparkEngine
    from ubunye.runner import _delta_now

    lost = SparkEngine(spark=object())  # every call on the session fails, as a dropped connection's do
    assert _delta_now(lost, IOConfig("o", format="delta", path="warehouse/t"), tmp_path) is None
