"""Every conformance vector through the twin: lines, schema string, hash (docs/rows-v1.md section 10)."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pytest

from tests.conftest import VECTOR_DIR, VECTORS
from ubunye.hashing import canonical_lines, hash_frame


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_vector_lines_schema_and_hash(vector):
    table = vector.arrow()
    assert canonical_lines(table) == vector.expected["lines"]
    h = hash_frame(table)
    assert h.schema == vector.expected["schema"]
    assert h.row_count == vector.expected["row_count"]
    assert h.schema_hash == vector.expected["schema_hash"]
    assert h.data_hash == vector.expected["data_hash"]
    assert h.hash_method == "rows-v1"


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_vector_hash_ignores_row_order_and_batching(vector):
    table = vector.arrow()
    reversed_table = table.take(pa.array(list(range(table.num_rows))[::-1], pa.int64()))
    assert hash_frame(reversed_table) == hash_frame(table)
    if table.num_rows > 1:
        split = table.slice(0, 1).to_batches() + table.slice(1).to_batches()
        assert hash_frame(pa.Table.from_batches(split, schema=table.schema)) == hash_frame(table)


def test_vector_files_are_what_derive_writes():
    # The expected values are produced by tests/vectors/derive.py, an independent row-at-a-time reading of
    # the spec; a hand edit of a vector file or of its source without re-deriving fails here.
    result = subprocess.run(
        [sys.executable, str(VECTOR_DIR / "derive.py"), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
