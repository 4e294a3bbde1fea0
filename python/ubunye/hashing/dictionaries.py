"""Dictionary arrays hashed as their values (docs/rows-v1.md section 7): a pandas ``category``, a polars
``Categorical`` or ``Enum``, any Arrow ``dictionary<indices, values>``.

Arrow's own decoding (``take`` on the dictionary) has no kernel for the view types polars exports
(``string_view``, ``binary_view``), so the dictionary is first cast to the equivalent type without views.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from ubunye.exceptions import HashError
from ubunye.hashing.types import is_binary_view, is_list_view, is_string_view


def _without_views(t: pa.DataType) -> pa.DataType:
    """``t`` with ``string_view``/``binary_view`` replaced by ``large_string``/``large_binary``, at any depth.

    List views are left as they are: Arrow casts them neither to lists reliably nor with a changed value type,
    and a dictionary of them that ``take`` cannot decode is refused (naming the column) rather than guessed.
    """
    if is_string_view(t):
        return pa.large_string()
    if is_binary_view(t):
        return pa.large_binary()
    return _inside(t, _without_views)


def _inside(t: pa.DataType, each: Callable[[pa.DataType], pa.DataType]) -> pa.DataType:
    """``t`` with ``each`` applied to the value types inside a list, map or struct (one level: ``each`` recurses);
    ``t`` itself when it holds none."""
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, each(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(pa.field(t.value_field.name, each(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(pa.field(t.value_field.name, each(t.value_type)), t.list_size)
    if pa.types.is_map(t):
        return pa.map_(each(t.key_type), each(t.item_type))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(each(t.field(i).type)) for i in range(t.num_fields)])
    return t


def without_views(arr: pa.Array) -> pa.Array:
    """``arr`` with its ``string_view``/``binary_view`` values, at any depth, cast to ``large_string``/
    ``large_binary``: the same values (bytes included, valid UTF-8 or not), in types Arrow's ``take`` has kernels for
    (pyarrow 26 has none for the views).

    Example:
        >>> without_views(pa.array(["a"], pa.string_view())).type
        DataType(large_string)
    """
    plain = _without_views(arr.type)
    return arr if plain == arr.type else arr.cast(plain, safe=False)


def decode_dictionary(arr: pa.DictionaryArray, path: str) -> pa.Array:
    """The values a dictionary array stands for, row by row (nulls where the index is null).

    The value type was accepted by ``types.type_name`` already; an Arrow failure here still names the column.

    Example:
        >>> values = pa.array(["a", "b"], pa.string_view())
        >>> d = pa.DictionaryArray.from_arrays(pa.array([1, None, 0], pa.uint32()), values)
        >>> decode_dictionary(d, "c").to_pylist()
        ['b', None, 'a']
    """
    try:
        values = arr.dictionary
        plain = _without_views(values.type)
        if plain != values.type:
            values = values.cast(plain)
        return pa.DictionaryArray.from_arrays(arr.indices, values).dictionary_decode()
    except pa.ArrowException as exc:  # no kernel for a type, a broken dictionary: say which column
        where = f"column {path!r}" if "." not in path and "[" not in path and "{" not in path else f"field {path!r}"
        msg = f"rows-v1 cannot hash {where} of type {arr.type}: Arrow cannot decode its dictionary ({exc}) "
        raise HashError(msg + "(docs/rows-v1.md sections 7 and 11)") from exc


def decode_column(column: pa.ChunkedArray, path: str) -> pa.ChunkedArray:
    """A dictionary column as the values it stands for, chunk by chunk (any other column as it is): what a writer
    that takes no dictionaries (a Delta partition column) is handed. A HashError names the column when Arrow
    cannot decode it.

    Example:
        >>> d = pa.chunked_array([pa.array(["a", None, "a"]).dictionary_encode()])
        >>> decode_column(d, "c").type, decode_column(d, "c").to_pylist()
        (DataType(string), ['a', None, 'a'])
    """
    if not pa.types.is_dictionary(column.type):
        return column
    values_type = _without_views(column.type.value_type)
    chunks = [decode_dictionary(chunk, path) for chunk in column.chunks]
    return pa.chunked_array([c.cast(values_type) if c.type != values_type else c for c in chunks], values_type)


def _plain(t: pa.DataType) -> pa.DataType:
    """``t`` with every dictionary, at any depth, replaced by its values' type (views made large, as above)."""
    if pa.types.is_dictionary(t):
        return _plain(_without_views(t.value_type))
    return _inside(t, _plain)


def _null_entry(arr: pa.Array) -> bool:
    """Whether a dictionary at any depth of ``arr`` holds a null value (``dictionary_encode(null_encoding="encode")``
    makes one). Reads no data, only the arrays' null counts."""
    t = arr.type
    if pa.types.is_dictionary(t):
        return bool(arr.dictionary.null_count) or _null_entry(arr.dictionary)
    if pa.types.is_struct(t):
        return any(_null_entry(arr.field(i)) for i in range(t.num_fields))
    if isinstance(arr, pa.ListArray | pa.LargeListArray | pa.FixedSizeListArray | pa.MapArray) or is_list_view(t):
        return _null_entry(arr.values)
    return False


#: pyarrow before 16 (the floors: 14 and 15) can abort the whole process casting a nested dictionary type.
_OLD_CAST = int(pa.__version__.split(".")[0]) < 16


def joinable(table: pa.Table) -> pa.Table:
    """``table`` with the columns Arrow cannot join into one batch decoded: several chunks whose dictionaries hold a
    null value ("Cannot yet unify dictionaries with nulls", also between chunks sharing one dictionary that holds a
    NaN, which is not equal to itself). A dictionary is hashed as its values (docs/rows-v1.md section 7), so this
    changes no line; any other table is returned as it is.

    Example:
        >>> import pyarrow.compute as pc
        >>> a = pc.dictionary_encode(pa.array(["a", None]), null_encoding="encode")
        >>> b = pc.dictionary_encode(pa.array(["b", None]), null_encoding="encode")
        >>> joinable(pa.table({"c": pa.chunked_array([a, b])})).combine_chunks().column("c").to_pylist()
        ['a', None, 'b', None]
    """
    for i, column in enumerate(table.columns):
        if column.num_chunks > 1 and any(_null_entry(chunk) for chunk in column.chunks):
            if pa.types.is_dictionary(column.type):  # decoded by take, as the encoder decodes every dictionary
                decoded = decode_column(column, table.field(i).name)
                table = table.set_column(i, table.field(i).with_type(decoded.type), decoded)
                continue
            if _OLD_CAST:  # pyarrow 14 can abort the process casting a nested dictionary: refused, named
                msg = (
                    f"rows-v1 cannot read column {table.field(i).name!r} of type {column.type}: its chunks hold "
                    f"dictionaries with a null value, which pyarrow {pa.__version__} can neither join nor decode "
                    "safely inside a list, map or struct (pyarrow 16 or later does)"
                )
                raise HashError(msg)
            if is_list_view(column.type):  # Arrow casts no list view safely: as the large lists the encoder reads
                from ubunye.hashing.encode import _views_as_list

                column = pa.chunked_array([_views_as_list(chunk) for chunk in column.chunks])
            plain = _plain(column.type)
            try:
                decoded = column.cast(plain, safe=False)
            except pa.ArrowException:  # no cast for this nesting (string views inside, a list view in a struct):
                continue  # the chunks may still join (a fresh-clone CI: seed 222408 hashed so); if not, Arrow says
            table = table.set_column(i, table.field(i).with_type(plain), decoded)
    return table
