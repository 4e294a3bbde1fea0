"""``storage_options`` on a local input or output (a plain path, ``file://``) are used by no engine: the run warns
of each such dataset, naming the config, the key and the local path, and still runs (one config serves a local
path in development and an ``s3://`` one in production, with the same options). A URL's options are used: no
warning for it. Against a real S3 server (moto's, on 127.0.0.1)."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pandas as pd

from tests.lineage import s3server
from tests.lineage.usecase import write_task
from ubunye import run_task

s3_server = s3server.s3_server  # the fixture
s3 = s3server.s3

_SQL = {"type": "sql", "query": "SELECT a + 1 AS a FROM src"}


def _unused(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "storage_options: not used" in r.getMessage()]


def test_storage_options_on_local_paths_are_warned_of_and_the_run_succeeds(tmp_path: Path, caplog):
    uc = tmp_path / "uc"
    (uc / "data" / "src").mkdir(parents=True)
    pd.DataFrame({"a": [1, 2]}).to_parquet(uc / "data" / "src" / "part-0.parquet")
    options = {"endpoint_url": "http://127.0.0.1:9", "key": "x"}
    out = (uc / "data" / "o").as_uri()  # file:// is local too
    config = {
        "inputs": {"src": {"format": "parquet", "path": "data/src", "storage_options": options}},
        "outputs": {"o": {"format": "parquet", "path": out, "mode": "overwrite", "storage_options": options}},
        "transform": _SQL,
    }
    task_dir = write_task(uc, "t", {"CONFIG": config})
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        result = run_task(task_dir, engine="pandas")
    assert result.status == "success"
    said = _unused(caplog)
    assert len(said) == 2, said
    config_file = task_dir / "config.yaml"
    source, output = sorted(said)
    assert source.startswith(f"{config_file}: CONFIG.inputs.src.storage_options: not used: {uc / 'data' / 'src'} ")
    assert output.startswith(f"{config_file}: CONFIG.outputs.o.storage_options: not used: {uc / 'data' / 'o'} ")
    assert "local path" in source and "local path" in output
    assert all("127.0.0.1:9" not in m for m in said)  # the values are never shown: they may be secrets


def test_storage_options_on_an_object_store_url_are_not_warned_of(s3, tmp_path: Path, caplog):
    import s3fs

    bucket = s3.bucket()
    buffer = io.BytesIO()
    pd.DataFrame({"a": [1, 2]}).to_parquet(buffer)
    s3fs.S3FileSystem(**s3.options).pipe(f"{bucket[len('s3://') :]}/src/part-0.parquet", buffer.getvalue())
    uc = tmp_path / "uc"
    config = {
        "inputs": {"src": {"format": "parquet", "path": f"{bucket}/src", "storage_options": s3.options}},
        "outputs": {"o": {"format": "parquet", "path": "data/o", "mode": "overwrite"}},
        "transform": _SQL,
    }
    task_dir = write_task(uc, "t", {"CONFIG": config})
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        result = run_task(task_dir, engine="pandas")
    assert result.status == "success"
    assert _unused(caplog) == []
