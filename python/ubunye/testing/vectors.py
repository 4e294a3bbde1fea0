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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from ubunye.hashing.typenames import TypeTree, arrow_type, parse_type


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


__all__ = ["TypeTree", "Vector", "arrow_type", "cell_value", "load_vectors", "parse_type"]
