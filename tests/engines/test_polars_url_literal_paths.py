"""A URL's path is the store's key as written, on polars' listing as on its read: ``s3://b/t%20x`` is the folder
``t%20x`` (as polars and Spark read it: Hadoop's Path of the text, whose ``toUri().getPath()`` is S3A's key), a
space, a non-ASCII letter, ``?`` and ``#`` are themselves. The listing (pyarrow's ``FileSystem.from_uri`` of the
URL, without storage_options) unescaped the path and refused a space or a non-ASCII letter, so polars listed (and
checked the footers of) ``t x``'s files while it read ``t%20x``'s, and failed on ``t x`` and ``té`` ("Cannot parse
URI"), which it read before; with storage_options, ``?`` and ``#`` cut the path the listing took."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.lineage import s3server
from tests.optional import HAVE_POLARS
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.hashing import hash_frame

pytestmark = pytest.mark.skipif(not HAVE_POLARS, reason="the polars engine")

s3_server = s3server.s3_server  # the fixture
s3 = s3server.s3  # the server, with the environment pointing at it

#: Folders whose names read as one another when a URL's path is unescaped or cut at ? or #: each holds its own
#: file names (so a listing of one folder read from another fails) and its own ids.
_FOLDERS = {
    "t x": {"part-0.parquet": [1], "part-1.parquet": [2]},
    "t%20x": {"part-9.parquet": [8, 9]},
    "té": {"part-2.parquet": [5, 6]},
    "t%C3%A9": {"part-3.parquet": [7]},
    "t": {"part-4.parquet": [40]},
    "t?x": {"part-5.parquet": [50]},
    "t#x": {"part-6.parquet": [60]},
}


@pytest.fixture(scope="module")
def bucket(s3_server: s3server.S3) -> str:
    """One bucket holding every folder of :data:`_FOLDERS` (the keys as written, uploaded with s3fs)."""
    import s3fs

    url = s3_server.bucket()
    fs = s3fs.S3FileSystem(**s3_server.options)
    for folder, files in _FOLDERS.items():
        for name, ids in files.items():
            sink = pa.BufferOutputStream()
            pq.write_table(pa.table({"id": ids}), sink)
            fs.pipe(f"{url[len('s3://') :]}/{folder}/{name}", sink.getvalue().to_pybytes())
    return url


def _ids(frame: object) -> list[int]:
    return sorted(frame["id"].to_list())  # type: ignore[index]


@pytest.mark.parametrize("folder", list(_FOLDERS))
def test_polars_lists_the_key_it_reads_from_the_environment(s3, bucket, tmp_path, folder):
    got = get_engine("polars").read(IOConfig("i", format="parquet", path=f"{bucket}/{folder}"), tmp_path)
    assert _ids(got) == sorted(i for ids in _FOLDERS[folder].values() for i in ids)


@pytest.mark.parametrize("folder", list(_FOLDERS))
def test_polars_lists_the_key_it_reads_with_storage_options(s3_server, bucket, tmp_path, folder):
    io = IOConfig("i", format="parquet", path=f"{bucket}/{folder}", storage_options=s3_server.polars_options())
    got = get_engine("polars").read(io, tmp_path)
    assert _ids(got) == sorted(i for ids in _FOLDERS[folder].values() for i in ids)


@pytest.mark.parametrize("folder", ["t x", "t%20x", "té"])
def test_polars_reads_a_url_as_pandas_with_storage_options_does(s3_server, bucket, tmp_path, folder):
    # pandas with storage_options (fsspec) takes the key as written too
    url = f"{bucket}/{folder}"
    polars = get_engine("polars").read(
        IOConfig("i", format="parquet", path=url, storage_options=s3_server.polars_options()), tmp_path
    )
    pandas = get_engine("pandas").read(
        IOConfig("i", format="parquet", path=url, storage_options=s3_server.options), Path(tmp_path)
    )
    assert hash_frame(polars) == hash_frame(pandas)
