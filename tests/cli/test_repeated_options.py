"""An option given twice, and a ``--records`` folder that is not there: each failed silently before its fix.

Click keeps the last value of an option given twice (``-dt 2026-12-01 -dt 2026-12-02`` ran 2026-12-02 only,
``--lineage --no-lineage`` recorded nothing, ``lineage list -u u -u v`` listed v): every command now refuses it
with a usage error naming the option (exit 2), as ``-t x -t x`` of ``run`` already was. Options declared for
repeats (``run -t``) and eager ones (``--help``) are left alone, and so is a flag repeated the same way.

``lineage list --records <missing folder>`` said "no runs under ..." with exit 0 while a missing ``-d`` was exit 2:
a records folder given explicitly and not there is an ``error:`` line naming it, for every reader.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from tests.lineage.fixtures import install
from tests.lineage.usecase import example_usecase
from ubunye.cli.main import app
from ubunye.lineage.store import RECORDS_ENV

runner = CliRunner()


def invoke(*args: object) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def refused(result: Result, *words: str) -> str:
    """The usage message of a refused command (exit 2, nothing on stdout, no traceback), checked to hold ``words``."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.stdout == "", result.stdout
    message = " ".join(result.stderr.replace("│", " ").split())
    assert "Traceback" not in message, message
    for word in words:
        assert word in message, (word, message)
    return message


def one_error_line(result: Result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.output
    assert result.stdout == "", result.stdout
    return lines[0]


@pytest.fixture
def uc(tmp_path: Path) -> Path:
    """The example usecase (so a run that is not refused succeeds) with every fixture record in its store."""
    usecase_dir = example_usecase(tmp_path)
    install(usecase_dir)
    return usecase_dir


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,x\n2,y\n")
    return path


RUN = ("run", "-d", "{uc}", "-u", "shop", "-p", "daily", "-t", "orders", "--engine", "pandas")

# (the command, the repeat added to it, the option the message names)
REPEATS = [
    (RUN, ("-dt", "2026-12-01", "-dt", "2026-12-02"), "-dt/--dt"),
    (RUN, ("-dt", "2026-12-01", "--dt", "2026-12-01"), "-dt/--dt"),  # two spellings, one value: still twice
    (RUN, ("-dtf", "a", "-dtf", "b"), "-dtf/--dtf"),
    (RUN, ("-m", "dev", "--mode", "prod"), "-m/--mode"),
    (RUN, ("--lineage", "--no-lineage"), "--lineage/--no-lineage"),
    (RUN, ("--no-lineage", "--lineage"), "--lineage/--no-lineage"),
    (RUN, ("--engine", "pandas"), "--engine"),
    (RUN, ("-u", "shop"), "-u/--usecase"),
    (RUN, ("--usecase-dir", "{uc}"), "-d/--usecase-dir"),
    (RUN, ("--records", "{uc}/r1", "--records", "{uc}/r2"), "--records"),
    (("lineage", "list", "-d", "{uc}"), ("-u", "u", "-u", "shop"), "-u/--usecase"),
    (("lineage", "list", "-d", "{uc}"), ("-t", "orders", "-t", "revenue"), "-t/--task"),
    (("lineage", "list", "-d", "{uc}"), ("-n", "1", "--limit", "2"), "-n/--limit"),
    (("lineage", "list", "-d", "{uc}"), ("--status", "failed", "--status", "success"), "--status"),
    (("lineage", "list", "-d", "{uc}"), ("--since", "7d", "--since", "2026-01-01"), "--since"),
    (("lineage", "list", "-d", "{uc}"), ("--records", "{uc}/.ubunye/lineage", "--records", "{uc}"), "--records"),
    (("lineage", "show", "latest", "-d", "{uc}"), ("-t", "orders", "--task", "revenue"), "-t/--task"),
    (("lineage", "trace", "latest", "-d", "{uc}", "-t", "revenue"), ("-p", "daily", "-p", "daily"), "-p/--package"),
    (("lineage", "compare", "latest~1", "latest", "-t", "revenue"), ("-d", "{uc}", "-d", "{uc}"), "-d/--usecase-dir"),
    (("hash", "{table}"), ("--format", "csv", "-f", "json"), "--format/-f"),
    (("hash", "{table}"), ("-e", "pandas", "--engine", "polars"), "--engine/-e"),
    (("hash", "{table}"), ("--show-lines", "1", "-n", "2"), "--show-lines/-n"),
    (("diff", "--b", "{table}", "--key", "a"), ("--a", "{table}", "--a", "{uc}"), "--a"),
    (("diff", "--a", "{table}", "--b", "{table}"), ("--key", "a", "--key", "b"), "--key"),
    (("diff", "--a", "{table}", "--b", "{table}"), ("--engine-a", "pandas", "--engine-a", "polars"), "--engine-a"),
    (("diff", "--a", "{table}", "--b", "{table}", "--key", "a"), ("--limit", "1", "-n", "5"), "--limit/-n"),
]


@pytest.mark.parametrize(
    ("command", "repeat", "option"), REPEATS, ids=[" ".join((*c[: 1 + (c[0] == "lineage")], *r)) for c, r, _ in REPEATS]
)
def test_an_option_given_twice_is_a_usage_error_naming_it(
    uc: Path, table: Path, command: tuple[str, ...], repeat: tuple[str, ...], option: str
) -> None:
    argv = [a.format(uc=uc, table=table) for a in (*command, *repeat)]
    message = refused(invoke(*argv), "Usage: ubunye ", f"Invalid value for {option}:")  # as the parser's own
    assert "given twice" in message or "given both ways" in message, message
    assert not (uc / "data").exists()  # refused before anything ran: the example writes its orders there


def test_the_message_says_how_often_and_what_to_do(uc: Path) -> None:
    result = invoke(*(a.format(uc=uc) for a in RUN), "-dt", "a", "-dt", "b", "--dt", "c")
    assert "Invalid value for -dt/--dt: given 3 times; give it once" in refused(result)
    result = invoke(*(a.format(uc=uc) for a in RUN), "--lineage", "--no-lineage")
    assert "--lineage/--no-lineage: given both ways; give one of --lineage, --no-lineage" in refused(result)


def _commands(command: typer.core.TyperGroup | typer.core.TyperCommand, path: tuple[str, ...] = ()) -> Iterator[
    tuple[tuple[str, ...], typer.core.TyperCommand]
]:  # fmt: skip
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield path, command  # type: ignore[misc]
        return
    for name, sub in subcommands.items():
        yield from _commands(sub, (*path, name))


def test_every_command_refuses_each_of_its_single_value_options_twice() -> None:
    """Walks the app as built: a command added later is checked too, whatever its options."""
    seen = []
    for path, command in _commands(typer.main.get_command(app)):
        seen.append(" ".join(path))
        for param in command.params:
            if param.param_type_name != "option" or param.multiple or param.count or param.is_eager:
                continue
            names = [*param.opts, *param.secondary_opts]
            if param.is_flag and not param.secondary_opts:
                continue  # --json --json means --json: nothing is lost
            given = [names[0], names[-1]] if param.is_flag else [names[0], "x", names[-1], "y"]
            result = invoke(*path, *given)
            refused(result, f"Invalid value for {'/'.join(names)}:")
    assert {
        "run",
        "version",
        "hash",
        "diff",
        "lineage list",
        "lineage show",
        "lineage trace",
        "lineage compare",
    } <= set(seen), seen


def test_options_made_for_repeats_and_flags_given_the_same_way_twice_still_work(uc: Path, table: Path) -> None:
    listed = invoke("lineage", "list", "-d", uc, "--json", "--json", "-t", "revenue")
    assert listed.exit_code == 0, listed.output
    assert {r["task"] for r in json.loads(listed.stdout)} == {"revenue"}
    hashed = invoke("hash", table, "--json", "--json")
    assert hashed.exit_code == 0 and json.loads(hashed.stdout)["row_count"] == 2, hashed.output
    ran = invoke(*(a.format(uc=uc) for a in RUN[:-4]), "-t", "orders", "-t", "revenue", "--engine", "pandas",
                 "-dt", "2026-12-01", "--lineage", "--lineage")  # fmt: skip
    assert ran.exit_code == 0 and "shop/daily/revenue: success" in ran.stdout, ran.output
    once = invoke("lineage", "list", "-d", uc, "--json", "-t", "orders", "-n", "1")
    assert json.loads(once.stdout)[0]["entry_point"] == "cli"


@pytest.mark.parametrize(
    "argv",
    [("lineage", "list", "-u", "a", "-u", "b", "--help"), ("run", "-dt", "a", "-dt", "b", "--help"), ("--help",)],
)
def test_help_still_wins(argv: tuple[str, ...]) -> None:
    result = invoke(*argv)
    assert result.exit_code == 0 and "Usage:" in result.stdout, result.output


# --- --records naming a folder that is not there ---------------------------------------------------------------------
READERS = [
    ("lineage", "list"),
    ("lineage", "list", "--json"),
    ("lineage", "show", "latest"),
    ("lineage", "trace", "latest"),
    ("lineage", "compare", "latest~1", "latest"),
    ("diff", "latest~1", "latest"),
]


@pytest.mark.parametrize("command", READERS, ids=" ".join)
@pytest.mark.parametrize("spelled", ["path", "url"])
def test_a_records_folder_that_does_not_exist_is_an_error_naming_it(
    uc: Path, command: tuple[str, ...], spelled: str
) -> None:
    missing = uc / "recrods"  # a typo: the store is not there, and "no runs" would say it is empty
    given = missing.as_uri() if spelled == "url" else str(missing)
    line = one_error_line(invoke(*command, "-d", uc, "--records", given))
    assert line == f"error: records folder {missing} does not exist (check --records; a run makes it when it " + (
        "writes its first record)"
    ), line
    assert not missing.exists()  # a reader makes no folder


def test_an_existing_empty_records_folder_still_has_no_runs(uc: Path) -> None:
    empty = uc / "empty"
    empty.mkdir()
    result = invoke("lineage", "list", "-d", uc, "--records", empty)
    assert result.exit_code == 0 and result.stdout.strip() == f"no runs under {empty}", result.output
    assert invoke("lineage", "list", "-d", uc, "--records", empty, "--json").stdout.strip() == "[]"


def test_the_default_store_and_the_environment_s_may_not_exist_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No run yet: nothing was given that could be a typo (a CI job sets UBUNYE_RECORDS before its first run)."""
    fresh = example_usecase(tmp_path)
    assert invoke("lineage", "list", "-d", fresh).exit_code == 0
    monkeypatch.setenv(RECORDS_ENV, str(tmp_path / "not-yet"))
    result = invoke("lineage", "list", "-d", fresh)
    assert result.exit_code == 0 and "no runs under" in result.stdout, result.output


def test_a_records_folder_given_to_a_run_is_made(uc: Path) -> None:
    """Only readers refuse it: a run writes the first record there."""
    where = uc / "new-records"
    result = invoke(*(a.format(uc=uc) for a in RUN), "-dt", "2026-12-01", "--records", where)
    assert result.exit_code == 0, result.output
    listed = invoke("lineage", "list", "--records", where, "--json")
    assert listed.exit_code == 0 and len(json.loads(listed.stdout)) == 1, listed.output
