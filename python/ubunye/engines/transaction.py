"""Outputs are transactional: a folder output is replaced whole or not at all, an append adds a whole part or none.

Every write of a local folder output (parquet, csv, json; a plain path or ``file://``) runs under the output's
lock (:func:`ubunye.engines.locks.output_lock`) and in this order:

1. tidy up after a killed run: restore an ``-old-`` sibling if the output is missing (:func:`swap.recover`), then
   delete leftover ``-staging-``/``-trash-`` siblings, ``-old-`` ones beside a present output, and hidden
   ``.part-*.ubunye.tmp`` files inside it;
2. write the complete new data into ``.<name>.ubunye-staging-<unique>`` beside the output (same filesystem);
3. fsync every file and folder of it;
4. call ``before_commit`` (the runner writes its checkpoint record there); if it raises, the staging is deleted
   and the exception propagates unchanged;
5. swap it in (:func:`swap.swap_in`: ``renameat2(RENAME_EXCHANGE)``, else two renames), fsync the parent (the
   commit is the rename: an fsync failing after it is a warning, not a failed write);
6. only then delete the old data.

A failure or kill before step 5 leaves the old output as it was; after it, the new one. An output location that
is a file (not a folder) is refused, overwrite and append alike (:func:`refuse_file_at`): it may be someone's
data. :func:`refuse_unwritable` and :func:`refuse_columns` refuse, before anything is written, what the
in-process engines cannot write so that it reads back as written.

Example:
    >>> import tempfile
    >>> from ubunye.config import IOConfig
    >>> out = Path(tempfile.mkdtemp()) / "out"
    >>> with overwrite(IOConfig("o", format="csv"), out, CommitHook(None)) as staging:
    ...     _ = (staging / "part-0.csv").write_text("a\\n1\\n")
    >>> sorted(p.name for p in out.parent.iterdir())
    ['.out.ubunye.lock', 'out']
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from ubunye.engines.locks import output_lock
from ubunye.engines.paths import local_path, refuse_reserved, sibling, siblings, unique
from ubunye.engines.swap import discard, fsync_dir, fsync_tree, recover, swap_in
from ubunye.exceptions import EngineError, HashError, error_text
from ubunye.hashing.types import type_name

if TYPE_CHECKING:
    from ubunye.config import IOConfig

log = logging.getLogger("ubunye")

_TMP_PART = re.compile(r"^\.part-[0-9a-f]{32}\..*\.ubunye\.tmp$")


class CommitHook:
    """Wraps ``before_commit``: calls it once, and remembers what it raised so the engine re-raises it unchanged.

    Example:
        >>> hook = CommitHook(lambda: None)
        >>> hook(); hook.called, hook.raised
        (True, None)
    """

    def __init__(self, func: Callable[[], None] | None) -> None:
        self.func = func
        self.called = False
        self.raised: BaseException | None = None

    def __call__(self) -> None:
        self.called = True
        if self.func is None:
            return
        try:
            self.func()
        except BaseException as exc:
            self.raised = exc
            raise


def part_name(fmt: str) -> str:
    """A part file's name, as Spark names them: ``part-<32 hex>.<format>``.

    Example:
        >>> part_name("csv").startswith("part-") and part_name("csv").endswith(".csv")
        True
    """
    return f"part-{uuid.uuid4().hex}.{fmt}"


def target_of(folder: Path) -> Path:
    """Where the data goes: a symlinked output location is written at the link's target (the link stays).

    Example:
        >>> target_of(Path("/nonexistent/out"))
        PosixPath('/nonexistent/out')
    """
    return Path(os.path.realpath(folder)) if folder.is_symlink() else folder


def tidy(folder: Path) -> None:
    """Step 1 (call it holding the lock): recover a cut-short swap, then delete what killed runs left behind.

    Example:
        >>> tidy(Path("/nonexistent/out"))
    """
    recover(folder)
    for leftover in siblings(folder, "staging") + siblings(folder, "trash"):
        _delete(leftover)
    if os.path.lexists(folder):
        for old in siblings(folder, "old"):  # the swap finished; the deletion of the old data did not
            _delete(old)
    if folder.is_dir():
        for name in os.listdir(folder):
            if _TMP_PART.match(name):
                _delete(folder / name)


@contextmanager
def overwrite(io: IOConfig, folder: Path, hook: CommitHook) -> Iterator[Path]:
    """Lock, tidy, and yield an empty staging folder to write the complete new output into; then commit it.

    Leaving the block normally runs steps 3-6; an exception in the block (or in the hook) deletes the staging and
    propagates, leaving the output as it was.

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> out = Path(tempfile.mkdtemp()) / "out"
        >>> with overwrite(IOConfig("o", format="csv"), out, CommitHook(None)) as staging:
        ...     _ = (staging / "part-0.csv").write_text("a\\n1\\n")
        >>> [p.name for p in out.iterdir()]
        ['part-0.csv']
    """
    target = target_of(folder)
    with output_lock(str(target)):  # the folder written, not the link: every spelling of it takes one lock
        tidy(target)
        refuse_file_at(io, folder)
        with staged(target) as staging:
            yield staging
            commit(staging, target, hook)


@contextmanager
def append(io: IOConfig, folder: Path, hook: CommitHook) -> Iterator[Path]:
    """Lock, tidy, and yield the path of one new part file; then make it visible by one rename.

    The part is written under a hidden name (``.part-<hex>.<fmt>.ubunye.tmp``, which readers skip) inside the
    folder, fsynced, and renamed to ``part-<hex>.<fmt>`` after the hook. A missing folder is created whole,
    through the staging swap, so no reader ever sees it empty.

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> out = Path(tempfile.mkdtemp()) / "out"
        >>> for _ in range(2):
        ...     with append(IOConfig("o", format="csv"), out, CommitHook(None)) as part:
        ...         _ = part.write_text("a\\n1\\n")
        >>> len(list(out.iterdir()))
        2
    """
    target = target_of(folder)
    with output_lock(str(target)):  # the folder written, not the link: every spelling of it takes one lock
        tidy(target)
        refuse_file_at(io, folder)
        name = part_name(io.format or "data")
        if not target.is_dir():
            with staged(target) as staging:
                yield staging / name
                commit(staging, target, hook)
            return
        temp = target / f".{name}.ubunye.tmp"
        try:
            yield temp
            fsync_tree(temp)
            hook()
            os.rename(temp, target / name)
        except BaseException:
            _delete(temp)
            raise
        _synced_after_commit(target)


@contextmanager
def merge(io: IOConfig, folder: Path, hook: CommitHook, *, partitions_only: bool = False) -> Iterator[Path]:
    """Append for writers of many files (Spark): yield a staging folder for the new files; then swap in a folder
    holding the existing files (hard links: no copy) and the new ones, so readers see all of the append or none.

    ``partitions_only``: Spark's dynamic partition overwrite: keep only the existing partition folders the new data
    has none of (the written partitions are replaced, the others kept).

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> out = Path(tempfile.mkdtemp()) / "out"
        >>> for n in range(2):
        ...     with merge(IOConfig("o", format="csv"), out, CommitHook(None)) as staging:
        ...         _ = (staging / f"part-{n}.csv").write_text("a\\n1\\n")
        >>> sorted(p.name for p in out.iterdir())
        ['part-0.csv', 'part-1.csv']
    """
    target = target_of(folder)
    with output_lock(str(target)):  # the folder written, not the link: every spelling of it takes one lock
        tidy(target)
        refuse_file_at(io, folder)
        with staged(target) as staging:
            yield staging
            if target.is_dir():
                _link_tree(target, staging, partitions_only)
            commit(staging, target, hook)


@contextmanager
def staged(target: Path) -> Iterator[Path]:
    """A fresh, empty staging sibling of ``target``, deleted again unless it was swapped in.

    Example:
        >>> import tempfile
        >>> with staged(Path(tempfile.mkdtemp()) / "out") as staging:
        ...     staging.name.startswith(".out.ubunye-staging-"), staging.is_dir()
        (True, True)
        >>> staging.exists()
        False
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = sibling(target, "staging", unique())
    staging.mkdir()
    try:
        yield staging
    finally:
        _delete(staging)  # after a commit the name holds the old data (or nothing): deleted either way


def commit(staging: Path, target: Path, hook: CommitHook) -> None:
    """Steps 3-6: fsync the staging, call the hook, swap it in, make the swap durable, delete the old data.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp()); (root / ".s").mkdir()
        >>> commit(root / ".s", root / "out", CommitHook(None)); (root / "out").is_dir()
        True
    """
    fsync_tree(staging)
    hook()
    old = swap_in(staging, target)
    _synced_after_commit(target.parent)
    if old is not None and old != staging:  # the fallback set the old output aside under an -old- name
        _delete(old)


def _synced_after_commit(folder: Path) -> None:
    """fsync ``folder`` after the rename that committed the output. The rename is done: the new data is what
    every reader sees, so a failing fsync is not a failed write (the old data is gone from the output's name,
    and a run saying "not written" would be believed and retried: an append twice). Said as a warning: a
    crash of the machine before the kernel writes the folder back could still lose the rename."""
    try:
        fsync_dir(folder)
    except OSError as exc:
        log.warning("the output in %s was committed, but the folder could not be synced to disk: %s", folder, exc)


def write_parts(io: IOConfig, where: str, engine: str, write_part: Callable[[Path], None], hook: CommitHook) -> None:
    """Write one part file (``write_part(path)``) as an overwrite or append of the folder output at ``where``.

    The in-process engines (pandas, polars) write a folder of one part file per write. Outputs at URLs other than
    ``file://`` are refused: overwrite (see :func:`refuse_remote_overwrite`) and append alike, as these engines
    write through local files.

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> out = tempfile.mkdtemp() + "/o"
        >>> part = lambda p: p.write_text("a\\n1\\n")
        >>> write_parts(IOConfig("o", format="csv"), out, "pandas", part, CommitHook(None))
        >>> [p.suffix for p in Path(out).iterdir()]
        ['.csv']
    """
    refuse_unwritable(io, where, engine)
    folder = local_path(where)
    assert folder is not None  # refuse_unwritable refused every other URL
    if io.mode == "overwrite":
        with overwrite(io, folder, hook) as staging:
            write_part(staging / part_name(io.format or "data"))
    else:
        with append(io, folder, hook) as part:
            write_part(part)


def refuse_file_at(io: IOConfig, folder: Path) -> None:
    """Raise EngineError if the output location (or a symlink's target) is a file, not a folder.

    Overwrite refuses too, not only append: a file there is not an output ubunye wrote (those are folders), so
    replacing it could delete data nobody meant to lose.

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> f = Path(tempfile.mkdtemp()) / "out"; _ = f.write_text("keep me")
        >>> refuse_file_at(IOConfig("out", format="csv"), f)
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: output 'out': .../out is a file, not an output folder; move it away or ...
    """
    target = target_of(folder)
    if not os.path.lexists(target):
        # a file where a folder above it goes: found now, not by the lock's mkdir after the transform ran
        above = next((p for p in target.parents if os.path.lexists(p)), None)
        if above is not None and not above.is_dir():
            msg = f"output {io.name!r}: {above} is a file, so no output folder can be made at {folder}; "
            msg += "move it away or choose another path"
            raise EngineError(msg)
        return
    if target.is_dir():
        return
    if io.mode == "append":
        msg = f"output {io.name!r}: {folder} is a file; append needs a folder of part files"
    else:
        msg = f"output {io.name!r}: {folder} is a file, not an output folder; move it away or choose another path"
    raise EngineError(msg)


def refuse_unwritable(io: IOConfig, where: str, engine: str) -> None:
    """Raise EngineError if the in-process engine ``engine`` (pandas, polars) cannot write this output at ``where``.

    Needs only the config and the location (no frame), so the runner can call it before reading any input:
    catalog tables; parquet/csv/json at a URL other than ``file://`` (overwrite: no atomic rename there, see
    :func:`refuse_remote_overwrite`; append: these engines write local files); a location named like ubunye's
    own hidden files (``paths.refuse_reserved``); ``partition_by`` on
    parquet/csv/json (partition values come back with inferred types: an int64 ``id`` reads back as int32 on
    pyarrow, ``"007"`` as 7, so what is read would not hash as what was recorded; Delta keeps the types);
    a file where the output folder goes (:func:`refuse_file_at`), Delta included. Delta outputs are otherwise
    deltalake's to check.

    Example:
        >>> from ubunye.config import IOConfig
        >>> refuse_unwritable(IOConfig("out", format="parquet", partition_by=["id"]), "/d/out", "pandas")
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: output 'out': the pandas engine cannot write parquet partitioned by 'id' ...
    """
    if io.table is not None:
        msg = f"output {io.name!r}: catalog tables (table: {io.table}) need the spark engine"
        raise EngineError(msg)
    refuse_reserved(io, where)  # Delta too: another output's writer would delete it as its leftover
    folder = local_path(where)
    if io.format == "delta":
        if folder is not None:  # deltalake would fail only in the write ("Path does not exist"), after the transform
            refuse_file_at(io, folder)
        return
    if folder is None:
        if io.mode == "overwrite":
            refuse_remote_overwrite(io, where)
        msg = (
            f"output {io.name!r}: the {engine} engine writes {io.format} to local paths only (a path or file://), "
            f"not {where}: write format: delta there, or use the spark engine"
        )
        raise EngineError(msg)
    if io.partition_by:
        columns = ", ".join(repr(c) for c in io.partition_by)
        msg = (
            f"output {io.name!r}: the {engine} engine cannot write {io.format} partitioned by {columns} so that it "
            "reads back as written (partition values come back with guessed types, and the hash would not match "
            "the record): write format: delta (partition_by is kept, with its types), or use the spark engine"
        )
        raise EngineError(msg)
    refuse_file_at(io, folder)


#: Formats that hold text: what has no faithful text form is refused there (kind -> the formats refusing it).
_TEXT_REFUSES = {"binary": ("csv", "json"), "struct": ("csv",), "list": ("csv",), "map": ("csv", "json")}


def refuse_columns(io: IOConfig, schema: pa.Schema) -> None:
    """Raise EngineError naming the output and the column if the frame (its Arrow ``schema``) cannot be written.

    A ``partition_by`` column must be in the frame. csv and json hold text: binary would be written as text
    when it happens to be UTF-8 (and read back as a string, hashing differently) or fail halfway when not; csv
    has no nested values (struct, list, map), and json turns a map into a list of pairs.

    Example:
        >>> from ubunye.config import IOConfig
        >>> refuse_columns(IOConfig("out", format="csv"), pa.schema([("b", pa.binary())]))
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: output 'out': csv cannot hold column 'b' of type binary (use parquet or delta)
    """
    for column in io.partition_by:
        if column not in schema.names:
            msg = (
                f"output {io.name!r}: partition_by column {column!r} is not in the frame "
                f"(its columns: {', '.join(schema.names)})"
            )
            raise EngineError(msg)
    for field in schema:
        kind = _kind(field.type)
        if kind is not None and io.format in _TEXT_REFUSES[kind]:
            msg = f"output {io.name!r}: {io.format} cannot hold column {field.name!r} of type {kind} "
            msg += "(use parquet or delta)"
            raise EngineError(msg)


def type_text(dtype: pa.DataType, column: str) -> str:
    """The rows-v1 name of ``dtype`` (``string`` for string, large_string and string_view alike; ``timestamp``
    for any unit and zone), else Arrow's own name: two columns alike by this name hash alike, so a writer may
    store one as the other without changing the data's hash.

    Example:
        >>> type_text(pa.large_string(), "c"), type_text(pa.timestamp("ns", "Europe/Paris"), "c")
        ('string', 'timestamp')
        >>> type_text(pa.uint8(), "c")
        'uint8'
    """
    try:
        return type_name(dtype, column)
    except HashError:  # no rows-v1 type (unsigned, time of day...): the record holds no hash of it to compare
        return str(dtype)


def _kind(dtype: pa.DataType) -> str | None:
    """binary, struct, list or map (whatever Arrow's variant: large, view, fixed size), else None."""
    if pa.types.is_dictionary(dtype):
        dtype = dtype.value_type
    t = pa.types
    if t.is_binary(dtype) or t.is_large_binary(dtype) or t.is_fixed_size_binary(dtype) or _is(dtype, "binary_view"):
        return "binary"
    if t.is_map(dtype):  # before lists: a map is a list of pairs to Arrow
        return "map"
    if t.is_struct(dtype):
        return "struct"
    if t.is_list(dtype) or t.is_large_list(dtype) or t.is_fixed_size_list(dtype) or _is(dtype, "list_view"):
        return "list"
    if _is(dtype, "large_list_view"):
        return "list"
    return None


def _is(dtype: pa.DataType, name: str) -> bool:
    check = getattr(pa.types, f"is_{name}", None)  # newer pyarrow only (polars writes views)
    return bool(check is not None and check(dtype))


def write_error(io: IOConfig, where: str, exc: Exception, hook: CommitHook) -> BaseException:
    """What a failed write raises: the hook's own exception unchanged, an EngineError as is, else an EngineError
    naming the output, the format and the place.

    Example:
        >>> from ubunye.config import IOConfig
        >>> write_error(IOConfig("o", format="csv"), "/d/o", OSError(28, "No space left on device"), CommitHook(None))
        EngineError("output 'o': cannot write csv to /d/o: OSError: [Errno 28] No space left on device")
    """
    if hook.raised is not None:
        return hook.raised
    if isinstance(exc, EngineError):
        return exc
    return EngineError(f"output {io.name!r}: cannot write {io.format} to {where}: {error_text(exc)}")


def refuse_remote_overwrite(io: IOConfig, where: str) -> None:
    """Raise EngineError: a non-Delta output at a URL (other than ``file://``) cannot be overwritten safely.

    Object stores have no atomic rename (a "rename" is a copy per object), so any overwrite of a folder of files
    there lets a reader see old and new parts mixed, or none. Delta commits a new version atomically instead.

    Example:
        >>> from ubunye.config import IOConfig
        >>> refuse_remote_overwrite(IOConfig("o", format="parquet"), "s3://b/o")
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: output 'o': cannot overwrite parquet at s3://b/o safely: ...
    """
    msg = (
        f"output {io.name!r}: cannot overwrite {io.format} at {where} safely: that storage has no atomic rename, "
        "so a reader could see old and new files mixed, or none. Write format: delta there (its log commits "
        "each version atomically), or a local path"
    )
    raise EngineError(msg)


def _link_tree(source: Path, dest: Path, partitions_only: bool = False) -> None:
    """Hard-link every file under ``source`` into ``dest`` at the same relative path (new files win a clash).

    ``partitions_only``: only the files of folders ``dest`` does not have (a partition the new data did not write).
    """
    for here, _dirs, files in os.walk(source):
        rel = Path(here).relative_to(source)
        if partitions_only and (rel == Path(".") or (dest / rel).is_dir()):
            continue  # the top level's _SUCCESS and the partitions written anew come from the new data
        (dest / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            to = dest / rel / name
            if os.path.lexists(to):
                continue
            try:
                os.link(Path(here) / name, to)
            except OSError:  # a filesystem without hard links: copy (still staged, still swapped in whole)
                shutil.copy2(Path(here) / name, to)


def _delete(path: Path) -> None:
    """Delete what is not data; a failure is logged, not raised: it must not turn a committed write into an
    error, nor hide the error that made a write fail. The next writer tries again (:func:`tidy`)."""
    try:
        discard(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("could not delete %s (the next write of this output tries again): %s", path, exc)


__all__ = [
    "CommitHook",
    "append",
    "commit",
    "merge",
    "overwrite",
    "part_name",
    "refuse_columns",
    "refuse_file_at",
    "refuse_remote_overwrite",
    "refuse_unwritable",
    "staged",
    "target_of",
    "tidy",
    "type_text",
    "write_error",
    "write_parts",
]
