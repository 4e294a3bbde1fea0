"""Ubunye: run records you can trust.

Every run of a task leaves a receipt: what it read and wrote, a rows-v1 content hash of every input and
output, the code, the environment, timings and expectation results.

Example:
    >>> import ubunye
    >>> ubunye.__version__ == ubunye.version()
    True
"""

from __future__ import annotations

from importlib import resources

__version__ = resources.files(__package__).joinpath("VERSION").read_text().strip()


def version() -> str:
    """The installed Ubunye version, e.g. ``"0.7.0"``."""
    return __version__


from ubunye.task import Task  # noqa: E402

_LAZY = {"run_task": "ubunye.runner", "run_pipeline": "ubunye.runner", "RunOptions": "ubunye.context"}


def __getattr__(name: str) -> object:
    """``run_task``, ``run_pipeline`` and ``RunOptions`` are imported on first use (the runner pulls in pandas,
    DuckDB, ...)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    msg = f"module 'ubunye' has no attribute {name!r}"
    raise AttributeError(msg)


__all__ = ["RunOptions", "Task", "__version__", "run_pipeline", "run_task", "version"]
