"""The rows-v1 conformance vectors (tests/vectors/, docs/rows-v1.md section 10) as Arrow tables.

Every engine builds its tables from these: a backend under test turns the Arrow table into its own frame.

Example:
    >>> parse_type('list<struct<"m":map<string,int64>>>')
    ('list', ('struct', (('m', ('map', 'string', 'int64')),)))
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import re
from dataclasses import dataclass
from pathlib import Path
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
    """Parse a rows-v1 type name (docs/rows-v1.md section 7) into a small tree."""
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
            fname, end = json.JSONDecoder().raw_decode(rest)
            ftype, rest = _parse(_expect(rest[end:], ":"))
            fields.append((fname, ftype))
        return ("struct", tuple(fields)), rest[1:]
    m = re.match(r"decimal\((\d+),(\d+)\)", s)
    if m:
        return ("decimal", int(m.group(1)), int(m.group(2))), s[m.end() :]
    m = re.match(r"[a-z0-9_]+", s)
    if not m or m.group(0) not in _SIMPLE:
        raise ValueError(f"unknown rows-v1 type at {s!r}")
    return m.group(0), s[m.end() :]


def _expect(s: str, token: str) -> str:
    if not s.startswith(token):
        raise ValueError(f"expected {token!r} at {s!r}")
    return s[len(token) :]


def arrow_type(tree: TypeTree) -> pa.DataType:
    """The Arrow type a rows-v1 type tree is built as."""
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


def cell_value(cell: Any, tree: TypeTree) -> Any:
    """A vector cell (section 10's JSON form) as the Python value pyarrow builds from."""
    if cell is None:
        return None
    if isinstance(cell, bool | int | str):
        return cell
    ((tag, v),) = cell.items()
    if tag == "float":
        return float(v)
    if tag == "decimal":
        return decimal.Decimal(v)
    if tag == "base64":
        return base64.b64decode(v)
    if tag == "date":
        return dt.date.fromisoformat(v)
    if tag == "timestamp":
        return dt.datetime.fromisoformat(v).astimezone(dt.UTC)
    if tag == "timestamp_ntz":
        return dt.datetime.fromisoformat(v)
    if tag == "list":
        return [cell_value(c, tree[1]) for c in v]
    if tag == "map":
        return [(cell_value(k, tree[1]), cell_value(x, tree[2])) for k, x in v]
    if tag == "struct":
        types = dict(tree[1])
        return {n: cell_value(c, types[n]) for n, c in v.items()}
    raise ValueError(f"unknown cell tag {tag!r}")


@dataclass(frozen=True)
class Vector:
    """One conformance vector: its input table and what rows-v1 must give for it."""

    name: str
    columns: list[tuple[str, str]]
    rows: list[list[Any]]
    expected: dict[str, Any]

    def arrow(self) -> pa.Table:
        """The vector's table as Arrow (timestamps as UTC microseconds, dates as date32)."""
        trees = [parse_type(t) for _, t in self.columns]
        arrays = [
            pa.array([cell_value(row[i], trees[i]) for row in self.rows], arrow_type(trees[i]))
            for i in range(len(self.columns))
        ]
        return pa.Table.from_arrays(
            arrays, schema=pa.schema([(n, a.type) for (n, _), a in zip(self.columns, arrays, strict=True)])
        )


def load_vectors(folder: Path) -> list[Vector]:
    """Every ``*.json`` vector in a folder, sorted by file name."""
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        columns = [(c["name"], c["type"]) for c in data["columns"]]
        out.append(Vector(data["name"], columns, data["rows"], data["expected"]))
    return out
