"""A local Delta table whose folder path holds a character a URL escapes (a space, ``#``, a non-ASCII letter, in
the table's folder or a parent) reads on polars as on pandas, from a defect found in the twentieth session:
deltalake's URI of the table escapes the path (``file:///d/t%20x/``), polars' Delta reader asked for the data files
by that escaped path and failed ("No such file or directory") where pandas (deltalake's reader) read the table.
Such tables are read through deltalake, as polars already does where its own reader misreads a table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("deltalake", reason="deltalake is not installed in this venv")

from tests.optional import HAVE_POLARS
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.engines.delta import write_delta
from ubunye.hashing import hash_frame

pytestmark = pytest.mark.skipif(not HAVE_POLARS, reason="the polars engine")


@pytest.mark.parametrize("folder", ["t x", "té", "t#x", "a b/t"])
@pytest.mark.parametrize("partition_by", [[], ["k"]], ids=["flat", "partitioned"])
def test_a_delta_table_at_an_escaped_path_reads_on_polars_as_on_pandas(
    tmp_path: Path, folder: str, partition_by: list[str]
) -> None:
    path = tmp_path / folder
    rows = pa.table({"id": [1, 2, 3], "k": ["x y", "é", "a#b"]})
    write_delta(rows, IOConfig("o", format="delta", partition_by=partition_by), str(path), lambda: None)
    io = IOConfig("i", format="delta", path=str(path))
    polars = get_engine("polars").read(io, tmp_path)
    assert sorted(polars["id"].to_list()) == [1, 2, 3]
    assert hash_frame(polars) == hash_frame(get_engine("pandas").read(io, tmp_path))


def test_the_version_asked_for_is_the_one_read(tmp_path: Path) -> None:
    path = tmp_path / "t x"
    for ids in ([1], [2, 3]):
        io = IOConfig("o", format="delta", mode="append", partition_by=["k"])
        write_delta(pa.table({"id": ids, "k": ["a"] * len(ids)}), io, str(path), lambda: None)
    first = get_engine("polars").read(IOConfig("i", format="delta", path=str(path), version=0), tmp_path)
    assert first["id"].to_list() == [1]
    assert sorted(get_engine("polars").read(IOConfig("i", format="delta", path=str(path)), tmp_path)["id"]) == [1, 2, 3]
