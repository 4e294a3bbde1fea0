"""``LineageRecorder``: the monitor that writes the run record: at start (running), at each checkpoint the runner
calls (still running, with the evidence so far) and at the end. It is one monitor among others
(:mod:`ubunye.monitors`): :func:`~ubunye.monitors.build_monitors` makes it from the run's options."""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import ubunye
from ubunye.exceptions import ConfigError, RecordError
from ubunye.lineage.environment import canonical_hash, capture_environment, code_hash, environment_hash
from ubunye.lineage.liveness import process_facts
from ubunye.lineage.record import DatasetRecord, ErrorInfo, ExpectationResult, ProcessInfo, RunRecord, Timing
from ubunye.lineage.redact import redact_config, redact_record
from ubunye.lineage.secrets import secret_values
from ubunye.lineage.store import RecordStore

if TYPE_CHECKING:
    from ubunye.context import RunContext, RunOptions

log = logging.getLogger("ubunye")

#: The run in progress in this thread (or asyncio task), and the recorder keeping its record: set by the runner
#: for the length of each run (:func:`current_run`), so ``recorder.record`` and :data:`RUN_RECORDS` find the record
#: of *this* run when several share one recorder or one monitor. A run inside a run (same thread) sets its own and
#: puts the outer one back; a new thread starts with none (its runs set their own).
_CURRENT: contextvars.ContextVar[tuple[str, LineageRecorder | None] | None] = contextvars.ContextVar(
    "ubunye_current_run", default=None
)


@contextmanager
def current_run(run_id: str, recorder: LineageRecorder | None) -> Iterator[None]:
    """While the block runs, ``run_id`` is the run in progress in this thread, its record kept by ``recorder``
    (None: the run is not recorded)."""
    token = _CURRENT.set((run_id, recorder))
    try:
        yield
    finally:
        _CURRENT.reset(token)


class LineageRecorder:
    """Writes the record of each run to ``options.record_path(context)``, ``options`` being the run's
    :class:`~ubunye.context.RunOptions` every hook is given (:mod:`ubunye.monitors`): their store, and their
    ``hash_inputs`` for what the record states of the inputs. Nothing about either is set on the recorder.

    Args:
        sample_fraction: accepted so old configs load; ignored (every row is hashed), with a warning.

    One recorder may record any number of runs, one after the other or at once on several threads: it keeps the
    record of each run in progress by run id, and forgets it once the run's final record is written.

    Example:
        >>> LineageRecorder().record is None, LineageRecorder.essential
        (True, True)
    """

    name = "lineage"
    #: The runner does not swallow this monitor's errors: a run whose record cannot be written does not start.
    essential = True

    def __init__(self, *args: object, sample_fraction: object = None, **removed: object) -> None:
        if args or removed:  # hash_inputs= and store= moved to the run's options: say so, never drop them quietly
            given = ", ".join([repr(a) for a in args] + [f"{k}=" for k in removed])
            msg = (
                f"LineageRecorder({given}): the recorder takes no store or hashing switch any more; give them to the "
                "run: run_task(..., options=RunOptions.resolve(records=..., hash_inputs=False)) or config.yaml's "
                "lineage entry"
            )
            raise ConfigError(msg)
        if sample_fraction is not None:
            log.warning("LineageRecorder(sample_fraction=...) is deprecated and ignored: every row is hashed")
        # The record of each run in progress, by run id: runs sharing this object (threads, a run inside a run)
        # each have their own, so none ends with another's evidence or stays `running`.
        self._records: dict[str, RunRecord] = {}
        self._last: RunRecord | None = None  # the last record written, of any run
        self._lock = threading.Lock()  # guards the two above; never held while a record is built or written

    @property
    def record(self) -> RunRecord | None:
        """The record of the run in progress in this thread, if this recorder keeps it; else the last record it
        wrote (of any run: after runs on several threads, whichever wrote last), None before any."""
        current = _CURRENT.get()
        with self._lock:
            if current is not None and current[0] in self._records:
                return self._records[current[0]]
            return self._last

    def record_of(self, run_id: str) -> RunRecord | None:
        """The record of the run ``run_id`` while it is in progress (started and not yet ended), else None."""
        with self._lock:
            return self._records.get(run_id)

    def task_start(self, context: RunContext, options: RunOptions, **_: object) -> None:
        """Build the record from what is known before the run and write it with status ``running``."""
        _store(options)
        config = redact_config(context.config.rendered, _secrets(context))
        env = capture_environment(context.backend, context.engine.environment())
        record = RunRecord(
            run_id=context.run_id,
            usecase=context.usecase,
            package=context.package,
            task=context.task,
            status="running",
            started_at=context.started_at,
            ubunye_version=ubunye.__version__,
            backend=context.backend,
            entry_point=context.entry_point,
            usecase_dir=str(context.usecase_dir),
            model=context.config.model,
            task_version=context.config.version,
            template_vars=context.template_vars,
            config_hash=canonical_hash(config),
            config=config,
            code_hash=code_hash(context.task_dir),
            environment=env,
            environment_hash=environment_hash(env),
            hash_inputs=bool(options.hash_inputs),
            process=ProcessInfo(**process_facts()),
        )
        try:
            self._write(context, options, record)
        except BaseException:
            # Not started: nothing of this run is kept (a task_end still to come starts the record afresh).
            self._forget(context.run_id)
            raise

    def task_checkpoint(
        self,
        context: RunContext,
        options: RunOptions,
        outputs: list[DatasetRecord] | None = None,
        error: ErrorInfo | None = None,
        inputs: list[DatasetRecord] | None = None,
        expectations: list[ExpectationResult] | None = None,
        timings: list[Timing] | None = None,
        **_: object,
    ) -> None:
        """Write the evidence gathered so far, the status still ``running``, and the time as ``checkpoint_at``.

        The runner calls it just before committing each output: a run killed after its output was swapped in
        still leaves a record holding that output's hash (and is shown ``interrupted`` once its process is
        gone). Takes task_end's arguments; ``status``, ``ended_at`` and ``duration`` are ignored, the run has
        not ended.

        ``checkpoint_at`` is what orders such a run among the others (:func:`ubunye.lineage.store._order_key`):
        it is taken here, under the lock of the output about to be committed, so after any run that wrote that
        output before and released its lock; each checkpoint rewrites it, so the record on disk has the last one,
        taken after every earlier commit of the run.
        """
        from ubunye.context import utc_now  # here: ubunye.context imports ubunye.lineage, which imports this module

        record = self._evidence(context, options, outputs, error, inputs, expectations, timings)
        record.checkpoint_at = utc_now()
        self._write(context, options, record)

    def task_end(
        self,
        context: RunContext,
        options: RunOptions,
        status: str,
        ended_at: str,
        duration: float,
        outputs: list[DatasetRecord],
        error: ErrorInfo | None = None,
        inputs: list[DatasetRecord] | None = None,
        expectations: list[ExpectationResult] | None = None,
        timings: list[Timing] | None = None,
        **_: object,
    ) -> None:
        """Complete the record (status, evidence, error) and write it again, atomically. The run has ended: its
        record is forgotten here, written or not (a record that cannot be written is the run's error)."""
        try:
            record = self._evidence(context, options, outputs, error, inputs, expectations, timings)
            record.status = status
            record.ended_at = ended_at
            record.duration_seconds = round(duration, 6)
            self._write(context, options, record)
        finally:
            self._forget(context.run_id)

    def _evidence(
        self,
        context: RunContext,
        options: RunOptions,
        outputs: list[DatasetRecord] | None,
        error: ErrorInfo | None,
        inputs: list[DatasetRecord] | None,
        expectations: list[ExpectationResult] | None,
        timings: list[Timing] | None,
    ) -> RunRecord:
        """The record of this run (started if task_start was not called), holding the evidence given."""
        record = self.record_of(context.run_id)
        if record is None:
            self.task_start(context, options)
            record = self.record_of(context.run_id)
        assert record is not None
        record.inputs = list(inputs or [])
        record.outputs = list(outputs or [])
        record.timings = list(timings or [])
        record.expectations = list(expectations or [])
        record.error = error
        return record

    def _write(self, context: RunContext, options: RunOptions, record: RunRecord) -> None:
        """Mask, then write atomically: every write of the record, start, checkpoint or end, goes through here.
        The masked copy becomes the run's record (what the next write starts from, and what others note in)."""
        process = record.process
        # Every string of the record (locations, errors, hash errors, expectations, timings...) is masked by
        # key, shape and remembered value; copies, so the runner's objects are left as they were.
        masked = redact_record(record, _secrets(context))
        # The process facts are ubunye's own, like the environment: a hostname that happened to contain a
        # remembered value must not become "***", or no reader could tell whether the run is still going.
        masked.process = process
        with self._lock:
            self._records[record.run_id] = masked
        _store(options).write(masked)
        with self._lock:
            self._last = masked

    def _forget(self, run_id: str) -> None:
        with self._lock:
            self._records.pop(run_id, None)


class RunRecords:
    """The ``recorder`` a monitor that notes things in the record (the ``openlineage`` one) is given by
    :func:`~ubunye.monitors.build_monitors`: its ``record`` is the record of the run in progress in this thread,
    kept by whichever recorder records that run (None when it is not recorded, or outside a run).

    One object serves every run: a monitor shared by runs in turn, or at once on several threads, each with a
    recorder of its own, notes each run in that run's record (a recorder set on the monitor once would keep the
    first run's).

    Example:
        >>> RUN_RECORDS.record is None  # no run in progress here
        True
    """

    @property
    def record(self) -> RunRecord | None:
        current = _CURRENT.get()
        if current is None:
            return None
        run_id, recorder = current
        return None if recorder is None else recorder.record_of(run_id)


#: The one :class:`RunRecords`.
RUN_RECORDS = RunRecords()


def _store(options: RunOptions) -> RecordStore:
    """The run's record store; a clear error when the options given were never settled for a recorded run."""
    if options.store is None:
        msg = "LineageRecorder: the run's options name no record store (settle them, e.g. build_monitors)"
        raise RecordError(msg)
    return options.store


def _secrets(context: RunContext) -> set[str]:
    """The secret values of the run's config and of the environment variables it used: the record is masked by
    value even when nothing was remembered process-wide (a monitor driven by hand, an older runner)."""
    cfg = context.config
    return secret_values(cfg.rendered, getattr(cfg, "env_used", None) or {})
