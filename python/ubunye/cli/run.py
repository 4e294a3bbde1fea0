"""``ubunye run``: run one task, or several of one package in order."""

from __future__ import annotations

from typing import Annotated

import typer

from ubunye.cli import args
from ubunye.cli.errors import domain_errors
from ubunye.lineage.record import printable

UsecaseDir = Annotated[str, typer.Option("-d", "--usecase-dir", help="Folder holding <usecase>/<package>/<task>.")]
Usecase = Annotated[str, typer.Option("-u", "--usecase", help="Usecase folder name.")]
Package = Annotated[str, typer.Option("-p", "--package", help="Package folder name.")]
Tasks = Annotated[
    list[str], typer.Option("-t", "--task", help="Task to run; repeat for several (run in order, each once).")
]
Dt = Annotated[
    str | None,
    typer.Option(
        "-dt",
        "--dt",
        help="Template variable dt (e.g. the business date); not empty: leave it out for the config's default.",
    ),
]
Dtf = Annotated[str | None, typer.Option("-dtf", "--dtf", help="Template variable dtf.")]
Mode = Annotated[str | None, typer.Option("-m", "--mode", help="Template variable mode; selects ENGINE.profiles.")]
Engine = Annotated[str | None, typer.Option("--engine", help="spark, pandas or polars (default: ENGINE.backend).")]
Records = Annotated[
    str | None,
    typer.Option(
        "--records",
        help="Where records go: a folder or a URL fsspec opens (s3://bucket/records); default $UBUNYE_RECORDS, "
        "else <usecase_dir>/.ubunye/lineage.",
    ),
]
Lineage = Annotated[
    bool | None, typer.Option("--lineage/--no-lineage", help="Record the run (default: as config.yaml's monitors say).")
]


@domain_errors
def run(
    usecase_dir: UsecaseDir,
    usecase: Usecase,
    package: Package,
    tasks: Tasks,
    dt: Dt = None,
    dtf: Dtf = None,
    mode: Mode = None,
    engine: Engine = None,
    lineage: Lineage = None,
    records: Records = None,
) -> None:
    """Run tasks; each run's record lands in <records>/<usecase>/<package>/<task>/ (by default <records> is
    <usecase_dir>/.ubunye/lineage)."""
    from ubunye.config.model import BACKENDS
    from ubunye.context import RunOptions
    from ubunye.runner import run_pipeline

    if engine is not None and engine not in BACKENDS:
        raise typer.BadParameter(f"{engine!r} is not one of {', '.join(BACKENDS)}", param_hint="--engine")
    if lineage is False and records is not None:  # one of the two would be ignored without a word
        msg = "--no-lineage writes no record: leave out --records, or --no-lineage"
        raise typer.BadParameter(msg, param_hint="--records")
    twice = next((t for n, t in enumerate(tasks) if t in tasks[:n]), None)
    if twice is not None:  # its second run would overwrite the first one's outputs (run_pipeline refuses it too)
        raise typer.BadParameter(f"task {printable(twice)!r} is named twice; name each task once", param_hint="-t")
    for option, value in (("-dt", dt), ("-dtf", dtf), ("-m", mode)):
        args.template_value(value, option)
    options = RunOptions.resolve(lineage=lineage, records=args.records(records))
    results = run_pipeline(
        args.folder(usecase_dir, "-d"),
        usecase,
        package,
        tasks,
        dt=dt,
        dtf=dtf,
        mode=mode,
        engine=engine,
        entry_point="cli",
        options=options,
    )
    for result in results:
        ctx = result.context
        name = f"{ctx.usecase}/{ctx.package}/{ctx.task}" if ctx else result.run_id
        where = f"  record: {result.record_path}" if result.record_path else ""
        typer.echo(printable(f"{name}: {result.status} (run {result.run_id}){where}"))  # a path may hold an ESC


def register(app: typer.Typer) -> None:
    """Add ``run`` to the app."""
    app.command(name="run", cls=args.OptionsOnce)(run)
