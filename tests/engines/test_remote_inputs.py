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


def _options(s3_server, name: str) -> dict[str, object]:
    """The store options each engine's reader takes: fsspec's names (pandas), object_store's (polars)."""
    if name == "pandas":
        return s3_server.options
    key, secret = s3_server.options["key"], s3_server.options["secret"]
    return {"aws_endpoint_url": s3_server.endpoint, "aws_access_key_id": key, "aws_secret_access_key": secret,
            "aws_region": "us-east-1", "aws_allow_http": "true"}  # fmt: skip


def _put(s3_server, key: str, table) -> str:
    import pyarrow.parquet as pq
    import s3fs

    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    bucket = s3_server.bucket()
    s3fs.S3FileSystem(**s3_server.options).pipe(f"{bucket[len('s3://') :]}/{key}/part-0.parquet", buffer.getvalue())
    return f"{bucket}/{key}"


@pytest.mark.skipif(not HAVE_POLARS, reason="compares the polars engine with pandas")
def test_a_date64_and_a_spark_interval_read_from_a_url_as_from_a_folder(s3_server, tmp_path):
    # The local-folder fixes (polars read a date64 file as datetimes; a column Spark declares an interval was
    # hashed as its integer) did not reach URL inputs, whose files are the reader's to list. A folder URL without a
    # trailing slash (as Spark users write it) was one object to polars: "not found".
    import datetime as dt
    import json

    import pyarrow as pa

    days = pa.table({"id": [1, 2], "day": pa.array([dt.date(2024, 1, 1), None], pa.date64())})
    url = _put(s3_server, "d", days)
    hashes = {name: hash_frame(get_engine(name).read(IOConfig("i", format="parquet", path=url,
                                                              storage_options=_options(s3_server, name)), tmp_path))
              for name in ENGINES}  # fmt: skip
    assert hashes["pandas"] == hashes["polars"] and hashes["pandas"].schema == 'struct<"day":date,"id":int64>'
    spark_schema = {"type": "struct", "fields": [{"name": "i", "type": "interval day", "nullable": True}]}
    interval = pa.table({"i": pa.array([172800000000], pa.int64())}).replace_schema_metadata(
        {b"org.apache.spark.sql.parquet.row.metadata": json.dumps(spark_schema).encode()}
    )
    url = _put(s3_server, "i", interval)
    for name in ENGINES:
        source = IOConfig("i", format="parquet", path=url, storage_options=_options(s3_server, name))
        with pytest.raises(EngineError, match=r"^input 'i': column 'i' is a Spark interval day \(so s3://"):
            get_engine(name).read(source, tmp_path)
