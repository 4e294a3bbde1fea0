"""Interrupted runs are honest, and a run whose record cannot be written does not pass silently.

SIGTERM, SIGINT, KeyboardInterrupt and sys.exit in a transform end the run with a ``failed`` record whose error
says it was interrupted, and a non-zero exit; yesterday's output is untouched. A record store that cannot be
written at the start means the run does not start; one that cannot be written at the end fails the run.
Signals are sent to real child processes running the real CLI.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.lineage.usecase import write_task
from ubunye.exceptions import RunInterrupted, TaskError
from ubunye.lineage import RecordStore
from ubunye.runner import run_task

CLI = [sys.executable, "-c", "from ubunye.cli.main import main; main()"]

SLEEPY = """
import time
from pathlib import Path
import pandas as pd
from ubunye import Task

class Sleepy(Task):
    def transform(self, sources):
        Path(self.params["marker"]).write_text("started")
        try:
            time.sleep(60)
        except Exception:  # a task that swallows errors must still not swallow the interruption
            pass
        return {"out": pd.DataFrame({"a": [9]})}
"""

EXITS = """
import sys
from pathlib import Path
import pandas as pd
from ubunye import Task

class Exits(Task):
    def transform(self, sources):
        Path(self.params["marker"]).write_text("started")
        how = self.params["how"]
        if how == "keyboard":
            raise KeyboardInterrupt
        sys.exit(int(how))
"""

GOOD = """
from pathlib import Path
import pandas as pd
from ubunye import Task

class Good(Task):
    def transform(self, sources):
        Path(self.params["marker"]).write_text("ran")
        return {"out": pd.DataFrame({"a": [int(self.params.get("value", 1))]})}
"""


def task(uc: Path, name: str, code: str, **params: str) -> Path:
    cfg = {
        "CONFIG": {
            "outputs": {"out": {"format": "parquet", "path": "data/out", "mode": "overwrite"}},
            "transform": {"type": "task", "params": {"marker": str(uc / f"{name}.marker"), **params}},
            "monitors": ["lineage"],
        }
    }
    return write_task(uc, name, cfg, code)


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*"))} if folder.exists() else {}


@pytest.fixture
def uc(tmp_path: Path) -> Path:
    """A usecase whose output data/out already holds yesterday's good data."""
    usecase_dir = tmp_path / "uc"
    run_task(task(usecase_dir, "good", GOOD, value="1"), engine="pandas", lineage=False)
    assert files(usecase_dir / "data" / "out")
    return usecase_dir


def only_record(uc: Path, name: str):
    found = RecordStore(uc).records("shop", "daily", name)
    assert len(found) == 1, found
    return found[0]


def wait_for(path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_the_transform_leaves_a_failed_record(uc: Path, sig: int, code: int) -> None:
    task(uc, "sleepy", SLEEPY)
    before = files(uc / "data" / "out")
    args = ["run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "sleepy", "--engine", "pandas"]
    child = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(uc / "sleepy.marker")
    child.send_signal(sig)
    out, err = child.communicate(timeout=60)
    assert child.returncode == code, (out, err)
    name = signal.Signals(sig).name
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: task shop/daily/sleepy failed in transform: "), err
    assert f"interrupted by {name}" in lines[0]
    record = only_record(uc, "sleepy")
    assert record.status == "failed" and record.error is not None
    assert record.error.stage == "transform" and f"interrupted by {name}" in record.error.message
    assert [o.written for o in record.outputs] == [False]
    assert files(uc / "data" / "out") == before


@pytest.mark.parametrize(
    ("how", "says"),
    [("keyboard", "interrupted by SIGINT"), ("0", "sys.exit(0)"), ("3", "sys.exit(3)")],
)
def test_keyboard_interrupt_and_sys_exit_are_failures(uc: Path, how: str, says: str) -> None:
    before = files(uc / "data" / "out")
    with pytest.raises(RunInterrupted) as err:
        run_task(task(uc, "exits", EXITS, how=how), engine="pandas")
    assert says in str(err.value) and "failed in transform" in str(err.value)
    assert err.value.exit_code == (130 if how == "keyboard" else 2)
    record = only_record(uc, "exits")
    assert record.status == "failed" and says in record.error.message
    assert record.error.type == ("KeyboardInterrupt" if how == "keyboard" else "SystemExit")
    assert files(uc / "data" / "out") == before


def test_sys_exit_zero_through_the_cli_is_not_a_success(uc: Path) -> None:
    task(uc, "exits", EXITS, how="0")
    args = ["run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "exits", "--engine", "pandas"]
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done
    assert done.stderr.strip().startswith("error: task shop/daily/exits failed in transform: interrupted: the task")
    assert only_record(uc, "exits").status == "failed"


def test_an_unwritable_record_store_means_the_run_does_not_start(uc: Path) -> None:
    # As root, permissions do not stop a write: a file where the store's folder must be does.
    (uc / ".ubunye").mkdir(exist_ok=True)
    (uc / ".ubunye" / "lineage").write_text("not a folder")
    before = files(uc / "data" / "out")
    with pytest.raises(TaskError) as err:
        run_task(task(uc, "good2", GOOD, value="2"), engine="pandas", lineage=True)
    message = str(err.value)
    assert message.startswith("task shop/daily/good2 did not start: monitor lineage could not write the run record")
    assert not (uc / "good2.marker").exists()  # the transform never ran
    assert files(uc / "data" / "out") == before


def test_the_cli_exits_non_zero_when_the_store_is_unwritable(uc: Path) -> None:
    (uc / ".ubunye").mkdir(exist_ok=True)
    (uc / ".ubunye" / "lineage").write_text("not a folder")
    task(uc, "good2", GOOD, value="2")
    args = ["run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "good2", "--engine", "pandas"]
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "did not start" in done.stderr, done
    assert len(done.stderr.strip().splitlines()) == 1


BREAKS_STORE = """
import shutil
from pathlib import Path
import pandas as pd
from ubunye import Task

class BreaksStore(Task):
    def transform(self, sources):
        # The running record exists now; put a file where the store's folder is, so the final write fails.
        store = Path(self.params["store"])
        shutil.rmtree(store)
        store.write_text("gone")
        return {"out": pd.DataFrame({"a": [5]})}
"""


def test_a_final_record_that_cannot_be_written_fails_the_run(uc: Path) -> None:
    task_dir = task(uc, "breaks", BREAKS_STORE, store=str(uc / ".ubunye" / "lineage"))
    with pytest.raises(TaskError) as err:
        run_task(task_dir, engine="pandas", lineage=True)
    assert "final record could not be written" in str(err.value)
    assert type(err.value) is TaskError


def test_a_checkpoint_record_carries_the_hash_before_the_output_is_swapped_in(uc: Path) -> None:
    """Read the record from inside the commit: it must already name the new output's hash."""
    from ubunye.engines import get_engine

    seen: list[dict] = []
    engine = get_engine("pandas")
    write = engine.write

    def spying_write(frame, io, base_dir, *, before_commit=None):  # a real write; we only look at the disk
        def look() -> None:
            assert before_commit is not None
            before_commit()
            (path,) = (uc / ".ubunye" / "lineage" / "shop" / "daily" / "good3").glob("*.json")
            seen.append(json.loads(path.read_text()))

        write(frame, io, base_dir, before_commit=look)

    engine.write = spying_write  # type: ignore[method-assign]
    result = run_task(task(uc, "good3", GOOD, value="3"), engine=engine, lineage=True)
    (checkpoint,) = seen
    final = only_record(uc, "good3")
    assert checkpoint["status"] == "running" and result.status == "success" == final.status
    assert checkpoint["outputs"][0]["data_hash"] == final.outputs[0].data_hash is not None
