"""Batches whose text would not fit Arrow's 2 GiB string arrays are cut into pieces (ubunye.hashing.pieces).

The bound is checked against the lines tests/vectors/derive.py wrote independently (every type, nesting and
escape of the vectors); cutting every batch down to single rows changes no hash and no profile; and a real batch
of more than 2 GiB of lines, which Arrow refused before, hashes to the sums of its rows hashed in small tables.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pytest

from tests.conftest import VECTORS
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing import pieces as pieces_module
from ubunye.hashing.digest import finish
from ubunye.hashing.encode import encode_batch
from ubunye.hashing.pieces import pieces, text_bound
from ubunye.hashing.profile import profile_frame
from ubunye.hashing.types import schema_string


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_the_bound_is_at_least_the_derived_lines(vector):
    table = vector.arrow().combine_chunks()
    lines = vector.expected["lines"]
    written = sum(len(line.encode("utf-8")) for line in lines)
    bound = sum(
        text_bound(c.combine_chunks(), len(n.encode())) for c, n in zip(table.columns, table.column_names, strict=True)
    )
    assert bound >= written
    for i in range(table.num_rows):  # row by row too: a slice is bounded by its own values, not its buffers'
        row = table.slice(i, 1)
        row_bound = sum(
            text_bound(c.combine_chunks(), len(n.encode())) for c, n in zip(row.columns, row.column_names, strict=True)
        )
        assert row_bound >= len(lines[i].encode("utf-8")), (vector.name, i)


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_single_row_pieces_change_no_hash_and_no_profile(vector, monkeypatch):
    table = vector.arrow()
    whole, profile = hash_frame(table), profile_frame(table, buckets=8)
    batch = table.combine_chunks().to_batches()
    if batch:
        cut = list(pieces(batch[0], budget=1))
        assert [p.num_rows for p in cut] == [1] * table.num_rows
        assert [line for p in cut for line in encode_batch(p).to_pylist()] == vector.expected["lines"]
    monkeypatch.setattr(pieces_module, "TEXT_BUDGET", 1)
    assert hash_frame(table) == whole
    assert profile_frame(table, buckets=8) == profile


def test_a_batch_of_more_than_2_gib_of_lines_is_hashed_in_pieces():
    rows, width = 45_000, 48_000  # 2.16e9 bytes of lines in one 65,536-row batch: over int32 offsets
    # Built from buffers: a list of 45,000 Python strings of 48 KB takes half a minute to convert.
    raw = b"abcdefghijklmnopqrstuvwxyz" * (rows * width // 26 + 1)
    text = np.frombuffer(raw, np.uint8)[: rows * width]
    offsets = np.arange(rows + 1, dtype=np.int64) * width
    doc = pa.LargeStringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(text))
    table = pa.table({"doc": doc, "i": pa.array(np.arange(rows), pa.int64())})
    got = hash_frame(table)
    # The spec by hand (sections 2, 4 and 8): each row's line, its SHA-256, the first two big-endian words added.
    s1 = s2 = 0
    for i in range(rows):
        line = b'{"doc":"' + raw[i * width : (i + 1) * width] + b'","i":' + str(i).encode() + b"}"
        digest = hashlib.sha256(line).digest()
        s1, s2 = s1 + int.from_bytes(digest[:8], "big"), s2 + int.from_bytes(digest[8:16], "big")
    assert got == finish(schema_string(table.schema), rows, s1 % 2**64, s2 % 2**64, engine="arrow")


def _written(table: pa.Table) -> int:
    return sum(len(line.encode("utf-8")) for line in canonical_lines(table))


def _bound(table: pa.Table) -> int:
    return sum(
        text_bound(c.combine_chunks(), len(n.encode())) for c, n in zip(table.columns, table.column_names, strict=True)
    )


@pytest.mark.parametrize("view", ["string_view", "binary_view"])
def test_views_sharing_their_bytes_are_bounded_by_their_lengths(view):
    if not hasattr(pa, view):
        pytest.skip(f"pyarrow {pa.__version__} has no {view} (views came in pyarrow 16)")
    data = b"\x01" * 30_000  # control characters: six bytes of text each
    views = np.zeros((50, 4), np.int32)  # 50 views of the very same bytes: the buffers hold them once
    views[:, 0], views[:, 1] = len(data), int.from_bytes(data[:4], "little")  # length, prefix; buffer 0, offset 0
    shared = pa.Array.from_buffers(getattr(pa, view)(), 50, [None, pa.py_buffer(views.tobytes()), pa.py_buffer(data)])
    shared.validate(full=True)
    table = pa.table({"v": shared})
    assert int(shared.nbytes) < 30_000 * 2 < _written(table) <= _bound(table)


def test_map_keys_escaped_again_at_every_level_are_bounded():
    value = pa.array(['"\\\x01'] * 20)  # a quote, a backslash, a control character: each level escapes them again
    for _ in range(5):
        keys = value
        value = pa.MapArray.from_arrays(pa.array(range(len(keys) + 1), pa.int32()), keys, pa.array(range(len(keys))))
        table = pa.table({"m": value})
        assert _written(table) <= _bound(table)


def test_polars_views_of_one_string_over_2_gib_hash_as_the_same_large_strings():
    pl = pytest.importorskip("polars", reason="the polars engine is an extra; this venv has no polars")
    big = "abcdefgh" * 5_000  # 40 KB
    frame = pl.DataFrame({"c": [big]}).select(pl.col("c").gather([0] * 60_000))  # 60,000 views of one value
    offsets = np.arange(60_001, dtype=np.int64) * len(big)  # the same rows, each its own bytes
    rows = pa.LargeStringArray.from_buffers(60_000, pa.py_buffer(offsets), pa.py_buffer(big.encode() * 60_000))
    table = pa.table({"c": rows})
    assert hash_frame(frame) == hash_frame(table)
