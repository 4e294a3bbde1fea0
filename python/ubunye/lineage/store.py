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

import datetime as dt
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ubunye.exceptions import RecordError
from ubunye.lineage.record import RunRecord

LINEAGE_DIR = Path(".ubunye") / "lineage"
_LATEST = re.compile(r"^latest(?:~(\d+))?$")
_EARLIEST = dt.datetime.min.replace(tzinfo=dt.UTC)


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
        return sorted(out, key=_start_key)

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

    def resolve(
        self, ref: str, usecase: str | None = None, package: str | None = None, task: str | None = None
    ) -> StoredRecord:
        """The one stored record ``ref`` names among the runs of a task (or of the whole store).

        ``ref`` is a run id, a unique prefix of one, ``latest`` (the newest run by start time) or ``latest~N``
        (N runs before it). ``latest`` needs the filters to select runs of a single task.

        Raises:
            RecordError: nothing matches, the prefix is ambiguous (the candidates are named), ``latest`` spans
                several tasks, or the record it names cannot be loaded (the message names the path).

        Example:
            >>> import tempfile
            >>> store = RecordStore(tempfile.mkdtemp())
            >>> for i in ("20261201T0200-a", "20261202T0200-b"):
            ...     _ = store.write(RunRecord(run_id=i, usecase="u", package="p", task="t", started_at=i[:8]))
            >>> store.resolve("latest~1").record.run_id, store.resolve("20261202").record.run_id
            ('20261201T0200-a', '20261202T0200-b')
        """
        entries = self.entries(usecase, package, task)
        where = "/".join(x or "*" for x in (usecase, package, task))
        if not entries:
            msg = f"no run records for {where} under {self.root}"
            raise RecordError(msg)
        latest = _LATEST.match(ref)
        if latest:
            tasks = sorted({"/".join(e.path.parts[-4:-1]) for e in entries})
            if len(tasks) > 1:
                msg = f"{ref!r} needs one task, but {where} has runs of {len(tasks)}: {', '.join(tasks[:5])}"
                msg += " (give -u/-p/-t)"
                raise RecordError(msg)
            back = int(latest.group(1) or 0)
            if back >= len(entries):
                msg = f"{ref!r}: {tasks[0]} has only {len(entries)} run(s)"
                raise RecordError(msg)
            found = entries[-1 - back]
        else:
            exact = [e for e in entries if e.path.stem == ref]
            found_all = exact or [e for e in entries if ref and e.path.stem.startswith(ref)]
            if not found_all:
                msg = f"no run {ref!r} among the runs of {where} under {self.root}"
                raise RecordError(msg)
            if len(found_all) > 1:
                names = ", ".join(e.path.stem for e in found_all[:5]) + (", ..." if len(found_all) > 5 else "")
                msg = f"run id prefix {ref!r} is ambiguous: {len(found_all)} runs match ({names})"
                raise RecordError(msg)
            found = found_all[0]
        if found.record is None:
            raise RecordError(found.problem or f"{found.path}: cannot load run record")
        return found

    def _files(self, usecase: str | None, package: str | None, task: str | None) -> Iterator[Path]:
        if not self.root.is_dir():
            return iter(())
        pattern = "/".join(x or "*" for x in (usecase, package, task)) + "/*.json"
        return (p for p in self.root.glob(pattern) if not p.name.startswith("."))


def instant(text: str | None) -> dt.datetime | None:
    """An ISO 8601 time as an aware datetime, so times compare as instants (``Z`` and ``+00:00`` are equal).

    A time without an offset is taken as UTC; a date alone is its midnight UTC; anything else gives None.

    Example:
        >>> instant("2026-12-01T02:00:00Z") == instant("2026-12-01T04:00:00+02:00")
        True
        >>> instant("2026-12-01").isoformat(), instant("yesterday")
        ('2026-12-01T00:00:00+00:00', None)
    """
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        value = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def short_ids(run_ids: Iterable[str], min_length: int = 8) -> dict[str, str]:
    """The shortest prefix (at least ``min_length`` long) that names each run id uniquely among ``run_ids``.

    Example:
        >>> list(short_ids(["20261201T0200-a1", "20261201T0200-b2", "20261202T0100-c3"]).values())
        ['20261201T0200-a', '20261201T0200-b', '20261202']
    """
    ids = sorted(set(run_ids))
    out = {}
    for i, rid in enumerate(ids):
        common = 0
        for other in (ids[i - 1] if i else "", ids[i + 1] if i + 1 < len(ids) else ""):
            n = 0
            while n < min(len(rid), len(other)) and rid[n] == other[n]:
                n += 1
            common = max(common, n)
        out[rid] = rid[: max(min_length, common + 1)]
    return out


def _start_key(entry: StoredRecord) -> tuple[dt.datetime, str]:
    started = instant(entry.record.started_at) if entry.record else None
    return started or _EARLIEST, entry.path.name


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
