"""Outputs are transactional: an output is replaced whole or not at all, whatever stops the write.

Each failing case snapshots every file of the output (and of its parent folder) before the write and asserts it
is byte-for-byte the same after, that the error names the output, and that no staging is left behind. The kill
and concurrency cases run real child processes; the full-disk case mounts a real 2 MiB tmpfs.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.optional import needs_polars
from ubunye.config.model import IOConfig
from ubunye.engines import get_engine, output_lock, swap
from ubunye.engines.locks import lock_timeout
from ubunye.engines.spark_engine import SparkEngine
from ubunye.exceptions import EngineError

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ["pandas", "polars"]
FILES = ["parquet", "csv", "json"]
OLD = pd.DataFrame({"id": [1, 2, 3], "tag": ["old", "old", "old"]})
NEW = pd.DataFrame({"id": [10, 20], "tag": ["new", "new"]})


class Boom(Exception):
    """What a before_commit hook raises in these tests (the runner's checkpoint failing)."""


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (``root`` itself if a file), relative path -> bytes."""
    if root.is_file():
        return {".": root.read_bytes()}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def visible(snap: dict[str, bytes]) -> dict[str, bytes]:
    """The files a reader sees: none under a name starting with ``.`` or ``_``."""
    return {k: v for k, v in snap.items() if not any(part[0] in "._" for part in Path(k).parts)}


def leftovers(folder: Path) -> list[str]:
    """ubunye's hidden siblings of an output, except its lock file (which stays by design)."""
    return sorted(
        p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}.") and p.suffix != ".lock"
    )


def ids(engine, frame) -> list[int]:
    """The sorted ``id`` column of a frame of any engine."""
    if engine.name == "spark":
        return sorted(row["id"] for row in frame.collect())
    return sorted(int(v) for v in engine.native(frame)["id"].to_list())


def refuse() -> None:
    """A before_commit that fails, as the runner's would if its checkpoint record could not be written."""
    raise Boom("checkpoint failed")


def digest(snap: dict[str, bytes]) -> list[str]:
    """What the files hold, whatever they are called (part names are random): one sha256 per file."""
    return sorted(hashlib.sha256(v).hexdigest() for v in snap.values())


def write(engine_name: str, frame: pd.DataFrame, io: IOConfig, base: Path, **kw) -> None:
    engine = get_engine(engine_name)
    engine.write(engine.from_pandas(frame), io, base, **kw)


def out(fmt: str = "parquet", mode: str = "overwrite", path: str = "data/o", name: str = "o") -> IOConfig:
    return IOConfig(name, format=fmt, path=path, mode=mode)


# --- overwrite and append ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FILES)
@pytest.mark.parametrize("engine_name", LOCAL)
def test_overwrite_replaces_the_whole_folder(tmp_path, engine_name, fmt):
    write(engine_name, OLD, out(fmt), tmp_path)
    write(engine_name, OLD, out(fmt, "append"), tmp_path)
    folder = tmp_path / "data/o"
    assert len(list(folder.iterdir())) == 2
    write(engine_name, NEW, out(fmt), tmp_path)
    (part,) = folder.iterdir()
    assert part.name.startswith("part-") and part.name.endswith(f".{fmt}")
    engine = get_engine(engine_name)
    assert ids(engine, engine.read(out(fmt), tmp_path)) == [10, 20]
    assert leftovers(folder) == []
    assert sorted(p.name for p in folder.parent.iterdir()) == [".o.ubunye.lock", "o"]


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_file_at_the_location_is_refused_and_left_as_it_was(tmp_path, engine_name):
    (tmp_path / "data").mkdir()
    (tmp_path / "data/o").write_text("a file where the output goes")
    with pytest.raises(EngineError) as err:
        write(engine_name, NEW, out(), tmp_path)
    assert str(err.value) == (
        f"output 'o': {tmp_path}/data/o is a file, not an output folder; move it away or choose another path"
    )
    assert (tmp_path / "data/o").read_bytes() == b"a file where the output goes"
    assert leftovers(tmp_path / "data/o") == []


def test_append_to_a_file_is_refused_and_leaves_it(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data/o").write_text("not a folder")
    with pytest.raises(EngineError) as err:
        write("pandas", NEW, out(mode="append"), tmp_path)
    assert str(err.value) == f"output 'o': {tmp_path}/data/o is a file; append needs a folder of part files"
    assert (tmp_path / "data/o").read_text() == "not a folder"


@pytest.mark.parametrize("engine_name", LOCAL)
def test_append_adds_one_whole_part_and_creates_a_missing_folder_whole(tmp_path, engine_name):
    write(engine_name, OLD, out(mode="append"), tmp_path)  # no folder yet: created through the swap
    before = snapshot(tmp_path / "data/o")
    write(engine_name, NEW, out(mode="append"), tmp_path)
    after = snapshot(tmp_path / "data/o")
    assert {k: after[k] for k in before} == before  # the existing part is untouched
    assert len(after) == 2
    engine = get_engine(engine_name)
    assert ids(engine, engine.read(out(), tmp_path)) == [1, 2, 3, 10, 20]
    assert [n for n in os.listdir(tmp_path / "data/o") if n.startswith(".")] == []


# --- a write failing part way --------------------------------------------------------------------------------------

CSV_REFUSES = {  # refused before writing (transaction.refuse_columns), on both engines alike
    "pandas": "csv cannot hold column 'id' of type list (use parquet or delta)",
    "polars": "csv cannot hold column 'id' of type list (use parquet or delta)",
}


@pytest.mark.parametrize("mode", ["overwrite", "append"])
@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_column_the_csv_writer_refuses_leaves_the_old_output(tmp_path, engine_name, mode):
    write(engine_name, OLD, out("csv"), tmp_path)
    folder = tmp_path / "data/o"
    before = snapshot(folder)
    with pytest.raises(EngineError) as err:
        write(engine_name, pd.DataFrame({"id": [[1, 2], [3]]}), out("csv", mode), tmp_path)
    assert str(err.value) == f"output 'o': {CSV_REFUSES[engine_name]}"
    assert snapshot(folder) == before
    assert leftovers(folder) == []
    assert [n for n in os.listdir(folder) if n.startswith(".")] == []  # no hidden temp part either


@pytest.mark.parametrize("mode", ["overwrite", "append"])
@pytest.mark.parametrize("engine_name", LOCAL)
def test_before_commit_raising_discards_the_new_data(tmp_path, engine_name, mode):
    write(engine_name, OLD, out(), tmp_path)
    folder = tmp_path / "data/o"
    before, seen = snapshot(folder), {}
    boom = Boom("the checkpoint record could not be written")

    def before_commit():
        # The new data is complete and staged (hidden), what a reader sees still the old output.
        seen["output"] = visible(snapshot(folder))
        staged = list(folder.parent.glob(".o.ubunye-staging-*")) + list(folder.glob(".part-*.ubunye.tmp"))
        seen["staged"] = [p.name for p in staged]
        raise boom

    with pytest.raises(Boom) as err:
        write(engine_name, NEW, out(mode=mode), tmp_path, before_commit=before_commit)
    assert err.value is boom  # unchanged: the runner sees its own error
    assert seen["output"] == before and len(seen["staged"]) == 1
    assert snapshot(folder) == before
    assert leftovers(folder) == [] and not list(folder.glob(".*"))


@pytest.mark.parametrize("engine_name", LOCAL)
def test_before_commit_runs_once_with_the_complete_data_staged(tmp_path, engine_name):
    write(engine_name, OLD, out(), tmp_path)
    engine, calls = get_engine(engine_name), []

    def before_commit():
        (staging,) = (tmp_path / "data").glob(".o.ubunye-staging-*")
        staged = engine.read(IOConfig("staged", format="parquet", path=str(staging)), tmp_path)
        calls.append((ids(engine, staged), ids(engine, engine.read(out(), tmp_path))))

    engine.write(engine.from_pandas(NEW), out(), tmp_path, before_commit=before_commit)
    assert calls == [([10, 20], [1, 2, 3])]
    assert ids(engine, engine.read(out(), tmp_path)) == [10, 20]


# --- killed runs: leftovers, the fallback swap and its recovery ----------------------------------------------------


def test_leftovers_of_killed_runs_are_never_read_and_are_cleaned_by_the_next_writer(tmp_path):
    write("pandas", OLD, out(), tmp_path)
    folder, engine = tmp_path / "data/o", get_engine("pandas")
    for kind in ("staging", "old", "trash"):  # as killed writers leave them, each holding a full output
        (tmp_path / f"data/.o.ubunye-{kind}-1").mkdir()
        for part in folder.iterdir():
            (tmp_path / f"data/.o.ubunye-{kind}-1" / part.name).write_bytes(part.read_bytes())
    (folder / f".part-{'a' * 32}.parquet.ubunye.tmp").write_bytes(next(folder.iterdir()).read_bytes())
    assert ids(engine, engine.read(out(), tmp_path)) == [1, 2, 3]
    write("pandas", NEW, out(mode="append"), tmp_path)
    assert ids(engine, engine.read(out(), tmp_path)) == [1, 2, 3, 10, 20]
    assert leftovers(folder) == [] and not list(folder.glob(".*"))


def test_the_fallback_swap_without_renameat2(tmp_path, monkeypatch):
    monkeypatch.setattr(swap, "_renameat2", None)  # as on a system without renameat2: two renames
    write("pandas", OLD, out(), tmp_path)
    write("pandas", NEW, out(), tmp_path)
    engine = get_engine("pandas")
    assert ids(engine, engine.read(out(), tmp_path)) == [10, 20]
    assert leftovers(tmp_path / "data/o") == []


def _cut_short(tmp_path: Path) -> dict[str, bytes]:
    """The state a kill between the fallback's two renames leaves: no output, the old one set aside."""
    write("pandas", OLD, out(), tmp_path)
    before = snapshot(tmp_path / "data/o")
    os.rename(tmp_path / "data/o", tmp_path / "data/.o.ubunye-old-00000000000000000001-1-ab")
    return before


def test_a_reader_restores_a_swap_cut_short(tmp_path):
    before = _cut_short(tmp_path)
    engine = get_engine("pandas")
    assert ids(engine, engine.read(IOConfig("o", format="parquet", path="data/o"), tmp_path)) == [1, 2, 3]
    assert snapshot(tmp_path / "data/o") == before and leftovers(tmp_path / "data/o") == []


@needs_polars
def test_a_writer_restores_a_swap_cut_short_before_appending(tmp_path):
    before = _cut_short(tmp_path)
    write("polars", NEW, out(mode="append"), tmp_path)
    after = snapshot(tmp_path / "data/o")
    assert {k: after[k] for k in before} == before and len(after) == 2


KILL_CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import numpy as np, pandas as pd
    from ubunye.config.model import IOConfig
    from ubunye.engines import get_engine, output_lock, swap

    base, rows, fallback = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
    if fallback:
        swap._renameat2 = None
    engine = get_engine("pandas")
    frame = pd.DataFrame({"id": np.arange(rows), "tag": ["new"] * rows})
    io = IOConfig("o", format="csv", path="data/o")
    print("ready", flush=True)
    with output_lock(str(base / "data/o")):
        engine.write(frame, io, base)
    print("done", flush=True)
    """
)


def _spawn(base: Path, rows: int, fallback: bool) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", KILL_CHILD, str(base), str(rows), "1" if fallback else "0"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


@pytest.mark.parametrize("fallback", [False, True], ids=["renameat2", "two-renames"])
def test_sigkill_at_random_points_leaves_the_old_or_the_new_output_whole(tmp_path, fallback):
    rows, engine = 1_500_000, get_engine("pandas")
    io = out("csv")
    folder = tmp_path / "data/o"
    proc = _spawn(tmp_path, rows, fallback)  # one uncut run: how long a write takes here
    start = time.monotonic()
    assert proc.stdout is not None and proc.stdout.readline() == "done\n"
    took = time.monotonic() - start
    assert proc.wait(timeout=120) == 0
    new = digest(snapshot(folder))
    rng, outcomes, mid_write = random.Random(), [], 0
    for i in range(8):
        write("pandas", OLD.assign(id=OLD["id"] + i), io, tmp_path)
        old = snapshot(folder)
        proc = _spawn(tmp_path, rows, fallback)
        if i % 2:  # from the moment the staging folder appears: mid-write for certain
            while not list(folder.parent.glob(".o.ubunye-staging-*")) and proc.poll() is None:
                time.sleep(0.002)
        time.sleep(rng.uniform(0, took * (1.0 if i % 2 else 1.5)))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        mid_write += bool(list(folder.parent.glob(".o.ubunye-staging-*")))
        engine.read(io, tmp_path)  # a reader: restores a cut-short fallback swap, if that is where it died
        now = snapshot(folder)
        assert now == old or digest(now) == new, f"kill {i}: a mix or nothing ({len(now)} files)"
        outcomes.append("old" if now == old else "new")
    assert mid_write >= 1, outcomes  # the kills did land inside writes
    write("pandas", NEW, io, tmp_path)  # the next writer tidies what the killed ones left
    assert leftovers(folder) == []


CONCURRENT_CHILD = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    import numpy as np, pandas as pd
    from ubunye.config.model import IOConfig
    from ubunye.engines import get_engine, location, output_lock

    base, writer, rows = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    engine = get_engine("pandas")
    io = IOConfig("o", format="parquet", path="data/o")
    frame = pd.DataFrame({"id": np.arange(rows), "writer": [writer] * rows})
    with output_lock(location(io, base)):  # as the runner holds it: from before the write to the final record
        start = time.time()
        engine.write(frame, io, base)
        end = time.time()
    print(json.dumps({"writer": writer, "start": start, "end": end}))
    """
)


def test_eight_concurrent_overwrites_leave_exactly_one_writers_rows(tmp_path):
    rows = 300_000
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT_CHILD, str(tmp_path), str(w), str(rows)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for w in range(8)
    ]
    held = []
    for proc in procs:
        stdout, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0
        held.append(json.loads(stdout))
    back = get_engine("pandas").read(out(), tmp_path)
    assert len(back) == rows
    writers = set(back["writer"].tolist())
    assert len(writers) == 1
    assert writers == {max(held, key=lambda h: h["end"])["writer"]}  # the last to commit
    held.sort(key=lambda h: h["start"])
    assert all(a["end"] <= b["start"] for a, b in itertools.pairwise(held))  # one at a time
    assert len(list((tmp_path / "data/o").iterdir())) == 1 and leftovers(tmp_path / "data/o") == []


# --- a full filesystem -------------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A real 2 MiB tmpfs (root may mount one); skipped, saying why, where mounting is not permitted."""
    mount = tmp_path / "small"
    mount.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True
        )
    except FileNotFoundError:
        pytest.skip("cannot mount a 2 MiB tmpfs: no mount command")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a 2 MiB tmpfs: mount exited {done.returncode}: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_full_disk_leaves_the_old_output_and_frees_its_staging(small_disk, engine_name):
    write(engine_name, OLD, out(), small_disk)
    folder = small_disk / "data/o"
    before = snapshot(folder)
    rng = random.Random(9)
    big = pd.DataFrame({"id": range(40_000), "tag": [rng.randbytes(60).hex() for _ in range(40_000)]})  # ~5 MB
    with pytest.raises(EngineError) as err:
        write(engine_name, big, out(), small_disk)
    message = str(err.value)
    assert message.startswith(f"output 'o': cannot write parquet to {folder}: "), message
    assert "no space left on device" in message.lower() or "errno 28" in message.lower(), message
    assert snapshot(folder) == before and leftovers(folder) == []
    write(engine_name, NEW, out(), small_disk)  # the space the staging took is free again
    engine = get_engine(engine_name)
    assert ids(engine, engine.read(out(), small_disk)) == [10, 20]


# --- Delta: its own transaction ----------------------------------------------------------------------------------


def _delta_state(path: Path) -> tuple[int, list[int], dict[str, bytes]]:
    from deltalake import DeltaTable

    table = DeltaTable(str(path))
    return table.version(), sorted(table.to_pyarrow_table().column("id").to_pylist()), snapshot(path)


def _unchanged(before: dict[str, bytes], after: dict[str, bytes]) -> bool:
    return {k: after.get(k) for k in before} == before


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_delta_schema_mismatch_keeps_the_previous_version(tmp_path, engine_name):
    io = out("delta")
    write(engine_name, OLD, io, tmp_path)
    write(engine_name, OLD, out("delta", "append"), tmp_path)
    version, rows, files = _delta_state(tmp_path / "data/o")
    with pytest.raises(EngineError) as err:
        write(engine_name, pd.DataFrame({"id": [7], "other": ["x"]}), io, tmp_path)
    # refused before deltalake is called (deltalake would refuse it too: SchemaMismatchError)
    assert str(err.value) == (
        f"output 'o': column 'other' of the frame is not in the Delta table at {tmp_path}/data/o (its columns: "
        "id, tag); Delta keeps a table's columns, on overwrite too: nothing was written"
    )
    after = _delta_state(tmp_path / "data/o")
    assert (after[0], after[1]) == (version, rows) == (1, [1, 1, 2, 2, 3, 3])
    assert after[2] == files


@pytest.mark.parametrize("mode", ["overwrite", "append"])
@pytest.mark.parametrize("engine_name", LOCAL)
def test_delta_before_commit_raising_commits_nothing(tmp_path, engine_name, mode):
    write(engine_name, OLD, out("delta"), tmp_path)
    version, rows, files = _delta_state(tmp_path / "data/o")
    calls = []

    def before_commit():
        calls.append(_delta_state(tmp_path / "data/o")[:2])  # still the previous version, all rows handed over
        raise Boom("checkpoint failed")

    with pytest.raises(Boom, match="checkpoint failed"):
        write(engine_name, NEW, out("delta", mode), tmp_path, before_commit=before_commit)
    assert calls == [(0, [1, 2, 3])]
    after = _delta_state(tmp_path / "data/o")
    assert (after[0], after[1]) == (version, rows) and _unchanged(files, after[2])
    write(engine_name, NEW, out("delta", mode), tmp_path)  # and the table takes the next write
    assert _delta_state(tmp_path / "data/o")[0] == 1


# --- URLs --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("engine_name", LOCAL)
def test_overwriting_files_at_an_object_store_url_is_refused(tmp_path, engine_name):
    with pytest.raises(EngineError) as err:
        write(engine_name, NEW, out(path="s3://bucket/data/o"), tmp_path)
    assert str(err.value) == (
        "output 'o': cannot overwrite parquet at s3://bucket/data/o safely: that storage has no atomic rename, so a "
        "reader could see old and new files mixed, or none. Write format: delta there (its log commits each "
        "version atomically), or a local path"
    )
    with pytest.raises(EngineError) as err:
        write(engine_name, NEW, out(mode="append", path="s3://bucket/data/o"), tmp_path)
    assert str(err.value) == (
        f"output 'o': the {engine_name} engine writes parquet to local paths only (a path or file://), not "
        "s3://bucket/data/o: write format: delta there, or use the spark engine"
    )


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_file_url_output_is_staged_and_locked_like_a_path(tmp_path, engine_name):
    url = f"file://{tmp_path}/data/o"
    write(engine_name, OLD, out(path=url), tmp_path)
    before = snapshot(tmp_path / "data/o")
    with pytest.raises(Boom):
        write(engine_name, NEW, out(path=url), tmp_path, before_commit=refuse)
    assert snapshot(tmp_path / "data/o") == before
    write(engine_name, NEW, out(path=url), tmp_path)
    engine = get_engine(engine_name)
    assert ids(engine, engine.read(out(path=url), tmp_path)) == [10, 20]
    assert (tmp_path / "data/.o.ubunye.lock").exists() and leftovers(tmp_path / "data/o") == []


# --- output_lock -------------------------------------------------------------------------------------------------

HOLD = textwrap.dedent(
    """
    import sys, time
    from ubunye.engines import output_lock

    with output_lock(sys.argv[1]):
        print("held", flush=True)
        time.sleep(60)
    """
)


def test_a_lock_held_by_another_process_times_out_naming_the_location(tmp_path, monkeypatch):
    where = str(tmp_path / "new/dirs/o")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, where], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        start = time.monotonic()
        with pytest.raises(EngineError) as err, output_lock(where, timeout=0.3):
            pass
        assert 0.3 <= time.monotonic() - start < 5
        assert str(err.value) == (
            f"output {where}: another run holds its lock {tmp_path}/new/dirs/.o.ubunye.lock "
            f"(pid {holder.pid} on {socket.gethostname()}); waited 0.3s (UBUNYE_LOCK_TIMEOUT sets how long)"
        )
        monkeypatch.setenv("UBUNYE_LOCK_TIMEOUT", "0.2")
        with pytest.raises(EngineError) as err:
            write("pandas", NEW, out(path=where), tmp_path)  # the engine takes the lock itself too
        assert str(err.value).startswith(f"output {where}: another run holds its lock"), str(err.value)
        assert "waited 0.2s" in str(err.value)
    finally:
        holder.kill()
        holder.wait()
    assert not (tmp_path / "new/dirs/o").exists()


def test_the_lock_is_reentrant_in_a_thread_and_exclusive_across_threads(tmp_path):
    where, events = str(tmp_path / "o"), []

    def other():
        with output_lock(where, timeout=30):
            events.append("other")

    with output_lock(where), output_lock(where):
        thread = threading.Thread(target=other)
        thread.start()
        time.sleep(0.3)
        events.append("nested")
    thread.join(timeout=30)
    assert events == ["nested", "other"]


def test_the_lock_timeout_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("UBUNYE_LOCK_TIMEOUT", "12.5")
    assert lock_timeout() == 12.5 and lock_timeout(3) == 3.0
    monkeypatch.setenv("UBUNYE_LOCK_TIMEOUT", "soon")
    with pytest.raises(EngineError) as err, output_lock(str(tmp_path / "o")):
        pass
    assert str(err.value) == "UBUNYE_LOCK_TIMEOUT='soon': expected a number of seconds >= 0"
    with output_lock("table:db.t"), output_lock("s3://bucket/o"):  # nothing local to lock: no-ops
        assert list(tmp_path.iterdir()) == []


# --- Spark -------------------------------------------------------------------------------------------------------


def test_spark_overwrite_and_append_are_staged_and_swapped(spark, tmp_path):
    engine = SparkEngine(spark=spark)
    write("pandas", OLD, out(), tmp_path)
    folder = tmp_path / "data/o"
    seen = []

    def before_commit():
        (staging,) = folder.parent.glob(".o.ubunye-staging-*")
        seen.append((sorted(p.name for p in staging.iterdir() if p.name.endswith(".parquet")) != [], snapshot(folder)))

    old = snapshot(folder)
    engine.write(engine.from_pandas(NEW), out(), tmp_path, before_commit=before_commit)
    assert seen == [(True, old)]
    assert ids(engine, engine.read(out(), tmp_path)) == [10, 20]
    assert "_SUCCESS" in os.listdir(folder) and leftovers(folder) == []
    kept = snapshot(folder)
    engine.write(engine.from_pandas(OLD), out(mode="append", path=f"file://{folder}"), tmp_path)
    after = snapshot(folder)
    assert _unchanged({k: v for k, v in kept.items() if not k.startswith(("_", "."))}, after)
    assert ids(engine, engine.read(out(), tmp_path)) == [1, 2, 3, 10, 20]
    assert leftovers(folder) == []
    # partitionOverwriteMode=dynamic replaces only the partitions written: the others are kept, linked in.
    by_tag = IOConfig("p", format="parquet", path="data/p", partition_by=["tag"])
    engine.write(engine.from_pandas(pd.concat([OLD, NEW])), by_tag, tmp_path)
    kept = snapshot(tmp_path / "data/p/tag=old")
    dynamic = IOConfig(
        "p", format="parquet", path="data/p", partition_by=["tag"], options={"partitionOverwriteMode": "dynamic"}
    )
    engine.write(engine.from_pandas(pd.DataFrame({"id": [30], "tag": ["new"]})), dynamic, tmp_path)
    assert snapshot(tmp_path / "data/p/tag=old") == kept
    assert ids(engine, engine.read(IOConfig("p", format="parquet", path="data/p"), tmp_path)) == [1, 2, 3, 30]
    assert leftovers(tmp_path / "data/p") == []


def test_a_failing_spark_write_leaves_the_old_folder(spark, tmp_path):
    from pyspark.sql import functions as F

    engine = SparkEngine(spark=spark)
    write("pandas", OLD, out(), tmp_path)
    folder = tmp_path / "data/o"
    before = snapshot(folder)

    @F.udf("long")
    def fail_on_last(i):
        if i == 999:
            raise ValueError("row 999 cannot be written")
        return i

    frame = spark.range(1000, numPartitions=2).select(fail_on_last("id").alias("id"))  # the first part succeeds
    with pytest.raises(EngineError) as err:
        engine.write(frame, out(), tmp_path)
    assert str(err.value).startswith(f"output 'o': cannot write parquet at {folder}: "), str(err.value)
    # the exception the UDF raised, not Spark's header ("An exception was thrown from the Python worker. Please see
    # the stack trace below.", with nothing below: the run's error and its record said no more)
    assert "ValueError: row 999 cannot be written" in str(err.value).splitlines()[0], str(err.value)
    assert snapshot(folder) == before and leftovers(folder) == []
    with pytest.raises(Boom):
        engine.write(engine.from_pandas(NEW), out(), tmp_path, before_commit=refuse)
    assert snapshot(folder) == before and leftovers(folder) == []
    with pytest.raises(EngineError, match=r"^output 'o': cannot overwrite parquet at s3://b/o safely"):
        engine.write(engine.from_pandas(NEW), out(path="s3://b/o"), tmp_path)
    # Delta on Spark: a schema mismatch in overwrite (no overwriteSchema) keeps the previous version current (it is
    # refused before Delta's own write, which kept the table's schema: the frame's missing column stayed as nulls).
    delta = out("delta", path="data/d")
    engine.write(engine.from_pandas(OLD), delta, tmp_path)
    version, rows, files = _delta_state(tmp_path / "data/d")
    with pytest.raises(EngineError, match=r"^output 'o': cannot write to the Delta table at .*: its column 'tag' is"):
        engine.write(engine.from_pandas(pd.DataFrame({"id": [7], "other": ["x"]})), delta, tmp_path)
    after = _delta_state(tmp_path / "data/d")
    assert (after[0], after[1]) == (version, rows) == (0, [1, 2, 3]) and _unchanged(files, after[2])


def test_a_symlinked_output_is_written_through_and_the_link_kept(tmp_path):
    (tmp_path / "real").mkdir()
    write("pandas", OLD, out(path=str(tmp_path / "real/o")), tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data/o").symlink_to(tmp_path / "real/o")
    write("pandas", NEW, out(), tmp_path)
    assert (tmp_path / "data/o").is_symlink() and os.readlink(tmp_path / "data/o") == str(tmp_path / "real/o")
    engine = get_engine("pandas")
    assert ids(engine, engine.read(IOConfig("r", format="parquet", path="real/o"), tmp_path)) == [10, 20]
    assert leftovers(tmp_path / "real/o") == []
