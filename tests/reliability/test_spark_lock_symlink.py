"""The Spark engine's Delta write locks the folder it really writes, as the local engines do
(tests/reliability/test_lock_symlink.py): a write through a symlinked absolute path waited on the link's own lock,
so it ran beside another writer holding the lock of the real folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.reliability.test_lock_symlink import other_writer
from ubunye.config.model import IOConfig
from ubunye.engines.paths import lock_file
from ubunye.engines.spark_engine import SparkEngine
from ubunye.exceptions import EngineError

pytestmark = pytest.mark.spark


def test_a_delta_write_through_a_symlink_takes_the_lock_of_its_target(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UBUNYE_LOCK_TIMEOUT", "0.3")
    real = tmp_path / "data" / "real"
    real.mkdir(parents=True)
    link = real.parent / "lnk"
    link.symlink_to(real)
    io = IOConfig("out", format="delta", path=str(link), mode="overwrite")
    frame = spark.createDataFrame([(1,)], "n long")
    with other_writer(real) as staging, pytest.raises(EngineError) as raised:
        # Before: it locked data/.lnk.ubunye.lock and committed into the real folder beside the other writer
        SparkEngine(spark=spark).write(frame, io, tmp_path)
    assert f"another run holds its lock {lock_file(real)};" in str(raised.value), raised.value
    assert (staging / "part-x.parquet").exists()
    assert link.is_symlink() and not (real / "_delta_log").exists()
    SparkEngine(spark=spark).write(frame, io, tmp_path)  # the lock free: written at the target, the link kept
    assert link.is_symlink() and (real / "_delta_log").is_dir()
