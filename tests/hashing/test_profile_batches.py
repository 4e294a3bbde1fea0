"""profile-v1 over tables of several batches: the lines a column keeps from batch to batch (docs/rows-v1.md 12.1).

The twin hashes a repeated column line once per table, not once per batch, and reuses a one-column key's column
lines as its key lines (12.2). Every number here is checked against lines hashed one by one with hashlib: a
column's lines are the canonical lines of the table cut down to that column alone (``{"c":v}``, a null ``{}``).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pytest

import ubunye.hashing.profile as profile
from ubunye.hashing import canonical_lines
from ubunye.hashing.frame import BATCH_ROWS
from ubunye.hashing.profile import profile_frame

M64 = (1 << 64) - 1
ROWS = 2 * BATCH_ROWS + 1234  # three batches, the last a short one


def _table() -> pa.Table:
    rng = np.random.default_rng(11)
    i = np.arange(ROWS)
    drift = np.where(i < BATCH_ROWS, i % 40_000, 40_000 + i % 30_000)  # batch 2: mostly new values
    # grow: batch 1 draws from 5,000 values; batch 2 is 60% of those and 40% new ones, which batch 3 repeats
    j, cut = i - BATCH_ROWS, int(0.6 * BATCH_ROWS)
    old = rng.integers(0, 5_000, ROWS)
    grow = np.where((i < BATCH_ROWS) | (j < cut), old, 5_000 + j)
    grow = np.where(i >= 2 * BATCH_ROWS, 5_000 + cut + (i - 2 * BATCH_ROWS) % 5_000, grow)
    floats = rng.normal(0, 1, ROWS)
    floats[rng.random(ROWS) < 0.01] = np.nan
    return pa.table(
        {
            "id": pa.array(i, pa.int64()),  # never repeats: kept after batch 1, dropped at batch 2
            "code": pa.array([f"c-{v}" for v in rng.integers(0, 500, ROWS)]),  # few values in every batch
            "drift": pa.array([f'n"{v}' for v in drift]),  # escaped text
            "grow": pa.array([f"g{v}" for v in grow]),
            "x": pa.array(floats, mask=rng.random(ROWS) < 0.1),
            "day": pa.array((19_000 + rng.integers(0, 30, ROWS)).astype(np.int32)).cast(pa.date32()),
        }
    )


def _halves(line: str) -> tuple[int, int]:
    h = hashlib.sha256(line.encode("utf-8")).digest()
    return int.from_bytes(h[0:8], "big"), int.from_bytes(h[8:16], "big")


def _sums(lines: list[str]) -> tuple[int, int]:
    a = b = 0
    for line in lines:
        x, y = _halves(line)
        a, b = (a + x) & M64, (b + y) & M64
    return a, b


TABLE = _table()


def test_the_table_spans_batches_and_its_column_lines_are_its_one_column_lines():
    assert TABLE.num_rows > 2 * BATCH_ROWS
    assert canonical_lines(TABLE.select(["drift"]), limit=2) == ['{"drift":"n\\"0"}', '{"drift":"n\\"1"}']
    assert canonical_lines(TABLE.select(["x"]))[:BATCH_ROWS].count("{}") == TABLE.column("x")[:BATCH_ROWS].null_count


@pytest.mark.parametrize("small", [False, True], ids=["kept", "kept-lines-full"])
def test_column_sums_over_batches_equal_every_line_hashed_one_by_one(small, monkeypatch):
    if small:  # the kept lines fill up at once: later batches hash what is not kept
        monkeypatch.setattr(profile, "_KEPT_LINES", 300)
    p = profile_frame(TABLE, buckets=0)
    for name in TABLE.column_names:
        lines = canonical_lines(TABLE.select([name]))
        c = p.columns[name]
        assert (c.sum1, c.sum2) == _sums(lines), name
        assert c.nulls == lines.count("{}")
    assert p.columns["x"].nans == canonical_lines(TABLE.select(["x"])).count('{"x":"NaN"}')


def test_a_budget_too_small_to_keep_anything_gives_the_same_numbers(monkeypatch):
    want = profile_frame(TABLE, key=["grow"], buckets=64)
    monkeypatch.setattr(profile, "_KEPT_BYTES", 0)
    assert profile_frame(TABLE, key=["grow"], buckets=64) == want


@pytest.mark.parametrize("key", ["id", "grow", "drift", "x"])
def test_a_one_column_key_over_batches_buckets_rows_by_their_key_lines(key):
    n = 128
    key_lines = canonical_lines(TABLE.select([key]))
    row_lines = canonical_lines(TABLE)
    want = [[0, 0, 0] for _ in range(n)]
    for key_line, line in zip(key_lines, row_lines, strict=True):
        i = int.from_bytes(hashlib.sha256(key_line.encode("utf-8")).digest()[28:32], "big") % n
        a, b = _halves(line)
        want[i] = [want[i][0] + 1, (want[i][1] + a) & M64, (want[i][2] + b) & M64]
    assert profile_frame(TABLE, key=[key], buckets=n).buckets.rows() == [tuple(r) for r in want]
