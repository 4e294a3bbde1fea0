"""The Arrow types and arrays of a parquet file's columns walked leaf by leaf, in parquet's leaf order (pure).

Parquet stores a nested column as one leaf column per primitive inside it, depth first: a struct's fields in
order, a list's values, a map's keys then its values. Its footer numbers them so; these walk an Arrow type or
array (as pyarrow reads the column) in that same order, so a leaf's number in the footer finds its type or values:

- :func:`children`: a nested type's child fields in that order, None for a leaf;
- :func:`leaf_types` and :func:`leaf_arrays`: the leaves of a type, and of an array of it;
- :func:`unsigned_or_duration`: the first place in a type holding an unsigned integer or a duration, types
  rows-v1 does not hash (docs/rows-v1.md section 11) and Spark reads as other types;
- :func:`arrow_only`: the first place holding any Arrow type rows-v1 does not hash that Spark reads as another
  (those two, a null, a half float, an extension type such as ``arrow.uuid``) or cannot read at all;
- :func:`logical_only` and :func:`refuse_logical_only`: the same refusal read from a parquet footer's logical
  types (JSON, UUID, FLOAT16), which every pyarrow the package supports reads, where the Arrow types above exist
  on a newer pyarrow only (pyarrow 14 reads a JSON column as binary, a UUID as fixed_size_binary[16]).

Example:
    >>> kind = pa.struct([("k", pa.int8()), ("m", pa.map_(pa.string(), pa.list_(pa.date32())))])
    >>> [str(t) for t in leaf_types(kind)]
    ['int8', 'string', 'date32[day]']
    >>> unsigned_or_duration(pa.list_(pa.uint8()), "c")
    ('c[]', DataType(uint8))
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from ubunye.exceptions import EngineError

if TYPE_CHECKING:
    import pyarrow.fs as pafs

__all__ = [
    "arrow_only",
    "children",
    "leaf_arrays",
    "leaf_types",
    "logical_only",
    "refuse_logical_only",
    "unsigned_or_duration",
]

# A parquet logical type rows-v1 does not hash (docs/rows-v1.md section 11): the Arrow type a new pyarrow reads it
# as, and what to store instead. Spark reads JSON as a string and UUID as binary: a hash of other data.
_LOGICAL_ONLY = {
    "JSON": ("arrow.json", "store it as a plain string first"),
    "UUID": ("arrow.uuid", "store it as binary or text first"),
    "FLOAT16": ("halffloat", "half floats have no rows-v1 type: cast it to float32 first"),
}
# What pyarrow before 15 says opening a footer holding a logical type it does not know (FLOAT16 is one)
_UNKNOWN_LOGICAL = "LogicalType that is not recognized"


def children(kind: pa.DataType) -> list[pa.Field] | None:
    """The child fields of a nested type in parquet's leaf order (a map's key, then its value), None for a leaf.

    Example:
        >>> [f.name for f in children(pa.map_(pa.string(), pa.int64()))], children(pa.int64())
        (['key', 'value'], None)
    """
    if pa.types.is_struct(kind):
        return [kind.field(i) for i in range(kind.num_fields)]
    if pa.types.is_map(kind):
        return [kind.key_field, kind.item_field]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return [kind.value_field]
    return None


def leaf_types(kind: pa.DataType) -> list[pa.DataType]:
    """The leaf types of ``kind`` in parquet's leaf order: one per parquet column the type is stored as.

    Example:
        >>> leaf_types(pa.list_(pa.struct([("a", pa.int8()), ("b", pa.string())])))
        [DataType(int8), DataType(string)]
    """
    nested = children(kind)
    return [kind] if nested is None else [t for f in nested for t in leaf_types(f.type)]


def leaf_arrays(array: pa.Array) -> list[pa.Array]:
    """The leaf arrays of ``array`` in parquet's leaf order (as :func:`leaf_types`), with the values of null or
    empty lists and maps left out (``flatten``): two reads of one file align leaf by leaf, whichever reader made
    each.

    Example:
        >>> maps = pa.array([[("a", 1)], None, [("b", 2), ("c", 3)]], pa.map_(pa.string(), pa.int64()))
        >>> [leaf.to_pylist() for leaf in leaf_arrays(maps)]
        [['a', 'b', 'c'], [1, 2, 3]]
    """
    kind = array.type
    if pa.types.is_struct(kind):
        return [leaf for i in range(kind.num_fields) for leaf in leaf_arrays(array.field(i))]
    if pa.types.is_map(kind):  # as the list of (key, value) structs it is: flattened as a list is
        pairs = pa.struct([kind.key_field, kind.item_field])
        entries = array.cast(pa.list_(pa.field("entries", pairs, nullable=False))).flatten()
        return [*leaf_arrays(entries.field(0)), *leaf_arrays(entries.field(1))]
    if children(kind) is not None:
        return leaf_arrays(array.flatten())
    return [array]


def unsigned_or_duration(kind: pa.DataType, path: str) -> tuple[str, pa.DataType] | None:
    """The first place in the Arrow type ``kind`` (a column's at ``path``: ``c``, ``c.x``, ``c[]``, ``c{key}``,
    ``c{value}``) holding an unsigned integer or a duration (a dictionary's values too), with its type; None when
    there is none.

    Example:
        >>> kind = pa.struct([("a", pa.int8()), ("d", pa.list_(pa.duration("us")))])
        >>> path, found = unsigned_or_duration(kind, "c")
        >>> path, str(found)
        ('c.d[]', 'duration[us]')
    """
    return _first_place(kind, path, _is_unsigned_or_duration)


def arrow_only(kind: pa.DataType, path: str) -> tuple[str, pa.DataType] | None:
    """The first place in the Arrow type ``kind`` (at ``path``, as :func:`unsigned_or_duration`) holding a type
    pyarrow reads from a parquet file that rows-v1 does not hash (docs/rows-v1.md section 11), so the pandas and
    polars engines refuse it, but Spark reads as another type or fails on naming no column: an unsigned integer,
    a duration, a null (pandas' all-None column; Spark: int), a half float, or an extension type kept in the
    footer's ``ARROW:schema`` (``arrow.uuid``, ``arrow.json``: Spark reads a string, ``arrow.bool8``: a byte).

    Example:
        >>> arrow_only(pa.struct([("a", pa.int8()), ("n", pa.null())]), "c")
        ('c.n', DataType(null))
        >>> arrow_only(pa.list_(pa.uuid()), "c")[0], arrow_only(pa.float16(), "c"), arrow_only(pa.int8(), "c")
        ('c[]', ('c', DataType(halffloat)), None)
    """
    return _first_place(kind, path, _is_arrow_only)


def _is_unsigned_or_duration(kind: pa.DataType) -> bool:
    return bool(pa.types.is_unsigned_integer(kind) or pa.types.is_duration(kind))


def _is_arrow_only(kind: pa.DataType) -> bool:
    return bool(
        _is_unsigned_or_duration(kind)
        or pa.types.is_null(kind)
        or pa.types.is_float16(kind)
        or isinstance(kind, pa.BaseExtensionType)  # before its storage is walked: the type is refused as a whole
    )


def _first_place(kind: pa.DataType, path: str, hit: Callable[[pa.DataType], bool]) -> tuple[str, pa.DataType] | None:
    """The first place in ``kind`` (at ``path``) whose type is a ``hit``, depth first, with that type."""
    if hit(kind):
        return path, kind
    if pa.types.is_dictionary(kind):
        return _first_place(kind.value_type, path, hit)
    if pa.types.is_map(kind):
        return _first_place(kind.key_type, f"{path}{{key}}", hit) or _first_place(
            kind.item_type, f"{path}{{value}}", hit
        )
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _first_place(kind.value_type, f"{path}[]", hit)
    # a struct's fields, and any other nested type's (a union's): a leaf has none
    fields = (kind.field(i) for i in range(kind.num_fields))
    return next((found for f in fields if (found := _first_place(f.type, f"{path}.{f.name}", hit))), None)


def logical_only(schema: pq.ParquetSchema) -> tuple[str, str] | None:
    """The first column of a parquet footer's ``schema`` (its dotted parquet path: ``c``, ``s.u``,
    ``l.list.element``) whose logical type rows-v1 does not hash (JSON, UUID, FLOAT16), with that type's name;
    None when there is none. Read from the footer, so alike on every pyarrow, whatever Arrow type it reads.

    Example:
        >>> import io
        >>> sink = io.BytesIO()
        >>> pq.write_table(pa.table({"i": [1]}), sink)
        >>> logical_only(pq.ParquetFile(pa.BufferReader(sink.getvalue())).schema) is None
        True
    """
    for i in range(len(schema)):
        column = schema.column(i)
        kind = str(column.logical_type.type)
        if kind in _LOGICAL_ONLY:
            return str(column.path), kind
    return None


def refuse_logical_only(name: str, file: Path | str, shown: str, filesystem: pafs.FileSystem | None = None) -> None:
    """Raise EngineError naming the input ``name``, the file (as ``shown``) and the column when the footer of the
    parquet ``file`` (on ``filesystem``, else local) holds a logical type rows-v1 does not hash (:func:`logical_only`),
    or one this pyarrow cannot read (pyarrow 14: FLOAT16, "Thrift LogicalType that is not recognized"). A new
    pyarrow reads JSON and UUID as extension types the hash refuses; pyarrow 14 read them as plain binary and the
    pandas engine hashed them, where Spark reads a JSON column as a string: one table, two hashes.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:  # a plain string passes (a JSON one would not)
        ...     pq.write_table(pa.table({"s": ["{}"]}), Path(folder) / "s.parquet")
        ...     refuse_logical_only("i", Path(folder) / "s.parquet", "s.parquet")
    """
    try:
        if filesystem is None:
            schema = pq.ParquetFile(str(file)).schema
        else:
            with filesystem.open_input_file(str(file)) as handle:
                schema = pq.ParquetFile(handle).schema
    except OSError as exc:
        if _UNKNOWN_LOGICAL not in str(exc):
            raise  # not this check's to word: the read names what else is wrong with the file
        msg = f"input {name!r}: {shown} holds a parquet logical type pyarrow {pa.__version__} does not know (its "
        msg += "footer: FLOAT16, a half float, is one), which rows-v1 does not hash (docs/rows-v1.md section 11): "
        msg += "cast a half float to float32 first"
        raise EngineError(msg) from exc
    found = logical_only(schema)
    if found is None:
        return
    path, kind = found
    arrow, instead = _LOGICAL_ONLY[kind]
    where = f"column {path!r}" if "." not in path else f"field {path!r}"
    msg = f"input {name!r}: {where} of {shown} is of parquet logical type {kind} ({arrow}), which rows-v1 does not "
    raise EngineError(msg + f"hash (docs/rows-v1.md section 11): {instead}")
