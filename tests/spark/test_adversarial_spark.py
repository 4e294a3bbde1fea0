"""Spark frames an independent tester built to make the engines disagree: rows with no columns (each is the line
``{}``, docs/rows-v1.md sections 3 and 9) and columns whose names differ only in case (legal: section 2 compares
names case-sensitively, and Spark's default ``spark.sql.caseSensitive=false`` lets a DataFrame hold both). The jar,
the jar-free path and the twin must give the same numbers, which are also derived by tests/vectors/derive.py."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.vectors.derive import bucket_case, column_profile, expected, parse_type
from ubunye.hashing import canonical_lines
from ubunye.hashing.profile import bucket_of_rows, profile_frame
from ubunye.hashing.spark import hash_spark, profile_spark, spark_canonical_lines, spark_rows_in_buckets

ENGINES = ["jvm", "arrow"]


def _buckets(profile: object) -> list[list[object]]:
    """A profile's filled buckets as derive.py writes them: ``[index, count, sum1, sum2]``."""
    rows = profile.buckets.rows()  # type: ignore[attr-defined]
    return [[i, c, f"{s1:016x}", f"{s2:016x}"] for i, (c, s1, s2) in enumerate(rows) if c]


# --- rows without columns -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_rows_without_columns_count_on_every_engine(spark, engine):
    df = spark.range(3).repartition(2).select()  # 3 rows, no columns, over two partitions
    want = expected([], [[], [], []])
    twin_table = pa.table({"x": [1, 2, 3]}).drop_columns(["x"])
    h = hash_spark(df, engine=engine)
    assert (h.schema, h.row_count, h.data_hash) == (want["schema"], 3, want["data_hash"])
    assert spark_canonical_lines(df, engine=engine) == want["lines"] == canonical_lines(twin_table)
    profile = profile_spark(df, buckets=4, engine=engine)
    twin = profile_frame(twin_table, buckets=4)
    assert (profile.hash.data_hash, profile.hash.row_count) == (twin.hash.data_hash, 3)
    assert profile.columns == twin.columns == {}
    assert _buckets(profile) == _buckets(twin) == bucket_case([], [[], [], []], 4, None)["buckets"]
    (filled,) = {int(b) for b in bucket_of_rows(twin_table, buckets=4)}
    kept = spark_rows_in_buckets(df, [filled], buckets=4, engine=engine)
    assert (kept.count(), kept.columns) == (3, [])
    assert spark_rows_in_buckets(df, [(filled + 1) % 4], buckets=4, engine=engine).count() == 0


# --- names differing only in case -----------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_names_differing_in_case_on_every_engine(spark, engine):
    df = spark.sql("SELECT * FROM VALUES (1, 2), (3, NULL), (5, 6) AS t(a, A)")
    columns = [("a", "int32"), ("A", "int32")]
    rows = [[1, 2], [3, None], [5, 6]]
    table = pa.table({"a": pa.array([1, 3, 5], pa.int32()), "A": pa.array([2, None, 6], pa.int32())})
    want = expected(columns, rows)
    assert hash_spark(df, engine=engine).data_hash == want["data_hash"]
    for key in (None, ["a"], ["A"]):
        profile = profile_spark(df, key=key, buckets=4, engine=engine)
        twin = profile_frame(table, key=key, buckets=4)
        assert profile.hash.data_hash == twin.hash.data_hash == want["data_hash"]
        assert profile.columns == twin.columns
        for i, (col, tname) in enumerate(columns):
            derived = column_profile(col, parse_type(tname), [r[i] for r in rows])
            assert profile.columns[col].fingerprint == derived["fingerprint"]
        assert _buckets(profile) == _buckets(twin) == bucket_case(columns, rows, 4, key)["buckets"], key
        twin_buckets = bucket_of_rows(table, key=key, buckets=4)
        for bucket in range(4):
            kept = spark_rows_in_buckets(df, [bucket], key=key, buckets=4, engine=engine)
            assert kept.columns == ["a", "A"]
            got = sorted((r[0], r[1]) for r in kept.collect())
            wanted = sorted(tuple(r) for r, k in zip(rows, twin_buckets, strict=True) if k == bucket)
            assert got == wanted, (key, bucket)
