"""A folder at an object-store URL reads on polars as the same folder read locally, and as pandas reads the URL:
listed by the local rules (inputs.remote_files), its partition folders typed as Spark types them, files of other
columns or types refused by name. polars listed a URL itself before: a folder Spark wrote (its ``.crc`` files) was
refused ("directory contained paths with different file extensions") and ``k=0`` was read as polars' int64 where
Spark, pandas and a local folder read an int."""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.lineage import s3server
from tests.optional import HAVE_POLARS
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame

pytestmark = pytest.mark.skipif(not HAVE_POLARS, reason="the polars engine")

s3_server = s3server.s3_server  # the fixture
s3 = s3server.s3  # the server, with the environment pointing at it


def _write(folder: Path, parts: dict[str, pa.Table], fmt: str = "parquet") -> Path:
    """``parts`` (a file's path under ``folder`` -> its rows) written as ``fmt`` files, with the hidden files Spark
    writes beside them (a ``.crc`` per file, ``_SUCCESS`` and its ``.crc``)."""
    import pyarrow.csv as pcsv

    for name, table in parts.items():
        file = folder / name
        file.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "parquet":
            pq.write_table(table, file)
        elif fmt == "csv":
            pcsv.write_csv(table, file)
        else:
            buffer = io.StringIO()
            table.to_pandas().to_json(buffer, orient="records", lines=True)
            file.write_text(buffer.getvalue())
        (file.parent / f".{file.name}.crc").write_bytes(b"\x00")
    (folder / "_SUCCESS").write_text("")
    (folder / "._SUCCESS.crc").write_bytes(b"\x00")
    return folder


def _read(engine: str, fmt: str, path: str, tmp_path: Path, options: dict[str, object] | None = None) -> object:
    return get_engine(engine).read(IOConfig("i", format=fmt, path=path, storage_options=options or {}), tmp_path)


_ROWS = {
    "d=2024-01-01/s=a%2Fb/k=7/part-0": pa.table({"id": [1, 2]}),
    "d=2024-01-02/s=x y/k=0/part-0": pa.table({"id": [3]}),
    "d=2024-01-02/s=x y/k=0/part-1": pa.table({"id": [4]}),
}


def test_a_spark_written_partitioned_url_folder_reads_as_locally_and_as_on_pandas(s3, tmp_path):
    # refused before ("different file extensions": the .crc files); without them, k read as polars' int64
    folder = _write(tmp_path / "t", {f"{k}.parquet": v for k, v in _ROWS.items()})
    url = s3.upload(folder)
    remote = hash_frame(_read("polars", "parquet", url, tmp_path))
    assert remote == hash_frame(_read("polars", "parquet", str(folder), tmp_path))
    assert remote == hash_frame(_read("pandas", "parquet", url, tmp_path))
    assert remote.schema == 'struct<"d":date,"id":int64,"k":int32,"s":string>', remote.schema


def test_a_url_folder_read_with_storage_options_reads_as_locally(s3_server, tmp_path):
    folder = _write(tmp_path / "t", {f"{k}.parquet": v for k, v in _ROWS.items()})
    url = s3_server.upload(folder)
    remote = hash_frame(_read("polars", "parquet", url, tmp_path, s3_server.polars_options()))
    assert remote == hash_frame(_read("polars", "parquet", str(folder), tmp_path))
    assert remote.schema == 'struct<"d":date,"id":int64,"k":int32,"s":string>', remote.schema


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_text_url_folder_reads_as_locally_and_as_on_pandas(s3, tmp_path, fmt):
    # a header alone (Spark's empty task) first: skipped as locally
    folder = _write(tmp_path / "t", {f"part-1.{fmt}": pa.table({"id": [1, 2], "s": ["a", "b"]})}, fmt)
    (folder / f"part-0.{fmt}").write_text("id,s\n" if fmt == "csv" else "")
    url = s3.upload(folder)
    remote = hash_frame(_read("polars", fmt, url, tmp_path))
    assert remote == hash_frame(_read("polars", fmt, str(folder), tmp_path))
    assert remote == hash_frame(_read("pandas", fmt, url, tmp_path))


def test_a_url_file_with_another_column_is_refused_naming_both_files(s3, tmp_path):
    folder = _write(tmp_path / "drift", {"part-0.parquet": pa.table({"id": [1], "a": ["x"]}),
                                         "part-1.parquet": pa.table({"id": [2], "a": ["y"], "b": [5]})})  # fmt: skip
    url = s3.upload(folder)
    with pytest.raises(EngineError) as err:
        _read("polars", "parquet", url, tmp_path)
    said = str(err.value)
    assert said.startswith(f"input 'i': its files have different columns: {url}/part-0.parquet has none that "), said
    assert f"{url}/part-1.parquet has b" in said, said


@pytest.mark.parametrize(
    ("stray", "said"),
    [
        ("notes/p.parquet", r"^input 'i': s3://\S+/t/notes is a folder inside the parquet data folder s3://\S+/t but "),
        ("README.txt", r"^input 'i': s3://\S+/t/README\.txt is not a parquet file "),
    ],
)
def test_a_stray_file_or_folder_at_a_url_is_refused_naming_it(s3, tmp_path, stray, said):
    folder = _write(tmp_path / "t", {"part-0.parquet": pa.table({"id": [1]})})
    (folder / stray).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": [9]}), folder / stray)
    url = s3.upload(folder)
    with pytest.raises(EngineError, match=said):
        _read("polars", "parquet", url, tmp_path)


def test_a_url_folder_of_hidden_files_alone_is_empty(s3, tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "_SUCCESS").write_text("")
    url = s3.upload(folder)
    with pytest.raises(EngineError, match=r"^input 'i': the folder s3://\S+/t holds no parquet data files"):
        _read("polars", "parquet", url, tmp_path)
    allowed = get_engine("polars").read(IOConfig("i", format="parquet", path=url, allow_empty=True), tmp_path)
    assert allowed.shape == (0, 0)


def test_an_unsigned_drift_at_a_url_is_refused_naming_the_file(s3, tmp_path):
    # polars' own refusal named no file
    folder = _write(tmp_path / "t", {"part-0.parquet": pa.table({"v": pa.array([1], pa.int64())}),
                                     "part-1.parquet": pa.table({"v": pa.array([2], pa.uint64())})})  # fmt: skip
    url = s3.upload(folder)
    with pytest.raises(EngineError, match=r"^input 'i': s3://\S+/t/part-1\.parquet: column 'v' is uint64 where s3://"):
        _read("polars", "parquet", url, tmp_path)


def test_a_legacy_calendar_date_at_a_url_is_refused_naming_the_file(s3, tmp_path):
    # Spark 2.x's hybrid-calendar day: read as another day by polars; refused locally, read silently from a URL
    old = pa.table({"d": pa.array([-354280], pa.int32()).cast(pa.date32())})
    legacy = old.replace_schema_metadata({"org.apache.spark.legacyDateTime": ""})
    folder = _write(tmp_path / "t", {"part-0.parquet": legacy})
    url = s3.upload(folder)
    with pytest.raises(EngineError, match=r"^input 'i': s3://\S+/t/part-0\.parquet: column 'd' holds date "):
        _read("polars", "parquet", url, tmp_path)


@pytest.mark.parametrize(("fmt", "data"), [("csv", b"a,s\n1,x\xff\n"), ("json", b'{"a":1,"s":"x\xff"}\n')])
def test_text_at_a_url_that_is_not_utf8_is_refused_naming_the_file(s3, tmp_path, fmt, data):
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / f"part-0.{fmt}").write_bytes(data)
    url = s3.upload(folder)
    said = rf"^input 'i': s3://\S+/t/part-0\.{fmt} is not UTF-8 text \(byte 0xff at offset \d+, line \d\); "
    with pytest.raises(EngineError, match=said):
        _read("polars", fmt, url, tmp_path)


def test_a_bucket_root_read_with_storage_options_reads_as_locally(s3_server, tmp_path):
    import s3fs

    folder = _write(tmp_path / "t", {f"{k}.parquet": v for k, v in _ROWS.items()})
    bucket = s3_server.bucket()
    fs = s3fs.S3FileSystem(**s3_server.options)
    for file in sorted(folder.rglob("*")):
        if file.is_file():
            fs.pipe(f"{bucket[len('s3://') :]}/{file.relative_to(folder).as_posix()}", file.read_bytes())
    remote = hash_frame(_read("polars", "parquet", bucket, tmp_path, s3_server.polars_options()))
    assert remote == hash_frame(_read("polars", "parquet", str(folder), tmp_path))


def test_int96_at_a_url_reads_as_locally(s3, tmp_path):
    # INT96 (Spark's default timestamps) read in microseconds as instants, as a local folder's: the footers opened
    # on the URL's store
    values = pa.array([1_700_000_000_123_456_000, None], pa.timestamp("ns"))
    folder = tmp_path / "t"
    folder.mkdir()
    pq.write_table(pa.table({"t": values}), folder / "part-0.parquet", use_deprecated_int96_timestamps=True)
    url = s3.upload(folder)
    remote = hash_frame(_read("polars", "parquet", url, tmp_path))
    assert remote == hash_frame(_read("polars", "parquet", str(folder), tmp_path))
    assert remote == hash_frame(_read("pandas", "parquet", url, tmp_path))
