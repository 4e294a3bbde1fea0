"""The rows-v1 conformance vectors (tests/vectors/, docs/rows-v1.md section 10) as Arrow tables.

Every engine builds its tables from these: a backend under test turns the Arrow table into its own frame.

Example:
    >>> cell_value({"list": [{"decimal": "1.50"}, None]}, ("list", ("decimal", 3, 2)))
    [Decimal('1.50'), None]
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

from ubunye.hashing.types import TypeTree, arrow_type, format_type, parse_type


def cell_value(cell: object, tree: TypeTree) -> object:
    """A vector cell (section 10's JSON form) as the Python value pyarrow builds from."""
    if cell is None:
        return None
    if isinstance(cell, bool | int | str):
        return cell
    if not isinstance(cell, dict) or len(cell) != 1:
        raise ValueError(f"a vector cell is null, a boolean, a number, a string or {{tag: value}}, not {cell!r}")
    ((tag, v),) = cell.items()
    if tag == "float":
        return float(v)
    if tag == "decimal":
        return decimal.Decimal(v)
    if tag == "base64":
        return base64.b64decode(v)
    if tag == "string_bytes":
        return bytes.fromhex(v)  # a string's bytes, maybe not UTF-8: built through binary (Vector.arrow)
    if tag == "date":
        return dt.date.fromisoformat(v)
    if tag == "timestamp":
        return dt.datetime.fromisoformat(v).astimezone(dt.timezone.utc)
    if tag == "timestamp_ntz":
        return dt.datetime.fromisoformat(v)
    if tag in ("list", "map", "struct"):
        return _nested(tag, v, tree)
    raise ValueError(f"unknown cell tag {tag!r}")


def _nested(tag: str, v: object, tree: TypeTree) -> object:
    """A list, map or struct cell (a JSON list, a list of pairs, an object), its items built by its column's type
    (which must be of the cell's kind)."""
    if isinstance(tree, str) or tree[0] != tag:
        raise ValueError(f"a {tag} cell in a column of type {format_type(tree)}")
    if tree[0] == "list" and isinstance(v, list):
        return [cell_value(c, tree[1]) for c in v]
    if tree[0] == "map" and isinstance(v, list):
        return [(cell_value(k, tree[1]), cell_value(x, tree[2])) for k, x in v]
    if tree[0] == "struct" and isinstance(v, dict):
        types = dict(tree[1])
        return {n: cell_value(c, types[n]) for n, c in v.items()}
    raise ValueError(f"a {tag} cell holds {type(v).__name__}, not its kind's JSON form")


@dataclass(frozen=True)
class Vector:
    """One conformance vector: its input table and what rows-v1 must give for it.

    ``expected_profile`` is what profile-v1 must give (docs/rows-v1.md section 12.4): ``columns`` (name to
    ``type``, ``nulls``, ``nans``, ``sum1``, ``sum2``, ``fingerprint``) and ``buckets`` (cases ``{"n", "key",
    "buckets": [[index, count, sum1, sum2], ...]}``, sums as hex16); None for a vector file written before it.
    """

    name: str
    columns: list[tuple[str, str]]
    rows: list[list[Any]]
    expected: dict[str, Any]
    expected_profile: dict[str, Any] | None = None

    def arrow(self) -> pa.Table:
        """The vector's table as Arrow (timestamps as UTC microseconds, dates as date32).

        A column holding ``string_bytes`` cells is built with binary in place of its strings, then cast to its
        type without UTF-8 validation: Arrow strings can hold such bytes, as Spark's do (section 4.1).
        """
        trees = [parse_type(t) for _, t in self.columns]
        arrays = []
        for i, tree in enumerate(trees):
            cells = [row[i] for row in self.rows]
            values = [cell_value(c, tree) for c in cells]
            if any(_has_bytes(c) for c in cells):
                arrays.append(_unchecked(pa.array(values, arrow_type(_strings_as_binary(tree))), arrow_type(tree)))
            else:
                arrays.append(pa.array(values, arrow_type(tree)))
        return pa.Table.from_arrays(
            arrays, schema=pa.schema([(n, a.type) for (n, _), a in zip(self.columns, arrays, strict=True)])
        )


def _has_bytes(cell: object) -> bool:
    if isinstance(cell, dict):
        return "string_bytes" in cell or any(_has_bytes(v) for v in cell.values())
    if isinstance(cell, list):
        return any(_has_bytes(v) for v in cell)
    return False


def _unchecked(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """``arr`` (binary in place of strings) as ``target`` without UTF-8 validation. A map is rebuilt from its keys
    and items cast alone: pyarrow 15 aborts the process (a failed C++ check, "Map array keys array should have no
    nulls") casting a map whose struct keys hold such strings; lists and structs are rebuilt around a map inside."""
    t = arr.type
    if pa.types.is_map(t) or ((pa.types.is_list(t) or pa.types.is_large_list(t)) and _holds_map(t)):
        offsets = arr.offsets
        if arr.null_count:  # a null offset marks a null slot for from_arrays
            valid = [*arr.is_valid().to_pylist(), True]
            offsets = pa.array(
                [o if v else None for o, v in zip(offsets.to_pylist(), valid, strict=True)], offsets.type
            )
        if pa.types.is_map(t):
            entries = arr.values  # struct<key, value>, every slot's
            keys = _unchecked(entries.field(0), target.key_type)
            items = _unchecked(entries.field(1), target.item_type)
            built = pa.MapArray.from_arrays(offsets, keys, items)  # pyarrow 14 takes no type=
            return built if built.type == target else built.cast(target)
        cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
        built = cls.from_arrays(offsets, _unchecked(arr.values, target.value_type))
        return built if built.type == target else built.cast(target)
    if pa.types.is_struct(t) and _holds_map(t):
        children = [_unchecked(arr.field(i), target.field(i).type) for i in range(t.num_fields)]
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    return arr.cast(target, safe=False)


def _holds_map(t: pa.DataType) -> bool:
    return pa.types.is_map(t) or any(_holds_map(t.field(i).type) for i in range(t.num_fields))


def _strings_as_binary(tree: TypeTree) -> TypeTree:
    if tree == "string":
        return "binary"
    if isinstance(tree, str) or tree[0] == "decimal":
        return tree
    if tree[0] == "struct":
        return ("struct", tuple((n, _strings_as_binary(t)) for n, t in tree[1]))
    if tree[0] == "list":
        return ("list", _strings_as_binary(tree[1]))
    return ("map", _strings_as_binary(tree[1]), _strings_as_binary(tree[2]))


def load_vectors(folder: Path) -> list[Vector]:
    """Every ``*.json`` vector in a folder, sorted by file name (``folder / "bytes"`` holds the vectors whose
    strings are not all UTF-8: only engines whose strings can hold such bytes build them, section 10)."""
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        columns = [(c["name"], c["type"]) for c in data["columns"]]
        out.append(Vector(data["name"], columns, data["rows"], data["expected"], data.get("expected_profile")))
    return out


__all__ = ["Vector", "cell_value", "load_vectors"]
