"""Interrupted runs: a ``running`` record whose process is gone is shown ``interrupted``, never rewritten.

Real processes throughout: children that write their record and are killed with SIGKILL, a zombie, a pid
reused (this test's own pid with another start time), a record from another host; and the recorder's
checkpoint driven with a real RunContext of the example usecase.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import ubunye
from tests.lineage.fixtures import RECORDS, RUNS, install
from tests.lineage.usecase import example_usecase
from ubunye.cli.main import app
from ubunye.context import RunOptions
from ubunye.lineage import LineageRecorder, RecordStore
from ubunye.lineage.compare import compare_records
from ubunye.lineage.liveness import process_facts, run_state, start_mark
from ubunye.lineage.record import DatasetRecord, ErrorInfo, ProcessInfo, RunRecord, Timing
from ubunye.lineage.store import load_record
from ubunye.monitors import call_monitor
from ubunye.runner import prepare, run_task

runner = CliRunner()
HOST = socket.gethostname()
BOOT_ID = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

#: A child that writes a running record of itself (or, with a third argument, checkpoints a real run) and waits.
CHILD = r"""
import sys, time
from ubunye.lineage.liveness import process_facts
from ubunye.lineage.record import ProcessInfo, RunRecord
from ubunye.lineage.store import RecordStore
usecase_dir, run_id = sys.argv[1], sys.argv[2]
record = RunRecord(run_id=run_id, usecase="shop", package="daily", task="revenue", status="running",
                   started_at="2026-12-04T00:00:00Z", process=ProcessInfo(**process_facts()))
RecordStore(usecase_dir).write(record)
print(process_facts()["started"], flush=True)
time.sleep(300)
"""

SCHEMA_HASH, DATA_HASH = "sha256:" + "5c" * 32, "sha256:" + "da7a" * 16  # well-formed digests of nothing

CHECKPOINTING_CHILD = r"""
import sys, time
from ubunye.context import RunOptions
from ubunye.lineage import LineageRecorder
from ubunye.lineage.record import DatasetRecord, Timing
from ubunye.runner import prepare

SCHEMA_HASH, DATA_HASH = "sha256:" + "5c" * 32, "sha256:" + "da7a" * 16
ctx = prepare(sys.argv[1], dt="2026-12-01", engine="pandas")
options = RunOptions(lineage=True).settle(ctx.config, ctx.usecase_dir)
recorder = LineageRecorder()
recorder.task_start(context=ctx, run_id=ctx.run_id, options=options)
out = DatasetRecord("revenue", "parquet", "postgresql://app:s3cret-pass@db/x", 4, SCHEMA_HASH, DATA_HASH,
                    "rows-v1", mode="overwrite", written=False)
recorder.task_checkpoint(context=ctx, options=options, run_id=ctx.run_id, status="running", ended_at=None, duration=0.5,
                         outputs=[out], inputs=[], expectations=[], timings=[Timing("transform", "revenue", 0.25)])
print(options.record_path(ctx), flush=True)
time.sleep(300)
"""


def invoke(*args: Any):
    return runner.invoke(app, [str(a) for a in args])


def spawn(script: str, *args: Any, executable: str = sys.executable) -> tuple[subprocess.Popen, str]:
    """Start a child python and wait for its first line (it prints once its record is written)."""
    # A renamed interpreter is outside the venv: it is given the package's folder and the venv's site-packages.
    paths = [str(Path(ubunye.__file__).parents[1]), *(p for p in sys.path if p.endswith("site-packages"))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    proc = subprocess.Popen([executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline().strip()  # type: ignore[union-attr]
    assert line, f"child exited with {proc.wait()} before writing its record"
    return proc, line


def kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL


def digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def listed(usecase_dir: Path, *args: Any) -> dict[str, dict[str, Any]]:
    result = invoke("lineage", "list", "-d", usecase_dir, "--json", *args)
    assert result.exit_code == 0 and result.stderr == "", result.output
    return {r["run_id"]: r for r in json.loads(result.stdout)}


def dead_pid() -> int:
    """The pid of a process that ran, exited and was reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def write(usecase_dir: Path, run_id: str, process: ProcessInfo | None, status: str = "running") -> Path:
    record = RunRecord(run_id=run_id, usecase="shop", package="daily", task="revenue", status=status,
                       started_at="2026-12-04T00:00:00Z", process=process)  # fmt: skip
    return RecordStore(usecase_dir).write(record)


# --- a real process killed -----------------------------------------------------------------------------------------


def test_a_child_killed_with_sigkill_is_shown_interrupted(tmp_path):
    run_id = "20261204T000000.000000Z-kill09"
    proc, _ = spawn(CHILD, tmp_path, run_id)
    path = RecordStore(tmp_path).path("shop", "daily", "revenue", run_id)
    try:
        row = listed(tmp_path)[run_id]
        assert (row["status"], row["state"]) == ("running", "running")  # alive: still running
        before = digest(path)
    finally:
        kill(proc)
    row = listed(tmp_path)[run_id]
    assert (row["status"], row["state"]) == ("running", "interrupted")
    table = invoke("lineage", "list", "-d", tmp_path)
    (line,) = [x for x in table.stdout.splitlines() if "shop/daily/revenue" in x]
    assert "interrupted" in line and table.exit_code == 0
    shown = invoke("lineage", "show", run_id, "-d", tmp_path, "--json")
    data = json.loads(shown.stdout)
    assert (shown.exit_code, data["status"], data["state"]) == (0, "running", "interrupted")
    assert list(data)[list(data).index("status") + 1] == "state"  # beside status
    assert data["process"]["pid"] == proc.pid and data["process"]["host"] == HOST
    trace = invoke("lineage", "trace", run_id, "-d", tmp_path)
    assert trace.exit_code == 0 and f"run {run_id}  shop/daily/revenue  interrupted" in trace.stdout
    assert "status           running (as recorded)" in trace.stdout
    assert f"process          pid {proc.pid} on {HOST}, started " in trace.stdout
    assert digest(path) == before  # readers never rewrite the record
    assert run_state(load_record(path)) == "interrupted" and load_record(path).status == "running"


def test_a_zombie_is_gone(tmp_path):
    proc, _ = spawn(CHILD, tmp_path, "20261204T000000.000000Z-zombie")
    os.kill(proc.pid, signal.SIGKILL)  # not reaped yet: the pid exists, as a zombie
    try:
        deadline = time.monotonic() + 30
        while Path(f"/proc/{proc.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child never became a zombie"
            time.sleep(0.01)
        assert listed(tmp_path)["20261204T000000.000000Z-zombie"]["state"] == "interrupted"
    finally:
        proc.wait(timeout=30)


def test_a_run_killed_after_its_checkpoint_keeps_the_outputs_hash(tmp_path):
    usecase_dir = example_usecase(tmp_path)
    proc, record_path = spawn(CHECKPOINTING_CHILD, usecase_dir / "shop/daily/revenue")
    kill(proc)
    run_id = Path(record_path).stem
    data = json.loads(invoke("lineage", "show", run_id, "-d", usecase_dir, "--json").stdout)
    assert (data["status"], data["state"], data["ended_at"], data["duration_seconds"]) == (
        "running", "interrupted", None, None)  # fmt: skip
    (out,) = data["outputs"]
    assert (out["data_hash"], out["row_count"], out["written"]) == (
        DATA_HASH,
        4,
        False,
    )
    assert out["location"] == "postgresql://app:***@db/x"  # masked like every write
    assert data["timings"] == [{"stage": "transform", "name": "revenue", "seconds": 0.25}]
    assert data["process"]["pid"] == proc.pid


def test_start_mark_reads_a_command_name_with_parentheses_and_spaces(tmp_path):
    odd = tmp_path / "we) ird (py"
    odd.symlink_to(sys.executable)
    proc, mark = spawn(CHILD, tmp_path, "20261204T000000.000000Z-oddnam", executable=str(odd))
    try:
        assert Path(f"/proc/{proc.pid}/stat").read_text().split(" (", 1)[1].startswith("we) ird (py)")
        assert start_mark(proc.pid) == mark != start_mark(os.getpid())
        assert listed(tmp_path)["20261204T000000.000000Z-oddnam"]["state"] == "running"
    finally:
        kill(proc)


# --- pid reuse, reboots, other hosts ---------------------------------------------------------------------------------

TICKS = start_mark(os.getpid()).partition("@")[0]  # type: ignore[union-attr]
OTHER_BOOT = "00000000-0000-0000-0000-000000000000"

CASES = [
    ("this-process", lambda: ProcessInfo(HOST, os.getpid(), f"{TICKS}@{BOOT_ID}"), "running", "running"),
    ("pid-reused", lambda: ProcessInfo(HOST, os.getpid(), f"1@{BOOT_ID}"), "running", "interrupted"),
    ("rebooted", lambda: ProcessInfo(HOST, os.getpid(), f"{TICKS}@{OTHER_BOOT}"), "running", "interrupted"),
    ("boot-id-unread-same-ticks", lambda: ProcessInfo(HOST, os.getpid(), TICKS), "running", "running"),
    ("boot-id-unread-other-ticks", lambda: ProcessInfo(HOST, os.getpid(), "1"), "running", "interrupted"),
    ("start-unknown-alive", lambda: ProcessInfo(HOST, os.getpid(), None), "running", "running"),
    ("start-unknown-gone", lambda: ProcessInfo(HOST, dead_pid(), None), "running", "interrupted"),
    ("pid-gone", lambda: ProcessInfo(HOST, dead_pid(), f"{TICKS}@{BOOT_ID}"), "running", "interrupted"),
    ("other-host-pid-gone", lambda: ProcessInfo("elsewhere.invalid", dead_pid(), "1@x"), "running", "running"),
    ("other-host-pid-reused", lambda: ProcessInfo("elsewhere.invalid", os.getpid(), "1@x"), "running", "running"),
    ("older-record-no-process", lambda: None, "running", "running"),
    ("succeeded-process-gone", lambda: ProcessInfo(HOST, dead_pid(), "1@x"), "success", "success"),
    ("failed-process-gone", lambda: ProcessInfo(HOST, dead_pid(), "1@x"), "failed", "failed"),
    ("another-users-process", lambda: ProcessInfo(HOST, 1, start_mark(1)), "running", "running"),
]


@pytest.mark.parametrize(("name", "process", "status", "state"), CASES, ids=[c[0] for c in CASES])
def test_state_of_a_record(tmp_path, name, process, status, state):
    run_id = f"20261204T000000.000000Z-{name}"
    path = write(tmp_path, run_id, process(), status)
    before = digest(path)
    row = listed(tmp_path)[run_id]
    assert (row["status"], row["state"]) == (status, state)
    shown = json.loads(invoke("lineage", "show", run_id, "-d", tmp_path, "--json").stdout)
    assert (shown["status"], shown["state"]) == (status, state)
    assert run_state(load_record(path)) == state
    assert digest(path) == before


def test_status_filter_selects_the_state(tmp_path):
    write(tmp_path, "20261204T000000.000000Z-gone", ProcessInfo(HOST, os.getpid(), f"1@{BOOT_ID}"))
    write(tmp_path, "20261204T000001.000000Z-here", ProcessInfo(HOST, os.getpid(), start_mark(os.getpid())))
    assert list(listed(tmp_path, "--status", "interrupted")) == ["20261204T000000.000000Z-gone"]
    assert list(listed(tmp_path, "--status", "running")) == ["20261204T000001.000000Z-here"]


def test_never_signals_a_process_group(tmp_path):
    # kill(0, ...) and kill(-1, ...) address process groups: such a pid is refused on load, and run_state on a
    # record built in code treats it as "cannot know".
    for pid in (0, -1, 2**40):
        record = RunRecord(run_id="r", usecase="u", package="p", task="t", process=ProcessInfo(HOST, pid, None))
        assert run_state(record) == "running"


# --- compare ------------------------------------------------------------------------------------------------------


def test_compare_treats_an_interrupted_run_like_a_failed_one(tmp_path):
    install(tmp_path)
    base = json.loads((RECORDS / "revenue-same.json").read_text())
    folder = tmp_path / ".ubunye/lineage/shop/daily/revenue"
    variants = {
        "20261204T000000.000000Z-failed": {"status": "failed",
                                           "error": {"type": "E", "message": "m", "stage": "write", "name": None}},
        "20261204T000000.000000Z-interrupted": {"status": "running",
                                                "process": {"host": HOST, "pid": os.getpid(), "started": "1@x"}},
    }  # fmt: skip
    for run_id, change in variants.items():
        (folder / f"{run_id}.json").write_text(json.dumps({**base, "run_id": run_id, **change}))
    a = RUNS["revenue-a"]
    failed = invoke("lineage", "compare", a, "20261204T000000.000000Z-failed", "-d", tmp_path, "--json")
    cut = invoke("lineage", "compare", a, "20261204T000000.000000Z-interrupted", "-d", tmp_path, "--json")
    f, c = json.loads(failed.stdout), json.loads(cut.stdout)
    # the same rows computed, but not the same data written: exit 1, the summary says which run did not succeed
    assert (cut.exit_code, c["verdict"]) == (failed.exit_code, f["verdict"]) == (1, "same")
    assert c["summary"] == "same rows computed, but run B interrupted: its outputs may not hold them"
    assert f["summary"] == "same rows computed, but run B failed: its outputs may not hold them"
    assert (c["status"]["status"], c["status"]["a"], c["status"]["b"]) == ("changed", "success", "interrupted")
    assert (f["status"]["status"], f["status"]["b"]) == ("changed", "failed")
    assert c["notes"] == [
        "run B interrupted: its process is gone, the record holds the evidence of its last checkpoint"
    ]
    text = invoke("lineage", "compare", a, "20261204T000000.000000Z-interrupted", "-d", tmp_path).stdout
    assert "note: run B interrupted: its process is gone" in text and "interrupted  (record v2)" in text
    # the library call, without I/O, compares statuses unless told the states
    ra, rb = load_record(folder / f"{a}.json"), load_record(folder / "20261204T000000.000000Z-interrupted.json")
    assert compare_records(ra, rb).status.b == "running"


# --- the recorder -------------------------------------------------------------------------------------------------


def test_a_real_run_records_its_process(tmp_path):
    usecase_dir = example_usecase(tmp_path)
    run_task(usecase_dir / "shop/daily/orders", dt="2026-12-01", lineage=False)
    result = run_task(usecase_dir / "shop/daily/revenue", dt="2026-12-01", lineage=True)
    record = load_record(result.record_path)
    assert record.process == ProcessInfo(HOST, os.getpid(), start_mark(os.getpid()))
    assert record.process.started == f"{TICKS}@{BOOT_ID}"
    assert (record.status, run_state(record)) == ("success", "success")


def test_checkpoint_writes_the_evidence_with_the_status_still_running(tmp_path):
    usecase_dir = example_usecase(tmp_path)
    ctx = prepare(usecase_dir / "shop/daily/revenue", dt="2026-12-01", engine="pandas")
    recorder = LineageRecorder()
    options = RunOptions(lineage=True).settle(ctx.config, ctx.usecase_dir)
    path = options.record_path(ctx)
    assert LineageRecorder.essential is True and recorder.essential is True
    out = DatasetRecord(
        "revenue",
        "parquet",
        "https://u:pa55word-x@h/x",
        4,
        SCHEMA_HASH,
        DATA_HASH,
        "rows-v1",
    )
    evidence = {
        "context": ctx, "options": options, "run_id": ctx.run_id, "status": "success",
        "ended_at": "2026-12-04T00:00:09Z",
        "duration": 9.0, "outputs": [out], "error": None, "inputs": [], "expectations": [],
        "timings": [Timing("transform", "revenue", 0.5)],
    }  # fmt: skip
    assert call_monitor(recorder, "task_checkpoint", **evidence)  # without task_start: it starts the record
    saved = load_record(path)
    assert (saved.status, saved.ended_at, saved.duration_seconds) == ("running", None, None)
    assert saved.outputs[0].data_hash == DATA_HASH and saved.outputs[0].location == "https://u:***@h/x"
    assert saved.timings == [Timing("transform", "revenue", 0.5)] and saved.process.pid == os.getpid()
    assert out.location == "https://u:pa55word-x@h/x"  # the runner's object is left as it was
    assert run_state(saved) == "running"
    evidence["error"] = ErrorInfo("E", "failed talking to https://u:pa55word-x@h/x", "write", "revenue")
    assert call_monitor(recorder, "task_checkpoint", **evidence)
    assert load_record(path).error.message == "failed talking to https://u:***@h/x"
    call_monitor(recorder, "task_end", **{**evidence, "error": None})
    done = load_record(path)
    assert (done.status, done.ended_at, done.duration_seconds, done.error) == (
        "success", "2026-12-04T00:00:09Z", 9.0, None)  # fmt: skip
    assert done.process == saved.process and done.started_at == saved.started_at


def test_a_record_that_cannot_be_written_at_start_raises(tmp_path):
    usecase_dir = example_usecase(tmp_path)
    ctx = prepare(usecase_dir / "shop/daily/revenue", dt="2026-12-01", engine="pandas")
    (usecase_dir / ".ubunye").write_text("a file where the store's folder goes")
    with pytest.raises(OSError):
        options = RunOptions(lineage=True).settle(ctx.config, ctx.usecase_dir)
        LineageRecorder().task_start(context=ctx, run_id=ctx.run_id, options=options)


def test_process_facts_are_this_process():
    facts = process_facts()
    assert facts == {"host": HOST, "pid": os.getpid(), "started": f"{TICKS}@{BOOT_ID}"}
    fields = Path(f"/proc/{os.getpid()}/stat").read_text().rpartition(")")[2].split()
    assert TICKS == fields[19] and TICKS.isdigit()
    assert process_facts(dead_pid())["started"] is None
