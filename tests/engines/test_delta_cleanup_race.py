"""A failed first Delta write removes only the data files it wrote, from a defect found in the nineteenth session:
the cleanup removed every file named as deltalake names its data files (part-00000-<uuid>-c000.snappy.parquet),
which is also how Spark names its part files, so a part file another process (a Spark job committing to the same
new path) put in the folder during the write was deleted. Now a data file is removed only when its footer shows
this write made it (deltalake's writer, the columns the write sent, no more rows); anything else is kept and named.

Every write is real (deltalake on local folders); the other process's files are real Parquet files, put in the new
folder by the commit hook, which then fails (as a hook refusing the commit does)."""

from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("deltalake", reason="deltalake is not installed in this venv")

from deltalake import write_deltalake

from tests.optional import LOCAL_ENGINES
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.engines.delta import write_delta


def spark_part(folder: Path, rows: pa.Table) -> Path:
    """``rows`` as a Spark job's part file in ``folder``: Spark's name for it and its footer key."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
    pq.write_table(rows.replace_schema_metadata({"org.apache.spark.version": "3.5.9"}), path)
    return path


def deltalake_part(folder: Path, rows: pa.Table, scratch: Path) -> Path:
    """A data file deltalake wrote for another table (other columns), moved into ``folder``."""
    write_deltalake(str(scratch), rows)
    made = next(scratch.glob("part-*.parquet"))
    folder.mkdir(parents=True, exist_ok=True)
    return made.rename(folder / made.name)


def _frame(engine: str) -> object:
    module = pytest.importorskip(engine)
    return module.DataFrame({"p": ["x", "y"], "v": [1, 2]})


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_another_writers_part_files_put_in_the_new_folder_are_kept(
    tmp_path: Path, engine: str, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "data" / "o"
    theirs: list[Path] = []

    def meanwhile() -> None:
        # the same column as this write's data files (v), Spark's names, in the folder and in a partition folder
        theirs.append(spark_part(folder, pa.table({"v": [7]})))
        theirs.append(spark_part(folder / "p=x", pa.table({"v": [8]})))
        theirs.append(deltalake_part(folder / "p=y", pa.table({"w": [9]}), tmp_path / "other"))
        raise RuntimeError("refused before the commit")

    io = IOConfig("o", format="delta", path="data/o", partition_by=["p"])
    with caplog.at_level(logging.WARNING, logger="ubunye"), pytest.raises(RuntimeError, match="refused before"):
        get_engine(engine).write(_frame(engine), io, tmp_path, before_commit=meanwhile)
    assert sorted(p for p in folder.rglob("*") if p.is_file()) == sorted(theirs)
    assert pq.read_table(theirs[0]).column("v").to_pylist() == [7]  # whole, unchanged
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert all(str(p) in warned or str(p.parent) in warned for p in theirs)
    assert not (folder / "_delta_log").exists()


def test_its_own_flushed_file_goes_and_a_spark_part_file_of_the_same_column_stays(tmp_path: Path) -> None:
    # deltalake flushes a data file every ~100 MB: 20M random longs make one, left behind (no commit) when the hook
    # fails. The hook also puts a Spark part file of the same column there.
    import numpy as np

    folder = tmp_path / "t"
    rows = pa.table({"v": np.random.default_rng(7).integers(0, 2**62, 20_000_000)})
    flushed: list[Path] = []
    theirs: list[Path] = []

    def meanwhile() -> None:
        # deltalake's writer may still be encoding the last batches read when the stream ends: wait for its file
        # (a bound only against a hang; the test is about what the cleanup removes, not when the file comes)
        deadline = time.monotonic() + 300
        while not flushed and time.monotonic() < deadline:
            flushed.extend(folder.glob("part-*.parquet"))  # complete (one being written ends in "#1")
            time.sleep(0.05)
        theirs.append(spark_part(folder, pa.table({"v": [1, 2, 3]})))
        raise RuntimeError("refused before the commit")

    batches = pa.Table.from_batches(rows.to_batches(max_chunksize=1_000_000))
    with pytest.raises(RuntimeError, match="refused before the commit"):
        write_delta(batches, IOConfig("o", format="delta"), str(folder), meanwhile)
    assert flushed  # deltalake had written a data file: this write's, removed
    assert sorted(folder.iterdir()) == theirs
