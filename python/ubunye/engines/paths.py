"""Where data lives: local paths versus URLs, and the hidden names ubunye keeps beside an output.

An output folder ``<parent>/<name>`` has siblings that are never data: ``.<name>.ubunye-staging-<unique>`` (a
write in progress), ``.<name>.ubunye-old-<unique>`` (the previous data, set aside by the fallback swap),
``.<name>.ubunye-trash-<unique>`` (being deleted) and ``.<name>.ubunye.lock`` (the lock file). Each starts with
``.``, so Spark, pyarrow and ubunye's own readers skip them.

Example:
    >>> local_path("file:///data/out"), local_path("s3://bucket/out"), local_path("/data/out")
    (PosixPath('/data/out'), None, PosixPath('/data/out'))
    >>> sibling(Path("/data/out"), "staging", "1")
    PosixPath('/data/.out.ubunye-staging-1')
"""

from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit

from ubunye.exceptions import EngineError

if TYPE_CHECKING:
    from ubunye.config import IOConfig

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
KINDS = ("staging", "old", "trash")


def home_expanded(path: str | Path) -> Path:
    """``path`` with a leading ``~`` or ``~user`` made the home folder, as a shell would.

    Raises:
        ValueError: ``~user`` names no user of this machine (Path.expanduser's RuntimeError, said plainly).

    Example:
        >>> home_expanded("~/x") == Path.home() / "x", home_expanded("a/~b")
        (True, PosixPath('a/~b'))
    """
    try:
        return Path(path).expanduser()
    except RuntimeError:  # "Could not determine home directory": ~nosuchuser, or no HOME and no passwd entry
        user = str(path).split("/", 1)[0][1:]
        who = f"user {user[:60]!r} (no such user on this machine)" if user else "this user"
        raise ValueError(f"{str(path)[:200]!r}: no home folder is known for {who}") from None


def is_url(path: str) -> bool:
    """True for ``s3://...``, ``abfss://...``, ``file:///...``: paths that are not resolved locally.

    Example:
        >>> is_url("s3://b/k"), is_url("data/x")
        (True, False)
    """
    return bool(_URL.match(path))


def literal_parts(url: str) -> tuple[str, str, str]:
    """The scheme, the authority (bucket, container) and the path of ``url``, the path as written: its ``%20`` is
    the three characters, and a ``?`` or ``#`` is part of it. It is the object's key every engine reads: polars
    (object_store, ``glob=False``) and Spark (Hadoop's ``Path`` of the text, whose ``toUri().getPath()`` is S3A's
    key) take ``s3a://b/t%20x`` as the key ``t%20x``, not ``t x``; so pandas and polars list and read it so too.

    Example:
        >>> literal_parts("s3://b/t%20x/é?#")
        ('s3', 'b', 't%20x/é?#')
    """
    scheme, _, rest = url.partition("://")
    authority, _, path = rest.partition("/")
    return scheme, authority, path


def escaped_url(url: str) -> str:
    """``url`` with its path %-escaped, for a parser that unescapes the path (pyarrow's ``FileSystem.from_uri``)
    to get back the key as written (:func:`literal_parts`). Given ``url`` itself, pyarrow read ``t%20x`` as the
    folder ``t x``, cut the path at ``#``, took ``?x`` for an option and refused a space or a non-ASCII letter.

    Example:
        >>> escaped_url("s3://b/t%20x/é?#")
        's3://b/t%2520x/%C3%A9%3F%23'
    """
    scheme, authority, path = literal_parts(url)
    return f"{scheme}://{authority}/{quote(path, safe='/')}"


def resolve_path(path: str, base_dir: Path) -> str:
    """A relative local path is taken relative to the usecase_dir; URLs and absolute paths are kept.

    Example:
        >>> resolve_path("data/x", Path("/u"))
        '/u/data/x'
    """
    if is_url(path) or Path(path).is_absolute():
        return path
    return str((base_dir / path).resolve())


def location(io: IOConfig, base_dir: Path) -> str:
    """Where an input or output lives, as recorded: the resolved path, or ``table:<name>``.

    Example:
        >>> from ubunye.config import IOConfig
        >>> location(IOConfig("t", table="db.t"), Path("/u"))
        'table:db.t'
    """
    if io.table is not None:
        return f"table:{io.table}"
    assert io.path is not None
    return resolve_path(io.path, base_dir)


def local_path(where: str) -> Path | None:
    """The local path ``where`` names (a plain path or a ``file://`` URL), or None for any other URL.

    Example:
        >>> local_path("file://localhost/tmp/a%20b")
        PosixPath('/tmp/a b')

    Raises:
        EngineError: a ``file://`` URL holding ``?`` or ``#`` (a query or fragment would be dropped, silently
            naming another path).
    """
    if not is_url(where):
        return Path(where)
    parts = urlsplit(where)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    if "?" in where or "#" in where:
        # A query or fragment is no part of the file's path: dropping it would write or read another folder.
        msg = (
            f"{where!r}: a file:// URL with a query or fragment ('?' or '#') names no file; write a '?' or "
            "'#' of the path itself as %3F or %23"
        )
        raise EngineError(msg)
    return Path(unquote(parts.path))


def unique() -> str:
    """A name part no other write uses: time first, so ``-old-`` siblings sort oldest first.

    Example:
        >>> len(unique().split("-"))
        3
    """
    return f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}"


def sibling(folder: Path, kind: str, tag: str) -> Path:
    """The hidden sibling of ``folder`` of one kind (staging, old, trash), in the same parent folder.

    The same parent means the same filesystem, so moving it in place is a rename, never a copy.

    Example:
        >>> sibling(Path("/d/out"), "old", "x").name
        '.out.ubunye-old-x'
    """
    assert kind in KINDS, kind
    return folder.parent / f".{folder.name}.ubunye-{kind}-{tag}"


def siblings(folder: Path, kind: str) -> list[Path]:
    """The existing siblings of one kind, sorted by name (oldest first, see :func:`unique`).

    Example:
        >>> siblings(Path("/nonexistent/out"), "staging")
        []
    """
    prefix = f".{folder.name}.ubunye-{kind}-"
    try:
        names = os.listdir(folder.parent)
    except FileNotFoundError:
        return []
    return sorted(folder.parent / n for n in names if n.startswith(prefix))


def lock_file(folder: Path) -> Path:
    """The lock file of an output location.

    Example:
        >>> lock_file(Path("/d/out"))
        PosixPath('/d/.out.ubunye.lock')
    """
    return folder.parent / f".{folder.name}.ubunye.lock"


#: The names ubunye gives its own files beside and inside an output (see the module docstring, and
#: ``transaction._TMP_PART``): a ``-staging-``/``-old-``/``-trash-`` sibling, a lock file, a hidden append part.
_RESERVED = re.compile(r"^\..*(\.ubunye-(staging|old|trash)-|\.ubunye\.lock$|\.ubunye\.tmp$)", re.DOTALL)


def reserved_part(path: Path) -> str | None:
    """The first component of ``path`` named like one of ubunye's own hidden files, else None.

    Another output's writer deletes such names as leftovers of a killed run (``transaction.tidy``), so data
    there would be lost; and a reader skips them.

    Example:
        >>> reserved_part(Path("/d/.o.ubunye-staging-mine")), reserved_part(Path("/d/.o.ubunye.lock/x"))
        ('.o.ubunye-staging-mine', '.o.ubunye.lock')
        >>> reserved_part(Path("/d/.hidden/o")) is None
        True
    """
    for part in path.parts:
        if _RESERVED.match(part):
            return part
    return None


def refuse_reserved(io: IOConfig, where: str) -> None:
    """Raise EngineError naming the output if its local location (as given, or symlinks resolved) passes through
    a name ubunye keeps for its own files (:func:`reserved_part`). Catalog tables and other URLs pass.

    Example:
        >>> from ubunye.config import IOConfig
        >>> refuse_reserved(IOConfig("o2", format="csv"), "/nonexistent/.o.ubunye-old-1")
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: output 'o2': /nonexistent/.o.ubunye-old-1 is named like ubunye's own ...
    """
    if where.startswith("table:"):
        return
    folder = local_path(where)
    if folder is None:
        return
    for path in (folder, Path(os.path.realpath(folder))):
        part = reserved_part(path)
        if part is not None:
            msg = (
                f"output {io.name!r}: {folder} is named like ubunye's own hidden files ({part!r}: the staging, old "
                "or trash sibling, lock file or unfinished part of another output), which the writer of that "
                "output deletes as a leftover; choose another name"
            )
            raise EngineError(msg)


def is_hidden(name: str) -> bool:
    """A file or folder name readers skip, as Spark does: ``.x``, ``_x`` (not a ``_k=v`` partition), ``x._COPYING_``.

    Example:
        >>> [is_hidden(n) for n in ["_SUCCESS", ".part-1.crc", "part-1.parquet", "_k=1"]]
        [True, True, False, False]
    """
    return name.startswith(".") or (name.startswith("_") and "=" not in name) or name.endswith("._COPYING_")
