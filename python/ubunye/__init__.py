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


__all__ = ["__version__", "version"]
