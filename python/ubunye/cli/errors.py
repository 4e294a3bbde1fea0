"""Domain errors become one line on stderr and exit code 2; ``--debug`` shows the traceback instead."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from ubunye.exceptions import UbunyeError

F = TypeVar("F", bound=Callable[..., Any])

#: Exit code of a domain error (bad config, failed run, unreadable record...).
DOMAIN_ERROR = 2


_STATE = {"debug": False}


def set_debug(on: bool) -> None:
    """Called by the root callback for every invocation."""
    _STATE["debug"] = bool(on)


def is_debug() -> bool:
    """True when the root ``--debug`` option was given."""
    return _STATE["debug"]


def domain_errors(func: F) -> F:
    """Decorate a command: an UbunyeError prints ``error: <message>`` on stderr and exits 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UbunyeError as exc:
            if is_debug():
                raise
            typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
            raise typer.Exit(DOMAIN_ERROR) from None

    return wrapper  # type: ignore[return-value]
