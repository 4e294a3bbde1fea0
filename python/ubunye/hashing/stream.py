"""Frames read through the Arrow C stream interface (polars, DuckDB, ...): ``__arrow_c_stream__`` to a table.

A producer may export a column in a format that is not Arrow's (polars exports ``Int128`` as ``_pli128``); pyarrow
then refuses the whole stream without saying which column. Such a type is not a rows-v1 type (docs/rows-v1.md
section 11), and the error must name the column: the stream's C schema (``struct ArrowSchema`` of the Arrow C data
interface) is read here, field by field, to find it.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable
from typing import Protocol

import pyarrow as pa

from ubunye.exceptions import HashError

# The formats of the Arrow C data interface (format strings section of its specification).
_STANDARD = re.compile(
    r"[nbcCsSiIlLefgzZuU]|v[zu]|d:\d+,\d+(,\d+)?|w:\d+|td[Dm]|tt[smun]|ts[smun]:.*|tD[smun]|ti[MDn]"
    r"|\+[lL]|\+v[lL]|\+w:\d+|\+s|\+m|\+u[ds]:[\d,]*|\+r"
)
# Non-standard formats known by name, with what to do about them.
_KNOWN = {
    "_pli128": ("Int128", "integers wider than 64 bits are not rows-v1 types; cast to Int64 or to Decimal(38, 0)"),
    "_plu128": ("UInt128", "integers wider than 64 bits are not rows-v1 types; cast to Int64 or to Decimal(38, 0)"),
}


class ArrowStream(Protocol):
    """A frame exporting the Arrow C stream interface: ``__arrow_c_stream__`` returns a PyCapsule."""

    def __arrow_c_stream__(self, requested_schema: object = None) -> object: ...


class _Schema(ctypes.Structure):
    pass


_Schema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_void_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(_Schema))),
    ("dictionary", ctypes.POINTER(_Schema)),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(_Schema))),
    ("private_data", ctypes.c_void_p),
]


class _Stream(ctypes.Structure):
    pass


_Stream._fields_ = [
    ("get_schema", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_Stream), ctypes.POINTER(_Schema))),
    ("get_next", ctypes.c_void_p),
    ("get_last_error", ctypes.c_void_p),
    ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p),
]


def _odd_field(schema: _Schema, path: str) -> tuple[str, str] | None:
    """The first (path, format) under ``schema`` whose format is not Arrow's; paths as section 11 writes them."""
    fmt = (schema.format or b"").decode("utf-8", "replace")
    if not _STANDARD.fullmatch(fmt):
        return path, fmt
    if schema.dictionary:
        found = _odd_field(schema.dictionary.contents, path)
        if found:
            return found
    children = [schema.children[i].contents for i in range(schema.n_children)]
    if fmt == "+m":  # one child, the entries struct of (key, value)
        entries = children[0]
        parts = [(entries.children[i].contents, "{key}" if i == 0 else "{value}") for i in range(entries.n_children)]
    elif fmt == "+s":
        parts = [(c, f".{(c.name or b'').decode('utf-8', 'replace')}") for c in children]
    else:
        parts = [(c, "[]") for c in children]
    for child, step in parts:
        found = _odd_field(child, path + step)
        if found:
            return found
    return None


def _find_odd_column(frame: ArrowStream) -> tuple[str, str, str] | None:
    """(column, path, format) of the first column or field whose Arrow format is not Arrow's, if one is found."""
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    capsule = frame.__arrow_c_stream__()  # its destructor releases the stream
    stream = _Stream.from_address(get_pointer(capsule, b"arrow_array_stream"))
    schema = _Schema()
    if stream.get_schema(ctypes.pointer(stream), ctypes.pointer(schema)) != 0:
        return None
    try:
        columns = [schema.children[i].contents for i in range(schema.n_children)]
        for column in columns:
            name = (column.name or b"").decode("utf-8", "replace")
            found = _odd_field(column, name)
            if found:
                return (name, *found)
        return None
    finally:
        if schema.release:
            schema.release(ctypes.pointer(schema))


def stream_to_arrow(frame: ArrowStream) -> pa.Table:
    """The Arrow table of a frame exposing ``__arrow_c_stream__``; a column Arrow cannot import is a HashError.

    Example:
        >>> import polars as pl
        >>> stream_to_arrow(pl.DataFrame({"n": [1, 2]})).column("n").to_pylist()
        [1, 2]
        >>> stream_to_arrow(pl.DataFrame({"big": pl.Series([1], dtype=pl.Int128)}))
        Traceback (most recent call last):
        ubunye.exceptions.HashError: rows-v1 cannot hash column 'big' of type Int128 (Arrow format '_pli128'): ...
    """
    _refuse_polars_objects(frame)
    try:
        return pa.table(frame)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        kind = f"{type(frame).__module__}.{type(frame).__name__}"
        try:
            found = _find_odd_column(frame)
        except (AttributeError, TypeError, ValueError):  # not a capsule we can read: keep Arrow's own words
            found = None
        if found is None:
            raise HashError(
                f"rows-v1 cannot read the {kind} through Arrow ({exc}) (docs/rows-v1.md section 11)"
            ) from exc
        column, path, fmt = found
        name, why = _KNOWN.get(fmt, (None, f"Arrow cannot import it ({exc}), so it is not a rows-v1 type"))
        if path == column:
            where, shown = f"column {column!r}", _frame_type(frame, column) or name or fmt
        else:
            where, shown = f"field {path!r} of column {column!r}", name or fmt
        msg = f"rows-v1 cannot hash {where} of type {shown} (Arrow format {fmt!r}): {why} (docs/rows-v1.md section 11)"
        raise HashError(msg) from exc


def _first(dtype: object, path: str, hit: Callable[[object, str], bool]) -> str | None:
    """The path of the first part of a polars type for which ``hit(dtype, path)`` holds: ``dtype`` itself, a list's
    or array's items (``path[]``), a struct's fields (``path.name``), at any depth."""
    if hit(dtype, path):
        return path
    inner = getattr(dtype, "inner", None)
    if inner is not None:
        return _first(inner, path + "[]", hit)
    for field in getattr(dtype, "fields", None) or ():
        found = _first(getattr(field, "dtype", None), f"{path}.{getattr(field, 'name', '')}", hit)
        if found:
            return found
    return None


def _polars_object(dtype: object, path: str) -> str | None:
    """The path of the first polars ``Object`` in ``dtype`` (itself, a list's or array's items, a struct's fields)."""

    def is_object(kind: object, _: str) -> bool:  # an instance or the class
        return type(kind).__name__ == "Object" or getattr(kind, "__name__", None) == "Object"

    return _first(dtype, path, is_object)


def nul_name(dtype: object, path: str) -> str | None:
    """The path of the first name holding NUL in a polars column named ``path`` of type ``dtype``: the column's
    own, or a struct field's at any depth. polars panics exporting such a name to Arrow (a Rust panic that aborts
    the process when hashed, a PanicException, no Exception, when written): every caller asks this first.

    Example:
        >>> import polars as pl
        >>> nul_name(pl.List(pl.Struct({"a" + chr(0): pl.Int64})), "s") == "s[].a" + chr(0)
        True
    """
    return _first(dtype, path, lambda _, where: "\x00" in where)


def _refuse_polars_objects(frame: object) -> None:
    """A HashError for a polars ``Object`` column (arbitrary Python objects, section 11): polars exports one as
    ``fixed_size_binary[8]`` holding the objects' memory addresses, which Arrow reads without complaint and which
    would be hashed as if they were data, differently on every run."""
    module = type(frame).__module__
    if not (module == "polars" or module.startswith("polars.")):
        return
    schema = getattr(frame, "schema", None)
    if schema is not None:
        columns = list(schema.items())
    else:  # a polars Series: one column, its dtype
        columns = [(str(getattr(frame, "name", "")), getattr(frame, "dtype", None))]
    for name, dtype in columns:
        nul = nul_name(dtype, name)
        if nul is not None:  # polars panics exporting it: the whole process aborts, nothing to catch
            where = f"column {name!r}" if nul == name else f"field {nul!r} of column {name!r}"
            raise HashError(f"rows-v1 cannot read {where} from polars: its name holds a NUL character, which "
                            "polars cannot export to Arrow (it aborts the process); rename it")  # fmt: skip
        path = _polars_object(dtype, name)
        if path is not None:
            where = f"column {name!r}" if path == name else f"field {path!r} of column {name!r}"
            msg = (
                f"rows-v1 cannot hash {where} of polars type Object: it holds arbitrary Python objects, which "
                "polars exports as their memory addresses; cast it to a rows-v1 type (docs/rows-v1.md sections 7 "
                "and 11)"
            )
            raise HashError(msg)


def _frame_type(frame: object, column: str) -> str | None:
    """The frame's own name for a column's type (polars: ``frame.schema[name]``), when it has one."""
    try:
        schema = getattr(frame, "schema", None)
        return str(schema[column]) if schema is not None and column in schema else None
    except (AttributeError, TypeError, KeyError):
        return None
