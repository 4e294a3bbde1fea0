"""A symlinked output location is locked at the folder it writes: every spelling of it (relative, absolute,
``file://``, through the link or not) waits on one lock, so a run never tidies away another writer's staging."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from tests.lineage.usecase import write_task
from ubunye.config.model import IOConfig
from ubunye.engines import get_engine
from ubunye.engines.paths import lock_file
from ubunye.exceptions import EngineError, TaskError
from ubunye.runner import run_task

GEN = """
import pandas as pd
from ubunye import Task

class Gen(Task):
    def transform(self, sources):
        return {"out": pd.DataFrame({"n": [1, 2]})}
"""


@contextmanager
def other_writer(real: Path) -> Iterator[Path]:
    """Another writer of ``real`` mid-write: it holds the lock of ``real`` and has a staging folder beside it."""
    fd = os.open(lock_file(real), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a separate open file: conflicts with this process's own output_lock too
    staging = real.parent / f".{real.name}.ubunye-staging-other-writer"
    staging.mkdir()
    (staging / "part-x.parquet").write_bytes(b"the other writer's data, not yet committed")
    try:
        yield staging
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@pytest.fixture
def linked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("UBUNYE_LOCK_TIMEOUT", "0.3")
    real = tmp_path / "uc" / "data" / "real"
    real.mkdir(parents=True)
    (real.parent / "lnk").symlink_to(real)
    return real, real.parent / "lnk"


@pytest.mark.parametrize("spelling", ["relative", "absolute", "file_url"])
def test_a_run_writing_through_a_symlink_waits_for_the_lock_of_its_target(
    linked: tuple[Path, Path], spelling: str
) -> None:
    real, link = linked
    path = {"relative": "data/lnk", "absolute": str(link), "file_url": f"file://{link}"}[spelling]
    out = {"out": {"format": "parquet", "path": path, "mode": "overwrite"}}
    folder = write_task(real.parents[1], "gen", {"CONFIG": {"outputs": out}}, GEN)
    with other_writer(real) as staging:
        # Before: the absolute and file:// spellings locked data/.lnk.ubunye.lock, ran, and deleted the staging.
        with pytest.raises(TaskError) as err:
            run_task(folder, engine="pandas", dt="a")
        assert f"another run holds its lock {lock_file(real)};" in str(err.value)
        assert (staging / "part-x.parquet").exists()
    assert link.is_symlink() and list(real.iterdir()) == []


@pytest.mark.parametrize("mode", ["overwrite", "append"])
def test_an_engine_write_through_a_symlink_takes_the_lock_of_its_target(linked: tuple[Path, Path], mode: str) -> None:
    real, link = linked
    io = IOConfig("out", format="parquet", path=str(link), mode=mode)
    with other_writer(real) as staging, pytest.raises(EngineError, match="another run holds its lock"):
        get_engine("pandas").write(pd.DataFrame({"n": [1]}), io, real.parents[1])
    assert (staging / "part-x.parquet").exists()
