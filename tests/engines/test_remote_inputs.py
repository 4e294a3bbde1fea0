"""Inputs at object-store URLs read with the config's ``storage_options`` on every engine that reads URLs: the same
config reads the same rows on pandas and polars, whatever the environment points at."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from tests.lineage import s3server
from tests.optional import HAVE_POLARS
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame

s3_server = s3server.s3_server  # the fixture

ENGINES = ["pandas", "polars"] if HAVE_POLARS else ["pandas"]


@pytest.mark.parametrize("name", ENGINES)
def test_storage_options_choose_the_store_an_input_is_read_from(s3_server, monkeypatch, tmp_path, name):
    # pandas ignored them: the environment's endpoint was read (other rows, the same location in the record)
    import s3fs

    bucket = s3_server.bucket()
    fs = s3fs.S3FileSystem(**s3_server.options)
    wanted = pd.DataFrame({"id": [7, 8]})
    buffer = io.BytesIO()
    wanted.to_parquet(buffer)
    fs.pipe(f"{bucket[len('s3://') :]}/i/part-0.parquet", buffer.getvalue())
    # the environment names no server at all: only the options reach it
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # the discard port: nothing listens
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA-not-these")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-these")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    source = IOConfig("i", format="parquet", path=f"{bucket}/i/part-0.parquet", storage_options=s3_server.options)
    engine = get_engine(name)
    read = engine.read(source, tmp_path)
    assert engine.hash(read).data_hash == hash_frame(wanted).data_hash


def test_storage_options_a_filesystem_cannot_take_are_refused_naming_the_input(s3_server, tmp_path):
    # deltalake's names (AWS_REGION...) on a parquet input: fsspec's TypeError, said with the key and the names it takes
    options = {"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": s3_server.endpoint}
    source = IOConfig("i", format="parquet", path="s3://b/i/part-0.parquet", storage_options=options)
    with pytest.raises(EngineError) as err:
        get_engine("pandas").read(source, tmp_path)
    said = str(err.value)
    assert said.startswith("input 'i': CONFIG.inputs.i.storage_options: the s3:// filesystem pandas reads parquet "), (
        said
    )
    assert "'AWS_REGION'" in said and "s3fs: key, secret, endpoint_url" in said, said
