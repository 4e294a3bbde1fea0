"""The facts of one run that every part (runner, monitors, the task) shares."""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ubunye.config import TaskConfig


def new_run_id(now: dt.datetime | None = None) -> str:
    """A sortable, file-name-safe run id: UTC time to the microsecond and 6 random hex digits.

    Example:
        >>> new_run_id(dt.datetime(2026, 12, 2, 9, 30, tzinfo=dt.UTC))[:23]
        '20261202T093000.000000Z'
    """
    now = now or dt.datetime.now(dt.UTC)
    return now.strftime("%Y%m%dT%H%M%S.%fZ") + "-" + secrets.token_hex(3)


def utc_now() -> str:
    """The current UTC time in ISO 8601 with microseconds."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass
class RunContext:
    """One run of one task: identity (from the task folder's place), config, engine and template variables."""

    task_dir: Path
    usecase_dir: Path
    usecase: str
    package: str
    task: str
    config: TaskConfig
    engine: Any
    run_id: str
    dt: str | None = None
    dtf: str | None = None
    mode: str | None = None
    entry_point: str = "python"
    started_at: str = field(default_factory=utc_now)

    @property
    def backend(self) -> str:
        """``"pandas"`` or ``"spark"``."""
        return str(self.engine.name)

    @property
    def template_vars(self) -> dict[str, str | None]:
        """dt, dtf and mode as given (None when omitted)."""
        return {"dt": self.dt, "dtf": self.dtf, "mode": self.mode}


def task_identity(task_dir: str | Path) -> tuple[Path, str, str, str]:
    """``(usecase_dir, usecase, package, task)`` from ``<usecase_dir>/<usecase>/<package>/<task>``.

    Example:
        >>> task_identity("/u/shop/daily/orders")
        (PosixPath('/u'), 'shop', 'daily', 'orders')
    """
    path = Path(task_dir).resolve()
    return path.parents[2], path.parents[1].name, path.parent.name, path.name
