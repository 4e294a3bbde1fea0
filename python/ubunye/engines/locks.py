"""One writer per output location at a time: an ``fcntl.flock`` on ``<parent>/.<name>.ubunye.lock``.

The runner holds the locks of all its outputs (in sorted order, so two runs never wait on each other in a circle)
from before its first write until its final record is written; each engine's ``write`` takes the lock of its
output too. The lock is re-entrant within a thread: a nested ``output_lock`` of a location the thread already holds
passes straight through (the engine's write inside the runner's lock), while another thread or process waits. A
forked child (a multiprocessing worker started during a run) owns none of the locks: its copies of their
descriptors are closed at the fork, so a lock ends with the run that took it.

Only local paths (a plain path or ``file://``) are locked; catalog tables (``table:...``) and other URLs have no
local file to lock, and ``output_lock`` is a no-op for them: Delta's transaction log is what serialises writers
there. Lock files are left in place after use: deleting one while another process waits on it would let two
writers in. A lock file is opened without following symlinks and must be a regular file (a symlink planted there
must not make a run overwrite its target); one with other hard links is locked but never written.

A lock file is created with the permissions the umask gives any data file (0664 in a group-shared folder under
umask 002), so the other accounts of a team can take it. One this account may read but not write is locked
read-only; its holder's hint (``pid 4242 on host-a``, read by a waiting run's message) is then not written.

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

import contextlib
import fcntl
import os
import re
import socket
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from ubunye.engines.paths import is_url, local_path, lock_file
from ubunye.exceptions import EngineError

#: Seconds to wait for another run's lock when neither the call nor UBUNYE_LOCK_TIMEOUT says otherwise.
DEFAULT_TIMEOUT = 600.0

# (thread id, lock file) -> [fd, depth]. Only the thread that took a lock can re-enter it: flock itself would
# let every descriptor of this process that shares the open file in, so the bookkeeping is ours.
_held: dict[tuple[int, str], list[int]] = {}
# Every lock file descriptor this process has open, held or still waiting. A flock belongs to the open file, which
# lives while any process has a descriptor of it: a forked child keeping its copy would hold the lock after the run
# released it, so the child closes them all (_after_fork_in_child).
_open_fds: set[int] = set()
# Opening, registering and closing a lock descriptor happen under the guard, and a fork waits for the guard: the
# child's _open_fds then names every lock descriptor it inherits, even one another thread was just opening.
_held_guard = threading.Lock()
_NO_FOLLOW = os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
_HINT = re.compile(r"pid ([1-9][0-9]{0,9}) on ([A-Za-z0-9._-]{1,253})\n?")


def _after_fork_in_child() -> None:
    # The child does not own the runs' locks (it must wait like anyone else), and closing its copies leaves the
    # parent's descriptors, and so its locks, as they were.
    for fd in _open_fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    _open_fds.clear()
    _held.clear()
    _held_guard.release()


os.register_at_fork(
    before=_held_guard.acquire, after_in_parent=_held_guard.release, after_in_child=_after_fork_in_child
)


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
    fd, hinted = _acquire(location, path, lock_timeout(timeout))
    entry = [fd, 1]
    with _held_guard:
        _held[key] = entry
    try:
        yield
    finally:
        _release(key, entry, hinted)


def _release(key: tuple[int, str], entry: list[int], hinted: bool) -> None:
    with _held_guard:
        ours = _held.get(key) is entry
    if not ours:  # a forked child leaving the block: the fork closed its copy, and the number may name another file
        return
    if hinted:  # before the close, while it is still ours: after it the next holder writes its own
        _clear_hint(entry[0])
    with _held_guard:
        del _held[key]
    _close(entry[0])  # closing the only descriptor of the open file releases the flock


def _lockable(location: str) -> Path | None:
    if location.startswith("table:") or (is_url(location) and local_path(location) is None):
        return None
    folder = local_path(location)
    assert folder is not None
    return Path(os.path.abspath(folder))


def _acquire(location: str, path: Path, timeout: float) -> tuple[int, bool]:
    """Take the lock: its descriptor, and whether this run's hint was written in the file (to clear on release)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file where a parent folder must be, no permission, a read-only disk...
        msg = f"output {location}: cannot create its lock {path}: {type(exc).__name__}: {exc}"
        raise EngineError(msg) from exc
    fd, writable = _open_lock(location, path)
    try:
        _wait(location, path, fd, writable, timeout)
        return fd, writable and _write_hint(fd)
    except BaseException:
        _close(fd)
        raise


def _wait(location: str, path: Path, fd: int, writable: bool, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                msg = (
                    f"output {location}: another run holds its lock {path}{_holder(path)}; waited {timeout:g}s "
                    "(UBUNYE_LOCK_TIMEOUT sets how long)"
                )
                raise EngineError(msg) from None
            time.sleep(min(pause, max(deadline - time.monotonic(), 0)))
            pause = min(pause * 2, 0.1)
        except OSError as exc:
            # NFS turns a flock into a byte-range lock, which needs a descriptor open for writing (EBADF).
            why = "" if writable else " (opened read-only: this account may not write it; make it group-writable)"
            msg = f"output {location}: cannot lock {path}: {type(exc).__name__}: {exc}{why}"
            raise EngineError(msg) from exc


def _open_lock(location: str, path: Path) -> tuple[int, bool]:
    """Open (creating it if missing) the lock file ``path``, refusing anything but a regular file; returns the
    descriptor and whether it is open for writing.

    The lock file is a name anyone who can write the parent can plant: a symlink there must not make the run
    truncate and overwrite its target (O_NOFOLLOW), and a FIFO, device or folder is not opened for writing
    (O_NONBLOCK: opening a FIFO never waits; nothing is truncated before the check).
    """
    try:
        fd, writable = _open_file(path)
    except OSError as exc:
        _refuse_open(location, path, exc)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            msg = f"output {location}: its lock {path} is {_kind_of(path) or 'not a regular file'}, not a regular "
            msg += "file: move it away"
            raise EngineError(msg)
    except BaseException:
        _close(fd)
        raise
    return fd, writable


def _open_file(path: Path) -> tuple[int, bool]:
    """The lock file open read-write (created if missing), else read-only when it is another account's that this
    one may only read: flock needs no write access, only the hint is then not written."""
    try:
        # Mode 0o666, and the kernel applies the umask (or the folder's default ACL, which a mode computed here
        # would ignore) as it does to the data files beside it: under umask 002 in a setgid folder the team's
        # other accounts can open the lock. Reading the umask instead would mean setting it (os.umask), which
        # races every other thread creating a file.
        return _open_registered(path, os.O_RDWR | os.O_CREAT), True
    except PermissionError:
        if not _is_regular(path):  # nothing there: the folder refused the create
            raise
    try:  # fs.protected_regular refuses O_CREAT on another account's file in a sticky folder, writable or not
        return _open_registered(path, os.O_RDWR), True
    except PermissionError:
        return _open_registered(path, os.O_RDONLY), False


def _open_registered(path: Path, flags: int) -> int:
    with _held_guard:  # opened and registered with no fork in between: see _open_fds
        fd = os.open(path, flags | _NO_FOLLOW, 0o666)
        _open_fds.add(fd)
    return fd


def _close(fd: int) -> None:
    with _held_guard:  # unregistered and closed with no fork in between: see _open_fds
        _open_fds.discard(fd)
        os.close(fd)


def _refuse_open(location: str, path: Path, exc: OSError) -> NoReturn:
    if os.path.islink(path):  # O_NOFOLLOW fails with ELOOP on a symlink
        msg = (
            f"output {location}: its lock {path} is a symlink (to {os.readlink(path)}), not a regular file; "
            "ubunye does not write through it: remove the link"
        )
        raise EngineError(msg) from None
    kind = _kind_of(path)
    if kind is not None:  # a folder (EISDIR) or another kind of file it cannot open
        raise EngineError(f"output {location}: its lock {path} is {kind}, not a regular file: move it away") from None
    verb = "open" if os.path.lexists(path) else "create"  # there but not ours to open, or the folder refused it
    raise EngineError(f"output {location}: cannot {verb} its lock {path}: {type(exc).__name__}: {exc}") from exc


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


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


def _host() -> str:
    """This machine's name as the hint gives it: a waiting run may be on another machine sharing the storage, where
    the pid alone names some other process."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())[:253] or "unknown-host"


def _write_hint(fd: int) -> bool:
    """Write ``pid <pid> on <host>`` in the lock file, for the next run's error message; whether it was tried.

    The flock is the lock, the content a hint: a failed write is no error. Only in a file that is ours alone: a
    hard link's other name may be someone's data (the flock works without it).
    """
    try:
        if os.fstat(fd).st_nlink != 1:
            return False
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {_host()}\n".encode(), 0)
    except OSError:
        pass
    return True


def _clear_hint(fd: int) -> None:
    # A holder that cannot write the file (read-only, hard-linked) leaves it as it finds it: empty, so a waiting
    # run names no holder rather than the one before.
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_nlink == 1:
            os.ftruncate(fd, 0)


def _holder(path: Path) -> str:
    """`` (pid 4242 on host-a)`` from the lock file's hint, or "" when it holds none to trust."""
    try:  # a regular file by now (_open_lock); no follow, no wait, a few bytes: it is a hint
        fd = os.open(path, os.O_RDONLY | _NO_FOLLOW)
        try:
            if os.fstat(fd).st_nlink != 1:  # never written by its holder: what is there is someone else's
                return ""
            text = os.read(fd, 300).decode("ascii", "replace")
        finally:
            os.close(fd)
    except OSError:
        return ""
    match = _HINT.fullmatch(text)
    if match is None:
        return ""
    pid, host = int(match[1]), match[2]
    if host == _host() and not _alive(pid):  # left by a killed holder; the one now could not write its own
        return ""
    return f" (pid {pid} on {host})"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: another account's process, alive
        return True
    return True


__all__ = ["DEFAULT_TIMEOUT", "lock_timeout", "output_lock"]
