"""Faults end to end through the real CLI: kill -9 at random points, and eight concurrent runs of one task, with
the records in the usecase_dir's own store and in an object store (a local S3 server, tests/lineage/s3server.py).

After every fault: every record on disk loads; the output folder holds exactly one run's complete rows; and a
record on disk carries the hash of exactly those rows (the previous good run's, or the killed run's checkpoint or
final record). Each run writes its own process id into its rows, so two runs' outputs always differ.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.lineage import s3server
from tests.lineage.usecase import write_task
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.lineage import RecordStore

s3_server = s3server.s3_server  # the fixture
CLI = [sys.executable, "-c", "from ubunye.cli.main import main; main()"]

CODE = """
import os
import pandas as pd
from ubunye import Task

class Stamp(Task):
    def transform(self, sources):
        frame = sources["src"]
        rows = len(frame) - (os.getpid() % 97)  # each run its own row count and its own stamp
        out = frame.head(rows).copy()
        out["pid"] = os.getpid()
        return {"out": out}
"""


def usecase(tmp_path: Path, rows: int) -> Path:
    import pandas as pd

    uc = tmp_path / "uc"
    src = uc / "data" / "src"
    src.mkdir(parents=True)
    pd.DataFrame({"k": range(rows), "v": [f"value-{i}" for i in range(rows)]}).to_parquet(src / "part-0.parquet")
    cfg = {
        "CONFIG": {
            "inputs": {"src": {"format": "parquet", "path": "data/src"}},
            "outputs": {"out": {"format": "parquet", "path": "data/out", "mode": "overwrite"}},
            "transform": {"type": "task"},
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "stamp", cfg, CODE)
    return uc


@pytest.fixture(params=["local", "s3"])
def records(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Where the runs' records go: the usecase_dir's own store (None), or a new bucket on the local S3 server
    (through UBUNYE_RECORDS and AWS_ENDPOINT_URL, inherited by every child run as a user's shell would give them)."""
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    if request.param == "local":
        return None
    s3 = request.getfixturevalue("s3_server")
    for key, value in s3.env.items():
        monkeypatch.setenv(key, value)
    url = s3.bucket() + "/records"
    monkeypatch.setenv("UBUNYE_RECORDS", url)
    return url


def args(uc: Path) -> list[str]:
    return [*CLI, "run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "stamp", "--engine", "pandas"]


def output_hash(uc: Path) -> tuple[int, str]:
    engine = get_engine("pandas")
    frame = engine.read(IOConfig(name="out", format="parquet", path="data/out"), uc)
    h = engine.hash(frame)
    return h.row_count, h.data_hash


def recorded(uc: Path, records: str | None = None) -> list[tuple[str, int | None, str | None]]:
    store = RecordStore(uc, records=records)
    # A run killed before its outputs were hashed has a running record that names no output yet.
    return [
        (r.status, r.outputs[0].row_count, r.outputs[0].data_hash) if r.outputs else (r.status, None, None)
        for r in store.records("shop", "daily")
    ]


def test_kill_9_at_random_points_never_loses_the_output_or_its_hash(tmp_path: Path, records: str | None) -> None:
    uc = usecase(tmp_path, 300_000)
    first = subprocess.run(args(uc), capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    src_before = (uc / "data" / "src" / "part-0.parquet").read_bytes()
    rng = random.Random(20261203)
    # Where a kill lands is random: spread over the whole run (start-up, read, hash, transform, write, record).
    started = time.monotonic()
    child = subprocess.run(args(uc), capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    whole = time.monotonic() - started
    for attempt in range(8):
        child = subprocess.Popen(args(uc), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.2, whole))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        rows, data_hash = output_hash(uc)  # the folder reads as one complete table
        hashes = {(n, h) for _, n, h in recorded(uc, records)}
        assert (rows, data_hash) in hashes, f"attempt {attempt}: rows {rows} {data_hash} not in any record"
        statuses = {s for s, _, _ in recorded(uc, records)}
        assert statuses <= {"success", "running"}, statuses
    assert (uc / "data" / "src" / "part-0.parquet").read_bytes() == src_before
    leftovers = [p.name for p in (uc / "data").iterdir() if p.name.startswith(".") and "staging" in p.name]
    # A killed writer may leave its staging folder; the next writer of that location removes it.
    done = subprocess.run(args(uc), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    after = [p.name for p in (uc / "data").iterdir() if p.name.startswith(".") and "staging" in p.name]
    assert after == [], (leftovers, after)
    assert output_hash(uc) == (recorded(uc, records)[-1][1], recorded(uc, records)[-1][2])
    if records is not None:  # every record read from the object store loads: none was ever half written
        assert all(e.record is not None for e in RecordStore(records=records).entries()), "unreadable record"


def test_eight_concurrent_runs_leave_one_runs_rows_and_its_hash(tmp_path: Path, records: str | None) -> None:
    uc = usecase(tmp_path, 50_000)
    children = [subprocess.Popen(args(uc), stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(8)]
    codes = [c.wait(timeout=600) for c in children]
    assert codes == [0] * 8, [c.stderr.read() for c in children if c.returncode]
    runs = recorded(uc, records)
    assert len(runs) == 8 and {s for s, _, _ in runs} == {"success"}
    rows, data_hash = output_hash(uc)
    matching = [r for r in runs if (r[1], r[2]) == (rows, data_hash)]
    assert len(matching) == 1, f"the folder ({rows} rows) matches {len(matching)} records of {runs}"
    assert len({h for _, _, h in runs}) == 8  # eight different outputs, so "exactly one" means something


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="mounting a tmpfs needs root")
def test_a_full_filesystem_keeps_the_previous_output(tmp_path: Path) -> None:
    import pandas as pd

    # Random text barely compresses: the input, the output and its copy are each about X bytes, and the
    # filesystem holds 2.5 X, so the first run fits and the second cannot stage its output beside the old one.
    rows = 60_000
    frame = pd.DataFrame({"k": range(rows), "v": [os.urandom(8).hex() for _ in range(rows)]})
    frame.to_parquet(tmp_path / "src.parquet")
    size = (tmp_path / "src.parquet").stat().st_size
    small = tmp_path / "small"
    small.mkdir()
    opts = f"size={int(size * 2.5) + 256 * 1024}"
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(small)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip() or mounted.returncode}")
    try:
        uc = usecase(small, 10)
        (uc / "data" / "src" / "part-0.parquet").write_bytes((tmp_path / "src.parquet").read_bytes())
        first = subprocess.run(args(uc), capture_output=True, text=True, timeout=300)
        assert first.returncode == 0, first.stderr
        before = {p.name: p.read_bytes() for p in (uc / "data" / "out").iterdir()}
        good = output_hash(uc)
        done = subprocess.run(args(uc), capture_output=True, text=True, timeout=300)
        assert done.returncode == 2, (done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "'out'" in lines[0] and "No space left" in lines[0], done.stderr
        assert {p.name: p.read_bytes() for p in (uc / "data" / "out").iterdir()} == before
        assert output_hash(uc) == good
        last = RecordStore(uc).records("shop", "daily")[-1]
        assert last.status == "failed" and last.outputs[0].written is False
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)
