"""The record store: the ONE place that knows where a run record lives, and the one reader of record files.

``<usecase_dir>/.ubunye/lineage/<usecase>/<package>/<task>/<run_id>.json``, written atomically (a temporary
file in the same folder, then a rename), so a crash never leaves half a JSON file.

Readers never trust a file: :func:`load_record` refuses, naming the file (and the field), a file over 64 MiB or
not a regular file, bytes that are not UTF-8, text that is not JSON, nesting deeper than 100 levels, a key given
twice, a field of the wrong type (:meth:`RunRecord.from_dict`), and a record whose identity does not match the
folder and file name it sits in. :meth:`RecordStore.entries` returns such files as problems beside the records
that load. The store never writes a record it would refuse to read.

Example:
    >>> import tempfile
    >>> from ubunye.lineage.record import RunRecord
    >>> store = RecordStore(tempfile.mkdtemp())
    >>> path = store.write(RunRecord(run_id="r1", usecase="u", package="p", task="t"))
    >>> path.relative_to(store.root).as_posix()
    'u/p/t/r1.json'
    >>> [e.record.run_id for e in store.entries()]
    ['r1']
    >>> _ = (path.parent / "r2.json").write_text('{"run_id": "r2", "status": "running", "usecase": 1}')
    >>> [e.problem.split(": ", 1)[1] for e in store.entries() if e.problem]
    ['usecase: expected str, got int']
"""

from __future__ import annotations

import datetime as dt
import glob
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ubunye.exceptions import RecordError
from ubunye.lineage.record import MalformedRecord, RunRecord, printable, unsafe_name

LINEAGE_DIR = Path(".ubunye") / "lineage"
_LATEST = re.compile(r"^latest(?:~(\d+))?$")
_EARLIEST = dt.datetime.min.replace(tzinfo=dt.UTC)
#: The largest record file read (a real one is a few kilobytes; a config is at most 4 MiB).
MAX_RECORD_BYTES = 64 * 1024 * 1024
#: The deepest nesting of objects and lists a record may have (a config nests at most 64 levels).
MAX_DEPTH = 100


@dataclass(frozen=True)
class StoredRecord:
    """One file of the store: its record, or why it could not be loaded.

    ``problem`` is the one line saying so, starting with the path; ``field`` names the field at fault
    (``outputs[1].row_count``), None when the file as a whole is (not JSON, too large, ...).
    """

    path: Path
    record: RunRecord | None = None
    problem: str | None = None
    field: str | None = None


class RecordStore:
    """Run records of one usecase_dir."""

    def __init__(self, usecase_dir: str | Path) -> None:
        self.usecase_dir = Path(usecase_dir).resolve()
        self.root = self.usecase_dir / LINEAGE_DIR

    def folder(self, usecase: str, package: str, task: str) -> Path:
        """The folder holding every record of one task.

        Raises:
            RecordError: a part is not a plain name (:func:`~ubunye.lineage.record.unsafe_name`: ``..``, a
                ``/``, a control character...), which a reader would refuse.
        """
        for name, part in (("usecase", usecase), ("package", package), ("task", task)):
            _plain(name, part, (usecase, package, task))
        return self.root / usecase / package / task

    def path(self, usecase: str, package: str, task: str, run_id: str) -> Path:
        """Where the record of one run is (or will be) stored."""
        folder = self.folder(usecase, package, task)
        _plain("run_id", run_id, (usecase, package, task))
        return folder / f"{run_id}.json"

    def path_of(self, record: RunRecord) -> Path:
        """Where ``record`` is stored."""
        return self.path(record.usecase, record.package, record.task, record.run_id)

    def write(self, record: RunRecord) -> Path:
        """Write (or replace) a record atomically; returns its path.

        Raises:
            RecordError: the record is one :func:`load_record` would refuse (checked before anything is
                written, so a record on disk is never replaced by one nobody can read).
        """
        target = self.path_of(record)
        text = json.dumps(record.to_dict(), indent=2, sort_keys=False, default=str) + "\n"
        _readable(text, target)
        target.parent.mkdir(parents=True, exist_ok=True)
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
        """Every stored record (filtered by identity), oldest first; a file that cannot be loaded is listed with
        its problem (and field), so one malformed record never hides the others.

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
            ...     at = f"{i[:4]}-{i[4:6]}-{i[6:8]}T02:00:00Z"
            ...     _ = store.write(RunRecord(run_id=i, usecase="u", package="p", task="t", started_at=at))
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
        for name, part in (("usecase", usecase), ("package", package), ("task", task)):
            if part is not None:  # a filter of ".." would otherwise list files outside the store
                _plain(name, part, tuple(x or "*" for x in (usecase, package, task)))  # type: ignore[arg-type]
        if not self.root.is_dir():
            return iter(())
        # A name is a name, not a pattern: "[u]" must not match the usecase "u".
        pattern = "/".join(glob.escape(x) if x else "*" for x in (usecase, package, task)) + "/*.json"
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
    """Load one record file, trusting nothing in it.

    Raises:
        RecordError: the file is unreadable, not a regular file, larger than :data:`MAX_RECORD_BYTES`, not
            UTF-8 or not JSON; :class:`~ubunye.lineage.record.MalformedRecord` (a RecordError): nested deeper
            than :data:`MAX_DEPTH`, a duplicate key, a lone surrogate, a field of the wrong type, a newer
            record_version, or (in a store's layout) an identity that does not match the folder and file name.
            The message starts with the path and names the field.

    Example:
        >>> import tempfile
        >>> bad = Path(tempfile.mkdtemp()) / "r.json"
        >>> _ = bad.write_text('{"run_id": "r", "run_id": "s"}')
        >>> load_record(bad)
        Traceback (most recent call last):
        ubunye.lineage.record.MalformedRecord: /...r.json: duplicate key 'run_id'
    """
    path = Path(path)
    record = RunRecord.from_dict(_parse(_read(path), path), str(path))
    _check_place(record, path)
    return record


def load_entry(path: Path) -> StoredRecord:
    """Like :func:`load_record`, but a problem is returned with the path (and field) instead of raised."""
    try:
        return StoredRecord(path, load_record(path))
    except MalformedRecord as exc:
        return StoredRecord(path, None, str(exc), exc.field)
    except RecordError as exc:
        return StoredRecord(path, None, str(exc))


def _readable(text: str, target: Path) -> None:
    """The checks a reader makes, made before writing: what is written can be read back."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_RECORD_BYTES:
        raise RecordError(_too_large(printable(str(target)), len(text)))
    _check_place(RunRecord.from_dict(_parse(text, target), str(target)), target)


def _plain(name: str, value: str, identity: tuple[str, str, str]) -> None:
    why = unsafe_name(value)
    if why:
        where = "/".join(printable(str(x)) for x in identity)
        msg = f"bad {name} {value!r} of {where}: not a plain name ({why})"
        raise RecordError(msg)


def _read(path: Path) -> str:
    """The text of a record file: a regular file, at most MAX_RECORD_BYTES, UTF-8."""
    shown = printable(str(path))
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the reader forever, a device never end
            msg = f"{shown}: not a run record (not a regular file)"
            raise RecordError(msg)
        if info.st_size > MAX_RECORD_BYTES:
            raise RecordError(_too_large(shown, info.st_size))
        # O_NONBLOCK: should the file have been replaced by a FIFO since stat, opening it does not hang.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_RECORD_BYTES + 1)  # bounded: the file may have grown since stat
    except OSError as exc:
        msg = f"{shown}: cannot read run record: {exc.strerror or exc}"
        raise RecordError(msg) from exc
    if len(data) > MAX_RECORD_BYTES:
        raise RecordError(_too_large(shown, len(data)))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"{shown}: corrupt run record (not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start})"
        raise RecordError(msg) from None


def _too_large(shown: str, size: int) -> str:
    return f"{shown}: not read: {size:,} bytes, more than a run record may have ({MAX_RECORD_BYTES // 2**20} MiB)"


class _Duplicated(dict):
    """A JSON object that gave a key more than once (which value counts differs between readers)."""

    duplicates: tuple[str, ...] = ()


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    marked = _Duplicated(out)
    marked.duplicates = tuple(k for k, _ in pairs if k in seen or seen.add(k))
    return marked


def _parse(text: str, path: Path) -> Any:
    """The JSON value of a record's text, refused (naming the path) unless it is plain, unambiguous JSON."""
    shown = printable(str(path))
    if not text.strip():
        msg = f"{shown}: corrupt run record (empty file)"
        raise RecordError(msg)
    try:
        data = json.loads(text, object_pairs_hook=_pairs)
    except RecursionError:
        raise MalformedRecord(f"corrupt run record (nested deeper than {MAX_DEPTH} levels)", str(path)) from None
    except ValueError as exc:  # JSONDecodeError, and an integer of more digits than Python converts
        msg = f"{shown}: corrupt run record (not valid JSON: {exc})"
        raise RecordError(msg) from None
    _scan(data, str(path))
    return data


def _scan(data: Any, path: str) -> None:
    """Nesting depth, duplicate keys and lone surrogates anywhere in the document.

    Iterative, not recursive: the depth is what is being checked, and every reader after this one (masking,
    rendering, ``--json``) may then recurse safely.
    """
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    while stack:
        node, where, depth = stack.pop()
        if isinstance(node, dict | list) and depth > MAX_DEPTH:
            raise MalformedRecord(f"nested deeper than {MAX_DEPTH} levels", path, where)
        if isinstance(node, dict):
            if isinstance(node, _Duplicated):
                raise MalformedRecord(f"duplicate key {node.duplicates[0]!r}", path, where or None)
            for key, value in node.items():
                at = f"{where}.{key}" if where else key
                if not _unicode(key):
                    raise MalformedRecord("key holds a lone surrogate (not a character)", path, at)
                stack.append((value, at, depth + 1))
        elif isinstance(node, list):
            stack.extend((value, f"{where}[{i}]", depth + 1) for i, value in enumerate(node))
        elif isinstance(node, str) and not _unicode(node):
            raise MalformedRecord("text holds a lone surrogate (not a character)", path, where)


def _unicode(text: str) -> bool:
    """False for text holding a lone surrogate (``"\\ud800"`` in JSON): it cannot be printed or written as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_place(record: RunRecord, path: Path) -> None:
    """In a store's layout (``.ubunye/lineage/<usecase>/<package>/<task>/<run_id>.json``) the record must say
    what its place says: a record copied into another task's folder would otherwise be listed, found by id and
    compared as a run of that task. A file named elsewhere (a copy to share) is not checked, nor the file name of
    a v1 record (they predate this layout: whoever moved them in chose the names)."""
    parts = Path(os.path.abspath(path)).parts
    if len(parts) < 6 or parts[-6:-4] != LINEAGE_DIR.parts:
        return
    expected = {"usecase": parts[-4], "package": parts[-3], "task": parts[-2]}
    if record.record_version >= 2:  # the store names every file it writes <run_id>.json
        expected["run_id"] = path.stem
    for name, place in expected.items():
        value = getattr(record, name)
        if value != place:
            where = "file name" if name == "run_id" else "folder"
            msg = f"{value!r} does not match the {where} it sits in ({place!r})"
            raise MalformedRecord(msg, str(path), name)
