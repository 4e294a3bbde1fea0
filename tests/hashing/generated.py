"""Adversarial tables, generated, for comparing the engines ON THE SAME TABLE (docs/rows-v1.md).

A generated table is a list of columns (name, rows-v1 type tree) and rows of cells in the conformance vectors' JSON
form (section 10), so tests/vectors/derive.py (the project's independent oracle) derives what every engine must give.
From one generated table this module builds:

- :func:`arrow_layouts`: the same logical table in many Arrow layouts (large/view strings and binaries, dictionaries
  with unused entries, null dictionary values and unsigned indices, decimal32..256, date64, timestamps in every unit
  and zone, list/large_list/list_view/fixed_size_list, struct fields reordered, map entries shuffled, NaN payloads,
  null slots covering values, offsets not starting at zero, sliced arrays, chunks with empty chunks);
- :func:`pandas_frame`: a pandas frame with numpy, nullable, string, categorical, datetime64 (every unit, zones),
  object (str, bytes, date, Decimal) and ArrowDtype columns, and the columns rows-v1 must then see (an object
  column of ``Decimal`` gets the decimal type section 7 infers, derived here from the spec's words);
- :func:`spark_safe` narrows a generated table to what Spark can hold (unique map keys without floats, no
  invalid UTF-8, plain names).

Everything is driven by one ``random.Random``: a failing seed is the whole reproduction.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import itertools
import json
import math
import random
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from tests.vectors.derive import expected, type_name
from ubunye.testing.vectors import Vector

# What the floors' pyarrow (14 and 15, `make floors`) lacks: view types (16), decimal32/64 (18), a mask for
# MapArray.from_arrays (17: null map slots are null offsets there, covering no entries). Layouts of those are left
# out there: no table of them can reach the twin.
_VIEWS = hasattr(pa, "string_view")
# pyarrow 19's cast to a view type leaves a null variadic-buffer pointer (three buffers, the third None), and polars
# 2.1's from_arrow ends the whole process on such an array (SIGSEGV; pyarrow 19.0.1, Databricks 17.3 LTS's; pyarrow
# 26's cast leaves no third buffer): polars layouts take no view cast there.
_POLARS_VIEWS = _VIEWS and len(pa.array([b"a"]).cast(pa.binary_view()).buffers()) == 2
_NARROW_DECIMALS = hasattr(pa, "decimal32")
_MAP_MASK = int(pa.__version__.split(".")[0]) >= 17
# A dictionary holding a null value, in chunks inside a list, map or struct: refused before pyarrow 16 (HashError).
_DICT_NULLS = int(pa.__version__.split(".")[0]) >= 16
# pyarrow 25.0.1 (the newest for Python 3.10) aborts the process (a C++ check: "Map array keys array should have no
# nulls") combining the chunks of a map whose struct keys hold one (generated seed 24): such dictionaries are not
# generated before pyarrow 26 (not guarded by the twin yet; 16 to 24 not measured).
_GENERATE_DICT_NULLS = int(pa.__version__.split(".")[0]) >= 26

INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
LEAVES = [*INTS, "bool", "float32", "float64", "string", "binary", "date", "timestamp", "timestamp_ntz", "decimal"]
# Names that sort differently by code point and by UTF-16, differ only in case, need escaping, or hold dots.
NAMES = ["a", "A", "b", "id", "é", "\uff61", "\U0001f600", "a.b", "x y", 'q"t', "back\\slash", "tab\t", "z", "0", "ß"]
SPARK_NAMES = ["a", "A", "b", "id", "é", "\uff61", "\U0001f600", "a.b", "x y", "z", "0", "ß", "c_1"]
# Text that needs escaping, sorts oddly, or is not the BMP.
CHARS = ['"', "\\", "\x00", "\x01", "\x08", "\t", "\n", "\x0c", "\r", "\x1f", "\x7f", "/", "\u2028", "\u2029"]
CHARS += ["é", "\uff61", "\U0001f600", "\ufffd", "a", "b", "Z", " ", "0", "\u0301", "\U0010ffff"]
BAD_UTF8 = ["61FF62", "C3", "80", "E282", "EDA080", "F0908080", "C080", "EDA0", "F4908080"]
ZONES = ["UTC", "Pacific/Chatham", "Asia/Kathmandu", "America/St_Johns", "+05:45", "-09:30", "Etc/GMT+12"]
OFFSETS = ["+00:00", "+12:45", "-03:30", "+05:45", "-11:00", "+14:00"]
SPECIAL64 = ["NaN", "Infinity", "-Infinity", "-0.0", "0.0", "5e-324", "1e-323", "2e-323", "1e23", "0.001", "1e7"]
SPECIAL64 += ["9999999.999999998", "2.82879384806159E17", "1.9400994884341945E25", "1.7976931348623157e308"]
SPECIAL64 += ["2.2250738585072014e-308", "-1e-3", "0.1", "1234567.0"]
SPECIAL32 = ["NaN", "Infinity", "-Infinity", "-0.0", "1.401298464324817e-45", "3.4028234663852886e38", "0.1"]
SPECIAL32 += ["1.1754943508222875e-38", "16777216.0", "1e7", "0.0010000000474974513"]
_EPOCH = dt.datetime(1970, 1, 1)
_MIN_US = (dt.datetime(1, 1, 2) - _EPOCH) // dt.timedelta(microseconds=1)
_MAX_US = (dt.datetime(9999, 12, 30) - _EPOCH) // dt.timedelta(microseconds=1)
# pandas' and Arrow's nanoseconds reach 1677-09-21 .. 2262-04-11
_NS_MIN_US = (dt.datetime(1678, 1, 1) - _EPOCH) // dt.timedelta(microseconds=1)
_NS_MAX_US = (dt.datetime(2262, 1, 1) - _EPOCH) // dt.timedelta(microseconds=1)


@dataclass(frozen=True)
class Options:
    """What a generated table may hold: ``spark`` (what Spark can hold), ``bad_utf8`` (string cells whose bytes
    are not UTF-8: Arrow and Spark only), ``depth`` of nesting, rows and columns."""

    spark: bool = False
    bad_utf8: bool = False
    depth: int = 2
    max_rows: int = 8
    max_columns: int = 5
    leaves: tuple[str, ...] = tuple(LEAVES)


@dataclass
class Table:
    """A generated table: columns (name, rows-v1 type tree) and rows of vector cells (section 10)."""

    columns: list[tuple[str, Any]]
    rows: list[list[Any]]
    # per column: the grain of its timestamps (1, 1000 or 1_000_000 microseconds) and whether they fit nanoseconds
    grains: list[int] = field(default_factory=list)

    @property
    def typed(self) -> list[tuple[str, str]]:
        return [(n, type_name(t)) for n, t in self.columns]

    def expected(self) -> dict[str, Any]:
        return expected(self.typed, self.rows)

    def arrow(self) -> pa.Table:
        """The canonical Arrow table (microsecond UTC timestamps, date32, list, decimal128) of the rows."""
        return Vector("generated", self.typed, self.rows, {}).arrow()

    def column_cells(self, i: int) -> list[Any]:
        return [r[i] for r in self.rows]

    def __repr__(self) -> str:
        return f"Table(columns={self.typed!r}, rows={json.dumps(self.rows, ensure_ascii=True)})"


# --- types --------------------------------------------------------------------------------------------------------


def gen_leaf(rng: random.Random, opts: Options, key: bool = False) -> Any:
    choices = list(opts.leaves)
    if key and opts.spark:
        choices = [c for c in choices if c not in ("float32", "float64")]  # Spark normalizes -0.0 and NaN keys
    name = rng.choice(choices)
    if name == "decimal":
        p = rng.choice([1, 2, 5, 9, 10, 18, 19, 20, 37, 38, 38])
        s = rng.choice([0, p, rng.randint(0, p), min(p, 7), min(p, 18)])
        return ("decimal", p, s)
    return name


def gen_key_type(rng: random.Random, opts: Options) -> Any:
    """A map key type: mostly a leaf, sometimes a list or a struct of leaves (their key text is their JSON)."""
    r = 1.0 if opts.spark else rng.random()  # pyspark builds no map of list or struct keys from Python rows
    if r < 0.1:
        return ("list", gen_leaf(rng, opts, key=True))
    if r < 0.2:
        names = rng.sample(SPARK_NAMES if opts.spark else NAMES, rng.randint(1, 2))
        return ("struct", tuple((n, gen_leaf(rng, opts, key=True)) for n in names))
    return gen_leaf(rng, opts, key=True)


def gen_type(rng: random.Random, opts: Options, depth: int | None = None) -> Any:
    depth = opts.depth if depth is None else depth
    if depth > 0 and rng.random() < 0.35:
        kind = rng.choice(["list", "struct", "map"])
        if kind == "list":
            return ("list", gen_type(rng, opts, depth - 1))
        if kind == "map":
            return ("map", gen_key_type(rng, opts), gen_type(rng, opts, depth - 1))
        names = rng.sample(SPARK_NAMES if opts.spark else NAMES, rng.randint(1, 3))
        return ("struct", tuple((n, gen_type(rng, opts, depth - 1)) for n in names))
    return gen_leaf(rng, opts)


# --- values (vector cells) ------------------------------------------------------------------------------------------


def _float_text(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)


def _micros_text(us: int, zone: str | None) -> str:
    utc = _EPOCH + dt.timedelta(microseconds=us)
    if zone is None:
        return utc.isoformat(timespec="microseconds")
    sign = -1 if zone[0] == "-" else 1
    offset = dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])) * sign
    wall = utc.replace(tzinfo=dt.timezone.utc).astimezone(dt.timezone(offset))
    return wall.isoformat(timespec="microseconds")


@dataclass
class _Ctx:
    grain: int  # timestamps are whole multiples of this many microseconds
    narrow: bool  # timestamps within nanosecond range


def gen_value(rng: random.Random, tree: Any, opts: Options, ctx: _Ctx) -> Any:
    """One non-null cell of ``tree`` in the vectors' JSON form."""
    if tree in INTS:
        b = INTS[tree]
        lo, hi = -(2 ** (b - 1)), 2 ** (b - 1) - 1
        return rng.choice([lo, hi, 0, -1, 1, lo + 1]) if rng.random() < 0.3 else rng.randint(lo, hi)
    if tree == "bool":
        return rng.random() < 0.5
    if tree == "float64":
        if rng.random() < 0.4:
            return {"float": rng.choice(SPECIAL64)}
        if rng.random() < 0.5:
            return {"float": _float_text(rng.choice([-1, 1]) * rng.randint(0, 10**6) / rng.choice([1, 8, 100, 3]))}
        (x,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        return {"float": _float_text(x)}
    if tree == "float32":
        if rng.random() < 0.4:
            return {"float": rng.choice(SPECIAL32)}
        x32 = np.frombuffer(rng.getrandbits(32).to_bytes(4, "little"), dtype=np.float32)[0]
        return {"float": _float_text(float(x32))}
    if tree == "string":
        if opts.bad_utf8 and rng.random() < 0.25:
            return {"string_bytes": rng.choice(BAD_UTF8) + rng.choice(["", "41", "22"])}
        return "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 5)))
    if tree == "binary":
        return {"base64": base64.b64encode(rng.randbytes(rng.randint(0, 6))).decode()}
    if tree == "date":
        edges = ["1970-01-01", "1969-12-31", "0001-01-01", "9999-12-31", "1582-10-04", "1582-10-15", "2024-02-29"]
        if rng.random() < 0.3:
            return {"date": rng.choice(edges)}
        return {"date": (dt.date(1, 1, 1) + dt.timedelta(days=rng.randint(0, 3_652_058))).isoformat()}
    if tree in ("timestamp", "timestamp_ntz"):
        lo, hi = (_NS_MIN_US, _NS_MAX_US) if ctx.narrow else (_MIN_US, _MAX_US)
        us = rng.choice([0, -ctx.grain, ctx.grain, lo, hi]) if rng.random() < 0.25 else rng.randint(lo, hi)
        us -= us % ctx.grain
        zone = rng.choice(OFFSETS) if tree == "timestamp" else None
        return {tree: _micros_text(us, zone)}
    if isinstance(tree, tuple) and tree[0] == "decimal":
        _, p, s = tree
        top = 10**p - 1
        u = rng.choice([top, -top, 0, 1, -1, 10 ** max(p - 1, 0)]) if rng.random() < 0.4 else rng.randint(-top, top)
        return {"decimal": str(decimal.Decimal(u).scaleb(-s, context=decimal.Context(prec=100)))}
    if tree[0] == "list":
        return {"list": [gen_cell(rng, tree[1], opts, ctx, 0.25) for _ in range(rng.randint(0, 3))]}
    if tree[0] == "struct":
        return {"struct": {n: gen_cell(rng, t, opts, ctx, 0.3) for n, t in tree[1]}}
    pairs: list[list[Any]] = []
    seen: set[str] = set()
    for _ in range(rng.randint(0, 3)):
        k = gen_value(rng, tree[1], opts, ctx)
        mark = json.dumps(k, sort_keys=True)
        if opts.spark and mark in seen:  # Spark refuses duplicate map keys; Arrow holds them
            continue
        seen.add(mark)
        pairs.append([k, gen_cell(rng, tree[2], opts, ctx, 0.3)])
    if not opts.spark and pairs and rng.random() < 0.15:
        pairs.append([pairs[0][0], gen_cell(rng, tree[2], opts, ctx, 0.3)])  # a duplicate key (section 6)
    return {"map": pairs}


def gen_cell(rng: random.Random, tree: Any, opts: Options, ctx: _Ctx, null_p: float) -> Any:
    return None if rng.random() < null_p else gen_value(rng, tree, opts, ctx)


def gen_table(rng: random.Random, opts: Options | None = None) -> Table:
    opts = opts or Options()
    names = rng.sample(SPARK_NAMES if opts.spark else NAMES, rng.randint(1, opts.max_columns))
    columns = [(n, gen_type(rng, opts)) for n in names]
    n_rows = rng.choice([0, 1, 2, rng.randint(1, opts.max_rows), opts.max_rows])
    ctxs = [_Ctx(rng.choice([1, 1000, 1_000_000]), rng.random() < 0.5) for _ in columns]
    null_ps = [rng.choice([0.0, 0.0, 0.2, 0.5, 1.0]) for _ in columns]
    rows = [[gen_cell(rng, t, opts, ctxs[i], null_ps[i]) for i, (_n, t) in enumerate(columns)] for _ in range(n_rows)]
    return Table(columns, rows, [c.grain for c in ctxs])


def change_one_cell(rng: random.Random, table: Table, opts: Options | None = None) -> Table | None:
    """The table with one cell replaced by a different value (by its canonical line), or None if none was found."""
    opts = opts or Options()
    if not table.rows:
        return None
    before = table.expected()["lines"]
    for _ in range(20):
        r, c = rng.randrange(len(table.rows)), rng.randrange(len(table.columns))
        ctx = _Ctx(table.grains[c], True)
        new = gen_cell(rng, table.columns[c][1], opts, ctx, 0.2)
        rows = [list(x) for x in table.rows]
        rows[r][c] = new
        changed = Table(table.columns, rows, table.grains)
        if changed.expected()["lines"][r] != before[r]:
            return changed
    return None


# --- Arrow layouts ---------------------------------------------------------------------------------------------


def _nan_payloads(arr: pa.Array, rng: random.Random) -> pa.Array:
    """The same floats with every NaN given another bit pattern (sign, quiet/signalling, payload)."""
    values = np.array(arr.to_numpy(zero_copy_only=False), copy=True)
    nan = np.isnan(values) & arr.is_valid().to_numpy(zero_copy_only=False)
    if not nan.any():
        return arr
    if values.dtype == np.float64:
        bits = values.view(np.uint64)
        for i in np.flatnonzero(nan):
            bits[i] = (rng.getrandbits(1) << 63) | 0x7FF0000000000000 | rng.randint(1, 2**52 - 1)
    else:
        bits32 = values.view(np.uint32)
        for i in np.flatnonzero(nan):
            bits32[i] = (rng.getrandbits(1) << 31) | 0x7F800000 | rng.randint(1, 2**23 - 1)
    return pa.array(values, arr.type, mask=arr.is_null().to_numpy(zero_copy_only=False), from_pandas=False)


def _dictionary(arr: pa.Array, rng: random.Random, value_type: pa.DataType | None = None) -> pa.Array:
    """A dictionary array of the same values: unused entries, sometimes a null entry that valid indices point at
    instead of null indices, indices of a random (also unsigned) type."""
    if arr.null_count == len(arr):
        encoded = arr.dictionary_encode()
        return pa.DictionaryArray.from_arrays(encoded.indices, encoded.dictionary.cast(value_type or arr.type))
    encoded = arr.dictionary_encode()
    values, indices = encoded.dictionary, encoded.indices.to_numpy(zero_copy_only=False)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    picks = pa.array(rng.choices(range(max(1, len(values))), k=2), pa.int64())
    extra = arr.filter(arr.is_valid()).take(picks) if len(values) else None
    parts = [values] + ([extra] if extra is not None and len(extra) else [])
    null_entry = _GENERATE_DICT_NULLS and rng.random() < 0.4 and not valid.all()
    if null_entry:
        parts.append(pa.nulls(1, values.type))
    dictionary = pa.concat_arrays(parts)
    order = list(range(len(dictionary)))
    rng.shuffle(order)  # the dictionary in another order; indices follow
    where = np.empty(len(order), dtype=np.int64)
    where[np.array(order, dtype=np.int64)] = np.arange(len(order))
    dictionary = dictionary.take(pa.array(order, pa.int64())).cast(value_type or arr.type, safe=False)
    idx = where[np.where(valid, np.nan_to_num(indices, nan=0).astype(np.int64), 0)]
    mask = ~valid
    if null_entry:
        idx = np.where(valid, idx, where[len(parts[0]) + (len(parts[1]) if len(parts) == 3 else 0)])
        mask = np.zeros(len(arr), dtype=bool)
    index_type = rng.choice([pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32()])
    return pa.DictionaryArray.from_arrays(pa.array(idx, index_type, mask=mask if mask.any() else None), dictionary)


def _slot_ranges(arr: pa.Array) -> list[range]:
    offsets = arr.offsets.to_numpy(zero_copy_only=False)
    return [range(int(offsets[i]), int(offsets[i + 1])) for i in range(len(arr))]


def _list_like(
    arr: pa.Array, tree: Any, rng: random.Random
) -> tuple[list[list[int]], list[bool], pa.Array | tuple[pa.Array, pa.Array]]:
    """Per slot the child indices it holds (null slots: garbage indices of valid children), validity, children."""
    valid = arr.is_valid().to_numpy(zero_copy_only=False).tolist()
    ranges = _slot_ranges(arr)
    n_child = int(arr.offsets.to_numpy()[-1]) if len(arr) else 0
    slots = []
    for r, ok in zip(ranges, valid, strict=True):
        if ok:
            slots.append(list(r))
        else:  # a null slot covering values: they are no value of the table
            slots.append(rng.choices(range(n_child), k=rng.randint(0, 2)) if n_child else [])
    if pa.types.is_map(arr.type):
        return slots, valid, (arr.keys, arr.items)
    return slots, valid, arr.values


def relayout(arr: pa.Array, tree: Any, rng: random.Random, grain: int, narrow: bool, polars: bool = False) -> pa.Array:
    """The same values as ``arr`` (the canonical layout of ``tree``) in a randomly chosen other Arrow layout."""
    if rng.random() < 0.25 and len(arr):
        pad = arr.take(pa.array(rng.choices(range(len(arr)), k=rng.randint(1, 3)), pa.int64()))
        padded = _relayout(pa.concat_arrays([pad, arr, pad]), tree, rng, grain, narrow, polars)
        return padded.slice(len(pad), len(arr))  # an offset into a longer array
    return _relayout(arr, tree, rng, grain, narrow, polars)


def _relayout(arr: pa.Array, tree: Any, rng: random.Random, grain: int, narrow: bool, polars: bool = False) -> pa.Array:
    if tree == "string":
        views = [pa.string_view()] if _VIEWS and (_POLARS_VIEWS or not polars) else []
        kind = rng.choice([pa.string(), pa.large_string(), *views])
        return _dictionary(arr, rng, kind) if rng.random() < 0.3 else arr.cast(kind, safe=False)
    if tree == "binary":
        views = [pa.binary_view()] if _VIEWS and (_POLARS_VIEWS or not polars) else []
        kind = rng.choice([pa.binary(), pa.large_binary(), *views])
        return _dictionary(arr, rng, kind) if rng.random() < 0.2 else arr.cast(kind)
    if tree in ("float32", "float64"):
        arr = _nan_payloads(arr, rng) if rng.random() < 0.7 else arr
        return _dictionary(arr, rng) if rng.random() < 0.15 else arr
    if tree in INTS or tree == "bool":
        return _dictionary(arr, rng) if rng.random() < 0.15 else arr
    if tree == "date":
        arr = arr.cast(pa.date64()) if rng.random() < 0.5 and not polars else arr  # polars reads date64 as Datetime
        return _dictionary(arr, rng) if rng.random() < 0.15 else arr
    if tree in ("timestamp", "timestamp_ntz"):
        units = ["us"] + (["ms"] if grain >= 1000 else []) + (["s"] if grain >= 1_000_000 else [])
        if narrow:
            units.append("ns")
        zone = rng.choice([z for z in ZONES if not (polars and z[0] in "+-")]) if tree == "timestamp" else None
        arr = arr.cast(pa.timestamp(rng.choice(units), tz=zone))
        return _dictionary(arr, rng) if rng.random() < 0.15 else arr
    if tree[0] == "decimal":
        p, s = tree[1], tree[2]
        kinds = [pa.decimal128]
        if not polars:  # polars 2.1 panics on decimal256, and aborts exporting a struct of decimal32 it imported
            kinds += [pa.decimal256]
            if _NARROW_DECIMALS:
                kinds += ([pa.decimal64] if p <= 18 else []) + ([pa.decimal32] if p <= 9 else [])
        arr = arr.cast(rng.choice(kinds)(p, s))
        return _dictionary(arr, rng) if rng.random() < 0.15 and arr.type.bit_width >= 128 else arr
    if tree[0] == "struct":
        names = [n for n, _ in tree[1]]
        types = dict(tree[1])
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        ok = np.flatnonzero(valid)
        # a null struct slot whose fields hold another row's values: they are no value of the table
        take_at = np.array(
            [i if v or not len(ok) else int(rng.choice(ok)) for i, v in enumerate(valid)], dtype=np.int64
        )
        taken_rows = pa.array(take_at, pa.int64())
        children = [_relayout(arr.field(n).take(taken_rows), types[n], rng, grain, narrow, polars) for n in names]
        order = list(range(len(names)))
        rng.shuffle(order)  # fields in another order: one rows-v1 type
        mask = pa.array(~valid) if not valid.all() else None
        return pa.StructArray.from_arrays([children[i] for i in order], names=[names[i] for i in order], mask=mask)
    slots, valid, children = _list_like(arr, tree, rng)
    if tree[0] == "map":
        slots = [rng.sample(s, len(s)) if ok else s for s, ok in zip(slots, valid, strict=True)]  # entry order
        if not _MAP_MASK:  # null slots as null offsets (below), which must cover no entries
            slots = [s if ok else [] for s, ok in zip(slots, valid, strict=True)]
    lead = rng.randint(0, 2) if len(arr) else 0  # values before the first slot's: offsets not starting at 0
    first = [i for s in slots for i in s]
    picked = rng.choices(first, k=lead) if first else []
    taken = pa.array(picked + first, pa.int64())
    sizes = [len(s) for s in slots]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64) + len(picked)
    mask = pa.array([not v for v in valid]) if not all(valid) else None
    if tree[0] == "map":
        keys, items = children
        keys = _relayout(keys.take(taken), tree[1], rng, grain, narrow, polars)
        items = _relayout(items.take(taken), tree[2], rng, grain, narrow, polars)
        if mask is None:
            return pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), keys, items)
        if not _MAP_MASK:
            nulls = np.append(~np.array(valid, dtype=bool), False)
            return pa.MapArray.from_arrays(pa.array(offsets, pa.int32(), mask=nulls), keys, items)
        return pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), keys, items, mask=mask)
    kinds = ["list", "large_list", "fixed"] + ([] if polars or not _VIEWS else ["list_view", "large_list_view"])
    kind = rng.choice(kinds)
    if kind == "fixed" and len(set(sizes)) == 1 and sizes[0] > 0 and not lead:
        child = _relayout(children.take(taken), tree[1], rng, grain, narrow, polars)
        if mask is None:
            return pa.FixedSizeListArray.from_arrays(child, sizes[0])
        try:
            return pa.FixedSizeListArray.from_arrays(child, sizes[0], mask=mask)
        except TypeError:  # no mask before pyarrow 15: a list instead
            kind = "list"
    if kind in ("list_view", "large_list_view"):
        # the views in a shuffled order over a child laid out slot by slot in that order
        order = list(range(len(slots)))
        rng.shuffle(order)
        starts = [0] * len(slots)
        pos = 0
        for i in order:
            starts[i] = pos
            pos += sizes[i]
        laid = [j for i in order for j in range(int(offsets[i]), int(offsets[i]) + sizes[i])]
        view_child = children.take(taken).take(pa.array(laid, pa.int64()))
        view_child = _relayout(view_child, tree[1], rng, grain, narrow, polars)
        cls = pa.ListViewArray if kind == "list_view" else pa.LargeListViewArray
        itype = pa.int32() if kind == "list_view" else pa.int64()
        return cls.from_arrays(pa.array(starts, itype), pa.array(sizes, itype), view_child, mask=mask)
    child = _relayout(children.take(taken), tree[1], rng, grain, narrow, polars)
    if kind == "large_list":
        return pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), child, mask=mask)
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), child, mask=mask)


def arrow_layout(table: Table, rng: random.Random, polars: bool = False) -> pa.Table:
    """The table in one random Arrow layout: every column relaid, chunked (with empty chunks), columns shuffled.
    ``polars``: only layouts polars imports (named zones, no decimal256)."""
    canon = table.arrow()
    columns = []
    for i, (name, tree) in enumerate(table.columns):
        arr = canon.column(i).combine_chunks()
        arr = relayout(arr, tree, rng, table.grains[i], _narrow(table, i), polars)
        cuts = sorted(rng.choices(range(len(arr) + 1), k=rng.randint(0, 3)))
        bounds = [0, *cuts, len(arr)]
        chunks = [arr.slice(a, b - a) for a, b in itertools.pairwise(bounds)]
        columns.append((name, pa.chunked_array(chunks, arr.type)))
    rng.shuffle(columns)
    return pa.table({n: c for n, c in columns}) if columns else canon


def _narrow(table: Table, i: int) -> bool:
    """Whether every timestamp of column i (at any depth) lies within the nanosecond range."""

    def ok(cell: Any) -> bool:
        if cell is None:
            return True
        if isinstance(cell, dict):
            ((tag, v),) = cell.items()
            if tag in ("timestamp", "timestamp_ntz"):
                t = dt.datetime.fromisoformat(v)
                t = t.astimezone(dt.timezone.utc).replace(tzinfo=None) if t.tzinfo else t
                return dt.datetime(1678, 1, 1) <= t <= dt.datetime(2262, 1, 1)
            if tag == "list":
                return all(ok(c) for c in v)
            if tag == "struct":
                return all(ok(c) for c in v.values())
            if tag == "map":
                return all(ok(k) and ok(x) for k, x in v)
        return True

    return all(ok(c) for c in table.column_cells(i))


# --- pandas -------------------------------------------------------------------------------------------------------


def inferred_decimal(cells: list[Any]) -> tuple[int, int]:
    """Section 7, as its words say: n coefficient digits and exponent e give max(-e, 0) fraction digits and
    max(n + e, 0) integer digits; s the most fraction digits, p the most integer digits plus s."""
    frac = whole = 0
    for c in cells:
        if c is None:
            continue
        d = decimal.Decimal(c["decimal"])
        n, e = len(d.as_tuple().digits), int(d.as_tuple().exponent)
        frac, whole = max(frac, -e, 0), max(whole, n + e, 0)
    return max(whole + frac, 1), frac


def pandas_frame(table: Table, rng: random.Random) -> tuple[Any, Table]:
    """A pandas frame of the table's rows, its dtypes chosen at random per column, and the table rows-v1 must see
    for it (the same but for object columns of Decimal, whose type section 7 infers from their values)."""
    import pandas as pd

    canon = table.arrow()
    data: dict[str, Any] = {}
    columns = list(table.columns)
    for i, (name, tree) in enumerate(table.columns):
        arr = canon.column(i).combine_chunks()
        values = arr.to_pylist()
        nulls = arr.null_count
        present = [v for v in values if v is not None]
        choices = ["arrow"]
        if tree in INTS:
            choices += [f"Int{INTS[tree]}"] + ([f"int{INTS[tree]}"] if not nulls else []) + ["category"]
        elif tree == "bool":
            choices += ["boolean"] + (["bool"] if not nulls else [])
        elif tree in ("float32", "float64"):
            has_nan = any(math.isnan(v) for v in present)
            choices += [tree] if not nulls else []
            choices += [tree.capitalize()] if not has_nan else []
        elif tree == "string":
            # "str" is pandas 3's string dtype; before 3 it made None the text "None" (another table)
            str_dtype = ["str"] if int(pd.__version__.split(".")[0]) >= 3 else []
            choices += ["string[python]", "string[pyarrow]", *str_dtype] + (["object", "category"] if present else [])
        elif tree in ("binary", "date") and present:
            choices += ["object"] + (["category"] if tree == "date" else [])
        elif tree in ("timestamp", "timestamp_ntz"):
            units = ["us"] + (["ms"] if table.grains[i] >= 1000 else []) + (["s"] if table.grains[i] >= 10**6 else [])
            # pandas 2.2 can crash the process (a segfault iterating a DatetimeArray while DataFrame() builds the
            # frame: seen in CI) on these; before pandas 3 the timestamps come as Arrow-backed columns only
            if int(pd.__version__.split(".")[0]) >= 3:
                choices += [f"M8:{u}" for u in units] + (["M8:ns"] if _narrow(table, i) else [])
        elif tree[0] == "decimal" and present:
            choices += ["object", "category"]
        how = rng.choice(choices)
        if how == "arrow":
            data[name] = pd.Series(pd.arrays.ArrowExtensionArray(arr))
        elif how.startswith("M8:"):
            unit = how[3:]
            zone = rng.choice(ZONES) if tree == "timestamp" else None
            micros = arr.cast(pa.int64()).to_pylist()  # not to_numpy: nulls would make them floats, losing digits
            raw = np.array([np.datetime64("NaT") if v is None else v for v in micros], dtype="datetime64[us]")
            series = pd.Series(raw)
            if zone is None:
                data[name] = series.astype(f"datetime64[{unit}]")
            else:
                tz = _pandas_zone(zone)
                zoned = series.dt.tz_localize("UTC").dt.tz_convert(tz)
                data[name] = zoned.astype(pd.DatetimeTZDtype(unit=unit, tz=tz))
        elif how == "object":
            data[name] = pd.Series(values, dtype=object)
            if isinstance(tree, tuple) and tree[0] == "decimal":
                columns[i] = (name, ("decimal", *inferred_decimal(table.column_cells(i))))
        elif how == "category":
            kinds = sorted(set(present), key=repr)
            index = pd.Index(kinds, dtype=f"int{INTS[tree]}") if tree in INTS else pd.Index(kinds, dtype=object)
            data[name] = pd.Series(pd.Categorical(values, categories=index))
            if isinstance(tree, tuple) and tree[0] == "decimal":
                columns[i] = (name, ("decimal", *inferred_decimal(table.column_cells(i))))
        elif how in ("bool", "float32", "float64") or how.startswith("int"):
            data[name] = pd.Series(np.array(values, dtype=how))
        else:
            data[name] = pd.Series(pd.array(values, dtype=how))
    frame = pd.DataFrame(data, columns=[n for n, _ in table.columns])
    for name in frame.columns:  # DataFrame(dict) may reindex: each column must be what was built
        assert len(frame[name]) == len(table.rows)
    return frame, Table(columns, table.rows, table.grains)


def _pandas_zone(zone: str) -> Any:
    if zone[0] in "+-":
        sign = -1 if zone[0] == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    return zone


# --- Spark --------------------------------------------------------------------------------------------------------


def spark_options(**kw: Any) -> Options:
    return Options(spark=True, **kw)
