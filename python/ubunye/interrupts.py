"""Interrupted runs are honest: SIGTERM and SIGINT end a run as ``failed`` with a record that says so.

While a task runs, SIGTERM raises :class:`Interrupted` in the main thread (SIGINT already raises
KeyboardInterrupt), so the runner unwinds through its ``except`` and writes the failed record. While the record
is being written, both signals are only noted: a record half-written because of a second Ctrl-C would lie. The
run then ends with :class:`~ubunye.exceptions.TaskError` and a non-zero exit (docs/tasks-and-records.md,
"Interrupted runs").

Example:
    >>> guard = SignalGuard()
    >>> with guard.running():
    ...     pass
    >>> guard.pending is None
    True
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

#: What ``signal.signal`` takes and returns: a function, SIG_DFL or SIG_IGN, or None (a handler not set from Python).
_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


class Interrupted(BaseException):
    """A signal asked the run to stop (a BaseException, so a task's ``except Exception`` does not swallow it)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


def signal_in(exc: BaseException) -> Interrupted | KeyboardInterrupt | None:
    """The signal's exception ``exc`` is or was raised while handling (its ``__cause__``/``__context__`` chain), or
    None. pyspark's ``toPandas`` raises its own error from a ``finally`` after Ctrl-C: that is still the signal.

    Example:
        >>> try:
        ...     try:
        ...         raise KeyboardInterrupt
        ...     finally:
        ...         raise RuntimeError("job cancelled")
        ... except RuntimeError as err:
        ...     type(signal_in(err)).__name__
        'KeyboardInterrupt'
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, (Interrupted, KeyboardInterrupt)):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def describe(exc: BaseException) -> str | None:
    """Why a run was interrupted, for its record, or None when ``exc`` is not an interruption."""
    found = signal_in(exc)
    if isinstance(found, Interrupted):
        return str(found)
    if isinstance(found, KeyboardInterrupt):
        return "interrupted by SIGINT (KeyboardInterrupt)"
    if isinstance(exc, SystemExit):
        return f"interrupted: the task called sys.exit({exc.code!r})"
    return None


class SignalGuard:
    """Turns SIGTERM/SIGINT into :class:`Interrupted` while running, and into a note while finishing."""

    _SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.pending: int | None = None
        self._saved: dict[int, _Handler] = {}

    def _raise(self, signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signum)

    def _note(self, signum: int, _frame: FrameType | None) -> None:
        self.pending = self.pending or signum

    def _install(self, handler: _Handler, signals: tuple[signal.Signals, ...] = _SIGNALS) -> None:
        for sig in signals:
            previous = signal.signal(sig, handler)
            self._saved.setdefault(sig, previous)

    def _restore(self) -> None:
        for sig, previous in self._saved.items():
            signal.signal(sig, previous)
        self._saved.clear()

    @contextmanager
    def running(self) -> Iterator[None]:
        """Signals raise :class:`Interrupted` inside the block (only in the main thread: elsewhere, no change)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        # SIGINT keeps its handler (Python's KeyboardInterrupt; pyspark's also cancels the running Spark jobs).
        self._install(self._raise, (signal.SIGTERM,))
        try:
            yield
        finally:
            self._install(self._note)

    def hold(self) -> None:
        """From here, SIGTERM/SIGINT are only noted (an output being committed must be recorded as written)."""
        if threading.current_thread() is threading.main_thread() and self._saved:
            self._install(self._note)

    def resume(self) -> None:
        """Undo :meth:`hold`: raise :class:`Interrupted` now for a signal noted meanwhile, then again on signal."""
        if threading.current_thread() is not threading.main_thread() or not self._saved:
            return
        if signal.SIGINT in self._saved:
            signal.signal(signal.SIGINT, self._saved[signal.SIGINT])
        signal.signal(signal.SIGTERM, self._raise)
        if self.pending is not None:
            signum, self.pending = self.pending, None
            raise Interrupted(signum)

    @contextmanager
    def finishing(self) -> Iterator[None]:
        """Signals are noted in ``pending``, then the handlers the process had before are restored."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        self._install(self._note)
        try:
            yield
        finally:
            self._restore()


__all__ = ["Interrupted", "SignalGuard", "describe", "signal_in"]
