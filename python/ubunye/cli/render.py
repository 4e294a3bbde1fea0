"""Rich rendering of run records and comparisons for people (``--json`` bypasses all of this).

Nothing from a record is ever read as rich markup or emoji: its console has markup, emoji and highlighting off,
and every piece of data is a :class:`rich.text.Text` made by :func:`dash` (control characters shown as escapes),
so a task named ``[bold]x`` or an error quoting ``[link=...]`` prints exactly as written.

Example:
    >>> dash("[bold]x[/]").plain, dash(None).plain
    ('[bold]x[/]', '-')
"""

from __future__ import annotations

import inspect
import json
import math
import shlex
import sys
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ubunye.config import IOConfig
from ubunye.lineage.compare import CHANGED, UNCHANGED, Comparison, same_value
from ubunye.lineage.record import DatasetRecord, RunRecord, printable

_STYLE = {"unchanged": "green", "same": "green", "changed": "red", "added": "red", "removed": "red"}
#: How each state of a run is shown (``interrupted``: a running record whose process is gone).
STATE_STYLE = {"success": "green", "failed": "red", "interrupted": "red", "unreadable": "red"}

Piece = str | Text | tuple[str, str]


class _Console(Console):
    """A rich Console whose reader going away is a ``BrokenPipeError`` for the command to exit with 141
    (``errors.BROKEN_PIPE``): rich's own answer is exit status 1, which compare and diff give a meaning."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def console(markup: bool = True) -> Console:
    """A console on the current stdout; wide when stdout is not a terminal, so piped output is not cut.

    Emoji codes (``:warning:``) are never replaced. ``markup=False`` (what the lineage commands use) prints every
    string literally: styles then come from :class:`~rich.text.Text` only. With markup on (``ubunye hash``),
    data must go through ``rich.markup.escape``.
    """
    out = _Console(file=sys.stdout, highlight=False, markup=markup, emoji=False)
    if not out.is_terminal:
        out = _Console(
            file=sys.stdout, width=max(out.width, 200), no_color=True, highlight=False, markup=markup, emoji=False
        )
    return out


def flow_help(doc: str | None) -> str:
    r"""A docstring as help text: each paragraph on one line, so the help formatter wraps it to the terminal.

    Example:
        >>> flow_help("One\n    two.\n\n    Three.")
        'One two.\n\nThree.'
    """
    paragraphs = [" ".join(part.split()) for part in inspect.cleandoc(doc or "").split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


def json_safe(value: object) -> object:
    """``value`` with every non-finite float as the string JSON has no literal for (``"NaN"``, ``"Infinity"``,
    ``"-Infinity"``), so ``--json`` output is always valid JSON.

    Example:
        >>> json_safe({"x": [float("nan"), 1.5, float("-inf")]})
        {'x': ['NaN', 1.5, '-Infinity']}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def emit_json(value: object) -> None:
    """Print ``value`` as indented, strictly valid JSON on stdout (ASCII: nothing a terminal acts on)."""
    sys.stdout.write(json.dumps(json_safe(value), indent=2, default=str, allow_nan=False) + "\n")


def dash(value: object, style: str | None = None) -> Text:
    r"""``-`` for a missing value, else its text, literally (never markup; control characters escaped).

    Example:
        >>> dash("a\x1b[2Jb").plain, dash(3).plain
        ('a\\x1b[2Jb', '3')
    """
    text = "-" if value is None or value == "" else printable(str(value))
    return Text(text, style=style or "")


def line(*pieces: Piece, style: str = "") -> Text:
    """One line of output from constant text, ``(text, style)`` pairs and data (:class:`Text` from dash).

    Example:
        >>> line(("run ", "bold"), dash("[red]r1")).plain
        'run [red]r1'
    """
    return Text.assemble(*pieces, style=style)


def state_text(state: str) -> Text:
    """A run's state, styled: green success, red failed / interrupted / unreadable, yellow running."""
    return dash(state, STATE_STYLE.get(state, "yellow"))


def short_hash(value: object, full: bool = False) -> str:
    """``sha256:2d23c84b5f0f`` (12 hex digits) unless ``full``; ``-`` when missing.

    Example:
        >>> short_hash("sha256:" + "ab" * 32), short_hash(None)
        ('sha256:abababababab', '-')
    """
    if value is None:
        return "-"
    text = str(value)
    if full or not text.startswith("sha256:"):
        return text
    return text[:19]


def seconds(value: float | None) -> str:
    """``1.234s`` or ``-``."""
    return "-" if value is None else f"{value:.3f}s"


def _rows(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _identity(record: RunRecord) -> Text:
    return dash("/".join(record.identity))


def dataset_table(record: RunRecord) -> Table:
    """Inputs and outputs with rows and short hashes (``hash_error`` where hashing failed, ``-`` if not hashed)."""
    table = Table(title="datasets", title_justify="left", show_lines=False)
    for col in ("side", "name", "format", "rows", "data hash", "method", "location"):
        table.add_column(col, overflow="fold", justify="right" if col == "rows" else "left")
    for side, d in _datasets(record):
        data = dash(short_hash(d.data_hash))
        if d.data_hash is None and d.hash_error:
            data = line("- (", dash(d.hash_error), ")")
        table.add_row(side, dash(d.name), dash(d.format), _rows(d.row_count), data, dash(d.hash_method),
                      dash(d.location))  # fmt: skip
    return table


def _datasets(record: RunRecord) -> list[tuple[str, DatasetRecord]]:
    return [("input", d) for d in record.inputs] + [("output", d) for d in record.outputs]


#: Dataset fields ``trace`` leaves out when empty (most datasets have none).
_SHOWN_WHEN_SET = ("key", "profile_error", "hash_mode", "hash_reason")


def _dataset_details(out: Console, record: RunRecord) -> None:
    for side, d in _datasets(record):
        out.print(line((f"{side} ", "bold"), dash(d.name, "bold")))
        for key in ("data_hash", "hash_method", "hash_error", "hash_mode", "hash_reason", "row_count", "schema_hash",
                    "schema", "format", "location", "mode", "version", "timestamp", "written", "key",
                    "profile_error"):  # fmt: skip
            value = getattr(d, key)
            if key in _SHOWN_WHEN_SET and value is None:
                continue
            if key == "written" and value is None and record.status != "success":  # runner: the checkpoint's
                advice = _landed_advice(d, _options(record, side, d), record.backend)
                value = f"not known: the run stopped while committing it ({advice})"
            out.print(line(f"  {key:<12} ", dash(", ".join(value) if key == "key" else value)), soft_wrap=True)
        if d.buckets is not None:
            out.print(line(f"  {'buckets':<12} ", dash(f"{d.buckets.n} (packed, docs/rows-v1.md section 12.2)")))
        for name, col in (d.columns or {}).items():
            nans = "" if col.nans is None else f", {col.nans} NaN"
            out.print(line("  column      ", dash(name), " ", dash(col.type), f", {col.nulls} null{nans}, ",
                           dash(short_hash(col.fingerprint))), soft_wrap=True)  # fmt: skip


def _options(record: RunRecord, side: str, d: DatasetRecord) -> dict[str, Any]:
    """The options of ``d`` its run's config holds that ``ubunye hash`` with the run's engine reads with, as diff
    reads them (a csv separator on pandas; every option on Spark, whose csv reader defaults to ``header=true``)."""
    from ubunye.cli.diff import recorded_options, with_read_options  # diff prints through this module

    options, _ = recorded_options(record, f"{side}s", d.name)
    if not d.format:
        return {}
    return with_read_options(IOConfig(d.name, format=d.format, options={}), options, record.backend or "pandas").options


def _landed_advice(d: DatasetRecord, options: Mapping[str, Any] | None = None, engine: str | None = None) -> str:
    """How to tell whether an output whose commit is not known landed: its location read as the format recorded,
    with the reader ``options`` its run's config gave it (a csv separator: without it the rows read are others),
    by the run's ``engine`` (a Spark csv's ``id`` is an int where pandas infers int64: another hash of the rows).

    Without ``-f``, ``ubunye hash`` guesses from the files: the data file a first Delta write killed before its log
    commit leaves reads as a parquet folder, with the record's very hash, although no table landed.

    Example:
        >>> _landed_advice(DatasetRecord("o", format="csv", location="/d/o", mode="overwrite"), {"sep": ";"})
        "compare its data_hash with: ubunye hash -f csv --option 'sep=;' /d/o"
        >>> _landed_advice(DatasetRecord("o", format="delta", location="/d/my out", mode="overwrite"))
        "compare its data_hash with: ubunye hash -f delta '/d/my out'"
        >>> _landed_advice(DatasetRecord("o", format="delta", location="table:db.`my t`", mode="overwrite"))
        "compare its data_hash with: ubunye hash --engine spark 'db.`my t`'"
        >>> _landed_advice(DatasetRecord("o", format="csv", location="/d/o", mode="overwrite"), None, "spark")
        'compare its data_hash with: ubunye hash --engine spark -f csv /d/o'
    """
    where = d.location or ""
    if where.startswith("table:"):  # a table name may hold backticks and spaces: quoted for the shell too
        command = f"ubunye hash --engine spark {shlex.quote(where.removeprefix('table:'))}"
    else:
        # pandas is ubunye hash's default; an engine a record names is kept as its text, quoted for the shell
        fmt = f" --engine {shlex.quote(engine)}" if engine and engine != "pandas" else ""
        fmt += f" -f {shlex.quote(d.format)}" if d.format else ""
        fmt += "".join(f" --option {shlex.quote(f'{k}={v}')}" for k, v in (options or {}).items())
        command = f"ubunye hash{fmt} {shlex.quote(where)}"
    if d.mode == "append":  # the record hashes the rows it added, not the whole location
        return f"its data_hash is of the rows it added; the location's rows: {command}"
    return f"compare its data_hash with: {command}"


def checkpoint_text(record: RunRecord, ordered: bool = True) -> str | None:
    """The record's ``checkpoint_at`` as shown, None when it has none. A run that never ended (no ``ended_at``:
    still running, or killed after a commit) is ordered by it, in a local store (``ordered``), ``latest`` too
    (:func:`ubunye.lineage.store._order_key`): said, so a user sees why ``latest`` is that run.

    Example:
        >>> killed = RunRecord(run_id="r", usecase="u", package="p", task="t", checkpoint_at="2026-12-01T02:00:20Z")
        >>> checkpoint_text(killed)
        '2026-12-01T02:00:20Z (no end recorded: the run is ordered by its last checkpoint, latest too)'
        >>> checkpoint_text(RunRecord(run_id="r", usecase="u", package="p", task="t")) is None
        True
    """
    at = record.checkpoint_at
    if at is None:
        return None
    if record.ended_at is not None or not ordered:  # an ended run is ordered by its end; a remote store by run id
        return at
    return f"{at} (no end recorded: the run is ordered by its last checkpoint, latest too)"


def render_record(record: RunRecord, path: str, full: bool, state: str | None = None, ordered: bool = True) -> None:
    """``lineage show`` (``full=False``) and ``lineage trace`` (everything the record holds).

    ``state`` is what the run is shown as (default its status): ``interrupted`` for a running record whose
    process is gone. ``ordered``: the record is of a store that orders runs by their end (a local one), so a run
    that never ended is ordered by its checkpoint (:func:`checkpoint_text`).
    """
    out = console(markup=False)
    state = state or record.status
    out.print(line(("run ", "bold"), dash(record.run_id, "bold"), "  ", _identity(record), "  ", state_text(state)))
    checkpoint = checkpoint_text(record, ordered)
    facts: list[tuple[str, object]] = [
        ("started", record.started_at),
        ("ended", record.ended_at),
        *([("checkpoint", checkpoint)] if checkpoint is not None else []),
        ("duration", seconds(record.duration_seconds)),
        ("backend", record.backend),
        ("entry point", record.entry_point),
        ("ubunye", record.ubunye_version),
        ("record version", record.record_version),
        ("record", path),
    ]
    if state != record.status:
        facts.insert(0, ("status", f"{record.status} (as recorded)"))
    p = record.process
    if p is not None and (full or state != record.status):
        facts.append(("process", f"pid {p.pid} on {p.host}" + (f", started {p.started}" if p.started else "")))
    if full:
        facts += [
            ("usecase dir", record.usecase_dir),
            ("model", record.model),
            ("task version", record.task_version),
            ("code_hash", record.code_hash),
            ("config_hash", record.config_hash),
            ("environment_hash", record.environment_hash),
            ("hash inputs", record.hash_inputs),
        ]
    for name, value in facts:
        out.print(line(f"  {name:<16} ", dash(value)))
    tv = ", ".join(f"{k}={v}" for k, v in record.template_vars.items())
    out.print(line(f"  {'template vars':<16} ", dash(tv)))
    if record.error is not None:
        e = record.error
        where = f"{e.stage}" + (f" ({e.name})" if e.name else "")
        out.print(line("  error in ", dash(where), ": ", dash(e.type), ": ", dash(e.message), style="red"))
    out.print(dataset_table(record))
    if full:
        _dataset_details(out, record)
    failed = [x for x in record.expectations if not x.passed]
    if not full:
        if record.expectations:
            out.print(f"expectations: {len(record.expectations) - len(failed)} passed, {len(failed)} failed")
        out.print("(ubunye lineage trace shows everything the record holds)")
        return
    _full_record(out, record)


def _full_record(out: Console, record: RunRecord) -> None:
    if record.expectations:
        t = Table(title="expectations", title_justify="left")
        for col in ("target", "rule", "column", "outcome", "observed", "params", "severity"):
            t.add_column(col, overflow="fold")
        for x in record.expectations:
            outcome = dash("passed", "green") if x.passed else line(("FAILED", "red"))
            if not x.passed and x.error:
                outcome.append_text(line(" ", dash(x.error)))
            t.add_row(dash(x.target), dash(x.rule), dash(x.column), outcome, dash(x.observed), dash(x.params),
                      dash(x.severity))  # fmt: skip
        out.print(t)
    if record.timings:
        t = Table(title="timings", title_justify="left")
        for col in ("stage", "name", "seconds"):
            t.add_column(col, justify="right" if col == "seconds" else "left")
        for timing in record.timings:
            t.add_row(dash(timing.stage), dash(timing.name), seconds(timing.seconds))
        out.print(t)
    env = dict(record.environment)
    packages = env.pop("packages", None) or {}
    out.print(line(("environment", "bold"), "" if env or packages else "  - (not recorded)"))
    for k, v in env.items():
        out.print(line("  ", dash(f"{k:<22}"), " ", dash(json.dumps(v) if isinstance(v, dict) else v)))
    for k, v in packages.items():
        out.print(line("  ", dash(f"{'package ' + k:<22}"), " ", dash(v)))
    if record.config is not None:
        out.print(line(("config", "bold"), " (as rendered, secrets redacted)"))
        out.print(Text(json.dumps(record.config, indent=2, default=str)))  # JSON escapes every control character
    if record.extra:
        out.print(line(("other fields", "bold")))
        out.print(Text(json.dumps(record.extra, indent=2, default=str)))


def _arrow(a: object, b: object) -> Text:
    return dash(a) if same_value(a, b) else line(dash(a), " -> ", dash(b))


def _state(text: str) -> Text:
    return dash(text, _STYLE.get(text, "yellow"))


def _column_table(out: Console, c: Comparison) -> None:
    """Per dataset with column profiles on both sides: every column, changed or unchanged (section 12.1), and the
    note on what of the profiles is not comparable (buckets of another n or key, a bucket field unreadable)
    whenever there is one, columns or not."""
    t = Table(title="columns (fingerprints, docs/rows-v1.md section 12)", title_justify="left")
    for col in ("side", "name", "column", "", "type A -> B"):
        t.add_column(col, overflow="fold")
    shown = False
    for d in c.outputs + c.inputs:
        if d.profile_note:
            t.add_row(d.side, dash(d.name), "", dash(d.profile_note, "yellow"), "")
            shown = True
        cols = d.columns
        if cols is None:
            continue
        for state, names in ((CHANGED, cols.changed), ("added", cols.added), ("removed", cols.removed),
                             (UNCHANGED, cols.unchanged)):  # fmt: skip
            for n in names:
                types = cols.types.get(n)
                # A fingerprint is the column's multiset of values: values moved between rows keep it, and the
                # buckets (below) show those rows changed. "unchanged" alone would say no cell moved.
                shown_state = _state(state) if state != UNCHANGED else dash("same values", _STYLE[UNCHANGED])
                t.add_row(d.side, dash(d.name), dash(n), shown_state, _arrow(*types) if types else "")
                shown = True
        if d.buckets is not None:
            t.add_row(d.side, dash(d.name), "buckets", dash(d.buckets.describe() + " differ"), "")
    if shown:
        out.print(t)


def render_comparison(
    c: Comparison, a: RunRecord, b: RunRecord, states: tuple[str | None, str | None] = (None, None)
) -> None:
    """``lineage compare``: the summary line first, then the evidence (``states``: as :func:`render_record`)."""
    out = console(markup=False)
    out.print(dash(c.summary, "bold"))
    for label, r, state in (("A", a, states[0]), ("B", b, states[1])):
        out.print(line(f"  {label}: ", dash(r.run_id), "  ", _identity(r), "  ", dash(r.started_at), "  ",
                       dash(state or r.status), f"  (record v{r.record_version})"))  # fmt: skip
    for note in c.notes:
        out.print(line("  note: ", dash(note), style="yellow"))
    t = Table(title="data", title_justify="left")
    for col in ("side", "name", "data", "rows A -> B", "schema", "hash A -> B", "why"):
        t.add_column(col, overflow="fold")
    for d in c.outputs + c.inputs:
        hashes = _arrow(short_hash(d.hash_a), short_hash(d.hash_b))
        why = d.reason or d.detail() or None
        version = d.versions()
        t.add_row(d.side, dash(d.name), _state(d.data), _arrow(_rows(d.rows_a), _rows(d.rows_b)),
                  _state(d.schema), hashes, dash("; ".join(x for x in (why, version) if x) or None))  # fmt: skip
    out.print(t)
    _column_table(out, c)
    t = Table(title="what else", title_justify="left")
    for col in ("fact", "A", "B", ""):
        t.add_column(col, overflow="fold")
    for f in (c.code, c.config):
        t.add_row(f.name, dash(short_hash(f.a)), dash(short_hash(f.b)), _state(f.status))
    if c.config_keys:
        t.add_row("  config keys", "", "", dash(", ".join(c.config_keys)))
    for f in c.template_vars:
        t.add_row(line("template ", dash(f.name)), dash(f.a), dash(f.b), _state(f.status))
    for f in (c.status, c.backend, c.ubunye_version, *c.environment_facts, c.environment):
        a_text = short_hash(f.a) if f.name.endswith("_hash") else f.a
        b_text = short_hash(f.b) if f.name.endswith("_hash") else f.b
        t.add_row(dash(f.name), dash(a_text), dash(b_text), _state(f.status))
    for p in c.packages:
        t.add_row(line("package ", dash(p.name)), dash(p.old), dash(p.new), _state(CHANGED))
    out.print(t)
    if c.expectations:
        t = Table(title="expectations whose outcome changed", title_justify="left")
        for col in ("target", "rule", "column", "params", "A", "B", "observed A -> B"):
            t.add_column(col, overflow="fold")
        word = {True: dash("passed"), False: dash("failed", "red"), None: dash("not checked")}
        for x in c.expectations:
            t.add_row(dash(x.target), dash(x.rule), dash(x.column), dash(x.params), word[x.passed_a],
                      word[x.passed_b], _arrow(x.observed_a, x.observed_b))  # fmt: skip
        out.print(t)
    else:
        out.print("expectations: no outcome changed")
    t = Table(title="timings (informative, never a change)", title_justify="left")
    for col in ("stage", "name", "A", "B"):
        t.add_column(col, justify="right" if col in ("A", "B") else "left")
    for pair in [*c.timings, c.duration]:
        t.add_row(dash(pair.stage), dash(pair.name), seconds(pair.a), seconds(pair.b))
    out.print(t)
