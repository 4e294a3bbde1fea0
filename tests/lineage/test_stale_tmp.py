"""A record write killed between creating its temporary file and renaming it (SIGKILL, out of memory, a lost
machine) left ``.<run_id>.<hex>.tmp`` in the task's folder for ever: never read as a record, but a platform team's
store of hundreds of nightly jobs piled them up. A run's final record now removes those a day old or more, and
nothing else: not a fresh one (a write in progress), not a file of another name, a link or a folder."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ubunye.lineage import RecordStore, RunRecord
from ubunye.lineage.store import STALE_TEMP_SECONDS, create_temp, remove_stale_temps

DAY = 24 * 60 * 60


def record(run_id: str, status: str = "running") -> RunRecord:
    return RunRecord(run_id=run_id, usecase="u", package="p", task="t", status=status,
                     started_at="2026-12-01T02:00:00Z")  # fmt: skip


def _killed_write(folder: Path, run_id: str, age: float) -> Path:
    """The temporary file a write of ``run_id`` killed before its rename leaves (half a record), ``age`` old."""
    fd, tmp = create_temp(folder, f".{run_id}.")
    with os.fdopen(fd, "w") as fh:
        fh.write('{"run_id": "' + run_id)
    _age(tmp, age)
    return tmp


def _age(path: Path, seconds: float) -> None:
    at = time.time() - seconds
    os.utime(path, (at, at), follow_symlinks=False)


def test_a_final_record_removes_the_killed_writes_a_day_old_and_nothing_else(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    folder = Path(str(store.write(record("r1")))).parent
    stale = [_killed_write(folder, "r0", DAY + 60), _killed_write(folder, "r1", 30 * DAY)]
    fresh = _killed_write(folder, "r1", 60)  # a write in progress (or killed a minute ago): kept
    kept = [fresh]
    for name in (".notes.tmp", "notes.tmp", f".r1.{'a' * 32}.tmp.bak", f".{'a' * 32}.tmp", f"r1.{'a' * 32}.tmp",
                 f"..{'a' * 32}.tmp", f".r1.{'A' * 32}.tmp"):  # fmt: skip
        other = folder / name
        other.write_text("not ours")
        _age(other, 30 * DAY)
        kept.append(other)
    link = folder / f".r2.{'b' * 32}.tmp"
    link.symlink_to(stale[0].name)
    _age(link, 30 * DAY)
    (folder / f".r3.{'c' * 32}.tmp").mkdir()
    kept += [link, folder / f".r3.{'c' * 32}.tmp"]

    store.write(record("r1", "running"))  # a checkpoint: the folder is not listed
    assert all(p.exists() for p in stale)
    store.write(record("r1", "success"))
    assert [p for p in stale if p.exists()] == []
    assert [p for p in kept if not os.path.lexists(p)] == []
    assert [r.run_id for r in store.records()] == ["r1"]


def test_only_files_at_least_the_bound_old_are_removed(tmp_path: Path) -> None:
    now = time.time()
    old = _killed_write(tmp_path, "r", 0)
    os.utime(old, (now - STALE_TEMP_SECONDS, now - STALE_TEMP_SECONDS))
    young = _killed_write(tmp_path, "r", 0)
    os.utime(young, (now - STALE_TEMP_SECONDS + 5, now - STALE_TEMP_SECONDS + 5))
    assert remove_stale_temps(tmp_path, now=now) == [old]
    assert young.exists() and not old.exists()


def test_a_folder_that_cannot_be_listed_or_a_file_that_cannot_be_removed_is_no_error(tmp_path: Path) -> None:
    assert remove_stale_temps(tmp_path / "missing") == []
    if os.geteuid() == 0:
        pytest.skip("root removes files from a read-only folder")
    stale = _killed_write(tmp_path, "r", 2 * DAY)
    tmp_path.chmod(0o555)
    try:
        assert remove_stale_temps(tmp_path) == []
    finally:
        tmp_path.chmod(0o755)
    assert stale.exists()
