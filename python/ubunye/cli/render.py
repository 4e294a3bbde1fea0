"""Rich rendering of run records and comparisons for people (``--json`` bypasses all of this)."""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ubunye.lineage.compare import CHANGED, Comparison
from ubunye.lineage.record import DatasetRecord, RunRecord

_STYLE = {"unchanged": "green", "same": "green", "changed": "red", "added": "red", "removed": "red"}


def console() -> Console:
    """A console on the current stdout; wide when stdout is not a terminal, so piped output is not cut."""
    out = Console(file=sys.stdout, highlight=False)
    if not out.is_terminal:
        out = Console(file=sys.stdout, highlight=False, width=max(out.width, 200), no_color=True)
    return out


def flow_help(doc: str | None) -> str:
    r"""A docstring as help text: each paragraph on one line, so the help formatter wraps it to the terminal.

    Example:
        >>> flow_help("One\n    two.\n\n    Three.")
        'One two.\n\nThree.'
    """
    paragraphs = [" ".join(part.split()) for part in inspect.cleandoc(doc or "").split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


def emit_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(value, indent=2, default=str) + "\n")


def dash(value: Any) -> str:
    """``-`` for a missing value, else its text (escaped for rich)."""
    return "-" if value is None or value == "" else escape(str(value))


def short_hash(value: str | None, full: bool = False) -> str:
    """``sha256:2d23c84b5f0f`` (12 hex digits) unless ``full``; ``-`` when missing."""
    if value is None:
        return "-"
    if full or not value.startswith("sha256:"):
        return value
    return value[:19]


def seconds(value: float | None) -> str:
    """``1.234s`` or ``-``."""
    return "-" if value is None else f"{value:.3f}s"


def _rows(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def dataset_table(record: RunRecord) -> Table:
    """Inputs and outputs with rows and short hashes (``hash_error`` where hashing failed, ``-`` if not hashed)."""
    table = Table(title="datasets", title_justify="left", show_lines=False)
    for col in ("side", "name", "format", "rows", "data hash", "method", "location"):
        table.add_column(col, overflow="fold", justify="right" if col == "rows" else "left")
    for side, d in _datasets(record):
        data = short_hash(d.data_hash)
        if d.data_hash is None and d.hash_error:
            data = f"- ({escape(d.hash_error)})"
        table.add_row(side, escape(d.name), dash(d.format), _rows(d.row_count), data, dash(d.hash_method),
                      dash(d.location))  # fmt: skip
    return table


def _datasets(record: RunRecord) -> list[tuple[str, DatasetRecord]]:
    return [("input", d) for d in record.inputs] + [("output", d) for d in record.outputs]


def _dataset_details(out: Console, record: RunRecord) -> None:
    for side, d in _datasets(record):
        out.print(f"[bold]{side} {escape(d.name)}[/bold]")
        for key in ("data_hash", "hash_method", "hash_error", "row_count", "schema_hash", "schema", "format",
                    "location", "mode", "version", "timestamp", "written"):  # fmt: skip
            out.print(f"  {key:<12} {dash(getattr(d, key))}", soft_wrap=True)


def render_record(record: RunRecord, path: str, full: bool) -> None:
    """``lineage show`` (``full=False``) and ``lineage trace`` (everything the record holds)."""
    out = console()
    status = record.status if record.status != "success" else "[green]success[/green]"
    out.print(f"[bold]run {escape(record.run_id)}[/bold]  {'/'.join(record.identity)}  {status}")
    facts = [
        ("started", record.started_at),
        ("ended", record.ended_at),
        ("duration", seconds(record.duration_seconds)),
        ("backend", record.backend),
        ("entry point", record.entry_point),
        ("ubunye", record.ubunye_version),
        ("record version", record.record_version),
        ("record", path),
    ]
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
        out.print(f"  {name:<16} {dash(value)}")
    tv = ", ".join(f"{k}={v}" for k, v in record.template_vars.items())
    out.print(f"  {'template vars':<16} {dash(tv)}")
    if record.error is not None:
        e = record.error
        where = f"{e.stage}" + (f" ({e.name})" if e.name else "")
        out.print(f"[red]  error in {escape(where)}: {escape(e.type)}: {escape(e.message)}[/red]")
    out.print(dataset_table(record))
    if full:
        _dataset_details(out, record)
    failed = [x for x in record.expectations if not x.passed]
    if not full:
        if record.expectations:
            out.print(f"expectations: {len(record.expectations) - len(failed)} passed, {len(failed)} failed")
        out.print("(ubunye lineage trace shows everything the record holds)")
        return
    if record.expectations:
        t = Table(title="expectations", title_justify="left")
        for col in ("target", "rule", "column", "outcome", "observed", "params", "severity"):
            t.add_column(col, overflow="fold")
        for x in record.expectations:
            outcome = "[green]passed[/green]" if x.passed else "[red]FAILED[/red]" + (f" {x.error}" if x.error else "")
            t.add_row(x.target, x.rule, dash(x.column), outcome, dash(x.observed), dash(x.params), x.severity)
        out.print(t)
    if record.timings:
        t = Table(title="timings", title_justify="left")
        for col in ("stage", "name", "seconds"):
            t.add_column(col, justify="right" if col == "seconds" else "left")
        for x in record.timings:
            t.add_row(x.stage, dash(x.name), seconds(x.seconds))
        out.print(t)
    env = dict(record.environment)
    packages = env.pop("packages", {}) or {}
    out.print("[bold]environment[/bold]" + ("" if env or packages else "  - (not recorded)"))
    for k, v in env.items():
        out.print(f"  {k:<22} {dash(json.dumps(v) if isinstance(v, dict) else v)}")
    for k, v in packages.items():
        out.print(f"  {'package ' + k:<22} {dash(v)}")
    if record.config is not None:
        out.print("[bold]config[/bold] (as rendered, secrets redacted)")
        out.print(escape(json.dumps(record.config, indent=2, default=str)))
    if record.extra:
        out.print("[bold]other fields[/bold]")
        out.print(escape(json.dumps(record.extra, indent=2, default=str)))


def _arrow(a: Any, b: Any) -> str:
    return dash(a) if a == b else f"{dash(a)} -> {dash(b)}"


def _state(text: str) -> str:
    style = _STYLE.get(text)
    return f"[{style}]{text}[/{style}]" if style else f"[yellow]{text}[/yellow]"


def render_comparison(c: Comparison, a: RunRecord, b: RunRecord) -> None:
    """``lineage compare``: the summary line first, then the evidence."""
    out = console()
    out.print(f"[bold]{escape(c.summary)}[/bold]")
    for label, r in (("A", a), ("B", b)):
        out.print(f"  {label}: {escape(r.run_id)}  {'/'.join(r.identity)}  {dash(r.started_at)}  {dash(r.status)}"
                  f"  (record v{r.record_version})")  # fmt: skip
    for note in c.notes:
        out.print(f"  [yellow]note: {escape(note)}[/yellow]")
    t = Table(title="data", title_justify="left")
    for col in ("side", "name", "data", "rows A -> B", "schema", "hash A -> B", "why"):
        t.add_column(col, overflow="fold")
    for d in c.outputs + c.inputs:
        hashes = _arrow(short_hash(d.hash_a), short_hash(d.hash_b))
        t.add_row(d.side, escape(d.name), _state(d.data), _arrow(_rows(d.rows_a), _rows(d.rows_b)),
                  _state(d.schema), hashes, dash(d.reason))  # fmt: skip
    out.print(t)
    t = Table(title="what else", title_justify="left")
    for col in ("fact", "A", "B", ""):
        t.add_column(col, overflow="fold")
    for f in (c.code, c.config):
        t.add_row(f.name, short_hash(f.a), short_hash(f.b), _state(f.status))
    if c.config_keys:
        t.add_row("  config keys", "", "", escape(", ".join(c.config_keys)))
    for f in c.template_vars:
        t.add_row(f"template {f.name}", dash(f.a), dash(f.b), _state(f.status))
    for f in (c.status, c.backend, c.ubunye_version, *c.environment_facts, c.environment):
        a_text = short_hash(f.a) if f.name.endswith("_hash") else dash(f.a)
        b_text = short_hash(f.b) if f.name.endswith("_hash") else dash(f.b)
        t.add_row(escape(f.name), a_text, b_text, _state(f.status))
    for p in c.packages:
        t.add_row(f"package {p.name}", dash(p.old), dash(p.new), _state(CHANGED))
    out.print(t)
    if c.expectations:
        t = Table(title="expectations whose outcome changed", title_justify="left")
        for col in ("target", "rule", "column", "A", "B", "observed A -> B"):
            t.add_column(col, overflow="fold")
        word = {True: "passed", False: "[red]failed[/red]", None: "not checked"}
        for x in c.expectations:
            t.add_row(x.target, x.rule, dash(x.column), word[x.passed_a], word[x.passed_b],
                      _arrow(x.observed_a, x.observed_b))  # fmt: skip
        out.print(t)
    else:
        out.print("expectations: no outcome changed")
    t = Table(title="timings (informative, never a change)", title_justify="left")
    for col in ("stage", "name", "A", "B"):
        t.add_column(col, justify="right" if col in ("A", "B") else "left")
    for x in [*c.timings, c.duration]:
        t.add_row(x.stage, dash(x.name), seconds(x.a), seconds(x.b))
    out.print(t)
