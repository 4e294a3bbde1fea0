"""A Delta table as Arrow on this pyarrow: hashed where deltalake's Arrow side takes this pyarrow (>= 21, its own
requirement), else a clear error naming the table, this pyarrow and what to do (pyarrow 14 failed inside deltalake
with "Expected object with __arrow_c_array__ or __arrow_c_stream__ method"). The table is written through arro3,
which needs no pyarrow, so both sides run on every venv that has deltalake (``make floors`` installs it)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame
from ubunye.hashing.delta_files import DELTALAKE_PYARROW
from ubunye.hashing.delta_hash import hash_delta

deltalake = pytest.importorskip("deltalake", reason="deltalake is not installed in this venv")
arro3 = pytest.importorskip("arro3.core", reason="arro3 (deltalake's Arrow library) is not installed")

PYARROW = tuple(int(p) for p in pa.__version__.split(".")[:2])


def _table(path: Path) -> str:
    core = arro3
    data = core.Table.from_pydict({
        "id": core.Array([1, 2, 3], core.DataType.int64()),
        "name": core.Array(["a", None, "c"], core.DataType.string()),
    })  # fmt: skip
    deltalake.write_deltalake(str(path), data)
    return str(path)


@pytest.mark.skipif(PYARROW < DELTALAKE_PYARROW, reason="this pyarrow is older than deltalake's Arrow side takes")
def test_a_delta_table_hashes_as_its_rows(tmp_path: Path) -> None:
    got = hash_delta(_table(tmp_path / "t")).hash
    want = hash_frame(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", None, "c"]}))
    assert (got.row_count, got.data_hash) == (want.row_count, want.data_hash)


@pytest.mark.skipif(PYARROW >= DELTALAKE_PYARROW, reason="this pyarrow is one deltalake's Arrow side takes")
def test_an_older_pyarrow_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    path = _table(tmp_path / "t")
    with pytest.raises(EngineError) as caught:
        hash_delta(path)
    text = str(caught.value)
    assert "Delta table at" in text and path.rsplit("/", 1)[-1] in text
    assert f"pyarrow {pa.__version__}" in text and "pip install 'pyarrow>=21.0'" in text


@pytest.mark.skipif(PYARROW < DELTALAKE_PYARROW, reason="this pyarrow is older than deltalake's Arrow side takes")
def test_the_in_process_engines_read_and_write_delta(tmp_path: Path) -> None:
    from ubunye.config import IOConfig
    from ubunye.engines.delta import read_table, write_delta

    path = _table(tmp_path / "t")
    write_delta(pa.table({"id": [4], "name": ["d"]}), IOConfig("t", format="delta", mode="append"), path, lambda: None)
    assert sorted(read_table(IOConfig("t", format="delta"), path).column("id").to_pylist()) == [1, 2, 3, 4]


@pytest.mark.skipif(PYARROW >= DELTALAKE_PYARROW, reason="this pyarrow is one deltalake's Arrow side takes")
def test_the_in_process_engines_refuse_delta_saying_what_to_do(tmp_path: Path) -> None:
    # pyarrow 14 read an unpartitioned table, failed on a partitioned one ("field() takes at least 2 positional
    # arguments") and crashed the interpreter at exit after a write: deltalake does not take it, so neither do we.
    from ubunye.config import IOConfig
    from ubunye.engines.delta import read_table, write_delta

    path = _table(tmp_path / "t")
    with pytest.raises(EngineError, match=rf"input 't' \(Delta at .*\).*pyarrow {pa.__version__}"):
        read_table(IOConfig("t", format="delta"), path)
    with pytest.raises(EngineError, match=rf"output 't' \(Delta at .*\).*pyarrow {pa.__version__}"):
        write_delta(pa.table({"id": [4]}), IOConfig("t", format="delta", mode="append"), path, lambda: None)
    assert deltalake.DeltaTable(path).version() == 0  # nothing was written
