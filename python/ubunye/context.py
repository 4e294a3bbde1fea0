"""The facts of one run that every part (runner, monitors, the task) shares, and the options it runs with."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ubunye.exceptions import ConfigError
from ubunye.lineage.store import RecordStore, RecordURL, records_location

if TYPE_CHECKING:
    from ubunye.config import TaskConfig
    from ubunye.engines import Engine


def new_run_id(now: dt.datetime | None = None) -> str:
    """A sortable, file-name-safe run id: UTC time to the microsecond and 6 random hex digits.

    Example:
        >>> new_run_id(dt.datetime(2026, 12, 2, 9, 30, tzinfo=dt.timezone.utc))[:23]
        '20261202T093000.000000Z'
    """
    now = now or dt.datetime.now(dt.timezone.utc)
    return now.strftime("%Y%m%dT%H%M%S.%fZ") + "-" + secrets.token_hex(3)


def utc_now() -> str:
    """The current UTC time in ISO 8601 with microseconds."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass
class RunContext:
    """One run of one task: identity (from the task folder's place), config, engine and template variables."""

    task_dir: Path
    usecase_dir: Path
    usecase: str
    package: str
    task: str
    config: TaskConfig
    engine: Engine[Any]
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


@dataclass(frozen=True)
class RunOptions:
    """How a run is recorded and hashed, and where its record goes: built once by the CLI, ``run_task`` or the
    notebook, settled for each task's config, then read by the runner and by the monitors built with it.

    Args:
        lineage: True records the run, False never does; None as config.yaml's ``monitors`` say (a ``lineage``
            entry).
        hash_outputs: hash every output (rows-v1, with its profile where the dataset's config asks for one);
            None: when the run is recorded.
        hash_inputs: hash every input the same way; None: when outputs are hashed, unless config.yaml's lineage
            entry says ``hash_inputs: false`` (inputs too large to read twice).
        store: the record store, the one setting; None until :meth:`resolve` or :meth:`settle` finds it.

    Example (a recorded run's defaults, settled for a config whose lineage entry skips inputs):
        >>> from types import SimpleNamespace
        >>> from ubunye.config import MonitorConfig
        >>> config = SimpleNamespace(monitors=[MonitorConfig("lineage", {"hash_inputs": False})])
        >>> settled = RunOptions().settle(config, Path("/u"))
        >>> settled.lineage, settled.hash_outputs, settled.hash_inputs, settled.store.root.as_posix()
        (True, True, False, '/u/.ubunye/lineage')
        >>> RunOptions(lineage=False).settle(config, Path("/u"))
        RunOptions(lineage=False, hash_outputs=False, hash_inputs=False, store=None)
    """

    lineage: bool | None = None
    hash_outputs: bool | None = None
    hash_inputs: bool | None = None
    store: RecordStore | None = None

    @classmethod
    def resolve(
        cls,
        *,
        lineage: bool | None = None,
        records: str | Path | RecordStore | None = None,
        storage_options: Mapping[str, Any] | None = None,
        hash_outputs: bool | None = None,
        hash_inputs: bool | None = None,
    ) -> RunOptions:
        """The options of ``records=`` / ``--records``, else ``$UBUNYE_RECORDS``: that store, reached once now
        (an object store that cannot be reached fails here, before anything runs). Without either, the store is
        left to :meth:`settle`: the usecase_dir's own. A run that is never recorded reaches no store.

        Raises:
            RecordError: the records location's filesystem is not installed, or it cannot be reached.

        Example (a run never recorded reaches no store, not even a bucket that is not there):
            >>> RunOptions.resolve(records="/srv/ops/records").store.root.as_posix()
            '/srv/ops/records'
            >>> RunOptions.resolve(lineage=False, records="s3://no-such-bucket/records").store is None
            True
        """
        store = None if lineage is False else _store_at(records, storage_options)
        return cls(lineage, hash_outputs, hash_inputs, store)

    def settle(self, config: TaskConfig, usecase_dir: Path) -> RunOptions:
        """These options for one task: every None decided by its config.yaml, and the store the record goes to
        (None when the run is not recorded)."""
        entries = [m.params for m in config.monitors if m.type == "lineage"] if self.lineage is not False else []
        lineage = bool(entries) if self.lineage is None else self.lineage
        outputs = lineage if self.hash_outputs is None else self.hash_outputs
        wanted = any(p.get("hash_inputs", True) for p in entries) if entries else True
        inputs = (outputs and wanted) if self.hash_inputs is None else self.hash_inputs
        store = (self.store or _store_at(None, None) or RecordStore(usecase_dir)) if lineage else None
        return dataclasses.replace(self, lineage=lineage, hash_outputs=outputs, hash_inputs=inputs, store=store)

    def __post_init__(self) -> None:
        # Options come from users' code: a string "no" must not count as true, nor a path pass for a store.
        for name in ("lineage", "hash_outputs", "hash_inputs"):
            value: object = getattr(self, name)
            if value is not None and not isinstance(value, bool):
                msg = f"RunOptions.{name}: expected True, False or None, got {type(value).__name__} {value!r}"
                raise ConfigError(msg)
        store: object = self.store
        if store is not None and not isinstance(store, RecordStore):
            msg = (
                f"RunOptions.store: expected a RecordStore or None, got {type(store).__name__} "
                f"{store!r} (a path or URL goes to RunOptions.resolve(records=...))"
            )
            raise ConfigError(msg)

    def record_path(self, context: RunContext) -> Path | RecordURL | None:
        """Where the record of the run ``context`` is (or will be) stored; None when it is not recorded."""
        if not self.lineage or self.store is None:
            return None
        return self.store.path(context.usecase, context.package, context.task, context.run_id)


def _store_at(
    records: str | Path | RecordStore | None, storage_options: Mapping[str, Any] | None
) -> RecordStore | None:
    """The store ``records`` (or ``$UBUNYE_RECORDS``) names, reached once now; None when neither names one.

    ``records`` of another type (``5``, a list) is a ConfigError: its ``str()`` was a folder in the current
    directory, where the records went unseen; ``storage_options`` that are not a mapping are one too, even where
    a local store would not use them.
    """
    if isinstance(records, RecordStore):
        return records
    given: object = records
    if given is not None and not isinstance(given, (str, os.PathLike)):
        msg = f"records: expected a folder or URL (str or os.PathLike), got {type(given).__name__} {given!r}"
        raise ConfigError(msg)
    if isinstance(given, str) and not given.strip():  # an unset variable, as the CLI refuses --records ''
        msg = "records: is empty or blank (an unset variable?): give a folder or URL, or leave records out for "
        msg += "$UBUNYE_RECORDS or the usecase folder's store"
        raise ConfigError(msg)
    options: object = storage_options
    if options is not None and not isinstance(options, Mapping):
        msg = f"storage_options: expected a mapping (e.g. {{'profile': 'ops'}}), got {type(options).__name__}"
        raise ConfigError(msg)
    where = records_location(records)
    if where is None:
        return None
    store = RecordStore(records=where, storage_options=dict(storage_options) if storage_options else None)
    store.check()
    return store
