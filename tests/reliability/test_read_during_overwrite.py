"""A run reading a folder another run overwrites: the overwrite swaps the whole folder in one rename, so a reader
that listed the old folder's files found them gone and failed with FileNotFoundError (8 of 55 polars reads of a
csv input failed while another job overwrote it in a loop), though a complete output was there all along. The
engines now list the folder again and read the new output whole."""

from __future__ import annotations

import threading
from pathlib import Path

import pandas as pd
import pytest

from ubunye.config import IOConfig
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.hashing import hash_frame

pl = pytest.importorskip("polars")

from ubunye.engines.polars_engine import PolarsEngine  # noqa: E402

VERSIONS = [pd.DataFrame({"id": range(i, i + 200), "v": [f"run {i}"] * 200}) for i in range(3)]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_reads_during_overwrites_see_one_whole_output_and_never_fail(tmp_path: Path, fmt: str) -> None:
    writer = PandasEngine()
    out = IOConfig("o", format=fmt, path="data/o", mode="overwrite")
    writer.write(VERSIONS[0], out, tmp_path)
    # What each version reads back as on each engine (csv types are each reader's own): one of these, whole.
    readers = [PandasEngine(), PolarsEngine()]
    wanted = set()
    for frame in VERSIONS:
        (tmp_path / "ref").mkdir(exist_ok=True)
        writer.write(frame, IOConfig("r", format=fmt, path="ref", mode="overwrite"), tmp_path)
        wanted |= {hash_frame(r.read(IOConfig("r", format=fmt, path="ref"), tmp_path)).data_hash for r in readers}
    stop = threading.Event()
    writes = []

    def overwrite() -> None:  # a swap every few milliseconds: far more often than nightly jobs overwrite
        while not stop.wait(0.02):
            writer.write(VERSIONS[len(writes) % 3], out, tmp_path)
            writes.append(1)

    thread = threading.Thread(target=overwrite)
    thread.start()
    try:
        seen = [hash_frame(readers[i % 2].read(IOConfig("o", format=fmt, path="data/o"), tmp_path)).data_hash
                for i in range(120)]  # fmt: skip
    finally:
        stop.set()
        thread.join()
    assert len(writes) > 5, "the writer must have swapped the folder during the reads"
    assert set(seen) <= wanted
