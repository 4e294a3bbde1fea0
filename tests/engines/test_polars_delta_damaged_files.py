"""A Delta table whose data file is damaged (truncated) is refused on polars naming the table and the file, as on
pandas. polars' reader panicked ("assertion failed: range.end as u64 <= self.size"), naming no file, after Rust's
panic dump on stderr; a local table's footers are now checked before polars reads them, and a URL's after polars'
reader fails. Both tests failed before."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.lineage import s3server
from tests.optional import needs_polars
from ubunye.config import IOConfig
from ubunye.exceptions import EngineError

s3_server = s3server.s3_server  # the fixture


def _damaged_table(root: Path, partitioned: bool) -> str:
    """A Delta table at ``root`` (two commits), one data file truncated to 100 bytes; that file's path in its log."""
    from deltalake import write_deltalake

    frame = pd.DataFrame({"k": range(50), "v": [f"v{i}" for i in range(50)], "p": ["a b"] * 25 + ["c"] * 25})
    for _ in range(2):
        write_deltalake(str(root), frame, mode="append", partition_by=["p"] if partitioned else None)
    damaged = sorted(root.rglob("*.parquet"))[0]
    damaged.write_bytes(damaged.read_bytes()[:100])
    return damaged.relative_to(root).as_posix()


def _refusals(source: IOConfig, base: Path) -> tuple[str, str]:
    from ubunye.engines.pandas_engine import PandasEngine
    from ubunye.engines.polars_engine import PolarsEngine

    said = []
    for engine in (PandasEngine(), PolarsEngine()):
        with pytest.raises(EngineError) as err:
            engine.read(source, base)
        said.append(str(err.value))
    return said[0], said[1]


@needs_polars
@pytest.mark.parametrize("partitioned", [False, True])
def test_a_truncated_data_file_is_named_on_polars_as_on_pandas(tmp_path: Path, capfd, partitioned: bool) -> None:
    table = tmp_path / "t"
    damaged = _damaged_table(table, partitioned)
    capfd.readouterr()
    pandas, polars = _refusals(IOConfig("src", format="delta", path=str(table)), tmp_path)
    assert Path(damaged).name in pandas and "magic bytes not found in footer" in pandas, pandas
    assert polars.startswith(f"input 'src': cannot read delta at {table}: its data file "), polars
    assert Path(damaged).name in polars and "magic bytes not found in footer" in polars, polars
    assert "PanicException" not in polars, polars
    assert "panicked" not in capfd.readouterr().err  # no Rust panic dump before the error


@needs_polars
def test_a_truncated_data_file_at_a_url_is_named_on_polars(s3_server: s3server.S3, tmp_path: Path) -> None:
    import s3fs

    local = tmp_path / "t"
    damaged = _damaged_table(local, partitioned=False)
    bucket = s3_server.bucket()
    s3fs.S3FileSystem(**s3_server.options).put(str(local), f"{bucket[len('s3://') :]}/t", recursive=True)
    source = IOConfig("src", format="delta", path=f"{bucket}/t", storage_options=s3_server.polars_options())
    from ubunye.engines.polars_engine import PolarsEngine

    with pytest.raises(EngineError) as err:
        PolarsEngine().read(source, tmp_path)
    said = str(err.value)
    assert said.startswith(f"input 'src': cannot read delta at {bucket}/t: its data file {damaged!r} is damaged"), said
    assert "magic bytes not found in footer" in said, said
