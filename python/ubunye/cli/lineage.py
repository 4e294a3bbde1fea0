"""``ubunye lineage list|show|trace|compare``: read the run records a usecase_dir holds.

Readers never trust a file and never rewrite one: a malformed record is reported with its path and field
(``list`` goes on with the others; ``show``, ``trace`` and ``compare`` stop with one ``error:`` line, exit 2), and a
running record whose process is gone is shown ``interrupted`` (:func:`ubunye.lineage.liveness.run_state`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.table import Table

from ubunye.cli import args
from ubunye.cli.errors import domain_errors
from ubunye.cli.render import (
    console,
    dash,
    emit_json,
    flow_help,
    render_comparison,
    render_record,
    seconds,
    state_text,
)
from ubunye.exceptions import RecordError
from ubunye.lineage.compare import compare_records
from ubunye.lineage.liveness import INTERRUPTED, run_state
from ubunye.lineage.record import STATUSES, RunRecord, printable
from ubunye.lineage.redact import mask_text
from ubunye.lineage.store import (
    RecordStore,
    RecordURL,
    StoredRecord,
    instant,
    load_record,
    records_location,
    short_ids,
)

app = typer.Typer(
    name="lineage",
    help="Read run records: list runs, show or trace one, compare two (did they produce the same data, and why not).",
    no_args_is_help=True,
)

UsecaseDir = Annotated[
    str, typer.Option("-d", "--usecase-dir", help="Folder holding <usecase>/<package>/<task> and .ubunye/lineage.")
]
Usecase = Annotated[str | None, typer.Option("-u", "--usecase", help="Only runs of this usecase.")]
Package = Annotated[str | None, typer.Option("-p", "--package", help="Only runs of this package.")]
Task = Annotated[str | None, typer.Option("-t", "--task", help="Only runs of this task.")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON for machines instead of tables.")]
Records = Annotated[
    str | None,
    typer.Option(
        "--records",
        help="Read records from here: a folder or a URL fsspec opens (s3://bucket/records); default "
        "$UBUNYE_RECORDS, else <usecase_dir>/.ubunye/lineage.",
    ),
]
F = TypeVar("F", bound=Callable[..., object])

RUN_HELP = "A run id, a unique prefix of one, latest or latest~N (within -u/-p/-t), or a record .json file."
Run = Annotated[str, typer.Argument(help=RUN_HELP, show_default=False)]


def command(name: str | None = None) -> Callable[[F], F]:
    """Register a command of the group, its docstring flowed into the help text."""

    def deco(func: F) -> F:
        return app.command(name, cls=args.OptionsOnce, help=flow_help(func.__doc__))(func)

    return deco


_RELATIVE = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


#: What ``--status`` may ask for: the states a run is shown in (a file that is no record is listed regardless).
STATES = (*STATUSES, INTERRUPTED)


def _store(usecase_dir: str | Path, records: str | None = None) -> RecordStore:
    """The store ``--records`` (else ``$UBUNYE_RECORDS``) names, else the usecase_dir's own."""
    where = records_location(args.records(records))
    if where is not None:
        store = RecordStore(records=where)
        if records is not None and not store.remote:  # given now and not there: a typo, not a store with no runs yet
            _existing(Path(store.root))
        elif store.remote:  # a missing bucket lists as empty as a new prefix does: "no runs" would hide the typo
            store.check()
        return store
    folder = args.folder(str(usecase_dir), "-d")
    if not folder.is_dir():
        msg = f"usecase dir {printable(str(usecase_dir))} does not exist (give -d <usecase_dir>)"
        raise RecordError(msg)
    return RecordStore(folder)


def _existing(root: Path) -> None:
    """A records folder given with ``--records`` must be there. (``$UBUNYE_RECORDS`` and the usecase_dir's own
    store may not be yet: set before a first run, they list no runs.) A file or a dangling link there is left to
    the store, which names it."""
    try:
        there = root.exists() or root.is_symlink()
    except OSError as exc:  # a name too long for the filesystem
        raise RecordError(f"records folder {printable(str(root))}: {exc.strerror or exc}") from None
    if not there:
        msg = f"records folder {printable(str(root))} does not exist (check --records; a run makes it when it writes "
        raise RecordError(msg + "its first record)")


def _record_file(ref: str) -> Path | None:
    """The record file ``ref`` names, or None when it is a run id, a prefix or ``latest~N``.

    A run id has no ``/``, does not end with ``.json`` or start with ``~`` and is not ``latest~N`` (the store
    refuses such ids: :func:`ubunye.lineage.store.misread_run_id`), so a ref with any of these, or one starting
    with ``file://``, is a file: one that is not there is said to be missing, not looked up as an id.
    """
    if not (ref.endswith(".json") or "/" in ref or "\\" in ref or ref.startswith("~")):
        return None
    path = args.local(ref, "RUN")
    try:
        is_file, is_dir, exists = path.is_file(), path.is_dir(), path.exists()
    except OSError as exc:  # a name too long for the filesystem
        raise RecordError(f"{printable(ref)}: cannot open: {exc.strerror or exc}") from None
    if not is_file:
        # a device or a pipe (/dev/zero, a fifo) is there but is no file: reading it would never end
        other = "is not a regular file, not a record file" if exists else "no such record file"
        what = "is a folder, not a record file" if is_dir else other
        msg = f"{printable(ref)}: {what} (a run is named by its id, a prefix of it, latest~N, or a record .json file)"
        raise RecordError(msg)
    return path


def _same_task(found: StoredRecord, usecase: str | None, package: str | None, task: str | None) -> None:
    """A record file given beside -u/-p/-t must be a run of that task: else one of the two would be ignored."""
    record = found.record
    assert record is not None
    for option, wanted, got in zip(("-u", "-p", "-t"), (usecase, package, task), record.identity, strict=True):
        if wanted is not None and wanted != got:
            who = "/".join(record.identity)
            msg = f"{printable(str(found.path))} is a run of {printable(who)}, not of {option} {printable(wanted)}"
            raise RecordError(msg)


def resolve_run(
    ref: str,
    usecase_dir: str | Path,
    usecase: str | None,
    package: str | None,
    task: str | None,
    records: str | None = None,
) -> StoredRecord:
    """A record file path, else a run of the store named by id, prefix or latest~N."""
    return resolve_runs([ref], usecase_dir, usecase, package, task, records)[0]


def resolve_runs(
    refs: list[str],
    usecase_dir: str | Path,
    usecase: str | None,
    package: str | None,
    task: str | None,
    records: str | None = None,
) -> list[StoredRecord]:
    """Each of ``refs`` as :func:`resolve_run` resolves it, in turn (the first bad one is the error), from one
    listing of the store, each record read at most once: ``compare latest~1 latest`` on a store of 2,000 runs read
    4,000 records, twice each. The store is opened only if a ref names a run of it (a record file needs none)."""
    found: list[StoredRecord] = []
    store: RecordStore | None = None
    with contextlib.ExitStack() as stack:
        for ref in refs:
            path = _record_file(ref)
            if path is not None:
                found.append(StoredRecord(path.resolve(), load_record(path)))
                _same_task(found[-1], usecase, package, task)
                continue
            if store is None:
                store = stack.enter_context(_store(usecase_dir, records).frozen())
            found.append(store.resolve(ref, usecase, package, task))
    return found


def parse_since(text: str, now: dt.datetime | None = None) -> dt.datetime:
    """``--since``: an ISO date or time (instants: ``Z`` equals ``+00:00``) or an age such as ``36h`` or ``7d``.

    Example:
        >>> parse_since("2026-12-01T02:00:00+02:00").isoformat()
        '2026-12-01T02:00:00+02:00'
        >>> now = dt.datetime(2026, 12, 2, tzinfo=dt.timezone.utc)
        >>> parse_since("1d", now).isoformat()
        '2026-12-01T00:00:00+00:00'
    """
    rel = _RELATIVE.match(text.strip())
    if rel:
        now = now or dt.datetime.now(dt.timezone.utc)
        try:
            return now - dt.timedelta(**{_UNITS[rel.group(2)]: int(rel.group(1))})
        except OverflowError:  # more days than a timedelta holds, or an instant before the year 1
            msg = f"{text.strip()!r} reaches back before the year 1: give a smaller age, or a date"
            raise typer.BadParameter(msg, param_hint="--since") from None
    value = instant(text)
    if value is None:
        msg = f"{text!r} is not a date or time (2026-12-01, 2026-12-01T02:00:00Z) or an age (36h, 7d)"
        raise typer.BadParameter(msg, param_hint="--since")
    return value


def _row(entry: StoredRecord, short: dict[str, str], state: str | None = None) -> dict[str, Any]:
    r = entry.record
    if r is None:
        return {"run_id": entry.path.stem, "short_id": short.get(entry.path.stem, entry.path.stem),
                "status": "unreadable", "state": "unreadable", "problem": entry.problem, "field": entry.field,
                "path": str(entry.path)}  # fmt: skip
    methods = sorted({d.hash_method or "none" for d in r.outputs})
    return {
        "run_id": r.run_id,
        # The id the file is found by (a v1 record's file name may differ from its run_id: show takes the former).
        "short_id": short.get(entry.path.stem, entry.path.stem),
        "usecase": r.usecase,
        "package": r.package,
        "task": r.task,
        "status": r.status,
        "state": state or run_state(r),
        "started_at": r.started_at,
        "ended_at": r.ended_at,
        # what orders a run that never ended (killed after a commit) in a local store: latest may be that run
        "checkpoint_at": r.checkpoint_at,
        "duration_seconds": r.duration_seconds,
        "outputs": {d.name: d.row_count for d in r.outputs},
        "hash_methods": methods,
        "record_version": r.record_version,
        "entry_point": r.entry_point,
        "path": str(entry.path),
        "problem": None,
    }


def _problem_line(entry: StoredRecord) -> str:
    """The one stderr line for a record ``list`` cannot load: its path, the field, why (secrets masked)."""
    problem = entry.problem or f"{printable(str(entry.path))}: cannot load run record"
    return "warning: unreadable run record " + " ".join(mask_text(problem).split())


#: The keys ``show --json`` adds beside a record's fields, and the one it keeps a record's clashing keys under.
_READER_KEYS = ("path", "state", "extra")


def record_json(record: RunRecord, path: str, state: str) -> dict[str, Any]:
    """What ``show --json`` and ``trace --json`` print: ``path`` (the file read), then the record's fields with
    ``state`` (:func:`ubunye.lineage.liveness.run_state`) right after ``status``.

    The reader's ``path`` and ``state`` always win: a key this ubunye does not know (kept in ``record.extra``)
    that is named ``path``, ``state`` or ``extra`` is printed under ``extra`` instead, never in their place.

    Example:
        >>> r = RunRecord(run_id="r", usecase="u", package="p", task="t", extra={"state": "x", "note": 1})
        >>> out = record_json(r, "/s/r.json", "running")
        >>> out["path"], out["state"], out["note"], out["extra"]
        ('/s/r.json', 'running', 1, {'state': 'x'})
    """
    data = record.to_dict()
    clashing = {k: record.extra[k] for k in _READER_KEYS if k in record.extra}
    out: dict[str, Any] = {"path": path}
    for key, value in data.items():
        if key in clashing:
            continue
        out[key] = value
        if key == "status":
            out["state"] = state
    if clashing:
        out["extra"] = clashing
    return out


def _no_runs(root: str, wanted: tuple[str | None, ...], known: list[tuple[str, str, str]], entries: bool) -> str:
    """Why nothing is listed: an empty store, filters that match runs none of which pass --status/--since, or
    -u/-p/-t naming no task with records (a typo lists nothing): then the tasks that have them."""
    where = "/".join(x or "*" for x in wanted)
    if entries:
        return printable(f"no runs of {where} under {root} matching the filters")
    if not any(wanted) or not known:
        return printable(f"no runs under {root}")
    names = ["/".join(k) for k in known]
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    return printable(f"no runs of {where} under {root}; runs are recorded for: {', '.join(names[:10])}{more}")


@command("list")
@domain_errors
def list_runs(
    usecase_dir: UsecaseDir = ".",
    usecase: Usecase = None,
    package: Package = None,
    task: Task = None,
    limit: Annotated[int | None, typer.Option("-n", "--limit", help="Show the N newest runs.", min=1)] = None,
    status: Annotated[str | None, typer.Option("--status", help="Only runs with this status.")] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only runs started at or after this time: 2026-12-01, ...Z, 36h, 7d.")
    ] = None,
    as_json: Json = False,
    records: Records = None,
) -> None:
    """Every run under the usecase dir (or --records), newest first, whichever entry point wrote it.

    The status column shows the state: a running record whose process is gone (killed, out of memory) is
    interrupted; --status filters on it. The run column is the id show takes: a v1 record's file name, which
    may differ from the run_id it holds. A file that is not a valid record (corrupt JSON, a field of the wrong
    type, a newer version) is listed as unreadable and named on stderr, one line each with its path and field;
    the other runs are listed and the exit status is 0.

    Example: ubunye lineage list -d examples -u shop -p daily -t revenue -n 5 --since 7d
    """
    if status is not None and status not in STATES:  # a typo would match nothing and list no run, exit 0
        raise typer.BadParameter(f"{status!r} is not one of {', '.join(STATES)}", param_hint="--status")
    cutoff = parse_since(since) if since is not None else None
    store = _store(usecase_dir, records)
    shown: list[tuple[StoredRecord, str]] = []
    problems = []
    entries = False
    with store.frozen():  # one listing of the store serves the short ids, the runs shown and the tasks named
        short = short_ids(store.run_ids())  # from the listing alone: no record is read for it
        known = store.tasks()
        for e in store.newest(usecase, package, task):
            entries = True
            if limit and len(shown) >= limit and store.remote:  # the keys sort by time: read no more than shown
                break
            if e.record is None:
                problems.append(e)
                continue
            state = run_state(e.record)
            if status is not None and state != status:
                continue
            started = instant(e.record.started_at)
            if cutoff is not None and (started is None or started < cutoff):
                continue
            shown.append((e, state))
    shown = shown[:limit] if limit else shown
    rows = [_row(e, short, state) for e, state in shown] + [_row(e, short) for e in problems]
    for e in problems:
        typer.echo(_problem_line(e), err=True)
    if as_json:
        emit_json(rows)
        return
    out = console(markup=False)
    if not rows:
        out.print(_no_runs(str(store.root), (usecase, package, task), known, entries))
        return
    under = store.usecase_dir if not store.remote and store.usecase_dir is not None else store.root
    t = Table(title=f"runs under {printable(str(under))}, newest first", title_justify="left")
    for col in ("run", "task", "status", "started", "duration", "output rows", "hash"):
        t.add_column(col, overflow="fold")
    for row in rows:
        if row["problem"]:
            t.add_row(dash(row["short_id"]), "-", state_text("unreadable"), "-", "-", dash(row["problem"]), "-")
            continue
        outputs = ", ".join(f"{k}={'-' if v is None else v}" for k, v in row["outputs"].items())
        duration = seconds(row["duration_seconds"])
        if row["ended_at"] is None and row["checkpoint_at"] is not None:  # no end: why it is listed where it is
            duration += f" (checkpoint at {row['checkpoint_at']})"
        t.add_row(dash(row["short_id"]), dash("/".join((row["usecase"], row["package"], row["task"]))),
                  state_text(row["state"]), dash(row["started_at"]), dash(duration),
                  dash(outputs), dash(", ".join(row["hash_methods"])))  # fmt: skip
    out.print(t)


def _show(
    run: str,
    usecase_dir: str,
    usecase: str | None,
    package: str | None,
    task: str | None,
    as_json: bool,
    full: bool,
    records: str | None = None,
) -> None:
    found = resolve_run(run, usecase_dir, usecase, package, task, records)
    record: RunRecord = found.record  # type: ignore[assignment]
    state = run_state(record)
    if as_json:
        emit_json(record_json(record, str(found.path), state))
        return
    # a remote store orders runs by run id, a local one by their end (else their checkpoint): see checkpoint_text
    render_record(record, str(found.path), full, state, ordered=not isinstance(found.path, RecordURL))


@command()
@domain_errors
def show(
    run: Run,
    usecase_dir: UsecaseDir = ".",
    usecase: Usecase = None,
    package: Package = None,
    task: Task = None,
    as_json: Json = False,
    records: Records = None,
) -> None:
    """One run in brief: status, timings, inputs and outputs with row counts and hashes, the error if it failed.

    A running record whose process is gone (killed, out of memory) is shown interrupted, with the process that
    ran it; --json has the state beside the recorded status, and the path of the record file (a field the record
    holds that this ubunye does not know, named path, state or extra, is under extra). A malformed record is one
    error line naming its path and field (exit 2).

    Example: ubunye lineage show latest -d examples -u shop -p daily -t revenue
    """
    _show(run, usecase_dir, usecase, package, task, as_json, full=False, records=records)


@command()
@domain_errors
def trace(
    run: Run,
    usecase_dir: UsecaseDir = ".",
    usecase: Usecase = None,
    package: Package = None,
    task: Task = None,
    as_json: Json = False,
    records: Records = None,
) -> None:
    """Everything a run's record holds: datasets with full hashes, schemas and hash errors, expectations, timings,
    code_hash, config_hash, environment, template variables, the config and the error of a failed run.

    Example: ubunye lineage trace 20261202T0943 -d examples
    """
    _show(run, usecase_dir, usecase, package, task, as_json, full=True, records=records)


@command()
@domain_errors
def compare(
    run_a: Annotated[str, typer.Argument(help="The earlier run. " + RUN_HELP, show_default=False)],
    run_b: Annotated[str, typer.Argument(help="The later run. " + RUN_HELP, show_default=False)],
    usecase_dir: UsecaseDir = ".",
    usecase: Usecase = None,
    package: Package = None,
    task: Task = None,
    as_json: Json = False,
    records: Records = None,
) -> None:
    """Did two runs produce the same data, and if not, what moved: code, config, template variables, inputs,
    environment (packages named old -> new). Expectations whose outcome changed and timings are shown too.

    Per input and output, data is unchanged, changed, not comparable (hash_method missing or different, e.g. a
    v1 record against a v2 one) or unknown (a hash missing on a side, with the hash_error), never unchanged for
    two missing hashes. Equal data hashes whose records disagree (row counts, schemas, column fingerprints, a
    column's type or null count under one fingerprint, or bucket numbers differ) are unknown: the records
    disagree. Buckets are compared for records of equal bucket count
    and key columns (in any order); buckets that cannot be read leave the verdict to the data hashes, and the
    summary says so with the record file and field. An interrupted run (its process gone) is treated like a
    failed one: its state is compared and noted, its outputs by the hashes its record holds.

    Exit status: 0 same data from two successful runs; 1 data changed, not comparable or unknown, or a run
    that did not succeed (the same rows computed need not be on disk); 2 usage or read errors (a missing
    usecase dir, an unknown run id, an ambiguous prefix, a malformed record, one naming an input or output
    twice).

    Example: ubunye lineage compare latest~1 latest -d examples -u shop -p daily -t revenue
    """
    found_a, found_b = resolve_runs([run_a, run_b], usecase_dir, usecase, package, task, records)
    a, b = found_a.record, found_b.record
    assert a is not None and b is not None
    states = (run_state(a), run_state(b))
    result = compare_records(a, b, states, (str(found_a.path), str(found_b.path)))
    if as_json:
        emit_json(result.to_dict())
    else:
        render_comparison(result, a, b, states)
    raise typer.Exit(result.exit_code)


def register(root: typer.Typer) -> None:
    """Add the ``lineage`` group to the app."""
    root.add_typer(app, name="lineage")
