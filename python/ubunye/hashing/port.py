"""The port: how a frame of any engine is hashed when it is neither pandas, Arrow, Spark nor an Arrow stream.

A frame satisfies :class:`RowsFrame` when it has

- ``schema``: the columns as ``(name, rows-v1 type name)`` pairs, e.g. ``[("id", "int64"), ("at", "timestamp")]``
  (the names of docs/rows-v1.md section 7, nested ones included: ``list<struct<"a":date>>``);
- ``collect()``: every row, each a tuple in schema order or a mapping from column name to value (a missing key
  is null).

Values are plain Python: ``int``, ``float``, ``bool``, ``str``, ``bytes``, ``decimal.Decimal``,
``datetime.date``, ``datetime.datetime`` (time-zone aware for ``timestamp``, naive for ``timestamp_ntz``: the
other way round is refused rather than guessed), ``list`` for lists, ``dict`` (or a tuple in field order) for
structs, ``dict`` or a list of ``(key, value)`` pairs for maps, ``None`` for null. hash_frame builds the Arrow table
the type names say and hashes it with the twin, so the schema a backend gives *is* the schema that is hashed.

A frame exposing ``__arrow_c_stream__`` (polars, DuckDB, ...) needs no port: it is read through Arrow.

Example:
    >>> from ubunye.hashing import hash_frame
    >>> class Rows:
    ...     schema = [("id", "int64"), ("name", "string")]
    ...     def collect(self):
    ...         return [(1, "Ana"), {"id": 2}]
    >>> h = hash_frame(Rows())
    >>> h.schema, h.row_count
    ('struct<"id":int64,"name":string>', 2)
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeGuard, runtime_checkable

import numpy as np
import pyarrow as pa

from ubunye.exceptions import HashError
from ubunye.hashing.types import TypeTree, arrow_type, parse_columns, type_kinds


@runtime_checkable
class RowsFrame(Protocol):
    """A frame hashed from its rows: ``schema`` as (name, rows-v1 type name) pairs and ``collect()`` the rows."""

    @property
    def schema(self) -> Sequence[tuple[str, str]]:
        """The columns, in the order of a tuple row: ``[("id", "int64"), ...]``."""
        ...

    def collect(self) -> Iterable[Sequence[Any] | Mapping[str, Any]]:
        """Every row: a tuple in schema order, or a mapping from column name to value."""
        ...


def is_rows_frame(frame: object) -> TypeGuard[RowsFrame]:
    """True when ``frame`` has a ``collect`` method and a ``schema`` (the port's shape; contents checked later)."""
    has_schema = hasattr(type(frame), "schema") or "schema" in getattr(frame, "__dict__", {})
    return callable(getattr(type(frame), "collect", None)) and has_schema


def port_schema(frame: RowsFrame) -> list[tuple[str, str, TypeTree]]:
    """The frame's columns as ``(name, type name, parsed type)``; HashError naming the column on a bad entry."""
    kind = f"{type(frame).__module__}.{type(frame).__name__}"
    try:
        schema = frame.schema
        entries = list(schema.items() if isinstance(schema, Mapping) else schema)
    except TypeError:
        entries = None
    if entries is None or not all(
        isinstance(e, tuple | list) and len(e) == 2 and isinstance(e[0], str) and isinstance(e[1], str) for e in entries
    ):
        msg = (
            f"rows-v1 cannot hash a {kind}: it has collect() and schema, but its schema is not (name, rows-v1 type "
            "name) pairs (ubunye.hashing.port; a lazy frame must be collected first)"
        )
        raise HashError(msg)
    return parse_columns(entries)


_INTS = frozenset({"int8", "int16", "int32", "int64"})
#: The kinds whose values pyarrow would silently change rather than refuse: an int column takes 1.5 (or a Decimal)
#: as 1 and numpy's True as 1, a float column True as 1.0, a date column a datetime as its day, a float32 column
#: 1e39 as Infinity, a list a str as its characters, a struct a dict with a key it has no field for (the key
#: dropped), a string column bytes as their UTF-8 text and a binary column a str as its UTF-8 bytes (a text and
#: its bytes hash differently, section 5); and the timestamps, where pyarrow would guess the zone of a naive value.
_CHECKED = _INTS | {"date", "float32", "float64", "list", "struct", "timestamp", "timestamp_ntz", "string", "binary"}


def _refuse(path: str, tname: str, why: str) -> HashError:
    return HashError(f"rows-v1 cannot hash {path!r} of type {tname}: {why} (docs/rows-v1.md section 11)")


def _check_value(value: object, tree: TypeTree, path: str, tname: str) -> None:
    """Refuse a value that pyarrow would change to fit ``tree`` instead of refusing (docs/backends.md: the types
    the schema names are exactly the types hashed; section 11: refuse rather than guess). ``path`` names the
    column and the field inside it as section 11 writes it."""
    if value is None:
        return
    if tree in ("timestamp", "timestamp_ntz", "date") and isinstance(value, int | float | np.integer | np.floating):
        # pyarrow takes a number as a count of days or microseconds (5.5 truncated to 5): a unit guessed
        kind = "a date" if tree == "date" else "a datetime"
        raise _refuse(path, tname, f"{value!r} is a number, not {kind}: its unit and epoch would be guessed")
    if type(value).__name__ == "NaTType":  # pandas' missing time: no datetime (its nanosecond is NaN)
        raise _refuse(path, tname, "pandas NaT is no value: give None for a missing one")
    if tree in ("timestamp", "timestamp_ntz"):
        if isinstance(value, dt.datetime) and (value.tzinfo is None) == (tree == "timestamp"):
            want = "time-zone aware" if tree == "timestamp" else "naive (wall-clock)"
            why = f"{value!r} is not {want}; a backend must say which instant it means (docs/rows-v1.md section 5.3)"
            raise _refuse(path, tname, why)
        if getattr(value, "nanosecond", 0):  # a pandas Timestamp: Arrow would drop its nanoseconds
            why = (
                f"{value!r} has a non-zero sub-microsecond part; rows-v1 timestamps have microsecond precision "
                "(docs/rows-v1.md section 5.3). Floor it first, e.g. value.floor('us')"
            )
            raise _refuse(path, tname, why)
        return
    if tree in _INTS:
        # pyarrow refuses True but takes numpy's bool (no int subclass) as 0 or 1: both refused here, alike.
        if isinstance(value, bool | np.bool_):
            raise _refuse(path, tname, f"{value!r} is a bool, not an integer (it would become {int(value)})")
        if isinstance(value, float | np.floating | decimal.Decimal):
            kind = "a Decimal" if isinstance(value, decimal.Decimal) else "a float"
            raise _refuse(path, tname, f"{value!r} is {kind}, not an integer (it would be truncated)")
        return
    if tree == "string" and isinstance(value, bytes | bytearray | memoryview):
        why = f"{bytes(value)[:40]!r} is bytes, not text; decode it if the column is text, or name the column binary"
        raise _refuse(path, tname, why)
    if tree == "binary" and isinstance(value, str):
        why = f"{value[:40]!r} is a str, not bytes; encode it if the column is binary, or name the column string"
        raise _refuse(path, tname, why)
    if tree in ("float32", "float64") and isinstance(value, bool | np.bool_):
        raise _refuse(path, tname, f"{value!r} is a bool, not a number (it would become {float(value)})")
    if tree == "date":
        if isinstance(value, dt.datetime):  # a datetime is a date too: its time of day would be dropped
            raise _refuse(path, tname, f"{value!r} is a datetime, not a date; give datetime.date (its .date())")
        return
    if tree == "float32":
        if isinstance(value, float | np.floating | int) and not isinstance(value, bool):
            number = float(value)
            with np.errstate(over="ignore"):  # 3.4028235e38 is above float32's max yet rounds to it, not to inf
                overflows = bool(np.isfinite(number) and np.isinf(np.float32(number)))
            if overflows:
                raise _refuse(path, tname, f"{value!r} is beyond float32's range (it would become infinite)")
        return
    if isinstance(tree, str) or tree[0] == "decimal" or not isinstance(value, Iterable):
        return  # a list, map or struct value that is not one fails to build as Arrow, naming its column
    if isinstance(value, set | frozenset) and tree[0] in ("list", "struct"):
        # no order: as a list or a struct's values it would hash in the order of this process's string hashing
        raise _refuse(path, tname, f"{value!r} is a {type(value).__name__}, which has no order; give a sorted list")
    if tree[0] == "list":
        if isinstance(value, str | bytes):  # a sequence to Python, but one text, not a list of its characters
            raise _refuse(path, tname, f"{value!r} is a {type(value).__name__}, not a list")
        for item in value:
            _check_value(item, tree[1], path + "[]", tname)
    elif tree[0] == "map":
        for k, v in value.items() if isinstance(value, Mapping) else value:
            _check_value(k, tree[1], path + "{key}", tname)
            _check_value(v, tree[2], path + "{value}", tname)
    elif tree[0] == "struct":
        fields = tree[1]
        types = dict(fields)
        if isinstance(value, Mapping):
            extra = sorted(str(k) for k in value if k not in types)
            if extra:
                why = f"the struct value has the key {extra[0]!r}, which is not one of its fields {list(types)}"
                raise _refuse(path, tname, why)
            items = list(value.items())
        elif isinstance(value, str | bytes):
            return  # not a struct: Arrow refuses it, naming the column
        else:
            items = list(zip([n for n, _ in fields], value, strict=False))
            if len(items) != len(fields) or len(list(value)) != len(fields):
                why = f"the struct value {value!r} has {len(list(value))} values for its {len(fields)} fields"
                raise _refuse(path, tname, why)
        for n, v in items:
            _check_value(v, types[n], f"{path}.{n}", tname)


def port_to_arrow(frame: RowsFrame) -> pa.Table:
    """The Arrow table of a :class:`RowsFrame`, typed by its rows-v1 schema (what hash_frame hashes)."""
    columns = port_schema(frame)
    names = [name for name, _, _ in columns]
    known = set(names)
    cells: list[list[Any]] = [[] for _ in columns]
    for i, row in enumerate(frame.collect()):
        if isinstance(row, Mapping):
            extra = sorted(set(row) - known)
            if extra:
                msg = f"rows-v1 cannot hash row {i}: column {extra[0]!r} is not in the frame's schema {names}"
                raise HashError(msg)
            values: Sequence[Any] = [row.get(n) for n in names]
        else:
            values = tuple(row)
            if len(values) != len(names):
                msg = f"rows-v1 cannot hash row {i}: it has {len(values)} values for the {len(names)} columns {names}"
                raise HashError(msg)
        for col, value in zip(cells, values, strict=True):
            col.append(value)
    arrays = []
    for (name, tname, tree), col in zip(columns, cells, strict=True):
        if type_kinds(tree) & _CHECKED:
            for value in col:
                _check_value(value, tree, name, tname)
        try:
            arrays.append(pa.array(col, type=arrow_type(tree)))
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            msg = f"rows-v1 cannot hash column {name!r} of type {tname}: its values do not fit the type ({exc})"
            raise HashError(msg) from None
    return pa.Table.from_arrays(arrays, schema=pa.schema([(n, a.type) for n, a in zip(names, arrays, strict=True)]))


__all__ = ["RowsFrame", "is_rows_frame", "port_schema", "port_to_arrow"]
