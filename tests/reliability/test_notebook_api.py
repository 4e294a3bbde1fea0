"""The notebook API as a notebook uses it: one long-lived process, cells re-run, Ctrl-C from a hook, threads.

In a notebook the process outlives the run, so a record left ``running`` is never shown as interrupted: every
run must end its record itself. Everything runs on the pandas engine.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.lineage.usecase import last, records, write_task
from ubunye import notebook
from ubunye.exceptions import ConfigError, RunInterrupted
from ubunye.hashing import hash_frame
from ubunye.lineage.recorder import LineageRecorder

CODE = """
import time
import pandas as pd
from ubunye import Task

class T(Task):
    def transform(self, sources):
        time.sleep(float(self.params.get("sleep", 0)))
        return {"out": pd.DataFrame({"who": [self.params["who"]]})}
"""


def task(uc: Path, name: str, **params: Any) -> Path:
    cfg = {
        "CONFIG": {
            "outputs": {"out": {"format": "parquet", "path": f"data/{name}"}},
            "transform": {"type": "task", "params": {"who": name, **params}},
            "monitors": ["lineage"],
        }
    }
    return write_task(uc, name, cfg, CODE)


def raised(folder: Path, **kwargs: Any) -> BaseException:
    """What ``notebook.run`` raised, KeyboardInterrupt and SystemExit included (caught: a bare one escaping would
    stop pytest itself rather than fail the test)."""
    try:
        notebook.run(folder, engine="pandas", **kwargs)
    except BaseException as exc:
        return exc
    pytest.fail("the run raised nothing")


class InterruptsIn:
    """A monitor whose hook raises what a Ctrl-C (or a sys.exit) in it would."""

    def __init__(self, hook: str, exc: BaseException) -> None:
        self.exc = exc
        setattr(self, hook, self.raise_it)

    def raise_it(self, **_: object) -> None:
        raise self.exc


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(0)], ids=["ctrl-c", "sys.exit"])
def test_an_interruption_in_a_monitors_task_start_ends_the_record(tmp_path: Path, exc: BaseException) -> None:
    uc = tmp_path / "uc"
    err = raised(task(uc, "t"), monitors=[InterruptsIn("task_start", exc)])
    assert isinstance(err, RunInterrupted), repr(err)
    assert "failed in setup" in str(err)
    # Before: a bare KeyboardInterrupt, and the record stayed `running` for as long as the notebook lived.
    (record,) = records(uc, "t")
    assert record.status == "failed" and record.error is not None and record.error.stage == "setup"
    assert record.error.type == type(exc).__name__
    assert [o.written for o in record.outputs] == [False]
    assert not (uc / "data" / "t").exists()


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(0)], ids=["ctrl-c", "sys.exit"])
def test_an_interruption_in_a_monitors_task_end_still_ends_the_record(tmp_path: Path, exc: BaseException) -> None:
    uc = tmp_path / "uc"
    err = raised(task(uc, "t"), monitors=[InterruptsIn("task_end", exc)])
    assert isinstance(err, RunInterrupted), repr(err)
    assert "succeeded" in str(err) and "then was interrupted" in str(err)
    assert err.result.status == "success"  # type: ignore[attr-defined]
    # Before: the data was committed but the record stayed `running` (its checkpoint: written false).
    (record,) = records(uc, "t")
    assert record.status == "success" and record.ended_at is not None
    (out,) = record.outputs
    assert out.written is True
    assert out.data_hash == hash_frame(pd.read_parquet(uc / "data" / "t")).data_hash


def test_a_ctrl_c_in_a_checkpoint_leaves_the_old_data_and_a_failed_record(tmp_path: Path) -> None:
    uc = tmp_path / "uc"
    folder = task(uc, "t")
    notebook.run(folder, engine="pandas")
    before = pd.read_parquet(uc / "data" / "t")
    err = raised(folder, monitors=[InterruptsIn("task_checkpoint", KeyboardInterrupt())])
    assert isinstance(err, RunInterrupted), repr(err)
    record = last(uc, "t")
    assert record.status == "failed" and record.error is not None and record.error.stage == "write"
    assert [o.written for o in record.outputs] == [False]
    pd.testing.assert_frame_equal(pd.read_parquet(uc / "data" / "t"), before)


def test_one_recorder_given_to_runs_in_several_threads_ends_every_record(tmp_path: Path) -> None:
    uc = tmp_path / "uc"
    folders = [task(uc, f"t{i}", sleep=0.03 * (i % 3)) for i in range(8)]
    recorder = LineageRecorder()
    results: dict[str, Any] = {}

    def run(folder: Path) -> None:
        try:
            results[folder.name] = notebook.run(folder, engine="pandas", monitors=[recorder])
        except Exception as exc:  # the assertion below shows it
            results[folder.name] = exc

    threads = [threading.Thread(target=run, args=(f,)) for f in folders]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for folder in folders:
        result = results[folder.name]
        assert not isinstance(result, Exception), result
        # Before: some runs that succeeded left their record `running` (the recorder held another run's record).
        (record,) = records(uc, folder.name)
        assert (record.task, record.run_id, record.status) == (folder.name, result.run_id, "success")
        assert record.outputs[0].written is True
    assert recorder.record is not None and recorder.record.status == "success"


def test_the_same_task_then_another_in_one_process(tmp_path: Path) -> None:
    uc = tmp_path / "uc"
    first, second = task(uc, "first"), task(uc, "second")
    runs = [notebook.run(first, engine="pandas"), notebook.run(first, engine="pandas")]
    runs.append(notebook.run(second, engine="pandas"))
    assert [r.status for r in runs] == ["success"] * 3
    assert len({r.run_id for r in runs}) == 3
    assert [len(records(uc, "first")), len(records(uc, "second"))] == [2, 1]
    assert runs[2].outputs["out"]["who"].tolist() == ["second"]


def test_a_task_folder_under_home_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    task(tmp_path / "uc", "t")
    result = notebook.run("~/uc/shop/daily/t", engine="pandas")
    # Before: "<cwd>/~/uc/shop/daily/t: no such task folder".
    assert result.status == "success" and result.context is not None
    assert result.context.task_dir == (tmp_path / "uc/shop/daily/t").resolve()


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"task_dir": None}, "task_dir: expected a path (str or os.PathLike) to a task folder, got NoneType None"),
        ({"task_dir": 7}, "task_dir: expected a path"),
        ({"task_dir": b"/tmp/x"}, "task_dir: expected a path"),
        ({"engine": 1}, "engine: expected 'pandas', 'spark', 'polars' or an engine object, got int 1"),
        ({"monitors": "lineage"}, "monitors: expected a list of monitor objects, got str 'lineage'"),
        ({"monitors": [None]}, "monitors[0]: NoneType None is not a monitor"),
        ({"monitors": LineageRecorder()}, "(one monitor: give [monitor])"),
        ({"spark": "spark"}, "spark: expected a SparkSession, got str 'spark'"),
        ({"records": 5}, "records: expected a folder or URL (str or os.PathLike), got int 5"),
        ({"records": ["/tmp/r"]}, "records: expected a folder or URL"),
        ({"storage_options": "profile=ops"}, "storage_options: expected a mapping"),
    ],
)
def test_arguments_of_the_wrong_type_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, Any], says: str
) -> None:
    uc = tmp_path / "uc"
    folder = task(uc, "t")
    monkeypatch.chdir(tmp_path)
    kwargs = {"task_dir": folder, "engine": "pandas", **kwargs}
    # Before: TypeErrors from pathlib or iteration; engine=1 said the run record could not be written; spark="x"
    # said the output's storage had no atomic rename; records=5 stored the records in ./5; monitors="lineage"
    # ran with seven monitors that did nothing.
    with pytest.raises(ConfigError) as err:
        notebook.run(**kwargs)
    assert says in str(err.value)
    assert not (uc / "data" / "t").exists() and not records(uc, "t")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["uc"]


def test_run_task_and_run_pipeline_name_wrong_options_and_usecase_folders(tmp_path: Path) -> None:
    from ubunye import run_pipeline, run_task

    uc = tmp_path / "uc"
    folder = task(uc, "t")
    # Before: AttributeError: 'dict' object has no attribute 'settle'; TypeError from os.fspath for the int
    with pytest.raises(ConfigError, match=r"options: expected a RunOptions .* got dict \{'lineage': True\}"):
        run_task(folder, engine="pandas", options={"lineage": True})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"options: expected a RunOptions .* got str 'lineage'"):
        run_pipeline(uc, "shop", "daily", ["t"], engine="pandas", options="lineage")
    for bad in (5, None, "", b"/tmp"):
        with pytest.raises(ConfigError, match=r"usecase folder: expected a path \(str or os.PathLike\), got"):
            run_pipeline(bad, "shop", "daily", ["t"], engine="pandas")  # type: ignore[arg-type]
    assert not (uc / "data" / "t").exists() and not records(uc, "t")


def test_monitors_from_a_generator_are_all_called(tmp_path: Path) -> None:
    seen: list[str] = []

    class Seen:
        def task_end(self, status: str) -> None:
            seen.append(status)

    notebook.run(task(tmp_path / "uc", "t"), engine="pandas", monitors=(m for m in [Seen()]))  # type: ignore[arg-type]
    # Before: build_monitors looked through the generator once for a recorder, leaving no monitor to call.
    assert seen == ["success"]


def test_monitors_none_is_no_monitors_beside_the_configured_ones(tmp_path: Path) -> None:
    uc = tmp_path / "uc"
    result = notebook.run(task(uc, "t"), engine="pandas", monitors=None)  # type: ignore[arg-type]
    assert result.status == "success" and last(uc, "t").status == "success"


def test_a_pipeline_calls_monitors_from_a_generator_on_every_task(tmp_path: Path) -> None:
    from ubunye.runner import run_pipeline

    seen: list[str] = []

    class Seen:
        def task_end(self, context: Any, status: str) -> None:
            seen.append(f"{context.task}:{status}")

    uc = tmp_path / "uc"
    task(uc, "a"), task(uc, "b")
    # Before: the generator was made a list for the first task and was used up for the second (no monitors).
    run_pipeline(uc, "shop", "daily", ["a", "b"], engine="pandas", monitors=(m for m in [Seen()]))
    assert seen == ["a:success", "b:success"]


def test_a_pipeline_takes_a_usecase_folder_under_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ubunye.runner import run_pipeline

    monkeypatch.setenv("HOME", str(tmp_path))
    task(tmp_path / "uc", "t")
    # Before: "~/uc/shop/daily/t: no such task folder" (run_task expanded ~, run_pipeline did not)
    (result,) = run_pipeline("~/uc", "shop", "daily", ["t"], engine="pandas")
    assert result.status == "success"
