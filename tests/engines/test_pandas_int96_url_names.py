"""The pandas engine's INT96 refusals (ubunye.engines.int96: a value with a non-zero sub-microsecond part, and a
folder holding a column as INT96 in one file and as a timestamp without zone in another) name a file at a URL by
its URL, as the user wrote it. They named the file's path on the store: ``bucket/key`` without the ``s3://`` a
user would paste back, and for an ``s3a://`` URL read with storage_options no ``s3a://`` either."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.lineage import s3server
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.exceptions import EngineError

s3_server, s3 = s3server.s3_server, s3server.s3  # the fixtures

NANOS = 1_700_000_000_123_456_001  # 2023-11-14T22:13:20.123456001Z

URLS = pytest.mark.parametrize(
    ("scheme", "with_options"), [("s3", False), ("s3", True), ("s3a", True)], ids=["s3-env", "s3-options", "s3a"]
)


def _parquet(table: pa.Table, *, int96: bool) -> bytes:
    """``table`` as a parquet file; with INT96 timestamps as Spark writes them (no Arrow schema in its footer)."""
    buffer = io.BytesIO()
    pq.write_table(table, buffer, use_deprecated_int96_timestamps=int96, store_schema=not int96)
    return buffer.getvalue()


def _refusal(
    s3: s3server.S3, tmp_path: Path, scheme: str, with_options: bool, files: dict[str, bytes]
) -> tuple[str, str]:
    """The URL of a folder holding ``files`` and what reading it on pandas raised."""
    import s3fs

    bucket = s3.bucket().removeprefix("s3://")
    store = s3fs.S3FileSystem(**s3.options)
    for name, data in files.items():
        store.pipe(f"{bucket}/events/{name}", data)
    url = f"{scheme}://{bucket}/events"
    options = s3.options if with_options else {}
    with pytest.raises(EngineError) as err:
        get_engine("pandas").read(IOConfig("i", format="parquet", path=url, storage_options=options), tmp_path)
    return url, str(err.value)


@URLS
def test_a_sub_microsecond_refusal_names_the_file_by_the_url_written(
    s3: s3server.S3, tmp_path: Path, scheme: str, with_options: bool
) -> None:
    nanos = pa.table({"id": [1], "t": pa.array([NANOS], pa.timestamp("ns"))})
    files = {"day=1/part-0.parquet": _parquet(nanos, int96=True)}
    url, said = _refusal(s3, tmp_path, scheme, with_options, files)
    want = f"input 'i': {url}/day=1/part-0.parquet: column 't' holds an INT96 timestamp with a non-zero sub-microsecond"
    assert said.startswith(want), said
    assert "(2023-11-14 22:13:20.123456001Z)" in said, said


@URLS
def test_a_mixed_types_refusal_names_both_files_by_the_url_written(
    s3: s3server.S3, tmp_path: Path, scheme: str, with_options: bool
) -> None:
    local = pa.table({"t": [dt.datetime(2024, 1, 1)]})  # zone-less: INT64 timestamp_ntz, or INT96
    files = {"a.parquet": _parquet(local, int96=True), "b.parquet": _parquet(local, int96=False)}
    url, said = _refusal(s3, tmp_path, scheme, with_options, files)
    assert said.startswith("input 'i': its files have different column types: column 't'"), said
    assert f"{url}/a.parquet" in said, said
    assert f"{url}/b.parquet" in said, said
