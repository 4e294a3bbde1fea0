"""Putting a complete staged folder where the old one was, atomically, and recovering from a swap cut short.

On Linux the swap is one ``renameat2(RENAME_EXCHANGE)`` system call: the staged folder and the old output (a
folder or a file) trade names, so every reader opens either the old output or the new one. Where that call is
missing (not Linux, an old kernel or libc, a filesystem refusing the flag) the fallback is two renames: the old
output to ``.<name>.ubunye-old-<unique>``, then the staging folder in. A process killed between the two leaves no
output and one ``-old-`` sibling; :func:`recover` (run by the next writer, and by a reader that finds no output,
both under the output's lock) renames it back. An ``-old-`` name only ever holds complete data: old data is
deleted by renaming it to ``-trash-`` first.

Example:
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "out").mkdir(); _ = (root / "out" / "a").write_text("old")
    >>> (root / "new").mkdir(); _ = (root / "new" / "a").write_text("new")
    >>> aside = swap_in(root / "new", root / "out")
    >>> (root / "out" / "a").read_text(), aside is not None
    ('new', True)
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import cast

from ubunye.engines.paths import sibling, siblings, unique

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276, "arm64": 276}

#: renameat2(olddirfd, oldpath, newdirfd, newpath, flags) -> 0, or -1 with errno set.
_Renameat2 = Callable[[int, bytes, int, bytes, int], int]


def _load_renameat2() -> _Renameat2 | None:
    """libc's renameat2 (glibc 2.28+), else the raw system call on the architectures we know, else None."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    args = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    func = getattr(libc, "renameat2", None)
    if func is not None:
        func.argtypes, func.restype = args, ctypes.c_int
        return cast("_Renameat2", func)  # a ctypes function, typed by the argtypes just set
    number = _SYS_RENAMEAT2.get(os.uname().machine) if hasattr(os, "uname") else None
    syscall = getattr(libc, "syscall", None)
    if number is None or syscall is None:
        return None
    syscall.restype = ctypes.c_long

    def via_syscall(olddirfd: int, old: bytes, newdirfd: int, new: bytes, flags: int) -> int:
        return int(
            syscall(
                ctypes.c_long(number),
                ctypes.c_int(olddirfd),
                ctypes.c_char_p(old),
                ctypes.c_int(newdirfd),
                ctypes.c_char_p(new),
                ctypes.c_uint(flags),
            )
        )

    return via_syscall


_renameat2 = _load_renameat2()


def exchange(a: Path, b: Path) -> bool:
    """Atomically trade the names of two existing paths; False where the system cannot (then nothing moved).

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> _ = (root / "a").write_text("A"); _ = (root / "b").write_text("B")
        >>> exchange(root / "a", root / "b") and (root / "a").read_text() == "B" or not HAVE_EXCHANGE
        True
    """
    if _renameat2 is None:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # the kernel or this filesystem has no exchange: the caller falls back to two renames
    raise OSError(err, os.strerror(err), str(a), None, str(b))


#: Whether this system has renameat2 at all (a filesystem may still refuse RENAME_EXCHANGE; then the fallback).
HAVE_EXCHANGE = _renameat2 is not None


def swap_in(staging: Path, folder: Path) -> Path | None:
    """Move the complete ``staging`` to ``folder``; return where the old output now is (None if there was none).

    The returned path is a staging- or old-named sibling for the caller to delete (:func:`discard`) once the
    swap is durable.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp()); (root / ".s").mkdir()
        >>> swap_in(root / ".s", root / "out") is None, (root / "out").is_dir()  # no old output: a plain rename
        (True, True)
    """
    if not os.path.lexists(folder):
        os.rename(staging, folder)
        return None
    if exchange(staging, folder):
        return staging  # the old output now has the staging name
    aside = sibling(folder, "old", unique())
    os.rename(folder, aside)
    try:
        os.rename(staging, folder)
    except BaseException:
        os.rename(aside, folder)  # put the old output back: the write failed, nothing changed
        raise
    return aside


def recover(folder: Path) -> bool:
    """After a fallback swap cut short (no ``folder``, an ``-old-`` sibling): put the newest old output back.

    Call it holding the output's lock. Returns True when something was restored.

    Example:
        >>> recover(Path("/nonexistent/out"))
        False
    """
    if os.path.lexists(folder):
        return False
    olds = siblings(folder, "old")
    if not olds:
        return False
    os.rename(olds[-1], folder)
    fsync_dir(folder.parent)
    return True


def discard(path: Path) -> None:
    """Delete a folder or file that is no longer data; an ``-old-`` one is renamed to ``-trash-`` first.

    So a process killed while deleting never leaves a half-deleted folder under a name :func:`recover` trusts.

    Example:
        >>> import tempfile
        >>> old = Path(tempfile.mkdtemp()) / ".out.ubunye-old-1"
        >>> old.mkdir(); discard(old); old.exists()
        False
    """
    if not os.path.lexists(path):
        return
    if ".ubunye-old-" in path.name:
        folder = path.parent / path.name[1:].split(".ubunye-old-")[0]
        trash = sibling(folder, "trash", unique())
        os.rename(path, trash)
        path = trash
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def fsync_dir(folder: Path) -> None:
    """Make the names in ``folder`` (a rename, a new file) durable.

    Example:
        >>> import tempfile
        >>> fsync_dir(Path(tempfile.mkdtemp()))
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(root: Path) -> None:
    """fsync every file and folder under ``root`` (and ``root``): Spark and pyarrow leave their data in the cache.

    Example:
        >>> import tempfile
        >>> fsync_tree(Path(tempfile.mkdtemp()))
    """
    if root.is_file():
        _fsync_file(root)
        return
    for here, _dirs, files in os.walk(root, topdown=False):
        for name in files:
            _fsync_file(Path(here) / name)
        fsync_dir(Path(here))


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["HAVE_EXCHANGE", "discard", "exchange", "fsync_dir", "fsync_tree", "recover", "swap_in"]
