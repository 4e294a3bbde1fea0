"""Faults found by hunt 17 around Delta outputs: an overwrite onto the run's own non-Delta input, a file where a
Delta output goes, and what the user is told to check after a first Delta write was killed before its log commit.

Every refusal asserts that every file that was there is byte for byte as it was, and that no run started (no
record: the refusal came before anything was read).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from tests.lineage.usecase import write_task
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.exceptions import ConfigError, EngineError
from ubunye.lineage import RecordStore
from ubunye.runner import run_task

CLI = [sys.executable, "-c", "from ubunye.cli.main import main; main()"]


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under root (links as their target's text), with file contents (folders as None)."""
    out: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        if path.is_symlink():
            out[str(path.relative_to(root))] = os.readlink(path).encode()
        else:
            out[str(path.relative_to(root))] = None if path.is_dir() else path.read_bytes()
    return out


def no_records(uc: Path) -> bool:
    return RecordStore(uc).records("shop", "daily", "t") == []


# --- 1. a Delta overwrite onto the run's own input that is not that Delta table ----------------------------------


def parquet_input_task(uc: Path, output_path: str, input_path: str = "data/src", input_fmt: str = "parquet") -> Path:
    source = uc / input_path
    if input_fmt == "delta":
        from deltalake import write_deltalake

        # as Arrow: deltalake takes a pandas frame only from pandas 2.2 on (Databricks 14.3 to 16.4 LTS run 1.5.3)
        write_deltalake(str(source), pa.table({"k": [1, 2, 3]}))
    else:
        source.mkdir(parents=True)
        pd.DataFrame({"k": [1, 2, 3]}).to_parquet(source / "part-0.parquet")
    config = {
        "CONFIG": {
            "inputs": {"src": {"format": input_fmt, "path": input_path}},
            "outputs": {"out": {"format": "delta", "path": output_path, "mode": "overwrite"}},
            "transform": {"type": "sql", "query": "SELECT k * 10 AS k FROM src"},
            "monitors": ["lineage"],
        }
    }
    return write_task(uc, "t", config)


@pytest.mark.parametrize("spelling", ["same", "symlink", "file_url"])
def test_a_delta_overwrite_of_its_own_parquet_input_is_refused(tmp_path: Path, spelling: str) -> None:
    # It ran: data/src then held _delta_log, the old part and the new one, and no longer read as the input.
    uc = tmp_path / "uc"
    (uc / "data").mkdir(parents=True)
    (uc / "data" / "out").symlink_to(uc / "data" / "src")
    path = {"same": "data/src", "symlink": "data/out", "file_url": f"file://{uc}/data/src"}[spelling]
    task_dir = parquet_input_task(uc, path)
    before = snapshot(uc)
    with pytest.raises(ConfigError) as err:
        run_task(task_dir, engine="pandas")
    message = str(err.value)
    assert message.startswith(f"{task_dir / 'config.yaml'}: CONFIG.outputs.out.path: {uc / 'data' / 'src'} "), message
    assert "is the location of input 'src' (parquet), which its Delta overwrite would spoil" in message, message
    assert snapshot(uc) == before
    assert no_records(uc)
    assert sorted(pd.read_parquet(uc / "data" / "src")["k"]) == [1, 2, 3]


def test_a_delta_overwrite_of_a_folder_holding_its_own_input_is_refused(tmp_path: Path) -> None:
    # Delta's files and log would land beside (partition_by: inside) the input's folder
    uc = tmp_path / "uc"
    task_dir = parquet_input_task(uc, "data", input_path="data/src")
    before = snapshot(uc)
    with pytest.raises(ConfigError, match=r"holds the location of input 'src' \(.*/data/src\), which its Delta "):
        run_task(task_dir, engine="pandas")
    assert snapshot(uc) == before
    assert no_records(uc)


def test_a_delta_overwrite_of_the_delta_table_it_reads_still_runs(tmp_path: Path) -> None:
    # the exemption stands where it holds: the version read stays in the table's history
    from deltalake import DeltaTable

    uc = tmp_path / "uc"
    task_dir = parquet_input_task(uc, "data/src", input_fmt="delta")
    assert run_task(task_dir, engine="pandas").status == "success"
    table = DeltaTable(str(uc / "data" / "src"))
    assert sorted(table.to_pandas()["k"]) == [10, 20, 30]
    table.load_as_version(0)
    assert sorted(table.to_pandas()["k"]) == [1, 2, 3]


# --- 2. a file where a Delta output goes ----------------------------------------------------------------------------

MARK = """
from pathlib import Path
import pandas as pd
from ubunye import Task

class Make(Task):
    def transform(self, sources):
        (Path(__file__).parent / "transformed").write_text("the transform ran")
        return {"out": pd.DataFrame({"k": [1]})}
"""


@pytest.mark.parametrize("engine", ["pandas", "polars"])
@pytest.mark.parametrize("how", ["file", "link_to_file", "file_above"])
@pytest.mark.parametrize("mode", ["overwrite", "append"])
def test_a_file_where_a_delta_output_goes_is_refused_before_anything_runs(
    tmp_path: Path, engine: str, how: str, mode: str
) -> None:
    # It ran the transform, then deltalake failed with "Invalid table location: Path does not exist".
    pytest.importorskip(engine)
    uc = tmp_path / "uc"
    (uc / "data").mkdir(parents=True)
    notes = uc / "data" / "notes.txt"
    notes.write_text("precious notes")
    output = {"file": "data/out", "link_to_file": "data/out", "file_above": "data/notes.txt/out"}[how]
    if how == "file":
        (uc / "data" / "out").write_text("precious notes")
    elif how == "link_to_file":
        (uc / "data" / "out").symlink_to(notes)
    config = {
        "CONFIG": {
            "outputs": {"out": {"format": "delta", "path": output, "mode": mode}},
            "transform": {"type": "task"},
            "monitors": ["lineage"],
        }
    }
    task_dir = write_task(uc, "t", config, MARK)
    before = snapshot(uc)
    with pytest.raises(EngineError) as err:
        run_task(task_dir, engine=engine)
    where = notes if how == "link_to_file" else uc / output  # locations are named resolved
    if how == "file_above":
        want = f"output 'out': {notes} is a file, so no output folder can be made at {where}; move it away"
    elif mode == "append":
        want = f"output 'out': {where} is a file; append needs a folder of part files"
    else:
        want = f"output 'out': {where} is a file, not an output folder; move it away or choose another path"
    assert str(err.value).startswith(want), str(err.value)
    assert not (task_dir / "transformed").exists()
    assert snapshot(uc) == before
    assert no_records(uc)
    # the engine's own check (what the runner calls before reading) and its write refuse alike
    eng = get_engine(engine)
    io = IOConfig("out", format="delta", path=output, mode=mode)
    with pytest.raises(EngineError, match="is a file"):
        eng.check_output(io, uc)
    with pytest.raises(EngineError, match="is a file"):
        eng.write(eng.from_pandas(pd.DataFrame({"k": [1]})), io, uc)
    assert snapshot(uc) == before


# --- 3. what to run to tell whether a killed first Delta write landed ---------------------------------------------

KILLER = """
import os, signal

class KillAtCheckpoint:
    # Listed after lineage: the recorder has written the checkpoint (written: null for the output) when this runs.
    def task_start(self, **kw):
        pass

    def task_checkpoint(self, **kw):
        os.kill(os.getpid(), signal.SIGKILL)
"""

ROWS = """
import pandas as pd
from ubunye import Task

class Make(Task):
    def transform(self, sources):
        return {"out": pd.DataFrame({"k": range(5), "v": [f"v{i}" for i in range(5)]})}
"""


def test_a_first_delta_write_killed_before_its_commit_is_checked_as_delta(tmp_path: Path) -> None:
    # The docs said "ubunye hash the location": on what a first Delta write killed before its log commit leaves (a
    # data file, no _delta_log) it guessed parquet and printed the record's very hash ("landed"): no table was there.
    from deltalake import write_deltalake

    uc = tmp_path / "uc"
    out = uc / "data" / "out"
    config = {
        "CONFIG": {
            "outputs": {"out": {"format": "delta", "path": "data/out", "mode": "overwrite"}},
            "transform": {"type": "task"},
            "monitors": ["lineage", "killer:KillAtCheckpoint"],
        }
    }
    write_task(uc, "t", config, ROWS)
    (uc / "killer.py").write_text(KILLER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(uc), *sys.path])}
    run = [*CLI, "run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "t", "--engine", "pandas"]
    killed = subprocess.run(run, env=env, capture_output=True, timeout=300)
    assert killed.returncode == -9, killed.stderr
    [record] = RecordStore(uc).records("shop", "daily", "t")
    assert (record.status, record.outputs[0].written) == ("running", None)
    trace = subprocess.run(
        [*CLI, "lineage", "trace", record.run_id, "-d", str(uc)], env=env, capture_output=True, text=True, timeout=120
    )
    line = next(x for x in trace.stdout.splitlines() if x.strip().startswith("written"))
    command = ["hash", "-f", "delta", str(out)]
    assert line.strip().endswith(f"compare its data_hash with: ubunye {' '.join(command)})"), trace.stdout

    # What the kill leaves when it lands between deltalake's data file and its log commit: that very data file
    # (deltalake's own, of the same rows, from a table written beside) and no log.
    made = tmp_path / "made"
    write_deltalake(str(made), pa.table({"k": range(5), "v": [f"v{i}" for i in range(5)]}))
    out.mkdir(parents=True, exist_ok=True)  # the write made the empty folder before its checkpoint
    for part in made.glob("*.parquet"):
        part.rename(out / part.name)
    guessed = subprocess.run([*CLI, "hash", str(out), "--json"], env=env, capture_output=True, text=True)
    assert json.loads(guessed.stdout)["data_hash"] == record.outputs[0].data_hash  # the trap: "landed"
    advised = subprocess.run([*CLI, *command, "--json"], env=env, capture_output=True, text=True)
    assert advised.returncode == 2, advised.stdout
    assert f"cannot read delta at {out}" in advised.stderr, advised.stderr
    # the CLI's help says why the format matters for such a check
    helped = subprocess.run([*CLI, "hash", "--help"], env={**env, "COLUMNS": "200"}, capture_output=True, text=True)
    assert "give the format the record names: ubunye hash -f delta" in " ".join(helped.stdout.split())
