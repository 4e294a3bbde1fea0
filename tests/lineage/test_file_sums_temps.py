"""The cache of per-file sums writes each document (and profile part) through a temporary file ``.<hex>.tmp`` in its
folder, renamed into place. A save killed between the two (SIGKILL, out of memory) left that file for ever: never
read, but one per killed save, piling up beside the documents. A later save into the folder now removes those a day
old or more, and nothing else (as a record's final write does for killed record writes). And a document damaged or
cut short is never trusted: the hash is the full one."""

from __future__ import annotations

import gzip
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from ubunye.hashing import hash_frame
from ubunye.hashing.delta_files import FileProfiles
from ubunye.hashing.delta_hash import hash_delta
from ubunye.hashing.profile import profile_frame, profile_sums
from ubunye.lineage.file_sums import FileSumsCache
from ubunye.lineage.store import create_temp

DAY = 24 * 60 * 60

#: A child hashing a Delta table with the cache, SIGKILLed at its first rename: after the cache's temporary file is
#: written, before it is renamed into place.
_KILLED_AT_RENAME = """
import os, signal, sys
os.replace = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
from ubunye.hashing.delta_hash import hash_delta
from ubunye.lineage.file_sums import FileSumsCache
table, records, profile = sys.argv[1], sys.argv[2], sys.argv[3] == "profile"
hash_delta(table, cache=FileSumsCache(records), profile=profile, key=["id"], buckets=4)
"""


def _append(path: Path, i: int) -> None:
    write_deltalake(str(path), pa.table({"id": np.arange(i * 3, i * 3 + 3), "s": [f"v{i}"] * 3}), mode="append")


def _age(path: Path, seconds: float) -> None:
    at = time.time() - seconds
    os.utime(path, (at, at), follow_symlinks=False)


def _temps(root: Path) -> list[Path]:
    return sorted(root.rglob(".*.tmp"))


def _full(path: Path) -> str:
    return hash_frame(DeltaTable(str(path)).to_pyarrow_table())


def test_a_save_killed_before_its_rename_leaves_a_temp_a_later_save_removes_a_day_on(tmp_path: Path) -> None:
    path, records = tmp_path / "t", tmp_path / "records"
    _append(path, 0)
    for kind in ("sums", "profile"):
        child = subprocess.run([sys.executable, "-c", _KILLED_AT_RENAME, str(path), str(records), kind], check=False)
        assert child.returncode == -9
    killed = _temps(records)
    assert len({p.parent for p in killed}) == 2, killed  # the sums' folder and the profiles' folder: one each
    cache = FileSumsCache(records)

    def save_both() -> None:
        assert hash_delta(str(path), cache=cache).hash == _full(path)
        profiled = hash_delta(str(path), cache=cache, profile=True, key=["id"], buckets=4)
        assert profiled.profile == profile_frame(DeltaTable(str(path)).to_pyarrow_table(), key=["id"], buckets=4)

    save_both()  # a minute old at most: it could be a save in progress, so it is left
    assert _temps(records) == killed
    for tmp in killed:
        _age(tmp, DAY + 60)
    kept = _others(killed[0].parent) + _others(killed[1].parent)
    _append(path, 1)
    save_both()
    assert [p for p in killed if os.path.lexists(p)] == []
    assert [p for p in kept if not os.path.lexists(p)] == []


def _others(folder: Path) -> list[Path]:
    """Files a save into ``folder`` must leave: another name, a fresh temporary file (a save in progress), a link and
    a folder of our temporary name, a month old (but the fresh one)."""
    fd, fresh = create_temp(folder, ".")
    os.close(fd)
    kept = [fresh]
    for name in (".notes.tmp", f".{'a' * 32}.tmp.bak", f".x.{'a' * 32}.tmp", f".{'A' * 32}.tmp", f"{'a' * 32}.tmp"):
        (folder / name).write_text("not ours")
        kept.append(folder / name)
    link = folder / f".{'b' * 32}.tmp"
    link.symlink_to(fresh.name)
    (folder / f".{'c' * 32}.tmp").mkdir()
    kept += [link, folder / f".{'c' * 32}.tmp"]
    for p in kept[1:]:
        _age(p, 30 * DAY)
    return kept


def _profiles(count: int) -> FileProfiles:
    files = {}
    for i in range(count):
        part = profile_sums(pa.table({"x": pa.array([float(i), i / 3, None])}), key=["x"], buckets=8)
        files[f"part-{i:04d}.parquet"] = ((100 + i, 7, None), part)
    first = next(iter(files.values()))[1]
    return FileProfiles("/data/sales", "table-id", "spark", first.schema, 1, ("x",), 8, files)


def test_a_killed_write_of_a_profile_part_is_removed_a_day_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ubunye.lineage.file_profiles as file_profiles

    monkeypatch.setattr(file_profiles, "PART_BYTES", 4_000)  # several parts: the layout past 64 MiB
    cache = FileSumsCache(tmp_path)
    cache.save_profiles(_profiles(40))
    parts = Path(cache.where_profiles("/data/sales", "spark", ("x",), 8)) / file_profiles.PARTS_DIR
    assert len(list(parts.iterdir())) >= 3
    fd, stale = create_temp(parts, ".")  # what a part's write killed before its rename leaves
    with os.fdopen(fd, "wb") as fh:
        fh.write(b"\x1f\x8b half a part")
    _age(stale, DAY + 60)
    cache.save_profiles(_profiles(41))
    assert not stale.exists()
    loaded = cache.load_profiles("/data/sales", "spark", ("x",), 8)
    assert loaded is not None and len(loaded.files) == 41


def _cut(keep: Callable[[int], int]) -> Callable[[bytes], bytes]:
    return lambda data: data[: keep(len(data))]


def _flip(at: Callable[[int], int]) -> Callable[[bytes], bytes]:
    return lambda data: data[: at(len(data))] + bytes([data[at(len(data))] ^ 0x01]) + data[at(len(data)) + 1 :]


def _other_sum(data: bytes) -> bytes:
    # a sum changed in a well-formed document, its checksum not remade: gzip and JSON are sound
    body = json.loads(gzip.decompress(data))
    body["files"][0][5] = f"{(int(body['files'][0][5], 16) + 1) % 2**64:016x}"
    return gzip.compress(json.dumps(body).encode())


@pytest.mark.parametrize(
    "damage",
    [
        _cut(lambda n: 0),
        _cut(lambda n: 10),  # the gzip header only
        _cut(lambda n: n // 2),
        _cut(lambda n: n - 8),  # no CRC nor length
        _cut(lambda n: n - 1),
        _flip(lambda n: n // 2),  # one bit in the deflate stream
        _flip(lambda n: n - 6),  # one bit of the CRC
        _other_sum,
    ],
    ids=["empty", "header-only", "half", "no-trailer", "last-byte-cut", "bit-in-stream", "bit-in-crc", "other-sum"],
)
def test_a_damaged_or_truncated_document_is_never_trusted(
    tmp_path: Path, damage: Callable[[bytes], bytes], caplog: pytest.LogCaptureFixture
) -> None:
    path, records = tmp_path / "t", tmp_path / "records"
    _append(path, 0)
    _append(path, 1)
    cache = FileSumsCache(records)
    assert hash_delta(str(path), cache=cache).hash == _full(path)
    [doc] = Path(cache.where(str(path.resolve()), "deltalake")).glob("*.json.gz")
    doc.write_bytes(damage(doc.read_bytes()))
    _append(path, 2)
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        got = hash_delta(str(path), cache=cache)
    assert got.hash == _full(path)
    assert (got.hash_mode, got.files_read) == ("full", 3), got  # none of the damaged document's sums was reused
    assert any("cached file sums ignored" in r.getMessage() for r in caplog.records), caplog.text
    again = hash_delta(str(path), cache=cache)  # the full hash kept sound sums again
    assert (again.hash, again.hash_mode, again.files_read) == (got.hash, "incremental", 0)
