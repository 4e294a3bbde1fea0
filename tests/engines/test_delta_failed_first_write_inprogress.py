"""A failed first partitioned Delta write leaves nothing behind, from a defect found in the twentieth session: when
the commit hook refused, deltalake's in-progress data files (object_store's ``part-...parquet#1``, which deltalake
removes itself a moment after its write raised: its aborted tasks go on on their own threads) were still there when
the cleanup looked, were kept as another writer's ("kept, as it did not write them"), and so were the partition
folders holding them: ``t/k=0/`` and ``t/k=1/`` stayed, empty, with no ``_delta_log``, and the next failed write
of the output was not cleaned up (its folder existed). Now the cleanup waits for deltalake's aborted write to end,
and never removes an in-progress file itself (one may be another writer's).

Every write is real (deltalake on local folders); the hook fails as a hook refusing the commit does."""

from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("deltalake", reason="deltalake is not installed in this venv")

from tests.engines.test_delta_cleanup_race import spark_part
from ubunye.config import IOConfig
from ubunye.engines.delta import write_delta


def _rows(count: int) -> pa.Table:
    """``count`` rows of two random longs and a partition column k (0 or 1), in batches of a million."""
    import numpy as np

    rng = np.random.default_rng(3)
    table = pa.table({"a": rng.integers(0, 2**62, count), "k": (np.arange(count) % 2).astype("int32"),
                      "b": rng.integers(0, 2**62, count)})  # fmt: skip
    return pa.Table.from_batches(table.to_batches(max_chunksize=1_000_000))


def _refuse_once_in_progress(folder: Path, seen: list[Path], meanwhile: list[Path] | None = None) -> None:
    """The hook: once deltalake is writing a data file (its in-progress ``#1`` is in a partition folder), put
    another process's files in (``meanwhile``) and refuse the commit. The wait is bounded only against a hang."""
    deadline = time.monotonic() + 300
    while not seen and time.monotonic() < deadline:
        seen.extend(p for p in folder.glob("k=*/part-*.parquet#*"))
        time.sleep(0.02)
    if meanwhile is not None:
        meanwhile.append(spark_part(folder / "k=0", pa.table({"a": [1], "b": [2]})))
    raise RuntimeError("refused before the commit")


def test_a_failed_first_partitioned_write_leaves_nothing_and_claims_no_other_writer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "t"
    seen: list[Path] = []
    io = IOConfig("o", format="delta", partition_by=["k"])
    with caplog.at_level(logging.WARNING, logger="ubunye"), pytest.raises(RuntimeError, match="refused before"):
        write_delta(_rows(4_000_000), io, str(folder), lambda: _refuse_once_in_progress(folder, seen))
    assert seen  # deltalake was writing a data file when the write failed
    assert not folder.exists(), sorted(str(p) for p in folder.rglob("*"))
    assert not [r.getMessage() for r in caplog.records if "kept" in r.getMessage()]


def test_deltalakes_in_progress_files_go_and_another_writers_part_file_stays(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "t"
    seen: list[Path] = []
    theirs: list[Path] = []
    io = IOConfig("o", format="delta", partition_by=["k"])
    with caplog.at_level(logging.WARNING, logger="ubunye"), pytest.raises(RuntimeError, match="refused before"):
        write_delta(_rows(4_000_000), io, str(folder), lambda: _refuse_once_in_progress(folder, seen, theirs))
    assert seen
    assert sorted(p for p in folder.rglob("*")) == [folder / "k=0", *theirs]
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert str(theirs[0]) in warned and "#" not in warned


def test_an_in_progress_file_of_another_writer_is_never_removed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # object_store's in-progress name, put by another process (another deltalake or polars writer) while this write
    # ran: kept and named, as still being written; the old cleanup removed such names
    folder = tmp_path / "t"
    theirs = folder / "k=x" / f"part-00000-{uuid.uuid4()}-c000.snappy.parquet#1"

    def meanwhile() -> None:
        theirs.parent.mkdir(parents=True, exist_ok=True)
        theirs.write_bytes(b"PAR1 being written")
        raise RuntimeError("refused before the commit")

    io = IOConfig("o", format="delta", partition_by=["k"])
    with caplog.at_level(logging.WARNING, logger="ubunye"), pytest.raises(RuntimeError, match="refused before"):
        write_delta(pa.table({"k": ["x", "y"], "v": [1, 2]}), io, str(folder), meanwhile)
    assert sorted(p for p in folder.rglob("*")) == [folder / "k=x", theirs]
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "kept, still being written when its cleanup ended" in warned and str(theirs) in warned
