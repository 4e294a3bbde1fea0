"""profile-v1 on the twin (docs/rows-v1.md section 12): column fingerprints (12.1) and row buckets (12.2).

The numbers checked by hand are built here with json/hashlib from lines whose canonical text is obvious; the
others are properties the spec states (sums add up to the rows-v1 sums, fingerprints ignore row order, column
order and the other columns; a key keeps a row in its bucket) checked on generated tables and the vectors.
"""

from __future__ import annotations

import hashlib
import json
import random

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tests.conftest import VECTOR_DIR, VECTORS
from tests.hashing.compat import import_or_skip
from ubunye.exceptions import HashError
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.digest import finish, line_words
from ubunye.hashing.profile import (
    DEFAULT_BUCKETS,
    MAX_BUCKETS,
    PROFILE_METHOD,
    Buckets,
    ProfileOptionError,
    ProfileSums,
    bucket_of_rows,
    check_profile_options,
    merge,
    profile_frame,
    profile_sums,
    rows_in_buckets,
)
from ubunye.testing.generated import generated_tables
from ubunye.testing.vectors import load_vectors

M64 = (1 << 64) - 1
ALL_VECTORS = VECTORS + load_vectors(VECTOR_DIR / "bytes")


def sha(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def halves(text: str) -> tuple[int, int]:
    """Section 8: the first two big-endian u64 of the line's SHA-256."""
    h = sha(text)
    return int.from_bytes(h[0:8], "big"), int.from_bytes(h[8:16], "big")


def sums_of(lines: list[str]) -> tuple[int, int]:
    a = b = 0
    for line in lines:
        x, y = halves(line)
        a, b = (a + x) & M64, (b + y) & M64
    return a, b


def bucket_by_hand(key_line: str, n: int) -> int:
    """Section 12.2: bytes 28..31 of the key line's SHA-256, big-endian, modulo n."""
    return int.from_bytes(sha(key_line)[28:32], "big") % n


def fingerprint_by_hand(json_name: str, type_: str, rows: int, s1: int, s2: int) -> str:
    text = f"profile-v1-column\n{json_name}\n{type_}\n{rows}\n{s1:016x}\n{s2:016x}"
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- numbers checked by hand (12.1, 12.2) -----------------------------------------------------------------------

# Three rows whose canonical lines are obvious; the column named with a quote checks the name's JSON form.
HAND = pa.table(
    {
        "id": pa.array([1, 2, None], pa.int64()),
        'na"me': pa.array(["Ana", None, "tab\there"], pa.string()),
        "score": pa.array([0.5, float("nan"), None], pa.float64()),
    }
)
HAND_LINES = [
    '{"id":1,"na\\"me":"Ana","score":0.5}',
    '{"id":2,"score":"NaN"}',
    '{"na\\"me":"tab\\there"}',
]
HAND_COLUMNS = {
    "id": ('"id"', "int64", ['{"id":1}', '{"id":2}', "{}"], 1, None),
    'na"me': ('"na\\"me"', "string", ['{"na\\"me":"Ana"}', "{}", '{"na\\"me":"tab\\there"}'], 1, None),
    "score": ('"score"', "float64", ['{"score":0.5}', '{"score":"NaN"}', "{}"], 1, 1),
}


def test_the_hand_table_has_the_lines_written_here():
    assert canonical_lines(HAND) == HAND_LINES


def test_column_numbers_and_fingerprints_match_lines_built_by_hand():
    p = profile_frame(HAND, buckets=0)
    assert list(p.columns) == ["id", 'na"me', "score"]
    for name, (json_name, type_, lines, nulls, nans) in HAND_COLUMNS.items():
        c = p.columns[name]
        s1, s2 = sums_of(lines)
        assert (c.name, c.type, c.nulls, c.nans, c.sum1, c.sum2) == (name, type_, nulls, nans, s1, s2)
        assert c.fingerprint == fingerprint_by_hand(json_name, type_, 3, s1, s2)
    assert p.buckets is None
    assert PROFILE_METHOD == "profile-v1"


@pytest.mark.parametrize("n", [1, 2, 8, 65536])
def test_keyed_buckets_match_key_lines_built_by_hand(n):
    key_lines = ['{"id":1}', '{"id":2}', "{}"]  # the null key is left out: the line {}
    want = [[0, 0, 0] for _ in range(n)]
    for key_line, line in zip(key_lines, HAND_LINES, strict=True):
        i = bucket_by_hand(key_line, n)
        a, b = halves(line)  # a bucket sums the rows' own line hashes, not the key's
        want[i] = [want[i][0] + 1, (want[i][1] + a) & M64, (want[i][2] + b) & M64]
    p = profile_frame(HAND, key=["id"], buckets=n)
    assert p.buckets.rows() == [tuple(r) for r in want]
    assert p.buckets.key == ("id",)
    assert bucket_of_rows(HAND, key=["id"], buckets=n).tolist() == [bucket_by_hand(k, n) for k in key_lines]


def test_a_key_of_two_columns_is_their_line_in_code_point_order_whatever_order_it_is_given_in():
    key_lines = ['{"id":1,"score":0.5}', '{"id":2,"score":"NaN"}', "{}"]
    want = [bucket_by_hand(k, 1024) for k in key_lines]
    assert bucket_of_rows(HAND, key=["score", "id"], buckets=1024).tolist() == want
    assert bucket_of_rows(HAND, key=["id", "score"], buckets=1024).tolist() == want
    a = profile_frame(HAND, key=["score", "id"], buckets=16).buckets
    assert a == profile_frame(HAND, key=["id", "score"], buckets=16).buckets
    assert a.key == ("id", "score")


def test_keyless_buckets_are_those_of_the_row_lines():
    want = [bucket_by_hand(line, 64) for line in HAND_LINES]
    assert bucket_of_rows(HAND, buckets=64).tolist() == want
    rows = profile_frame(HAND, buckets=64).buckets.rows()
    assert [i for i, (count, _, _) in enumerate(rows) if count] == sorted(set(want))


def test_many_repeated_values_are_counted_like_distinct_ones():
    # 5000 rows of five values: the twin hashes each distinct line once and counts it; the sums must be those of
    # every row's line all the same, nulls included.
    rng = random.Random(3)
    values = [rng.choice([0, 1, 2, 3, None]) for _ in range(5000)]
    region = [rng.choice(["EU", "US"]) for _ in range(5000)]
    table = pa.table({"c": pa.array(values, pa.int64()), "region": region})
    col_lines = ["{}" if v is None else f'{{"c":{v}}}' for v in values]
    region_lines = [f'{{"region":"{r}"}}' for r in region]
    p = profile_frame(table, key=["region"], buckets=4)
    assert (p.columns["c"].sum1, p.columns["c"].sum2) == sums_of(col_lines)
    assert p.columns["c"].nulls == values.count(None)
    assert (p.columns["region"].sum1, p.columns["region"].sum2) == sums_of(region_lines)
    lines = [
        f'{{"region":"{r}"}}' if v is None else f'{{"c":{v},"region":"{r}"}}'
        for v, r in zip(values, region, strict=True)
    ]
    assert canonical_lines(table) == lines
    want = [[0, 0, 0] for _ in range(4)]
    for key_line, line in zip(region_lines, lines, strict=True):
        i = bucket_by_hand(key_line, 4)
        a, b = halves(line)
        want[i] = [want[i][0] + 1, (want[i][1] + a) & M64, (want[i][2] + b) & M64]
    assert p.buckets.rows() == [tuple(r) for r in want]


def test_digests_are_sha256():
    rng = random.Random(5)
    texts = ["".join(rng.choice('ab"é😀\\{}') for _ in range(k)) for k in range(0, 300, 7)]
    got = line_words(pa.array(texts, pa.string()))
    assert got.shape == (len(texts), 4)
    for text, words in zip(texts, got.tolist(), strict=True):
        assert b"".join(int(w).to_bytes(8, "big") for w in words) == sha(text)


# --- properties (12.1, 12.2) --------------------------------------------------------------------------------------


def tables() -> list[tuple[str, pa.Table]]:
    gen = generated_tables()
    return [("scalars", gen["scalars"]), ("nested", gen["nested"]), *[(v.name, v.arrow()) for v in ALL_VECTORS]]


@pytest.mark.parametrize(("name", "table"), tables(), ids=[n for n, _ in tables()])
@pytest.mark.parametrize("n", [1, 2, 256, 65536])
@pytest.mark.parametrize("keyed", [False, True])
def test_bucket_counts_and_sums_add_up_to_the_rows_v1_hash(name, table, n, keyed):
    names = table.schema.names
    key = list(dict.fromkeys([names[-1], names[0]])) if keyed and names else None
    p = profile_frame(table, key=key, buckets=n)
    h = hash_frame(table)
    assert p.hash == h
    rows = p.buckets.rows()
    count = sum(c for c, _, _ in rows)
    s1, s2 = sum(a for _, a, _ in rows) & M64, sum(b for _, _, b in rows) & M64
    assert count == h.row_count
    assert finish(h.schema, count, s1, s2).data_hash == h.data_hash
    if n == 1:
        assert rows[0][0] == h.row_count


@pytest.mark.parametrize("vector", ALL_VECTORS, ids=lambda v: v.name)
def test_every_vector_has_the_profile_it_expects(vector):
    # Section 12.4: the expected profiles come from tests/vectors/derive.py, independent of the twin.
    if vector.expected_profile is None:
        pytest.fail(f"vector {vector.name} has no expected_profile (section 12.4)")
    table = vector.arrow()
    p = profile_frame(table, buckets=0)
    got = {
        name: {
            "type": c.type,
            "nulls": c.nulls,
            "nans": c.nans,
            "sum1": f"{c.sum1:016x}",
            "sum2": f"{c.sum2:016x}",
            "fingerprint": c.fingerprint,
        }
        for name, c in p.columns.items()
    }
    assert got == vector.expected_profile["columns"]
    for case in vector.expected_profile["buckets"]:
        rows = profile_frame(table, key=case["key"], buckets=case["n"]).buckets.rows()
        used = [[i, c, f"{a:016x}", f"{b:016x}"] for i, (c, a, b) in enumerate(rows) if c]
        assert used == case["buckets"], (case["n"], case["key"])


@pytest.mark.parametrize("which", ["scalars", "nested"])
def test_fingerprints_ignore_row_order_column_order_and_the_other_columns(which):
    table = generated_tables()[which]
    base = profile_frame(table, buckets=16)
    rng = np.random.default_rng(8)
    shuffled = table.take(pa.array(rng.permutation(table.num_rows)))
    reordered = shuffled.select(list(reversed(table.schema.names)))
    assert profile_frame(reordered, buckets=16) == base
    # Replace every other column by unrelated values: the kept column's fingerprint does not move.
    for keep in table.schema.names:
        others = {n: pa.array(rng.integers(0, 5, table.num_rows)) for n in table.schema.names if n != keep}
        other = pa.table({keep: table.column(keep), **others})
        assert profile_frame(other, buckets=0).columns[keep] == base.columns[keep]
    assert profile_frame(table, buckets=0).hash != profile_frame(other, buckets=0).hash


def test_one_changed_cell_changes_its_column_and_exactly_one_keyed_bucket():
    table = generated_tables()["nested"]
    rows = table.to_pylist()
    rows[17]["point"] = {"x": 123.25, "label": "changed"}
    changed = pa.Table.from_pylist(rows, schema=table.schema)
    a, b = profile_frame(table, key=["id"], buckets=256), profile_frame(changed, key=["id"], buckets=256)
    assert [n for n in a.columns if a.columns[n] != b.columns[n]] == ["point"]
    assert a.buckets.differing(b.buckets) == [bucket_of_rows(table, key=["id"], buckets=256)[17]]
    # Without a key the row's bucket is its line's: the old line leaves one bucket, the new one enters one.
    a, b = profile_frame(table, buckets=256), profile_frame(changed, buckets=256)
    moved = {int(bucket_of_rows(table, buckets=256)[17]), int(bucket_of_rows(changed, buckets=256)[17])}
    assert set(a.buckets.differing(b.buckets)) == moved


def test_null_is_not_nan():
    nan = profile_frame(pa.table({"x": pa.array([float("nan")], pa.float64())}), buckets=0).columns["x"]
    null = profile_frame(pa.table({"x": pa.array([None], pa.float64())}), buckets=0).columns["x"]
    assert (nan.nulls, nan.nans, null.nulls, null.nans) == (0, 1, 1, 0)
    assert nan.fingerprint != null.fingerprint
    assert (null.sum1, null.sum2) == halves("{}")
    # pandas: a numpy float column holds NaN as NaN, Float64 holds a null as null (section 7).
    numpy_nan = profile_frame(pd.DataFrame({"x": [float("nan")]}), buckets=0).columns["x"]
    masked = profile_frame(pd.DataFrame({"x": pd.array([None], dtype="Float64")}), buckets=0).columns["x"]
    assert (numpy_nan, masked) == (nan, null)
    f32 = profile_frame(pa.table({"x": pa.array([float("nan"), 1.0, None], pa.float32())}), buckets=0).columns["x"]
    assert (f32.type, f32.nulls, f32.nans) == ("float32", 1, 1)
    ints = profile_frame(pa.table({"x": pa.array([1, None], pa.int32())}), buckets=0).columns["x"]
    assert ints.nans is None


@pytest.mark.parametrize("which", ["scalars", "nested"])
def test_pandas_arrow_and_polars_give_one_profile(which):
    pl = import_or_skip("polars")
    table = generated_tables()[which]
    want = profile_frame(table, key=[table.schema.names[0]], buckets=64)
    frames = {
        "batch": table.combine_chunks().to_batches()[0],
        "pandas": table.to_pandas(types_mapper=pd.ArrowDtype),
        "polars": pl.from_arrow(table),
    }
    for kind, frame in frames.items():
        assert profile_frame(frame, key=[table.schema.names[0]], buckets=64) == want, kind


def test_plain_pandas_dtypes_profile_like_their_arrow_types():
    df = pd.DataFrame(
        {
            "i": [1, 2, 3],
            "f": [0.5, float("nan"), 2.0],
            "s": ["a", None, "c"],
            "cat": pd.Categorical(["x", "y", "x"]),
            "ts": pd.to_datetime(["2024-01-01", None, "2024-01-03"]).tz_localize("UTC"),
        }
    )
    arrow = pa.table(
        {
            "i": pa.array([1, 2, 3], pa.int64()),
            "f": pa.array([0.5, float("nan"), 2.0], pa.float64()),
            "s": pa.array(["a", None, "c"]),
            "cat": pa.array(["x", "y", "x"]),
            "ts": pa.array(pd.to_datetime(["2024-01-01", None, "2024-01-03"]).tz_localize("UTC")),
        }
    )
    assert profile_frame(df, key=["cat"], buckets=8) == profile_frame(arrow, key=["cat"], buckets=8)


def test_batches_and_chunks_do_not_change_the_profile(monkeypatch):
    import ubunye.hashing.profile as profile

    table = generated_tables()["scalars"]
    want = profile_frame(table, key=["i8"], buckets=32)
    chunked = pa.concat_tables([table.slice(i, 13) for i in range(0, table.num_rows, 13)])
    assert chunked.column(0).num_chunks > 10
    assert profile_frame(chunked, key=["i8"], buckets=32) == want
    monkeypatch.setattr(profile, "BATCH_ROWS", 7)
    assert profile_frame(table, key=["i8"], buckets=32) == want
    assert (
        bucket_of_rows(table, key=["i8"], buckets=32).tolist()
        == bucket_of_rows(chunked, key=["i8"], buckets=32).tolist()
    )


def test_partial_sums_merge_to_the_whole_and_survive_bytes():
    table = generated_tables()["nested"]
    parts = [profile_sums(table.slice(i, 37), key=["id"], buckets=1024) for i in range(0, table.num_rows, 37)]
    assert merge(parts).finish() == profile_frame(table, key=["id"], buckets=1024)
    for part in parts:
        blob = part.to_bytes()
        assert ProfileSums.from_bytes(blob) == part
        assert len(blob) < 24 * 1024  # only the buckets a part fills are written
    empty = profile_sums(table.slice(0, 0), key=["id"], buckets=1024)
    assert merge([empty, *parts]) == merge(parts)
    assert ProfileSums.from_bytes(empty.to_bytes()) == empty


def test_merge_refuses_parts_of_other_tables():
    a = profile_sums(pa.table({"x": [1]}), buckets=4)
    for other in (
        profile_sums(pa.table({"x": [1.5]}), buckets=4),
        profile_sums(pa.table({"x": [1]}), buckets=8),
        profile_sums(pa.table({"x": [1]}), key=["x"], buckets=4),
    ):
        with pytest.raises(HashError, match=r"cannot merge the sums of struct<\"x\":int64> \(key None, 4 buckets\)"):
            merge([a, other])
    with pytest.raises(HashError, match="at least one part"):
        merge([])


def test_an_empty_table_has_a_profile():
    table = pa.table({"x": pa.array([], pa.int64()), "s": pa.array([], pa.string())})
    p = profile_frame(table, key=["s"], buckets=4)
    assert p.hash == hash_frame(table)
    assert p.buckets.rows() == [(0, 0, 0)] * 4
    assert p.columns["x"].fingerprint == fingerprint_by_hand('"x"', "int64", 0, 0, 0)
    assert bucket_of_rows(table, buckets=4).tolist() == []


def test_unhashable_columns_are_refused_like_hash_frame():
    table = pa.table({"u": pa.array([1], pa.uint8())})
    with pytest.raises(HashError, match="column 'u' of type uint8"):
        hash_frame(table)
    with pytest.raises(HashError, match="column 'u' of type uint8"):
        profile_frame(table)
    with pytest.raises(HashError, match="column 'u' of type uint8"):
        bucket_of_rows(table, buckets=4)


# --- buckets: packed form, comparisons ----------------------------------------------------------------------------


def test_packed_buckets_are_24_big_endian_bytes_per_bucket():
    p = profile_frame(HAND, key=["id"], buckets=4).buckets
    assert len(p.packed) == 96
    for i, (count, s1, s2) in enumerate(p.rows()):
        record = p.packed[24 * i : 24 * i + 24]
        assert [int.from_bytes(record[j : j + 8], "big") for j in (0, 8, 16)] == [count, s1, s2]
    assert Buckets.from_rows(p.rows(), key=["id"]) == p
    assert Buckets.from_rows([(1, -1, -2)]).rows() == [(1, M64, M64 - 1)]  # signed longs hold the same bits


def test_buckets_of_other_rules_cannot_be_compared():
    a = profile_frame(HAND, key=["id"], buckets=4).buckets
    with pytest.raises(ValueError, match=r"n=4 with the key \('id',\) and of n=8 with the key \('id',\)"):
        a.differing(profile_frame(HAND, key=["id"], buckets=8).buckets)
    with pytest.raises(ValueError, match=r"n=4 with the key \('id',\) and of n=4 with the key None"):
        a.differing(profile_frame(HAND, buckets=4).buckets)
    assert a.differing(a) == []
    with pytest.raises(ValueError, match="packed buckets of n=4 are 96 bytes, got 95"):
        Buckets(4, None, bytes(95))
    with pytest.raises(ValueError, match="n=3 is not a power of two"):
        Buckets(3, None, bytes(72))


# --- rows of some buckets -------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [["id"], None], ids=["keyed", "keyless"])
def test_rows_in_buckets_keep_the_frame_kind_and_select_exactly_those_rows(key):
    pl = import_or_skip("polars")
    table = generated_tables()["nested"]
    buckets = bucket_of_rows(table, key=key, buckets=8)
    wanted = [1, 6]
    want_ids = [i for i, b in zip(table.column("id").to_pylist(), buckets, strict=True) if b in wanted]
    assert 0 < len(want_ids) < table.num_rows

    got = rows_in_buckets(table, wanted, key=key, buckets=8)
    assert isinstance(got, pa.Table) and got.schema == table.schema
    assert got.column("id").to_pylist() == want_ids
    batch = rows_in_buckets(table.combine_chunks().to_batches()[0], wanted, key=key, buckets=8)
    assert isinstance(batch, pa.RecordBatch) and batch.column(0).to_pylist() == want_ids

    df = table.to_pandas(types_mapper=pd.ArrowDtype)
    df.index = df.index + 1000
    sub = rows_in_buckets(df, wanted, key=key, buckets=8)
    assert isinstance(sub, pd.DataFrame) and sub["id"].tolist() == want_ids
    assert sub.index.tolist() == [i + 1000 for i in want_ids]  # the index says where the rows were

    frame = pl.from_arrow(table)
    sub = rows_in_buckets(frame, wanted, key=key, buckets=8)
    assert isinstance(sub, pl.DataFrame) and sub["id"].to_list() == want_ids

    everything = rows_in_buckets(table, range(8), key=key, buckets=8)
    assert everything.num_rows == table.num_rows
    assert rows_in_buckets(table, [], key=key, buckets=8).num_rows == 0


def test_the_rows_of_the_differing_buckets_hold_the_change():
    table = generated_tables()["scalars"].append_column("id", pa.array(range(200), pa.int64()))
    rows = table.to_pylist()
    rows[42]["text"] = "other"
    changed = pa.Table.from_pylist(rows, schema=table.schema)
    a, b = profile_frame(table, key=["id"], buckets=64), profile_frame(changed, key=["id"], buckets=64)
    mine = rows_in_buckets(table, a.buckets.differing(b.buckets), key=["id"], buckets=64)
    theirs = rows_in_buckets(changed, a.buckets.differing(b.buckets), key=["id"], buckets=64)
    assert 42 in mine.column("id").to_pylist()
    assert set(canonical_lines(mine)) ^ set(canonical_lines(theirs)) == {
        canonical_lines(table.slice(42, 1))[0],
        canonical_lines(changed.slice(42, 1))[0],
    }


# --- options ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "buckets", "message"),
    [
        (["nope"], 256, r"key column 'nope' is not a column of the table \(columns: 'id', 'x'\)"),
        (["id", "id"], 256, r"key column 'id' is repeated in the key \['id', 'id'\]"),
        ([], 256, r"the key \[\] is empty"),
        ("id", 256, r"the key 'id' must be a list of column names"),
        ([1], 256, r"key entry 1 is a int, not a column name"),
        (None, 3, r"buckets=3 is not a power of two from 1 to 65536"),
        (None, 100, r"buckets=100 is not a power of two"),
        (None, 131072, r"buckets=131072 is not a power of two from 1 to 65536"),
        (None, -4, r"buckets=-4 is not a power of two"),
        (None, True, r"buckets=True is not a power of two"),
        (None, 256.0, r"buckets=256.0 is not a power of two"),
        (None, "256", r"buckets='256' is not a power of two"),
    ],
)
def test_bad_options_are_refused_naming_the_value(key, buckets, message):
    frame = pd.DataFrame({"id": [1], "x": [2]})
    with pytest.raises(ProfileOptionError, match=message) as info:
        check_profile_options(["id", "x"], key, buckets)
    assert isinstance(info.value, HashError) and isinstance(info.value, ValueError)
    with pytest.raises(ProfileOptionError, match=message):
        profile_frame(frame, key=key, buckets=buckets)
    with pytest.raises(ProfileOptionError, match=message):
        rows_in_buckets(frame, [0], key=key, buckets=buckets)


def test_good_options_pass():
    for buckets in (0, None, 1, 2, DEFAULT_BUCKETS, MAX_BUCKETS, np.int64(1024)):
        check_profile_options(["id", "x"], ["x", "id"], buckets)
    assert profile_frame(pd.DataFrame({"id": [1]}), key=["id"], buckets=np.int64(4)).buckets.n == 4


def test_zero_buckets_are_refused_where_rows_are_placed():
    frame = pd.DataFrame({"id": [1]})
    for n in (0, None):
        with pytest.raises(ProfileOptionError, match=f"buckets={n} is not a power of two from 1 to 65536"):
            bucket_of_rows(frame, buckets=n)
        with pytest.raises(ProfileOptionError, match=f"buckets={n} is not a power of two"):
            rows_in_buckets(frame, [0], buckets=n)


@pytest.mark.parametrize("wanted", [[4], [-1], [True], ["1"], [1.0]])
def test_wanted_buckets_must_be_indices(wanted):
    with pytest.raises(ProfileOptionError, match=r"wanted bucket .* is not an index from 0 to 3 \(n=4\)"):
        rows_in_buckets(pd.DataFrame({"id": [1]}), wanted, key=["id"], buckets=4)


def test_engine_is_checked_and_jvm_is_for_spark_only():
    frame = pd.DataFrame({"id": [1]})
    with pytest.raises(ValueError, match=r"engine='jvn' is not one of 'arrow', 'jvm' or None"):
        profile_frame(frame, engine="jvn")
    with pytest.raises(ValueError, match="engine='jvm' profiles Spark DataFrames only"):
        profile_frame(frame, engine="jvm")
    assert profile_frame(frame, engine="arrow") == profile_frame(frame)
    assert json.loads(json.dumps(profile_frame(frame).hash.engine)) == "arrow"


class _NoSpark:
    """Stands for a Spark DataFrame: any use of it would mean engine= was checked too late."""

    def __getattr__(self, name):
        raise AssertionError(f"the frame was used ({name}) before engine= was checked")


@pytest.mark.parametrize("engine", ["jvn", "JVM", "", "pandas"])
def test_the_spark_functions_check_engine_before_touching_the_frame(engine):
    from ubunye.hashing.spark import profile_spark, spark_rows_in_buckets

    with pytest.raises(ValueError, match=r"engine='.*' is not one of 'arrow', 'jvm' or None"):
        profile_spark(_NoSpark(), engine=engine)
    with pytest.raises(ValueError, match=r"engine='.*' is not one of 'arrow', 'jvm' or None"):
        spark_rows_in_buckets(_NoSpark(), [0], buckets=4, engine=engine)


def test_arrow_stream_frames_profile_like_arrow_and_give_arrow_rows():
    duckdb = import_or_skip("duckdb")
    table = generated_tables()["nested"]
    con = duckdb.connect()
    try:
        relation = con.from_arrow(table)
        assert profile_frame(relation, key=["id"], buckets=16) == profile_frame(table, key=["id"], buckets=16)
        rows = rows_in_buckets(con.from_arrow(table), [0, 1], key=["id"], buckets=16)
    finally:
        con.close()
    assert isinstance(rows, pa.Table)
    assert rows.equals(rows_in_buckets(table, [0, 1], key=["id"], buckets=16))
