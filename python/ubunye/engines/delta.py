"""Delta for the in-process engines (pandas, polars) through deltalake: writes with the commit hook, and reads
and versions as of io.version or io.timestamp.

A Delta table is transactional already: data files are written first, invisible until one JSON entry in
``_delta_log`` commits them, so a failed or killed write leaves the previous version current (its unreferenced
files are removed by VACUUM). deltalake writes and commits in one call, so ``before_commit`` runs when deltalake
has consumed the last row of the data: after the data is handed over, before the commit. If the hook raises,
deltalake is told the stream failed and commits nothing.

deltalake reads the stream on its own (tokio) threads, where Python code must not call deltalake again nor expect
to be on the caller's thread (the runner's locks are per thread). So deltalake runs on a worker thread, and the
stream's end hands over to the calling thread, which runs the hook and then lets the stream end or fail.

deltalake stores some values otherwise than the frame holds them, silently: it casts the rows to an existing
table's types (on overwrite too: 2.7 into an int64 column is 2), keeps timestamps in microseconds (nanoseconds are
dropped), stores an empty partition value as null (the Delta protocol's rule) and a time-zone-aware timestamp
partition value as a local time without its zone (which Spark reads in its session's zone: another instant), a
binary partition value as the text of its escapes, and partition folders polars' reader reads otherwise than the log
('=' or '/' in a partition column's name, the value ``__HIVE_DEFAULT_PARTITION__``); partitions by a nested or (on a
new table) null-typed column fail in deltalake, a struct after committing a table no engine reads. The record
holds the hash of the frame, so :func:`refuse_unfaithful` refuses each of these before anything is written, and a
write into a CHAR(n) column (Spark reads it padded); casts that keep every value and its rows-v1 type
(large_string as string, a time zone as UTC, whole microseconds) are left to deltalake.

Example:
    >>> import tempfile, pyarrow as pa
    >>> from ubunye.config import IOConfig
    >>> path = tempfile.mkdtemp() + "/t"
    >>> write_delta(pa.table({"a": [1]}), IOConfig("t", format="delta"), path, lambda: None)
    0
    >>> from deltalake import DeltaTable
    >>> DeltaTable(path).version()
    0
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ubunye.engines.partition_types import HIVE_NULL
from ubunye.engines.paths import resolve_path
from ubunye.engines.transaction import type_text
from ubunye.exceptions import EngineError
from ubunye.hashing.encode import visible
from ubunye.hashing.types import is_list_view
from ubunye.isotime import parse_time

if TYPE_CHECKING:
    from pathlib import Path

    from deltalake import DeltaTable

    from ubunye.config import IOConfig


log = logging.getLogger(__name__)

#: The commitInfo key a write marks its commit with, so the version it made is found among others' (see
#: :func:`committed_version`). One place names it: the Spark engine's writes carry it as Delta's userMetadata.
COMMIT_MARK = "ubunye.commit"


class _Abort(Exception):
    """Raised into deltalake's stream: the hook failed, so the write must not commit."""


class _Handoff:
    """The stream's end waiting for the calling thread's decision: commit (True) or abort (False)."""

    def __init__(self) -> None:
        self.wake = threading.Event()  # the stream ended, or the write ended before it did
        self.at_end = False
        self._decided = threading.Event()
        self._commit = False

    def stream_ended(self) -> bool:
        self.at_end = True
        self.wake.set()
        self._decided.wait()
        return self._commit

    def decide(self, commit: bool) -> None:
        self._commit = commit
        self._decided.set()


def write_delta(table: pa.Table, io: IOConfig, path: str, hook: Callable[[], None]) -> int | None:
    """Write ``table`` to the Delta table at ``path`` with io.mode, calling ``hook`` just before the commit; the
    version that commit made (None when it cannot be read back: the data is committed all the same).

    The commit carries a mark of its own in its commitInfo, and the version is the one holding that mark: on an
    object store no lock keeps another run from committing between this commit and a read of the latest version,
    which would then name the other run's data. An overwrite's version must then hold only the files its commit
    added (:func:`_check_overwrote`): else another writer's rows are in it, and EngineError says so.

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> def refuse():
        ...     raise RuntimeError("no")
        >>> write_delta(pa.table({"a": [1]}), IOConfig("t", format="delta"), tempfile.mkdtemp(), refuse)
        Traceback (most recent call last):
        RuntimeError: no
    """
    from ubunye.hashing.delta_files import check_deltalake_path

    check_deltalake_path(path, f"output {io.name!r}", write=True)
    refuse_unfaithful(table, io, path)
    fresh = _new_local_folder(path)
    try:
        return _write(table, io, path, hook)
    except BaseException:
        if fresh is not None:
            _remove_uncommitted(fresh, io, table)
        raise


def _write(table: pa.Table, io: IOConfig, path: str, hook: Callable[[], None]) -> int | None:
    """:func:`write_delta` once its checks passed."""
    from deltalake import CommitProperties, write_deltalake

    handoff, failure = _Handoff(), []
    mark = uuid.uuid4().hex

    def batches() -> Iterator[pa.RecordBatch]:
        yield from table.to_batches()
        if not handoff.stream_ended():
            raise _Abort("before_commit failed: nothing is committed")

    def write() -> None:
        try:
            write_deltalake(
                path,
                pa.RecordBatchReader.from_batches(table.schema, batches()),
                mode=io.mode,  # type: ignore[call-overload]  # config allows overwrite or append only
                partition_by=io.partition_by or None,
                storage_options=io.storage_options or None,
                commit_properties=CommitProperties(custom_metadata={COMMIT_MARK: mark}),
            )
        except BaseException as exc:
            failure.append(exc)
        finally:
            handoff.wake.set()

    worker = threading.Thread(target=write, name=f"ubunye-delta-{io.name}", daemon=True)
    worker.start()
    commit = False
    try:
        handoff.wake.wait()
        if handoff.at_end:
            hook()  # on the caller's thread; if it raises, the stream fails and deltalake commits nothing
            commit = True
    finally:
        handoff.decide(commit)
        worker.join()
    if failure:
        from ubunye.hashing.delta_files import deltalake_arrow

        with deltalake_arrow(f"output {io.name!r} (Delta at {path})"):
            if not isinstance(failure[0], Exception):  # a panic inside deltalake (pyo3's PanicException) is no
                first = (str(failure[0]).strip().splitlines() or [""])[0]  # Exception: no handler would see it
                msg = f"output {io.name!r} (Delta at {path}): deltalake failed ({type(failure[0]).__name__}: {first})"
                raise EngineError(msg) from failure[0]
            raise failure[0]
    made = _marked_commit(path, io, mark)
    if made is None:
        return None
    if io.mode == "overwrite":
        _check_overwrote(made, io, path)
    return made.version


def _new_local_folder(path: str) -> Path | None:
    """The local folder of ``path`` when nothing is there yet (a first write), else None: what a failed first
    write may remove (:func:`_remove_uncommitted`). None for object stores, where nothing is removed."""
    from ubunye.engines.paths import local_path

    folder = local_path(path)
    return None if folder is None or os.path.lexists(folder) else folder


# The names deltalake gives a write's data files (part-00000-<uuid>-c000.snappy.parquet), in the table folder or its
# partition folders. Spark names its part files alike: a name alone does not tell whose a file is
# (:func:`_written_here`).
_DATA_FILE = re.compile(r"part-\d+-[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}-c\d+(?:\.\w+)?\.parquet")

# object_store's name for a file still being written (its name and "#1"): deltalake writes its data files so, and
# removes them itself when its write aborts (or renames them once complete). Never removed here: waited for
# (:func:`_settle`), as one may be another writer's.
_IN_PROGRESS = re.compile(r".+#\d+")

#: How deltalake's Parquet writer signs a data file's footer (``created_by``: "delta-rs version py-1.6.6").
_DELTALAKE_WRITER = "delta-rs version "

#: Below this many bytes of Arrow data, deltalake has put no file on disk when its write aborts: its writer keeps a
#: file's Parquet bytes in memory until they fill one upload part (5 MB at least, ``DELTARS_UPLOAD_PART_SIZE``) or
#: the write ends. A fifth of a part: Parquet's own overheads (page statistics repeating a long value) stay within
#: that margin.
_HELD_IN_MEMORY = 1 << 20

#: How long the table folder must stay unchanged, with no in-progress file in it, for deltalake's aborted write to
#: count as finished (:func:`_settle`), and how long it is waited for at most, in seconds. deltalake returns its
#: failure while its aborted tasks still run on their own threads: measured (deltalake 1.6.6, a loaded machine),
#: they created in-progress files and their partition folders up to 0.7 s after it returned, and removed the files
#: up to 2.5 s after.
_SETTLE_QUIET = 1.0
_SETTLE_LIMIT = 60.0


def _remove_uncommitted(folder: Path, io: IOConfig, table: pa.Table) -> None:
    """Remove what a failed first write of ``table`` left at ``folder`` when no commit was made: deltalake leaves
    the folder it created and the data files an aborted write flushed (one per ~100 MB), which later reads would
    take for a table ("No files in log segment"), and the next write for an existing one.

    Only what this write made is removed: the data files it wrote (:func:`_written_here`: deltalake's name, its
    writer in the footer, the columns and at most the rows this write sent) in ``folder`` and its partition folders
    (``name=value``), then each of these folders and ``_delta_log`` once empty, then ``folder`` once empty; no
    symlink is followed. Anything else (a file another process put there during the write, such as a Spark job's
    part file, named as deltalake names its own: the output's lock keeps out other ubunye runs only) is kept, with
    the folders holding it, and a warning names it: nothing of it is lost. A ``_delta_log`` holding anything (a
    commit, or another writer's) keeps the whole folder as it is. The folders deltalake created above ``folder``
    (its path's missing parents) are left.

    deltalake's aborted tasks go on after it raised: they make and remove its in-progress files (``#1``) and the
    partition folders holding them. For a table large enough to have reached the disk, the cleanup waits until they
    are done (:func:`_settle`), and looks again once more after a quiet while: the folders they made after the
    first look were left, empty, and the next write took the folder for an existing table."""
    held = table.get_total_buffer_size() < _HELD_IN_MEMORY
    kept = _clean(folder, io, table, settle=not held)
    if not held:
        after = _entries(folder)
        _settle(folder)
        if _entries(folder) != after:  # made by deltalake after the first look
            kept = _clean(folder, io, table, settle=False)
    if kept:
        staged = [p for p in kept if _IN_PROGRESS.fullmatch(p.name)]
        others = [p for p in kept if p not in staged]
        msg = "output %r: the failed first write's own files are removed from %s; kept, as it did not write them: %s"
        if others:
            log.warning(msg, io.name, folder, _shown(others))
        if staged:
            msg = "output %r: the failed first write's own files are removed from %s; kept, still being written "
            msg += "when its cleanup ended (object_store's in-progress name: another writer's, or one deltalake did "
            msg += "not remove): %s"
            log.warning(msg, io.name, folder, _shown(staged))


def _shown(paths: list[Path]) -> str:
    return ", ".join(str(p) for p in paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def _clean(folder: Path, io: IOConfig, table: pa.Table, *, settle: bool) -> list[Path]:
    """One pass of :func:`_remove_uncommitted` (after :func:`_settle` when ``settle``): the paths kept."""
    if settle:
        _settle(folder)
    log_dir = folder / "_delta_log"
    sent = [name for name in table.schema.names if name not in io.partition_by]  # partition values are in folders
    try:
        if folder.is_symlink() or not folder.is_dir() or log_dir.is_symlink():
            return []
        if os.path.lexists(log_dir) and (not log_dir.is_dir() or any(log_dir.iterdir())):
            return []
        return _remove_written(folder, top=True, columns=sent, rows=table.num_rows)
    except OSError as exc:  # the write's own failure is what the run reports
        log.warning("output %r: could not remove %s, left by the failed first write: %s", io.name, folder, exc)
        return []


def _entries(folder: Path) -> frozenset[tuple[str, int]] | None:
    """What is in ``folder`` and below (no symlink followed): each entry's path under it and its size (-1 for a
    folder); None when ``folder`` is not there. An entry removed while it is looked at is left out."""
    if not os.path.lexists(folder):
        return None
    found: set[tuple[str, int]] = set()
    todo: list[str | Path] = [folder]
    while todo:
        here = todo.pop()
        try:
            with os.scandir(here) as scan:
                entries = list(scan)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            name = os.path.relpath(entry.path, folder)
            try:
                if entry.is_dir(follow_symlinks=False):
                    found.add((name, -1))
                    todo.append(entry.path)
                else:
                    found.add((name, entry.stat(follow_symlinks=False).st_size))
            except FileNotFoundError:
                continue
    return frozenset(found)


def _settle(folder: Path) -> None:
    """Wait until deltalake's aborted write has stopped changing ``folder``: no in-progress file (``#1``) in it,
    and nothing in it changed for :data:`_SETTLE_QUIET` seconds; :data:`_SETTLE_LIMIT` seconds at most (what is
    then still in progress is kept, and named)."""
    start = time.monotonic()
    last, since = _entries(folder), start
    while time.monotonic() - start < _SETTLE_LIMIT:
        time.sleep(0.05)
        now = _entries(folder)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= _SETTLE_QUIET and not any(
            _IN_PROGRESS.fullmatch(os.path.basename(name)) for name, _ in now or ()
        ):
            return


def _written_here(path: Path, columns: list[str], rows: int) -> bool:
    """Whether the regular file at ``path`` (in the new folder of a failed first write) is a data file that write
    made: named as deltalake names them, signed by deltalake's Parquet writer in its footer, holding exactly the
    columns the write sent (in order) and no more rows. A Spark, pyarrow or polars part file is signed otherwise;
    a file that is no complete Parquet file (not written by deltalake, or still being written) is kept. Only
    another deltalake writer's uncommitted file of the same columns, written into the same new folder at the same
    time, would pass: nothing else writes there (another ubunye run is kept out by the output's lock)."""
    import pyarrow.parquet as pq

    if not _DATA_FILE.fullmatch(path.name):
        return False
    try:
        footer = pq.read_metadata(path)
        names = footer.schema.to_arrow_schema().names
    except (OSError, pa.ArrowException, ValueError):
        return False
    return (footer.created_by or "").startswith(_DELTALAKE_WRITER) and names == columns and footer.num_rows <= rows


def _remove_written(folder: Path, top: bool, columns: list[str], rows: int) -> list[Path]:
    """Remove the failed write's data files (:func:`_written_here`) from ``folder`` and its partition folders (and
    an empty ``_delta_log`` when ``top``), then ``folder`` if nothing else is in it; the paths of what is not the
    write's, kept with the folders holding them (a folder not named ``name=value`` is kept whole, unread). What
    goes away while it is looked at (deltalake removing its in-progress file) is gone, not kept."""
    kept: list[Path] = []
    try:
        with os.scandir(folder) as scan:
            entries = list(scan)
    except FileNotFoundError:
        return []
    for entry in entries:
        path = folder / entry.name
        if top and entry.name == "_delta_log" and entry.is_dir(follow_symlinks=False):
            kept += _remove_empty(path)
        elif "=" in entry.name and entry.is_dir(follow_symlinks=False):
            kept += _remove_written(path, top=False, columns=columns, rows=rows)
        elif entry.is_file(follow_symlinks=False) and _written_here(path, columns, rows):
            path.unlink(missing_ok=True)
        elif os.path.lexists(path):
            kept.append(path)
    return kept or _remove_empty(folder)


def _remove_empty(folder: Path) -> list[Path]:
    """Remove ``folder`` if it is empty (rmdir: what another process put in it meanwhile is never removed); else
    ``[folder]``, kept."""
    try:
        folder.rmdir()
    except OSError:
        if not os.path.lexists(folder):
            return []
        return [folder]
    return []


def committed_version(path: str, io: IOConfig, mark: str) -> int | None:
    """The version of the Delta table at ``path`` whose commit carries ``mark`` (:data:`COMMIT_MARK`), looked for
    from the newest commit down; None when no commit has it or the log does not read.

    Each commit is read from its own log file (``_delta_log/<version>.json``), so the version is the one in that
    file's name: deltalake's ``history()`` numbers the commits down from the version its table was loaded at, and
    lists the ones committed after the load too, so a commit landing between the two shifted every number
    (deltalake 1.6.6).

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> path = tempfile.mkdtemp() + "/t"
        >>> [write_delta(pa.table({"a": [1]}), IOConfig("t", format="delta", mode="append"), path, lambda: None)
        ...  for _ in range(2)]
        [0, 1]
        >>> committed_version(path, IOConfig("t", format="delta"), "no such mark") is None
        True
    """
    found = _marked_commit(path, io, mark)
    return None if found is None else found.version


@dataclass(frozen=True)
class _Commit:
    """A commit found in a Delta log: its version, the paths (decoded) of the files it added, and the table
    (loaded at a version at or after it)."""

    version: int
    added: set[str]
    table: DeltaTable


def _marked_commit(path: str, io: IOConfig, mark: str) -> _Commit | None:
    """:func:`committed_version`'s commit, with what it added; None (logged) when none carries ``mark``, the log
    does not read, or the commit's file is gone (a log cleaned up past it)."""
    from urllib.parse import unquote

    from deltalake import DeltaTable

    from ubunye.hashing.delta_files import table_filesystem

    try:
        # Loaded after the commit was made: its version is this commit's or a later one's.
        table = DeltaTable(path, storage_options=io.storage_options or None)
        files = table_filesystem(table, io.storage_options or None)
        for version in range(table.version(), -1, -1):  # the newest first: just committed, unless others followed
            actions = _commit_actions(files, version)
            if actions is None:
                break
            info: dict[str, Any] = next((a["commitInfo"] for a in actions if isinstance(a.get("commitInfo"), dict)), {})
            if info.get(COMMIT_MARK) == mark:
                added = {unquote(str(a["add"]["path"])) for a in actions if isinstance(a.get("add"), dict)}
                return _Commit(version, added, table)
    except Exception as exc:  # the data is committed; a version that cannot be read back is only not recorded
        name = type(exc).__name__
        log.warning("output %r: could not read back the Delta version written: %s: %s", io.name, name, exc)
        return None
    log.warning(
        "output %r: no commit of the Delta log at %s carries this write's mark: its version is not recorded",
        io.name,
        path,
    )
    return None


def _commit_actions(files: pa.fs.FileSystem, version: int) -> list[dict[str, Any]] | None:
    """The actions of the commit of ``version`` in the Delta log of the table ``files`` is rooted at (one JSON
    object a line), None when the log holds no file for it."""
    try:
        with files.open_input_stream(f"_delta_log/{version:020d}.json") as stream:
            text = stream.read().decode("utf-8")
    except FileNotFoundError:
        return None
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _check_overwrote(commit: _Commit, io: IOConfig, path: str) -> None:
    """Raise EngineError unless the version ``commit`` (an overwrite) made holds only the files it added.

    On an object store nothing keeps another writer from committing while an overwrite is being written, and
    deltalake then commits the overwrite over the other commit without removing what that one added: a conflicting
    first write of a table ("create") is retried as a commit with no remove at all, an overwrite of an existing
    table removes only the files of the version it read (measured with deltalake 1.6.6). The version then holds
    another run's rows next to this one's, where the record would say it holds the frame written, with its hash
    and row count. The run fails instead, saying so: a record holding no hash for the version would still say the
    output was overwritten with the frame's rows."""
    from urllib.parse import unquote

    table = commit.table
    try:
        if table.version() != commit.version:
            table.load_as_version(commit.version)
        held = {unquote(str(p)) for p in pa.table(table.get_add_actions()).column("path").to_pylist()}
    except Exception as exc:
        msg = f"output {io.name!r}: the overwrite committed version {commit.version} of the Delta table at {path}, "
        msg += "but that version's files could not be read back to check it holds this run's rows only "
        msg += f"({type(exc).__name__}: {exc})"
        raise EngineError(msg) from exc
    others = held - commit.added
    if others:
        shown = ", ".join(sorted(others)[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        msg = f"output {io.name!r}: another writer's rows are in the Delta table at {path} at version "
        msg += f"{commit.version}, the version this overwrite committed: it keeps {len(others)} data file(s) "
        msg += f"this run did not write ({shown}), as another writer committed to the table while this run wrote "
        msg += "and deltalake committed the overwrite without removing them. The version is not the frame this run "
        msg += "wrote; overwrite the table again with no other writer on it"
        raise EngineError(msg)


def refuse_unfaithful(table: pa.Table, io: IOConfig, path: str) -> None:
    """Raise EngineError naming the output and the column unless deltalake would store every value of ``table``
    as it is (see the module's docstring), so the record's hash of the frame is the data's. Call it before the
    write: the existing table's schema is read (under the output's lock, for local tables).

    Example:
        >>> from ubunye.config import IOConfig
        >>> frame = pa.table({"p": ["", "x"], "v": [1, 2]})
        >>> refuse_unfaithful(frame, IOConfig("o", format="delta", partition_by=["p"]), "/d/o")
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: output 'o': partition column 'p' holds the empty string, which Delta stores ...
    """
    _refuse_partition_columns(table, io)
    _refuse_partition_types(table, io)
    _refuse_empty_partition_values(table, io)
    _refuse_negative_decimal_partitions(table, io)
    _refuse_timestamp_partitions(table, io)
    _refuse_sub_microseconds(table, io)
    existing = _existing_schema(io, path)
    if existing is not None:
        _refuse_casts(table, existing, io, path)
    else:
        _refuse_untyped_partitions(table, io)


def _refuse_partition_columns(table: pa.Table, io: IOConfig) -> None:
    """deltalake names a partition's folder ``name=value`` with the column's name as it is: a name holding '='
    (folder ``k=v=x``) or '/' (a folder inside another) is read back from the folder names by polars as other
    values (null) or not at all, while the log holds the values written: two hashes for one table. And Delta needs
    a column outside the partitions: deltalake fails on a frame of partition columns only, naming none."""
    for column in io.partition_by:
        bad = next((c for c in "=/" if c in column), None)
        if bad is not None:
            msg = f"output {io.name!r}: partition column {column!r} has {bad!r} in its name, and Delta names a "
            msg += "partition's folder name=value with it, which readers taking partition values from folder "
            msg += "names (polars' Delta reader) read as other values than the log holds; nothing was written. "
            msg += "Rename the column in the task, or leave it out of partition_by"
            raise EngineError(msg)
    if table.schema.names and set(table.schema.names) <= set(io.partition_by):
        msg = f"output {io.name!r}: partition_by names every column of the frame ({', '.join(table.schema.names)}), "
        msg += "and a Delta table needs a column outside its partitions (its data files hold those); nothing was "
        msg += "written. Leave a column out of partition_by"
        raise EngineError(msg)


def _partition_kind(dtype: pa.DataType) -> str | None:
    """``binary`` or ``nested`` (struct, list, map, union, whatever Arrow's variant; a dictionary's values
    count): what no Delta partition value holds as it is, else None."""
    if pa.types.is_dictionary(dtype):
        dtype = dtype.value_type
    t = pa.types
    binary_view = getattr(t, "is_binary_view", None)  # newer pyarrow only (polars writes views)
    if t.is_binary(dtype) or t.is_large_binary(dtype) or t.is_fixed_size_binary(dtype):
        return "binary"
    if binary_view is not None and binary_view(dtype):
        return "binary"
    return "nested" if t.is_nested(dtype) else None


def _refuse_partition_types(table: pa.Table, io: IOConfig) -> None:
    """A binary partition value is written by deltalake as the text of its escapes (b"ab" as "\\u0061\\u0062"),
    read back as other bytes (pandas) or not at all (polars); a struct is committed as the text "{x: 1}" before
    deltalake fails on it, leaving a table no engine reads; a list or map fails deltalake, naming no column.
    Refused, named, before anything is written."""
    for column in io.partition_by:
        dtype = table.column(column).type
        kind = _partition_kind(dtype)
        if kind is None:
            continue
        msg = f"output {io.name!r}: partition column {column!r} is {type_text(dtype, column)}, and a Delta "
        if kind == "binary":
            msg += "partition value of bytes is written as the text of its escapes (b'ab' as '\\u0061\\u0062'), "
            msg += "which reads back as other bytes or not at all"
        else:
            msg += "partition value is one scalar, which this type has not (deltalake would fail on it, or "
            msg += "commit a table no engine reads)"
        msg += "; nothing was written. Partition by a scalar column (e.g. a string made from this one), or leave "
        msg += "it out of partition_by"
        raise EngineError(msg)


def _refuse_untyped_partitions(table: pa.Table, io: IOConfig) -> None:
    """A null-typed partition column (every value null, no type: pandas' all-None column, polars' Null) has no
    Delta type to create a table with: deltalake fails on it naming no column. Into an existing table it takes the
    table's type and is written (as the Delta null partition), so only a new table's write is refused."""
    for column in io.partition_by:
        dtype = table.column(column).type
        if pa.types.is_dictionary(dtype):
            dtype = dtype.value_type
        if pa.types.is_null(dtype):
            msg = f"output {io.name!r}: partition column {column!r} has no type (null: every value is null), and "
            msg += "a new Delta table needs one for each partition column; nothing was written. Cast the column "
            msg += "in the task (e.g. to a string), or leave it out of partition_by"
            raise EngineError(msg)


def _refuse_timestamp_partitions(table: pa.Table, io: IOConfig) -> None:
    """deltalake writes a time-zone-aware timestamp partition value (rows-v1 ``timestamp``: an instant) as its UTC
    wall time without a zone ('2024-01-01 12:00:00.000000', measured with deltalake 1.6.6), which Spark reads as a
    local time of its session's zone: another instant, and another hash, outside UTC. The Spark engine refuses the
    same write on Delta 3.2 (``spark_engine._refuse_timestamp_partitions``). A ``timestamp_ntz`` (a local time
    to begin with, no instant to lose) is written as before."""
    for column in io.partition_by:
        if type_text(table.column(column).type, column) == "timestamp":
            msg = f"output {io.name!r}: partition column {column!r} is a timestamp with a time zone, and deltalake "
            msg += "writes its partition values as times without the zone, which Spark reads in its session's "
            msg += "time zone (other instants than the frame the record hashes outside UTC); nothing was written: "
            msg += "partition by a date or string made from it"
            raise EngineError(msg)


def _refuse_empty_partition_values(table: pa.Table, io: IOConfig) -> None:
    """The Delta protocol writes an empty partition value as null: '' would read back as null. And the text
    ``__HIVE_DEFAULT_PARTITION__`` (the folder name of a null partition) is kept in the log as text but read as
    null by readers taking partition values from folder names (polars); Spark stores it as null (the Spark
    engine refuses it too). Binary partition columns are refused before (:func:`_refuse_partition_types`)."""
    import pyarrow.compute as pc

    for column in io.partition_by:
        values = table.column(column)  # refuse_columns checked it is in the frame
        if type_text(values.type, column) != "string":
            continue
        wide = values.cast(pa.large_string())  # views and dictionaries
        if pc.any(pc.equal(wide, "")).as_py():
            msg = f"output {io.name!r}: partition column {column!r} holds the empty string, which Delta stores as "
            msg += "null (an empty partition value is null in the Delta protocol), so it would read back as null "
            msg += "and the record's hash would not be the data's; nothing was written. Replace it in the task "
            msg += "(e.g. with null, or a placeholder), or partition by another column"
            raise EngineError(msg)
        if pc.any(pc.equal(wide, HIVE_NULL)).as_py():
            msg = f"output {io.name!r}: partition column {column!r} holds the text {HIVE_NULL!r}, the folder name "
            msg += "of a null partition, which polars' Delta reader reads back as null (Spark stores it as null), "
            msg += "so the data would not be the frame the record hashes; nothing was written. Replace it in the "
            msg += "task (e.g. with null, or another placeholder), or partition by another column"
            raise EngineError(msg)


def _refuse_negative_decimal_partitions(table: pa.Table, io: IOConfig) -> None:
    """deltalake writes a negative decimal partition value with a fraction wrongly (-1.50 as '-1.-50', -0.01 as
    '0.-1', measured with deltalake 1.6.6) and then fails on its own text, naming no column: refused first, named.
    Reads of such a table (Spark writes them right) are refused alike (``check_arrow_readable``)."""
    from ubunye.hashing.delta_files import NEGATIVE_DECIMAL_PARTITION, negative_fraction

    for column in io.partition_by:
        values = table.column(column)
        value = negative_fraction(values)
        if value is not None:
            t = values.type.value_type if isinstance(values.type, pa.DictionaryType) else values.type
            msg = f"output {io.name!r}: partition column {column!r} ({type_text(t, column)}) holds a negative value "
            msg += f"with a fraction ({value}), and {NEGATIVE_DECIMAL_PARTITION}; nothing was written. Partition by "
            msg += "another column, or by this one cast to a string"
            raise EngineError(msg)


def _in_microseconds(dtype: pa.DataType) -> pa.DataType:
    """``dtype`` with every nanosecond timestamp in it (nested too) in microseconds: what Delta stores."""
    t = pa.types
    if t.is_timestamp(dtype) and dtype.unit == "ns":
        return pa.timestamp("us", dtype.tz)
    if t.is_struct(dtype):
        return pa.struct([f.with_type(_in_microseconds(f.type)) for f in dtype])
    if t.is_list(dtype):
        return pa.list_(dtype.value_field.with_type(_in_microseconds(dtype.value_type)))
    if t.is_large_list(dtype):
        return pa.large_list(dtype.value_field.with_type(_in_microseconds(dtype.value_type)))
    if is_list_view(dtype):  # pyarrow >= 16
        value = dtype.value_field.with_type(_in_microseconds(dtype.value_type))
        return pa.large_list_view(value) if t.is_large_list_view(dtype) else pa.list_view(value)
    if t.is_fixed_size_list(dtype):
        return pa.list_(dtype.value_field.with_type(_in_microseconds(dtype.value_type)), dtype.list_size)
    if t.is_dictionary(dtype):
        return pa.dictionary(dtype.index_type, _in_microseconds(dtype.value_type), dtype.ordered)
    if t.is_map(dtype):
        key, item = dtype.key_field, dtype.item_field
        return pa.map_(key.with_type(_in_microseconds(key.type)), item.with_type(_in_microseconds(item.type)))
    return dtype


def sub_microsecond_column(table: pa.Table) -> str | None:
    """The first column of ``table`` holding a timestamp (at any depth) with a non-zero sub-microsecond part, which
    a store keeping microseconds (Delta, Spark) would drop without a word; None when there is none. Whole
    microseconds cast losslessly (and hash alike in rows-v1).

    Example:
        >>> sub_microsecond_column(pa.table({"t": pa.array([1_000, 1_001], pa.timestamp("ns"))}))
        't'
    """
    for field, values in zip(table.schema, table.columns, strict=True):
        if any(_sub_microsecond(chunk) for chunk in values.chunks):
            return str(field.name)
    return None


def _sub_microsecond(arr: pa.Array) -> bool:
    """Whether a value of ``arr`` (at any depth) is a nanosecond timestamp with a non-zero sub-microsecond part.

    Only values of the table count: what lies under a null struct, list or map slot, or in a dictionary entry no
    index points at, is none (rows-v1 reads the same values: ``ubunye.hashing.encode.visible``). One cast of the
    whole array first (safe: it refuses to drop a non-zero sub-microsecond part, and looks at hidden values too);
    only when it refuses are the values narrowed to those of the table, level by level.
    """
    micro = _in_microseconds(arr.type)
    if micro == arr.type:
        return False  # no nanosecond timestamp inside
    try:
        arr.cast(micro, safe=True)
        return False
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a value to drop, or no cast (list views)
        pass
    t = arr.type
    if pa.types.is_timestamp(t):
        return True  # a safe cast of a plain array looks at its valid slots only
    if pa.types.is_dictionary(t):
        return _sub_microsecond(arr.dictionary.take(arr.indices))
    if pa.types.is_struct(t):
        return any(_sub_microsecond(child) for child in arr.flatten())  # the struct's nulls carried into its fields
    if pa.types.is_fixed_size_list(t) or is_list_view(t):
        return _sub_microsecond(arr.flatten())  # the values of valid slots only
    if (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t)) and len(arr):
        shown = visible(arr)
        start, stop = shown.offsets[0].as_py(), shown.offsets[-1].as_py()
        entries = shown.values.slice(start, stop - start)
        if pa.types.is_map(t):
            return _sub_microsecond(entries.field(0)) or _sub_microsecond(entries.field(1))
        return _sub_microsecond(entries)
    return False


def _refuse_sub_microseconds(table: pa.Table, io: IOConfig) -> None:
    """Delta keeps microseconds and deltalake truncates nanoseconds silently: a value with a sub-microsecond part
    would be stored as another instant."""
    name = sub_microsecond_column(table)
    if name is not None:
        msg = f"output {io.name!r}: column {name!r} holds timestamps with nanoseconds, and Delta keeps "
        msg += "microseconds: they would be dropped, so the data would not be the frame written; nothing was "
        msg += "written. Round the column to microseconds in the task (e.g. .dt.floor('us')), or write format: "
        msg += "parquet (it keeps nanoseconds)"
        raise EngineError(msg)


def _existing_schema(io: IOConfig, path: str) -> pa.Schema | None:
    """The Arrow schema of the Delta table at ``path``, None when there is no table there yet. A table with a
    CHAR(n) column is refused: deltalake would store the frame's text, which Spark reads padded (the Spark engine
    refuses such a write too)."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    from ubunye.hashing.delta_files import spark_char_column

    try:
        table = DeltaTable(path, storage_options=io.storage_options or None)
    except TableNotFoundError:
        return None
    schema = table.schema()
    char = spark_char_column(schema.to_json())
    if char is not None:
        msg = f"output {io.name!r}: {char} in the Delta table at {path}, which Spark reads padded with spaces to "
        msg += "its length ('ab' as 'ab   ' in a char(5)) where deltalake stores the frame's text as it is, so the "
        msg += "data Spark reads would not be the frame the record hashes; nothing was written. Make the column a "
        msg += "STRING, or write the rows to another table"
        raise EngineError(msg)
    return pa.schema(schema.to_arrow())


def _refuse_casts(table: pa.Table, existing: pa.Schema, io: IOConfig, path: str) -> None:
    """deltalake casts the rows to the existing table's types, on overwrite and append alike: refuse a cast that
    changes a column's rows-v1 type (the record's schema and hash would be the frame's, not the data's, and a
    value may change: 2.7 as int64 is 2). A column missing on either side is named here too (deltalake refuses
    it with a less helpful message). A value that does not fit its type deltalake refuses itself."""
    where = f"the Delta table at {path}"
    frame = table.schema
    for name in frame.names:
        if name not in existing.names:
            msg = f"output {io.name!r}: column {name!r} of the frame is not in {where} (its columns: "
            msg += f"{', '.join(existing.names)}); Delta keeps a table's columns, on overwrite too: nothing was written"
            raise EngineError(msg)
    for name in existing.names:
        if name not in frame.names:
            msg = f"output {io.name!r}: column {name!r} of {where} is not in the frame (its columns: "
            msg += f"{', '.join(frame.names)}); Delta keeps a table's columns, on overwrite too: nothing "
            msg += "was written"
            raise EngineError(msg)
    for field in frame:
        if pa.types.is_null(field.type):
            continue  # a column without a value (an all-null day) takes the table's type and loses nothing
        # rows-v1 names alike what stores alike (string and large_string, any time zone, any unit: nanoseconds
        # are checked above), so those casts pass; a type with no rows-v1 name is compared by Arrow's name.
        was, now = type_text(field.type, field.name), type_text(existing.field(field.name).type, field.name)
        if was != now:
            msg = f"output {io.name!r}: column {field.name!r} is {was} in the frame but {now} in {where}: "
            msg += f"deltalake would cast it to {now}, so the data would not be the frame the record hashes; "
            msg += "nothing was written, the table is as it was. Cast the column to "
            msg += f"{now} in the task, or write the new type to another table (Delta keeps a table's types, on "
            msg += "overwrite too)"
            raise EngineError(msg)


def timestamp_of(io: IOConfig) -> datetime.datetime | None:
    """The instant io.timestamp names (ISO 8601, UTC when it names no zone), or None: what a Delta read of ``io``
    travels back to.

    Example:
        >>> from ubunye.config import IOConfig
        >>> timestamp_of(IOConfig("t", format="delta", timestamp="2024-05-01T12:00:00Z")).isoformat()
        '2024-05-01T12:00:00+00:00'
    """
    if io.timestamp is None:
        return None
    stamp = parse_time(io.timestamp)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=datetime.timezone.utc)


def open_table(io: IOConfig, path: str) -> DeltaTable:
    """The Delta table at ``path`` as a read of ``io`` sees it: at io.version, or as of io.timestamp, else latest."""
    from deltalake import DeltaTable

    from ubunye.hashing.delta_files import check_deltalake_path

    check_deltalake_path(path, f"Delta table {io.name!r}")
    table = DeltaTable(path, storage_options=io.storage_options or None)
    if io.version is not None:
        # Checked against the latest first: deltalake asked for a version far beyond it (2**63 - 1) searches
        # for it without end.
        latest = table.version()
        if io.version > latest:
            msg = f"version {io.version} does not exist (the latest is {latest})"
            raise ValueError(msg)
        if io.version != latest:
            table.load_as_version(io.version)
    stamp = timestamp_of(io)
    if stamp is not None:
        # The commits' times from the latest snapshot: a snapshot loaded as of a version mislabels its history
        # (deltalake 1.6.6).
        times = {h.get("version"): h.get("timestamp") for h in table.history()}
        # In UTC: deltalake parses the datetime's text, and refused an offset with seconds (+00:00:30).
        table.load_as_version(stamp.astimezone(datetime.timezone.utc))
        _check_at_or_before(table.version(), times, stamp)
    return table


def _check_at_or_before(loaded: int, times: dict[object, object], stamp: datetime.datetime) -> None:
    """Refuse a time before the version deltalake loaded for it: deltalake loads version 0 for a time before the
    table's first commit (the run recorded version 0 as if the table had existed then), where Spark refuses."""
    when = times.get(loaded)
    if isinstance(when, int) and when > stamp.timestamp() * 1000:
        msg = f"the table has no version at or before {stamp.isoformat()} (version {loaded}, its oldest there, "
        msg += f"was committed at {datetime.datetime.fromtimestamp(when / 1000, datetime.timezone.utc).isoformat()})"
        raise ValueError(msg)


def read_table(io: IOConfig, path: str) -> pa.Table:
    """The rows of the Delta table at ``path`` as a read of ``io`` sees them (see :func:`table_version`); a data
    file holding a date or timestamp Spark wrote in its legacy hybrid calendar, which this read takes for another
    day, is refused naming the input, the table, the file, the column and the value
    (ubunye.engines.legacy_dates.LegacyCalendarError).

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> path = tempfile.mkdtemp() + "/t"
        >>> write_delta(pa.table({"a": [1]}), IOConfig("t", format="delta"), path, lambda: None)
        0
        >>> read_table(IOConfig("t", format="delta"), path).to_pydict()
        {'a': [1]}
    """
    from ubunye.hashing.delta_files import (
        check_arrow_readable,
        deltalake_arrow,
        parquet_read_options,
        refuse_legacy_scanned,
    )

    what = f"input {io.name!r} (Delta at {path})"
    table = open_table(io, path)
    check_arrow_readable(table, what)
    with deltalake_arrow(what):
        # to_pyarrow_table() with INT96 timestamps read in microseconds, as Spark reads them (past 2262 too)
        dataset = table.to_pyarrow_dataset(parquet_read_options=parquet_read_options())
        rows = dataset.to_table()
    # A data file Spark wrote in its legacy hybrid calendar holding an old date was read as other days: refused,
    # from the footers the read took (no file is opened again unless its footer has Spark's legacy keys).
    refuse_legacy_scanned(dataset, what)
    return rows


def table_version(io: IOConfig, path: str) -> int:
    """The version of the Delta table at ``path`` a read of ``io`` sees: io.version when given (checked to
    exist), the version current at io.timestamp when given, else the latest. The runner reads that version
    (pinned), so the record names exactly the version that was read.

    Example:
        >>> import tempfile, pyarrow as pa
        >>> from ubunye.config import IOConfig
        >>> path = tempfile.mkdtemp() + "/t"
        >>> versions = [write_delta(pa.table({"a": [1]}), IOConfig("t", format="delta", mode="append"), path,
        ...                         lambda: None) for _ in range(2)]
        >>> table_version(IOConfig("t", format="delta"), path), table_version(IOConfig("t", version=0), path)
        (1, 0)
    """
    return int(open_table(io, path).version())


def dataset_version(io: IOConfig, base_dir: Path) -> int | None:
    """:func:`table_version` of a Delta path input or output, None for anything else: the in-process engines'
    ``delta_version``."""
    if io.format != "delta" or io.path is None:
        return None
    return table_version(io, resolve_path(io.path, base_dir))


__all__ = [
    "COMMIT_MARK",
    "committed_version",
    "dataset_version",
    "open_table",
    "read_table",
    "refuse_unfaithful",
    "table_version",
    "timestamp_of",
    "write_delta",
]
