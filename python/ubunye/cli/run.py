"""``ubunye run``: run one task, or several of one package in order."""

from __future__ import annotations

from pathlib import Path

import typer

from ubunye.cli.errors import domain_errors


@domain_errors
def run(
    usecase_dir: Path = typer.Option(..., "-d", "--usecase-dir", help="Folder holding <usecase>/<package>/<task>."),
    usecase: str = typer.Option(..., "-u", "--usecase"),
    package: str = typer.Option(..., "-p", "--package"),
    tasks: list[str] = typer.Option(..., "-t", "--task", help="Task to run; repeat for several (run in order)."),
    dt: str | None = typer.Option(None, "-dt", "--dt", help="Template variable dt (e.g. the business date)."),
    dtf: str | None = typer.Option(None, "-dtf", "--dtf", help="Template variable dtf."),
    mode: str | None = typer.Option(None, "-m", "--mode", help="Template variable mode; selects ENGINE.profiles."),
    engine: str | None = typer.Option(None, "--engine", help="spark or pandas (default: ENGINE.backend)."),
    lineage: bool | None = typer.Option(
        None, "--lineage/--no-lineage", help="Record the run (default: as config.yaml's monitors say)."
    ),
) -> None:
    """Run tasks; each run's record lands in <usecase_dir>/.ubunye/lineage/<usecase>/<package>/<task>/."""
    from ubunye.runner import run_pipeline

    if engine is not None and engine not in ("spark", "pandas"):
        raise typer.BadParameter(f"{engine!r} is not one of spark, pandas", param_hint="--engine")
    results = run_pipeline(
        usecase_dir,
        usecase,
        package,
        tasks,
        dt=dt,
        dtf=dtf,
        mode=mode,
        engine=engine,
        lineage=lineage,
        entry_point="cli",
    )
    for result in results:
        ctx = result.context
        name = f"{ctx.usecase}/{ctx.package}/{ctx.task}" if ctx else result.run_id
        where = f"  record: {result.record_path}" if result.record_path else ""
        typer.echo(f"{name}: {result.status} (run {result.run_id}){where}")


def register(app: typer.Typer) -> None:
    """Add ``run`` to the app."""
    app.command(name="run")(run)
