"""The runner and its monitors (ubunye.monitors): hashing comes from the run's options, never from a monitor, and
the recorder is one monitor among others, seeing exactly what every other monitor sees."""

from __future__ import annotations

import dataclasses
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from tests.lineage.usecase import example_usecase, last, records, write_task
from ubunye.context import RunOptions
from ubunye.exceptions import UbunyeError
from ubunye.lineage import DatasetRecord, LineageRecorder
from ubunye.lineage.openlineage import RUN_FACET, OpenLineageMonitor
from ubunye.lineage.recorder import RUN_RECORDS
from ubunye.lineage.store import load_record
from ubunye.monitors import build_monitors
from ubunye.runner import execute, prepare, run_task

DT = "2026-12-01"


@pytest.fixture
def uc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    usecase_dir = example_usecase(tmp_path)
    run_task(usecase_dir / "shop/daily/orders", dt=DT, lineage=False)
    return usecase_dir


class Keep:
    """A monitor written by a user: keeps every call it gets."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def task_start(self, **kwargs: Any) -> None:
        self.calls.append(("start", kwargs))

    def task_checkpoint(self, **kwargs: Any) -> None:
        self.calls.append(("checkpoint", kwargs))

    def task_end(self, **kwargs: Any) -> None:
        self.calls.append(("end", kwargs))

    def got(self, hook: str) -> list[dict[str, Any]]:
        return [kwargs for name, kwargs in self.calls if name == hook]


def _facts(datasets: list[DatasetRecord]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(d) for d in datasets]


def _hashes(datasets: list[DatasetRecord]) -> list[tuple[Any, ...]]:
    return [(d.row_count, d.data_hash, d.schema_hash, d.hash_method, d.hash_error) for d in datasets]


def test_a_custom_monitor_gets_the_evidence_the_recorder_writes(uc: Path) -> None:
    keep = Keep()
    result = run_task(uc / "shop/daily/revenue", dt=DT, monitors=[keep])
    record = last(uc, "revenue")
    (end,) = keep.got("end")
    assert [d.name for d in end["inputs"] + end["outputs"]] == ["orders", "revenue"]
    assert len(end["expectations"]) == 5 and {"read", "hash", "transform", "write"} <= {t.stage for t in end["timings"]}
    assert (end["status"], end["run_id"], end["error"]) == (record.status, record.run_id, record.error)
    assert end["context"] is result.context
    assert _facts(end["inputs"]) == _facts(record.inputs) and _facts(end["outputs"]) == _facts(record.outputs)
    assert [dataclasses.asdict(e) for e in end["expectations"]] == [dataclasses.asdict(e) for e in record.expectations]
    assert [dataclasses.asdict(t) for t in end["timings"]] == [dataclasses.asdict(t) for t in record.timings]
    assert round(end["duration"], 6) == record.duration_seconds and end["ended_at"] == record.ended_at
    # ...and the same checkpoint, just before the output was committed: its hash, not yet written
    (checkpoint,) = keep.got("checkpoint")
    (out,) = checkpoint["outputs"]
    assert checkpoint["status"] == "running" and out.data_hash == record.outputs[0].data_hash
    assert out.data_hash is not None and record.outputs[0].written is True


def test_hashing_off_in_the_options_records_no_hash_even_with_the_recorder(uc: Path) -> None:
    off = RunOptions.resolve(lineage=True, hash_outputs=False, hash_inputs=False)
    recorder = LineageRecorder()  # by hand: the options decide what is hashed, and the record says so
    result = run_task(uc / "shop/daily/revenue", dt=DT, monitors=[recorder], options=off)
    assert result.status == "success" and result.outputs["revenue"].shape[0] == 4
    (record,) = records(uc, "revenue")
    assert record.hash_inputs is False and recorder.record is not None and recorder.record.hash_inputs is False
    datasets = record.inputs + record.outputs
    assert [d.name for d in datasets] == ["orders", "revenue"]
    assert _hashes(datasets) == [(None, None, None, None, None)] * 2
    assert "hash" not in {t.stage for t in record.timings}
    assert record.outputs[0].written is True


def test_hashing_without_a_record_gives_monitors_the_recorded_hash(uc: Path) -> None:
    run_task(uc / "shop/daily/revenue", dt=DT)
    (recorded,) = records(uc, "revenue")
    keep = Keep()
    hashed = RunOptions(lineage=False, hash_outputs=True, hash_inputs=True)
    result = run_task(uc / "shop/daily/revenue", dt=DT, monitors=[keep], options=hashed)
    assert result.record_path is None and records(uc, "revenue") == [recorded]  # no second record
    (end,) = keep.got("end")
    assert _hashes(end["inputs"] + end["outputs"]) == _hashes(recorded.inputs + recorded.outputs)
    assert all(d.data_hash is not None for d in end["inputs"] + end["outputs"])


def test_monitor_attributes_do_not_change_what_is_hashed(uc: Path) -> None:
    class Asks:  # what a monitor could once say to the runner; now the options alone decide
        wants_hashes = True
        hash_inputs = False

        def task_end(self, outputs: list[DatasetRecord], inputs: list[DatasetRecord]) -> None:
            self.seen = (inputs, outputs)

    asks = Asks()
    run_task(uc / "shop/daily/revenue", dt=DT, lineage=False, monitors=[asks])
    assert _hashes(asks.seen[0] + asks.seen[1]) == [(None, None, None, None, None)] * 2
    run_task(uc / "shop/daily/revenue", dt=DT, monitors=[asks])
    assert all(d.data_hash is not None for d in asks.seen[0] + asks.seen[1])


def test_no_monitors_at_all_still_runs(uc: Path) -> None:
    ctx = prepare(uc / "shop/daily/revenue", dt=DT, engine="pandas")
    result = execute(ctx, [], RunOptions())
    assert (result.status, result.record_path, sorted(result.outputs)) == ("success", None, ["revenue"])
    assert len(list((uc / f"data/revenue/{DT}").glob("*.parquet"))) >= 1
    assert records(uc, "revenue") == []
    assert build_monitors(ctx, RunOptions(lineage=False)) == (RunOptions(False, False, False, None), [])


def test_a_recorder_given_by_hand_is_the_runs_only_recorder(uc: Path) -> None:
    recorder = LineageRecorder()  # config.yaml lists lineage too: still one record, hashed as the options say
    no_inputs = RunOptions.resolve(hash_inputs=False)
    result = run_task(uc / "shop/daily/revenue", dt=DT, monitors=[recorder], options=no_inputs)
    (record,) = records(uc, "revenue")
    assert result.record_path is not None and load_record(result.record_path).run_id == record.run_id
    assert recorder.record is not None and recorder.record.run_id == record.run_id
    assert record.hash_inputs is False and record.inputs[0].data_hash is None
    assert record.outputs[0].data_hash is not None


def test_every_monitor_finds_the_record_path_in_the_options(uc: Path, tmp_path: Path) -> None:
    task = uc / "shop/daily/revenue"
    cfg = (task / "config.yaml").read_text()
    extra = "    - lineage\n    - {type: openlineage, params: {transport: {type: console}}}"
    (task / "config.yaml").write_text(cfg.replace("    - lineage", extra))
    shared = tmp_path / "shared-records"
    ctx = prepare(task, dt=DT, engine="pandas")
    options, monitors = build_monitors(ctx, RunOptions.resolve(records=shared))
    recorder, lineage = monitors
    assert isinstance(recorder, LineageRecorder) and isinstance(lineage, OpenLineageMonitor)
    # Not this run's recorder itself (a monitor shared by runs kept the first run's): the records of runs in progress
    assert lineage.recorder is RUN_RECORDS and options.store is not None and options.store.root == shared
    assert options.record_path(ctx) == shared / "shop/daily/revenue" / f"{ctx.run_id}.json"
    result = execute(ctx, monitors, options)
    assert result.record_path == options.record_path(ctx) and result.record_path.is_file()
    (event,) = [e for e in lineage.events if e.eventType.value == "COMPLETE"]
    assert event.run.facets[RUN_FACET].record == str(options.record_path(ctx))
    record = load_record(result.record_path)  # the monitor found this run's record, through RUN_RECORDS
    assert event.run.facets[RUN_FACET].code_hash == record.code_hash is not None
    assert record.extra["openlineage"]["sent"] == ["START", "COMPLETE"]


def test_a_monitor_failing_at_a_checkpoint_does_not_stop_the_commit(uc: Path, caplog: pytest.LogCaptureFixture) -> None:
    class Flaky:
        name = "flaky"

        def task_checkpoint(self, **_: object) -> None:
            raise RuntimeError("checkpoint bug")

    with caplog.at_level(logging.WARNING, logger="ubunye"):
        result = run_task(uc / "shop/daily/revenue", dt=DT, monitors=[Flaky()])
    assert result.status == "success" and last(uc, "revenue").outputs[0].written is True
    assert "monitor flaky failed in task_checkpoint: RuntimeError: checkpoint bug" in caplog.text


def test_an_essential_monitor_failing_at_a_checkpoint_stops_the_commit_and_says_so(uc: Path) -> None:
    from ubunye.exceptions import TaskError

    class Ledger:  # an essential monitor whose checkpoint cannot be written (a full disk)
        name = "ledger"
        essential = True

        def task_checkpoint(self, **_: object) -> None:
            raise OSError(28, "No space left on device")

    with pytest.raises(TaskError) as err:
        run_task(uc / "shop/daily/revenue", dt=DT, monitors=[Ledger()], lineage=True)
    # Before: "failed in write: [Errno 28] No space left on device", read as the data write's own error
    message = str(err.value)
    assert "failed in write: the output was not committed (its previous data is as it was): monitor ledger" in message
    assert "before the commit: OSError: [Errno 28] No space left on device" in message, message
    record = last(uc, "revenue")
    assert record.status == "failed" and record.outputs[0].written is False
    assert not (uc / "data/revenue" / DT).exists()  # the staged data was never swapped in


def test_options_and_their_keywords_are_not_both_given(uc: Path) -> None:
    task = write_task(uc, "o", {"CONFIG": {"outputs": {"o": {"format": "parquet", "path": "data/o"}}}})
    with pytest.raises(UbunyeError, match="options= or lineage=/records=/storage_options=, not both"):
        run_task(task, options=RunOptions(), lineage=True)
    assert not (uc / "data/o").exists()


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [({"hash_inputs": "no"}, "RunOptions.hash_inputs"), ({"lineage": 1}, "RunOptions.lineage"),
     ({"store": "/srv/records"}, "RunOptions.store")],
)  # fmt: skip
def test_run_options_of_the_wrong_type_are_refused_by_name(kwargs, named):
    with pytest.raises(UbunyeError, match=re.escape(named)):
        RunOptions(**kwargs)


@pytest.mark.parametrize(("args", "kwargs"), [((False,), {}), ((), {"hash_inputs": False}), ((), {"store": "x"})])
def test_the_recorder_refuses_the_switches_that_moved_to_the_run_options(args, kwargs):
    with pytest.raises(UbunyeError, match=re.escape("RunOptions.resolve(")):
        LineageRecorder(*args, **kwargs)
