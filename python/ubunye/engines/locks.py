"""One writer per output location at a time: an ``fcntl.flock`` on ``<parent>/.<name>.ubunye.lock``.

The runner holds the locks of all its outputs (in sorted order, so two runs never wait on each other in a circle)
from before its first write until its final record is written; each engine's ``write`` takes the lock of its
output too. The lock is re-entrant within a thread: a nested ``output_lock`` of a location the thread already holds
passes straight through (the engine's write inside the runner's lock), while another thread or process waits.

Only local paths (a plain path or ``file://``) are locked; catalog tables (``table:...``) and other URLs have no
local file to lock, and ``output_lock`` is a no-op for them: Delta's transaction log is what serialises writers
there. Lock files are left in place after use: deleting one while another process waits on it would let two
writers in. A lock file is opened without following symlinks and must be a regular file (a symlink planted there
must not make a run overwrite its target); one with other hard links is locked but never written.

Example:
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "data" / "out"
    >>> with output_lock(str(out)):
    ...     with output_lock(str(out)):  # the same thread: re-entrant
    ...         pass
    >>> (out.parent / ".out.ubunye.lock").exists()
    True
"""

from __future__ import annotations

import fcntl
import os
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ubunye.engines.paths import is_url, local_path, lock_file
from ubunye.exceptions import EngineError

#: Seconds to wait for another run's lock when neither the call nor UBUNYE_LOCK_TIMEOUT says otherwise.
DEFAULT_TIMEOUT = 600.0

# (thread id, lock file) -> [fd, depth]. Only the thread that took a lock can re-enter it: flock itself would
# let every descriptor of this process that shares the open file in, so the bookkeeping is ours.
_held: dict[tuple[int, str], list[int]] = {}
_held_guard = threading.Lock()


def _forget_after_fork() -> None:
    # A forked child inherits the descriptors but does not own the runs' locks: it must wait like anyone else.
    _held.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def lock_timeout(timeout: float | None = None) -> float:
    """The timeout to use: ``timeout``, else UBUNYE_LOCK_TIMEOUT (seconds), else :data:`DEFAULT_TIMEOUT`.

    Example:
        >>> lock_timeout(5)
        5.0
    """
    if timeout is not None:
        return float(timeout)
    text = os.environ.get("UBUNYE_LOCK_TIMEOUT")
    if text is None or not text.strip():
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses nan
        msg = f"UBUNYE_LOCK_TIMEOUT={text!r}: expected a number of seconds >= 0"
        raise EngineError(msg)
    return value


@contextmanager
def output_lock(location: str, timeout: float | None = None) -> Iterator[None]:
    """Hold the lock of an output location (a resolved local path or ``file://`` URL) for the ``with`` block.

    Waits up to ``timeout`` seconds (default: :func:`lock_timeout`) for another run to release it, then raises
    EngineError naming the location. Creates the parent folders. A no-op for ``table:...`` and non-file URLs.

    Example:
        >>> with output_lock("table:db.t"), output_lock("s3://bucket/out"):  # nothing to lock
        ...     pass
    """
    folder = _lockable(location)
    if folder is None:
        yield
        return
    path = lock_file(folder)
    key = (threading.get_ident(), str(path))
    with _held_guard:
        entry = _held.get(key)
        if entry is not None:
            entry[1] += 1
    if entry is not None:
        try:
            yield
        finally:
            with _held_guard:
                entry[1] -= 1
        return
    fd = _acquire(location, path, lock_timeout(timeout))
    with _held_guard:
        _held[key] = [fd, 1]
    try:
        yield
    finally:
        with _held_guard:
            del _held[key]
        os.close(fd)  # closing the only descriptor of the open file releases the flock


def _lockable(location: str) -> Path | None:
    if location.startswith("table:") or (is_url(location) and local_path(location) is None):
        return None
    folder = local_path(location)
    assert folder is not None
    return Path(os.path.abspath(folder))


def _acquire(location: str, path: Path, timeout: float) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file where a parent folder must be, no permission, a read-only disk...
        msg = f"output {location}: cannot create its lock {path}: {type(exc).__name__}: {exc}"
        raise EngineError(msg) from exc
    fd = _open_lock(location, path)
    deadline = time.monotonic() + timeout
    pause = 0.005
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _holder(path)
                    msg = (
                        f"output {location}: another run holds its lock {path}{holder}; waited {timeout:g}s "
                        "(UBUNYE_LOCK_TIMEOUT sets how long)"
                    )
                    raise EngineError(msg) from None
                time.sleep(min(pause, max(deadline - time.monotonic(), 0)))
                pause = min(pause * 2, 0.1)
        # Who holds it, for the next run's error message; the content is a hint, the flock is the lock. Only in a
        # file that is ours alone: a hard link's other name may be someone's data (the flock works without it).
        if os.fstat(fd).st_nlink == 1:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_lock(location: str, path: Path) -> int:
    """Open (creating it if missing) the lock file ``path``, refusing anything but a regular file.

    The lock file is a name anyone who can write the parent can plant: a symlink there must not make the run
    truncate and overwrite its target (O_NOFOLLOW), and a FIFO, device or folder is not opened for writing
    (O_NONBLOCK: opening a FIFO never waits; nothing is truncated before the check).
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if os.path.islink(path):  # O_NOFOLLOW fails with ELOOP on a symlink
            msg = (
                f"output {location}: its lock {path} is a symlink (to {os.readlink(path)}), not a regular file; "
                "ubunye does not write through it: remove the link"
            )
            raise EngineError(msg) from None
        kind = _kind_of(path)
        if kind is not None:  # a folder (EISDIR) or another kind of file it cannot open
            msg = f"output {location}: its lock {path} is {kind}, not a regular file: move it away"
            raise EngineError(msg) from None
        msg = f"output {location}: cannot create its lock {path}: {type(exc).__name__}: {exc}"
        raise EngineError(msg) from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            msg = f"output {location}: its lock {path} is {_kind_of(path) or 'not a regular file'}, not a regular "
            msg += "file: move it away"
            raise EngineError(msg)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _kind_of(path: Path) -> str | None:
    """What is at ``path`` when it is not a regular file ("a folder", "a FIFO"...), else None."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    kinds = [(stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")]
    kinds += [(stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symlink")]
    for check, name in kinds:
        if check(mode):
            return name
    return None


def _holder(path: Path) -> str:
    try:  # a regular file by now (_open_lock); no follow, no wait, a few bytes: it is a hint
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            pid = os.read(fd, 32).decode("ascii", "replace").strip()
        finally:
            os.close(fd)
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


__all__ = ["DEFAULT_TIMEOUT", "lock_timeout", "output_lock"]
