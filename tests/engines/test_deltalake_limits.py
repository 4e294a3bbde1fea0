"""What deltalake mishandles is refused before it reads or writes (engines/delta.py and hash_delta), named: a local
path holding ``%`` (it decodes it: ``a%20b`` is another folder, ``a b``), or for writes ``[`` and ``]`` (its
writer panics with a pyo3 PanicException, which is no Exception: it passed the runner's handler and ended the
run without a final record); a negative decimal partition value with a fraction (written as '-1.-50', then
refused by deltalake itself naming no column). Each test failed before the check; the pandas and polars engines
share the write path."""

from __future__ import annotations

import decimal
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from tests.lineage.usecase import last, write_task
from ubunye.config import IOConfig
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.exceptions import EngineError, UbunyeError
from ubunye.hashing.delta_hash import hash_delta
from ubunye.runner import run_task

_TASK = (
    "import pandas as pd\nfrom ubunye import Task\n\nclass T(Task):\n    def transform(self, sources):\n"
    "        return {'o': pd.DataFrame({'x': [1, 2]})}\n"
)


@pytest.mark.parametrize("folder", ["a[b", "a]b", "a%20b"])
def test_a_delta_output_path_deltalake_would_misuse_fails_the_run_with_a_record(tmp_path: Path, folder: str) -> None:
    config = {"CONFIG": {"outputs": {"o": {"format": "delta", "path": f"data/{folder}"}}, "monitors": ["lineage"]}}
    task_dir = write_task(tmp_path / "uc", "t", config, _TASK)
    with pytest.raises(UbunyeError, match=r"output 'o': deltalake cannot use the local path .*rename the folder"):
        run_task(task_dir)
    record = last(tmp_path / "uc", "t")
    assert record.status == "failed" and record.outputs[0].written is False
    assert not (tmp_path / "uc" / "data" / folder).exists()  # nothing written (beside the output's lock file)


def test_a_percent_path_is_never_read_as_the_folder_it_decodes_to(tmp_path: Path) -> None:
    write_deltalake(str(tmp_path / "a b"), pa.table({"x": [1]}))  # what deltalake would read instead
    write_deltalake(str(tmp_path / "other"), pa.table({"x": [2]}))
    (tmp_path / "other").rename(tmp_path / "a%20b")
    io = IOConfig("i", format="delta", path="a%20b")
    with pytest.raises(EngineError, match=r"Delta table 'i': deltalake cannot use the local path .*decodes '%'"):
        PandasEngine().read(io, tmp_path)
    with pytest.raises(EngineError, match="decodes '%'"):
        hash_delta(str(tmp_path / "a%20b"))


def test_a_file_url_with_escapes_is_left_to_deltalake(tmp_path: Path) -> None:
    # In a URL '%20' is the URL's own escape of a space: the folder 'a b' is meant, and read.
    write_deltalake(str(tmp_path / "a b"), pa.table({"x": [7]}))
    url = (tmp_path / "a b").as_uri()
    assert "%20" in url
    assert hash_delta(url).hash.row_count == 1
    assert DeltaTable(url).to_pyarrow_table().column("x").to_pylist() == [7]


def test_a_bracket_folder_is_still_read(tmp_path: Path) -> None:
    # deltalake reads such a folder faithfully; only its writer fails: reads are not refused.
    write_deltalake(str(tmp_path / "plain"), pa.table({"x": [3]}))
    (tmp_path / "plain").rename(tmp_path / "a[b]")
    frame = PandasEngine().read(IOConfig("i", format="delta", path="a[b]"), tmp_path)
    assert frame["x"].tolist() == [3]


def test_a_negative_decimal_partition_value_with_a_fraction_is_refused_naming_the_column(tmp_path: Path) -> None:
    import pandas as pd

    engine = PandasEngine()
    io = IOConfig("o", format="delta", path="data/o", partition_by=["d"])
    values = [decimal.Decimal(v) for v in ("1.50", "-3.00")]
    frame = pd.DataFrame({"d": pd.array(values, dtype=pd.ArrowDtype(pa.decimal128(5, 2))), "x": [1, 2]})
    engine.write(frame, io, tmp_path)  # positive ones and whole negative ones are written as they are
    back = engine.read(IOConfig("i", format="delta", path="data/o"), tmp_path)
    assert engine.hash(back).data_hash == engine.hash(frame).data_hash
    bad = pd.DataFrame({"d": pd.array([decimal.Decimal("-1.50")], dtype=pd.ArrowDtype(pa.decimal128(5, 2))), "x": [3]})
    version = DeltaTable(str(tmp_path / "data" / "o")).version()
    with pytest.raises(EngineError, match=r"partition column 'd' \(decimal\(5,2\)\) holds a negative value with a"):
        engine.write(bad, IOConfig("o", format="delta", path="data/o", mode="append", partition_by=["d"]), tmp_path)
    assert DeltaTable(str(tmp_path / "data" / "o")).version() == version  # nothing committed
