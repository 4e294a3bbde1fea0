"""rows-v1 type names (docs/rows-v1.md section 7) parsed into a small tree, and the Arrow type each is built as.

The reverse direction, Arrow type to name, is :func:`ubunye.hashing.types.type_name`. The port
(:mod:`ubunye.hashing.port`) and the conformance vectors (:mod:`ubunye.testing.vectors`) both build tables here.

Example:
    >>> parse_type('list<struct<"m":map<string,int64>>>')
    ('list', ('struct', (('m', ('map', 'string', 'int64')),)))
    >>> arrow_type(parse_type("map<string,decimal(10,2)>"))
    MapType(map<string, decimal128(10, 2)>)
"""

from __future__ import annotations

import json
import re
from typing import Any

import pyarrow as pa

TypeTree = Any  # a name like "int64", or ("list", T) / ("map", K, V) / ("struct", ((name, T), ...)) / ("decimal", p, s)

_SIMPLE = {
    "int8": pa.int8(),
    "int16": pa.int16(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "string": pa.string(),
    "binary": pa.binary(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
}


def parse_type(name: str) -> TypeTree:
    """Parse a rows-v1 type name into a tree; ValueError saying where the name stops making sense."""
    tree, rest = _parse(name)
    if rest:
        raise ValueError(f"trailing text {rest!r} after type in {name!r}")
    return tree


def _parse(s: str) -> tuple[TypeTree, str]:
    if s.startswith("list<"):
        inner, rest = _parse(s[5:])
        return ("list", inner), _expect(rest, ">")
    if s.startswith("map<"):
        key, rest = _parse(s[4:])
        value, rest = _parse(_expect(rest, ","))
        return ("map", key, value), _expect(rest, ">")
    if s.startswith("struct<"):
        rest = s[7:]
        fields = []
        while not rest.startswith(">"):
            if fields:
                rest = _expect(rest, ",")
            try:
                fname, end = json.JSONDecoder().raw_decode(rest)
            except json.JSONDecodeError:
                raise ValueError(f"expected a quoted field name at {rest!r}") from None
            ftype, rest = _parse(_expect(rest[end:], ":"))
            fields.append((fname, ftype))
        return ("struct", tuple(fields)), rest[1:]
    m = re.match(r"decimal\((\d+),(\d+)\)", s)
    if m:
        p, sc = int(m.group(1)), int(m.group(2))
        if not 1 <= p <= 38 or sc > p:
            raise ValueError(f"decimal({p},{sc}) is not a rows-v1 type (1 <= precision <= 38, scale <= precision)")
        return ("decimal", p, sc), s[m.end() :]
    m = re.match(r"[a-z0-9_]+", s)
    if not m or m.group(0) not in _SIMPLE:
        raise ValueError(f"unknown rows-v1 type at {s!r}")
    return m.group(0), s[m.end() :]


def _expect(s: str, token: str) -> str:
    if not s.startswith(token):
        raise ValueError(f"expected {token!r} at {s!r}")
    return s[len(token) :]


def arrow_type(tree: TypeTree) -> pa.DataType:
    """The Arrow type a rows-v1 type tree is built as (timestamps: microseconds, UTC for ``timestamp``)."""
    if isinstance(tree, str):
        return _SIMPLE[tree]
    kind = tree[0]
    if kind == "list":
        return pa.list_(arrow_type(tree[1]))
    if kind == "map":
        return pa.map_(arrow_type(tree[1]), arrow_type(tree[2]))
    if kind == "decimal":
        return pa.decimal128(tree[1], tree[2])
    return pa.struct([(n, arrow_type(t)) for n, t in tree[1]])
