"""Domain errors become one line on stderr and exit code 2; ``--debug`` shows the traceback instead.

Every ``error:`` line, and every warning Python prints, goes through :func:`ubunye.lineage.redact.mask_text`
(importing ``ubunye.lineage.redact`` also masks the ``ubunye`` logger).

Example:
    >>> error_line(ValueError("cannot open postgresql://app:pa@ss@db/x   (timeout)"))
    'error: cannot open postgresql://app:***@db/x (timeout)'
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sys
import warnings
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from ubunye.exceptions import UbunyeError
from ubunye.lineage.redact import mask_text

P = ParamSpec("P")
R = TypeVar("R")

#: Exit code of a domain error (bad config, failed run, unreadable record...).
DOMAIN_ERROR = 2
#: Exit code when the reader of the output went away (``ubunye lineage compare ... | head -1``): 128 + SIGPIPE, as a
#: shell reports a program killed by it. Click's own answer is 1, which compare and diff use for "data changed".
BROKEN_PIPE = 141


_STATE = {"debug": False}


def set_debug(on: bool) -> None:
    """Called by the root callback for every invocation."""
    _STATE["debug"] = bool(on)


def is_debug() -> bool:
    """True when the root ``--debug`` option was given."""
    return _STATE["debug"]


def error_line(exc: BaseException) -> str:
    """The one ``error: ...`` line for an exception: secrets masked, then whitespace collapsed.

    Masked before collapsing: a YAML error quotes the config line (``password: x``) on a line of its own, and
    that line is recognisable only while it is one.
    """
    return f"error: {' '.join(mask_text(str(exc)).split())}"


def _masked_formatwarning(original: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(original)
    def formatwarning(
        message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
    ) -> str:
        return mask_text(original(message, category, filename, lineno, line))

    formatwarning.__ubunye_masked__ = True  # type: ignore[attr-defined]
    return formatwarning


def install_warning_mask() -> None:
    """Mask the warnings Python prints on stderr (a library warning may quote a URL with its password).

    Done once when the CLI is imported: the CLI owns its process; a library must not change a notebook's.
    """
    if not getattr(warnings.formatwarning, "__ubunye_masked__", False):
        warnings.formatwarning = _masked_formatwarning(warnings.formatwarning)


install_warning_mask()


def _stdout_gone() -> bool:
    """Whether stdout is a pipe (or socket) whose reader went away: polling its write end reports an error.
    True when that cannot be told (no ``poll``, stdout without a descriptor), the answer before this check."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return True


def _symlink_loop(exc: BaseException) -> str | None:
    """The message for a path that resolves through a symlink loop (a link to itself, or a cycle of links), the
    user's to fix, or None for any other error. ``Path.resolve()`` raises it as a RuntimeError until Python 3.12
    and as an OSError (ELOOP) from 3.13; no command can name the config key or option behind every path it
    resolves, so the path is named here, once, for every command."""
    if isinstance(exc, RuntimeError) and str(exc).startswith("Symlink loop from "):
        where = str(exc).removeprefix("Symlink loop from ")
    elif isinstance(exc, OSError) and exc.errno == errno.ELOOP:
        where = repr(exc.filename) if exc.filename is not None else "a path"
    else:
        return None
    return f"{where}: a symlink loop (a link that leads back to itself); fix or remove the link"


def domain_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Decorate a command: an UbunyeError prints ``error: <message>`` on stderr and exits 2; output the reader
    closed exits 141 (:data:`BROKEN_PIPE`), not an exit status the command gives a meaning; any other broken pipe
    (a connection to a store, a pipe of the command's own) is an ``error:`` line and exit 2."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError as exc:
            if not _stdout_gone():  # another pipe or a connection (a store, a server) broke: an error, not 141
                if is_debug():
                    raise
                with contextlib.suppress(BrokenPipeError):  # stderr's reader gone too: the exit status says it
                    typer.echo(
                        error_line(OSError(f"a pipe or connection closed while the command ran ({exc})")), err=True
                    )
                raise typer.Exit(DOMAIN_ERROR) from None
            # What is left in stdout's buffer would fail again when Python flushes it at exit.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise typer.Exit(BROKEN_PIPE) from None
        except (RuntimeError, OSError) as exc:
            loop = _symlink_loop(exc)
            if loop is None or is_debug():
                raise
            typer.echo(error_line(OSError(loop)), err=True)
            raise typer.Exit(DOMAIN_ERROR) from None
        except UbunyeError as exc:
            if is_debug():
                raise
            typer.echo(error_line(exc), err=True)
            # An interrupted run exits as the signal asked (130 for Ctrl-C, 143 for SIGTERM), others with 2.
            raise typer.Exit(getattr(exc, "exit_code", DOMAIN_ERROR)) from None

    return wrapper
