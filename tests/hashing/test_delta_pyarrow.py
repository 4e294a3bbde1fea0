"""A Delta table as Arrow through deltalake on this pyarrow. deltalake declares pyarrow >= 21 for its Arrow side;
measured with pyarrow 14.0.1 (the package floor, Databricks 15.4's), an unpartitioned table is read, written and
hashed, and a partitioned one fails inside deltalake ("field() takes at least 2 positional arguments"). What works
must keep working there, and what fails must say why and what to do, naming the table. The tables are written
through arro3, which needs no pyarrow, so every case runs on every venv that has deltalake (``make floors``
installs it)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame
from ubunye.hashing.delta_files import DELTALAKE_PYARROW

# Before anything importing deltalake or the config (pyyaml, jinja2): `make pandas2`'s venv has neither.
deltalake = pytest.importorskip("deltalake", reason="deltalake is not installed in this venv (make pandas2)")
arro3 = pytest.importorskip("arro3.core", reason="arro3 (deltalake's Arrow library) is not installed")

from ubunye.config import IOConfig  # noqa: E402
from ubunye.engines.delta import read_table, write_delta  # noqa: E402
from ubunye.hashing.delta_hash import hash_delta  # noqa: E402

# This file checks deltalake's refusal on an older pyarrow itself: tests/conftest.py turns no failure here into a skip
pytestmark = pytest.mark.pyarrow_floor
OLD = tuple(int(p) for p in pa.__version__.split(".")[:2]) < DELTALAKE_PYARROW
ROWS = {"id": [1, 2, 3], "day": ["a", None, "b"]}


def _table(path: Path, partition_by: list[str] | None = None) -> str:
    core = arro3
    data = core.Table.from_pydict({
        "id": core.Array(ROWS["id"], core.DataType.int64()),
        "day": core.Array(ROWS["day"], core.DataType.string()),
    })  # fmt: skip
    deltalake.write_deltalake(str(path), data, partition_by=partition_by)
    return str(path)


def _want() -> tuple[int, str]:
    h = hash_frame(pa.table({"id": pa.array(ROWS["id"], pa.int64()), "day": ROWS["day"]}))
    return h.row_count, h.data_hash


def test_an_unpartitioned_table_reads_writes_and_hashes_on_this_pyarrow(tmp_path: Path) -> None:
    path = _table(tmp_path / "t")
    got = hash_delta(path).hash
    assert (got.row_count, got.data_hash) == _want()
    write_delta(pa.table({"id": [4], "day": ["c"]}), IOConfig("t", format="delta", mode="append"), path, lambda: None)
    assert sorted(read_table(IOConfig("t", format="delta"), path).column("id").to_pylist()) == [1, 2, 3, 4]


def test_a_partitioned_table_is_read_or_refused_saying_what_to_do(tmp_path: Path) -> None:
    path = _table(tmp_path / "t", partition_by=["day"])
    if not OLD:
        got = hash_delta(path).hash
        assert (got.row_count, got.data_hash) == _want()
        assert read_table(IOConfig("t", format="delta"), path).num_rows == 3
        return
    # Below what deltalake declares it is read where it works (pyarrow 19, Databricks 17.3's), else refused
    for call, what in [
        (lambda: hash_delta(path).hash, "Delta table at"),
        (lambda: read_table(IOConfig("t", format="delta"), path), "input 't' (Delta at"),
    ]:
        try:
            got = call()
        except EngineError as exc:
            text = str(exc)
            assert what in text and "deltalake failed" in text
            assert f"pyarrow {pa.__version__}" in text and "pip install 'pyarrow>=21.0'" in text
        else:
            rows = got.num_rows if isinstance(got, pa.Table) else got.row_count
            assert rows == 3 and (isinstance(got, pa.Table) or (got.row_count, got.data_hash) == _want())
