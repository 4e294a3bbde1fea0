"""``lineage show``, ``trace`` and ``list`` show a record's ``checkpoint_at``: the time of its last checkpoint,
written just before each commit, which orders a run that never ended (killed after its commit) in a local store,
``latest`` too (docs/tasks-and-records.md, "Which run is latest"). They did not: ``show latest`` named a run
started before another that ended, and nothing it printed said why it was the latest."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.lineage import s3server
from tests.lineage.s3server import S3
from ubunye.cli.main import app
from ubunye.lineage import RecordStore, RunRecord

s3_server, s3 = s3server.s3_server, s3server.s3  # the fixtures
runner = CliRunner()

CHECKPOINT = "2026-12-01T02:00:20Z"
WHY = "(no end recorded: the run is ordered by its last checkpoint, latest too)"


def invoke(*args: object):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def record(run_id: str, **fields: object) -> RunRecord:
    return RunRecord(run_id=run_id, usecase="u", package="p", task="t", **fields)  # type: ignore[arg-type]


def _store(root: Path | str) -> None:
    """Three runs: one that ended at 02:00:10, one started after it began and killed after a commit (its last
    checkpoint at 02:00:20, so the latest), and an old one that ended with a checkpoint before its end."""
    store = RecordStore(root) if isinstance(root, Path) else RecordStore(records=root)
    store.write(record("old", status="success", started_at="2026-12-01T01:00:00Z", checkpoint_at="2026-12-01T01:00:05Z",
                       ended_at="2026-12-01T01:00:09Z", duration_seconds=9.0))  # fmt: skip
    store.write(record("ended", status="success", started_at="2026-12-01T02:00:00Z",
                       ended_at="2026-12-01T02:00:10Z", duration_seconds=10.0))  # fmt: skip
    store.write(record("killed", started_at="2026-12-01T02:00:01Z", checkpoint_at=CHECKPOINT))


def _said(stdout: str, name: str) -> str | None:
    """The value printed on the line of ``name`` (``  checkpoint       <value>``), None when there is none."""
    for text in stdout.splitlines():
        words = text.split(None, 1)
        if words and words[0] == name:
            return words[1].strip() if len(words) > 1 else ""
    return None


def test_show_and_trace_say_why_a_run_that_never_ended_is_latest(tmp_path: Path) -> None:
    _store(tmp_path)
    for command in ("show", "trace"):
        shown = invoke("lineage", command, "latest", "-d", tmp_path, "-t", "t").stdout
        assert "killed" in shown.splitlines()[0], shown
        assert _said(shown, "checkpoint") == f"{CHECKPOINT} {WHY}", shown
        assert _said(shown, "ended") == "-", shown


def test_show_prints_the_checkpoint_of_an_ended_run_and_none_without_one(tmp_path: Path) -> None:
    _store(tmp_path)
    old = invoke("lineage", "show", "old", "-d", tmp_path).stdout
    assert _said(old, "checkpoint") == "2026-12-01T01:00:05Z", old  # its end orders it: no note
    ended = invoke("lineage", "show", "ended", "-d", tmp_path).stdout
    assert _said(ended, "checkpoint") is None and _said(ended, "ended") == "2026-12-01T02:00:10Z", ended


def test_json_outputs_carry_checkpoint_at(tmp_path: Path) -> None:
    _store(tmp_path)
    for command in ("show", "trace"):
        data = json.loads(invoke("lineage", command, "latest", "-d", tmp_path, "--json").stdout)
        assert (data["run_id"], data["ended_at"], data["checkpoint_at"]) == ("killed", None, CHECKPOINT)
    rows = json.loads(invoke("lineage", "list", "-d", tmp_path, "--json").stdout)
    got = [(r["run_id"], r["ended_at"], r["checkpoint_at"]) for r in rows]
    assert got == [
        ("killed", None, CHECKPOINT),
        ("ended", "2026-12-01T02:00:10Z", None),
        ("old", "2026-12-01T01:00:09Z", "2026-12-01T01:00:05Z"),
    ]


def test_list_shows_the_checkpoint_of_a_run_that_never_ended(tmp_path: Path) -> None:
    _store(tmp_path)
    table = invoke("lineage", "list", "-d", tmp_path).stdout
    (killed,) = [x for x in table.splitlines() if "killed" in x]
    assert f"- (checkpoint at {CHECKPOINT})" in killed, table
    assert "checkpoint at" not in table.replace(killed, ""), table  # an ended run's duration says its length


def test_a_remote_store_shows_the_checkpoint_without_the_ordering_note(s3: S3) -> None:
    # A remote store orders runs by run id (their start), not by the checkpoint: the note would not be true there.
    url = s3.bucket() + "/records"
    _store(url)
    shown = invoke("lineage", "show", "killed", "--records", url).stdout
    assert _said(shown, "checkpoint") == CHECKPOINT, shown
