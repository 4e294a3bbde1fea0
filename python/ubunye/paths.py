"""Where a task may sit and where its outputs may go: names and locations are input, checked before any use.

A task's identity is three plain folder names under the usecase folder (``-d``); an output may not be, hold, or
sit inside the usecase folder itself, a task folder or the record store, because an ``overwrite`` there would
replace code or receipts with data; nor may it delete the run's own inputs or a folder that is no dataset
(docs/tasks-and-records.md, "Paths").

Example:
    >>> plain_name("task", "orders")
    'orders'
    >>> plain_name("task", "../x")
    Traceback (most recent call last):
    ...
    ubunye.exceptions.ConfigError: task '../x' is not a plain folder name (no separator, leading '.' or control ...
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path, PurePath, PurePosixPath
from typing import TYPE_CHECKING

from ubunye.engines.paths import home_expanded, is_hidden, is_url, literal_parts, local_path, reserved_part
from ubunye.exceptions import ConfigError, EngineError
from ubunye.lineage.record import MAX_NAME_BYTES, printable, unsafe_name
from ubunye.lineage.store import LINEAGE_DIR

if TYPE_CHECKING:
    from ubunye.config import IOConfig, TaskConfig

log = logging.getLogger("ubunye")

#: The folder under the usecase folder that holds the record store (and anything ubunye keeps later): the
#: first part of the store's own LINEAGE_DIR, so the two cannot drift apart.
RECORDS_FOLDER = LINEAGE_DIR.parts[0]

_BAD_NAME = re.compile(r"[/\\\x00-\x1f\x7f-\x9f]")
#: The longest file name most filesystems take (NAME_MAX), and what an output's own name may use of it: its
#: siblings are named ``.<name>.ubunye-staging-<unique>`` (engines.paths: 20 digits, a pid of up to 7, 8 hex),
#: 54 bytes more, and a name too long for them failed only at write time, after the transform ran.
_NAME_MAX = 255
_NAME_ROOM = _NAME_MAX - len(".") - len(".ubunye-staging-") - (20 + 1 + 7 + 1 + 8)


def plain_name(kind: str, value: object) -> str:
    """``value`` if it is one plain folder name, else a ConfigError naming ``kind`` and the value (escaped).

    The record's own rule (``lineage.record.unsafe_name``), so a name the record would refuse is refused here,
    before anything runs, not by the record store once the run has started (or never, without lineage).
    """
    if not isinstance(value, str):
        msg = f"{kind} must be a folder name (a string), got {type(value).__name__}"
        raise ConfigError(msg)
    problem = unsafe_name(value)
    if problem is None:
        return value
    # repr escapes what a terminal would act on (U+202E, U+200B, C1 controls), printable what shows as nothing (U+3164)
    if not value or value.startswith(".") or _BAD_NAME.search(value):
        # A leading "." also refuses ".ubunye": the record store is never a usecase.
        why = "no separator, leading '.' or control character"
    elif problem.startswith("longer"):
        why = f"{len(value.encode('utf-8', 'surrogatepass'))} bytes: a run record holds at most {MAX_NAME_BYTES}"
    else:
        why = f"{problem}, an invisible or formatting character: it would not show as written"
    raise ConfigError(f"{kind} {printable(repr(value))} is not a plain folder name ({why})")


def task_folder(usecase_dir: str | Path, usecase: object, package: object, task: object) -> Path:
    """``<usecase_dir>/<usecase>/<package>/<task>``, each name plain and the folder really inside usecase_dir.

    Example:
        >>> task_folder("/nonexistent", "shop", "daily", "..")
        Traceback (most recent call last):
        ...
        ubunye.exceptions.ConfigError: task '..' is not a plain folder name (no separator, leading '.' or control ...
    """
    fspath = os.fspath(usecase_dir) if isinstance(usecase_dir, os.PathLike) else usecase_dir
    if not isinstance(fspath, str) or not fspath.strip():
        shown = f"{type(usecase_dir).__name__} {usecase_dir!r}"[:200]
        raise ConfigError(f"usecase folder: expected a path (str or os.PathLike), got {shown}")
    names = [plain_name("usecase", usecase), plain_name("package", package), plain_name("task", task)]
    try:  # a leading ~ is the home folder, as for run_task's task folder
        root = home_expanded(usecase_dir)
    except ValueError as exc:
        raise ConfigError(f"usecase folder: {exc}") from None
    folder = root.joinpath(*names)
    if not folder.is_dir():
        msg = f"{folder}: no such task folder (expected <usecase_dir>/<usecase>/<package>/<task>)"
        raise ConfigError(msg)
    # A symlinked usecase, package or task may point anywhere: the task must still lie inside -d.
    if not _inside(folder.resolve(), root.resolve()):
        msg = f"{folder}: resolves to {folder.resolve()}, outside the usecase folder {root.resolve()}"
        raise ConfigError(msg)
    return folder


def check_task_dir(task_dir: Path) -> tuple[Path, str, str, str]:
    """``(usecase_dir, usecase, package, task)`` of a resolved task folder, each name checked to be plain."""
    if len(task_dir.parents) < 3:
        msg = f"{task_dir}: a task folder is <usecase_dir>/<usecase>/<package>/<task>; this path is too short"
        raise ConfigError(msg)
    usecase_dir = task_dir.parents[2]
    names = (task_dir.parents[1].name, task_dir.parent.name, task_dir.name)
    for kind, name in zip(("usecase", "package", "task"), names, strict=True):
        plain_name(kind, name)
    return usecase_dir, *names


def _local(where: str) -> Path | None:
    """The local path of a recorded location, None for catalog tables and URLs other than ``file://``."""
    return None if where.startswith("table:") else local_path(where)


def check_outputs(
    config: TaskConfig, usecase_dir: Path, locations: dict[str, str], inputs: dict[str, str] | None = None
) -> None:
    """Refuse outputs that would overwrite the usecase folder, a task folder, the record store, each other or the
    run's own inputs (:func:`_input_clash`), an overwrite of a folder that is no dataset (:func:`_not_a_dataset`),
    and outputs named like ubunye's own hidden files (``engines.paths.reserved_part``), which other writers delete.

    ``locations`` maps each output name to its resolved location (``ubunye.engines.location``), ``inputs`` each
    input name to its own. ``storage_options`` on a local location are warned of, not refused
    (:func:`_warn_unused_storage_options`).
    """
    read = _input_paths(config.path, inputs or {})
    root = usecase_dir.resolve()
    tasks = _task_folders(root)
    seen: dict[PurePath, str] = {}
    for name, where in locations.items():
        key = f"CONFIG.outputs.{name}.path"
        try:
            given = _local(where)
        except EngineError as exc:  # a file:// URL with a query: named here, before anything runs
            raise ConfigError(f"{config.path}: {key}: {exc}") from None
        local: Path | None = None
        why = None
        if given is None:  # a URL: only the clashes with inputs and other outputs below apply
            try:
                path: PurePath | None = _url_place(where)
            except ValueError as exc:
                raise ConfigError(f"{config.path}: {key}: {exc}") from None
        else:
            local = path = given.resolve()
            why = _local_clash(given, local, root, tasks)
        if path is None:
            continue  # a catalog table: the catalog says where it lives
        io = config.outputs.get(name)
        if why is None and io is not None:
            # A Delta overwrite deletes no file (it commits a version), and its data folders need no name=value
            # (column mapping's random prefixes)
            wipes = io.mode == "overwrite" and io.format != "delta"
            formats = {n: i.format for n, i in config.inputs.items()}
            why = _input_clash(path, io, read, formats) or (_not_a_dataset(local) if wipes and local else None)
        if why is None and path in seen:
            why = f"is also the location of output {seen[path]!r}"
        for other, other_name in seen.items():
            if why is None and _inside(path, other) and path != other:
                why = f"is inside the location of output {other_name!r}"
            elif why is None and _inside(other, path) and path != other:
                why = f"holds the location of output {other_name!r}"
        if why:
            msg = f"{config.path}: {key}: {_shown(path)} {why}; an output must be a folder of its own"
            raise ConfigError(msg)
        seen[path] = name
    _warn_unused_storage_options(config, "inputs", inputs or {})
    _warn_unused_storage_options(config, "outputs", locations)


def _warn_unused_storage_options(config: TaskConfig, side: str, locations: dict[str, str]) -> None:
    """Log one warning per dataset of ``side`` whose ``storage_options`` meet a local location (a plain path,
    ``file://``, ``/dbfs/``, ``/Volumes/``): every engine reads and writes it without them. Not refused: one
    config often serves a local path in development and an ``s3://`` one in production, with the same options."""
    datasets = config.inputs if side == "inputs" else config.outputs
    verb = "read" if side == "inputs" else "written"
    for name, where in locations.items():
        io = datasets.get(name)
        if io is None or not io.storage_options:
            continue
        try:
            local = _local(where)
        except EngineError:  # a file:// URL with a query: refused by its read or check_outputs, naming it
            continue
        if local is not None:  # the values may be secrets: the key is named, never its values
            log.warning(
                "%s: CONFIG.%s.%s.storage_options: not used: %s is a local path, %s without them (they apply to "
                "object-store URLs such as s3://)",
                config.path, side, name, local, verb,
            )  # fmt: skip


def _local_clash(given: Path, local: Path, root: Path, tasks: list[Path]) -> str | None:
    """Why a local output at ``given`` (``local`` resolved) would replace what is no data, else None: one of
    ubunye's own hidden files, a name too long for the siblings written beside it, the usecase folder, the record
    store (under ``root``, the resolved usecase folder) or a task folder (``tasks``)."""
    reserved = reserved_part(given) or reserved_part(local)
    if reserved is not None:  # another output's writer deletes such a name as the leftover of a killed run
        why = f"is named like ubunye's own hidden files ({reserved!r}: a staging, old or trash sibling, lock file "
        return why + "or unfinished part of another output)"
    if len(os.fsencode(given.name)) > _NAME_ROOM:
        return (
            f"ends in a name of {len(os.fsencode(given.name))} bytes: the staging, trash and lock names ubunye "
            f"writes beside it add up to {_NAME_MAX - _NAME_ROOM} bytes, over the 255-byte limit of one name; at "
            f"most {_NAME_ROOM} bytes"
        )
    if _inside(root, local):
        return "is the usecase folder or holds it" if local != root else "is the usecase folder"
    records = root / RECORDS_FOLDER
    if _inside(local, records):
        return f"is inside the record store {records}"
    for task in tasks:
        if _inside(local, task):
            return f"is inside the task folder {task}"
        if _inside(task, local):
            return f"holds the task folder {task}"
    return None


def _input_paths(config_path: Path, inputs: dict[str, str]) -> dict[str, PurePath]:
    """The place of each input that has one: its resolved local path, or its URL's place (:func:`_url_place`).
    A location ``local_path`` refuses (a ``file://`` URL with a query) is left to the input's read, which refuses
    it naming the input; a URL with no one place is refused here, naming the config and key."""
    paths: dict[str, PurePath] = {}
    for name, where in inputs.items():
        try:
            path = _local(where)
        except EngineError:
            continue
        if path is not None:
            paths[name] = path.resolve()
            continue
        try:
            place = _url_place(where)
        except ValueError as exc:
            raise ConfigError(f"{config_path}: CONFIG.inputs.{name}.path: {exc}") from None
        if place is not None:
            paths[name] = place
    return paths


#: URL schemes that name one namespace: Hadoop's connectors and fsspec spell the same bucket several ways.
_SAME_STORE = {"s3a": "s3", "s3n": "s3", "gcs": "gs", "abfss": "abfs", "wasbs": "wasb"}


def _url_place(where: str) -> PurePosixPath | None:
    """Where an object-store URL points, comparable with :func:`_inside` and ``==``; None for a catalog table.

    ``s3://b/x/``, ``s3a://b/x``, ``s3://b//x`` and ``s3://b/y/../x`` are one place (no connector keeps an empty
    key part or tells the schemes apart, and Hadoop's Path and deltalake resolve ``.`` and ``..``). A user name
    stays (``abfss://container@account...`` names the container) and a password goes (it is no part of where, and
    the place may be shown). The root is ``//``, which a resolved local path never has (POSIX keeps a leading
    ``//`` apart from ``/``), so a URL's place never equals a local one.

    The key is the URL's path as written (``engines.paths.literal_parts``), as every reader takes it: ``s3://b/t?x``
    and ``s3://b/t#x`` are the keys ``t?x`` and ``t#x``, not ``t``, and ``t%20x`` is not ``t x`` (deltalake alone
    reads them as URL syntax, and is refused them: ``hashing.delta_files.check_deltalake_path``).

    Example:
        >>> _url_place("s3a://b/y/../x/") == _url_place("s3://b//x"), _url_place("table:db.t")
        (True, None)
        >>> _url_place("s3://b/t?x") == _url_place("s3://b/t")
        False

    Raises:
        ValueError: a ``..`` above the bucket (``s3://b/../x``): Hadoop's Path keeps it as a key part named
            ``..`` where a resolving client would climb, so it names no one place.
    """
    if not is_url(where):
        return None
    scheme, authority, key = literal_parts(where)
    scheme = scheme.lower()
    user, at, host = authority.rpartition("@")
    host = user.partition(":")[0] + at + host
    keys: list[str] = []
    for part in key.split("/"):
        if part == "..":
            if not keys:
                msg = f"the key {'/' + key!r} climbs above the root of {scheme}://{host} ('..' past the bucket, which "
                raise ValueError(msg + "Spark keeps as a key named '..'): write the path without it")
            keys.pop()
        elif part not in ("", "."):
            keys.append(part)
    return PurePosixPath("//", _SAME_STORE.get(scheme, scheme), host or "-", *keys)


def _shown(place: PurePath) -> str:
    """A place as the user wrote its kind: a local path as it is, a URL's place as ``scheme://host/key``."""
    if place.parts[0] != "//":
        return str(place)
    scheme, host, *keys = place.parts[1:]
    return f"{scheme}://{host}/" + "/".join(keys)


#: Why a Delta write (overwrite or append) onto an input that is not that same Delta table spoils it.
_MIXED = (
    "Delta writes its log and data files among the input's, which would then no longer read as it did (only the "
    "Delta table read, at this same location, keeps the version read in its history)"
)


def _input_clash(
    path: PurePath, io: IOConfig, inputs: dict[str, PurePath], formats: dict[str, str | None]
) -> str | None:
    """Why the output at ``path`` would destroy an input of its own run, else None (``formats``: each input's).

    An overwrite may neither replace an input, nor a folder holding one, nor a folder inside one. An append
    deletes nothing (read a dataset, add rows to it; or add a partition beside the one read), nor does a Delta
    write to the Delta table read (it adds a version, and the one read stays in the table's history). A Delta
    write, overwrite or append, to anything else read (a parquet folder, a folder holding an input) writes its log
    and data files among the input's, which then no longer reads as it did: the next run's read of it fails or
    reads other rows.
    """
    delta = io.format == "delta"
    for name, source in inputs.items():
        if delta and source == path and formats.get(name) == "delta":
            continue  # the same Delta table: the version read stays in its history
        if io.mode != "overwrite" and not (delta and _inside(source, path)):
            continue  # an append adds files beside the input's (data/t with input data/t/dt=1): nothing is deleted
        if delta and io.mode != "overwrite":
            held = f"is the location of input {name!r} ({formats.get(name)})"
            if source != path:
                held = f"holds the location of input {name!r} ({_shown(source)})"
            why = f"{held}, which its Delta append would "
            return why + "spoil: " + _MIXED
        if source != path and _inside(source, path):
            if delta:
                why = f"holds the location of input {name!r} ({_shown(source)}), which its Delta overwrite would "
                return why + "spoil: " + _MIXED
            return f"holds the location of input {name!r} ({_shown(source)}), which its overwrite would delete"
        if source == path:
            if delta:
                fmt = formats.get(name)
                return f"is the location of input {name!r} ({fmt}), which its Delta overwrite would spoil: " + _MIXED
            return f"is the location of input {name!r}, which its overwrite would delete (mode: append adds to it)"
        if source != path and _inside(path, source):
            return f"is inside the location of input {name!r} ({_shown(source)}), whose data its overwrite would delete"
    return None


def _not_a_dataset(path: Path) -> str | None:
    """Why an overwrite at ``path`` would delete what is no output's data, else None.

    An overwrite replaces the folder whole (as Spark's does), so whatever it holds is deleted. A folder any engine
    writes holds data files, hidden files (``_delta_log``, ``_SUCCESS``) and ``name=value`` partitions only; a
    visible folder of another name (``notes/``, another dataset) is no part of an output, and no reader reads it
    as one (docs/tasks-and-records.md, "Inputs are not guessed"), so it is not deleted silently.
    """
    # Partitions nest (a=1/b=2/): a folder of another name at any depth inside them is deleted alike.
    stack: list[tuple[Path, str]] = [(path, "")]
    while stack:
        folder, shown = stack.pop()
        for entry in _entries(folder):
            if not _is_visible_dir(entry) or is_hidden(entry.name):
                continue
            name = shown + entry.name
            if "=" not in entry.name:
                return f"holds the folder {name!r}, which is not a partition (name=value): an overwrite would delete it"
            if not entry.is_symlink():  # a link is deleted, not what it points to (and may point back up)
                stack.append((Path(entry.path), name + "/"))
    return None


def check_schemes(config: TaskConfig) -> None:
    """Refuse a path that starts like a URL but is none an engine opens (``jdbc:postgresql://h/db``).

    Taken as a local path it would become folders named after the connection string, password included.

    Example:
        >>> _scheme_like("jdbc:postgresql://h/db"), _scheme_like("data/x"), _scheme_like("s3://b/k")
        ('jdbc', None, None)
    """
    for side, datasets in (("inputs", config.inputs), ("outputs", config.outputs)):
        for name, io in datasets.items():
            scheme = _scheme_like(io.path or "")
            if scheme is not None:
                msg = (
                    f"{config.path}: CONFIG.{side}.{name}.path: starts with {scheme + ':'!r}, which is neither a "
                    "local path nor a URL (scheme://...) an engine opens"
                )
                raise ConfigError(msg)


def check_template_vars(**values: object) -> None:
    """dt, dtf and mode are strings (or omitted) of at most 255 characters: they become folder names.

    Not empty (it would render as "" where the config's ``default(...)`` was meant to apply: leave the variable
    out, None, for that) and UTF-8 text (``os.fsdecode`` keeps an undecodable byte as a lone surrogate, which no
    record can hold), as the command line checks them.

    Example:
        >>> check_template_vars(dt=5)
        Traceback (most recent call last):
        ...
        ubunye.exceptions.ConfigError: template variable dt must be a string, got int
    """
    for key, value in values.items():
        if value is None:
            continue
        if not isinstance(value, str):
            msg = f"template variable {key} must be a string, got {type(value).__name__}"
            raise ConfigError(msg)
        if len(value) > 255:
            msg = f"template variable {key} is {len(value)} characters long; at most 255 (it may name a folder)"
            raise ConfigError(msg)
        if value == "":
            msg = f"template variable {key} is empty: give a value, or None for the config's default"
            raise ConfigError(msg)
        bad = next((c for c in value if "\ud800" <= c <= "\udfff"), None)
        if bad is not None:
            msg = f"template variable {key} holds the lone surrogate U+{ord(bad):04X}, which is not text a record "
            msg += "can hold"
            raise ConfigError(msg)


def _scheme_like(path: str) -> str | None:
    head = path.split("/", 1)[0]
    if ":" not in head or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path):
        return None
    return head.split(":", 1)[0]  # only the scheme: what follows may be a user and password


def _task_folders(root: Path) -> list[Path]:
    """Every ``<root>/<usecase>/<package>/<task>`` holding a config.yaml, resolved.

    Not ``root.glob``: it enters hidden folders too, such as another run's staging folder, which may vanish
    while being listed (FileNotFoundError); hidden names are never identity parts, so they are skipped.
    """
    level = [root]
    for _ in range(3):
        level = [Path(e.path) for folder in level for e in _entries(folder) if _is_visible_dir(e)]
    return [folder.resolve() for folder in level if (folder / "config.yaml").is_file()]


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:  # gone or unreadable meanwhile: it holds no task we could run
        return []


def _is_visible_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return not entry.name.startswith(".") and entry.is_dir()
    except OSError:
        return False


def _inside(path: PurePath, folder: PurePath) -> bool:
    return path == folder or folder in path.parents


__all__ = [
    "RECORDS_FOLDER",
    "check_outputs",
    "check_schemes",
    "check_task_dir",
    "check_template_vars",
    "plain_name",
    "task_folder",
]
