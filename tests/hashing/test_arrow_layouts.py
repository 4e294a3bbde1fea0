"""The twin on legal-but-odd Arrow layouts, built with ``Array.from_buffers``: the same values as the arrays
pyarrow builds normally must give the same lines and the same hash.

The case behind it: Spark up to 4.1 (Arrow Java 12-18) hands ``mapInArrow`` a length-0 map or list child whose
one offset is garbage when a batch's lists are all empty or null; Arrow also lets a length-0 list have an
empty offsets buffer, offsets that do not start at 0, children longer than what the offsets cover, and
slices at every level.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from tests.hashing.compat import needs_views
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.encode import encode_array

INTS = pa.list_(pa.int64())
MAP = pa.map_(pa.string(), INTS)
ITEM = pa.struct([pa.field("m", MAP), pa.field("n", pa.int32())])
NESTED = pa.list_(ITEM)  # the `nested` conformance vector's column type


def _offsets(*values: int) -> pa.Buffer:
    return pa.py_buffer(np.array(values, np.int32).tobytes())


def _mask(nulls: list[bool]) -> pa.Buffer | None:
    """A validity bitmap (True = null), or None when nothing is null."""
    if not any(nulls):
        return None
    bits = np.packbits(~np.array(nulls, bool), bitorder="little")
    return pa.py_buffer(bits.tobytes())


def _empty_list(t: pa.DataType, child: pa.Array, offsets: pa.Buffer) -> pa.Array:
    """A length-0 list or map array with the given (maybe garbage, maybe empty) offsets buffer."""
    return pa.Array.from_buffers(t, 0, [None, offsets], children=[child])


def _entries(keys: list[str], values: pa.Array) -> pa.StructArray:
    fields = [pa.field("key", pa.string(), nullable=False), pa.field("value", values.type)]
    return pa.StructArray.from_arrays([pa.array(keys, pa.string()), values], fields=fields)


def _same(odd: pa.Array, values: list[Any]) -> None:
    """``odd`` holds ``values``: its lines and hash are those of the array pyarrow builds from them."""
    normal = pa.array(values, odd.type)
    assert encode_array(odd, "c").to_pylist() == encode_array(normal, "c").to_pylist()
    odd_t, normal_t = pa.table({"c": odd}), pa.table({"c": normal})
    assert canonical_lines(odd_t) == canonical_lines(normal_t)
    assert hash_frame(odd_t) == hash_frame(normal_t)


GARBAGE = [-123456, 7, 2**31 - 1]  # negative (what Spark hands over), past the child's end, the largest int32


@pytest.mark.parametrize("garbage", GARBAGE)
def test_empty_map_child_with_a_garbage_offset(garbage: int) -> None:
    """list<struct<m: map<...>>> whose lists are all empty or null: the map child is length 0."""
    empty_map = _empty_list(MAP, _entries([], pa.array([], INTS)), _offsets(garbage))
    items = pa.StructArray.from_arrays([empty_map, pa.array([], pa.int32())], fields=list(ITEM))
    column = pa.Array.from_buffers(NESTED, 3, [_mask([False, True, False]), _offsets(0, 0, 0, 0)], children=[items])
    _same(column, [[], None, []])


@pytest.mark.parametrize("garbage", GARBAGE)
def test_empty_list_child_with_a_garbage_offset(garbage: int) -> None:
    inner = _empty_list(INTS, pa.array([], pa.int64()), _offsets(garbage))
    column = pa.Array.from_buffers(pa.list_(INTS), 2, [_mask([True, False]), _offsets(0, 0, 0)], children=[inner])
    _same(column, [None, []])
    # The same inside a map value: map<string, list<int64>> whose maps are all empty.
    values = _empty_list(INTS, pa.array([], pa.int64()), _offsets(garbage))
    maps = pa.Array.from_buffers(MAP, 2, [None, _offsets(0, 0, 0)], children=[_entries([], values)])
    _same(maps, [[], []])


def test_empty_child_with_an_empty_offsets_buffer() -> None:
    """Arrow allows a length-0 list an offsets buffer of 0 bytes; its offsets cannot even be read."""
    inner = _empty_list(INTS, pa.array([], pa.int64()), pa.py_buffer(b""))
    inner.validate(full=True)
    column = pa.Array.from_buffers(pa.list_(INTS), 2, [None, _offsets(0, 0, 0)], children=[inner])
    _same(column, [[], []])
    empty_map = _empty_list(MAP, _entries([], pa.array([], INTS)), pa.py_buffer(b""))
    items = pa.StructArray.from_arrays([empty_map, pa.array([], pa.int32())], fields=list(ITEM))
    _same(pa.Array.from_buffers(NESTED, 1, [None, _offsets(0, 0)], children=[items]), [[]])


def test_offsets_that_do_not_start_at_zero() -> None:
    """Values in front of and behind what the offsets cover are never part of any row."""
    child = pa.array([900, 901, 902, 1, 2, 3, 4, None, 903], pa.int64())
    column = pa.Array.from_buffers(INTS, 3, [None, _offsets(3, 5, 5, 8)], children=[child])
    column.validate(full=True)
    _same(column, [[1, 2], [], [3, 4, None]])
    entries = _entries(["zz", "b", "a", "c", "zz"], pa.array([[0], [2], [1], None, [9]], INTS))
    maps = pa.Array.from_buffers(MAP, 2, [None, _offsets(1, 3, 4)], children=[entries])
    _same(maps, [[("b", [2]), ("a", [1])], [("c", None)]])


def test_null_slots_that_cover_values() -> None:
    """A null list may span child values (they belong to no row): only the valid slots show."""
    child = pa.array([1, 2, 3, 4], pa.int64())
    column = pa.Array.from_buffers(INTS, 2, [_mask([True, False]), _offsets(0, 2, 4)], children=[child])
    _same(column, [None, [3, 4]])


def test_sliced_arrays_and_sliced_children() -> None:
    values = [
        [{"m": [("b", [1, None]), ("a", [])], "n": 1}],
        [],
        None,
        [{"m": None, "n": None}, {"m": [], "n": 2}],
        [{"m": [("x", None)], "n": 3}],
    ]
    full = pa.array(values, NESTED)
    for start, length in [(0, 5), (1, 3), (3, 2), (2, 1), (4, 0)]:
        _same(full.slice(start, length), values[start : start + length])
    # A child that is itself a slice of a longer array (its offset is not 0).
    child = pa.array([7, 7, 1, 2, 3], pa.int64()).slice(2)
    column = pa.Array.from_buffers(INTS, 2, [None, _offsets(0, 1, 3)], children=[child])
    _same(column, [[1], [2, 3]])
    # Maps whose entries are a slice, and a sliced map column.
    entries = _entries(["q", "k", "j"], pa.array([[0], [5], [6]], INTS)).slice(1)
    maps = pa.Array.from_buffers(MAP, 2, [None, _offsets(0, 1, 2)], children=[entries])
    _same(maps, [[("k", [5])], [("j", [6])]])
    _same(maps.slice(1), [[("j", [6])]])


def test_large_and_fixed_size_lists_sliced() -> None:
    large = pa.array([[1], [2, 3], [], None], pa.large_list(pa.int64()))
    _same(large.slice(1), [[2, 3], [], None])
    fixed = pa.array([[1, 2], [3, 4], None, [5, 6]], pa.list_(pa.int64(), 2))
    assert encode_array(fixed.slice(1), "c").to_pylist() == ["[3,4]", None, "[5,6]"]
    assert encode_array(fixed.slice(4), "c").to_pylist() == []


def test_empty_batches_and_empty_chunks() -> None:
    """A table of no rows, and a column whose chunks include empty ones with garbage offsets."""
    for t in (NESTED, MAP, INTS, pa.list_(INTS)):
        empty = pa.table({"c": pa.array([], t)})
        assert hash_frame(empty) == hash_frame(pa.table({"c": pa.chunked_array([], t)}))
        assert hash_frame(empty).row_count == 0
    garbage_map = _empty_list(MAP, _entries([], pa.array([], INTS)), _offsets(-5))
    items = pa.StructArray.from_arrays([garbage_map, pa.array([], pa.int32())], fields=list(ITEM))
    empty_chunk = pa.Array.from_buffers(NESTED, 0, [None, _offsets(-9)], children=[items])
    rows = [[{"m": [("a", [1])], "n": 1}], [], None]
    chunks = [empty_chunk, pa.array(rows[:1], NESTED), empty_chunk, pa.array(rows[1:], NESTED)]
    odd = pa.table({"c": pa.chunked_array(chunks)})
    assert hash_frame(odd) == hash_frame(pa.table({"c": pa.array(rows, NESTED)}))
    assert sorted(canonical_lines(odd)) == sorted(canonical_lines(pa.table({"c": pa.array(rows, NESTED)})))


# --- list views: offsets and sizes in any order (what DuckDB and Velox hand over) -----------------------------------

VIEWS = {
    "in-order": ([0, 2, 3], [2, 1, 3], None),
    "out-of-order": ([3, 0, 1], [3, 1, 2], None),
    "overlapping": ([0, 0, 1], [3, 2, 5], None),
    "null-with-garbage-size": ([0, 99, 2], [2, 77, 1], [True, False, True]),
    "all-empty": ([5, 0, 3], [0, 0, 0], None),
}


@needs_views
@pytest.mark.parametrize("large", [False, True], ids=["list_view", "large_list_view"])
@pytest.mark.parametrize("case", sorted(VIEWS))
def test_a_list_view_hashes_as_the_same_lists(case: str, large: bool) -> None:
    offsets, sizes, valid = VIEWS[case]
    kind = pa.LargeListViewArray if large else pa.ListViewArray
    index = pa.int64() if large else pa.int32()
    mask = None if valid is None else pa.array([not v for v in valid])
    views = kind.from_arrays(pa.array(offsets, index), pa.array(sizes, index), pa.array([1, 2, 3, 4, 5, 6]), mask=mask)
    # Built again from the Python values the views mean: an independent, plain list array.
    plain = pa.array(views.to_pylist(), pa.list_(pa.int64()))
    assert encode_array(views, "c").to_pylist() == encode_array(plain, "c").to_pylist()
    assert hash_frame(pa.table({"c": views})).data_hash == hash_frame(pa.table({"c": plain})).data_hash
    sliced = views.slice(1)
    assert encode_array(sliced, "c").to_pylist() == encode_array(plain.slice(1), "c").to_pylist()
