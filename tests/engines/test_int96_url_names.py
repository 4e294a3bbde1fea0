"""The polars engine's refusal of an INT96 timestamp with a non-zero sub-microsecond part (ubunye.engines.int96)
names a file at a URL by its URL, as the user wrote it. It named the file's path on the store: ``bucket/key``
without the ``s3://`` a user would paste back, and for an ``s3a://`` URL read with storage_options the key alone,
without even the bucket."""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.lineage import s3server
from tests.optional import needs_polars
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.exceptions import EngineError

pytestmark = needs_polars
s3_server, s3 = s3server.s3_server, s3server.s3  # the fixtures

NANOS = 1_700_000_000_123_456_001  # 2023-11-14T22:13:20.123456001Z


def _int96_with_nanoseconds() -> bytes:
    """A parquet file as Spark writes INT96 (no Arrow schema in its footer), holding one value with nanoseconds."""
    buffer = io.BytesIO()
    table = pa.table({"id": [1], "t": pa.array([NANOS], pa.timestamp("ns"))})
    pq.write_table(table, buffer, use_deprecated_int96_timestamps=True, store_schema=False)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("scheme", "with_options"), [("s3", False), ("s3", True), ("s3a", True)], ids=["s3-env", "s3-options", "s3a"]
)
def test_the_refusal_names_the_file_by_the_url_written(
    s3: s3server.S3, tmp_path: Path, scheme: str, with_options: bool
) -> None:
    import s3fs

    bucket = s3.bucket().removeprefix("s3://")
    s3fs.S3FileSystem(**s3.options).pipe(f"{bucket}/events/day=1/part-0.parquet", _int96_with_nanoseconds())
    url = f"{scheme}://{bucket}/events"
    options = s3.options if with_options else {}
    with pytest.raises(EngineError) as err:
        get_engine("polars").read(IOConfig("i", format="parquet", path=url, storage_options=options), tmp_path)
    said = str(err.value)
    want = f"input 'i': {url}/day=1/part-0.parquet: column 't' holds an INT96 timestamp with a non-zero sub-microsecond"
    assert said.startswith(want), said
    assert "(2023-11-14 22:13:20.123456001Z)" in said, said
