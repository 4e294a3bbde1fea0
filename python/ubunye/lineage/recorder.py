"""``LineageRecorder``: the monitor that writes the run record: at start (running), at each checkpoint the runner
calls (still running, with the evidence so far) and at the end. It is one monitor among others
(:mod:`ubunye.monitors`): :func:`~ubunye.monitors.build_monitors` makes it from the run's options."""

from __future__ import annotations

import logging
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


class LineageRecorder:
    """Writes the record of each run to ``options.record_path(context)``, ``options`` being the run's
    :class:`~ubunye.context.RunOptions` every hook is given (:mod:`ubunye.monitors`): their store, and their
    ``hash_inputs`` for what the record states of the inputs. Nothing about either is set on the recorder.

    Args:
        sample_fraction: accepted so old configs load; ignored (every row is hashed), with a warning.

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
        self.record: RunRecord | None = None

    def task_start(self, context: RunContext, options: RunOptions, **_: object) -> None:
        """Build the record from what is known before the run and write it with status ``running``."""
        _store(options)
        config = redact_config(context.config.rendered, _secrets(context))
        env = capture_environment(context.backend, context.engine.environment())
        self.record = RunRecord(
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
        self._write(context, options)

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
        """Write the evidence gathered so far, the status still ``running``.

        The runner calls it just before committing each output: a run killed after its output was swapped in
        still leaves a record holding that output's hash (and is shown ``interrupted`` once its process is
        gone). Takes task_end's arguments; ``status``, ``ended_at`` and ``duration`` are ignored, the run has
        not ended.
        """
        self._evidence(context, options, outputs, error, inputs, expectations, timings)
        self._write(context, options)

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
        """Complete the record (status, evidence, error) and write it again, atomically."""
        record = self._evidence(context, options, outputs, error, inputs, expectations, timings)
        record.status = status
        record.ended_at = ended_at
        record.duration_seconds = round(duration, 6)
        self._write(context, options)

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
        if self.record is None or self.record.run_id != context.run_id:
            self.task_start(context, options)
        assert self.record is not None
        self.record.inputs = list(inputs or [])
        self.record.outputs = list(outputs or [])
        self.record.timings = list(timings or [])
        self.record.expectations = list(expectations or [])
        self.record.error = error
        return self.record

    def _write(self, context: RunContext, options: RunOptions) -> None:
        """Mask, then write atomically: every write of the record, start, checkpoint or end, goes through here."""
        assert self.record is not None
        process = self.record.process
        # Every string of the record (locations, errors, hash errors, expectations, timings...) is masked by
        # key, shape and remembered value; copies, so the runner's objects are left as they were.
        self.record = redact_record(self.record, _secrets(context))
        # The process facts are ubunye's own, like the environment: a hostname that happened to contain a
        # remembered value must not become "***", or no reader could tell whether the run is still going.
        self.record.process = process
        _store(options).write(self.record)


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
