"""Batches cut so that the text the twin writes for them fits Arrow's string arrays: ``pieces``.

The twin writes a batch's canonical lines (and a profile's column lines) into Arrow string arrays, whose 32-bit
offsets address at most 2 GiB. A fixed row count cannot promise that: 65,536 rows of 50 KB documents are 3 GiB of
lines. So a batch whose text could pass :data:`TEXT_BUDGET` is halved until each piece's cannot, by an upper
bound of its text computed from its buffers (:func:`text_bound`), before anything is written. rows-v1 and
profile-v1 numbers are sums over rows, so pieces change nothing but memory.

Example:
    >>> import pyarrow as pa
    >>> batch = pa.record_batch({"doc": ["x" * 1000] * 8})
    >>> [p.num_rows for p in pieces(batch)], [p.num_rows for p in pieces(batch, budget=15_000)]
    ([8], [2, 2, 2, 2])
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: Most bytes of text one piece's bound may reach: an eighth of what a string array's 32-bit offsets address, so
#: that a text built from several such arrays (a row line from its members) stays within them too. Also faster:
#: measured on 2.16 GB of lines, pieces of this bound took 6.4 s, and 720 MB batches 11 s each (the kernels'
#: temporaries then outgrow every cache). A batch of ordinary rows (the bench table's 65,536 rows: a bound of
#: about 130 MB) is never cut.
TEXT_BUDGET = 2**28
#: Most bytes one byte of a value becomes in its text: a control character is six (``\u0001``, section 4), an
#: invalid UTF-8 byte three (U+FFFD, section 4.1), a binary byte 4/3 (base64), a number's bytes at most 20/8 digits.
#: A map key's text is escaped again as a member name (section 6), which at most doubles it: once per map level.
_PER_BYTE = 6
#: Most bytes a value takes beside its own bytes' text: quotes, separators, ``null``, the longest number (a
#: decimal(38) with sign, point and exponent-free digits), a timestamp, ``true``/``false`` from one bit.
_PER_VALUE = 64


_FLAT_TEXT = (
    pa.types.is_string,
    pa.types.is_large_string,
    pa.types.is_binary,
    pa.types.is_large_binary,
    *[getattr(pa.types, name) for name in ("is_string_view", "is_binary_view") if hasattr(pa.types, name)],
)


def text_bound(arr: pa.Array, name_bytes: int = 0) -> int:
    """An upper bound of the bytes of the canonical text of ``arr``'s values (docs/rows-v1.md sections 4 to 6),
    each written as a member named by a ``name_bytes``-byte name.

    Example:
        >>> text_bound(pa.array(["ab", None])) >= len('"ab"') + len("null")
        True
    """
    t, n = arr.type, len(arr)
    if n == 0:  # nothing to write; and an empty child's offsets may be garbage (Spark hands such over)
        return 0
    per = n * (_PER_BYTE * name_bytes + _PER_VALUE)
    if pa.types.is_dictionary(t):
        values = arr.dictionary
        if len(values) == 0:
            return per
        if any(is_(values.type) for is_ in _FLAT_TEXT):
            return per + n * _PER_BYTE * int(_lengths(values).max(initial=0))
        try:  # each slot's own value: the decoded column (nested values are rare in dictionaries)
            return per + text_bound(values.take(arr.indices))
        except pa.ArrowNotImplementedError:  # no take for views in some pyarrow: the largest value bounds each slot
            return per + n * text_bound(values)
    if pa.types.is_struct(t):
        fields = arr.flatten()  # the fields as this (maybe sliced) array sees them
        return per + sum(text_bound(f, len(t.field(i).name.encode())) for i, f in enumerate(fields))
    if pa.types.is_map(t):
        # keys and items are the whole children: this (maybe sliced) array's entries are its offsets' range
        offsets = arr.offsets
        lo, hi = (offsets[0].as_py(), offsets[-1].as_py()) if len(offsets) else (0, 0)
        return per + 2 * text_bound(arr.keys.slice(lo, hi - lo)) + text_bound(arr.items.slice(lo, hi - lo))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return per + text_bound(arr.flatten())
    if hasattr(pa.types, "is_list_view") and (pa.types.is_list_view(t) or pa.types.is_large_list_view(t)):
        return per + text_bound(arr.flatten())
    if any(is_(t) for is_ in _FLAT_TEXT[4:]):  # views may share bytes: their lengths, not the buffers, count
        return per + _PER_BYTE * int(_lengths(arr).sum())
    return per + _PER_BYTE * int(arr.nbytes)


def _lengths(arr: pa.Array) -> np.ndarray:
    """The byte length of each valid value of a string or binary array, views included (Arrow's binary_length
    has no kernel for views: their lengths are the first 4 bytes of each 16-byte view)."""
    if any(is_(arr.type) for is_ in _FLAT_TEXT[4:]):
        views = np.frombuffer(arr.buffers()[1], dtype=np.int32).reshape(-1, 4)[arr.offset : arr.offset + len(arr), 0]
        found = views.astype(np.int64)
    else:
        found = pc.binary_length(arr).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    if arr.null_count:
        found = np.where(arr.is_valid().to_numpy(zero_copy_only=False), found, 0)
    return found


def _batch_bound(batch: pa.RecordBatch) -> int:
    return sum(text_bound(c, len(f.name.encode())) for c, f in zip(batch.columns, batch.schema, strict=True))


def pieces(batch: pa.RecordBatch, budget: int | None = None) -> Iterator[pa.RecordBatch]:
    """``batch`` itself, or consecutive slices of it in order, each with a text bound within ``budget`` (default
    :data:`TEXT_BUDGET`; a piece of one row is never cut further: its line is whatever it is, and one over 2 GiB a
    HashError, docs/rows-v1.md section 11). A cut piece's buffers are copied to hold only its own values: Arrow's
    casts judge an array by its whole buffers, not the slice of them it refers to."""
    budget = TEXT_BUDGET if budget is None else budget
    if batch.num_rows <= 1 or _batch_bound(batch) <= budget:
        yield batch
        return
    for piece in _cut(batch, budget):
        yield pa.RecordBatch.from_arrays([pa.concat_arrays([c]) for c in piece.columns], schema=piece.schema)


def _cut(batch: pa.RecordBatch, budget: int) -> Iterator[pa.RecordBatch]:
    if batch.num_rows <= 1 or _batch_bound(batch) <= budget:
        yield batch
        return
    half = batch.num_rows // 2
    yield from _cut(batch.slice(0, half), budget)
    yield from _cut(batch.slice(half), budget)
