"""The record store: the ONE place that knows where a run record lives, and the one reader of record files.

``<root>/<usecase>/<package>/<task>/<run_id>.json``. The root is ``<usecase_dir>/.ubunye/lineage`` unless one
setting says otherwise (:func:`records_location`: ``records=``, ``--records``, ``UBUNYE_RECORDS``): another local
folder (``/Volumes/...``, ``/dbfs/...``, ``file://``) or any URL fsspec opens (``s3://``, ``gs://``, ``abfs://``).

In a local folder a record is written atomically (a temporary file in the same folder, then a rename), so a
crash never leaves half a JSON file; a write killed before its rename leaves its hidden temporary file, which the
next final record written in that folder removes once it is a day old (:func:`remove_stale_temps`). Object
stores have no rename: there every state of a run is its own write-once object, created whole by one PUT
(create-only where the store supports it), and the final one has the record's name (docs/tasks-and-records.md,
"Records in object stores")::

    <root>/<usecase>/<package>/<task>/.running/<run_id>/<sequence>.json   # start and checkpoints (running)
    <root>/<usecase>/<package>/<task>/<run_id>.json                        # the end: success or failed

A reader takes a run's final object if there is one, else its newest running one; the running objects are
deleted once the final one is written.

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

The same on an object store (here fsspec's in-memory filesystem; ``s3://bucket/records`` works alike):

    >>> remote = RecordStore(records="memory://doc-store/records")
    >>> running = RunRecord(run_id="r1", usecase="u", package="p", task="t")
    >>> str(remote.write(running)).rsplit("/", 1)[0]
    'memory://doc-store/records/u/p/t/.running/r1'
    >>> running.status = "success"
    >>> str(remote.write(running)), [e.record.status for e in remote.entries()]
    ('memory://doc-store/records/u/p/t/r1.json', ['success'])
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ubunye.exceptions import RecordError
from ubunye.isotime import parse_time
from ubunye.lineage.record import MalformedRecord, RunRecord, printable, unsafe_name

if TYPE_CHECKING:
    from ubunye.lineage.file_sums import FileSumsCache
    from ubunye.lineage.remote import RemoteFiles

LINEAGE_DIR = Path(".ubunye") / "lineage"
#: The environment variable naming where records go when neither ``records=`` nor ``--records`` does.
RECORDS_ENV = "UBUNYE_RECORDS"
#: In an object store, the folder (inside a task's) holding the running states of runs not yet ended. A name
#: starting with "." is never a run id, so it cannot be mistaken for a record.
RUNNING_DIR = ".running"
_LATEST = re.compile(r"^latest(?:~(\d+))?$")
_EARLIEST = dt.datetime.min.replace(tzinfo=dt.timezone.utc)
#: The largest record file read (a real one is a few kilobytes; a config is at most 4 MiB).
MAX_RECORD_BYTES = 64 * 1024 * 1024
#: The deepest nesting of objects and lists a record may have (a config nests at most 64 levels).
MAX_DEPTH = 100
#: How old (by its modification time) a temporary file of a record write must be before a later write removes it.
#: A write creates it, writes a few kilobytes, syncs and renames it within a second; one a day old was left by a
#: writer killed between its create and its rename (SIGKILL, out of memory, a lost machine), which nobody will
#: ever rename. A day leaves room for a stopped process and for the clocks of machines sharing a disk.
STALE_TEMP_SECONDS = 24 * 60 * 60
#: The name :func:`create_temp` gives a record's temporary file: ``.<run_id>.<32 hex digits>.tmp``.
_RECORD_TEMP = re.compile(r"^\.(?P<run_id>.+)\.[0-9a-f]{32}\.tmp$")


@dataclass(frozen=True)
class RecordURL:
    """Where a record sits in an object store: ``str()`` is the URL of the object holding it.

    ``name``, ``stem`` and ``parts`` describe the record as the layout names it (``<run_id>.json`` in its task's
    folder), also when the object is a running state (``.running/<run_id>/<sequence>.json``).

    Example:
        >>> where = RecordURL("s3://b/records/u/p/t/r1.json", "u", "p", "t", "r1")
        >>> str(where), where.stem, where.parts
        ('s3://b/records/u/p/t/r1.json', 'r1', ('u', 'p', 't', 'r1.json'))
    """

    url: str
    usecase: str
    package: str
    task: str
    run_id: str

    def __str__(self) -> str:
        return self.url

    @property
    def name(self) -> str:
        """``<run_id>.json``."""
        return f"{self.run_id}.json"

    @property
    def stem(self) -> str:
        """The run id."""
        return self.run_id

    @property
    def parts(self) -> tuple[str, str, str, str]:
        """``(usecase, package, task, name)``."""
        return self.usecase, self.package, self.task, self.name


@dataclass(frozen=True)
class StoredRecord:
    """One file of the store: its record, or why it could not be loaded.

    ``problem`` is the one line saying so, starting with the path; ``field`` names the field at fault
    (``outputs[1].row_count``), None when the file as a whole is (not JSON, too large, ...).
    """

    path: Path | RecordURL
    record: RunRecord | None = None
    problem: str | None = None
    field: str | None = None


def misread_run_id(run_id: str) -> str | None:
    """Why the readers (``ubunye lineage show RUN``, ``ubunye diff``) would take ``run_id`` for something other
    than that run, or None: ``latest`` and ``latest~N`` name the newest runs, and a name ending in ``.json`` or
    starting with ``~`` is a record file (see ``ubunye.cli.lineage``). The store writes no record of such an id:
    ``show latest`` would show another run, and the id itself would find a file or nothing.

    Example:
        >>> misread_run_id("20261201T020000Z-a1b2"), misread_run_id("latest~2"), misread_run_id("r.json")
        (None, "reads as 'latest~N', the newest runs", "ends with '.json', which reads as a record file")
    """
    if _LATEST.match(run_id):
        return "reads as 'latest~N', the newest runs"
    if run_id.endswith(".json"):
        return "ends with '.json', which reads as a record file"
    if run_id.startswith("~"):
        return "starts with '~', which reads as a record file in a home folder"
    return None


def records_location(records: str | Path | None = None) -> str | Path | None:
    """Where records go, the one setting: ``records`` if given, else ``$UBUNYE_RECORDS``, else None (the
    usecase_dir's own store, ``<usecase_dir>/.ubunye/lineage``).

    Example:
        >>> records_location("s3://bucket/records")
        's3://bucket/records'
    """
    if records is not None and str(records).strip():
        _refuse_whitespace(str(records))
        return records
    return os.environ.get(RECORDS_ENV, "").strip() or None


def _refuse_whitespace(records: str) -> None:
    """A RecordError for a records location given with whitespace around it: ``" s3://b/r"`` would be a local
    folder named ``" s3:"`` in the current folder, ``"s3://b/r "`` the prefix ``"r /"``; never what was meant.
    (``UBUNYE_RECORDS`` is stripped instead: a shell's ``$(cat file)`` or an env file leaves a newline.)"""
    if records != records.strip():
        msg = f"records location {printable(records)!r} has whitespace at its start or end, which would be part of "
        msg += "the folder or key name: give it without (--records, records=)"
        raise RecordError(msg)


class RecordStore:
    """Run records of one usecase_dir, or of a records root shared by many (a folder or an fsspec URL).

    Args:
        usecase_dir: the default root is ``<usecase_dir>/.ubunye/lineage``.
        records: another root: a local path, ``file://`` URL or any URL fsspec opens (``s3://bucket/records``).
        storage_options: for an fsspec URL, passed to its filesystem (``endpoint_url``, ``profile``...);
            credentials otherwise come from the implementation's usual chain (environment, profile, instance
            role). Never written into a record or printed.

    Raises:
        RecordError: neither is given; the URL's scheme is unknown or its filesystem is not installed (one line
            naming the URL and the extra to install).
    """

    def __init__(
        self,
        usecase_dir: str | Path | None = None,
        *,
        records: str | Path | None = None,
        storage_options: dict[str, Any] | None = None,
    ) -> None:
        self.usecase_dir = Path(usecase_dir).resolve() if usecase_dir is not None else None
        self._remote: RemoteFiles | None = None
        self._listings: dict[tuple[str | None, ...], list[_Candidate]] = {}  # by filter, while frozen()
        self._loaded: dict[str, StoredRecord] = {}  # each record read while frozen(), by its key
        self._peeked: dict[str, _Peek] = {}  # local records read but not yet checked (_peek), while frozen()
        self._frozen = False
        self.root: Path | str
        if records is None or not str(records).strip():
            if self.usecase_dir is None:
                raise RecordError("a record store needs a usecase_dir or a records location")
            self.root = self.usecase_dir / LINEAGE_DIR
            return
        _refuse_whitespace(str(records))
        local = _local_root(str(records))
        if local is not None:
            self.root = local
            return
        from ubunye.lineage.remote import RemoteFiles

        self._remote = RemoteFiles(str(records), storage_options)
        self._storage_options = storage_options
        self.root = self._remote.shown

    @contextlib.contextmanager
    def frozen(self) -> Iterator[RecordStore]:
        """Within the block, the store is listed at most once for each filter (-u/-p/-t; never again once listed
        whole) and each record read at most once: one reader command (a list, a compare of ``latest~1`` and
        ``latest``) sees one listing and one version of each record, and neither a large folder nor an object
        store is read again for each question asked of it.

        Example:
            >>> store = RecordStore(records="memory://doc-frozen/records")
            >>> _ = store.write(RunRecord(run_id="r1", usecase="u", package="p", task="t", status="success"))
            >>> with store.frozen():
            ...     store.run_ids(), [e.record.run_id for e in store.newest("u", "p", "t")]
            (['r1'], ['r1'])
        """
        self._listings, self._loaded, self._peeked = {}, {}, {}
        self._frozen = True
        try:
            yield self
        finally:
            self._frozen, self._listings, self._loaded, self._peeked = False, {}, {}, {}

    @property
    def remote(self) -> bool:
        """True for an object store: every record read is a request, so readers load only what they show."""
        return self._remote is not None

    def file_sums(self) -> FileSumsCache:
        """The cache of per-file Delta sums kept in this store (:mod:`ubunye.lineage.file_sums`), at its real root
        (``root`` of an object store is the URL as shown, credentials masked)."""
        from ubunye.lineage.file_sums import FileSumsCache

        if self._remote is not None:
            return FileSumsCache(self._remote.url, self._storage_options)
        return FileSumsCache(self.root)

    def check(self) -> None:
        """Fail now, before a run writes anything, if the store cannot be reached (object stores; a local folder
        is checked by the first write).

        Raises:
            RecordError: naming the store and why (network, credentials, a missing bucket).
        """
        if self._remote is not None:
            self._remote.check()

    def path(self, usecase: str, package: str, task: str, run_id: str) -> Path | RecordURL:
        """Where the final record of one run is (or will be) stored.

        Raises:
            RecordError: a part is not a plain name (see :meth:`folder`), or the run id is one the readers would
                take for something else (:func:`misread_run_id`: ``latest``, ``~r``, ``r.json``).
        """
        folder = self.folder(usecase, package, task)
        _plain("run_id", run_id, (usecase, package, task), self._remote)
        misread = misread_run_id(run_id)
        if misread:
            where = "/".join(printable(x) for x in (usecase, package, task))
            raise RecordError(f"bad run_id {run_id!r} of {where}: {misread}")
        if self._remote is not None:
            url = self._remote.url_of(_final_key(usecase, package, task, run_id))
            return RecordURL(url, usecase, package, task, run_id)
        return folder / f"{run_id}.json"

    def path_of(self, record: RunRecord) -> Path | RecordURL:
        """Where ``record`` is stored."""
        return self.path(record.usecase, record.package, record.task, record.run_id)

    def folder(self, usecase: str, package: str, task: str) -> Path:
        """The folder holding every record of one task (in an object store: its path under the root).

        Raises:
            RecordError: a part is not a plain name (:func:`~ubunye.lineage.record.unsafe_name`: ``..``, a
                ``/``, a control character...), which a reader would refuse; in an object store, also a name its
                filesystem would read as something other than a key (``a?versionId=1`` on S3:
                :meth:`~ubunye.lineage.remote.RemoteFiles.misread`).
        """
        for name, part in (("usecase", usecase), ("package", package), ("task", task)):
            _plain(name, part, (usecase, package, task), self._remote)
        if self._remote is not None:
            return Path(usecase, package, task)
        return Path(self.root) / usecase / package / task

    def write(self, record: RunRecord) -> Path | RecordURL:
        """Write (or replace) a record atomically; returns its path.

        In an object store, a running record becomes a new object under ``.running/<run_id>/`` each time and
        the final one (success or failed) ``<run_id>.json``, written once; the running objects are then deleted.
        (A PUT creates an object whole: there is no temporary object.) In a local folder the final record's write
        also removes the temporary files writes killed a day or more before left there (:func:`remove_stale_temps`).

        Raises:
            RecordError: the record is one :func:`load_record` would refuse (checked before anything is
                written, so a record on disk is never replaced by one nobody can read); in an object store,
                also a write the store refused or a final record already there.
        """
        target = self.path_of(record)
        text = json.dumps(record.to_dict(), indent=2, sort_keys=False, default=str) + "\n"
        if isinstance(target, RecordURL):
            return self._write_remote(record, text, target)
        _readable(text, target)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = create_temp(target.parent, f".{record.run_id}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        if record.status != "running":  # once a run, at its end: the folder is listed once, not at each checkpoint
            remove_stale_temps(target.parent)
        return target

    def _write_remote(self, record: RunRecord, text: str, target: RecordURL) -> RecordURL:
        assert self._remote is not None
        identity = (record.usecase, record.package, record.task, record.run_id)
        _check_identity(RunRecord.from_dict(_parse(text, target), str(target)), target, identity)
        data = text.encode("utf-8")
        if len(data) > MAX_RECORD_BYTES:
            raise RecordError(_too_large(str(target), len(data)))
        if record.status == "running":
            key = _running_key(*identity, _next_sequence())
            self._remote.put(key, data)
            return RecordURL(self._remote.url_of(key), *identity)
        self._remote.put(_final_key(*identity), data)
        # Only once the final object is there: a reader finding both takes the final one.
        self._remote.remove("/".join((*identity[:3], RUNNING_DIR, record.run_id)))
        return target

    def entries(
        self, usecase: str | None = None, package: str | None = None, task: str | None = None
    ) -> list[StoredRecord]:
        """Every stored record (filtered by identity), in the order the runs ended (see :func:`_order_key`); a
        file that cannot be loaded is listed with its problem (and field), so one malformed record never hides
        the others.

        Temporary files of writes in progress (hidden files) are skipped.
        """
        out = [self._load(c) for c in self._candidates(usecase, package, task)]
        return sorted(out, key=_order_key)

    def newest(
        self, usecase: str | None = None, package: str | None = None, task: str | None = None
    ) -> Iterator[StoredRecord]:
        """The stored records newest first, each loaded only when the iteration reaches it.

        In a local folder this is :meth:`entries` reversed (by the time each run ended). In an object store the
        order is that of the run ids, which sort by start time (``new_run_id``): the keys are listed once and a
        record is read only when reached, so showing the newest 10 of 10,000 runs reads 10 objects.
        """
        if self._remote is None:
            yield from reversed(self.entries(usecase, package, task))
            return
        for c in sorted(self._candidates(usecase, package, task), key=lambda c: (c.run_id, c.identity), reverse=True):
            yield self._load(c)

    def run_ids(self, usecase: str | None = None, package: str | None = None, task: str | None = None) -> list[str]:
        """The run ids of the store (filtered by identity), from the listing alone: nothing is read."""
        return sorted(c.run_id for c in self._candidates(usecase, package, task))

    def tasks(self) -> list[tuple[str, str, str]]:
        """The (usecase, package, task) of every task with records, from the listing alone: nothing is read."""
        return sorted({c.identity for c in self._candidates(None, None, None)})

    def records(
        self, usecase: str | None = None, package: str | None = None, task: str | None = None
    ) -> list[RunRecord]:
        """The loadable records only, in the order the runs ended (as :meth:`entries`)."""
        return [e.record for e in self.entries(usecase, package, task) if e.record is not None]

    def load(self, run_id: str) -> RunRecord:
        """The record with this run_id (anywhere in the store).

        Raises:
            RecordError: no run has this id, runs of several tasks have it (a record copied, or an id chosen by
                hand: which one is meant cannot be guessed), or its record cannot be loaded.
        """
        found_all = [c for c in self._candidates(None, None, None) if c.run_id == run_id]
        if not found_all:
            msg = f"no run record {run_id!r} under {printable(str(self.root))}"
            raise RecordError(msg)
        if len(found_all) > 1:
            raise RecordError(_same_id(run_id, found_all))
        found = self._load(found_all[0])
        if found.record is None:
            raise RecordError(found.problem or f"{found.path}: cannot load run record")
        return found.record

    def resolve(
        self, ref: str, usecase: str | None = None, package: str | None = None, task: str | None = None
    ) -> StoredRecord:
        """The one stored record ``ref`` names among the runs of a task (or of the whole store).

        ``ref`` is a run id, a unique prefix of one, ``latest`` (the run that ended last, a run without an end
        counting from its last checkpoint, else its start: see :func:`_order_key`; in an object store, by run id,
        which sorts by start time) or ``latest~N`` (N runs before it). ``latest`` needs the filters to select
        runs of a single task. In an object store only the record named is read; in a local folder every record
        of the task is read, and checked in full only where that can change the answer
        (:meth:`_nth_newest_local`).
        ``latest`` never passes over a record that cannot be read unless its file is older than the run chosen
        (:func:`_nth_newest`): it may be the newest run.

        Raises:
            RecordError: nothing matches, the prefix is ambiguous (the candidates are named), ``latest`` spans
                several tasks, or the record it names (or, for ``latest~N``, one that may be newer) cannot be
                loaded (the message names the path).

        Example:
            >>> import tempfile
            >>> store = RecordStore(tempfile.mkdtemp())
            >>> for i in ("20261201T0200-a", "20261202T0200-b"):
            ...     at = f"{i[:4]}-{i[4:6]}-{i[6:8]}T02:00:00Z"
            ...     _ = store.write(RunRecord(run_id=i, usecase="u", package="p", task="t", started_at=at))
            >>> store.resolve("latest~1").record.run_id, store.resolve("20261202").record.run_id
            ('20261201T0200-a', '20261202T0200-b')
        """
        candidates = self._candidates(usecase, package, task)
        where = "/".join(x or "*" for x in (usecase, package, task))
        if not candidates:
            msg = f"no run records for {where} under {printable(str(self.root))}"
            raise RecordError(msg)
        latest = _LATEST.match(ref)
        if latest:
            # Folder names are listed, not checked: one may hold characters a terminal acts on.
            tasks = sorted({"/".join(printable(x) for x in identity) for identity in {c.identity for c in candidates}})
            if len(tasks) > 1:
                msg = f"{ref!r} needs one task, but {where} has runs of {len(tasks)}: {', '.join(tasks[:5])}"
                msg += " (give -u/-p/-t)"
                raise RecordError(msg)
            back = int(latest.group(1) or 0)
            if back >= len(candidates):
                msg = f"{ref!r}: {tasks[0]} has only {len(candidates)} run(s)"
                raise RecordError(msg)
            if self._remote is None:
                found = self._nth_newest_local(candidates, back, ref)
            else:
                found = self._load(sorted(candidates, key=lambda c: c.run_id)[-1 - back])
        else:
            exact = [c for c in candidates if c.run_id == ref]
            found_all = exact or [c for c in candidates if ref and c.run_id.startswith(ref)]
            if not found_all:
                msg = f"no run {ref!r} among the runs of {where} under {printable(str(self.root))}"
                raise RecordError(msg)
            if len(exact) > 1:
                raise RecordError(_same_id(ref, exact))
            if len(found_all) > 1:
                ids = sorted(printable(c.run_id) for c in found_all)  # file names, listed, not checked
                names = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
                msg = f"run id prefix {ref!r} is ambiguous: {len(found_all)} runs match ({names})"
                raise RecordError(msg)
            found = self._load(found_all[0])
        if found.record is None:
            raise RecordError(found.problem or f"{found.path}: cannot load run record")
        return found

    def _candidates(self, usecase: str | None, package: str | None, task: str | None) -> list[_Candidate]:
        """One entry per run (its final record, else its newest running state), from a listing alone."""
        for name, part in (("usecase", usecase), ("package", package), ("task", task)):
            if part is not None:  # a filter of ".." would otherwise list files outside the store
                where = tuple(x or "*" for x in (usecase, package, task))
                _plain(name, part, where, self._remote)  # type: ignore[arg-type]
        if not self._frozen:
            return self._list(usecase, package, task)
        wanted = (usecase, package, task)
        whole = self._listings.get((None, None, None))
        if whole is not None:  # listed whole already: what the filters select is in it
            return [c for c in whole if all(w is None or w == h for w, h in zip(wanted, c.identity, strict=True))]
        if wanted not in self._listings:  # only the task's folder (prefix) listed: not every task's of the store
            self._listings[wanted] = self._list(*wanted)
        return self._listings[wanted]

    def _list(self, usecase: str | None, package: str | None, task: str | None) -> list[_Candidate]:
        if self._remote is None:
            out = []
            for p in self._files(usecase, package, task):
                out.append(_Candidate((p.parts[-4], p.parts[-3], p.parts[-2]), p.stem, p, p.as_posix()))
            return out
        wanted = (usecase, package, task)
        prefix = "/".join(x for x in _leading(wanted))
        runs: dict[tuple[str, str, str, str], tuple[tuple[int, int], str]] = {}  # identity+run -> (rank, key)
        for key in self._remote.find(prefix):
            parsed = _parse_key(key)
            if parsed is None or any(w is not None and w != have for w, have in zip(wanted, parsed[:3], strict=False)):
                continue
            ident, rank = parsed[:4], parsed[4]
            if ident not in runs or rank > runs[ident][0]:
                runs[ident] = (rank, key)
        return [
            _Candidate(ident[:3], ident[3], RecordURL(self._remote.url_of(key), *ident), key)
            for ident, (_, key) in runs.items()
        ]

    def _load(self, c: _Candidate) -> StoredRecord:
        """Load one candidate, its identity checked against its place in the layout (while frozen, once)."""
        if not self._frozen:
            return self._read_candidate(c)
        found = self._loaded.get(c.key)
        if found is not None:
            return found
        peek = self._peeked.get(c.key)
        return self._check(peek) if peek is not None else self._keep(c, self._read_candidate(c))

    def _nth_newest_local(self, candidates: list[_Candidate], back: int, ref: str) -> StoredRecord:
        """``latest~back`` among the records of one task in a local folder: what :func:`_nth_newest` answers given
        every one of them loaded, checking in full only the records that can change that answer.

        Every file is read and parsed (the times it is ordered by are inside it), but checked field by field only
        from the newest down until ``back + 1`` load, and below that only if it could be an unreadable record
        :func:`_nth_newest` refuses to pass over (its file written at or after the time of the run chosen): of
        2,000 records, ``latest`` checks one or two. The order is exact: a record's time read unchecked is the
        time it is ordered by once it loads, and one that does not load is never chosen.
        """
        seen = [self._peek(c) for c in candidates]
        checked = [s for s in seen if isinstance(s, StoredRecord)]  # what _nth_newest is given
        order: list[StoredRecord | _Peek] = [e for e in checked if e.record is not None]
        order += [s for s in seen if isinstance(s, _Peek)]
        order.sort(key=lambda item: item.key if isinstance(item, _Peek) else _order_key(item), reverse=True)
        found, chosen, below = 0, None, []
        for item in order:
            if found > back:  # the run asked for is found; what is left is older than it
                if isinstance(item, _Peek):
                    below.append(item)
                continue
            entry = item if isinstance(item, StoredRecord) else self._check(item)
            if isinstance(item, _Peek):
                checked.append(entry)
            if entry.record is not None:
                found, chosen = found + 1, entry
        at = _ordered_at(chosen.record) if chosen is not None and found > back else None
        for peek in below:  # passed over unchecked only where _nth_newest passes over an unreadable one
            written = _modified(peek.candidate.path)
            if at is None or written is None or written >= at:
                checked.append(self._check(peek))
        return _nth_newest(checked, back, ref)

    def _peek(self, c: _Candidate) -> StoredRecord | _Peek:
        """A local record read and parsed, with the time it is ordered by, not yet checked (:meth:`_check`); or
        the record loaded, if it was (while frozen), or found unreadable on the way."""
        known = (self._loaded.get(c.key) or self._peeked.get(c.key)) if self._frozen else None
        if known is not None:
            return known
        assert isinstance(c.path, Path)
        try:  # the steps of load_record up to its checks, which fail as they fail there
            data = _json(_read(c.path), c.path)
        except RecordError as exc:
            return self._keep(c, _problem(c.path, exc))
        if not isinstance(data, dict):  # not a record: the checks say so, in their words
            return self._check(_Peek(c, data, (_EARLIEST, c.path.name)))
        # The fields as the record holds them if it loads (a v1 record names them alike); a value of another type
        # makes it unreadable, and then its place in the order does not matter.
        at = _first_time(data.get("ended_at"), data.get("checkpoint_at"), data.get("started_at"))
        peek = _Peek(c, data, (at or _EARLIEST, c.path.name))
        if self._frozen:
            self._peeked[c.key] = peek
        return peek

    def _check(self, peek: _Peek) -> StoredRecord:
        """The record of a peeked file loaded in full (every check of :func:`load_record`), from what was read."""
        return self._keep(peek.candidate, self._read_candidate(peek.candidate, peek))

    def _keep(self, c: _Candidate, entry: StoredRecord) -> StoredRecord:
        """``entry``, remembered as ``c``'s while frozen."""
        if self._frozen:
            self._loaded[c.key] = entry
            self._peeked.pop(c.key, None)
        return entry

    def _read_candidate(self, c: _Candidate, peek: _Peek | None = None) -> StoredRecord:
        """``peek``: a local record already read and parsed (:meth:`_peek`), checked from there."""
        if self._remote is None:
            path = c.path
            assert isinstance(path, Path)
            entry = load_entry(path) if peek is None else _entry(path, lambda: _record_of(peek.data, path))
            if entry.record is None:
                return entry
            try:
                _check_identity(entry.record, c.path, (*c.identity, c.run_id))
            except MalformedRecord as exc:
                return StoredRecord(c.path, None, str(exc), exc.field)
            return entry
        from ubunye.lineage.remote import ObjectGone

        shown = str(c.path)
        misread = self._remote.misread(c.key)
        if misread:  # written by another tool: reading "it" would read another object
            return StoredRecord(c.path, None, f"{printable(shown)}: cannot read run record: {misread}")
        try:
            try:
                data = self._remote.read(c.key, MAX_RECORD_BYTES)
            except ObjectGone:
                final = _final_key(*c.identity, c.run_id)
                if c.key == final:
                    raise
                # A running state listed, then deleted because the run wrote its final record: read that one.
                c = _Candidate(
                    c.identity, c.run_id, RecordURL(self._remote.url_of(final), *c.identity, c.run_id), final
                )
                shown = str(c.path)
                data = self._remote.read(c.key, MAX_RECORD_BYTES)
            if len(data) > MAX_RECORD_BYTES:
                raise RecordError(_too_large(printable(shown), len(data)))
            record = RunRecord.from_dict(_parse(_decode(data, shown), c.path), shown)
            _check_identity(record, c.path, (*c.identity, c.run_id))
        except MalformedRecord as exc:
            return StoredRecord(c.path, None, str(exc), exc.field)
        except RecordError as exc:
            return StoredRecord(c.path, None, str(exc))
        return StoredRecord(c.path, record)

    def _files(self, usecase: str | None, package: str | None, task: str | None) -> list[Path]:
        """The record files under the root, listed now: a folder that cannot be listed is a RecordError naming
        the store (a reader command prints one line), not an OSError halfway through a listing."""
        root = Path(self.root)
        if not root.is_dir():
            if root.exists() or root.is_symlink():  # a file (or a dangling link) where the store's folder goes
                kind = "a broken symlink" if not root.exists() else "not a folder"
                msg = f"cannot list the record store {printable(str(root))}: it is {kind}"
                raise RecordError(msg)
            return []
        try:
            return _record_files(root, (usecase, package, task))
        except OSError as exc:  # e.g. --records /proc: listing /proc/<pid>/net raises EINVAL
            msg = f"cannot list the record store {printable(str(root))}: {type(exc).__name__}: {exc}"
            raise RecordError(msg) from exc


def _record_files(root: Path, names: tuple[str | None, str | None, str | None]) -> list[Path]:
    """The ``*.json`` entries three folders below ``root`` (usecase, package, task: each the name given, or any
    folder not hidden), hidden names left out. A name is a name, not a pattern ("[u]" is not the usecase "u"). A
    folder that is a symlink is no part of the store and is not entered: glob followed them, so a link to "/" in
    the store, or --records /proc (whose <pid>/root is one), had the whole filesystem's *.json read as records."""
    folders = [root]
    for name in names:
        below: list[Path] = []
        for folder in folders:
            if name is not None:
                child = folder / name
                if child.is_dir() and not child.is_symlink():
                    below.append(child)
                continue
            with os.scandir(folder) as entries:
                below.extend(
                    Path(e.path) for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)
                )
        folders = below
    found: list[Path] = []
    for folder in folders:
        with os.scandir(folder) as entries:
            found.extend(Path(e.path) for e in entries if e.name.endswith(".json") and not e.name.startswith("."))
    return found


@dataclass(frozen=True)
class _Candidate:
    """A run found by listing: its identity, run id, where it is shown and (object stores) its key."""

    identity: tuple[str, str, str]
    run_id: str
    path: Path | RecordURL
    key: str


@dataclass(frozen=True)
class _Peek:
    """A local record file read and parsed, not yet checked: its JSON value, and the key it sorts by if it loads."""

    candidate: _Candidate
    data: object
    key: tuple[dt.datetime, str]


_SEQUENCE_LOCK = threading.Lock()
_last_sequence = 0


def _next_sequence() -> str:
    """A number greater than any this process gave before (nanoseconds since the epoch, never repeated), so a
    run's running states sort in the order they were written."""
    global _last_sequence
    with _SEQUENCE_LOCK:
        _last_sequence = max(time.time_ns(), _last_sequence + 1)
        return f"{_last_sequence:020d}"


def _same_id(run_id: str, found: list[_Candidate]) -> str:
    tasks = sorted("/".join(printable(x) for x in c.identity) for c in found)
    names = ", ".join(tasks[:5]) + (", ..." if len(tasks) > 5 else "")
    return f"run id {printable(run_id)!r} is the id of runs of {len(tasks)} tasks ({names}): give -u/-p/-t"


def _final_key(usecase: str, package: str, task: str, run_id: str) -> str:
    return f"{usecase}/{package}/{task}/{run_id}.json"


def _running_key(usecase: str, package: str, task: str, run_id: str, sequence: str) -> str:
    return f"{usecase}/{package}/{task}/{RUNNING_DIR}/{run_id}/{sequence}.json"


#: How a reader ranks the objects of one run: any final record above every running state, and running states by
#: their sequence as a number (compared as text, "9" would outrank "10", and "٩", a digit to ``str.isdigit``,
#: every final record).
_FINAL_RANK = (1, 0)
_SEQUENCE = re.compile(r"[0-9]{1,30}")


def _parse_key(key: str) -> tuple[str, str, str, str, tuple[int, int]] | None:
    """``(usecase, package, task, run_id, rank)`` of an object of the layout, None for anything else."""
    parts = key.split("/")
    if len(parts) == 4 and parts[3].endswith(".json"):
        run_id = parts[3][: -len(".json")]
        names = (parts[0], parts[1], parts[2], run_id)
        rank = _FINAL_RANK
    elif (
        len(parts) == 6
        and parts[3] == RUNNING_DIR
        and parts[5].endswith(".json")
        and _SEQUENCE.fullmatch(parts[5][:-5])
    ):
        names = (parts[0], parts[1], parts[2], parts[4])
        rank = (0, int(parts[5][: -len(".json")]))
    else:
        return None
    if any(unsafe_name(n) for n in names):  # hidden objects (writes of other tools), odd names: not records
        return None
    return (*names, rank)


def _leading(wanted: tuple[str | None, ...]) -> list[str]:
    """The identity parts given before the first one left open: the prefix to list."""
    out = []
    for w in wanted:
        if w is None:
            break
        out.append(w)
    return [*out, ""] if out else []


def _local_root(records: str) -> Path | None:
    """The local folder a records location names (a path or a ``file://`` URL), None for any other URL."""
    from ubunye.lineage.remote import scheme_of

    variable = _UNEXPANDED.search(records)
    if variable:
        msg = f"records location {printable(records)!r} holds {variable.group(0)!r}, which nothing expands here: "
        msg += "give the path itself (a shell expands variables only outside quotes)"
        raise RecordError(msg)
    scheme = scheme_of(records)
    if scheme is None:
        head = records.split("/", 1)[0]
        if ":" in head and _known_scheme(head.partition(":")[0]):
            msg = f"records location {printable(records)!r} looks like a URL without '//' "
            msg += f"({head.partition(':')[0]}://...); a local folder named so would be made in the current folder"
            raise RecordError(msg)
        if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]+:.*", head):
            # jdbc:..., mailto:..., a mistyped scheme: a URL no store reads, never a folder meant to be made here
            msg = f"records location {printable(records)!r} looks like a URL ({head.partition(':')[0]}:...) that no "
            msg += "record store reads; a local folder named so would be made in the current folder (write "
            msg += f"./{printable(records)[:80]} if that folder is meant)"
            raise RecordError(msg)
        from ubunye.engines.paths import home_expanded

        try:
            return home_expanded(records).resolve()
        except ValueError as exc:
            raise RecordError(f"records location: {exc}") from None
    if scheme == "file":
        from ubunye.engines.paths import local_path
        from ubunye.exceptions import EngineError

        try:  # the one reader of file:// URLs: a query or fragment refused, another host is no local folder
            path = local_path(records)
        except EngineError as exc:
            raise RecordError(f"records location: {exc}") from None
        # "file://" names no folder (resolving "" would give the cwd, silently), "file://name" another machine's
        if path is None or str(path) in ("", "."):
            msg = f"records location {records!r} has no path: a file:// URL names an absolute folder of this "
            msg += "machine, file:///srv/records"
            raise RecordError(msg)
        return path.resolve()
    return None


#: ``$NAME`` or ``${NAME}`` left in a records location: a variable nobody expanded (quoted in a shell, a job's
#: parameter, a YAML file), which would otherwise become a folder named ``$NAME``.
_UNEXPANDED = re.compile(r"\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")


def _known_scheme(name: str) -> bool:
    """Whether ``name`` is the scheme of a filesystem fsspec knows (``s3``, ``gs``, ``abfs``, ``file``...)."""
    if len(name) < 2 or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", name):  # "C:" is a drive, not a scheme
        return False
    try:
        from fsspec.registry import known_implementations
    except ImportError:
        from ubunye.lineage.remote import EXTRAS

        return name.lower() in EXTRAS or name.lower() == "file"
    return name.lower() in known_implementations


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
        value = parse_time(text.strip())
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


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


def _order_key(entry: StoredRecord) -> tuple[dt.datetime, str]:
    """Runs in the order they ended: ``ended_at``; else (still running, or killed) ``checkpoint_at``, the time of
    its last checkpoint record, if it wrote one; else ``started_at``.

    Not by start: of two runs of one task, the one started first may commit last, and its data is what is on
    disk. The final record is written under the outputs' locks (:func:`ubunye.runner.execute`), so for runs
    sharing an output the order they ended is the order they committed. A run killed after a commit never wrote
    its final record; its last checkpoint was written just before its last commit, under that output's lock (taken
    after every run that wrote the output before had ended), and every lock it took is held until it died: a run
    that ended before the checkpoint committed before it, one that ended after it committed after it. A run
    killed before any checkpoint committed nothing and keeps its start. A record without any of these times (one
    too old, or damaged) sorts first; the file name breaks ties.
    """
    return _ordered_at(entry.record) or _EARLIEST, entry.path.name


def _ordered_at(record: RunRecord | None) -> dt.datetime | None:
    """The time a run is ordered by (see :func:`_order_key`), None when its record has none."""
    if record is None:
        return None
    return _first_time(record.ended_at, record.checkpoint_at, record.started_at)


def _first_time(*texts: object) -> dt.datetime | None:
    """The first of ``texts`` that is a time, as an instant."""
    for text in texts:
        at = instant(text) if isinstance(text, str) else None
        if at is not None:
            return at
    return None


def _nth_newest(entries: list[StoredRecord], back: int, ref: str) -> StoredRecord:
    """The record ``back`` runs before the newest (``latest~back``) among the entries of one task.

    A record that cannot be read has no time to be ordered by. It is passed over only when its file was last
    written before the run chosen ended (a run's record is written as it ends, so it ended earlier still): else
    it may be the run asked for, and the answer is a RecordError naming it, never another run shown in its place.
    (An object store orders by run id and reads the one record named: there an unreadable one is the error.)

    Example:
        >>> import tempfile
        >>> store = RecordStore(tempfile.mkdtemp())
        >>> at = "2026-12-01T02:00:00Z"
        >>> path = store.write(RunRecord(run_id="r1", usecase="u", package="p", task="t", started_at=at))
        >>> _ = (path.parent / "r2.json").write_text('{"run_id": "r2", "status": ')
        >>> _nth_newest(store.entries(), 0, "latest")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ubunye.exceptions.RecordError: 'latest' may be a run whose record cannot be read: .../r2.json: corrupt ...
    """
    readable = sorted((e for e in entries if e.record is not None), key=_order_key)
    chosen = readable[-1 - back] if back < len(readable) else None
    at = _ordered_at(chosen.record) if chosen else None
    for e in sorted((e for e in entries if e.record is None), key=lambda e: e.path.name):
        written = _modified(e.path)
        if at is None or written is None or written >= at:
            problem = e.problem or f"{printable(str(e.path))}: cannot load run record"
            raise RecordError(f"{ref!r} may be a run whose record cannot be read: {problem} (name the run by its "
                              "id, or repair or move that file)")  # fmt: skip
    assert chosen is not None  # back < len(entries), and every unreadable one was passed over
    return chosen


def _modified(path: Path | RecordURL) -> dt.datetime | None:
    """When a local record file was last written (None when it cannot be told)."""
    try:
        return dt.datetime.fromtimestamp(Path(str(path)).stat().st_mtime, dt.timezone.utc)
    except (OSError, OverflowError, ValueError):
        return None


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
    return _record_of(_json(_read(path), path), path)


def _record_of(data: object, path: Path) -> RunRecord:
    """The record of a file's JSON value (:func:`_json`), checked as :func:`load_record` checks it."""
    _scan(data, str(path))
    record = RunRecord.from_dict(data, str(path))
    _check_place(record, path)
    return record


def load_entry(path: Path) -> StoredRecord:
    """Like :func:`load_record`, but a problem is returned with the path (and field) instead of raised."""
    return _entry(path, lambda: load_record(path))


def _entry(path: Path, load: Callable[[], RunRecord]) -> StoredRecord:
    """What ``load()`` gives, or the problem it raises, as one entry of the store."""
    try:
        return StoredRecord(path, load())
    except RecordError as exc:
        return _problem(path, exc)


def _problem(path: Path | RecordURL, exc: RecordError) -> StoredRecord:
    """The entry of a file that cannot be loaded: the error's line, and the field it names (if any)."""
    return StoredRecord(path, None, str(exc), exc.field if isinstance(exc, MalformedRecord) else None)


def create_temp(folder: Path, prefix: str) -> tuple[int, Path]:
    """Create ``<folder>/<prefix><random>.tmp``, new and empty, open for writing, with the mode a data file gets:
    0o666 less the umask. In a group-shared store (setgid folder, umask 002) the team's other accounts can then read
    the file renamed from it; ``tempfile.mkstemp`` makes every file 0600, readable by its creator alone.

    The kernel applies the umask (or the folder's default ACL, which takes its place there) to the mode given at
    creation. Reading the umask to chmod the file afterwards would mean setting it (``os.umask``), process-wide,
    racing every other thread creating a file.
    """
    path = folder / f"{prefix}{secrets.token_hex(16)}.tmp"  # 128 random bits: O_EXCL never meets another's name
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666), path


def remove_stale_temps(
    folder: Path, now: float | None = None, *, named: Callable[[str], bool] | None = None
) -> list[Path]:
    """Remove from the task folder ``folder`` the temporary files of record writes killed before their rename
    (hidden, never read as records, but one a killed write, piling up in a store of hundreds of nightly jobs);
    return the files removed. ``named`` says which names are such files, for a writer naming its temporary files
    otherwise (the cache of per-file sums, ``ubunye.lineage.file_sums``); by default a record's.

    Only regular files named as :func:`create_temp` names a record's (``.<run_id>.<32 hex digits>.tmp``, the run
    id a plain name), or as ``named`` says, and last modified :data:`STALE_TEMP_SECONDS` or more before ``now``
    (default: this machine's time) are removed: a write in progress has just written its file, and its name (128
    random bits) is never given again, so no live writer's file is ever removed. Anything else is left: other
    files, links, folders. Not being able to list the folder or remove a file (another account's, a read-only
    mount) is no error: the record is written, and the file stays for a later write.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> old = folder / f".r1.{'ab' * 16}.tmp"
        >>> _ = old.write_text("{")
        >>> os.utime(old, (0, 0))
        >>> [p.name for p in remove_stale_temps(folder)], old.exists()
        (['.r1.abababababababababababababababab.tmp'], False)
    """
    cutoff = (time.time() if now is None else now) - STALE_TEMP_SECONDS
    ours = _is_record_temp if named is None else named
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if ours(e.name)]
    except OSError:
        return []
    removed = []
    for name in names:
        path = folder / name
        try:
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode) or info.st_mtime > cutoff:
                continue
            path.unlink()
        except OSError:  # gone already (another run's clean-up), or not ours to remove
            continue
        removed.append(path)
    return removed


def _is_record_temp(name: str) -> bool:
    """Whether ``name`` is one :func:`create_temp` gives a record's temporary file (``.<run_id>.<hex>.tmp``)."""
    found = _RECORD_TEMP.match(name)
    return found is not None and unsafe_name(found.group("run_id")) is None


def _readable(text: str, target: Path) -> None:
    """The checks a reader makes, made before writing: what is written can be read back."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_RECORD_BYTES:
        raise RecordError(_too_large(printable(str(target)), len(text)))
    _check_place(RunRecord.from_dict(_parse(text, target), str(target)), target)


def _plain(name: str, value: str, identity: tuple[str, str, str], remote: RemoteFiles | None = None) -> None:
    """A usecase, package, task or run id that is a plain name (and, in an object store, one its filesystem reads
    as a key), else a RecordError naming it and why."""
    why = unsafe_name(value)
    where = "/".join(printable(str(x)) for x in identity)
    if why:
        msg = f"bad {name} {value!r} of {where}: not a plain name ({why})"
        raise RecordError(msg)
    misread = remote.misread_name(value) if remote is not None else None
    if misread:
        raise RecordError(f"bad {name} {value!r} of {where}: {misread}")


def _read(path: Path) -> str:
    """The text of a record file: a regular file, at most MAX_RECORD_BYTES, UTF-8."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the reader forever, a device never end
            msg = f"{printable(str(path))}: not a run record (not a regular file)"
            raise RecordError(msg)
        if info.st_size > MAX_RECORD_BYTES:
            raise RecordError(_too_large(printable(str(path)), info.st_size))
        # O_NONBLOCK: should the file have been replaced by a FIFO since stat, opening it does not hang.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_RECORD_BYTES + 1)  # bounded: the file may have grown since stat
    except OSError as exc:
        msg = f"{printable(str(path))}: cannot read run record: {exc.strerror or exc}"
        raise RecordError(msg) from exc
    if len(data) > MAX_RECORD_BYTES:
        raise RecordError(_too_large(printable(str(path)), len(data)))
    return _decode(data, str(path))


def _decode(data: bytes, where: str) -> str:
    """The UTF-8 text of a record's bytes; ``where`` (the path) names the file in the error, made printable only
    then: escaping every path read took a third of the time a reader of 2,000 records took."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        shown = printable(where)
        msg = f"{shown}: corrupt run record (not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start})"
        raise RecordError(msg) from None


def _too_large(shown: str, size: int) -> str:
    return f"{shown}: not read: {size:,} bytes, more than a run record may have ({MAX_RECORD_BYTES // 2**20} MiB)"


class _Duplicated(dict[str, object]):
    """A JSON object that gave a key more than once (which value counts differs between readers)."""

    duplicates: tuple[str, ...] = ()


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    repeated: list[str] = []
    for k, _ in pairs:
        if k in seen:
            repeated.append(k)
        seen.add(k)
    marked = _Duplicated(out)
    marked.duplicates = tuple(repeated)
    return marked


def _parse(text: str, path: Path | RecordURL) -> object:
    """The JSON value of a record's text, refused (naming the path) unless it is plain, unambiguous JSON."""
    data = _json(text, path)
    _scan(data, str(path))
    return data


def _json(text: str, path: Path | RecordURL) -> object:
    """The JSON value of a record's text (:func:`_parse` before its :func:`_scan`), duplicate keys marked."""
    if not text.strip():
        msg = f"{printable(str(path))}: corrupt run record (empty file)"
        raise RecordError(msg)
    try:
        data = json.loads(text, object_pairs_hook=_pairs)
    except RecursionError:
        raise MalformedRecord(f"corrupt run record (nested deeper than {MAX_DEPTH} levels)", str(path)) from None
    except ValueError as exc:  # JSONDecodeError, and an integer of more digits than Python converts
        msg = f"{printable(str(path))}: corrupt run record (not valid JSON: {exc})"
        raise RecordError(msg) from None
    return data


def _scan(data: object, path: str) -> None:
    """Nesting depth, duplicate keys and lone surrogates anywhere in the document.

    Iterative, not recursive: the depth is what is being checked, and every reader after this one (masking,
    rendering, ``--json``) may then recurse safely.
    """
    stack: list[tuple[object, str, int]] = [(data, "", 1)]
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


def _check_identity(record: RunRecord, path: Path | RecordURL, place: tuple[str, str, str, str]) -> None:
    """A record read through a store must say what its place in the layout says (see :func:`_check_place`),
    wherever the store's root is."""
    expected = dict(zip(("usecase", "package", "task", "run_id"), place, strict=True))
    if record.record_version < 2:  # v1 file names predate the layout
        expected.pop("run_id")
    for name, value in expected.items():
        if getattr(record, name) != value:
            where = "file name" if name == "run_id" else "folder"
            msg = f"{getattr(record, name)!r} does not match the {where} it sits in ({value!r})"
            raise MalformedRecord(msg, str(path), name)
