"""The ``Task`` base class a task's transformations.py subclasses, and how it is found there."""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ubunye.exceptions import TaskError

if TYPE_CHECKING:
    from ubunye.config import TaskConfig
    from ubunye.engines import Engine

TRANSFORMATIONS_FILE = "transformations.py"

#: One task's transformations.py loads at a time in a process: its folder is first on ``sys.path`` and its helper
#: modules alone in ``sys.modules`` while it does, and two threads loading two tasks at once each saw the other's
#: folder and helpers (task A ran task B's ``helper.py``). Re-entrant: a transformations.py may itself run a task.
_LOADING = threading.RLock()


class Task:
    """Subclass this in ``transformations.py`` and implement :meth:`transform`.

    ``transform`` gets a dict of the configured inputs (frames of the task's engine: pandas DataFrames on the
    pandas engine, Spark DataFrames on Spark) and returns a dict with exactly the configured output names.
    To run unchanged on both engines, write it with narwhals (``nw.from_native``) or use
    ``transform: {type: sql, query: ...}`` instead of a Task.

    Attributes:
        config: the rendered TaskConfig. params: ``CONFIG.transform.params``. engine: the engine
            (``engine.name`` is ``"pandas"`` or ``"spark"``; ``engine.from_pandas(df)`` makes a frame of it).
        dt, dtf, mode: the template variables of the run (None when omitted).

    Example:
        >>> class Clean(Task):
        ...     def transform(self, sources):
        ...         return {"clean": sources["raw"]}
        >>> Clean().transform({"raw": 1})
        {'clean': 1}
    """

    def __init__(
        self,
        config: TaskConfig | None = None,
        engine: Engine[Any] | None = None,
        dt: str | None = None,
        dtf: str | None = None,
        mode: str | None = None,
    ) -> None:
        self.config = config
        self.engine = engine
        self.params: dict[str, Any] = dict((config.transform.get("params") or {}) if config else {})
        self.dt, self.dtf, self.mode = dt, dtf, mode

    @property
    def backend(self) -> str | None:
        """``"pandas"`` or ``"spark"``: the engine the task runs on."""
        return None if self.engine is None else self.engine.name

    def transform(self, sources: dict[str, Any]) -> dict[str, Any]:
        """Map input frames (by name) to output frames (by name)."""
        msg = f"{type(self).__name__}.transform is not implemented"
        raise NotImplementedError(msg)


def load_task_class(task_dir: Path) -> type[Task]:
    """Import ``task_dir/transformations.py`` and return the one Task subclass defined in it.

    Helper modules next to it are importable while it loads (the folder is put first on sys.path).
    """
    file = task_dir / TRANSFORMATIONS_FILE
    if not file.is_file():
        msg = f"{file}: no such file (a task with transform type 'task' needs one Task subclass there)"
        raise TaskError(msg)
    module_name = "ubunye_task_" + "_".join(task_dir.resolve().parts[-3:]).replace("-", "_").replace(".", "_")
    spec = importlib.util.spec_from_file_location(module_name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Helper modules are the task's own: never one of the same name cached from another task or an older run.
    local = {p.stem for p in task_dir.glob("*.py")} | {p.parent.name for p in task_dir.glob("*/__init__.py")}
    with _LOADING:
        saved = {name: sys.modules.pop(name) for name in list(sys.modules) if name.split(".")[0] in local}
        sys.path.insert(0, str(task_dir))
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(task_dir))
            for name in [n for n in sys.modules if n.split(".")[0] in local]:
                del sys.modules[name]
            sys.modules.update(saved)
    found = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, Task) and obj is not Task and obj.__module__ == module_name
    ]
    if len(found) != 1:
        names = ", ".join(sorted(c.__name__ for c in found)) or "none"
        msg = f"{file}: expected exactly one subclass of ubunye.Task, found {names}"
        raise TaskError(msg)
    return found[0]
