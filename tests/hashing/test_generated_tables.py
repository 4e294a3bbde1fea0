"""Generated adversarial tables (tests/hashing/generated.py), each hashed by every non-Spark engine ON THE SAME TABLE:
the Python twin on many Arrow layouts of it, pandas, polars, the profile, against what tests/vectors/derive.py (the
independent oracle) derives from the rows. Then the promises: row and column order do not matter, one changed cell
changes the hash, null is not NaN, and a type the spec does not cover is refused naming the column (path) and type.

A failure prints the seed; ``generated.gen_table(random.Random(seed), opts)`` rebuilds the table.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hashing import generated as g
from tests.hashing.compat import view_type
from tests.vectors.derive import bucket_case, column_profile
from ubunye.exceptions import HashError
from ubunye.hashing import canonical_lines, hash_frame, profile_frame

try:
    import polars as pl
except ImportError:  # the floors venvs have no polars
    pl = None

SEEDS = st.integers(0, 2**32 - 1)

#: pandas before 2 has datetime64 in nanoseconds only: the generated frames use every unit and dates from year 1.
#: The floors' pandas 1.5 is covered by test_pandas and the vectors.
_PANDAS_UNITS = pytest.mark.skipif(
    int(pd.__version__.split(".")[0]) < 2,
    reason=f"pandas {pd.__version__} has datetime64 in nanoseconds only (pandas 2 added s, ms and us)",
)


def _agree(frame: object, table: g.Table, what: str) -> None:
    """``frame`` hashes as derive.py says ``table`` must: schema, row count, data hash; the lines first, to show
    what differs."""
    want = table.expected()
    got_lines = sorted(canonical_lines(frame))
    assert got_lines == sorted(want["lines"]), f"{what}: lines differ for {table!r}"
    h = hash_frame(frame)
    assert (h.schema, h.row_count, h.data_hash) == (want["schema"], want["row_count"], want["data_hash"]), what


@settings(max_examples=120, deadline=None)
@given(SEEDS, st.booleans())
def test_arrow_layouts_hash_as_the_oracle_says(seed: int, bad_utf8: bool) -> None:
    rng = random.Random(seed)
    table = g.gen_table(rng, g.Options(bad_utf8=bad_utf8))
    _agree(table.arrow(), table, "canonical layout")
    for k in range(3):
        layout = g.arrow_layout(table, rng)
        _agree(layout, table, f"layout {k}: {layout.schema}")


@settings(max_examples=60, deadline=None)
@given(SEEDS)
def test_row_and_column_order_do_not_matter_and_one_cell_change_does(seed: int) -> None:
    rng = random.Random(seed)
    table = g.gen_table(rng)
    layout = g.arrow_layout(table, rng)
    base = hash_frame(layout)
    rows = list(table.rows)
    rng.shuffle(rows)
    names = list(layout.column_names)
    rng.shuffle(names)
    # the rows in another order, in another layout, the columns in another order
    shuffled = g.arrow_layout(g.Table(table.columns, rows, table.grains), rng).select(names)
    assert hash_frame(shuffled) == base
    changed = g.change_one_cell(rng, table)
    if changed is not None:
        other = g.arrow_layout(changed, rng)
        assert hash_frame(other).data_hash == changed.expected()["data_hash"] != base.data_hash


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("tree", ["float64", "float32", ("list", "float64"), ("map", "string", "float32")])
def test_null_and_nan_differ_wherever_they_are(seed: int, tree: Any) -> None:
    rng = random.Random(seed)
    opts = g.Options(leaves=("float64",))
    ctx = g._Ctx(1, True)
    rows = [[g.gen_cell(rng, tree, opts, ctx, 0.2)] for _ in range(rng.randint(1, 4))]
    nan, null = {"float": "NaN"}, None
    for value in (nan, null):
        if tree in ("float64", "float32"):
            rows[0] = [value]
        elif tree[0] == "list":
            rows[0] = [{"list": [value, {"float": "1.5"}]}]
        else:
            rows[0] = [{"map": [["k", value]]}]
        table = g.Table([("f", tree)], [list(r) for r in rows], [1])
        _agree(g.arrow_layout(table, rng), table, f"{value}")
        if value is nan:
            with_nan = hash_frame(g.arrow_layout(table, rng)).data_hash
    assert hash_frame(table.arrow()).data_hash != with_nan


@_PANDAS_UNITS
@settings(max_examples=80, deadline=None)
@given(SEEDS)
def test_pandas_frames_hash_as_the_oracle_says(seed: int) -> None:
    rng = random.Random(seed)
    table = g.gen_table(rng)
    frame, seen = g.pandas_frame(table, rng)
    _agree(frame, seen, f"pandas dtypes {dict(frame.dtypes)}")


def _has_map(tree: Any) -> bool:
    if isinstance(tree, str) or tree[0] == "decimal":
        return False
    if tree[0] == "map":
        return True
    if tree[0] == "struct":
        return any(_has_map(t) for _, t in tree[1])
    return _has_map(tree[1])


@pytest.mark.skipif(pl is None, reason="polars is an extra")
@settings(max_examples=60, deadline=None)
@given(SEEDS)
def test_polars_frames_hash_as_the_oracle_says(seed: int) -> None:
    rng = random.Random(seed)
    full = g.gen_table(rng)
    # polars has no map type (from_arrow makes one a list of structs): a table of maps is another table there
    keep = [i for i, (_n, t) in enumerate(full.columns) if not _has_map(t)]
    if not keep:
        return
    table = g.Table(
        [full.columns[i] for i in keep], [[r[i] for i in keep] for r in full.rows], [full.grains[i] for i in keep]
    )
    frame = pl.from_arrow(g.arrow_layout(table, rng, polars=True))
    _agree(frame, table, f"polars schema {frame.schema}")


@_PANDAS_UNITS
@settings(max_examples=60, deadline=None)
@given(SEEDS)
def test_profiles_agree_with_the_oracle(seed: int) -> None:
    rng = random.Random(seed)
    table = g.gen_table(rng)
    names = [n for n, _ in table.columns]
    key = rng.choice([None, rng.sample(names, rng.randint(1, len(names)))])
    n = rng.choice([1, 2, 8, 256])
    frames: list[object] = [g.arrow_layout(table, rng)]
    pandas_frame, seen = g.pandas_frame(table, rng)
    if seen.typed == table.typed:
        frames.append(pandas_frame)
    want_buckets = bucket_case(table.typed, table.rows, n, key)["buckets"]
    for frame in frames:
        p = profile_frame(frame, key=key, buckets=n)
        assert p.hash.data_hash == table.expected()["data_hash"]
        for i, (name, tree) in enumerate(table.columns):
            want = column_profile(name, tree, table.column_cells(i))
            got = p.columns[name]
            assert (got.type, got.nulls, got.nans, got.fingerprint) == (
                want["type"],
                want["nulls"],
                want["nans"],
                want["fingerprint"],
            ), name
        got_buckets = [[i, c, f"{a:016x}", f"{b:016x}"] for i, (c, a, b) in enumerate(p.buckets.rows()) if c]
        assert got_buckets == want_buckets, (key, n)


# --- refusals ----------------------------------------------------------------------------------------------------

BAD_ARROW = [
    pa.uint8(),
    pa.uint64(),
    pa.float16(),
    pa.duration("us"),
    pa.time32("s"),
    pa.time64("ns"),
    pa.month_day_nano_interval(),
    pa.null(),
    pa.decimal128(5, -2),
    pa.decimal256(40, 2),
    pa.dictionary(pa.int8(), pa.uint16()),
    pa.dense_union([pa.field("i", pa.int64())]),
]


def _bury(rng: random.Random, bad: pa.DataType, column: str, depth: int) -> tuple[pa.DataType, str]:
    """``bad`` at a random place inside a nested type, and the field path section 11 writes for that place."""
    if depth == 0:
        return bad, column
    kind = rng.choice(["list", "struct", "map_value", "large_list"])
    inner, path = _bury(rng, bad, "", depth - 1)
    if kind in ("list", "large_list"):
        t = pa.list_(inner) if kind == "list" else pa.large_list(inner)
        return t, column + "[]" + path
    if kind == "map_value":
        return pa.map_(pa.string(), inner), column + "{value}" + path
    return pa.struct([("ok", pa.int64()), ("bad", inner)]), column + ".bad" + path


@pytest.mark.parametrize("seed", range(40))
def test_types_the_spec_does_not_cover_are_refused_naming_the_path_and_type(seed: int) -> None:
    rng = random.Random(seed)
    bad = BAD_ARROW[seed % len(BAD_ARROW)]
    column = rng.choice(["c", "é", "a.b"])
    t, path = _bury(rng, bad, column, rng.randint(0, 2))
    base = g.gen_table(rng).arrow()
    if column in base.column_names:
        base = base.drop_columns([column])
    bad_table = base.append_column(column, pa.nulls(base.num_rows, t))
    shown = str(bad.value_type if pa.types.is_dictionary(bad) else bad)
    for frame in _frames_of(bad_table, column, t):
        for call in (hash_frame, canonical_lines, lambda f: profile_frame(f, buckets=4)):
            with pytest.raises(HashError) as err:
                call(frame)
            message = str(err.value)
            assert repr(path) in message and shown in message, (path, shown, message)


def _frames_of(table: pa.Table, column: str, t: pa.DataType) -> list[object]:
    """The table, and the polars frame of it when polars holds the column with its Arrow type unchanged."""
    frames: list[object] = [table]
    if pl is not None:
        try:
            frame = pl.from_arrow(table)
        except BaseException:  # polars cannot hold every Arrow type (a pyo3 PanicException): no polars frame then
            return frames
        if frame.to_arrow().schema.field(column).type == t:
            frames.append(frame)
    return frames


def test_nan_values_of_every_bit_pattern_are_one_nan() -> None:
    rng = random.Random(7)
    table = g.Table([("f", "float64"), ("g", "float32")], [[{"float": "NaN"}, {"float": "NaN"}]] * 5, [1, 1])
    for _ in range(5):
        _agree(g.arrow_layout(table, rng), table, "NaN payloads")
    assert math.isnan(table.arrow().column("f")[0].as_py())


# --- values no row holds: under a null struct, list or map slot --------------------------------------------------
# Arrow lets a null struct slot's fields, and the child range a null list or map slot covers, hold anything: they are
# no value of the table (sections 3 and 6 never read them). A value there that rows-v1 would refuse (nanoseconds, a
# date64 that is not a midnight, a null map key) must not make the table refused, and the table must hash as the
# same rows laid out without it.

_NS = pa.array([1_000, 1_001], pa.timestamp("ns"))  # the second is 1.001 us: refused wherever a row holds it
_D64 = pa.array([86_400_000, 86_400_001], pa.date64())  # the second is not a midnight
_HIDDEN = {"timestamp_ntz": _NS, "date": _D64}


@pytest.mark.parametrize("kind", ["timestamp_ntz", "date"])
def test_a_refused_value_under_a_null_struct_slot_is_no_value(kind: str) -> None:
    hidden = pa.StructArray.from_arrays([_HIDDEN[kind]], names=["v"], mask=pa.array([False, True]))
    table = g.Table([("s", ("struct", (("v", kind),)))], [[{"struct": {"v": _cell(kind)}}], [None]], [1])
    _agree(pa.table({"s": hidden}), table, "null struct slot over a refused value")


@pytest.mark.parametrize("kind", ["timestamp_ntz", "date"])
@pytest.mark.parametrize("large", [False, True])
def test_a_refused_value_under_a_null_list_slot_is_no_value(kind: str, large: bool) -> None:
    cls = pa.LargeListArray if large else pa.ListArray
    hidden = cls.from_arrays(pa.array([0, 1, 2]), _HIDDEN[kind], mask=pa.array([False, True]))
    table = g.Table([("l", ("list", kind))], [[{"list": [_cell(kind)]}], [None]], [1])
    _agree(pa.table({"l": hidden}), table, "null list slot over a refused value")


@pytest.mark.parametrize("kind", ["timestamp_ntz", "date"])
def test_a_refused_value_under_a_null_map_slot_is_no_value(kind: str) -> None:
    # (Arrow itself refuses a null key anywhere in a map's keys, under a null slot too: no such table exists.)
    # Built from buffers: MapArray.from_arrays takes no mask before pyarrow 17 (the floors run 14 and 15).
    map_type = pa.map_(pa.string(), _HIDDEN[kind].type)
    entries = pa.StructArray.from_arrays([pa.array(["a", "b"]), _HIDDEN[kind]], fields=[map_type.key_field,
                                         map_type.item_field])  # fmt: skip
    buffers = [pa.array([True, False]).buffers()[1], pa.array([0, 1, 2], pa.int32()).buffers()[1]]
    hidden = pa.Array.from_buffers(map_type, 2, buffers, null_count=1, children=[entries])
    table = g.Table([("m", ("map", "string", kind))], [[{"map": [["a", _cell(kind)]]}], [None]], [1])
    _agree(pa.table({"m": hidden}), table, "null map slot over a refused value")


def test_chunks_of_dictionaries_holding_a_null_value_hash_as_their_values() -> None:
    # Was ArrowInvalid "Cannot yet unify dictionaries with nulls": the twin joins a slice's chunks into one batch,
    # which Arrow refuses for dictionaries holding a null (dictionary_encode(null_encoding="encode")), even for two
    # slices of one dictionary when it also holds a NaN (not equal to itself, so the dictionaries "differ").
    import pyarrow.compute as pc

    a = pc.dictionary_encode(pa.array(["a", None]), null_encoding="encode")
    b = pc.dictionary_encode(pa.array(["b", None, "a"]), null_encoding="encode")
    f = pc.dictionary_encode(pa.array([1.5, float("nan"), None], from_pandas=False), null_encoding="encode")
    la, lb = pa.ListArray.from_arrays([0, 2], a), pa.ListArray.from_arrays([0, 3], b)
    cases = {
        "strings": (pa.chunked_array([a, b]), "string", [["a"], [None], ["b"], [None], ["a"]]),
        "nan": (
            pa.chunked_array([f.slice(0, 1), f.slice(1)]),
            "float64",
            [[{"float": "1.5"}], [{"float": "NaN"}], [None]],
        ),
        "nested": (
            pa.chunked_array([la, lb]),
            ("list", "string"),
            [[{"list": ["a", None]}], [{"list": ["b", None, "a"]}]],
        ),
    }
    for name, (column, tree, rows) in cases.items():
        frame = pa.table({"c": column})
        table = g.Table([("c", tree)], rows, [1])
        if name == "nested" and not g._DICT_NULLS:  # pyarrow 14 can abort the process decoding it: refused, named
            with pytest.raises(HashError, match=r"column 'c' of type list<item: dictionary.*pyarrow 16 or later"):
                hash_frame(frame)
            continue
        _agree(frame, table, name)
        p = profile_frame(frame, buckets=2)
        assert p.hash.data_hash == table.expected()["data_hash"], name


def _cell(kind: str) -> dict[str, str]:
    return {"timestamp_ntz": {"timestamp_ntz": "1970-01-01T00:00:00.000001"}, "date": {"date": "1970-01-02"}}[kind]


class _Rows:
    """A port frame (docs/backends.md): rows-v1 type names and plain Python rows, maps as (key, value) pairs."""

    def __init__(self, schema: list[tuple[str, str]], rows: list[tuple[Any, ...]]) -> None:
        self.schema, self.rows = schema, rows

    def collect(self) -> list[tuple[Any, ...]]:
        return self.rows


@settings(max_examples=60, deadline=None)
@given(SEEDS)
def test_port_frames_hash_as_the_oracle_says(seed: int) -> None:
    rng = random.Random(seed)
    table = g.gen_table(rng)
    rows = [tuple(r.values()) for r in table.arrow().to_pylist()]
    if rng.random() < 0.5:  # rows as mappings, null columns left out
        names = [n for n, _ in table.columns]
        frame = _Rows(table.typed, [{n: v for n, v in zip(names, r, strict=True) if v is not None} for r in rows])
    else:
        frame = _Rows(table.typed, rows)
    _agree(frame, table, "port")


# --- defects the generator found, each as its smallest table ------------------------------------------------------


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("value_type", [view_type("string_view"), view_type("binary_view")])
def test_a_list_view_of_string_or_binary_views_hashes_as_its_lists(value_type: pa.DataType, large: bool) -> None:
    # Was ArrowNotImplementedError ("array_take has no kernel matching input types (binary_view, int64)"): the twin
    # read the views' values with take, which pyarrow has no kernel for on string_view/binary_view.
    cls, itype = (pa.LargeListViewArray, pa.int64()) if large else (pa.ListViewArray, pa.int32())
    child = pa.array([b"b", b"a"], pa.binary()).cast(value_type)
    views = cls.from_arrays(
        pa.array([1, 0, 0], itype), pa.array([1, 2, 0], itype), child, mask=pa.array([False, False, True])
    )
    tname = "string" if value_type == pa.string_view() else "binary"
    cells = ["b", "a"] if tname == "string" else [{"base64": "Yg=="}, {"base64": "YQ=="}]
    table = g.Table([("l", ("list", tname))], [[{"list": cells[1:]}], [{"list": cells}], [None]], [1])
    _agree(pa.table({"l": views}), table, "list_view of views")


def test_a_map_keyed_by_structs_of_invalid_utf8_builds_and_hashes_on_every_pyarrow() -> None:
    # Seed 24's column `id` is map<struct<string, timestamp>, list<timestamp>> with invalid UTF-8 in its keys:
    # casting it from binary aborted the whole process on pyarrow 15 (the floors tier); it is rebuilt from its parts.
    table = g.gen_table(random.Random(24), g.Options(bad_utf8=True))
    assert any(t.startswith("map<struct<") for _, t in table.typed)
    _agree(table.arrow(), table, "seed 24")
