"""A place where a test and the transformations.py of the tasks it runs meet: the test registers a callable under a
name, the task's transform calls it (``meeting.call(self.params.get("hook"))``). Tasks are loaded from files,
so this module (imported by both, one object in ``sys.modules``) is how a task reaches the test's barriers and
recorders."""

from __future__ import annotations

import threading
from collections.abc import Callable

#: The callables tasks may call, by name; a test registers its own under names of its own and removes them after.
HOOKS: dict[str, Callable[[], None]] = {}
_LOCK = threading.Lock()


def register(name: str, hook: Callable[[], None]) -> None:
    with _LOCK:
        HOOKS[name] = hook


def forget(*names: str) -> None:
    with _LOCK:
        for name in names:
            HOOKS.pop(name, None)


def call(name: object) -> None:
    """Call the hook registered as ``name`` (nothing when the task names none)."""
    if name is None:
        return
    with _LOCK:
        hook = HOOKS[str(name)]
    hook()


#: transformations.py of a task that calls the hook its params name, then returns one row naming itself.
CODE = """
import pandas as pd
from ubunye import Task
from tests.lineage import meeting

class T(Task):
    def transform(self, sources):
        meeting.call(self.params.get("hook"))
        return {"out": pd.DataFrame({"who": [self.params["who"]]})}
"""
