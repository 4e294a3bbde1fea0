"""What a run ran with: the environment (package versions, never environment variables) and the code hash."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import platform
import stat
from importlib import metadata
from pathlib import Path
from typing import Any

from ubunye.exceptions import ConfigError

#: Packages whose versions can change a result (ADR 006 addendum); absent ones are recorded as None.
PACKAGES = (
    "pyspark",
    "delta-spark",
    "pandas",
    "polars",
    "pyarrow",
    "numpy",
    "narwhals",
    "scikit-learn",
    "torch",
    "mlflow",
    "deltalake",
    "duckdb",
)


def package_version(name: str) -> str | None:
    """The installed version of a distribution, or None when absent."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def capture_environment(backend: str, engine_facts: dict[str, Any] | None = None) -> dict[str, Any]:
    """Python, platform, machine, the engine and the package versions (ADR 006). No environment variables.

    Example:
        >>> env = capture_environment("pandas")
        >>> env["engine"], "pandas" in env["packages"]
        ('pandas', True)
    """
    env: dict[str, Any] = {
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "engine": backend,
        "packages": {name: package_version(name) for name in PACKAGES},
    }
    if engine_facts:
        env[backend] = dict(engine_facts)
    return env


def canonical_hash(value: object) -> str:
    """``sha256:`` of a JSON value written canonically (keys sorted, no spaces)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def environment_hash(env: dict[str, Any]) -> str:
    """``sha256:`` of the canonical environment."""
    return canonical_hash(env)


#: The largest .py file the code hash reads (16 MiB): hand-written and generated code (protobuf modules, embedded
#: tables) is far smaller; past it a file is no task code, and reading it whole would only fill the memory.
MAX_CODE_BYTES = 16 * 1024 * 1024

#: Opening a FIFO for reading waits for a writer, unless non-blocking: never waits, and fstat then says what it is.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class CodeFileError(ConfigError):
    """A .py file of the task folder that the code hash cannot read: a link to nothing, a FIFO, a device, a file
    larger than :data:`MAX_CODE_BYTES`. The task folder's problem, not the record store's; the message names the
    file."""


def code_files(task_dir: str | Path) -> list[Path]:
    """Every .py file under the task folder, skipping ``__pycache__`` and hidden folders, sorted by path."""
    root = Path(task_dir)
    out: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        out.extend(Path(folder) / f for f in files if f.endswith(".py") and not f.startswith("."))
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def code_hash(task_dir: str | Path) -> str:
    """``sha256:`` of every .py file in the task folder: relative path and content, line endings normalised.

    Each file adds ``<relative posix path>\\n<byte length>\\n<content>`` with CRLF and CR turned into LF, so a
    checkout on Windows hashes like one on Linux, and moving code between files changes the hash.

    Raises:
        CodeFileError: a .py file is not a readable regular file of at most :data:`MAX_CODE_BYTES`
            (:func:`read_code_file`): the run does not start, rather than hang on a FIFO or read ``/dev/zero``.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "t.py").write_bytes(b"x = 1\\r\\n")
        >>> a = code_hash(d)
        >>> _ = (d / "t.py").write_bytes(b"x = 1\\n")
        >>> a == code_hash(d)
        True
    """
    root = Path(task_dir)
    digest = hashlib.sha256(b"ubunye-code-v1\n")
    for file in code_files(root):
        content = read_code_file(file).replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        rel = file.relative_to(root).as_posix().encode("utf-8")
        digest.update(rel + b"\n" + str(len(content)).encode() + b"\n" + content)
    return "sha256:" + digest.hexdigest()


def read_code_file(file: Path) -> bytes:
    """The bytes of one .py file of a task folder, refused unless a regular file (a link to one is followed) of at
    most :data:`MAX_CODE_BYTES`: a FIFO would block the run forever, a link to ``/dev/zero`` read until memory
    runs out. Checked before it is opened and again on the opened file (opened non-blocking), so nothing swapped in
    after the first look is read.

    Example:
        >>> import os, tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "transformations.py").write_text("x = 1")
        >>> read_code_file(folder / "transformations.py")
        b'x = 1'
        >>> os.mkfifo(folder / "pipe.py")
        >>> read_code_file(folder / "pipe.py")
        Traceback (most recent call last):
        ...
        ubunye.lineage.environment.CodeFileError: .../pipe.py: a FIFO, not a regular file; the code hash of the run ...

    Raises:
        CodeFileError: ``<file>: <why>; the code hash of the run record reads every .py file of the task folder:
            ...``.
    """
    try:
        # Looked at before it is opened too: opening a device may do something (a tape rewinds, a watchdog starts).
        before = os.stat(file).st_mode
        fd = os.open(file, _OPEN_FLAGS) if stat.S_ISREG(before) else -1
    except OSError as exc:
        raise _refused(file, _unreadable(file, exc)) from None
    if fd < 0:
        raise _refused(file, f"{_kind(before)}, not a regular file")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refused(file, f"{_kind(info.st_mode)}, not a regular file")
        if info.st_size > MAX_CODE_BYTES:
            raise _refused(file, f"{info.st_size} bytes: larger than {MAX_CODE_BYTES} bytes, not task code")
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(MAX_CODE_BYTES + 1)  # a file still growing is read no further than the limit
    except OSError as exc:
        raise _refused(file, f"cannot read it ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > MAX_CODE_BYTES:
        raise _refused(file, f"grew past {MAX_CODE_BYTES} bytes while read, not task code")
    return data


def _refused(file: Path, why: str) -> CodeFileError:
    """The error refusing ``file`` for ``why``, saying why every .py file is read and what to do."""
    msg = (
        f"{file}: {why}; the code hash of the run record reads every .py file of the task folder: remove it or "
        "make it a plain file"
    )
    return CodeFileError(msg)


def _unreadable(file: Path, exc: OSError) -> str:
    """Why ``file`` could not be opened, in words: a link to nothing or a link loop said as such."""
    if file.is_symlink():
        try:
            target = os.readlink(file)
        except OSError:
            target = "?"
        if isinstance(exc, FileNotFoundError):
            return f"a link to nothing ({target!r} does not exist)"
        if exc.errno == errno.ELOOP:
            return f"a link in a loop of links (to {target!r}), never reaching a file"
    return f"cannot open it ({exc.strerror or exc})"


#: What a path that is no regular file is, by the test of its mode.
_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def _kind(mode: int) -> str:
    """What a path of stat ``mode`` that is no regular file is, in words (``a FIFO``; else ``not a file``)."""
    return next((name for test, name in _KINDS if test(mode)), "not a file")
