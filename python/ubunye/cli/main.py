"""The ``ubunye`` app: a thin assembly of the command groups (one module each)."""

from __future__ import annotations

import logging

import typer

from ubunye.cli import diff as diff_commands
from ubunye.cli import hash as hash_commands
from ubunye.cli import lineage as lineage_commands
from ubunye.cli import run as run_commands
from ubunye.cli.args import OptionsOnce
from ubunye.cli.errors import set_debug
from ubunye.lineage.redact import mask_text


class _LogLines(logging.Formatter):
    """Every log line on stderr, ubunye's and other libraries' (a transport of the openlineage client that fails
    logs its traceback): secrets masked, then one line, its exception said in a few words; ``--debug`` adds the
    traceback (masked too). Masked before whitespace is collapsed, as ``error:`` lines are: a YAML line
    (``password: x``) is recognised only while it is a line of its own."""

    def __init__(self, debug: bool) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")
        self.debug = debug

    def format(self, record: logging.LogRecord) -> str:
        try:
            message = record.getMessage()
        except Exception:  # a library's bad format string: its text as written, rather than no line
            message = f"{record.msg} {record.args}"
        line = f"{record.levelname} {record.name}: {mask_text(message)}"
        exc = record.exc_info[1] if record.exc_info else None
        if self.debug:
            more = [self.formatException(record.exc_info)] if record.exc_info else []
            more += [self.formatStack(record.stack_info)] if record.stack_info else []
            return mask_text("\n".join([line, *more]))
        if exc is not None:
            line += f" ({type(exc).__name__}: {mask_text(str(exc))})" if str(exc) else f" ({type(exc).__name__})"
        return " ".join(line.split())


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
    handler = logging.StreamHandler()
    handler.setFormatter(_LogLines(debug))
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler])


@app.command(cls=OptionsOnce)
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
