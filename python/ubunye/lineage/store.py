"""The record store: the ONE place that knows where a run record lives.

``<usecase_dir>/.ubunye/lineage/<usecase>/<package>/<task>/<run_id>.json``, written atomically (a temporary
file in the same folder, then a rename), so a crash never leaves half a JSON file.

Example:
    >>> import tempfile
    >>> from ubunye.lineage.record import RunRecord
    >>> store = RecordStore(tempfile.mkdtemp())
    >>> path = store.write(RunRecord(run_id="r1", usecase="u", package="p", task="t"))
    >>> path.relative_to(store.root).as_posix()
    'u/p/t/r1.json'
    >>> [e.record.run_id for e in store.entries()]
    ['r1']
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ubunye.exceptions import RecordError
from ubunye.lineage.record import RunRecord

LINEAGE_DIR = Path(".ubunye") / "lineage"


@dataclass(frozen=True)
class StoredRecord:
    """One file of the store: its record, or why it could not be loaded (``problem`` names the path)."""

    path: Path
    record: RunRecord | None = None
    problem: str | None = None


class RecordStore:
    """Run records of one usecase_dir."""

    def __init__(self, usecase_dir: str | Path) -> None:
        self.usecase_dir = Path(usecase_dir).resolve()
        self.root = self.usecase_dir / LINEAGE_DIR

    def folder(self, usecase: str, package: str, task: str) -> Path:
        """The folder holding every record of one task."""
        for part in (usecase, package, task):
            if not part or part in (".", "..") or "/" in part or "\\" in part:
                msg = f"bad task identity part {part!r} in {usecase}/{package}/{task}"
                raise RecordError(msg)
        return self.root / usecase / package / task

    def path(self, usecase: str, package: str, task: str, run_id: str) -> Path:
        """Where the record of one run is (or will be) stored."""
        return self.folder(usecase, package, task) / f"{run_id}.json"

    def path_of(self, record: RunRecord) -> Path:
        """Where ``record`` is stored."""
        return self.path(record.usecase, record.package, record.task, record.run_id)

    def write(self, record: RunRecord) -> Path:
        """Write (or replace) a record atomically; returns its path."""
        target = self.path_of(record)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(record.to_dict(), indent=2, sort_keys=False, default=str) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=f".{record.run_id}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def entries(
        self, usecase: str | None = None, package: str | None = None, task: str | None = None
    ) -> list[StoredRecord]:
        """Every stored record (filtered by identity), oldest first; unreadable files are listed with a problem.

        Temporary files of writes in progress (hidden files) are skipped.
        """
        out = [load_entry(p) for p in self._files(usecase, package, task)]
        return sorted(out, key=lambda e: (e.record.started_at or "" if e.record else "", e.path.name))

    def records(
        self, usecase: str | None = None, package: str | None = None, task: str | None = None
    ) -> list[RunRecord]:
        """The loadable records only, oldest first."""
        return [e.record for e in self.entries(usecase, package, task) if e.record is not None]

    def load(self, run_id: str) -> RunRecord:
        """The record with this run_id (anywhere in the store)."""
        for path in self._files(None, None, None):
            if path.stem == run_id:
                return load_record(path)
        msg = f"no run record {run_id!r} under {self.root}"
        raise RecordError(msg)

    def _files(self, usecase: str | None, package: str | None, task: str | None) -> Iterator[Path]:
        if not self.root.is_dir():
            return iter(())
        pattern = "/".join(x or "*" for x in (usecase, package, task)) + "/*.json"
        return (p for p in self.root.glob(pattern) if not p.name.startswith("."))


def load_record(path: str | Path) -> RunRecord:
    """Load one record file.

    Raises:
        RecordError: the file is unreadable, not JSON, or of a newer record_version; the message names the path.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        msg = f"{path}: cannot read run record: {exc.strerror or exc}"
        raise RecordError(msg) from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        msg = f"{path}: corrupt run record (not valid JSON: {exc})"
        raise RecordError(msg) from exc
    return RunRecord.from_dict(data, str(path))


def load_entry(path: Path) -> StoredRecord:
    """Like :func:`load_record`, but a problem is returned with the path instead of raised."""
    try:
        return StoredRecord(path, load_record(path))
    except RecordError as exc:
        return StoredRecord(path, None, str(exc))
