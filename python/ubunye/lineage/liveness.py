"""Is the process of a ``running`` record still there? A run killed (SIGKILL, out of memory, a lost machine)
leaves its record at ``running`` forever; readers report it as ``interrupted`` when they can know.

The recorder stores :func:`process_facts` in the record (``process: {host, pid, started}``); :func:`run_state`
compares them with this machine. Readers never rewrite the file: the state is worked out each time it is shown.

Example:
    >>> from ubunye.lineage.record import ProcessInfo, RunRecord
    >>> me = ProcessInfo(**process_facts())
    >>> run_state(RunRecord(run_id="r", usecase="u", package="p", task="t", process=me))
    'running'
    >>> other = ProcessInfo(host="elsewhere.invalid", pid=1, started=None)
    >>> run_state(RunRecord(run_id="r", usecase="u", package="p", task="t", process=other))
    'running'
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ubunye.lineage.record import RunRecord

INTERRUPTED = "interrupted"

_PROC = Path("/proc")
_MAX_PID = 2**31 - 1


def process_facts(pid: int | None = None) -> dict[str, Any]:
    """``{"host", "pid", "started"}`` of a process (this one by default), as a record's ``process`` field.

    ``started`` is :func:`start_mark` of the pid: None where there is no ``/proc`` to read it from.

    Example:
        >>> facts = process_facts()
        >>> facts["pid"] == os.getpid() and facts["host"] == socket.gethostname()
        True
    """
    pid = os.getpid() if pid is None else pid
    return {"host": socket.gethostname(), "pid": pid, "started": start_mark(pid)}


def start_mark(pid: int) -> str | None:
    """When process ``pid`` started, as ``<clock ticks since boot>@<boot id>`` (Linux), or None.

    The start time (field 22 of ``/proc/<pid>/stat``) tells this process from a later one given the same pid;
    the boot id (``/proc/sys/kernel/random/boot_id``, left out when unreadable) tells this boot from the next.

    Example:
        >>> start_mark(os.getpid()) == start_mark(os.getpid())
        True
    """
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 20 or not fields[19].isdigit():
        return None
    boot = _boot_id()
    return f"{fields[19]}@{boot}" if boot else fields[19]


def run_state(record: RunRecord) -> str:
    """The record's status, except a ``running`` record whose process is known to be gone: ``interrupted``.

    Gone means: the record was written on this host (same hostname) and its pid does not exist, is a zombie,
    or belongs to another process (its start time or the boot id differ: the pid was reused, the machine
    rebooted). Whatever cannot be known stays ``running``: a record from another host, one without process
    facts (written before 0.8), a process this user may not inspect.

    Example:
        >>> from ubunye.lineage.record import ProcessInfo, RunRecord
        >>> reused = ProcessInfo(host=socket.gethostname(), pid=os.getpid(), started="1@another-boot")
        >>> run_state(RunRecord(run_id="r", usecase="u", package="p", task="t", process=reused))
        'interrupted'
        >>> run_state(RunRecord(run_id="r", usecase="u", package="p", task="t", status="failed", process=reused))
        'failed'
    """
    process = record.process
    if record.status != "running" or process is None or process.host != socket.gethostname():
        return record.status
    alive = _alive(process.pid)
    if alive is False:
        return INTERRUPTED
    if alive is None or process.started is None:
        return record.status
    now = start_mark(process.pid)
    if now is None:  # /proc hidden from this user (hidepid), or the process ended this instant
        return INTERRUPTED if _alive(process.pid) is False else record.status
    return record.status if _same_start(process.started, now) else INTERRUPTED


def _alive(pid: int) -> bool | None:
    """True: a live process has this pid; False: none has (or only a zombie); None: cannot tell."""
    if isinstance(pid, bool) or not isinstance(pid, int) or not 1 <= pid <= _MAX_PID:
        return None  # never kill(0) or kill(-1): those are process groups, not a pid
    try:
        os.kill(pid, 0)  # signal 0: nothing is sent, only whether the pid exists is checked
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    except OSError:
        return None
    fields = _stat_fields(pid)
    if fields is not None and fields and fields[0] in ("Z", "X"):  # killed, not yet reaped by its parent
        return False
    return True


def _stat_fields(pid: int) -> list[str] | None:
    """Fields 3.. of ``/proc/<pid>/stat`` (state first), or None when unreadable."""
    try:
        raw = (_PROC / str(int(pid)) / "stat").read_bytes()
    except (OSError, ValueError):
        return None
    # Field 2 is the command name in parentheses, and may itself hold spaces and ")": split after the last one.
    _, paren, rest = raw.decode("ascii", "replace").rpartition(")")
    return rest.split() if paren else None


def _boot_id() -> str | None:
    try:
        text = (_PROC / "sys/kernel/random/boot_id").read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return text or None


def _same_start(recorded: str, now: str) -> bool:
    """Equal start ticks, and equal boot ids when both marks have one."""
    ticks_a, _, boot_a = recorded.partition("@")
    ticks_b, _, boot_b = now.partition("@")
    if ticks_a != ticks_b:
        return False
    return not (boot_a and boot_b) or boot_a == boot_b
