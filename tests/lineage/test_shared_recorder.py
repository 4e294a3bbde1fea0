"""One LineageRecorder (and one openlineage monitor) shared by runs on several threads at once: each run gets its
own record, ended as the run ended, and no run waits for another's (docs/tasks-and-records.md, "Order of a run").

Every run here is on a thread of its own, joined with a timeout: a run that waits for another forever fails the
test instead of hanging it. Tasks meet the test through :mod:`tests.lineage.meeting`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.lineage import meeting
from tests.lineage.usecase import records, write_task
from ubunye.lineage import LineageRecorder, RunRecord
from ubunye.runner import RunResult, run_task

#: How long a run waits for the other at a barrier (the stop-gap lock made the second wait for the first's end).
WAIT = 10.0
#: How long a test waits for all its threads: a run still going then is a deadlock.
DEADLINE = 90.0


@pytest.fixture
def uc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    monkeypatch.delenv("OPENLINEAGE_URL", raising=False)
    before = set(meeting.HOOKS)
    yield tmp_path / "uc"
    meeting.forget(*(set(meeting.HOOKS) - before))


def task(uc: Path, name: str, hook: str | None = None, monitors: list[Any] | None = None) -> Path:
    cfg = {
        "CONFIG": {
            "outputs": {"out": {"format": "parquet", "path": f"data/{name}"}},
            "transform": {"type": "task", "params": {"who": name, "hook": hook}},
            "monitors": monitors if monitors is not None else ["lineage"],
        }
    }
    return write_task(uc, name, cfg, meeting.CODE)


def in_threads(calls: dict[str, Callable[[], RunResult]]) -> dict[str, RunResult | BaseException]:
    """Each call on a daemon thread of its own, all at once; what each returned or raised. A thread still running
    after :data:`DEADLINE` fails the test (a deadlock), never hangs it."""
    got: dict[str, RunResult | BaseException] = {}

    def go(name: str, call: Callable[[], RunResult]) -> None:
        try:
            got[name] = call()
        except BaseException as exc:  # shown by the assertions
            got[name] = exc

    threads = [threading.Thread(target=go, args=item, daemon=True, name=f"run-{item[0]}") for item in calls.items()]
    for t in threads:
        t.start()
    until = time.monotonic() + DEADLINE
    for t in threads:
        t.join(max(0.0, until - time.monotonic()))
    stuck = [t.name for t in threads if t.is_alive()]
    assert not stuck, f"deadlock: {stuck} still running after {DEADLINE}s"
    return got


def succeeded(got: RunResult | BaseException) -> RunResult:
    assert isinstance(got, RunResult), repr(got)
    assert got.status == "success"
    return got


def only_record(uc: Path, name: str) -> RunRecord:
    (record,) = records(uc, name)
    return record


def check_record(uc: Path, name: str, result: RunResult) -> RunRecord:
    """The task's one record is this run's, ended ``success``, its output written."""
    record = only_record(uc, name)
    assert (record.task, record.run_id, record.status) == (name, result.run_id, "success")
    assert record.ended_at is not None and [o.written for o in record.outputs] == [True]
    return record


def test_two_runs_sharing_one_recorder_run_at_the_same_time(uc: Path) -> None:
    both = threading.Barrier(2, timeout=WAIT)  # each transform waits here for the other: they must overlap
    meeting.register("meet", lambda: both.wait() and None)
    folders = {name: task(uc, name, "meet") for name in ("a", "b")}
    recorder = LineageRecorder()
    got = in_threads({n: (lambda f=f: run_task(f, engine="pandas", monitors=[recorder])) for n, f in folders.items()})
    # Before: the runner held a lock per recorder for the whole run, so b waited for a's end, and a's transform
    # waited for b at the barrier: a failed (BrokenBarrierError), then b.
    for name in folders:
        check_record(uc, name, succeeded(got[name]))
    assert recorder.record is not None and recorder.record.status == "success"


def test_a_run_from_a_pool_thread_inside_a_run_shares_its_recorder(uc: Path) -> None:
    recorder = LineageRecorder()
    inner_dir = task(uc, "inner")
    inner: list[RunResult] = []

    def run_inner() -> None:
        pool = ThreadPoolExecutor(1)
        try:  # the outer run waits for the inner one, at most WAIT seconds
            inner.append(pool.submit(run_task, inner_dir, engine="pandas", monitors=[recorder]).result(WAIT))
        finally:
            pool.shutdown(wait=False)  # a stuck inner run must not hold the outer one (nor the test) forever

    meeting.register("inner", run_inner)
    outer_dir = task(uc, "outer", "inner")
    got = in_threads({"outer": lambda: run_task(outer_dir, engine="pandas", monitors=[recorder])})
    # Before: the outer run held the recorder's lock; the inner run, on another thread, waited for it until the
    # outer gave up (TimeoutError): the outer run failed, the inner one ran after it.
    outer = succeeded(got["outer"])
    check_record(uc, "outer", outer)
    (result,) = inner
    check_record(uc, "inner", succeeded(result))
    assert result.run_id != outer.run_id


def test_a_run_inside_a_run_on_the_same_thread_shares_its_recorder(uc: Path) -> None:
    recorder = LineageRecorder()
    inner_dir = task(uc, "inner")
    inner: list[RunResult] = []
    meeting.register("inner", lambda: inner.append(run_task(inner_dir, engine="pandas", monitors=[recorder])))
    outer_dir = task(uc, "outer", "inner")
    got = in_threads({"outer": lambda: run_task(outer_dir, engine="pandas", monitors=[recorder])})
    check_record(uc, "outer", succeeded(got["outer"]))
    check_record(uc, "inner", succeeded(inner[0]))


def test_many_runs_sharing_one_recorder_each_end_their_own_record(uc: Path) -> None:
    recorder = LineageRecorder()
    folders = {f"t{i}": task(uc, f"t{i}") for i in range(6)}
    got = in_threads({n: (lambda f=f: run_task(f, engine="pandas", monitors=[recorder])) for n, f in folders.items()})
    for name in folders:
        check_record(uc, name, succeeded(got[name]))
    assert all(r.status != "running" for r in records(uc))


OPENLINEAGE = {"type": "openlineage", "params": {"transport": {"type": "console"}}}


def openlineage_note(record: RunRecord) -> dict[str, Any]:
    from ubunye.lineage.openlineage import run_uuid

    note = record.extra.get("openlineage")
    assert note is not None, f"no openlineage note in the record of {record.task}"
    assert note["run_id"] == run_uuid(record.run_id) and note["job"] == f"shop/daily/{record.task}"
    return dict(note)


def test_one_openlineage_monitor_shared_by_runs_in_turn_notes_each_in_its_own_record(uc: Path) -> None:
    pytest.importorskip("openlineage.client")
    from ubunye.lineage.openlineage import OpenLineageMonitor

    shared = OpenLineageMonitor(transport={"type": "console"})
    first = run_task(task(uc, "first"), engine="pandas", monitors=[shared])
    second = run_task(task(uc, "second"), engine="pandas", monitors=[shared])
    # Before: the monitor kept the first run's recorder, so the second run's record had no openlineage note.
    for name, result in (("first", first), ("second", second)):
        assert openlineage_note(check_record(uc, name, result))["sent"] == ["START", "COMPLETE"]


@pytest.mark.parametrize("recorder", ["one shared", "one per run"])
def test_one_openlineage_monitor_shared_by_runs_at_once_notes_each_in_its_own_record(uc: Path, recorder: str) -> None:
    pytest.importorskip("openlineage.client")
    from ubunye.lineage.openlineage import OpenLineageMonitor

    both = threading.Barrier(2, timeout=WAIT)
    meeting.register("meet", lambda: both.wait() and None)
    shared = OpenLineageMonitor(transport={"type": "console"})
    given: list[object] = [shared] + ([LineageRecorder()] if recorder == "one shared" else [])
    folders = {name: task(uc, name, "meet") for name in ("a", "b")}
    got = in_threads({n: (lambda f=f: run_task(f, engine="pandas", monitors=given)) for n, f in folders.items()})
    for name in folders:
        record = check_record(uc, name, succeeded(got[name]))
        assert openlineage_note(record)["sent"] == ["START", "COMPLETE"]
    assert sorted(e.eventType.value for e in shared.events) == ["COMPLETE", "COMPLETE", "START", "START"]


def test_the_openlineage_entry_of_config_yaml_in_concurrent_runs(uc: Path) -> None:
    pytest.importorskip("openlineage.client")
    both = threading.Barrier(2, timeout=WAIT)
    meeting.register("meet", lambda: both.wait() and None)
    folders = {name: task(uc, name, "meet", ["lineage", OPENLINEAGE]) for name in ("a", "b")}
    got = in_threads({n: (lambda f=f: run_task(f, engine="pandas")) for n, f in folders.items()})
    for name in folders:
        record = check_record(uc, name, succeeded(got[name]))
        assert openlineage_note(record)["sent"] == ["START", "COMPLETE"]


def test_an_unrecorded_run_leaves_no_openlineage_note_to_the_next_run_of_a_shared_monitor(uc: Path) -> None:
    pytest.importorskip("openlineage.client")
    from ubunye.lineage.openlineage import OpenLineageMonitor

    shared = OpenLineageMonitor(transport={"type": "console"})
    unrecorded = run_task(task(uc, "first", monitors=[]), engine="pandas", monitors=[shared])
    assert unrecorded.status == "success" and records(uc, "first") == []
    second = run_task(task(uc, "second"), engine="pandas", monitors=[shared])
    # Before: the first run's note (kept for a record that never came) was merged into the second's record.
    assert openlineage_note(check_record(uc, "second", second))["sent"] == ["START", "COMPLETE"]
