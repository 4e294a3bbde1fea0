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
from ubunye.exceptions import HashError
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing import pieces as pieces_module
from ubunye.hashing import text as text_module
from ubunye.hashing.digest import finish
from ubunye.hashing.encode import encode_batch
from ubunye.hashing.pieces import pieces, text_bound
from ubunye.hashing.profile import profile_frame
from ubunye.hashing.text import escaped
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


def _hashed_by_hand(table: pa.Table, lines: list[bytes]) -> object:
    """The spec by hand (section 8): each line's SHA-256, the first two big-endian words added."""
    s1 = s2 = 0
    for line in lines:
        digest = hashlib.sha256(line).digest()
        s1, s2 = s1 + int.from_bytes(digest[:8], "big"), s2 + int.from_bytes(digest[8:16], "big")
    return finish(schema_string(table.schema), len(lines), s1 % 2**64, s2 % 2**64, engine="arrow")


def test_a_value_whose_escaped_text_would_pass_2_gib_is_refused_not_a_crash():
    # Arrow's replace_substring does not check its 32-bit offsets: this crashed the process (exit 139).
    n = 360_000_000  # U+0001 is six bytes escaped (\u0001): 2.16e9 bytes of text from 360 MB
    data = pa.py_buffer(np.full(n, 1, np.uint8))
    one = pa.StringArray.from_buffers(1, pa.py_buffer(np.array([0, n], np.int32)), data)
    with pytest.raises(HashError, match=r"column 'c' of type string: a value's line .*would pass 2 GiB"):
        hash_frame(pa.table({"c": one}))
    # Two values of one row's list, each of whose text fits, but not the row's line.
    halves = pa.StringArray.from_buffers(2, pa.py_buffer(np.array([0, n // 2, n], np.int32)), data)
    in_a_list = pa.ListArray.from_arrays(pa.array([0, 2], pa.int32()), halves)
    with pytest.raises(HashError, match=r"column 'l' of type list<item: string>: a row's line would pass 2 GiB"):
        hash_frame(pa.table({"l": in_a_list}))
    del data, one, halves, in_a_list
    # Escaping could pass 2 GiB here (a sixth of it spanned), but does not: the value hashes as it always did.
    raw = np.full(n, ord("a"), np.uint8)
    raw[::40_000_000], raw[1::40_000_000], raw[2::40_000_000], raw[3::40_000_000] = 1, ord('"'), ord("\\"), 10
    value = pa.StringArray.from_buffers(1, pa.py_buffer(np.array([0, n], np.int32)), pa.py_buffer(raw))
    table = pa.table({"c": value})
    got = hash_frame(table)
    text = raw.tobytes().replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\x01", b"\\u0001")
    del raw, value
    assert got == _hashed_by_hand(table, [b'{"c":"' + text.replace(b"\n", b"\\n") + b'"}'])


def test_a_row_whose_line_would_pass_2_gib_is_refused_naming_a_column():
    # Each value fits a string array, the row's line does not: Arrow's bare ArrowCapacityError named no column.
    n = 1_100_000_000
    data = pa.py_buffer(np.full(n, ord("a"), np.uint8))
    big = pa.LargeStringArray.from_buffers(1, pa.py_buffer(np.array([0, n], np.int64)), data)
    with pytest.raises(HashError, match=r"column 'a' of type large_string: a row's line .*would pass 2 GiB"):
        hash_frame(pa.table({"a": big, "b": big}))
    del data, big


def test_the_escaped_length_check_is_exact(monkeypatch):
    # Garbage under a null slot is no text: only the values' bytes count.
    values = ['a"b\\c\t\x01' * 3, None, "", "\u00e9\x1f\x08" * 5, "plain"]
    raw = b"".join(v.encode() if v is not None else b"\x01" * 50 for v in values)
    offsets = np.cumsum([0] + [len(v.encode()) if v is not None else 50 for v in values], dtype=np.int32)
    arr = pa.StringArray.from_buffers(
        len(values), pa.py_buffer(offsets), pa.py_buffer(raw), pa.array([v is not None for v in values]).buffers()[1]
    )
    real = escaped(arr)
    sizes = [len(v.encode()) for v in real.to_pylist() if v is not None]
    total, longest = sum(sizes), max(sizes)
    for limit in (total, total - 1, longest + 2, longest + 1):
        monkeypatch.setattr(text_module, "STRING_LIMIT", limit)
        if total <= limit:
            assert escaped(arr, "c").equals(real)
        elif longest + 2 > limit:
            with pytest.raises(HashError, match="column 'c': a value's line"):
                escaped(arr, "c")
        else:
            with pytest.raises(pa.ArrowCapacityError, match="'c' in this batch"):
                escaped(arr, "c")
        one = arr.slice(0, 1)
        if sizes[0] + 2 > limit:
            with pytest.raises(HashError, match=f"alone {sizes[0] + 2:,} bytes"):
                escaped(one, "c")
        else:
            assert escaped(one, "c").equals(real.slice(0, 1))


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
    held = sum(b.size for b in shared.buffers() if b is not None)  # pyarrow 19's nbytes refuses view types
    assert held < 30_000 * 2 < _written(table) <= _bound(table)


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
