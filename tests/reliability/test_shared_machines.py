"""Storage shared by processes, accounts and machines: output locks and records stay usable by all of them.

- A process forked while a run holds an output lock (a multiprocessing pool a monitor or a transform starts) owns
  none of it: once the run ends, another process takes the lock while the child still lives.
- In a group-shared folder (setgid, group-writable, umask 002) the lock file and the records follow the umask as
  data files do, so a second account of the group (``nobody`` here, by setuid: these tests need root) takes the
  lock and reads the first account's records. A lock file it may only read is locked read-only.
- A waiting run names the holder as ``pid <pid> on <host>``, and never by a hint its holder did not write.

Every child process is a real one, and is stopped by the test that started it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lineage.usecase import write_task
from ubunye.engines import output_lock
from ubunye.engines.paths import lock_file
from ubunye.exceptions import EngineError
from ubunye.hashing.delta_files import FileSums
from ubunye.lineage.file_sums import FileSumsCache
from ubunye.lineage.record import RunRecord
from ubunye.lineage.store import RecordStore
from ubunye.runner import run_task

ROOT = Path(__file__).resolve().parents[2]
SUMS = FileSums("/data/t", "id-1", "deltalake", 'struct<"a":int64>', 3, {"p.parquet": ((10, 5, None), (2, 7, 9))})

# Takes the lock of argv[1] within argv[2] seconds and prints "locked", or prints the error.
TAKE = textwrap.dedent(
    """
    import sys
    from ubunye.engines import output_lock
    from ubunye.exceptions import EngineError

    try:
        with output_lock(sys.argv[1], timeout=float(sys.argv[2])):
            print("locked")
    except EngineError as exc:
        print(exc)
    """
)
# Holds the lock of argv[1], says so, and releases it when its stdin closes.
HOLD = textwrap.dedent(
    """
    import sys
    from ubunye.engines import output_lock

    with output_lock(sys.argv[1], timeout=30):
        print("held", flush=True)
        sys.stdin.read()
    """
)
# Reads every record of a store and a table's cached sums, as the team's other account.
READ = textwrap.dedent(
    """
    import sys
    from ubunye.lineage.file_sums import FileSumsCache
    from ubunye.lineage.store import RecordStore

    for entry in RecordStore(records=sys.argv[1]).entries():
        print(entry.problem or entry.record.run_id)
    print("sums", FileSumsCache(sys.argv[1]).load("/data/t", "deltalake") is not None)
    """
)


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def nobody(shared: Path) -> dict[str, Any]:
    """Arguments of :func:`take` and :func:`holder` running the child as the ``nobody`` account, in its own group,
    under umask 002. By setpriv, which keeps root's capabilities until the exec: the interpreter may sit where only
    root can reach it (a venv made from ~root/.pyenv); the child itself has none of them."""
    account = pwd.getpwnam("nobody")
    command = ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--clear-groups"]
    return {"command": command, "umask": 0o002, "env": {**os.environ, "HOME": "/tmp"}, "cwd": shared}


@pytest.fixture
def shared() -> Iterator[Path]:
    """A team's folder: owned by root, group nobody's, setgid and group-writable (under /tmp: pytest's own
    temporary folders are root's alone, 0700, so another account could not reach one)."""
    if os.geteuid() != 0:
        pytest.skip("runs a second account (nobody) by setuid, which needs root")
    if shutil.which("setpriv") is None:
        pytest.skip("no setpriv (util-linux) to run a child as the second account")
    try:
        group = pwd.getpwnam("nobody").pw_gid
    except KeyError:
        pytest.skip("no 'nobody' account on this machine to be the second account")
    # setpriv keeps root's capabilities until the exec only: a libpython the interpreter loads after it (pyenv's
    # --enable-shared builds, under ~root, 0700) is out of the account's reach, and the child cannot start at all
    probe = [*nobody(Path("/"))["command"], sys.executable, "-c", "pass"]
    started = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    if started.returncode != 0:
        said = (started.stderr.strip().splitlines() or [f"exit {started.returncode}"])[-1]
        pytest.skip(f"this Python cannot start as the account nobody ({said})")
    folder = Path(tempfile.mkdtemp(prefix="ubunye-shared-"))
    try:
        os.chown(folder, -1, group)
        os.chmod(folder, 0o2775)
        with umask(0o002):
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def take(where: str, timeout: float = 5, command: list[str] | None = None, **popen: Any) -> str:
    """What another process taking the lock of ``where`` prints: "locked", or its error."""
    args = [*(command or []), sys.executable, "-c", TAKE, where, str(timeout)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, **popen)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@contextlib.contextmanager
def holder(where: str, command: list[str] | None = None, **popen: Any) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock of ``where`` for the ``with`` block (killed at its end if still alive)."""
    args = [*(command or []), sys.executable, "-c", HOLD, where]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, **popen)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


def release(proc: subprocess.Popen[str]) -> None:
    """Let a :func:`holder` leave its ``with`` block and exit normally."""
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0


def waiting_message(where: str) -> str:
    with pytest.raises(EngineError) as err, output_lock(where, timeout=0.2):
        pass
    return str(err.value)


def no_hint(where: str) -> str:
    return (
        f"output {where}: another run holds its lock {lock_file(Path(where))}; waited 0.2s "
        "(UBUNYE_LOCK_TIMEOUT sets how long)"
    )


# --- a forked child owns none of the locks ------------------------------------------------------------------------


def test_a_child_forked_while_the_lock_is_held_does_not_keep_it(tmp_path: Path) -> None:
    where = str(tmp_path / "data/o")
    with output_lock(where):
        child = os.fork()
        if child == 0:  # a worker outliving the run that forked it, doing nothing with the lock
            try:
                signal.pause()
            finally:
                os._exit(0)
    try:
        taken = take(where)
        alive = os.waitpid(child, os.WNOHANG) == (0, 0)
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    # Before: "another run holds its lock ... (pid <this process>)" until the child ended.
    assert (taken, alive) == ("locked", True)


def test_a_forked_child_leaving_the_lock_block_closes_none_of_its_own_files(tmp_path: Path) -> None:
    where, mine = str(tmp_path / "data/o"), tmp_path / "mine.txt"
    mine.write_text("mine")
    parent = os.getpid()
    try:
        with output_lock(where):
            child = os.fork()
            if child == 0:  # the lowest free descriptor: the lock's number, its copy closed at the fork
                fd = os.open(mine, os.O_RDONLY)
        if os.getpid() != parent:
            os._exit(0 if os.read(fd, 4) == b"mine" else 1)
    except BaseException:
        if os.getpid() != parent:  # before: KeyError, the child's table of held locks was emptied at the fork
            os._exit(2)
        raise
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert take(where) == "locked"


GEN = """
import pandas as pd
from ubunye import Task

class Gen(Task):
    def transform(self, sources):
        return {"out": pd.DataFrame({"dt": [str(self.dt)]})}
"""


def test_a_fork_pool_a_monitor_starts_during_a_run_leaves_the_next_run_its_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UBUNYE_LOCK_TIMEOUT", "3")
    out = {"out": {"format": "parquet", "path": "data/gen", "mode": "overwrite"}}
    folder = write_task(tmp_path / "uc", "gen", {"CONFIG": {"outputs": out, "monitors": ["lineage"]}}, GEN)
    pools: list[Any] = []

    class Shipper:  # a metrics shipper keeping a worker pool for the runs to come
        def task_end(self, **kwargs: Any) -> None:
            if not pools:
                pools.append(multiprocessing.get_context("fork").Pool(1))

    try:
        first = run_task(folder, engine="pandas", dt="a", monitors=[Shipper()])
        # Before: EngineError "another run holds its lock ... (pid <this process>)": the pool's worker kept it.
        second = run_task(folder, engine="pandas", dt="b", monitors=[Shipper()])
    finally:
        for pool in pools:
            pool.terminate()
            pool.join()
    assert (first.status, second.status, len(pools)) == ("success", "success", 1)


# --- group-shared storage: files follow the umask ------------------------------------------------------------------


@pytest.mark.parametrize(("mask", "mode"), [(0o002, 0o664), (0o022, 0o644)])
def test_the_lock_records_and_cached_sums_follow_the_umask(tmp_path: Path, mask: int, mode: int) -> None:
    records = tmp_path / "records"
    with umask(mask):
        with output_lock(str(tmp_path / "data/o")):
            pass
        record = RecordStore(records=str(records)).write(RunRecord(run_id="r1", usecase="u", package="p", task="t"))
        FileSumsCache(str(records)).save(SUMS)
    [sums] = (records / ".cache").rglob("*.json.gz")
    files = {"lock": tmp_path / "data/.o.ubunye.lock", "record": Path(str(record)), "sums": sums}
    # Before: the lock 0644 whatever the umask, the record and the sums 0600.
    assert {name: oct(stat.S_IMODE(path.stat().st_mode)) for name, path in files.items()} == dict.fromkeys(
        files, oct(mode)
    )


def test_another_account_of_the_group_takes_the_lock_and_reads_the_records(shared: Path) -> None:
    where, records = str(shared / "data/o"), str(shared / "records")
    with output_lock(where):  # root's run
        RecordStore(records=records).write(RunRecord(run_id="r1", usecase="u", package="p", task="t"))
        FileSumsCache(records).save(SUMS)
    # Before: "cannot create its lock ...: PermissionError" (the lock was 0644), and the record (0600) unreadable.
    assert take(where, **nobody(shared)) == "locked"
    as_nobody = nobody(shared)
    args = [*as_nobody.pop("command"), sys.executable, "-c", READ, records]
    read = subprocess.run(args, capture_output=True, text=True, timeout=120, **as_nobody)
    assert (read.returncode, read.stdout, read.stderr) == (0, "r1\nsums True\n", "")


def test_a_lock_the_account_may_only_read_is_locked_read_only_and_names_no_stale_holder(shared: Path) -> None:
    where = str(shared / "data/o")
    path = lock_file(Path(where))
    with umask(0o022):  # root's run under a umask that shares nothing: the lock is 0644, root's
        with holder(where) as killed:
            killed.kill()  # leaves its hint, "pid <killed> on <this host>", behind
    assert oct(stat.S_IMODE(path.stat().st_mode)) == "0o644"
    left = path.read_text()
    assert str(killed.pid) in left
    # Before: "cannot create its lock ...: PermissionError": the file is there, but not writable by nobody.
    with holder(where, **nobody(shared)) as other:
        # It could not write its own hint: the killed holder's, still there, is not shown as if it held the lock.
        assert waiting_message(where) == no_hint(where)
        release(other)
    assert path.read_text() == left  # read-only: nothing written
    assert take(where) == "locked"


def test_a_lock_the_account_may_not_even_read_is_named_as_one_it_cannot_open(shared: Path) -> None:
    where = str(shared / "data/o")
    with output_lock(where):
        pass
    os.chmod(lock_file(Path(where)), 0o600)
    path = lock_file(Path(where))
    # Before: "cannot create its lock", for a lock that is there.
    assert take(where, **nobody(shared)) == (
        f"output {where}: cannot open its lock {path}: PermissionError: [Errno 13] Permission denied: '{path}'"
    )
    os.chmod(shared / "data", 0o2755)  # now the group may not create the lock of another output there
    elsewhere = str(shared / "data/other")
    other = lock_file(Path(elsewhere))
    assert take(elsewhere, **nobody(shared)) == (
        f"output {elsewhere}: cannot create its lock {other}: PermissionError: [Errno 13] Permission denied: '{other}'"
    )


# --- who holds the lock ----------------------------------------------------------------------------------------------


def test_the_waiting_run_names_the_holder_by_pid_and_host_and_a_released_lock_names_none(tmp_path: Path) -> None:
    where = str(tmp_path / "data/o")
    with holder(where) as proc:
        # Before: "(pid <holder>)", which on storage shared by several machines may name a process of another one.
        assert waiting_message(where) == no_hint(where).replace(
            "; waited", f" (pid {proc.pid} on {socket.gethostname()}); waited"
        )
        release(proc)
    assert lock_file(Path(where)).read_text() == ""  # cleared before its release: no hint outlives its holder


def test_a_hard_linked_lock_shows_no_hint_its_holder_did_not_write(tmp_path: Path) -> None:
    where = str(tmp_path / "data/o")
    path = lock_file(Path(where))
    with output_lock(where):  # an earlier run of this process
        pass
    os.link(path, tmp_path / "another-name")  # its holder no longer writes the file
    with holder(where):
        # Before: "(pid <this process>)", the earlier run's hint, though this process holds nothing.
        assert waiting_message(where) == no_hint(where)
        path.write_text(f"pid {os.getpid()} on {socket.gethostname()}\n")  # a live process's, but not the holder's
        assert waiting_message(where) == no_hint(where)


def test_a_holder_on_another_machine_is_named_with_that_machine(tmp_path: Path) -> None:
    if subprocess.run(["unshare", "--uts", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare --uts (another host name for the holder) is not permitted here")
    where = str(tmp_path / "data/o")
    # Another host name and pid namespace (its pid 1 is not this machine's pid 1); killing unshare kills it too.
    namespaces = ["unshare", "--uts", "--pid", "--fork", "--mount-proc", "--kill-child"]
    command = [*namespaces, "sh", "-c", 'hostname machine-b && exec "$@"', "-"]
    with holder(where, command=command) as proc:
        message = waiting_message(where)
        release(proc)
    # Before: "(pid 1)", this machine's init.
    assert message == no_hint(where).replace("; waited", " (pid 1 on machine-b); waited")
