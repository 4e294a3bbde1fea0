"""Running tasks: ``run_task`` (one task folder) and ``run_pipeline`` (several tasks of one package).

Every entry point (CLI, these functions, the notebook) goes through :func:`execute`, so a task has one
identity -- usecase/package/task from the folder's place -- and one record store. What a run hashes and where
its record goes are its :class:`~ubunye.context.RunOptions`; its monitors are built by
:func:`ubunye.monitors.build_monitors` and called only through :mod:`ubunye.monitors`.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import re
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ubunye import expectations as expect
from ubunye.config import IOConfig, TaskConfig, load_config
from ubunye.context import RunContext, RunOptions, new_run_id, utc_now
from ubunye.engines import Engine, get_engine, local_path, location
from ubunye.engines.locks import output_lock
from ubunye.engines.transaction import target_of
from ubunye.exceptions import (
    ConfigError,
    EngineError,
    ExpectationError,
    RunInterrupted,
    SessionStartError,
    TaskError,
    UbunyeError,
    error_text,
    without_backtrace,
)
from ubunye.interrupts import Interrupted, SignalGuard, signal_in
from ubunye.interrupts import describe as interruption
from ubunye.lineage.environment import CodeFileError
from ubunye.lineage.profiles import profile_fields
from ubunye.lineage.record import DatasetRecord, ErrorInfo, ExpectationResult, Timing, printable
from ubunye.lineage.recorder import LineageRecorder, current_run
from ubunye.lineage.redact import mask_text, remember_secrets
from ubunye.lineage.secrets import secret_values
from ubunye.lineage.store import RecordStore, RecordURL
from ubunye.monitors import accepted_kwargs, build_monitors, call_monitor, is_essential, monitor_name
from ubunye.paths import check_outputs, check_schemes, check_task_dir, check_template_vars, task_folder
from ubunye.spark.errors import spark_reason
from ubunye.task import load_task_class

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ubunye.hashing.delta_files import SumsCache
    from ubunye.hashing.delta_hash import DeltaHash

log = logging.getLogger("ubunye")


@dataclass
class RunResult:
    """What a run returns: status, run_id, the outputs it produced and where its record is (if recorded)."""

    run_id: str
    status: str
    outputs: dict[str, Any] = field(default_factory=dict)
    record_path: Path | RecordURL | None = None
    error: ErrorInfo | None = None
    context: RunContext | None = None


class _Run:
    """Collects the evidence of one run while it happens."""

    def __init__(self) -> None:
        self.stage = "setup"
        self.name: str | None = None
        self.timings: list[Timing] = []
        self.inputs: list[DatasetRecord] = []
        self.outputs: list[DatasetRecord] = []
        self.expectations: list[ExpectationResult] = []

    @contextmanager
    def step(self, stage: str, name: str | None = None) -> Iterator[None]:
        self.stage, self.name = stage, name
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings.append(Timing(stage, name, round(time.perf_counter() - start, 6)))


def _dataset(
    name: str,
    io: IOConfig,
    ctx: RunContext,
    *,
    mode: str | None = None,
    written: bool | None = None,
    hash_error: str | None = None,
) -> DatasetRecord:
    return DatasetRecord(
        name=name,
        format=io.format or ("table" if io.table else None),
        location=location(io, ctx.usecase_dir),
        version=io.version,
        timestamp=io.timestamp,
        mode=mode,
        written=written,
        hash_error=hash_error,
    )


@dataclass(frozen=True)
class _Table:
    """A Delta input as read: its base folder, the version read, and the run's cache of per-file sums."""

    base_dir: Path
    version: int | None
    cache: SumsCache


def _hash_into(
    record: DatasetRecord, frame: object, engine: Engine[Any], io: IOConfig, where: str, table: _Table | None = None
) -> None:
    """The rows-v1 hash into ``record``, with the profile (docs/rows-v1.md section 12) in the same pass unless
    the dataset turns it off. A key naming no column of the frame fails the run (a ConfigError naming ``where``,
    the dataset's config key) before any output is written; a profile that cannot be computed otherwise leaves
    the data hash to the plain hash and says why in profile_error. An input read from ``table`` is hashed (and
    profiled) from the per-file sums (and profile partials) cached for it where the engine can
    (``Engine.hash_delta``; the same hash and profile as the frame's)."""
    from ubunye.hashing.profile import ProfileOptionError

    profiled, h = None, None
    # hash_delta, profile, delta_version, check_output and local_root are the Engine's optional members: a backend
    # written to docs/backends.md's interface has none of them, and runs as before they existed.
    delta = table is not None and hasattr(engine, "hash_delta") and io.format == "delta" and io.path is not None
    profiling = io.profile and hasattr(engine, "profile")
    try:
        if delta and io.options:  # the per-file numbers read the table plainly; reader options may change its rows
            record.hash_mode = "full"
            record.hash_reason = f"read with options ({', '.join(sorted(io.options))}): the frame read is hashed whole"
        elif delta:
            assert table is not None
            got = _hash_table(record, engine, io, table)
            if got is not None:
                h, profiled = got.hash, got.profile if profiling else None
                if profiling and profiled is None:  # an engine whose hash_delta makes no profile
                    record.hash_mode, record.hash_reason = "full", "the engine's hash_delta gives no profile"
        if profiling and profiled is None:
            try:
                profiled = engine.profile(frame, key=io.key or None, buckets=io.buckets)
                h = profiled.hash
            except ProfileOptionError:
                raise
            except Exception as exc:
                record.profile_error = error_text(exc)
    except ProfileOptionError as exc:  # the config's key names no column of the frame: the user's to fix
        raise ConfigError(f"{where}: {exc}") from None
    try:
        h = h or engine.hash(frame)
    except Exception as exc:  # honest failure: no data hash, and why; never the schema hash instead
        record.data_hash, record.hash_error = None, error_text(exc)
        return
    record.row_count, record.data_hash, record.schema_hash = h.row_count, h.data_hash, h.schema_hash
    record.schema, record.hash_method = h.schema, h.hash_method
    if profiled is not None:
        for name, value in profile_fields(profiled).items():
            setattr(record, name, value)


def _hash_table(record: DatasetRecord, engine: Engine[Any], io: IOConfig, table: _Table) -> DeltaHash | None:
    """The Delta input's hash (and its profile when ``io.profile``) through the engine's ``hash_delta``, its mode
    and reason into ``record``; None (the frame is then hashed whole, and the record says why) when the engine
    cannot hash the table so. A key naming no column of the table is raised (a ProfileOptionError), and so is a
    refusal of the rows as read (a data file in Spark's legacy hybrid calendar, read as other days): the frame
    read holds those rows too, so hashing it whole instead would record wrong data as the input's."""
    from ubunye.engines.legacy_dates import LegacyCalendarError
    from ubunye.hashing.profile import ProfileOptionError

    try:
        got = engine.hash_delta(io, table.base_dir, version=table.version, cache=table.cache)
    except ProfileOptionError:
        raise
    except LegacyCalendarError as exc:
        msg = f"input {io.name!r} (Delta at {location(io, table.base_dir)}): {exc}"
        raise LegacyCalendarError(msg) from exc
    except Exception as exc:  # e.g. deltalake cannot open a dbfs: path Spark reads: the frame read is hashed whole
        reason = error_text(exc)
        log.info("input %r: hashed in full, not from per-file sums: %s", io.name, reason)
        record.hash_mode, record.hash_reason = "full", reason
        return None
    if got is None:
        return None
    record.hash_mode, record.hash_reason = got.hash_mode, got.reason
    return got


def _sums_cache(options: RunOptions) -> SumsCache | None:
    """The record store's cache of per-file Delta sums, or None (no store; one that cannot be opened)."""
    if options.store is None:
        return None
    try:
        return options.store.file_sums()
    except Exception as exc:  # the hashes are the same without it; only slower
        log.warning("no cache of Delta file sums in %s: %s: %s", options.store.root, type(exc).__name__, exc)
        return None


def _pinned(engine: Engine[Any], io: IOConfig, base_dir: Path) -> tuple[IOConfig, int | None]:
    """A Delta input pinned to the version current now (or the one its time travel names), read at exactly that
    version, so the record's version is the version read even when a writer commits meanwhile."""
    find = getattr(engine, "delta_version", None)  # optional (see _hash_into)
    try:
        version = find(io, base_dir) if find is not None else None
    except EngineError:
        raise
    except Exception as exc:  # deltalake's errors name neither the input nor the table, and may end in a backtrace
        first = (str(exc).strip().splitlines() or [""])[0][:500]
        msg = (
            f"input {io.name!r}: cannot read the Delta table at {location(io, base_dir)}: {type(exc).__name__}: {first}"
        )
        raise EngineError(msg) from exc
    if version is None:
        return io, None
    return dataclasses.replace(io, version=version, timestamp=None), version


def _written_version(engine: Engine[Any], io: IOConfig, base_dir: Path) -> int | None:
    """The Delta version an output's write made when the engine's write did not say: the latest, read while the
    output's lock is still held (which serialises runs on the driver's disk only: on an object store another run
    may have committed since, so the built-in engines' writes return the version their own commit made)."""
    find = getattr(engine, "delta_version", None)
    if find is None or io.format != "delta":
        return None
    try:
        version: int | None = find(io, base_dir)
    except Exception as exc:  # the data is committed; a version that cannot be read back is only not recorded
        log.warning("output %r: could not read the Delta version written: %s: %s", io.name, type(exc).__name__, exc)
        return None
    return version


#: ``_delta_now`` of a Delta output that has no table yet.
_NO_TABLE = -1


def _delta_now(engine: Engine[Any], io: IOConfig, base_dir: Path) -> int | None:
    """The latest version of a Delta output at a path, :data:`_NO_TABLE` when none is there (a local path
    without ``_delta_log``), None when it cannot be told (not Delta at a path, or the log did not read)."""
    find = getattr(engine, "delta_version", None)
    if find is None or io.format != "delta" or io.table is not None:
        return None
    try:
        version: int | None = find(io, base_dir)
        return version
    except Exception:
        # "no table" only where the driver's disk is the table's (a Spark Connect or HDFS path is not): else unknown
        local = _lockable(engine, location(io, base_dir))
        try:
            return _NO_TABLE if local is not None and not _has_commit(Path(local) / "_delta_log") else None
        except (OSError, ValueError):  # this runs while a write's error is being handled: never replace it
            return None


#: A Delta log entry that is (or may be) a commit: a version file, a checkpoint, a staged (coordinated) commit.
_VERSION_FILE = re.compile(r"^\d{20}\.")


def _has_commit(log: Path) -> bool:
    """Whether a Delta log folder holds any file named for a version. Delta 4 makes ``_delta_log/_staged_commits``
    before a first commit: a failed first write leaves that empty folder, and "a log is there" said not known
    where nothing can have landed."""
    if not os.path.lexists(log):
        return False
    return any(_VERSION_FILE.match(f) for _, _, files in os.walk(log) for f in files)


def _written_after_failure(
    record: DatasetRecord, engine: Engine[Any], io: IOConfig, base_dir: Path, before: int | None
) -> bool | None:
    """What a failed write's record says of the output: False when it is known not to have landed, None (not
    known) when it may have. A write that failed before its checkpoint never committed (``written`` is still
    False then). After it, a local folder's commit is the last rename of the transaction (engines.transaction:
    nothing after it raises), a Delta table's is a new version in its log; a catalog table's and an object
    store's are inside the writer's one call, where an error after the commit cannot be told from one before."""
    if record.written is not None:  # the checkpoint (which sets None) was not reached
        return False
    if io.format != "delta" and io.table is None and _lockable(engine, record.location) is not None:
        return False
    if before is not None and _delta_now(engine, io, base_dir) == before:
        return False
    return None


def _transform(ctx: RunContext, sources: dict[str, Any]) -> dict[str, Any]:
    cfg = ctx.config
    if cfg.transform["type"] == "sql":
        (name,) = cfg.outputs
        return {name: ctx.engine.sql(cfg.transform["query"], sources)}
    cls = load_task_class(ctx.task_dir)
    task = cls(config=cfg, engine=ctx.engine, dt=ctx.dt, dtf=ctx.dtf, mode=ctx.mode)
    try:
        result: object = task.transform(dict(sources))  # user code: checked, whatever its annotation says
    except ModuleNotFoundError as exc:
        found = _helper_not_found(exc, ctx.task_dir)
        if found is exc:
            raise
        raise found from exc
    if not isinstance(result, dict):
        msg = f"{cls.__name__}.transform returned {type(result).__name__}, expected a dict of output frames"
        raise TaskError(msg)
    # Keys of any type (user code may return {1: df}): shown with their type, never sorted as they are, and never
    # equal to an output's name (which has no space).
    names = {name if isinstance(name, str) else f"{type(name).__name__} {name!r}" for name in result}
    missing, extra = sorted(set(cfg.outputs) - names), sorted(names - set(cfg.outputs))
    if missing or extra:
        msg = f"{cls.__name__}.transform returned outputs {sorted(names)}; configured: {sorted(cfg.outputs)}"
        msg += "".join(f"; missing {missing}" if missing else "") + (f"; not configured {extra}" if extra else "")
        raise TaskError(msg)
    native = {}
    for name, frame in result.items():
        try:
            native[name] = ctx.engine.native(frame)
        except EngineError as exc:
            msg = f"{cls.__name__}.transform returned output {name!r} that the engine cannot use: {exc}"
            raise TaskError(msg) from exc
    return native


def _recorder_of(monitors: Sequence[object]) -> LineageRecorder | None:
    """The run's recorder: the first LineageRecorder among its monitors (as build_monitors chose it), or None."""
    return next((m for m in monitors if isinstance(m, LineageRecorder)), None)


def _helper_not_found(exc: ModuleNotFoundError, task_dir: Path) -> BaseException:
    """A helper module of the task imported inside ``transform``: say to import it at the top of
    transformations.py (helpers are importable only while it loads: the folder is not left on ``sys.path``,
    where another task's helper of the same name would shadow it); any other missing module as it was."""
    top = (exc.name or "").partition(".")[0]
    if not top or not ((task_dir / f"{top}.py").is_file() or (task_dir / top / "__init__.py").is_file()):
        return exc
    msg = (
        f"{exc}: {top!r} is a helper module of the task ({task_dir}), importable only while transformations.py "
        f"loads: import it at the top of transformations.py, not inside transform"
    )
    return TaskError(msg)


def execute(ctx: RunContext, monitors: Sequence[object], options: RunOptions) -> RunResult:
    """Run one task with its monitors: read, transform, check, write; record everything, even on failure.

    ``options`` (as :func:`~ubunye.monitors.build_monitors` settled them with ``monitors``) say what is hashed
    and where the record is. An essential monitor (the LineageRecorder) that cannot write the record at the
    start stops the run before anything is read; one that cannot write it at the end makes the run fail.
    Outputs are written under a lock per output location, held until the final record is written, and each
    output is committed only after a checkpoint record carrying its hash (docs/tasks-and-records.md, "Order of
    a run").
    """
    cfg, engine, run, guard = ctx.config, ctx.engine, _Run(), SignalGuard()
    hash_outputs, hash_inputs = bool(options.hash_outputs), bool(options.hash_inputs)
    start, held, produced, failure = time.perf_counter(), [], {}, None
    started: list[object] = []
    # The recorder keeps this run's record under its run id, so runs sharing one recorder (threads, a run inside a
    # run's transform, on this thread or a pool's) never wait for one another; current_run tells monitors that
    # note things in the record which run is this thread's.
    with current_run(ctx.run_id, _recorder_of(monitors)), ExitStack() as locks:
        try:
            # Whatever ends the run from here (an essential monitor refusing to start, a KeyboardInterrupt or
            # sys.exit in a task_start or in the transform), every monitor told it started is told it ended:
            # never a record left `running` in a process that lives on (a notebook's).
            _start(ctx, monitors, options, started)
            with guard.running():
                sources = _read(ctx, run, hash_inputs, _sums_cache(options) if hash_inputs else None)
                _check(run, cfg, sources, "inputs", engine)
                with run.step("transform", ctx.task):
                    produced = _transform(ctx, sources)
                for name, io in cfg.outputs.items():
                    produced[name] = engine.hold(produced[name])
                    held.append(produced[name])
                    record = _dataset(name, io, ctx, mode=io.mode, written=False)
                    run.outputs.append(record)
                    if hash_outputs:
                        with run.step("hash", f"outputs.{name}"):
                            _hash_into(record, produced[name], engine, io, f"{cfg.path}: CONFIG.outputs.{name}.key")
                _check(run, cfg, produced, "outputs", engine)
                # Written in the order of their locations, each lock taken just before and held to the end: two
                # runs sharing outputs take the locks in one order, so they serialize and cannot deadlock.
                for record in sorted(run.outputs, key=lambda d: d.location or ""):
                    with run.step("write", record.name):
                        lockable = _lockable(engine, record.location)
                        if lockable is not None:
                            locks.enter_context(output_lock(lockable))
                        hook = functools.partial(_checkpoint, ctx, monitors, options, run, start, record)
                        io = cfg.outputs[record.name]
                        before = _delta_now(engine, io, ctx.usecase_dir)
                        try:
                            committed = _write(engine, produced[record.name], io, ctx.usecase_dir, hook, guard)
                        except BaseException:
                            record.written = _written_after_failure(record, engine, io, ctx.usecase_dir, before)
                            raise
                    record.written = True
                    record.version = committed
                    if committed is None:
                        record.version = _written_version(engine, cfg.outputs[record.name], ctx.usecase_dir)
                    guard.resume()
            status = "success"
        except BaseException as exc:  # interruptions too: the record must say how the run ended
            status, failure = "failed", exc
        with guard.finishing():
            error, stopped = _finish(ctx, run, engine, held, failure)
            ended = _end(ctx, started, _evidence(ctx, options, run, status, start, error))
            stopped = stopped or ended.stopped
    path = _record_path(ctx, options)
    result = RunResult(ctx.run_id, status, produced if status == "success" else {}, path, error, ctx)
    name = f"task {ctx.usecase}/{ctx.package}/{ctx.task}"
    where = f" (record: {path})" if path else ""
    if isinstance(failure, _NotStarted):  # its message names the monitor that refused to start
        new: TaskError = failure
    elif failure is not None:
        why, stage = _why(failure), error.stage if error is not None else run.stage
        new = _failure_error(failure, mask_text(f"{name} failed in {stage}: {why}{where}"))
    elif ended.record is not None:
        msg = f"{name} wrote its outputs but its final record could not be written: {ended.record}"
        new = TaskError(mask_text(msg))
    elif ended.monitors is not None:
        new = TaskError(mask_text(f"{name} succeeded{where}, but {ended.monitors}"))
    elif guard.pending is not None:
        new = RunInterrupted(f"{name} succeeded{where}, then was interrupted by {_signal_name(guard.pending)}")
        new.exit_code = 128 + guard.pending
    elif stopped is not None:  # a KeyboardInterrupt or SystemExit in a monitor's task_end, after the record
        new = _failure_error(stopped, mask_text(f"{name} succeeded{where}, then was {_why(stopped)}"))
    else:
        return result
    if failure is not None:  # the run failed anyway: what also went wrong while ending it is said after
        # (a recorder that could not write the running record failing again at the end is the same story)
        if ended.record is not None and not (isinstance(failure, _NotStarted) and failure.recorder):
            new.args = (f"{new.args[0]}; its final record could not be written either: {mask_text(ended.record)}",)
        if ended.monitors is not None:
            new.args = (f"{new.args[0]}; then {mask_text(ended.monitors)}",)
    elif ended.record is not None and ended.monitors is not None:
        new.args = (f"{new.args[0]}; and {mask_text(ended.monitors)}",)
    new.result = result  # type: ignore[attr-defined]
    if new is failure:
        raise new  # its cause is already the monitor's error
    raise new from failure or stopped


def _record_path(ctx: RunContext, options: RunOptions) -> Path | RecordURL | None:
    """Where the run's record is; None when the store refuses the run's names (then the recorder could not write
    the record either, and the run's error says why)."""
    try:
        return options.record_path(ctx)
    except Exception:
        return None


def _lockable(engine: Engine[Any], where: str | None) -> str | None:
    """The driver-local path to lock for an output, or None (a table, an object store, Spark's HDFS/DBFS).

    A symlinked location is locked at its target, as the engine's write locks it (``transaction.target_of``): a run
    writing ``/abs/link`` and one writing the real folder wait on one lock."""
    if not where:
        return None
    local_root = getattr(engine, "local_root", None)  # optional (see _hash_into): Spark knows what is on the driver
    root = local_root(where) if local_root is not None else local_path(where)
    return None if root is None else str(target_of(Path(root)))


def _write(
    engine: Engine[Any],
    frame: object,
    io: IOConfig,
    base_dir: Path,
    hook: Callable[[SignalGuard | None], None],
    guard: SignalGuard,
) -> int | None:
    """One output through the engine, with the checkpoint record written just before it is committed; the Delta
    version its commit made when the engine says (an int), else None."""
    if "before_commit" in accepted_kwargs(engine.write, {"before_commit": None}):
        committed = engine.write(frame, io, base_dir, before_commit=lambda: hook(guard))
    else:
        # An engine of an older plugin has no commit hook: the checkpoint comes before its write, and signals are
        # not held through a write that may take long.
        hook(None)
        committed = engine.write(frame, io, base_dir)
    # A backend's write may return anything (docs/backends.md's returned None): only a version is taken as one.
    return committed if isinstance(committed, int) and not isinstance(committed, bool) and committed >= 0 else None


def _read(ctx: RunContext, run: _Run, hash_inputs: bool, cache: SumsCache | None) -> dict[str, Any]:
    sources: dict[str, Any] = {}
    for name, io in ctx.config.inputs.items():
        with run.step("read", name):
            pinned, version = _pinned(ctx.engine, io, ctx.usecase_dir)
            sources[name] = ctx.engine.read(pinned, ctx.usecase_dir)
        record = _dataset(name, io, ctx)
        record.version = version if version is not None else io.version
        run.inputs.append(record)
        if hash_inputs:
            table = None if cache is None or version is None else _Table(ctx.usecase_dir, version, cache)
            with run.step("hash", f"inputs.{name}"):
                where = f"{ctx.config.path}: CONFIG.inputs.{name}.key"
                _hash_into(record, sources[name], ctx.engine, pinned, where, table)
            if table is None and version is not None and record.hash_mode is None and record.data_hash:
                record.hash_mode = "full"  # a Delta input hashed whole: say why it was not from per-file sums
                record.hash_reason = "no cache of per-file sums (no record store, or it could not be opened: see log)"
    return sources


def _release(engine: Engine[Any], frame: object) -> None:
    try:
        engine.release(frame)
    except Exception as exc:  # an unpersist that fails must not hide how the run ended
        log.warning("could not release a held frame: %s", error_text(exc))


def _error(run: _Run, failure: BaseException | None) -> ErrorInfo | None:
    if failure is None:
        return None
    if isinstance(failure, _NotStarted):  # the monitor's own error, in the words the run fails with
        return ErrorInfo(mask_text(failure.kind), mask_text(str(failure)), "setup", None)
    stage = "expectations" if isinstance(failure, ExpectationError) else run.stage
    kind = type(signal_in(failure) or failure).__name__
    return ErrorInfo(mask_text(kind), mask_text(_why(failure)), stage, run.name)


def _finish(
    ctx: RunContext, run: _Run, engine: Engine[Any], held: list[object], failure: BaseException | None
) -> tuple[ErrorInfo | None, BaseException | None]:
    """What comes between the run's last step and telling the monitors it ended: the datasets it never reached
    listed, the held frames released, the error described. Nothing here may stop the monitors being told: an
    interruption (a KeyboardInterrupt or sys.exit in an engine's release) is returned, to be raised once every
    monitor ended, and any other error is logged."""
    stopped: BaseException | None = None
    if failure is not None:
        try:
            _note_missing(run, ctx)
        except Exception as exc:  # the record then lists fewer datasets; it still ends
            log.warning("could not list the datasets the run did not reach: %s", error_text(exc))
    for frame in held:
        try:
            _release(engine, frame)
        except BaseException as exc:  # _release logs any Exception: this is an interruption
            stopped = stopped or exc
    return _error(run, failure), stopped


def _why(failure: BaseException) -> str:
    """What went wrong, in words: the interruption, else the exception's message, else (``raise MemoryError()``,
    a bare ``assert``) its type's name, so neither the CLI line nor the record says nothing. A KeyError's message
    is only the key (``s["scr"]`` says ``'scr'``): its type is named too, ``KeyError 'scr'``. Never raises: an
    exception whose ``str()`` raises (user code) is named by its type, and the record still ends ``failed``."""
    try:
        # A py4j error's own text is a line saying nothing and pages of JVM stack: its innermost cause instead
        java = getattr(failure, "java_exception", None) is not None
        text = interruption(failure) or (spark_reason(failure) if java else without_backtrace(str(failure)))
        key_only = isinstance(failure, KeyError) and len(failure.args) == 1 and text == repr(failure.args[0])
    except Exception as exc:
        return f"{type(failure).__name__} (its message could not be read: {type(exc).__name__})"
    if not text.strip():
        return type(failure).__name__
    # No colon after the type: mask_text reads "KeyError: 'x'" as a key and its secret value, and masks the key.
    return f"{type(failure).__name__} {text}" if key_only else text


def _failure_error(failure: BaseException, msg: str) -> TaskError:
    if isinstance(failure, ExpectationError):
        return ExpectationError(msg)
    if interruption(failure) is None:
        return TaskError(msg)
    new = RunInterrupted(msg)
    found = signal_in(failure)  # an error raised while the signal unwound (pyspark's toPandas) is the signal's
    if isinstance(found, Interrupted):
        new.exit_code = 128 + found.signum
    elif isinstance(found, KeyboardInterrupt):
        new.exit_code = 128 + signal.SIGINT
    return new


def _signal_name(signum: int) -> str:
    return signal.Signals(signum).name


def _evidence(
    ctx: RunContext, options: RunOptions, run: _Run, status: str, start: float, error: ErrorInfo | None
) -> dict[str, Any]:
    return {
        "context": ctx,
        "run_id": ctx.run_id,
        "options": options,
        "status": status,
        "ended_at": utc_now(),
        "duration": time.perf_counter() - start,
        "outputs": run.outputs,
        "error": error,
        "inputs": run.inputs,
        "expectations": run.expectations,
        "timings": run.timings,
    }


class _NotStarted(TaskError):
    """An essential monitor failed in task_start (the recorder: could not write the run record): the run did not
    start. ``kind`` is the type of the monitor's error, for the record; ``recorder`` whether it was a recorder."""

    def __init__(self, msg: str, kind: str, recorder: bool) -> None:
        super().__init__(msg)
        self.kind, self.recorder = kind, recorder


def _start(ctx: RunContext, monitors: Sequence[object], options: RunOptions, started: list[object]) -> None:
    """task_start for every monitor, essential ones first; an essential one that fails means the run does not
    start (the monitors after it never hear of it; those before it, and itself, are told it ended, failed). Each
    monitor is added to ``started`` as it is called, so that whatever stops the run meanwhile ends exactly the
    monitors that heard of it."""
    for m in sorted(monitors, key=lambda m: not is_essential(m)):
        started.append(m)
        try:
            call_monitor(m, "task_start", context=ctx, run_id=ctx.run_id, options=options)
        except Exception as exc:  # only an essential monitor's error reaches here
            recorder = isinstance(m, LineageRecorder)
            if isinstance(exc, SessionStartError):  # the recorder asked the engine for its environment: no monitor
                msg = mask_text(f"task {ctx.usecase}/{ctx.package}/{ctx.task} did not start: {error_text(exc)}")
                raise _NotStarted(msg, type(exc).__name__, recorder) from exc
            what = "failed in task_start"
            if recorder:  # a .py file of the task folder it cannot read is the folder's problem, not the store's
                code = isinstance(exc, CodeFileError)
                what = "could not hash the task's code" if code else "could not write the run record"
            msg = mask_text(
                f"task {ctx.usecase}/{ctx.package}/{ctx.task} did not start: monitor {monitor_name(m)} {what}: "
                f"{error_text(exc)}"
            )
            raise _NotStarted(msg, type(exc).__name__, recorder) from exc


def _checkpoint(
    ctx: RunContext,
    monitors: Sequence[object],
    options: RunOptions,
    run: _Run,
    start: float,
    committing: DatasetRecord,
    guard: SignalGuard | None,
) -> None:
    """Before an output is committed, the record on disk carries its hash (status still running), and
    ``written: null`` for it: the commit comes next, so a run killed from here on (or whose final record cannot be
    written) leaves a record that does not say "not written" about rows that may be in place (an append retried
    on that word would add them twice); its ``data_hash`` tells whether they are.

    An essential monitor that cannot write it stops the commit (its error propagates): new data nobody's record
    vouches for is worse than yesterday's data with yesterday's record.
    """
    # From the checkpoint until the output is marked written, a signal waits: the record must not say "not
    # written" about rows the commit already swapped in.
    if guard is not None:
        guard.hold()
    committing.written = None
    evidence = _evidence(ctx, options, run, "running", start, None)
    for m in monitors:
        try:
            call_monitor(m, "task_checkpoint", **evidence)
        except Exception as exc:  # only an essential monitor's: said as what it is, not as the data write's error
            what = "could not write the checkpoint record" if isinstance(m, LineageRecorder) else "failed"
            msg = f"the output was not committed (its previous data is as it was): monitor {monitor_name(m)} {what}"
            raise EngineError(mask_text(f"{msg} before the commit: {error_text(exc)}")) from exc


@dataclass
class _Ended:
    """How telling the monitors the run ended went: what the recorder failed with (the final record is not
    written), what any other essential monitor failed with, and the first KeyboardInterrupt or SystemExit a
    monitor raised (None each when there was none)."""

    record: str | None = None
    monitors: str | None = None
    stopped: BaseException | None = None


def _end(ctx: RunContext, monitors: Sequence[object], evidence: dict[str, Any]) -> _Ended:
    """task_end for every monitor in ``monitors`` (those told the run started), each whatever the others did.

    Other monitors end first and recorders last, so what the others note in the record (an event backend that
    failed) is in the final record the recorder writes, and an essential monitor failing cannot stop the final
    record being written. A KeyboardInterrupt or ``sys.exit`` in one of them does not stop the others (else a
    record would stay ``running`` while the process lives on); the caller raises it after.
    """
    ended = _Ended()
    for m in sorted(monitors, key=lambda m: (isinstance(m, LineageRecorder), is_essential(m))):
        try:
            call_monitor(m, "task_end", **evidence)
        except Exception as exc:  # only an essential monitor's error reaches here
            _note_end_failure(ended, m, error_text(exc))
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: raised once every monitor ended
            why = _why(exc)
            log.warning("monitor %s was interrupted in task_end: %s", monitor_name(m), why)
            if isinstance(m, LineageRecorder):  # the final record may not be written: the run says so
                _note_end_failure(ended, m, f"{type(exc).__name__}: {why}")
            ended.stopped = ended.stopped or exc
    return ended


def _note_end_failure(ended: _Ended, monitor: object, text: str) -> None:
    """An essential monitor's failure in task_end, in ``ended``: the recorder's as the record's, any other's
    naming the monitor and its hook (its record, if any, is the recorder's and was written)."""
    if isinstance(monitor, LineageRecorder):
        ended.record = ended.record or f"monitor {monitor_name(monitor)}: {text}"
    else:
        said = f"monitor {monitor_name(monitor)} failed in task_end: {text}"
        ended.monitors = f"{ended.monitors}; {said}" if ended.monitors else said


def _check(run: _Run, cfg: TaskConfig, frames: dict[str, Any], side: str, engine: Engine[Any]) -> None:
    rules = [e for e in cfg.expectations if e.target.startswith(side + ".")]
    if not rules:
        return
    with run.step("expectations", side):
        for e in rules:
            run.expectations.extend(expect.check(e, frames[e.target.partition(".")[2]], engine))
    bad = [r for r in run.expectations if r.target.startswith(side + ".")]
    errors = expect.failures(bad, "error")
    if errors:
        run.stage = "expectations"
        msg = f"{len(errors)} expectation(s) failed: " + "; ".join(expect.describe(r) for r in errors)
        raise ExpectationError(msg)


def _note_missing(run: _Run, ctx: RunContext) -> None:
    """Inputs not read and outputs not produced are still listed, with why they have no hash."""
    why = f"not available: the run failed in {run.stage}"
    have_in = {d.name for d in run.inputs}
    for name, io in ctx.config.inputs.items():
        if name not in have_in:
            run.inputs.append(_dataset(name, io, ctx, hash_error=why))
    have_out = {d.name for d in run.outputs}
    for name, io in ctx.config.outputs.items():
        if name not in have_out:
            run.outputs.append(_dataset(name, io, ctx, mode=io.mode, written=False, hash_error=why))


def prepare(
    task_dir: str | Path,
    *,
    dt: str | None = None,
    dtf: str | None = None,
    mode: str | None = None,
    engine: str | Engine[Any] | None = None,
    spark: SparkSession | None = None,
    entry_point: str = "python",
) -> RunContext:
    """Load a task folder's config and pick its engine; the context every entry point runs."""
    task_dir = task_path(task_dir)
    _check_engine_arg(engine)
    if not task_dir.is_dir():
        msg = f"{task_dir}: no such task folder (expected <usecase_dir>/<usecase>/<package>/<task>)"
        raise ConfigError(msg)
    usecase_dir, usecase, package, task = check_task_dir(task_dir)
    check_template_vars(dt=dt, dtf=dtf, mode=mode)
    cfg = load_config(task_dir, dt=dt, dtf=dtf, mode=mode)
    remember_secrets(secret_values(cfg.rendered, cfg.env_used))
    check_schemes(cfg)
    with _unusable_path(cfg.path, "CONFIG.outputs"):
        outputs = {name: location(io, usecase_dir) for name, io in cfg.outputs.items()}
        check_outputs(cfg, usecase_dir, outputs, {name: location(io, usecase_dir) for name, io in cfg.inputs.items()})
    if engine is None or isinstance(engine, str):
        engine = get_engine(engine or cfg.backend, cfg.spark_conf, spark=spark)
    # Outputs the engine cannot write as a whole (object-store overwrite of plain files, partition_by it cannot
    # read back as written...) are refused before anything is read, not after the transform.
    for io in cfg.outputs.values():
        check = getattr(engine, "check_output", None)  # optional (see _hash_into)
        if check is not None:
            with _unusable_path(cfg.path, f"CONFIG.outputs.{io.name}.path"):
                check(io, usecase_dir)
    return RunContext(
        task_dir, usecase_dir, usecase, package, task, cfg, engine, new_run_id(), dt, dtf, mode, entry_point
    )


def task_path(task_dir: object) -> Path:
    """The task folder a caller gave (a str or os.PathLike; a leading ``~`` is the user's home, as for the
    records location), absolute. Anything else is a ConfigError naming what was given, not a TypeError from
    deep inside pathlib.

    Example:
        >>> task_path(3)
        Traceback (most recent call last):
        ubunye.exceptions.ConfigError: task_dir: expected a path (str or os.PathLike) to a task folder, got int 3
        >>> task_path("~/jobs/shop/daily/orders") == Path.home() / "jobs/shop/daily/orders"
        True
    """
    if isinstance(task_dir, str) or (isinstance(task_dir, os.PathLike) and isinstance(os.fspath(task_dir), str)):
        text = os.fspath(task_dir)
        if text.strip():
            from ubunye.engines.paths import home_expanded

            try:
                return home_expanded(text).resolve()
            except ValueError as exc:
                raise ConfigError(f"task_dir: {exc}") from None
    msg = f"task_dir: expected a path (str or os.PathLike) to a task folder, got {type(task_dir).__name__} {task_dir!r}"
    raise ConfigError(msg)


def _check_engine_arg(engine: object) -> None:
    """``engine=`` is a name, an engine object or None: an int or a typo'd object is named here, before it fails
    somewhere else (as "the run record could not be written")."""
    if engine is None or isinstance(engine, str):
        return
    missing = [m for m in ("read", "write", "native", "hash") if not callable(getattr(engine, m, None))]
    if missing or not isinstance(getattr(engine, "name", None), str):
        what = f"lacks {', '.join(missing)}" if missing else "has no name"
        msg = (
            f"engine: expected 'pandas', 'spark', 'polars' or an engine object, got {type(engine).__name__} "
            f"{engine!r} (it {what})"
        )
        raise ConfigError(msg)


def _check_monitors(monitors: object) -> list[object]:
    """``monitors=`` as a list (any iterable: a generator was consumed by the first look and gave no monitors; None
    is none); a single monitor, a string, a mapping or an object with no hook is refused, naming it (a string was
    taken one character at a time, each a monitor with no hook: silently nothing)."""
    hooks = ("task_start", "task_checkpoint", "task_end")
    if monitors is None:  # the usual Python spelling of "none"
        return []
    if isinstance(monitors, (str, bytes, Mapping)) or not isinstance(monitors, Iterable):
        msg = f"monitors: expected a list of monitor objects, got {type(monitors).__name__} {monitors!r}"
        if any(callable(getattr(monitors, h, None)) for h in hooks):
            msg += " (one monitor: give [monitor])"
        raise ConfigError(msg)
    given = list(monitors)
    for i, m in enumerate(given):
        if not any(callable(getattr(m, h, None)) for h in hooks):
            msg = f"monitors[{i}]: {type(m).__name__} {m!r} is not a monitor (it has no {', '.join(hooks)})"
            raise ConfigError(msg)
    return given


def _check_spark_arg(spark: object) -> None:
    """``spark=`` is a SparkSession (classic or Spark Connect: neither is the other's subclass) or None."""
    if spark is None:
        return
    if not all(callable(getattr(spark, m, None)) for m in ("createDataFrame", "sql")) or not hasattr(spark, "conf"):
        msg = f"spark: expected a SparkSession, got {type(spark).__name__} {spark!r}"
        raise ConfigError(msg)


@contextmanager
def _unusable_path(config: Path, key: str) -> Iterator[None]:
    """An OSError while checking a path (a name too long, a folder that cannot be listed) as a ConfigError
    naming the config key and the path: the location is the config's, and no run has started."""
    try:
        yield
    except OSError as exc:
        where = f" ({printable(str(exc.filename))})" if exc.filename else ""
        msg = f"{config}: {key}: cannot use the path{where}: {exc.strerror or exc}"
        raise ConfigError(msg) from exc


def run_task(
    task_dir: str | Path,
    *,
    dt: str | None = None,
    dtf: str | None = None,
    mode: str | None = None,
    engine: str | Engine[Any] | None = None,
    lineage: bool | None = None,
    monitors: Sequence[object] = (),
    spark: SparkSession | None = None,
    entry_point: str = "python",
    records: str | Path | RecordStore | None = None,
    storage_options: dict[str, Any] | None = None,
    options: RunOptions | None = None,
) -> RunResult:
    """Run the task in ``task_dir`` (``<usecase_dir>/<usecase>/<package>/<task>``).

    Args:
        dt, dtf, mode: template variables (an omitted one is undefined in the config).
        engine: "pandas" or "spark" (default: ENGINE.backend of config.yaml), or an engine object.
        lineage: True records the run even if config.yaml lists no lineage monitor; False never records;
            None follows config.yaml.
        monitors: extra monitor objects.
        spark: a SparkSession to use (default: the active one, else a new one).
        records: where the record goes: a folder, or any URL fsspec opens (``s3://bucket/records``); default
            ``$UBUNYE_RECORDS``, else ``<usecase_dir>/.ubunye/lineage``. An object store is checked before
            anything runs: one that cannot be reached fails the run before it reads or writes anything.
        storage_options: for a records URL, passed to its fsspec filesystem (``endpoint_url``, ``profile``...).
        options: instead of ``lineage``, ``records`` and ``storage_options``: the run's options, e.g.
            ``RunOptions.resolve(lineage=True, hash_inputs=False)`` to record a run without hashing its inputs.

    Raises:
        TaskError: the run failed (read, transform, expectations, write); the record, if any, is written first.
        ConfigError: config.yaml is invalid.
        RecordError: the records location is unknown, its filesystem not installed, or it cannot be reached.
        UbunyeError: ``options`` given together with ``lineage``, ``records`` or ``storage_options``.

    Example (the example usecase's orders, then revenue from them, on pandas in a temporary copy):
        >>> import shutil, tempfile
        >>> from pathlib import Path
        >>> import ubunye.testing
        >>> usecase_dir = Path(tempfile.mkdtemp())
        >>> _ = shutil.copytree(Path(ubunye.testing.__file__).parent / "data/examples/shop", usecase_dir / "shop")
        >>> run_task(usecase_dir / "shop/daily/orders", dt="2026-12-01", engine="pandas").status
        'success'
        >>> result = run_task(usecase_dir / "shop/daily/revenue", dt="2026-12-01", engine="pandas", lineage=True)
        >>> result.status, sorted(result.outputs), result.record_path.parent.relative_to(usecase_dir).as_posix()
        ('success', ['revenue'], '.ubunye/lineage/shop/daily/revenue')
        >>> shutil.rmtree(usecase_dir)
    """
    if options is None:
        options = RunOptions.resolve(lineage=lineage, records=records, storage_options=storage_options)
    elif not isinstance(options, RunOptions):
        raise ConfigError(_NOT_OPTIONS.format(f"{type(options).__name__} {options!r}"[:200]))
    elif any(given is not None for given in (lineage, records, storage_options)):
        msg = "run_task takes options= or lineage=/records=/storage_options=, not both"
        raise UbunyeError(msg)
    monitors = _check_monitors(monitors)
    _check_spark_arg(spark)
    ctx = prepare(task_dir, dt=dt, dtf=dtf, mode=mode, engine=engine, spark=spark, entry_point=entry_point)
    options, chosen = build_monitors(ctx, options, monitors)
    _check_records_root(ctx, options.store)
    return execute(ctx, chosen, options)


_NOT_OPTIONS = "options: expected a RunOptions (RunOptions.resolve(lineage=True, ...)) or None, got {}"


def _check_records_root(ctx: RunContext, store: RecordStore | None) -> None:
    """An output may not be, hold or sit inside a local records root (given elsewhere than the usecase_dir,
    the paths check alone would not see it): an overwrite there would replace receipts with data. Nor may an
    input (--records data/in): the run's record would be written into its data, and every later read of it would
    find a folder no partition ("files of 2 formats")."""
    if store is None or store.remote:
        return
    root = Path(store.root).resolve()
    sides = (
        ("outputs", ctx.config.outputs, "an output must be a folder of its own"),
        ("inputs", ctx.config.inputs, "records and an input's data may not share a folder (give --records elsewhere)"),
    )
    for side, ios, advice in sides:
        for name, io in ios.items():
            where = location(io, ctx.usecase_dir)
            path = None if where.startswith("table:") else local_path(where)
            if path is None:
                continue
            path = path.resolve()
            why = (
                "is"
                if path == root
                else "is inside"
                if root in path.parents
                else "holds"
                if path in root.parents
                else ""
            )
            if why:
                msg = f"{ctx.config.path}: CONFIG.{side}.{name}.path: {path} {why} the record store {root}; {advice}"
                raise ConfigError(msg)


def run_pipeline(
    usecase_dir: str | Path,
    usecase: str,
    package: str,
    tasks: Sequence[str],
    **kwargs: Any,  # noqa: ANN401 (run_task's keyword arguments, each its own type)
) -> list[RunResult]:
    """Run tasks of one package in order (stopping at the first failure), sharing one engine.

    Takes the same keyword arguments as :func:`run_task` (``entry_point`` defaults to "pipeline"); every task
    runs with the same :class:`~ubunye.context.RunOptions`, so with one record store, reached before the first.
    """
    if isinstance(tasks, str) or not tasks:
        msg = f"run_pipeline needs a list of task names, got {tasks!r}"
        raise UbunyeError(msg)
    kwargs.setdefault("entry_point", "pipeline")
    if kwargs.get("options") is None:
        wanted = {k: kwargs.pop(k, None) for k in ("lineage", "records", "storage_options")}
        kwargs["options"] = RunOptions.resolve(**wanted)
    elif not isinstance(kwargs["options"], RunOptions):
        raise ConfigError(_NOT_OPTIONS.format(f"{type(kwargs['options']).__name__} {kwargs['options']!r}"[:200]))
    # Every task folder is checked before the first runs: a typo in the third must not leave two runs done.
    if "monitors" in kwargs:  # a list once, not a generator each task would find used up after the first
        kwargs["monitors"] = _check_monitors(kwargs["monitors"])
    folders = [task_folder(usecase_dir, usecase, package, task) for task in tasks]
    # Resolved: a symlinked task, or a name in other case on a case-insensitive disk, is the same task.
    seen = [f.resolve() for f in folders]
    twice = next((task for n, (task, f) in enumerate(zip(tasks, seen, strict=True)) if f in seen[:n]), None)
    if twice is not None:  # its second run would overwrite its first run's outputs, reading the same inputs
        msg = f"run_pipeline: task {printable(str(twice))!r} is named twice in {list(map(str, tasks))!r}; name it once"
        raise UbunyeError(msg)
    check_template_vars(dt=kwargs.get("dt"), dtf=kwargs.get("dtf"), mode=kwargs.get("mode"))
    # One engine per backend and ENGINE.spark_conf: a task whose settings differ from the first one's gets its own,
    # which says (as for any running session) which of them the shared session does not have; they were ignored.
    engines: dict[tuple[str, tuple[tuple[str, str], ...]], Engine[Any]] = {}
    results = []
    for task_dir in folders:
        engine = kwargs.get("engine")
        if engine is None or isinstance(engine, str):
            cfg = load_config(task_dir, dt=kwargs.get("dt"), dtf=kwargs.get("dtf"), mode=kwargs.get("mode"))
            remember_secrets(secret_values(cfg.rendered, cfg.env_used))
            backend = engine or cfg.backend
            engine_key = (backend, tuple(sorted((cfg.spark_conf or {}).items())))
            if engine_key not in engines:
                engines[engine_key] = get_engine(backend, cfg.spark_conf, spark=kwargs.get("spark"))
            engine = engines[engine_key]
        results.append(run_task(task_dir, **{**kwargs, "engine": engine}))
    return results
