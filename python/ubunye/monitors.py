"""Monitors: objects told when a task starts, reaches a checkpoint and ends. ``LineageRecorder`` is one.

A monitor has any of ``task_start(**kwargs)``, ``task_checkpoint(**kwargs)`` and ``task_end(**kwargs)``, each
called through :func:`call_monitor` with the arguments it accepts. Every hook is offered ``context``, ``run_id``
and ``options`` (the run's :class:`~ubunye.context.RunOptions`); task_end also the 0.7 arguments (status,
outputs, error, duration) and the evidence added with record v2 (inputs, expectations, timings) -- each only
if it accepts it by name or takes ``**kwargs``, so monitors written for 0.7 keep working; task_checkpoint
receives the same, status ``running``, just before each output is committed. A monitor
that raises is logged with its name and never fails the run, unless it is *essential* (``essential = True``,
as the recorder is): then its error is the run's (docs/tasks-and-records.md, "Order of a run"). Essential
monitors start first and end last, so the record exists before anyone hears of the run and holds what the
others noted.

Which monitors a run has, and what they are built with, is decided in one place, :func:`build_monitors`: the
recorder when the run is recorded, config.yaml's ``openlineage`` and ``module:Class`` entries, then the caller's.
The runner never asks a monitor what to hash: whether inputs and outputs are hashed is in the run's
:class:`~ubunye.context.RunOptions`.

How does a monitor get the record path? Its hooks take ``options`` and call ``options.record_path(context)``
(None when the run is not recorded). That is the one answer: the record store is ``options.store``, resolved
once from ``records=`` / ``--records`` / ``$UBUNYE_RECORDS``, else ``<usecase_dir>/.ubunye/lineage``; the
recorder writes there and ``RunResult.record_path`` is the same call.

Example:
    >>> class Old:
    ...     def task_end(self, status, outputs):
    ...         print(status, outputs)
    >>> ran = call_monitor(Old(), "task_end", status="success", outputs=[], inputs=[], timings=[])
    success []
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ubunye.exceptions import ConfigError, error_text
from ubunye.lineage.openlineage import OpenLineageMonitor
from ubunye.lineage.recorder import RUN_RECORDS, LineageRecorder

if TYPE_CHECKING:
    from ubunye.context import RunContext, RunOptions

log = logging.getLogger("ubunye")


class Monitor(Protocol):
    """What a monitor looks like (every method optional; ``essential`` False unless set)."""

    #: True: the run fails with this monitor's errors instead of logging them.
    essential: bool

    def task_start(self, **kwargs: Any) -> None:  # noqa: ANN401 (each monitor takes what it wants)
        """Called before anything is read (context, run_id)."""

    def task_checkpoint(self, **kwargs: Any) -> None:  # noqa: ANN401 (each monitor takes what it wants)
        """Called just before each output is committed, with the evidence so far (status ``running``)."""

    def task_end(self, **kwargs: Any) -> None:  # noqa: ANN401 (each monitor takes what it wants)
        """Called once the run ended, successfully or not."""


def monitor_name(monitor: object) -> str:
    """``monitor.name`` if it has one, else its class name (also when reading its name raises: the runner names
    a monitor while it ends the run, which a monitor's broken property must not stop)."""
    try:
        return str(getattr(monitor, "name", None) or type(monitor).__name__)
    except Exception:
        return type(monitor).__name__


def is_essential(monitor: object) -> bool:
    """Whether the run fails with the monitor's errors (its ``essential`` attribute, False if it has none, or if
    reading it raises: the runner asks while it ends the run, and every monitor must still be told)."""
    try:
        return bool(getattr(monitor, "essential", False))
    except Exception:
        return False


def accepted_kwargs(func: Callable[..., object], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``kwargs`` that ``func`` accepts (all of them if it takes ``**kwargs``)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return kwargs
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return {k: v for k, v in kwargs.items() if k in names}


def call_monitor(monitor: object, hook: str, **kwargs: Any) -> bool:  # noqa: ANN401 (a hook's own arguments)
    """Call ``monitor.<hook>`` with the arguments it accepts; True if it ran, False if it has no such hook.

    If it fails, a monitor is logged and False returned; an essential one's error is raised for the caller.

    Example:
        >>> class Strict:
        ...     essential = True
        ...     def task_start(self, **_):
        ...         raise OSError("disk full")
        >>> call_monitor(Strict(), "task_end")
        False
        >>> call_monitor(Strict(), "task_start")
        Traceback (most recent call last):
        ...
        OSError: disk full
    """
    try:
        # Looking the hook up is the monitor's code too (a property, __getattr__): its errors are the hook's.
        func = getattr(monitor, hook, None)
        if func is None:
            return False
        func(**accepted_kwargs(func, kwargs))
    except Exception as exc:
        if is_essential(monitor):
            raise
        log.warning("monitor %s failed in %s: %s", monitor_name(monitor), hook, error_text(exc))
        return False
    return True


def build_monitors(
    context: RunContext, options: RunOptions, extra: Sequence[object] = ()
) -> tuple[RunOptions, list[object]]:
    """The run's options settled for its config, and its monitors built with them.

    The recorder comes first when the run is recorded; ``extra`` monitors come last, as given. A
    ``LineageRecorder`` among them is the run's recorder (the run is then recorded, as the options say). A
    monitor with a ``recorder`` attribute left None (the ``openlineage`` one, which notes its events in the
    record) is given :data:`~ubunye.lineage.recorder.RUN_RECORDS`, whose ``record`` is the record of the run in
    progress on the calling thread: one such monitor given to several runs (in turn, or at once on threads)
    notes each run in that run's record, not in the first run's.

    Raises:
        ConfigError: a ``CONFIG.monitors`` entry cannot be made (naming config.yaml and the entry).

    Example (the example usecase's revenue task, whose config.yaml lists ``lineage``):
        >>> import shutil, tempfile
        >>> import ubunye.testing
        >>> from ubunye.context import RunOptions
        >>> from ubunye.runner import prepare
        >>> usecase_dir = Path(tempfile.mkdtemp())
        >>> _ = shutil.copytree(Path(ubunye.testing.__file__).parent / "data/examples/shop", usecase_dir / "shop")
        >>> ctx = prepare(usecase_dir / "shop/daily/revenue", engine="pandas")
        >>> options, monitors = build_monitors(ctx, RunOptions())
        >>> [type(m).__name__ for m in monitors], options.lineage, options.hash_inputs
        (['LineageRecorder'], True, True)
        >>> options.record_path(ctx).relative_to(usecase_dir).parent.as_posix()
        '.ubunye/lineage/shop/daily/revenue'
        >>> build_monitors(ctx, RunOptions(lineage=False))[1]
        []
        >>> shutil.rmtree(usecase_dir)
    """
    given = [m for m in extra if isinstance(m, LineageRecorder)]
    if given:  # a recorder given by hand records the run: how, and where, is still the options' to say
        options = dataclasses.replace(options, lineage=True)
    options = options.settle(context.config, context.usecase_dir)
    built: list[object] = []
    recorder = given[0] if given else None
    if recorder is None and options.lineage:
        recorder = LineageRecorder()
        built.append(recorder)
    path = context.config.path
    for i, m in enumerate(context.config.monitors):
        if m.type == "lineage":
            continue  # its params are in the options; the recorder is built above
        if m.type == "openlineage":
            try:
                built.append(OpenLineageMonitor(**m.params))
            except ConfigError as exc:
                raise ConfigError(f"{path}: CONFIG.monitors[{i}]: {exc}") from None
        elif ":" in m.type:
            built.append(_custom_monitor(path, i, m.type, m.params))
        else:
            msg = f"{path}: CONFIG.monitors[{i}]: unknown monitor {m.type!r} (use lineage, openlineage or module:Class)"
            raise ConfigError(msg)
    built += list(extra)
    for monitor in built:  # a monitor that notes things in the record finds the record of the run it is told of
        if getattr(monitor, "recorder", False) is None:
            # Not this run's recorder itself: the monitor may be shared with other runs, and would keep it.
            monitor.recorder = RUN_RECORDS  # type: ignore[attr-defined]
    return options, built


def _custom_monitor(path: Path, i: int, spec: str, params: Mapping[str, Any]) -> object:
    """``module:Class`` from config.yaml: only a class with a monitor's hook is made, never any callable.

    (``os:system`` with ``params: {command: ...}`` would otherwise run a shell command from a config file.)
    """
    key = f"{path}: CONFIG.monitors[{i}]"
    module, _, attr = spec.partition(":")
    try:
        found = getattr(importlib.import_module(module), attr)
    except ImportError as exc:
        msg = f"{key}: cannot import {module!r} for monitor {spec!r}: {exc}"
        raise ConfigError(msg) from exc
    except AttributeError as exc:
        msg = f"{key}: module {module!r} has no {attr!r} (monitor {spec!r})"
        raise ConfigError(msg) from exc
    hooks = [h for h in ("task_start", "task_end") if callable(getattr(found, h, None))]
    if not inspect.isclass(found) or not hooks:
        msg = f"{key}: {spec!r} is not a monitor class (a class with task_start or task_end)"
        raise ConfigError(msg)
    try:
        made: object = found(**params)
    except TypeError as exc:
        msg = f"{key}: monitor {spec!r} does not take params {sorted(params)}: {exc}"
        raise ConfigError(msg) from exc
    return made
