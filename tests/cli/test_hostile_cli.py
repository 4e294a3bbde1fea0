"""Command-line arguments a hostile tester found mishandled: each test fails on the code before its fix.

Every refusal here is exit 2 with one message naming the option (a usage error) or one ``error:`` line, never a
traceback, never exit 0; with ``--json`` nothing reaches stdout. Found: an age for ``--since`` that overflowed, a
``--status`` typo that listed nothing with exit 0, an empty PATH_OR_TABLE that hashed the current folder, options
silently ignored (``--records`` beside ``--no-lineage``, ``--dataset`` beside ``--a/--b``...), an empty
``--records`` or ``-dt`` taken as "not given", ``~`` and ``file://`` left unexpanded by the readers (and
``~nosuchuser`` a RuntimeError traceback), a record file beside ``-t`` of another task, a FIFO read as a folder,
a ``-dt`` byte that is not UTF-8 blamed on the record, ``--format`` beside a catalog table ignored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from ubunye.cli.main import app

runner = CliRunner()

CODE = """
import pandas as pd
from ubunye import Task

class T(Task):
    def transform(self, sources):
        return {"o": pd.DataFrame({"i": [1, 2], "day": [self.params["day"]] * 2})}
"""

CONFIG = """CONFIG:
  outputs:
    o: {format: parquet, path: "data/o"}
  transform: {type: task, params: {day: "{{ dt | default('latest') }}"}}
  monitors: [lineage]
"""


def task(root: Path, name: str = "t", config: str = CONFIG) -> Path:
    """``root/u/p/<name>`` with ``config`` and :data:`CODE`; returns ``root``."""
    folder = root / "u" / "p" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(config)
    (folder / "transformations.py").write_text(CODE)
    return root


def invoke(*args: object) -> object:
    return runner.invoke(app, [str(a) for a in args])


def records(root: Path) -> list[Path]:
    return sorted((root / ".ubunye").rglob("*.json")) if (root / ".ubunye").exists() else []


def refused(result: object, *words: str) -> str:
    """The message of a refused command (exit 2, no traceback, nothing on stdout), checked to hold ``words``."""
    assert result.exit_code == 2, (result.exit_code, result.output)  # type: ignore[attr-defined]
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception  # type: ignore[attr-defined]
    assert result.stdout == "", result.stdout  # type: ignore[attr-defined]
    message = " ".join(result.stderr.replace("│", " ").split())  # type: ignore[attr-defined]
    assert "Traceback" not in message, message
    for word in words:
        assert word in message, (word, message)
    return message


@pytest.fixture
def ran(tmp_path: Path) -> Path:
    """A usecase folder with one recorded run of u/p/t and one of u/p/s."""
    root = task(task(tmp_path / "uc"), "s")
    for name in ("t", "s"):
        result = invoke("run", "-d", root, "-u", "u", "-p", "p", "-t", name, "-dt", "2026-12-01")
        assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    return root


# --- lineage list: --since and --status ------------------------------------------------------------------------


@pytest.mark.parametrize("age", ["99999999999d", "1000000d", "9999999999999999999999s"])
def test_an_age_beyond_the_calendar_is_a_usage_error(ran: Path, age: str) -> None:
    # Was: OverflowError ("Python int too large to convert to C int", "date value out of range"), a traceback.
    refused(invoke("lineage", "list", "-d", ran, "--since", age, "--json"), "--since", age, "year 1")


def test_a_status_typo_is_refused_not_an_empty_list(ran: Path) -> None:
    # Was: [] and exit 0, as if no run had succeeded.
    refused(invoke("lineage", "list", "-d", ran, "--status", "sucess", "--json"), "--status", "'sucess'", "success")
    shown = json.loads(invoke("lineage", "list", "-d", ran, "--status", "success", "--json").stdout)  # type: ignore[attr-defined]
    assert len(shown) == 2


# --- an empty argument is not the current folder ---------------------------------------------------------------


def one_parquet_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = tmp_path / "here"
    here.mkdir()
    pd.DataFrame({"secret": [1, 2, 3]}).to_parquet(here / "part-0.parquet")
    monkeypatch.chdir(here)


@pytest.mark.parametrize("target", ["", " "])
def test_hash_of_an_empty_name_does_not_hash_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    # Was: Path("") is ".", so `ubunye hash "$UNSET"` hashed whatever folder it ran in, exit 0.
    one_parquet_here(tmp_path, monkeypatch)
    refused(invoke("hash", target, "--json"), "PATH_OR_TABLE", "give a file, a folder, a URL or a table")


def test_diff_of_an_empty_name_does_not_read_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_parquet_here(tmp_path, monkeypatch)
    refused(invoke("diff", "--a", "", "--b", "part-0.parquet", "--json"), "--a", "empty")


@pytest.mark.parametrize("option", ["-d", "--records"])
def test_an_empty_folder_option_is_refused(ran: Path, monkeypatch: pytest.MonkeyPatch, option: str) -> None:
    monkeypatch.chdir(ran)
    # Was: -d "" read the current folder; --records "" silently meant the usecase folder's own store.
    refused(invoke("lineage", "list", option, "", "--json"), option, "empty")


def test_run_with_an_empty_records_writes_no_record_elsewhere(ran: Path) -> None:
    before = records(ran)
    result = invoke("run", "-d", ran, "-u", "u", "-p", "p", "-t", "t", "--records", "")
    refused(result, "--records", "empty")
    assert records(ran) == before  # was: a record in <usecase_dir>/.ubunye, not where --records pointed


def test_an_empty_dt_is_refused_not_rendered_in_place_of_the_default(ran: Path) -> None:
    # Was: `-dt "$DT"` with DT unset ran with day="" (default('latest') never applied), exit 0.
    before = records(ran)
    refused(invoke("run", "-d", ran, "-u", "u", "-p", "p", "-t", "t", "-dt", ""), "-dt", "empty")
    assert records(ran) == before


# --- options that would be ignored without a word ---------------------------------------------------------------


def test_no_lineage_beside_records_is_refused(ran: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "records"
    result = invoke("run", "-d", ran, "-u", "u", "-p", "p", "-t", "t", "--no-lineage", "--records", elsewhere)
    refused(result, "--records", "--no-lineage")  # was: exit 0, no record anywhere
    assert not elsewhere.exists()


@pytest.mark.parametrize(
    "extra",
    [("--dataset", "outputs.o"), ("-t", "t"), ("-u", "u"), ("-d", "."), ("--records", "somewhere")],
)
def test_diff_of_two_tables_refuses_the_options_of_runs(tmp_path: Path, extra: tuple[str, str]) -> None:
    a = tmp_path / "a.parquet"
    pd.DataFrame({"i": [1]}).to_parquet(a)
    refused(invoke("diff", "--a", a, "--b", a, *extra, "--json"), extra[0], "runs")  # was: exit 0, option ignored


@pytest.mark.parametrize("extra", [("--engine-a", "pandas"), ("--format-b", "csv")])
def test_diff_of_two_runs_refuses_the_options_of_tables(ran: Path, extra: tuple[str, str]) -> None:
    refused(invoke("diff", "latest", "latest", "-d", ran, "-t", "t", *extra, "--json"), extra[0], "--a/--b")


def test_diff_format_is_checked(tmp_path: Path) -> None:
    a = tmp_path / "a.parquet"
    pd.DataFrame({"i": [1]}).to_parquet(a)
    # Was: "... is not a bogus file (a bogus input reads files ending in )", from deep in the engine.
    refused(invoke("diff", "--a", a, "--b", a, "--format-a", "bogus", "--json"), "--format-a", "parquet, csv")


def test_a_record_file_of_another_task_beside_t_is_refused(ran: Path) -> None:
    (record,) = sorted((ran / ".ubunye/lineage/u/p/s").glob("*.json"))
    # Was: the run of u/p/s shown as asked for -t t.
    refused(invoke("lineage", "show", record, "-d", ran, "-t", "t", "--json"), "u/p/s", "-t t")
    shown = invoke("lineage", "show", record, "-d", ran, "-t", "s", "--json")
    assert json.loads(shown.stdout)["task"] == "s"  # type: ignore[attr-defined]


def test_a_record_file_that_is_not_there_is_named_as_a_file(ran: Path) -> None:
    (ran / "dir.json").mkdir()
    # Was: "no run 'x.json' among the runs of */*/* under ...", as if it were a run id.
    refused(invoke("lineage", "show", ran / "missing.json", "-d", ran, "--json"), "no such record file")
    refused(invoke("lineage", "show", ran / "dir.json", "-d", ran, "--json"), "is a folder, not a record file")
    os.mkfifo(ran / "pipe.json")  # there, but no file: it was said to be missing
    refused(invoke("lineage", "show", ran / "pipe.json", "-d", ran, "--json"), "pipe.json: is not a regular file")


# --- ~ and file:// where a folder or a record file is expected ----------------------------------------------------


def test_the_readers_expand_a_tilde_like_run_does(ran: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(ran.parent))
    # Was: "usecase dir ~/uc does not exist", while `ubunye run -d ~/uc` (quoted) ran there.
    listed = invoke("lineage", "list", "-d", "~/uc", "--json")
    assert listed.exit_code == 0, listed.output  # type: ignore[attr-defined]
    assert len(json.loads(listed.stdout)) == 2  # type: ignore[attr-defined]
    shown = invoke("lineage", "show", "latest", "-d", "~/uc", "-t", "t", "--json")
    assert shown.exit_code == 0, shown.output  # type: ignore[attr-defined]
    (record,) = sorted((ran / ".ubunye/lineage/u/p/t").glob("*.json"))
    by_file = invoke("lineage", "show", "~/" + record.relative_to(ran.parent).as_posix(), "--json")
    assert json.loads(by_file.stdout)["task"] == "t"  # type: ignore[attr-defined]


def test_a_file_url_names_the_usecase_folder(ran: Path) -> None:
    # Was: Path turned file:///x into file:/x: "usecase dir file:/x does not exist".
    listed = invoke("lineage", "list", "-d", ran.as_uri(), "--json")
    assert listed.exit_code == 0, listed.output  # type: ignore[attr-defined]
    assert len(json.loads(listed.stdout)) == 2  # type: ignore[attr-defined]
    refused(invoke("lineage", "list", "-d", "s3://bucket/uc", "--json"), "-d", "URL", "--records")


@pytest.mark.parametrize(
    "args",
    [
        ("run", "-d", "~nosuchuser_ubunye/uc", "-u", "u", "-p", "p", "-t", "t"),
        ("run", "-d", "{root}", "-u", "u", "-p", "p", "-t", "t", "--records", "~nosuchuser_ubunye/r"),
        ("lineage", "list", "-d", "{root}", "--records", "~nosuchuser_ubunye/r", "--json"),
        ("hash", "~nosuchuser_ubunye/x.parquet", "--json"),
    ],
)
def test_a_tilde_of_no_user_is_an_error_not_a_traceback(ran: Path, args: tuple[str, ...]) -> None:
    # Was: RuntimeError "Could not determine home directory." with its traceback, exit 1.
    refused(invoke(*(a.format(root=ran) for a in args)), "nosuchuser_ubunye", "no home folder")


def test_a_records_variable_of_no_user_is_named(ran: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UBUNYE_RECORDS", "~nosuchuser_ubunye/r")
    refused(invoke("lineage", "list", "-d", ran, "--json"), "UBUNYE_RECORDS", "no home folder")


def test_a_usecase_folder_that_is_a_file_is_named_so(ran: Path) -> None:
    config = ran / "u" / "p" / "t" / "config.yaml"
    # Was: "usecase dir .../config.yaml does not exist" (it does: it is a file).
    refused(invoke("lineage", "list", "-d", config, "--json"), "-d", "is a file, not a folder")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_hash_of_a_fifo_says_what_it_is(tmp_path: Path) -> None:
    fifo = tmp_path / "orders.csv"
    os.mkfifo(fifo)
    # Was: "cannot read csv at .../orders.csv: [Errno 20] Not a directory".
    refused(invoke("hash", fifo, "--json"), "orders.csv", "not a file or a folder")


def test_a_dt_that_is_not_utf8_is_named(ran: Path) -> None:
    # A byte that is not UTF-8 reaches Python as a lone surrogate. Was: "task u/p/t did not start: monitor lineage
    # could not write the run record: MalformedRecord: ...: text holds a lone surrogate", naming no option.
    before = records(ran)
    result = runner.invoke(app, ["run", "-d", str(ran), "-u", "u", "-p", "p", "-t", "t", "-dt", "2026-12-01\udcff"])
    refused(result, "-dt", "0xff", "not UTF-8")
    assert records(ran) == before


def test_hash_of_a_catalog_table_refuses_a_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # Was: --format ignored (Spark reads a table as stored). Refused before any engine starts.
    refused(invoke("hash", "db.sales", "--engine", "spark", "--format", "csv", "--json"), "--format csv", "db.sales")


# --- a path through a symlink loop ------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["records", "output", "input"])
def test_a_symlink_loop_in_a_path_is_one_error_line_naming_it(tmp_path: Path, where: str) -> None:
    # Path.resolve() raised RuntimeError("Symlink loop from ...") through every command: a traceback, exit 1.
    config = CONFIG
    if where == "input":
        config = config.replace("CONFIG:\n", 'CONFIG:\n  inputs:\n    i: {format: parquet, path: "data/loop/x"}\n')
    root = task(tmp_path / "uc", config=config)
    (root / "data").mkdir()
    loop = root / "data" / ("o" if where == "output" else "loop")
    loop.symlink_to(loop.name)  # a link to itself
    if where == "records":
        result = invoke("lineage", "list", "-d", root, "--records", loop)
    else:
        result = invoke("run", "-d", root, "-u", "u", "-p", "p", "-t", "t", "-dt", "2026-12-01")
    message = refused(result, "a symlink loop", str(loop))
    assert message.startswith("error:") and not (root / "data" / "o").is_dir(), message


# --- an output name too long for the names written beside it ----------------------------------------------------


@pytest.mark.parametrize("length", [201, 202, 250])
def test_an_output_name_too_long_for_its_staging_sibling_is_refused_before_the_run(tmp_path: Path, length: int) -> None:
    # 250 bytes passed the checks and failed at write time, after the transform ran ("cannot create its lock ...:
    # File name too long", naming no key); 201 bytes leave room for .<name>.ubunye-staging-<unique> (255 in all).
    root = task(tmp_path / "uc", config=CONFIG.replace('path: "data/o"', f'path: "data/{"a" * length}"'))
    result = invoke("run", "-d", root, "-u", "u", "-p", "p", "-t", "t", "-dt", "2026-12-01")
    if length <= 201:
        assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
        assert pd.read_parquet(root / "data" / ("a" * length))["i"].tolist() == [1, 2]
        return
    refused(result, "CONFIG.outputs.o.path", f"ends in a name of {length} bytes", "at most 201 bytes")
    assert not (root / "data").exists() and records(root) == []


# --- the record store inside an input -----------------------------------------------------------------------------


@pytest.mark.parametrize("records", ["data/in", "data/in/deeper"])  # a store holding data/in holds data/o: refused
def test_records_in_an_input_folder_are_refused_before_the_run(tmp_path: Path, records: str) -> None:
    # --records data/in wrote the record into the input: that run failed ("a folder inside the parquet data folder
    # ... but not a partition"), and so did every later one, and `ubunye hash data/in` saw two formats.
    config = CONFIG.replace("CONFIG:\n", 'CONFIG:\n  inputs:\n    i: {format: parquet, path: "data/in"}\n')
    root = task(tmp_path / "uc", config=config)
    (root / "data" / "in").mkdir(parents=True)
    pd.DataFrame({"x": [1]}).to_parquet(root / "data" / "in" / "part-0.parquet")
    before = sorted(p.name for p in (root / "data").rglob("*"))
    result = invoke(
        "run", "-d", root, "-u", "u", "-p", "p", "-t", "t", "-dt", "2026-12-01", "--records", root / records
    )
    why = {"data/in": " is the record store", "data/in/deeper": " holds the record store"}
    refused(result, "CONFIG.inputs.i.path", why[records], "records and an input's data may not share a folder")
    assert sorted(p.name for p in (root / "data").rglob("*")) == before
