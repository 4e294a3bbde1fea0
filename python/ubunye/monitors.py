"""Monitors: objects told when a task starts and ends. ``LineageRecorder`` is one.

A monitor has ``task_start(**kwargs)`` and ``task_end(**kwargs)``. task_end receives the 0.7 arguments
(context, run_id, status, outputs, error, duration) and the evidence added with record v2 (inputs,
expectations, timings) -- the latter only if it accepts them by name or takes ``**kwargs``, so monitors written
for 0.7 keep working. A monitor that raises is logged with its name and never fails the run.

Example:
    >>> class Old:
    ...     def task_end(self, status, outputs):
    ...         print(status, outputs)
    >>> ran = call_monitor(Old(), "task_end", status="success", outputs=[], inputs=[], timings=[])
    success []
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Protocol

log = logging.getLogger("ubunye")

#: Arguments task_end gained with run record v2.
NEW_TASK_END_ARGS = ("inputs", "expectations", "timings")


class Monitor(Protocol):
    """What a monitor looks like (both methods optional)."""

    def task_start(self, **kwargs: Any) -> None:
        """Called before anything is read (context, run_id)."""

    def task_end(self, **kwargs: Any) -> None:
        """Called once the run ended, successfully or not."""


def monitor_name(monitor: Any) -> str:
    """``monitor.name`` if it has one, else its class name."""
    return str(getattr(monitor, "name", None) or type(monitor).__name__)


def accepted_kwargs(func: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``kwargs`` that ``func`` accepts (all of them if it takes ``**kwargs``)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return kwargs
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return {k: v for k, v in kwargs.items() if k in names}


def call_monitor(monitor: Any, hook: str, **kwargs: Any) -> bool:
    """Call ``monitor.<hook>`` with the arguments it accepts; log (never raise) if it fails. True if it ran."""
    func = getattr(monitor, hook, None)
    if func is None:
        return False
    try:
        func(**accepted_kwargs(func, kwargs))
    except Exception as exc:
        log.warning("monitor %s failed in %s: %s: %s", monitor_name(monitor), hook, type(exc).__name__, exc)
        return False
    return True
