"""The polars engine reads a Delta table at an object-store URL as the pandas engine and Spark do when its partition
folders hold characters Spark escapes or keeps (Spark names the folder of ``10:00`` ``s=10%3A00`` and of ``a b``
``s=a b``, and logs their paths escaped once more: ``s=10%253A00``, ``s=a%20b``). polars' Delta reader asked the
store for the logged path escaped again without unescaping it first: another object, and a misleading "not found"
(polars 1.x); such a table is now read through deltalake, whose values are the log's. The test failed before."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from tests.engines.spark_delta import spark_style_table
from tests.lineage import s3server
from tests.optional import needs_polars
from ubunye.config import IOConfig
from ubunye.hashing import hash_frame

s3_server = s3server.s3_server  # the fixture

#: Partition values, the folder Spark names for each and the path its log holds (Hive's escaping, then the URI's).
_SPARK_FOLDERS = [("a b", "s=a b", "s=a%20b"), ("10:00", "s=10%3A00", "s=10%253A00"), ("x", "s=x", "s=x")]


def _spark_style_table(root: Path) -> pa.Table:
    """A Delta table at ``root`` as Spark writes one partitioned by the string column ``s``; the rows it holds."""
    spark_style_table(root, "s", "string", _SPARK_FOLDERS)
    ids = pa.array(range(len(_SPARK_FOLDERS)), pa.int32())
    return pa.table({"id": ids, "s": [value for value, _, _ in _SPARK_FOLDERS]})


@needs_polars
def test_a_spark_delta_table_with_escaped_partition_folders_reads_from_a_url_as_on_pandas(
    s3_server: s3server.S3, tmp_path: Path
) -> None:
    import s3fs

    from ubunye.engines.pandas_engine import PandasEngine
    from ubunye.engines.polars_engine import PolarsEngine

    local = tmp_path / "t"
    rows = _spark_style_table(local)
    bucket = s3_server.bucket()
    s3fs.S3FileSystem(**s3_server.options).put(str(local), f"{bucket[len('s3://') :]}/t", recursive=True)
    key, secret = s3_server.options["key"], s3_server.options["secret"]
    options = {"aws_endpoint_url": s3_server.endpoint, "aws_access_key_id": key, "aws_secret_access_key": secret,
               "aws_region": "us-east-1", "aws_allow_http": "true"}  # fmt: skip
    source = IOConfig("src", format="delta", path=f"{bucket}/t", storage_options=options)
    polars = PolarsEngine()
    read = polars.read(source, tmp_path)  # was: "input 'src': cannot read delta at s3://...: ... not found"
    assert polars.hash(read).data_hash == hash_frame(rows).data_hash
    pandas = PandasEngine()
    assert pandas.hash(pandas.read(source, tmp_path)).data_hash == hash_frame(rows).data_hash
    # the same table in a local folder: polars' own reader reads it, alike
    here = IOConfig("src", format="delta", path=str(local))
    assert polars.hash(polars.read(here, tmp_path)).data_hash == hash_frame(rows).data_hash
