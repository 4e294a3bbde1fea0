"""``ubunye hash``: the rows-v1 fingerprint of any file, folder or table, from the driver, without a task."""

from __future__ import annotations

import os
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ubunye.cli import args
from ubunye.cli.errors import domain_errors
from ubunye.cli.render import console, emit_json, flow_help
from ubunye.config import IOConfig
from ubunye.config.model import BACKENDS, FORMATS
from ubunye.engines import get_engine, is_url
from ubunye.engines.inputs import restore_cut_swap
from ubunye.exceptions import EngineError
from ubunye.lineage.record import printable

SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json"}
SUFFIXES[".ndjson"] = "json"
#: Name endings that make a target a file, never a catalog table: the formats ubunye reads, and other data files
#: and compressions (``old.delta``, ``day.csv.gz``), which a Spark table name would not end in.
FILE_SUFFIXES = frozenset(SUFFIXES) | {
    ".delta", ".orc", ".avro", ".txt", ".tsv", ".arrow", ".feather", ".ipc", ".xlsx", ".xls",
    ".gz", ".bz2", ".xz", ".zst", ".zip", ".snappy",
}  # fmt: skip
#: A catalog table name: dot-separated parts, each letters, digits and ``_``, or anything in backquotes.
_TABLE_NAME = re.compile(r"(?:\w+|`(?:[^`]|``)+`)(?:\.(?:\w+|`(?:[^`]|``)+`))*")
#: The most canonical lines ``--show-lines`` prints (a bigger count overflows the readers' C integers).
MAX_SHOW_LINES = 1_000_000
HOW = {"arrow": "the Python twin (Arrow)", "jvm": "ubunye_rows_v1 in the JVM"}


def guess_format(path: Path) -> str:
    """The format of a file or folder: a Delta table (``_delta_log``), or the data files' suffix (so a Delta table
    whose first commit never happened, data files and no log, is guessed parquet: its format is the caller's to say).

    Raises:
        EngineError: the format cannot be told; the message says to give ``--format``.

    Example:
        >>> guess_format(Path("orders.csv"))
        'csv'
    """
    if (path / "_delta_log").is_dir():
        return "delta"
    if path.suffix.lower() in SUFFIXES:
        return SUFFIXES[path.suffix.lower()]
    if path.is_dir():
        kinds = {
            SUFFIXES[f.suffix.lower()]
            for f in path.rglob("*")
            if f.is_file() and f.suffix.lower() in SUFFIXES and not f.name.startswith((".", "_"))
        }
        if len(kinds) == 1:
            return kinds.pop()
        found = f"files of {len(kinds)} formats ({', '.join(sorted(kinds))})" if kinds else "no data files"
        msg = f"{path}: {found}; give --format ({', '.join(FORMATS)})"
        raise EngineError(msg)
    msg = f"{path}: cannot tell the format from the name; give --format ({', '.join(FORMATS)})"
    raise EngineError(msg)


def not_a_table(target: str) -> str | None:
    """Why ``target`` (a name no file or folder here has) cannot name a Spark catalog table, or None when it can
    (``sales``, ``db.sales``, ``cat.db.`my table```): the one rule ``ubunye hash`` and ``ubunye diff`` share.

    Example:
        >>> not_a_table("db.sales") is None, not_a_table("old.delta"), not_a_table("my-data")[:30]
        (True, 'a name ending in .delta is a file name, not a catalog table', 'it is not spelled like a catal')
    """
    if is_url(target) or "/" in target or "\\" in target:
        return "it is a path"
    last = target.rsplit(".", 1)[-1] if "." in target and not target.endswith("`") else ""
    if last and f".{last.lower()}" in FILE_SUFFIXES:
        return f"a name ending in .{last} is a file name, not a catalog table"
    if not _TABLE_NAME.fullmatch(target):
        return "it is not spelled like a catalog table (db.table, each part letters, digits and _, or `quoted`)"
    return None


def source_config(target: str, fmt: str | None, engine: str) -> IOConfig:
    """The IOConfig that reads ``target``: a path (format from --format or the files), a URL, or a catalog table."""
    if not target.strip():  # Path("") is the current folder: an empty name must not read it
        msg = "the table to read is empty: give a file, a folder, a URL or a table"
        raise EngineError(msg)
    path = Path(target)
    if is_url(target):
        if fmt is None:
            msg = f"{target}: give --format ({', '.join(FORMATS)}) for a URL"
            raise EngineError(msg)
        return IOConfig(name=target, format=fmt, path=target)
    try:
        if not os.path.lexists(path):  # a fallback swap cut short leaves the output in its -old- sibling
            restore_cut_swap(path)
        if path.exists() and not (path.is_file() or path.is_dir()):  # a reader would block on a FIFO, or say
            msg = f"{printable(target)} is not a file or a folder (a pipe, a socket or a device)"  # "not a dir"
            raise EngineError(msg)
        if path.exists():
            return IOConfig(name=target, format=fmt or guess_format(path), path=str(path.resolve()))
    except OSError as exc:  # a name too long, a folder that cannot be listed: the path given is the problem
        msg = f"cannot open {printable(target)}: {exc.strerror or exc}"
        raise EngineError(msg) from None
    why = not_a_table(target)
    if why is None and engine == "spark":
        if fmt is not None:  # Spark reads a table as its catalog stores it: --format would be ignored
            msg = f"--format {fmt} applies to files; {printable(target)} (no file or folder here) is a catalog table"
            raise EngineError(msg)
        return IOConfig(name=target, table=target)
    hint = " (a catalog table needs --engine spark)" if why is None else "" if why == "it is a path" else f" ({why})"
    msg = f"no such file or folder: {printable(target)}{hint}"
    raise EngineError(msg)


def parse_options(given: list[str]) -> dict[str, str]:
    """``--option KEY=VALUE`` values as the options mapping a config's ``options:`` is (``sep=;``): the value is
    everything after the first ``=``.

    Raises:
        typer.BadParameter: no ``=``, an empty key, or a key given twice (one would be lost), naming the value.

    Example:
        >>> parse_options(["sep=;", "quote=a=b"])
        {'sep': ';', 'quote': 'a=b'}
    """
    out: dict[str, str] = {}
    for item in given:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise typer.BadParameter(f"{printable(item)!r} is not KEY=VALUE (sep=;)", param_hint="--option")
        if key in out:
            raise typer.BadParameter(f"{printable(key)!r} is given twice; give it once", param_hint="--option")
        out[key] = value
    return out


def hash_target(target: str, fmt: str | None = None, engine: str = "pandas", show_lines: int = 0,
                options: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Read ``target`` with an engine and hash every row (rows-v1); what ``ubunye hash`` prints. ``options``: the
    reader options, as a config's ``options:`` (``{"sep": ";"}``): an engine refuses, naming it, one it does not
    apply.

    Example:
        >>> import tempfile, pandas as pd
        >>> f = Path(tempfile.mkdtemp()) / "t.parquet"
        >>> pd.DataFrame({"id": [2, 1]}).to_parquet(f)
        >>> hash_target(str(f))["row_count"]
        2
    """
    from ubunye.hashing import canonical_lines

    if not 0 <= show_lines <= MAX_SHOW_LINES:
        msg = f"show_lines must be from 0 to {MAX_SHOW_LINES}, got {show_lines}"
        raise EngineError(msg)
    io = source_config(target, fmt, engine)
    if options:
        io = replace(io, options=dict(options))
    eng = get_engine(engine)
    started = time.perf_counter()
    frame = eng.read(io, Path.cwd())
    h = eng.hash(frame)
    out: dict[str, Any] = {
        "target": target,
        "location": io.path if io.table is None else f"table:{io.table}",
        "format": io.format or "table",
        "engine": engine,
        "hashed_by": h.engine,
        "row_count": h.row_count,
        "schema": h.schema,
        "schema_hash": h.schema_hash,
        "data_hash": h.data_hash,
        "hash_method": h.hash_method,
        "seconds": round(time.perf_counter() - started, 6),
    }
    if io.options:  # said, so a hash is never taken for one of the default read
        out["options"] = dict(io.options)
    if show_lines:
        out["lines"] = canonical_lines(frame, show_lines)
    return out


@domain_errors
def hash_command(
    target: Annotated[
        str,
        typer.Argument(
            metavar="PATH_OR_TABLE",
            help="A file, a folder of part files, a Delta table folder, "
            "a URL, or (with --engine spark) a catalog table.",
            show_default=False,
        ),
    ],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="parquet, csv, json or delta (default: from the path: delta where a _delta_log is, else the data "
            "files' suffix). To check a run's output, give the format its record names.",
        ),
    ] = None,
    engine: Annotated[str, typer.Option("--engine", "-e", help="pandas (default), spark or polars.")] = "pandas",
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            metavar="KEY=VALUE",
            help="A reader option KEY=VALUE, as the config's options: of the dataset (sep=; for a csv written with "
            "options: {sep: ';'}); repeat for more. pandas and polars take sep (or delimiter) for csv; Spark any.",
        ),
    ] = None,
    show_lines: Annotated[
        int,
        typer.Option(
            "--show-lines", "-n", min=0, max=MAX_SHOW_LINES, help="Also print the first N canonical lines hashed."
        ),
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """The rows-v1 fingerprint of a file, folder or table: row count, schema, data hash and the engine used.

    Every row is hashed; row order and column order do not matter, so two files holding the same rows in another
    order print the same data hash. CSV types are inferred by the engine's reader, so a CSV can hash differently
    on pandas and Spark when they infer different types (the schema line shows which).

    The format is guessed when --format is not given, and a guess cannot know what a folder was meant to be: a
    first Delta write killed before its log commit leaves a parquet data file and no _delta_log, which reads as
    a parquet folder holding the very rows the run recorded. To tell whether a run's output landed (its record
    says written: not known), give the format the record names: ubunye hash -f delta data/out. A dataset the
    config reads or writes with options (a csv with options: {sep: ';'}) is read with them: --option 'sep=;'
    (lineage trace prints the command with them).

    Exit status: 0 hashed; 2 bad input (no such file, unknown format, unreadable data, a type rows-v1 refuses).

    Example: ubunye hash data/orders --show-lines 3
    """
    if fmt is not None and fmt not in FORMATS:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(FORMATS)}", param_hint="--format")
    if engine not in BACKENDS:
        raise typer.BadParameter(f"{engine!r} is not one of {', '.join(BACKENDS)}", param_hint="--engine")
    options = parse_options(option or [])
    result = hash_target(args.target(target, "PATH_OR_TABLE"), fmt, engine, show_lines, options)
    if as_json:
        emit_json(result)
        return
    out = console()
    rows = [
        ("target", result["location"]),
        ("format", result["format"]),
        *([("options", ", ".join(f"{k}={v}" for k, v in result["options"].items()))] if "options" in result else []),
        ("engine", f"{engine}, hashed by {HOW.get(result['hashed_by'], result['hashed_by'])}"),
        ("rows", f"{result['row_count']:,}"),
        ("schema", result["schema"]),
        ("schema hash", result["schema_hash"]),
        ("data hash", f"{result['data_hash']}  ({result['hash_method']})"),
        ("seconds", f"{result['seconds']:.3f} (read and hash)"),
    ]
    for name, value in rows:
        out.print(f"{name:<12} {escape(printable(str(value)))}", soft_wrap=True)
    for line in result.get("lines", []):
        out.print(escape(printable(line)), soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``hash`` to the app."""
    app.command(name="hash", cls=args.OptionsOnce, help=flow_help(hash_command.__doc__))(hash_command)
