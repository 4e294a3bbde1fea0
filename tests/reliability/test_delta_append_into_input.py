"""A Delta append into the run's own input folder (not that same Delta table) is refused before anything runs.

It wrote ``_delta_log`` and a data file among a parquet input's files, so the input then read other rows (twice
as many) or failed; a Delta append to the Delta table read stays allowed (it adds a version).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from tests.lineage.usecase import write_task
from ubunye.exceptions import ConfigError
from ubunye.runner import run_task

ENGINES = ["pandas", "polars"]


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under root, with file contents (folders as None)."""
    return {
        str(p.relative_to(root)): None if p.is_dir() else p.read_bytes()
        for p in sorted(root.rglob("*"))
        if "__pycache__" not in p.parts
    }


def task(uc: Path, input_path: str, output_path: str, input_format: str = "parquet") -> Path:
    config = {
        "inputs": {"i": {"format": input_format, "path": input_path}},
        "outputs": {"out": {"format": "delta", "path": output_path, "mode": "append"}},
        "transform": {"type": "sql", "query": "SELECT a + 10 AS a FROM i"},
    }
    return write_task(uc, "t", {"CONFIG": config}, None)


@pytest.fixture
def uc(tmp_path: Path) -> Path:
    usecase_dir = tmp_path / "uc"
    (usecase_dir / "data" / "i").mkdir(parents=True)
    pd.DataFrame({"a": [1, 2]}).to_parquet(usecase_dir / "data" / "i" / "part-0.parquet")
    return usecase_dir


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("output_path", "why"),
    [
        ("data/i", "is the location of input 'i' (parquet), which its Delta append would spoil"),
        ("data/./i/", "is the location of input 'i' (parquet), which its Delta append would spoil"),
        ("data", "holds the location of input 'i' ({uc}/data/i), which its Delta append would spoil"),
    ],
)
def test_a_delta_append_into_its_own_input_is_refused(uc: Path, engine: str, output_path: str, why: str) -> None:
    task_dir = task(uc, "data/i", output_path)
    before = snapshot(uc)
    with pytest.raises(ConfigError) as err:
        run_task(task_dir, engine=engine, lineage=True)
    message = str(err.value)
    assert message.startswith(f"{task_dir / 'config.yaml'}: CONFIG.outputs.out.path: "), message
    assert why.format(uc=uc) in message, message
    assert snapshot(uc) == before  # nothing written: no _delta_log, no data file, no record
    assert sorted(pd.read_parquet(uc / "data" / "i")["a"]) == [1, 2]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_delta_append_to_the_delta_table_read_adds_a_version(tmp_path: Path, engine: str) -> None:
    from deltalake import DeltaTable, write_deltalake

    uc = tmp_path / "uc"
    (uc / "data").mkdir(parents=True)
    # as Arrow: deltalake takes a pandas frame only from pandas 2.2 on (Databricks 14.3 to 16.4 LTS run 1.5.3)
    write_deltalake(str(uc / "data" / "d"), pa.table({"a": [1, 2]}))
    task_dir = task(uc, "data/d", "data/d", input_format="delta")
    assert run_task(task_dir, engine=engine, lineage=True).status == "success"
    table = DeltaTable(str(uc / "data" / "d"))
    assert sorted(table.to_pandas()["a"]) == [1, 2, 11, 12]
    table.load_as_version(0)
    assert sorted(table.to_pandas()["a"]) == [1, 2]
