"""A csv file's input of a header alone reads on polars as on pandas and Spark: its columns, as text, and no rows.
polars refused a header without a line break (``x,y``), saying the file "has a row whose fields do not match its
header: CSV parse error: Empty CSV file or block", where there is no row; Spark and pandas read
``struct<"x":string,"y":string>``, 0 rows. A folder's header-alone file is left out (inputs.py): this is a file's."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tests.lineage import s3server
from tests.optional import HAVE_POLARS
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame

pytestmark = pytest.mark.skipif(not HAVE_POLARS, reason="the polars engine")
pl = pytest.importorskip("polars")

s3_server = s3server.s3_server  # the fixture
s3 = s3server.s3  # the server, with the environment pointing at it

#: Header-alone files (name, bytes, the columns read): with and without a line break, compressed, a byte order mark
#: and a quoted name holding a doubled quote and the separator.
_HEADERS = [
    ("one.csv", b"x,y", ["x", "y"]),
    ("lf.csv", b"x,y\n", ["x", "y"]),
    ("crlf.csv", b"x,y\r\n", ["x", "y"]),
    ("one.csv.gz", gzip.compress(b"x,y"), ["x", "y"]),
    ("lf.csv.gz", gzip.compress(b"x,y\n"), ["x", "y"]),
    ("quoted.csv", b'\xef\xbb\xbf"a""b","c,d"', ['a"b', "c,d"]),
    ("single.csv", b"only", ["only"]),
]


@pytest.mark.parametrize(("name", "data", "columns"), _HEADERS, ids=[h[0] for h in _HEADERS])
def test_a_header_alone_reads_as_its_text_columns_without_rows(tmp_path: Path, name, data, columns) -> None:
    file = tmp_path / name
    file.write_bytes(data)
    io = IOConfig("i", format="csv", path=str(file))
    polars = get_engine("polars").read(io, tmp_path)
    assert (polars.columns, polars.height) == (columns, 0)
    assert all(dtype == pl.String for dtype in polars.dtypes)
    assert hash_frame(polars) == hash_frame(get_engine("pandas").read(io, tmp_path))


def test_the_separator_of_the_input_splits_the_header(tmp_path: Path) -> None:
    file = tmp_path / "semi.csv"
    file.write_bytes(b"x;y")
    io = IOConfig("i", format="csv", path=str(file), options={"sep": ";"})
    polars = get_engine("polars").read(io, tmp_path)
    assert polars.columns == ["x", "y"] and polars.height == 0
    assert hash_frame(polars) == hash_frame(get_engine("pandas").read(io, tmp_path))


def test_a_header_naming_a_column_twice_is_still_refused(tmp_path: Path) -> None:
    file = tmp_path / "twice.csv"
    file.write_bytes(b"a,a")
    with pytest.raises(EngineError, match=r"csv header of .*twice\.csv names column 'a' twice"):
        get_engine("polars").read(IOConfig("i", format="csv", path=str(file)), tmp_path)


@pytest.mark.parametrize("name", ["one.csv", "one.csv.gz"])
def test_a_header_alone_at_a_url_reads_as_on_pandas(s3, tmp_path: Path, name: str) -> None:
    import s3fs

    bucket = s3.bucket()
    data = b"x,y" if name == "one.csv" else gzip.compress(b"x,y")
    s3fs.S3FileSystem(**s3.options).pipe(f"{bucket[len('s3://') :]}/{name}", data)
    url = f"{bucket}/{name}"
    polars_options = {
        "aws_endpoint_url": s3.endpoint,
        "aws_access_key_id": s3server.ACCESS_KEY,
        "aws_secret_access_key": s3server.SECRET_KEY,
        "aws_region": "us-east-1",
        "aws_allow_http": "true",
    }
    pandas = hash_frame(get_engine("pandas").read(IOConfig("i", format="csv", path=url), tmp_path))
    assert (pandas.row_count, pandas.schema) == (0, 'struct<"x":string,"y":string>')
    for options in ({}, polars_options):
        io = IOConfig("i", format="csv", path=url, storage_options=options)
        assert hash_frame(get_engine("polars").read(io, tmp_path)) == pandas
