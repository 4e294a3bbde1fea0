"""`latest` after a run killed past its commit: the run whose data is on disk, whichever started first.

Run A starts first and waits in its transform; run B starts after it, writes the same output and ends normally;
then A commits (over B's rows) and is SIGKILLed before its final record. The disk holds A's rows, so A is
`latest`. A killed run has no ``ended_at``: it was ordered by ``started_at``, before B, and `latest` named B, whose
rows are gone. Its checkpoint record, written under the output's lock just before the commit, now carries
``checkpoint_at``, and a run without ``ended_at`` is ordered by it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.lineage.usecase import write_task
from ubunye.exceptions import RecordError
from ubunye.lineage import RecordStore, RunRecord
from ubunye.lineage.liveness import INTERRUPTED, run_state

CLI = [sys.executable, "-c", "from ubunye.cli.main import main; main()"]

# Each run writes its dt into every row. With UBUNYE_TEST_GO set, the transform first says it is waiting, then
# waits for that file: the test decides when the run goes on to its commit.
CODE = """
import os, time
from pathlib import Path
import pandas as pd
from ubunye import Task

class Gen(Task):
    def transform(self, sources):
        go = os.environ.get("UBUNYE_TEST_GO")
        if go:
            Path(go + ".waiting").write_text("")
            deadline = time.monotonic() + 240
            while not Path(go).exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        tag = str(self.params["tag"])
        frame = pd.DataFrame({"tag": [tag] * 10, "i": range(10)})
        return {name: frame for name in self.params["outputs"]}
"""

# Listed after lineage, and told the run ended before the recorder is (recorders end last): every output is
# committed, the final record not yet written.
KILLER = """
import os, signal

class KillAtEnd:
    def task_end(self, **kw):
        if os.environ.get("UBUNYE_TEST_KILL_AT_END"):
            os.kill(os.getpid(), signal.SIGKILL)
"""


def project(uc: Path, outputs: list[str]) -> None:
    config = {
        "CONFIG": {
            "outputs": {name: {"format": "parquet", "path": f"data/{name}", "mode": "overwrite"} for name in outputs},
            "transform": {"type": "task", "params": {"tag": "{{ dt | default('x') }}", "outputs": outputs}},
            "monitors": ["lineage", "killer:KillAtEnd"],
        }
    }
    write_task(uc, "gen", config, CODE)
    (uc / "killer.py").write_text(KILLER)


def command(uc: Path, dt: str) -> list[str]:
    return [*CLI, "run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "gen", "-dt", dt, "--engine", "pandas"]


def wait_for(path: Path, child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 240
    while not path.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def killed_after_commit_over_a_later_run(uc: Path, outputs: list[str]) -> None:
    """A starts, B runs start to end, A commits and is killed before its final record."""
    project(uc, outputs)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(uc), *sys.path])}
    go = uc / "go"
    a_env = {**env, "UBUNYE_TEST_GO": str(go), "UBUNYE_TEST_KILL_AT_END": "1"}
    a = subprocess.Popen(command(uc, "A"), env=a_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(Path(str(go) + ".waiting"), a)  # A has started (its running record is written) and waits
        b = subprocess.run(command(uc, "B"), env=env, capture_output=True, timeout=300)
        assert b.returncode == 0, b.stderr
        go.write_text("")
        a.communicate(timeout=300)
    finally:
        if a.poll() is None:
            a.kill()
            a.wait()
    assert a.returncode == -9


def by_tag(uc: Path) -> dict[str, RunRecord]:
    return {r.template_vars["dt"] or "": r for r in RecordStore(uc).records("shop", "daily", "gen")}


def test_latest_is_the_run_whose_data_is_on_disk_when_the_earlier_started_run_is_killed_after_commit(
    tmp_path: Path,
) -> None:
    uc = tmp_path / "uc"
    killed_after_commit_over_a_later_run(uc, ["out"])
    assert set(pd.read_parquet(uc / "data" / "out")["tag"]) == {"A"}  # A committed last: its rows are there
    runs = by_tag(uc)
    a, b = runs["A"], runs["B"]
    assert (a.status, a.ended_at, run_state(a)) == ("running", None, INTERRUPTED)
    assert a.started_at is not None and b.ended_at is not None and a.started_at < b.ended_at  # A started first
    assert a.checkpoint_at is not None and a.checkpoint_at > b.ended_at  # ...and committed after B ended
    store = RecordStore(uc)
    assert store.resolve("latest", "shop", "daily", "gen").record.run_id == a.run_id  # type: ignore[union-attr]
    assert store.resolve("latest~1", "shop", "daily", "gen").record.run_id == b.run_id  # type: ignore[union-attr]
    assert [r.run_id for r in store.records("shop", "daily", "gen")] == [b.run_id, a.run_id]

    env = {**os.environ, "COLUMNS": "200"}
    where = ["-d", str(uc), "-u", "shop", "-p", "daily", "-t", "gen"]
    shown = subprocess.run([*CLI, "lineage", "show", "latest", *where, "--json"], env=env, capture_output=True)
    assert json.loads(shown.stdout)["run_id"] == a.run_id, shown.stderr
    listed = subprocess.run([*CLI, "lineage", "list", *where, "--json"], env=env, capture_output=True)
    assert [row["run_id"] for row in json.loads(listed.stdout)] == [a.run_id, b.run_id]
    compared = subprocess.run(
        [*CLI, "lineage", "compare", "latest~1", "latest", *where, "--json"], env=env, capture_output=True
    )
    result = json.loads(compared.stdout)
    assert (result["run_a"], result["run_b"]) == (b.run_id, a.run_id), compared.stdout


def test_with_several_outputs_the_record_carries_the_last_checkpoint(tmp_path: Path) -> None:
    # The checkpoint before each commit rewrites the record: the one on disk has the time of the last, taken under
    # that output's lock, after every earlier commit of the run.
    uc = tmp_path / "uc"
    killed_after_commit_over_a_later_run(uc, ["one", "two"])
    for name in ("one", "two"):
        assert set(pd.read_parquet(uc / "data" / name)["tag"]) == {"A"}
    a, b = by_tag(uc)["A"], by_tag(uc)["B"]
    assert [d.written for d in a.outputs] == [True, None]  # killed after the second commit, before its mark
    assert b.checkpoint_at is not None and b.ended_at is not None and b.checkpoint_at <= b.ended_at
    assert a.checkpoint_at is not None and b.ended_at < a.checkpoint_at
    store = RecordStore(uc)
    assert store.resolve("latest", "shop", "daily", "gen").record.run_id == a.run_id  # type: ignore[union-attr]


def record(run_id: str, **times: str) -> RunRecord:
    return RunRecord(run_id=run_id, usecase="u", package="p", task="t", **times)  # type: ignore[arg-type]


def test_order_without_ended_at_takes_the_checkpoint_then_the_start(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.write(record("old", started_at="2026-12-01T02:00:00Z", ended_at="2026-12-01T02:00:10Z"))
    # killed after a commit at 02:00:20, though started before "old" ended
    store.write(record("killed", started_at="2026-12-01T02:00:01Z", checkpoint_at="2026-12-01T02:00:20Z"))
    # killed before any checkpoint (an old record has none either): its start
    store.write(record("early", started_at="2026-12-01T02:00:05Z"))
    assert [r.run_id for r in store.records("u", "p", "t")] == ["early", "old", "killed"]
    # an ended run is ordered by its end, whatever its checkpoint says
    store.write(record("ended", started_at="2026-12-01T02:00:00Z", checkpoint_at="2026-12-01T02:00:30Z",
                       ended_at="2026-12-01T02:00:15Z"))  # fmt: skip
    assert [r.run_id for r in store.records("u", "p", "t")] == ["early", "old", "ended", "killed"]


def test_checkpoint_at_is_optional_and_checked(tmp_path: Path) -> None:
    base = record("r", started_at="2026-12-01T02:00:00Z").to_dict()
    assert base["checkpoint_at"] is None
    del base["checkpoint_at"]  # a record written before the field loads as before
    assert RunRecord.from_dict(base).checkpoint_at is None
    folder = tmp_path / ".ubunye" / "lineage" / "u" / "p" / "t"
    folder.mkdir(parents=True)
    (folder / "r.json").write_text(json.dumps({**base, "checkpoint_at": "yesterday"}))
    with pytest.raises(RecordError, match=r"r\.json: checkpoint_at: expected an ISO 8601 UTC time"):
        RecordStore(tmp_path).resolve("latest", "u", "p", "t")
