"""deltalake reads a URL's ``%``, ``?`` and ``#`` as URL syntax where every other reader (Spark's Hadoop paths,
polars' object store, ubunye's own listing) takes them as the characters they are: ``s3://b/t%20x`` was written
to the key ``t x``, ``s3://b/u#x`` to ``u``, ``s3://b/v?x`` to ``v`` (deltalake 1.6.6; an escaped URL does not help).
A run reading parquet at ``s3://b/t x`` and overwriting a Delta output at ``s3://b/t%20x`` (two places to the
output check, as to every reader) wrote its log and files among the input's, which then read [1, 2, 11, 12]
instead of [1, 2], and the record named ``t%20x``. Such URLs are now refused for every deltalake read and write
(hashing.delta_files.check_deltalake_path), naming the input or output and the character, before anything is
written. Against a real S3 server (moto's, on 127.0.0.1). Each test failed before the fix."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from tests.lineage import s3server
from tests.lineage.s3server import ACCESS_KEY, SECRET_KEY
from tests.lineage.usecase import write_task
from tests.optional import needs_polars
from ubunye import run_task
from ubunye.config import IOConfig
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.engines.paths import escaped_url
from ubunye.exceptions import EngineError, UbunyeError
from ubunye.hashing.delta_hash import hash_delta

s3_server = s3server.s3_server  # the fixture
s3 = s3server.s3  # the fixture, with this process's environment pointing at the server

#: (the key of a dataset, a URL key deltalake would take for it, the character that makes it so)
_CLASHES = [("t x", "t%20x", "%"), ("u", "u#x", "#"), ("v", "v?x", "?")]
_ENGINES = ["pandas", pytest.param("polars", marks=needs_polars)]


def _delta_options(endpoint: str) -> dict[str, str]:
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}  # fmt: skip


def _objects(server: s3server.S3, bucket: str) -> dict[str, bytes]:
    import s3fs

    fs = s3fs.S3FileSystem(**server.options)
    fs.invalidate_cache()
    return {key: fs.cat_file(key) for key in fs.find(bucket[len("s3://") :])}


@pytest.mark.parametrize("engine", _ENGINES)
@pytest.mark.parametrize(("read", "written", "char"), _CLASHES)
def test_a_delta_output_at_a_url_deltalake_would_misread_is_refused_before_anything_is_written(
    s3: s3server.S3, tmp_path: Path, engine: str, read: str, written: str, char: str
) -> None:
    import s3fs

    bucket = s3.bucket()
    buffer = io.BytesIO()
    pd.DataFrame({"a": [1, 2]}).to_parquet(buffer)
    s3fs.S3FileSystem(**s3.options).pipe(f"{bucket[len('s3://') :]}/{read}/part-0.parquet", buffer.getvalue())
    before = _objects(s3, bucket)
    config = {
        "inputs": {"src": {"format": "parquet", "path": f"{bucket}/{read}"}},
        "outputs": {"out": {"format": "delta", "mode": "overwrite", "path": f"{bucket}/{written}",
                            "storage_options": _delta_options(s3.endpoint)}},
        "transform": {"type": "sql", "query": "SELECT a + 10 AS a FROM src"},
    }  # fmt: skip
    task_dir = write_task(tmp_path / "uc", "t", {"CONFIG": config}, None)
    with pytest.raises(UbunyeError) as err:  # was: allowed, and written among the input's files (the '%' case)
        run_task(task_dir, engine=engine, lineage=True)
    said = str(err.value)
    assert f"output 'out': the URL {bucket}/{written} holds {char!r}, which deltalake reads as URL syntax" in said
    assert "rename" in said and "Spark engine" in said, said
    assert _objects(s3, bucket) == before  # nothing written: the input reads as it did


@pytest.mark.parametrize(("decoy", "named", "char"), _CLASHES)
def test_a_delta_input_at_a_url_deltalake_would_misread_is_refused(
    s3: s3server.S3, tmp_path: Path, decoy: str, named: str, char: str
) -> None:
    from deltalake import write_deltalake

    bucket = s3.bucket()
    options = _delta_options(s3.endpoint)
    # the table at the key as written, and another at the key deltalake would read instead (which it did read)
    write_deltalake(escaped_url(f"{bucket}/{decoy}"), pa.table({"a": [2]}), storage_options=options)
    write_deltalake(escaped_url(f"{bucket}/{named}"), pa.table({"a": [1]}), storage_options=options)
    url = f"{bucket}/{named}"
    source = IOConfig("src", format="delta", path=url, storage_options=options)
    with pytest.raises(EngineError, match=re.escape(f"the URL {url} holds {char!r}, which deltalake reads")):
        PandasEngine().read(source, tmp_path)  # was: the other table's rows, [2]
    with pytest.raises(EngineError, match=re.escape(f"holds {char!r}")):
        hash_delta(url, storage_options=options)


@needs_polars
@pytest.mark.parametrize(("decoy", "named", "char"), _CLASHES)
def test_a_polars_read_of_such_a_delta_input_is_refused(
    s3: s3server.S3, tmp_path: Path, decoy: str, named: str, char: str
) -> None:
    from deltalake import write_deltalake

    from ubunye.engines.polars_engine import PolarsEngine

    bucket = s3.bucket()
    options = _delta_options(s3.endpoint)
    write_deltalake(escaped_url(f"{bucket}/{decoy}"), pa.table({"a": [2]}), storage_options=options)
    write_deltalake(escaped_url(f"{bucket}/{named}"), pa.table({"a": [1]}), storage_options=options)
    url = f"{bucket}/{named}"
    source = IOConfig("src", format="delta", path=url, storage_options=options)
    with pytest.raises(EngineError, match=re.escape(f"the URL {url} holds {char!r}, which deltalake reads")):
        PolarsEngine().read(source, tmp_path)  # was: the other table's rows ('#', '?'), "not found" ('%')


@needs_polars
@pytest.mark.parametrize(("decoy", "named", "char"), _CLASHES)
def test_a_run_reading_such_a_delta_input_on_polars_is_refused(
    s3: s3server.S3, tmp_path: Path, decoy: str, named: str, char: str
) -> None:
    from deltalake import write_deltalake

    bucket = s3.bucket()
    options = _delta_options(s3.endpoint)
    write_deltalake(escaped_url(f"{bucket}/{decoy}"), pa.table({"a": [2]}), storage_options=options)
    write_deltalake(escaped_url(f"{bucket}/{named}"), pa.table({"a": [1]}), storage_options=options)
    config = {
        "inputs": {"src": {"format": "delta", "path": f"{bucket}/{named}", "storage_options": options}},
        "outputs": {"out": {"format": "parquet", "path": "data/out"}},
        "transform": {"type": "sql", "query": "SELECT a FROM src"},
    }
    task_dir = write_task(tmp_path / "uc", "t", {"CONFIG": config}, None)
    with pytest.raises(UbunyeError, match=re.escape(f"holds {char!r}, which deltalake reads")):
        run_task(task_dir, engine="polars", lineage=False)  # was: ran on the other table's rows ('#', '?')
    assert not (tmp_path / "uc" / "data" / "out").exists()
