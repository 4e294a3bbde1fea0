"""What a run ran with: the environment (package versions, never environment variables) and the code hash."""

from __future__ import annotations

import hashlib
import json
import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

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
        content = file.read_bytes().replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        rel = file.relative_to(root).as_posix().encode("utf-8")
        digest.update(rel + b"\n" + str(len(content)).encode() + b"\n" + content)
    return "sha256:" + digest.hexdigest()
