"""A check shared by the tests of incremental profiles (Arrow and Spark)."""

from __future__ import annotations

from typing import Any


def assert_same_profile(got: Any, want: Any) -> None:
    """Every number of two profiles equal, the first that differs named (the dataclasses' == says only no)."""
    assert got.hash == want.hash
    assert list(got.columns) == list(want.columns)
    for name, column in want.columns.items():
        mine = got.columns[name]
        assert (mine.nulls, mine.nans, mine.sum1, mine.sum2) == (column.nulls, column.nans, column.sum1, column.sum2)
        assert mine.fingerprint == column.fingerprint, name
    assert (got.buckets is None) == (want.buckets is None)
    if want.buckets is not None:
        assert (got.buckets.n, got.buckets.key) == (want.buckets.n, want.buckets.key)
        assert got.buckets.differing(want.buckets) == []
        assert got.buckets.rows() == want.buckets.rows()
    assert got == want
