"""csv and json text holding no rows, read as Spark reads it, or refused alike on every engine.

Each test failed before its fix:

- a single csv file of a header alone (``x\\n``) hashed as ``struct<"x":string>`` without rows on Spark and polars,
  but pandas read its column as typeless (null) and refused to hash it; a header without a line break (``x``)
  Spark read as well, pandas failed on it ("Could not read schema ... Is this a 'csv' file?");
- a csv column without a value in any row (``x,y\\n1,\\n``) is text on Spark and polars, typeless on pandas;
- a json file of blank lines (``\\n\\n``, spaces) in a folder, which Spark reads as no rows, was refused with a
  misleading error (pandas: ``b.json has none that a.json lacks``; polars: ``could not infer data-type``, naming the
  folder); read alone it failed on pandas and polars where Spark read a table of no columns;
- a folder of csv files of headers alone was refused as holding "no csv data files", not saying it holds csv files
  whose rows are none.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pyarrow as pa
import pytest

from tests.lineage import s3server
from tests.optional import HAVE_POLARS
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.engines.inputs import listing
from ubunye.exceptions import EngineError
from ubunye.hashing import FrameHash, hash_frame

s3_server = s3server.s3_server  # the fixture
s3 = s3server.s3  # the server, with the environment pointing at it

_POLARS = pytest.param("polars", marks=pytest.mark.skipif(not HAVE_POLARS, reason="the polars engine"))
_ENGINES = ["pandas", _POLARS]


def _read(engine: str, fmt: str, path: str | Path, base: Path, **kw: object) -> object:
    return get_engine(engine).read(IOConfig("i", format=fmt, path=str(path), **kw), base)  # type: ignore[arg-type]


def _hash(engine: str, fmt: str, path: str | Path, base: Path) -> FrameHash:
    return hash_frame(_read(engine, fmt, path, base))


def _texts(*names: str) -> FrameHash:
    """rows-v1 of a table of text columns ``names`` without rows: what Spark reads from a csv header alone."""
    return hash_frame(pa.schema([(n, pa.string()) for n in names]).empty_table())


# --- csv: a header alone, a column without values ------------------------------------------------------------------

_HEADERS = [
    (b"x\n", ["x"]),
    (b"x\r\n", ["x"]),
    (b"x,y\n", ["x", "y"]),
    (b'"a,b",c\n', ["a,b", "c"]),
    (b"\xef\xbb\xbfx\n", ["x"]),  # a byte order mark: not part of the name
    (b"  \n", ["  "]),
]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("engine", _ENGINES)
@pytest.mark.parametrize(("text", "names"), _HEADERS)
def test_a_csv_file_of_a_header_alone_reads_as_its_columns_as_text_without_rows(tmp_path, engine, text, names, gz):
    file = tmp_path / ("one.csv.gz" if gz else "one.csv")
    file.write_bytes(gzip.compress(text) if gz else text)
    assert _hash(engine, "csv", file, tmp_path) == _texts(*names)


def test_a_csv_header_without_a_line_break_reads_as_spark_reads_it_on_pandas(tmp_path):
    # pyarrow needs the line break ("Empty CSV file or block"); Spark reads the columns (polars: see the report)
    file = tmp_path / "one.csv"
    file.write_bytes(b"x,y")
    assert _hash("pandas", "csv", file, tmp_path) == _texts("x", "y")
    file.write_bytes(b"a;b")
    frame = _read("pandas", "csv", file, tmp_path, options={"sep": ";"})
    assert hash_frame(frame) == _texts("a", "b")


@pytest.mark.parametrize("engine", _ENGINES)
def test_a_csv_column_without_a_value_in_any_row_is_text_as_on_spark(tmp_path, engine):
    file = tmp_path / "one.csv"
    file.write_bytes(b"x,y\n,\n,\n")
    expected = hash_frame(
        pa.table({"x": pa.array([None, None], pa.string()), "y": pa.array([None, None], pa.string())})
    )
    assert _hash(engine, "csv", file, tmp_path) == expected
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "part-0.csv").write_bytes(b"n,s\n1,\n")
    (folder / "part-1.csv").write_bytes(b"n,s\n2,\n")
    expected = hash_frame(pa.table({"n": pa.array([1, 2], pa.int64()), "s": pa.array([None, None], pa.string())}))
    assert _hash(engine, "csv", folder, tmp_path) == expected


@pytest.mark.parametrize("engine", _ENGINES)
def test_a_header_alone_beside_files_of_rows_is_still_left_out(tmp_path, engine):
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "part-0.csv").write_bytes(b"x\n")
    (folder / "part-1.csv").write_bytes(b"x\n1\n")
    assert _hash(engine, "csv", folder, tmp_path) == hash_frame(pa.table({"x": pa.array([1], pa.int64())}))


@pytest.mark.parametrize("engine", _ENGINES)
def test_a_folder_of_headers_alone_is_refused_saying_they_hold_no_rows(tmp_path, engine):
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "part-0.csv").write_bytes(b"x\n")
    (folder / "part-1.csv").write_bytes(b"x\n")
    with pytest.raises(EngineError) as err:
        _read(engine, "csv", folder, tmp_path)
    assert str(err.value) == (
        f"input 'i': the folder {folder} holds no csv data files (hidden files such as _SUCCESS and .crc do not "
        "count; 2 csv files holding no rows (empty, or a header alone) left out); set allow_empty: true to read it "
        "as an empty table"
    )
    assert hash_frame(_read(engine, "csv", folder, tmp_path, allow_empty=True)) == hash_frame(pa.table({}))


# --- json: whitespace alone --------------------------------------------------------------------------------------

_BLANKS = [b"\n\n", b"  \n \t\n", b"\r\n\r\n", b" "]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("blank", _BLANKS)
def test_a_json_file_of_whitespace_is_left_out_of_a_folder_on_both_engines(tmp_path, blank, gz):
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "a.json").write_bytes(b'{"x": 1}\n')
    expected = _hash("pandas", "json", folder, tmp_path)  # the folder without it
    assert expected == hash_frame(pa.table({"x": pa.array([1], pa.int64())}))
    (folder / ("b.json.gz" if gz else "b.json")).write_bytes(gzip.compress(blank) if gz else blank)
    assert _hash("pandas", "json", folder, tmp_path) == expected
    if HAVE_POLARS:
        assert _hash("polars", "json", folder, tmp_path) == expected


@pytest.mark.parametrize("engine", _ENGINES)
@pytest.mark.parametrize(
    ("fmt", "text"), [("json", b""), ("json", b"\n\n"), ("json", b" \t\r\n"), ("csv", b""), ("csv", b"\n\r\n")]
)
def test_a_single_file_holding_nothing_is_refused_as_an_empty_folder_is(tmp_path, engine, fmt, text):
    file = tmp_path / f"one.{fmt}"
    file.write_bytes(text)
    with pytest.raises(EngineError) as err:
        _read(engine, fmt, file, tmp_path)
    what = "whitespace" if fmt == "json" else "line breaks"
    assert str(err.value) == (
        f"input 'i': the {fmt} file {file} holds no rows and no columns (it is empty, or {what} alone); set "
        "allow_empty: true to read it as an empty table"
    )
    assert hash_frame(_read(engine, fmt, file, tmp_path, allow_empty=True)) == hash_frame(pa.table({}))


def test_a_long_file_of_whitespace_is_read_as_data_not_looked_at_whole(tmp_path):
    # bounded as the csv header rule: past 64 KiB a file is data for the reader (which refuses this one)
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "a.json").write_bytes(b"\n" * 65_536)
    (folder / "b.json").write_bytes(b"\n" * 65_537)
    assert listing(IOConfig("i", format="json"), folder) == [folder / "b.json"]


# --- at a URL ----------------------------------------------------------------------------------------------------


def _put(server: s3server.S3, files: dict[str, bytes]) -> str:
    import s3fs

    bucket = server.bucket()
    fs = s3fs.S3FileSystem(**server.options)
    for name, data in files.items():
        fs.pipe(f"{bucket[len('s3://') :]}/{name}", data)
    return bucket


@pytest.mark.parametrize("engine", _ENGINES)
def test_rowless_files_at_a_url_read_as_local_ones(s3, tmp_path, engine):
    bucket = _put(
        s3,
        {
            "hdr.csv": b"x,y\n",
            "blank.json": b"\n \n",
            "bad.csv": b"\xffx\n",
            "t/a.json": b'{"x": 1}\n',
            "t/b.json": b"\n\n",
        },
    )
    assert _hash(engine, "csv", f"{bucket}/hdr.csv", tmp_path) == _texts("x", "y")
    assert _hash(engine, "json", f"{bucket}/t", tmp_path) == hash_frame(pa.table({"x": pa.array([1], pa.int64())}))
    with pytest.raises(EngineError, match=rf"^input 'i': the json file {bucket}/blank.json holds no rows and no "):
        _read(engine, "json", f"{bucket}/blank.json", tmp_path)
    with pytest.raises(EngineError, match=rf"^input 'i': {bucket}/bad.csv is not UTF-8 text \(byte 0xff at offset 0"):
        _read(engine, "csv", f"{bucket}/bad.csv", tmp_path)


# --- Spark reads them so ------------------------------------------------------------------------------------------


@pytest.mark.spark
def test_spark_reads_rowless_text_as_the_other_engines_do(spark, tmp_path):
    from ubunye.engines.spark_engine import SparkEngine, _reader_options

    engine = SparkEngine(spark=spark)
    header, column = tmp_path / "hdr.csv", tmp_path / "col.csv"
    header.write_bytes(b"x,y\n")
    column.write_bytes(b"x,y\n,\n")
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "a.json").write_bytes(b'{"x": 1}\n')
    (folder / "b.json").write_bytes(b"  \n\n")
    blank = tmp_path / "blank.json"
    blank.write_bytes(b"\n\n")
    for fmt, path in (("csv", header), ("csv", column), ("json", folder)):
        io = IOConfig("i", format=fmt, path=str(path))
        assert _same(engine.hash(engine.read(io, tmp_path))) == _same(_hash("pandas", fmt, path, tmp_path)), path
    # Spark's own reader: a table of no columns from blank lines, which the engines refuse unless allow_empty
    io = IOConfig("i", format="json", path=str(blank), allow_empty=True)
    raw = spark.read.options(**_reader_options(io)).format("json").load(str(blank))
    assert _same(engine.hash(raw)) == _same(engine.hash(engine.read(io, tmp_path))) == _same(hash_frame(pa.table({})))
    with pytest.raises(EngineError, match=r"holds no rows and no columns"):
        engine.read(IOConfig("i", format="json", path=str(blank)), tmp_path)


def _same(found: FrameHash) -> tuple[str, int, str]:
    """What must match across engines (not which implementation hashed)."""
    return found.schema, found.row_count, found.data_hash
