"""How many record files the readers read and check, and that reading fewer never changes an answer.

``compare latest~1 latest`` resolved each ref with a store of its own, reading every record of the task twice;
``latest`` checked every record field by field to answer about one. Now one listing serves both refs, each file
is read at most once, and only the records that can change the answer are checked in full: the answer is the
one :func:`ubunye.lineage.store._nth_newest` gives with every record loaded (asserted below on stores holding
unreadable records, copied stores and ties).
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ubunye.lineage.record as record_module
import ubunye.lineage.store as store_module
from ubunye.cli.main import app
from ubunye.exceptions import RecordError
from ubunye.lineage import DatasetRecord, RecordStore, RunRecord
from ubunye.lineage.store import _nth_newest

T0 = dt.datetime(2026, 1, 1, 2, 0, tzinfo=dt.timezone.utc)
WHERE = ("u", "p", "t")
HASH = "sha256:" + "0" * 64


def at(seconds: float) -> str:
    return (T0 + dt.timedelta(seconds=seconds)).isoformat(timespec="microseconds").replace("+00:00", "Z")


def touch(path: Path, seconds: float) -> None:
    """The file's time: when a run writing its record at ``seconds`` leaves it."""
    stamp = (T0 + dt.timedelta(seconds=seconds)).timestamp()
    os.utime(path, (stamp, stamp))


def nightly(root: Path, n: int) -> RecordStore:
    """``n`` runs of u/p/t, an hour apart, each ten seconds long, each file written when its run ended."""
    store = RecordStore(root)
    for i in range(n):
        output = DatasetRecord("o", row_count=4, data_hash=HASH, hash_method="rows-v1")
        record = RunRecord(run_id=f"r{i:04d}", usecase="u", package="p", task="t", status="success",
                           started_at=at(3600 * i), ended_at=at(3600 * i + 10), duration_seconds=10.0,
                           outputs=[output])  # fmt: skip
        touch(Path(str(store.write(record))), 3600 * i + 10)
    return store


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[collections.Counter[str]]:
    """Counts of record files read (``reads``, per file) and records checked field by field (``checked``)."""
    counts: collections.Counter[str] = collections.Counter()
    read, from_dict = store_module._read, record_module.RunRecord.from_dict

    def reading(path: Path) -> str:
        counts[str(path)] += 1
        counts["reads"] += 1
        return read(path)

    def checking(data: object, path: str | None = None) -> RunRecord:
        counts["checked"] += 1
        return from_dict(data, path)

    monkeypatch.setattr(store_module, "_read", reading)
    monkeypatch.setattr(record_module.RunRecord, "from_dict", staticmethod(checking))
    yield counts


def test_compare_reads_each_record_once_and_checks_only_the_two_compared(tmp_path: Path, counted) -> None:
    nightly(tmp_path / "uc", 200)
    counted.clear()  # the writes check what they write
    result = CliRunner().invoke(
        app, ["lineage", "compare", "latest~1", "latest", "-d", str(tmp_path / "uc"), "-u", "u", "-p", "p", "-t", "t"]
    )
    assert result.exit_code == 0, result.output
    assert "same data" in result.output
    assert counted["reads"] == 200  # was 400: each ref listed and read the whole task
    assert max(v for k, v in counted.items() if k not in ("reads", "checked")) == 1
    assert counted["checked"] == 2  # was 400


def test_show_latest_checks_one_record(tmp_path: Path, counted) -> None:
    nightly(tmp_path / "uc", 200)
    counted.clear()
    result = CliRunner().invoke(
        app, ["lineage", "show", "latest", "-d", str(tmp_path / "uc"), "-u", "u", "-p", "p", "-t", "t", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["run_id"] == "r0199"
    assert (counted["reads"], counted["checked"]) == (200, 1)


def test_a_copied_store_is_checked_whole_and_answers_the_same(tmp_path: Path, counted) -> None:
    # Copied without its file times, every file looks written after the newest run ended: any of them might be
    # an unreadable newest run, so all are checked, as before.
    store = nightly(tmp_path / "uc", 50)
    for path in Path(str(store.root)).rglob("*.json"):
        os.utime(path)
    counted.clear()
    assert store.resolve("latest", *WHERE).record.run_id == "r0049"  # type: ignore[union-attr]
    assert counted["checked"] == 50


def answer(store: RecordStore, ref: str) -> str:
    """The run ``ref`` names, or the error: of the readers, and of _nth_newest given every record loaded."""
    try:
        found = store.resolve(ref, *WHERE)
        assert found.record is not None
        return found.record.run_id
    except RecordError as exc:
        return f"error: {exc}"


def reference(store: RecordStore, ref: str) -> str:
    back = int(ref.partition("~")[2] or 0)
    entries = store.entries(*WHERE)
    if back >= len(entries):
        return "too few"
    try:
        found = _nth_newest(entries, back, ref)
        assert found.record is not None
        return found.record.run_id
    except RecordError as exc:
        return f"error: {exc}"


def damage(store: RecordStore, run_id: str, how: str, written: float) -> None:
    path = Path(str(store.root)) / "u" / "p" / "t" / f"{run_id}.json"
    data = json.loads(path.read_text())
    if how == "field":  # parses, its times are fine, a field is not: unreadable, ordered as if it were not
        data["outputs"] = [{"name": "o", "row_count": "4"}]
        path.write_text(json.dumps(data))
    elif how == "time":
        data["ended_at"] = "yesterday"
        path.write_text(json.dumps(data))
    elif how == "json":
        path.write_text('{"run_id": ')
    elif how == "duplicate":  # the last ended_at would make it the newest run
        path.write_text(json.dumps(data)[:-1] + f', "ended_at": "{at(10**7)}"}}')
    elif how == "array":
        path.write_text("[]")
    touch(path, written)


@pytest.mark.parametrize(
    "damaged",
    [
        [],
        [("r0007", "field", 3600 * 7 + 10)],  # the newest run unreadable, its file as old as its run
        [("r0007", "field", 3600 * 3)],  # ... its file older than the runs before it
        [("r0003", "field", 3600 * 3 + 10), ("r0005", "json", 3600 * 9)],  # written after every run ended
        [("r0002", "field", 3600 * 9)],  # an old run whose file was rewritten after every run ended
        [("r0002", "time", 3600 * 2 + 10), ("r0006", "duplicate", 3600 * 6 + 10)],
        [("r0000", "array", 10), ("r0004", "field", 3600 * 4 + 10)],
        [(f"r{i:04d}", "field", 3600 * i + 10) for i in range(8)],  # nothing loads
    ],
)
def test_latest_answers_as_if_every_record_were_loaded(tmp_path: Path, damaged: list[tuple[str, str, float]]) -> None:
    store = nightly(tmp_path / "uc", 8)
    for run_id, how, written in damaged:
        damage(store, run_id, how, written)
    for back in range(8):
        ref = f"latest~{back}" if back else "latest"
        want = reference(store, ref)
        if want == "too few":
            continue
        assert answer(store, ref) == want, ref
        with store.frozen():  # a listing shared by several refs answers alike, whatever was read before
            assert [answer(store, r) for r in (ref, "latest", ref)] == [want, reference(store, "latest"), want]


def test_ties_and_runs_without_an_end_keep_the_order_of_every_record_loaded(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / "uc")
    runs = [
        ("a", {"started_at": at(0), "ended_at": at(50)}),
        ("b", {"started_at": at(0), "ended_at": at(50)}),  # a tie: the file name breaks it
        ("c", {"started_at": at(10), "checkpoint_at": at(60)}),  # killed after a commit
        ("d", {"started_at": at(20)}),  # killed before any
        ("e", {}),  # no time at all (a damaged old record): first
    ]
    for run_id, times in runs:
        path = store.write(RunRecord(run_id=run_id, usecase="u", package="p", task="t", **times))  # type: ignore[arg-type]
        touch(Path(str(path)), 5)
    assert [store.resolve(f"latest~{i}", *WHERE).record.run_id for i in range(5)] == ["c", "b", "a", "d", "e"]  # type: ignore[union-attr]
    assert [r.run_id for r in store.records(*WHERE)] == ["e", "d", "a", "b", "c"]
