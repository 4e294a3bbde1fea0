"""Faults in monitor hooks and in the runner's own finishing steps never leave a record ``running`` nor a run
reported otherwise than it ended: every monitor told the run started is told it ended, and an essential monitor
that fails is named (docs/tasks-and-records.md, "Order of a run")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.lineage import meeting
from tests.lineage.usecase import records, write_task
from ubunye.engines import get_engine
from ubunye.exceptions import RunInterrupted, TaskError
from ubunye.lineage import LineageRecorder, RunRecord
from ubunye.runner import run_task


@pytest.fixture
def uc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    return tmp_path / "uc"


def task(uc: Path, name: str = "t", hook: str | None = None) -> Path:
    cfg = {
        "CONFIG": {
            "outputs": {"out": {"format": "parquet", "path": f"data/{name}"}},
            "transform": {"type": "task", "params": {"who": name, "hook": hook}},
            "monitors": ["lineage"],
        }
    }
    return write_task(uc, name, cfg, meeting.CODE)


def raised(folder: Path, **kwargs: Any) -> BaseException:
    """What the run raised, KeyboardInterrupt and SystemExit included (a bare one would stop pytest itself)."""
    try:
        run_task(folder, engine=kwargs.pop("engine", "pandas"), **kwargs)
    except BaseException as exc:
        return exc
    pytest.fail("the run raised nothing")


def only_record(uc: Path, name: str = "t") -> RunRecord:
    (record,) = records(uc, name)
    return record


class Tell:
    """An essential monitor that keeps the status each task_end was given."""

    essential = True

    def __init__(self, name: str = "tell") -> None:
        self.name = name
        self.started: list[str] = []
        self.ended: list[str] = []

    def task_start(self, run_id: str) -> None:
        self.started.append(run_id)

    def task_end(self, run_id: str, status: str) -> None:
        self.ended.append(f"{run_id} {status}")


class Fails:
    """A monitor (essential unless told) that raises ``exc`` in ``hook``."""

    def __init__(self, hook: str, exc: BaseException, essential: bool = True, name: str = "strict") -> None:
        self.name, self.essential, self.exc = name, essential, exc
        setattr(self, hook, self.raise_it)

    def raise_it(self, **_: object) -> None:
        raise self.exc


class Unprintable(Exception):
    """An exception whose message cannot be read: ``str()`` of it raises."""

    def __str__(self) -> str:
        raise ValueError("no message for you")


# --- task_start ---------------------------------------------------------------------------------------------------


def test_an_essential_monitor_failing_in_task_start_ends_the_records_already_started(uc: Path) -> None:
    tell = Tell()
    err = raised(task(uc), monitors=[tell, Fails("task_start", RuntimeError("no backend"))])
    # Before: the recorder's record stayed `running` and the first essential monitor never heard the run ended.
    record = only_record(uc)
    assert record.status == "failed" and record.ended_at is not None
    assert tell.ended == [f"{record.run_id} failed"]
    assert record.error is not None and record.error.stage == "setup" and record.error.type == "RuntimeError"
    assert [o.written for o in record.outputs] == [False] and not (uc / "data").exists()
    # ...and the error said the monitor "could not write the run record", though it is not the recorder
    assert isinstance(err, TaskError), repr(err)
    assert str(err).startswith("task shop/daily/t did not start: monitor strict failed in task_start: RuntimeError: no")
    assert record.error.message == str(err)
    assert err.result.status == "failed"  # type: ignore[attr-defined]


def test_a_recorder_that_cannot_start_still_says_so(uc: Path) -> None:
    (uc / ".ubunye").mkdir(parents=True)
    (uc / ".ubunye" / "lineage").write_text("a file where the store's folder goes")
    tell = Tell()
    err = raised(task(uc), monitors=[tell])
    assert isinstance(err, TaskError), repr(err)
    assert str(err).startswith("task shop/daily/t did not start: monitor lineage could not write the run record: ")
    assert tell.started == [] and tell.ended == []  # the recorder starts first: the others never heard of the run
    assert not (uc / "data").exists()


# --- task_end -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["before the recorder", "after the recorder"])
def test_an_essential_monitor_failing_in_task_end_is_named_and_the_record_is_final(uc: Path, where: str) -> None:
    strict = Fails("task_end", RuntimeError("cannot tell the scheduler"))
    recorder = LineageRecorder()
    given = [strict, recorder] if where == "before the recorder" else [recorder, strict]
    err = raised(task(uc), monitors=given)
    assert isinstance(err, TaskError), repr(err)
    # Before: "wrote its outputs but its final record could not be written", though the record was written.
    assert "could not be written" not in str(err)
    assert "monitor strict failed in task_end: RuntimeError: cannot tell the scheduler" in str(err)
    record = only_record(uc)
    assert record.status == "success" and [o.written for o in record.outputs] == [True]
    assert err.result.status == "success"  # type: ignore[attr-defined]


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(0)], ids=["ctrl-c", "sys.exit"])
def test_an_essential_monitor_interrupted_in_task_end_is_an_interruption_after_the_record(
    uc: Path, exc: BaseException
) -> None:
    err = raised(task(uc), monitors=[LineageRecorder(), Fails("task_end", exc)])
    # Before: "wrote its outputs but its final record could not be written", a TaskError, though it was written.
    assert isinstance(err, RunInterrupted), repr(err)
    assert "succeeded" in str(err) and "then was interrupted" in str(err)
    assert only_record(uc).status == "success"


def test_a_monitor_raising_an_unprintable_error_in_task_end_still_ends_the_record(uc: Path) -> None:
    err = raised(task(uc), monitors=[Fails("task_end", Unprintable()), LineageRecorder()])
    assert isinstance(err, TaskError), repr(err)
    assert "monitor strict failed in task_end: Unprintable" in str(err)
    # Before: str() of the error raised inside the runner's end: the recorder was never told, its record running.
    assert only_record(uc).status == "success"


def test_a_non_essential_monitor_raising_an_unprintable_error_does_not_fail_the_run(uc: Path) -> None:
    # Before: logging the error formatted its message; a handler that raises on a bad record (pytest's does)
    # turned the warning into the run's error: "did not start: monitor flaky-task_start ...".
    flaky = [Fails(h, Unprintable(), essential=False, name=f"flaky-{h}") for h in ("task_start", "task_end")]
    result = run_task(task(uc), engine="pandas", monitors=flaky)
    assert result.status == "success" and only_record(uc).status == "success"


# --- the run's own steps ------------------------------------------------------------------------------------------


def test_a_task_error_whose_message_cannot_be_read_leaves_a_failed_record(uc: Path) -> None:
    def fail() -> None:
        raise Unprintable

    meeting.register("unprintable", fail)
    try:
        err = raised(task(uc, hook="unprintable"))
    finally:
        meeting.forget("unprintable")
    # Before: str() of the error raised while the record was being ended: ValueError, and the record `running`.
    assert isinstance(err, TaskError), repr(err)
    assert str(err).startswith("task shop/daily/t failed in transform: Unprintable")
    record = only_record(uc)
    assert record.status == "failed" and record.error is not None and record.error.type == "Unprintable"


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(3)], ids=["ctrl-c", "sys.exit"])
def test_an_interruption_while_releasing_the_frames_still_ends_the_record(uc: Path, exc: BaseException) -> None:
    engine = get_engine("pandas")

    def release(frame: object) -> None:
        raise exc

    engine.release = release  # type: ignore[method-assign]
    err = raised(task(uc), engine=engine)
    # Before: the interruption escaped before any monitor was told the run ended: the record stayed `running`.
    assert isinstance(err, RunInterrupted), repr(err)
    assert "succeeded" in str(err) and "then was interrupted" in str(err)
    record = only_record(uc)
    assert record.status == "success" and [o.written for o in record.outputs] == [True]
    pd.testing.assert_frame_equal(pd.read_parquet(uc / "data" / "t"), pd.DataFrame({"who": ["t"]}), check_dtype=False)


def test_a_non_essential_monitor_whose_hook_cannot_be_looked_up_does_not_fail_the_run(uc: Path) -> None:
    class Broken:
        """Its task_end is a property that fails once the run started (its own state half set up)."""

        name = "broken"
        running = False

        def task_start(self) -> None:
            self.running = True

        @property
        def task_end(self) -> Callable[..., None]:
            if self.running:
                raise RuntimeError("half-configured")
            return lambda: None

    result = run_task(task(uc), engine="pandas", monitors=[Broken()])
    # Before: the lookup raised outside the monitor's guard, so the runner took it for an essential monitor's
    # failure: "wrote its outputs but its final record could not be written: monitor broken: ...".
    assert result.status == "success" and only_record(uc).status == "success"


def test_a_ctrl_c_while_the_running_record_is_written_ends_the_record(
    uc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ubunye.lineage.store import RecordStore

    write, calls = RecordStore.write, []

    def interrupted_once(self: RecordStore, record: RunRecord) -> object:
        calls.append(record.status)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return write(self, record)

    monkeypatch.setattr(RecordStore, "write", interrupted_once)
    tell = Tell()
    err = raised(task(uc), monitors=[tell])
    assert isinstance(err, RunInterrupted), repr(err)
    record = only_record(uc)
    assert record.status == "failed" and record.error is not None and record.error.type == "KeyboardInterrupt"
    assert calls[-1] == "failed" and not (uc / "data").exists()


def test_a_recorder_that_could_not_write_the_running_record_once_still_records_the_failure(
    uc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ubunye.lineage.store import RecordStore

    write, calls = RecordStore.write, []

    def fails_once(self: RecordStore, record: RunRecord) -> object:
        calls.append(record.status)
        if len(calls) == 1:
            raise OSError("the store blinked")
        return write(self, record)

    monkeypatch.setattr(RecordStore, "write", fails_once)
    err = raised(task(uc))
    assert isinstance(err, TaskError), repr(err)
    assert str(err) == (
        "task shop/daily/t did not start: monitor lineage could not write the run record: OSError: the store blinked"
    )
    # The recorder heard of the run, so it is told the run ended: its record says the run did not start.
    record = only_record(uc)
    assert record.status == "failed" and record.error is not None and record.error.message == str(err)
    assert record.error.type == "OSError" and not (uc / "data").exists()
