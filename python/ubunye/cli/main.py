"""The ``ubunye`` app: a thin assembly of the command groups (one module each)."""

from __future__ import annotations

import logging

import typer

from ubunye.cli import diff as diff_commands
from ubunye.cli import hash as hash_commands
from ubunye.cli import lineage as lineage_commands
from ubunye.cli import run as run_commands
from ubunye.cli.errors import set_debug

app = typer.Typer(name="ubunye", help="Run tasks and keep a receipt of every run.", no_args_is_help=True)


@app.callback()
def root(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks instead of one-line errors."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what ubunye does."),
) -> None:
    """Ubunye: run tasks on pandas or Spark, and record what they read and wrote."""
    ctx.obj = {"debug": debug}
    set_debug(debug)
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )


@app.command()
def version() -> None:
    """Print the ubunye version."""
    import ubunye

    typer.echo(ubunye.__version__)


run_commands.register(app)
lineage_commands.register(app)
hash_commands.register(app)
diff_commands.register(app)


def main() -> None:
    """Entry point of the ``ubunye`` script."""
    app()


if __name__ == "__main__":
    main()
