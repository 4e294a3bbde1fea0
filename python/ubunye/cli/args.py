"""Command-line arguments that name places or template values, checked before anything is read or run.

A value the shell did not expand (``-d '~/jobs'``, ``--records=~/records``: a tilde is expanded only at the start
of a word), an empty value (``-dt "$DT"`` with ``DT`` unset), or a ``file://`` URL where a folder is expected:
each is taken as the user meant it, or refused with a ``typer.BadParameter`` naming the option (exit 2). Never a
traceback, never the current folder in place of an empty argument.

Example:
    >>> home("~/jobs", "-d") == str(Path.home() / "jobs"), home("jobs/~x", "-d")
    (True, 'jobs/~x')
    >>> folder("file:///srv/jobs", "-d")
    PosixPath('/srv/jobs')
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from typer.core import TyperCommand, TyperOption

from ubunye.engines.paths import is_url, local_path
from ubunye.lineage.record import printable
from ubunye.lineage.store import RECORDS_ENV

if TYPE_CHECKING:  # the Context a command is given: Typer's own click, which exports it only from typer._click
    from typer._click import Context


class OptionsOnce(TyperCommand):
    """A command that refuses an option given twice, as Click would keep its last value without a word
    (``-dt 2026-12-01 -dt 2026-12-02`` ran one date; a command line built from a script's options and then the
    user's lost one of them): a usage error naming the option, exit 2. Also a flag pair given both ways
    (``--lineage --no-lineage``); not a flag repeated the same way (``--json --json`` loses nothing), not an
    option declared for repeats (``run -t``) or counted, and nothing when an eager option (``--help``) is given:
    it answers first. Every command is made with it (``app.command(cls=OptionsOnce)``)."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:  # shell completion parses a half-typed line: never refuse it
            self._refuse_repeats(ctx, args)
        return super().parse_args(ctx, args)

    def _refuse_repeats(self, ctx: Context, args: list[str]) -> None:
        """Parses ``args`` first with every single-value option made to append (Click records no repeats)."""
        parser = self.make_parser(ctx)
        once: list[TyperOption] = []
        for param in self.get_params(ctx):
            if not isinstance(param, TyperOption) or param.multiple or param.count or param.is_eager:
                continue
            each = copy.copy(param)  # the same option strings, replacing the original's in the parser
            each.multiple = True
            each.add_to_parser(parser, ctx)
            once.append(param)
        try:
            given, _, order = parser.parse_args(args=list(args))  # a copy: the parser consumes the list it gets
        except Exception:  # an unknown option, a missing value: left for the parse proper to say, Click's way
            return
        if any(param.is_eager for param in order):
            return
        for param in once:
            values = given.get(param.name) or []
            names = [*param.opts, *param.secondary_opts]
            problem = None
            if param.is_flag and len(set(values)) > 1:
                problem = f"given both ways; give one of {', '.join(names)}"
            elif not param.is_flag and len(values) > 1:
                problem = f"given {'twice' if len(values) == 2 else f'{len(values)} times'}; give it once"
            if problem is not None:  # with ctx, as the parser's own errors: the usage line and --help above it
                raise typer.BadParameter(problem, ctx=ctx, param_hint="/".join(names))


def _refuse(option: str, problem: str) -> typer.BadParameter:
    return typer.BadParameter(problem, param_hint=option)


def home(value: str, option: str) -> str:
    """``value`` with a leading ``~`` or ``~user`` made the home folder, as a shell would have.

    Raises:
        typer.BadParameter: ``~user`` names no user of this machine (Python's own error is a RuntimeError).
    """
    if not value.startswith("~"):
        return value
    from ubunye.engines.paths import home_expanded

    try:
        return str(home_expanded(value))
    except ValueError as exc:  # ~nosuchuser, or no HOME and no passwd entry
        raise _refuse(option, printable(str(exc))) from None


def not_empty(value: str, option: str, instead: str = "") -> str:
    """``value``, unless it is empty or blank (an unset shell variable: ``-d "$JOBS"``), which would otherwise
    stand for the current folder (``Path("")`` is ``.``) or for "not given". ``instead``: what to give (default:
    a value, or nothing)."""
    if not value.strip():
        given = "empty" if not value else "blank"
        raise _refuse(
            option, f"is {given} (an unset shell variable?): {instead or f'give a value, or leave {option} out'}"
        )
    return value


def template_value(value: str | None, option: str) -> str | None:
    """A template variable (``-dt``, ``-dtf``, ``-m``): None, or text that is neither empty nor undecodable.

    An empty one (``-dt "$DT"``, DT unset) would render as "" where the config's ``default(...)`` was meant to
    apply. Bytes that are not UTF-8 reach Python as lone surrogates, which no record can hold: the run would
    fail saying its record could not be written. A blank or odd value is the config's to judge, naming the key,
    where it builds a path or SQL.

    Example:
        >>> template_value("2026-12-01", "-dt")
        '2026-12-01'
    """
    if value is None:
        return None
    if value == "":
        raise _refuse(option, f"is empty (an unset shell variable?): give a value, or leave {option} out for the "
                              "config's default")  # fmt: skip
    bad = next((c for c in value if "\udc80" <= c <= "\udcff"), None)
    if bad is not None:  # os.fsdecode keeps an undecodable byte 0xNN as U+DCNN
        raise _refuse(option, f"holds the byte 0x{ord(bad) - 0xDC00:02x}, which is not UTF-8 text")
    return value


def local(value: str, option: str) -> Path:
    """A local path argument: ``~`` expanded, a ``file://`` URL taken as its path.

    Raises:
        typer.BadParameter: empty or blank; a URL of another kind (a usecase folder and a record file given by
            path are local: records elsewhere are read with ``--records``).
    """
    text = home(not_empty(value, option), option)
    path = local_path(text) if is_url(text) else Path(text)
    if path is None:
        raise _refuse(option, f"{printable(text)!r} is a URL; {option} takes a local path (records kept "
                              "elsewhere are read with --records URL)")  # fmt: skip
    return path


def folder(value: str, option: str) -> Path:
    """A local folder argument (``-d``), as :func:`local`, and not a file."""
    path = local(value, option)
    try:
        is_file = path.exists() and not path.is_dir()
    except OSError as exc:  # a name too long for the filesystem, a folder that cannot be listed
        raise _refuse(option, f"{printable(value)!r}: {exc.strerror or exc}") from None
    if is_file:
        raise _refuse(option, f"{printable(value)!r} is a file, not a folder")
    return path


def records(value: str | None) -> str | None:
    """``--records``, checked: not empty (an empty one would silently mean the default store), ``~`` expanded.

    Without ``--records``, ``$UBUNYE_RECORDS`` is checked the same way (its own name in the error), and left for
    the store to read.
    """
    if value is None:
        env = os.environ.get(RECORDS_ENV, "").strip()
        if env.startswith("~"):
            home(env, RECORDS_ENV)
        return None
    return home(not_empty(value, "--records"), "--records")


def target(value: str, option: str) -> str:
    """A table to read (``ubunye hash``'s PATH_OR_TABLE, ``diff --a``): not empty (which would read the current
    folder), ``~`` expanded."""
    return home(not_empty(value, option, "give a file, a folder, a URL or a table"), option)
