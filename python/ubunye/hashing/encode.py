"""Arrow arrays to rows-v1 JSON texts, whole columns at a time: sections 2 to 6 of docs/rows-v1.md.

Each encoder returns a string array holding one value's canonical JSON per slot, null where the value is null;
the caller decides what a null becomes (left out in objects, ``null`` in lists and map values).
"""

from __future__ import annotations

import binascii
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ubunye.exceptions import HashError
from ubunye.hashing.dictionaries import decode_dictionary, without_views
from ubunye.hashing.numbers import format_decimals, format_floats
from ubunye.hashing.temporal import Writer, date_writer, format_dates, format_timestamps, timestamp_writer
from ubunye.hashing.text import as_text, escaped, json_string, json_strings, too_long
from ubunye.hashing.types import is_binary, is_list_view, is_string

_SKIP_NULLS = pc.JoinOptions(null_handling="replace", null_replacement="")


def _binary(arr: pa.Array) -> pa.Array:
    # Arrow has no base64 kernel; binascii runs in C per value.
    texts = [None if v is None else '"' + binascii.b2a_base64(v, newline=False).decode() + '"' for v in arr.to_pylist()]
    return pa.array(texts, pa.string())


@dataclass(frozen=True)
class Member:
    """A column whose encoder writes each value's text whole (booleans, dates, timestamps): ``write(prefix,
    suffix)`` gives ``prefix + text + suffix`` per slot (null where the value is null) in the pass that writes
    the texts, so the member costs the object's join one argument, not three (each argument of Arrow's
    element-wise join costs about 10 ns a row, constant or not)."""

    write: Writer
    null_count: int


def member(arr: pa.Array, path: str) -> Member | None:
    """The :class:`Member` of a column whose type writes its texts whole, else None (the column is encoded
    with :func:`encode_array`). Timestamps are checked here: an error names the column before any is joined."""
    t = arr.type
    if pa.types.is_boolean(t):
        return Member(lambda p, s: pc.if_else(arr, p + "true" + s, p + "false" + s), arr.null_count)
    if pa.types.is_date(t):
        return Member(date_writer(arr, path), arr.null_count)
    if pa.types.is_timestamp(t):
        return Member(timestamp_writer(arr, path), arr.null_count)
    return None


def join_object(
    names: list[str], values: Sequence[pa.Array | Member], length: int, quoted: set[int] | None = None
) -> pa.Array:
    """``{"name":value,...}`` per slot, names sorted by code point, null values left out (never null itself).

    ``quoted`` lists the values that are escaped strings still without their quotes: the quotes are written as
    part of this one join instead of by a pass of their own. A value may be a :class:`Member`, which writes the
    constant text around it itself.
    """
    quoted = quoted or set()
    order = sorted(range(len(names)), key=lambda i: names[i])
    if not order:
        return pa.array(["{}"] * length, pa.string())
    # One element-wise join with one argument per column: each argument of Arrow's element-wise join costs about
    # 10 ns a row, constant or not, more than writing a constant into a column's texts. A column without nulls
    # carries the constant text before it (the previous member's closing quote, the comma, the name); a column
    # with nulls becomes one member-or-null array (nulls join as ""), the constant before it an argument of its
    # own. Every member starts with a comma unless the first column never is null; then the first is dropped.
    lead_always = values[order[0]].null_count == 0
    parts: list[object] = []
    pending = "{"  # constant text not yet written
    for k, i in enumerate(order):
        prefix = ("" if k == 0 and lead_always else ",") + json_string(names[i]) + ":"
        suffix = ""
        if i in quoted:
            prefix, suffix = prefix + '"', '"'
        value = values[i]
        close = "}" if k == len(order) - 1 else ""
        if value.null_count == 0:
            parts.append(_around(value, pending + prefix, suffix + close if close else ""))
            pending = "" if close else suffix
        else:
            if pending:
                parts.append(pending)
            parts.append(_around(value, prefix, suffix))
            pending = close
    if pending:
        parts.append(pending)
    joined = parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, "", options=_SKIP_NULLS)
    if lead_always:
        return joined
    # "{,..." -> "{...": at most one leading comma to remove.
    return pc.replace_substring(joined, "{,", "{", max_replacements=1)


def _around(value: pa.Array | Member, before: str, after: str) -> pa.Array:
    """``before + value + after`` per slot, null where the value is null."""
    if isinstance(value, Member):
        return value.write(before, after)
    # Two slice insertions cost about a third of a three-argument join (and keep nulls null as well).
    out = pc.binary_replace_slice(value, 0, 0, before) if before else value
    return pc.binary_replace_slice(out, _END, _END, after) if after else out


_END = 2**62  # a slice position past any slot's end: what is inserted there goes after the last byte


def _referenced(arr: pa.Array) -> tuple[np.ndarray, int, int]:
    """The offsets of a non-empty list or map array, and the child range [start, stop) its slots cover.

    Offsets need not start at 0 (a slice, or a writer that leaves unreferenced values in front), and the child
    may be longer than what they cover: only ``child[start:stop]`` is encoded, values no slot refers to are
    never read. An EMPTY list or map array is never passed here: its one offset may be garbage (Spark up to 4.1,
    Arrow Java 12-18, hands mapInArrow such a child when a batch's lists are all empty or null).
    """
    offsets = arr.offsets.to_numpy()
    return offsets, int(offsets[0]), int(offsets[-1])


def _views_as_list(arr: pa.Array) -> pa.LargeListArray:
    """A list_view array as a large_list of the same values, slot by slot.

    Not ``arr.cast(large_list)``: pyarrow 26 casts ``[[1, 2], [3], [4, 5, 6]]`` to ``[[1, 2], [3], []]`` and
    scrambles views that are out of order, which would hash other values without a word. A view's offset and size
    say which child values it holds, in any order and overlapping; a null slot's size is not read. Views of
    strings or binaries are taken as large ones: Arrow has no ``take`` for ``string_view``/``binary_view``.
    """
    sizes = np.where(arr.is_valid().to_numpy(zero_copy_only=False), arr.sizes.to_numpy(zero_copy_only=False), 0)
    starts = arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    bounds = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
    taken = np.repeat(starts - bounds[:-1], sizes) + np.arange(bounds[-1], dtype=np.int64)
    child = without_views(arr.values).take(pa.array(taken, pa.int64()))
    return pa.LargeListArray.from_arrays(pa.array(bounds, pa.int64()), child, mask=arr.is_null())


def visible(arr: pa.Array) -> pa.Array:
    """A non-empty list or map array whose null slots cover no child values: Arrow lets a null slot cover any (its
    offsets need not be equal), and what they hold is no value of the table (sections 3 and 6). Never read, it can
    neither be refused (a null map key, nanoseconds, a date64 that is not a midnight) nor hashed. The array itself
    when no null slot covers anything (the usual case: nothing is copied).

    Example:
        >>> lists = pa.ListArray.from_arrays(pa.array([0, 1, 3]), pa.array([1, 2, 3]), mask=pa.array([False, True]))
        >>> visible(lists).offsets.to_pylist(), visible(lists).values.to_pylist()
        ([0, 1, 1], [1])
    """
    if not arr.null_count:
        return arr
    offsets = arr.offsets.to_numpy()
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    sizes = np.diff(offsets)
    if not sizes[~valid].any():
        return arr
    sizes = np.where(valid, sizes, 0).astype(np.int64)
    bounds = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
    taken = np.repeat(offsets[:-1].astype(np.int64) - bounds[:-1], sizes) + np.arange(bounds[-1], dtype=np.int64)
    child = without_views(arr.values).take(pa.array(taken, pa.int64()))
    if pa.types.is_map(arr.type):
        # Null slots as null offsets: MapArray.from_arrays takes no mask before pyarrow 17 (the floors are 14 and 15)
        offsets = pa.array(bounds, pa.int32(), mask=np.append(~valid, False))
        return pa.MapArray.from_arrays(offsets, child.field(0), child.field(1))
    return pa.LargeListArray.from_arrays(pa.array(bounds, pa.int64()), child, mask=arr.is_null())


def _list(arr: pa.Array, path: str) -> pa.Array:
    if len(arr) == 0:
        return pa.array([], pa.string())  # never read the offsets of an empty array (see _referenced)
    if is_list_view(arr.type):
        arr = _views_as_list(arr)  # null slots read as empty
    elif pa.types.is_fixed_size_list(arr.type):
        arr = arr.cast(pa.large_list(arr.type.value_type))
    arr = visible(arr)
    offsets, start, stop = _referenced(arr)
    child = encode_array(arr.values.slice(start, stop - start), path + "[]").fill_null("null")
    builder = pa.LargeListArray if pa.types.is_large_list(arr.type) else pa.ListArray
    # Offsets rebased onto the encoded range (a new array: from_arrays with a mask wants them unsliced).
    rebased = pa.array(offsets - start, arr.offsets.type)
    joined = pc.binary_join(builder.from_arrays(rebased, child, mask=arr.is_null()), ",")
    return pc.binary_join_element_wise("[", joined, "]", "")


def _decoded(arr: pa.Array, path: str) -> pa.Array:
    """The values a dictionary array stands for (section 7), its dictionary's own dictionaries decoded too; any
    other array as it is. Map keys are decoded before they are looked at: the key text of a dictionary of strings
    is the strings' (escaped once, as a member name), and a valid index may point at a null key."""
    while pa.types.is_dictionary(arr.type):
        arr = decode_dictionary(arr, path)
    return arr


def _key_text(keys: pa.Array, path: str) -> pa.Array:
    """Map key text (section 6): the key's canonical JSON, unquoted when it is a JSON string. ``keys`` hold no
    dictionary at their top (see :func:`_decoded`): a string key's text must not pass through ``encode_array``,
    whose quoted text would then be escaped a second time as a member name."""
    if is_string(keys.type):
        return as_text(keys)  # invalid UTF-8 read as section 4.1 says, before the keys are sorted
    enc = encode_array(keys, path)
    # Non-string keys that encode as JSON strings (binary, date, timestamps, NaN) hold no escapes.
    quoted = pc.starts_with(enc, '"')
    return pc.if_else(quoted, pc.utf8_slice_codeunits(enc, 1, -1), enc)


def _map(arr: pa.MapArray, path: str) -> pa.Array:
    if len(arr) == 0:
        return pa.array([], pa.string())  # never read the offsets of an empty array (see _referenced)
    arr = visible(arr)
    offsets, start, stop = _referenced(arr)
    entries = arr.values.slice(start, stop - start)
    keys, items = _decoded(entries.field(0), path + "{key}"), entries.field(1)
    if keys.null_count:  # counted on the decoded keys: a dictionary's indices are valid where its entry is null
        raise HashError(f"rows-v1 cannot hash field {path!r}: a map key is null (docs/rows-v1.md section 3)")
    key_text = _key_text(keys, path + "{key}")
    value_text = encode_array(items, path + "{value}").fill_null("null")
    parent = np.repeat(np.arange(len(arr)), np.diff(offsets))
    order = pc.sort_indices(
        pa.table({"p": parent, "k": key_text, "v": value_text}),
        sort_keys=[("p", "ascending"), ("k", "ascending"), ("v", "ascending")],
    )
    members = pc.binary_join_element_wise(json_strings(key_text, path + "{key}", keys.type), value_text, ":")
    members = members.take(order)
    lists = pa.ListArray.from_arrays(pa.array(offsets - start, pa.int32()), members, mask=arr.is_null())
    return pc.binary_join_element_wise("{", pc.binary_join(lists, ","), "}", "")


def _struct(arr: pa.StructArray, path: str) -> pa.Array:
    t = arr.type
    names = [t.field(i).name for i in range(t.num_fields)]
    # A null struct's fields may hold anything (Arrow leaves them unspecified): no value of the table, so they are
    # made null with it (flatten) rather than encoded, where a value rows-v1 refuses would refuse the whole table.
    fields = arr.flatten() if arr.null_count else [arr.field(i) for i in range(t.num_fields)]
    values = [encode_array(fields[i], f"{path}.{names[i]}") for i in range(t.num_fields)]
    obj = join_object(names, values, len(arr))
    return pc.if_else(arr.is_valid(), obj, pa.nulls(len(arr), pa.string()))


def encode_array(arr: pa.Array, path: str) -> pa.Array:
    """The canonical JSON of every value of one Arrow array (types already checked by ``types.type_name``).

    Example:
        >>> import pyarrow as pa
        >>> encode_array(pa.array([[1, None], None]), "c").to_pylist()
        ['[1,null]', None]
    """
    t = arr.type
    if pa.types.is_dictionary(t):
        return encode_array(decode_dictionary(arr, path), path)
    if pa.types.is_boolean(t):
        return pc.if_else(arr, "true", "false")
    if pa.types.is_integer(t):
        return pc.cast(arr, pa.string())
    if pa.types.is_floating(t):
        return format_floats(arr)
    if pa.types.is_decimal(t):
        return format_decimals(arr)
    if is_string(t):
        return json_strings(as_text(arr), path, t)
    if is_binary(t):
        return _binary(arr)
    if pa.types.is_date(t):
        return format_dates(arr, path)
    if pa.types.is_timestamp(t):
        return format_timestamps(arr, path)
    if pa.types.is_map(t):
        return _map(arr, path)
    if pa.types.is_struct(t):
        return _struct(arr, path)
    return _list(arr, path)


def encode_batch(batch: pa.RecordBatch) -> pa.Array:
    """The canonical line of every row of a record batch, as an Arrow string array."""
    values: list[pa.Array | Member] = []
    quoted = set()
    schema = batch.schema  # built anew on every access, its types and names too: once, not once per column
    types, names = schema.types, schema.names
    for i in range(batch.num_columns):
        column, t, name = batch.column(i), types[i], names[i]
        try:
            if is_string(t):
                values.append(escaped(as_text(column), name, t))  # quoted by the row join below
                quoted.add(i)
            else:
                values.append(member(column, name) or encode_array(column, name))
        except pa.ArrowCapacityError:  # texts over 2 GiB: in a batch of one row (see pieces), its line's
            if batch.num_rows != 1:
                raise
            raise too_long(name, t, "a row's line") from None
    try:
        return join_object(list(names), values, batch.num_rows, quoted)
    except pa.ArrowCapacityError:
        if batch.num_rows != 1:
            raise
        # The row's line passes 2 GiB though no value's text does: named by its longest value.
        sizes = [0 if isinstance(v, Member) else int(pc.sum(pc.binary_length(v)).as_py() or 0) for v in values]
        widest = max(range(len(values)), key=sizes.__getitem__)
        why = f"a row's line (its values' texts {sum(sizes):,} bytes, {sizes[widest]:,} of them this column's)"
        raise too_long(names[widest], types[widest], why) from None
