"""Paths are checked after rendering, and a task's identity is three plain folder names inside ``-d``.

Every refused case asserts the exact outcome: a ConfigError (CLI: exit 2 and one ``error:`` line) naming the
config file and key, or the identity part, and every file that existed before is byte-for-byte unchanged (no
output written, no record made, nothing deleted).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from tests.lineage.usecase import write_task
from ubunye.cli.main import app
from ubunye.exceptions import ConfigError, TaskError, UbunyeError
from ubunye.runner import run_pipeline, run_task

CODE = """
import pandas as pd
from ubunye import Task

class Make(Task):
    def transform(self, sources):
        return {"out": pd.DataFrame({"a": [1, 2, 3]})}
"""


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under root, with file contents (folders as None)."""
    out: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        out[str(path.relative_to(root))] = None if path.is_dir() else path.read_bytes()
    return out


@pytest.fixture
def uc(tmp_path: Path) -> Path:
    """A usecase folder with a second task, existing data and an existing record, to prove nothing is lost."""
    usecase_dir = tmp_path / "uc"
    write_task(usecase_dir, "other", {"CONFIG": {"outputs": {"x": {"format": "parquet", "path": "data/x"}}}}, CODE)
    (usecase_dir / "data" / "keep").mkdir(parents=True)
    (usecase_dir / "data" / "keep" / "part-0.parquet").write_bytes(b"yesterday")
    store = usecase_dir / ".ubunye" / "lineage" / "shop" / "daily" / "other"
    store.mkdir(parents=True)
    (store / "20261201T000000.000000Z-abcdef.json").write_text("{}")
    return usecase_dir


def output_task(uc: Path, path: str, second: str | None = None) -> Path:
    outputs = {"out": {"format": "parquet", "path": path}}
    if second is not None:
        outputs["out2"] = {"format": "parquet", "path": second}
    return write_task(uc, "t", {"CONFIG": {"outputs": outputs}, "MODEL": "etl"}, CODE)


# --- output locations -----------------------------------------------------------------------------------------------

REFUSED_OUTPUTS = [
    (".", "is the usecase folder"),
    ("./", "is the usecase folder"),
    ("data/..", "is the usecase folder"),
    ("..", "holds it"),
    ("../..", "holds it"),
    (".ubunye", "record store"),
    (".ubunye/lineage", "record store"),
    (".ubunye/lineage/shop/daily/other", "record store"),
    ("shop", "holds the task folder"),
    ("shop/daily", "holds the task folder"),
    ("shop/daily/other", "is inside the task folder"),
    ("shop/daily/other/data", "is inside the task folder"),
    ("shop/daily/t", "is inside the task folder"),
]


@pytest.mark.parametrize(("path", "why"), REFUSED_OUTPUTS, ids=[p for p, _ in REFUSED_OUTPUTS])
def test_an_output_may_not_replace_code_or_records(uc: Path, path: str, why: str) -> None:
    task_dir = output_task(uc, path)
    before = snapshot(uc)
    with pytest.raises(ConfigError) as err:
        run_task(task_dir, engine="pandas", lineage=True)
    message = str(err.value)
    assert message.startswith(f"{task_dir / 'config.yaml'}: CONFIG.outputs.out.path: "), message
    assert why in message and "an output must be a folder of its own" in message
    assert snapshot(uc) == before


def test_absolute_and_file_url_forms_are_checked_as_well(uc: Path) -> None:
    for path in (str(uc), f"file://{uc}", str(uc / ".ubunye"), f"file://{uc}/shop/daily/other"):
        task_dir = output_task(uc, path)
        before = snapshot(uc)
        with pytest.raises(ConfigError, match=r"CONFIG\.outputs\.out\.path: "):
            run_task(task_dir, engine="pandas", lineage=True)
        assert snapshot(uc) == before, path


def test_a_symlink_into_the_record_store_is_seen_through(uc: Path) -> None:
    (uc / "data" / "sneaky").symlink_to(uc / ".ubunye")
    task_dir = output_task(uc, "data/sneaky/lineage")
    before = snapshot(uc)
    with pytest.raises(ConfigError, match="record store"):
        run_task(task_dir, engine="pandas", lineage=True)
    assert snapshot(uc) == before


def test_two_outputs_on_one_location_are_refused(uc: Path) -> None:
    task_dir = output_task(uc, "data/same", second="data/./same")
    with pytest.raises(ConfigError, match=r"CONFIG\.outputs\.out2\.path: .* is also the location of output 'out'"):
        run_task(task_dir, engine="pandas", lineage=True)
    assert not (uc / "data" / "same").exists()


def test_a_template_variable_cannot_climb_out(uc: Path) -> None:
    task_dir = output_task(uc, "data/out/{{ dt }}")
    before = snapshot(uc)
    for dt in ("../..", "../../..", "a/b", "x\ny"):  # "" is refused wherever it is used (below)
        with pytest.raises(ConfigError) as err:
            run_task(task_dir, dt=dt, engine="pandas", lineage=True)
        assert str(err.value).startswith(str(task_dir / "config.yaml")), (dt, str(err.value))
        assert snapshot(uc) == before, dt


def test_the_cli_refuses_with_one_line_and_keeps_every_file(uc: Path) -> None:
    output_task(uc, "data/out/{{ dt }}")
    before = snapshot(uc)
    result = CliRunner().invoke(app, ["run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "t", "-dt", "../.."])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "config.yaml" in lines[0], result.stderr
    assert snapshot(uc) == before


def test_a_plain_data_folder_is_fine(uc: Path) -> None:
    task_dir = output_task(uc, "data/out/{{ dt }}")
    result = run_task(task_dir, dt="2026-12-01", engine="pandas", lineage=True)
    assert result.status == "success"
    assert list((uc / "data" / "out" / "2026-12-01").glob("*.parquet"))
    assert (uc / "data" / "keep" / "part-0.parquet").read_bytes() == b"yesterday"


# --- task identity --------------------------------------------------------------------------------------------------

BAD_NAMES = ["..", ".", "", "a/b", "/abs", "../shop", "x\\y", ".ubunye", "tab\tname", "nul\x00", "line\nbreak"]


@pytest.mark.parametrize("part", ["usecase", "package", "task"])
@pytest.mark.parametrize("name", BAD_NAMES, ids=repr)
def test_identity_parts_are_plain_names(uc: Path, part: str, name: str) -> None:
    ident = {"usecase": "shop", "package": "daily", "task": "other"} | {part: name}
    before = snapshot(uc)
    with pytest.raises(ConfigError) as err:
        run_pipeline(uc, ident["usecase"], ident["package"], [ident["task"]], engine="pandas", lineage=True)
    assert str(err.value).startswith(f"{part} {name!r} is not a plain folder name"), str(err.value)
    assert snapshot(uc) == before


def test_identity_of_a_wrong_type_is_refused(uc: Path) -> None:
    with pytest.raises(ConfigError, match="task must be a folder name"):
        run_pipeline(uc, "shop", "daily", [3], engine="pandas")  # type: ignore[list-item]
    with pytest.raises(UbunyeError, match="needs a list of task names"):
        run_pipeline(uc, "shop", "daily", "other", engine="pandas")  # type: ignore[arg-type]


def test_every_task_is_checked_before_the_first_runs(uc: Path) -> None:
    before = snapshot(uc)
    with pytest.raises(ConfigError, match="no such task folder"):
        run_pipeline(uc, "shop", "daily", ["other", "missing"], engine="pandas", lineage=True)
    assert snapshot(uc) == before


def test_a_task_named_twice_is_refused_before_any_runs(uc: Path) -> None:
    # Its second run would overwrite the first one's outputs (the CLI's `-t other -t other` ran it twice).
    os.symlink(uc / "shop" / "daily" / "other", uc / "shop" / "daily" / "alias")
    before = snapshot(uc)
    for tasks in (["other", "other"], ["other", "alias"]):
        with pytest.raises(UbunyeError, match=r"task '(other|alias)' is named twice in \[.*\]; name it once"):
            run_pipeline(uc, "shop", "daily", tasks, engine="pandas", lineage=True)
    result = CliRunner().invoke(app, ["run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "other", "-t", "other"])
    assert result.exit_code == 2 and "task 'other' is named twice; name each task once" in result.stderr, result.output
    assert "-t" in result.stderr and "run_pipeline" not in result.stderr
    assert snapshot(uc) == before


def test_a_task_symlinked_from_outside_is_refused(uc: Path, tmp_path: Path) -> None:
    outside = write_task(tmp_path / "elsewhere", "evil", {"CONFIG": {"outputs": {}}}, CODE)
    os.symlink(outside, uc / "shop" / "daily" / "evil")
    with pytest.raises(ConfigError, match="outside the usecase folder"):
        run_pipeline(uc, "shop", "daily", ["evil"], engine="pandas")


@pytest.mark.parametrize("flag", ["-u", "-p", "-t"])
def test_the_cli_names_the_bad_identity_part(uc: Path, flag: str) -> None:
    args = {"-u": "shop", "-p": "daily", "-t": "other"} | {flag: "../x"}
    before = snapshot(uc)
    result = CliRunner().invoke(app, ["run", "-d", str(uc), *[a for kv in args.items() for a in kv]])
    assert result.exit_code == 2, result.output
    part = {"-u": "usecase", "-p": "package", "-t": "task"}[flag]
    assert result.stderr.strip() == f"error: {part} '../x' is not a plain folder name " + (
        "(no separator, leading '.' or control character)"
    )
    assert snapshot(uc) == before


def test_run_task_on_a_too_short_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="this path is too short"):
        run_task(Path("/"), engine="pandas")


# --- found by an independent battery ---------------------------------------------------------------------------------


def test_an_output_inside_another_output_is_refused(uc: Path) -> None:
    task_dir = output_task(uc, "data/x", second="data/x/sub")
    with pytest.raises(ConfigError, match=r"CONFIG\.outputs\.out2\.path: .* is inside the location of output 'out'"):
        run_task(task_dir, engine="pandas", lineage=True)
    task_dir = output_task(uc, "data/y/sub", second="data/y")
    with pytest.raises(ConfigError, match=r"CONFIG\.outputs\.out2\.path: .* holds the location of output 'out'"):
        run_task(task_dir, engine="pandas", lineage=True)
    assert not (uc / "data" / "x").exists() and not (uc / "data" / "y").exists()
    assert not list((uc / ".ubunye" / "lineage" / "shop" / "daily").glob("t/*.json"))


@pytest.mark.parametrize("path", ["jdbc:postgresql://h/db?user=u&password=JdbcUrlPw66", "user:secretpw@host/db"])
def test_a_path_that_is_a_connection_string_is_refused_without_echoing_it(uc: Path, path: str) -> None:
    task_dir = output_task(uc, path)
    before = snapshot(uc)
    with pytest.raises(ConfigError) as err:
        run_task(task_dir, engine="pandas", lineage=True)
    message = str(err.value)
    assert "CONFIG.outputs.out.path: starts with" in message and "neither a local path nor a URL" in message
    assert "JdbcUrlPw66" not in message and "secretpw" not in message
    assert snapshot(uc) == before


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"dt": 5}, "template variable dt must be a string, got int"),
        ({"dtf": ["a"]}, "template variable dtf must be a string, got list"),
        ({"mode": b"prod"}, "template variable mode must be a string, got bytes"),
        ({"dt": "x" * 5000}, "template variable dt is 5000 characters long; at most 255 (it may name a folder)"),
        # The command line refuses these two already (tests/cli); from Python they rendered "" in place of the
        # config's default, and a lone surrogate failed the run only when its record could not be written.
        ({"dt": ""}, "template variable dt is empty: give a value, or None for the config's default"),
        (
            {"mode": "p\udcffx"},
            "template variable mode holds the lone surrogate U+DCFF, which is not text a record can hold",
        ),
    ],
)
def test_template_variables_are_checked_before_anything_runs(uc: Path, kwargs: dict, says: str) -> None:
    task_dir = output_task(uc, "data/out/{{ dt | default('latest') }}")
    before = snapshot(uc)
    with pytest.raises(ConfigError) as err:
        run_task(task_dir, engine="pandas", lineage=True, **kwargs)
    assert str(err.value) == says
    with pytest.raises(ConfigError) as err:
        run_pipeline(uc, "shop", "daily", ["t"], engine="pandas", lineage=True, **kwargs)
    assert str(err.value) == says
    assert snapshot(uc) == before


def test_a_dt_holding_two_dots_cannot_build_a_path(uc: Path) -> None:
    task_dir = output_task(uc, "data/out/{{ dt }}")
    with pytest.raises(ConfigError, match=r"template variable dt='x\.\.y' cannot build a path \(contains '\.\.'\)"):
        run_task(task_dir, dt="x..y", engine="pandas", lineage=True)
    assert not (uc / "data" / "out").exists()


# --- an output may not destroy the run's own input --------------------------------------------------------------------


def input_task(uc: Path, output: dict[str, str], input_path: str = "data/i", fmt: str = "parquet") -> Path:
    """A task reading ``input_path`` (written here as two rows) into the output ``out`` configured by ``output``."""
    source = Path(input_path) if Path(input_path).is_absolute() else uc / input_path
    if fmt == "delta":
        from deltalake import write_deltalake

        # as Arrow: deltalake takes a pandas frame only from pandas 2.2 on (Databricks 14.3 to 16.4 LTS run 1.5.3)
        write_deltalake(str(source), pa.table({"a": [1, 2]}))
    else:
        source.mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"a": [1, 2]}).to_parquet(source / "part-0.parquet")
    config = {
        "inputs": {"i": {"format": fmt, "path": input_path}},
        "outputs": {"out": {"format": fmt, **output}},
        "transform": {"type": "sql", "query": "SELECT a + 10 AS a FROM i"},
    }
    return write_task(uc, "t", {"CONFIG": config}, None)


def refused_keeping_every_file(uc: Path, task_dir: Path, why: str) -> None:
    before = snapshot(uc)
    with pytest.raises(ConfigError) as err:
        run_task(task_dir, engine="pandas", lineage=True)
    message = str(err.value)
    assert message.startswith(f"{task_dir / 'config.yaml'}: CONFIG.outputs.out.path: "), message
    assert why in message, message
    assert snapshot(uc) == before


@pytest.mark.parametrize("spelling", ["relative", "absolute", "file_url", "symlink"])
def test_an_output_holding_its_own_input_is_refused(uc: Path, spelling: str) -> None:
    (uc / "data" / "notes").mkdir()
    (uc / "data" / "notes" / "keep.txt").write_text("not ubunye data")
    (uc / "link").symlink_to(uc / "data")
    path = {"relative": "data", "absolute": str(uc / "data"), "file_url": f"file://{uc}/data", "symlink": "link"}
    task_dir = input_task(uc, {"path": path[spelling], "mode": "overwrite"})
    refused_keeping_every_file(uc, task_dir, "holds the location of input 'i'")
    # an append deletes nothing (on Spark: a partition added beside the one read); here the engine refuses a
    # folder holding a non-partition folder, and every file stays
    task_dir = input_task(uc, {"path": path[spelling], "mode": "append"})
    before = snapshot(uc)
    with pytest.raises(TaskError, match=r"output 'out': cannot append to"):
        run_task(task_dir, engine="pandas", lineage=True)
    assert {k: v for k, v in snapshot(uc).items() if k in before} == before


def test_an_overwrite_of_its_own_input_is_refused_an_append_adds_to_it(uc: Path) -> None:
    task_dir = input_task(uc, {"path": "data/./i", "mode": "overwrite"})
    refused_keeping_every_file(uc, task_dir, "is the location of input 'i'")
    task_dir = input_task(uc, {"path": "data/i", "mode": "append"})
    assert run_task(task_dir, engine="pandas", lineage=True).status == "success"
    assert sorted(pd.read_parquet(uc / "data" / "i")["a"]) == [1, 2, 11, 12]


def test_an_overwrite_inside_its_own_input_is_refused(uc: Path) -> None:
    task_dir = input_task(uc, {"path": "data/i/sub", "mode": "overwrite"})
    refused_keeping_every_file(uc, task_dir, "is inside the location of input 'i'")


def test_a_delta_overwrite_of_its_own_input_keeps_the_version_read(uc: Path) -> None:
    from deltalake import DeltaTable

    task_dir = input_task(uc, {"path": "data/d", "mode": "overwrite"}, input_path="data/d", fmt="delta")
    assert run_task(task_dir, engine="pandas", lineage=True).status == "success"
    table = DeltaTable(str(uc / "data" / "d"))
    assert sorted(table.to_pandas()["a"]) == [11, 12]
    table.load_as_version(0)
    assert sorted(table.to_pandas()["a"]) == [1, 2]


def test_an_overwrite_of_a_folder_holding_other_folders_is_refused(uc: Path) -> None:
    (uc / "data" / "out" / "notes").mkdir(parents=True)
    (uc / "data" / "out" / "notes" / "keep.txt").write_text("not ubunye data")
    refused_keeping_every_file(uc, output_task(uc, "data/out"), "holds the folder 'notes', which is not a partition")


@pytest.mark.parametrize("inside", ["k=1/notes", "a=1/b=2/notes"])
def test_an_overwrite_of_a_partition_holding_other_folders_is_refused(uc: Path, inside: str) -> None:
    # the folder was looked for beside the partitions only: one inside a partition was deleted without a word
    (uc / "data" / "out" / inside).mkdir(parents=True)
    (uc / "data" / "out" / inside / "keep.txt").write_text("not ubunye data")
    refused_keeping_every_file(
        uc, output_task(uc, "data/out"), f"holds the folder {inside!r}, which is not a partition"
    )


def test_an_overwrite_replaces_partitions_and_hidden_folders(uc: Path) -> None:
    for name in ("k=1", "_k=2", "_temporary", ".cache"):
        (uc / "data" / "out" / name).mkdir(parents=True)
    assert run_task(output_task(uc, "data/out"), engine="pandas", lineage=True).status == "success"
    # An overwrite replaces the folder whole: what an engine writes there (partitions, hidden files) goes with it.
    left = sorted(p.name for p in (uc / "data" / "out").iterdir())
    assert left and all(name.endswith(".parquet") for name in left), left
    assert sorted(pd.read_parquet(uc / "data" / "out")["a"]) == [1, 2, 3]


def test_a_home_folder_of_no_user_is_a_config_error_from_python(tmp_path: Path) -> None:
    # Path.expanduser raised RuntimeError("Could not determine home directory"): a traceback, not a named error.
    with pytest.raises(ConfigError, match=r"task_dir: .*no home folder is known"):
        run_task("~nosuchuser-ubunye/shop/daily/orders", engine="pandas")
    with pytest.raises(ConfigError, match=r"usecase folder: .*no home folder is known"):
        run_pipeline("~nosuchuser-ubunye/uc", "shop", "daily", ["orders"], engine="pandas")
