"""A folder at an object-store URL reads on pandas as the same folder read locally: listed by the same rules, its
partition folders typed as Spark types them, files of other columns refused. pyarrow listed a URL itself before:
``name=value`` folders were read as no column (a run recorded a hash of the table without them) and a file with an
extra column was read with the first file's columns, silently."""

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

s3_server = s3server.s3_server  # the fixture
s3 = s3server.s3  # the server, with the environment pointing at it


def _write(folder: Path, parts: dict[str, pa.Table], fmt: str = "parquet", *, hidden: bool = True) -> Path:
    """``parts`` (a file's path under ``folder`` -> its rows) written as ``fmt`` files, with the hidden files Spark
    writes beside them (``hidden``)."""
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
        if hidden:
            (file.parent / f".{file.name}.crc").write_bytes(b"\x00")
    if hidden:
        (folder / "_SUCCESS").write_text("")
    return folder


def _read(engine: str, fmt: str, path: str, tmp_path: Path, options: dict[str, object] | None = None) -> pa.Table:
    return get_engine(engine).read(IOConfig("i", format=fmt, path=path, storage_options=options or {}), tmp_path)


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
@pytest.mark.parametrize("with_options", [False, True], ids=["environment", "storage_options"])
def test_a_partitioned_url_folder_reads_as_the_same_local_folder(s3, tmp_path, fmt, with_options):
    # Spark's layout: dates, ints and escaped strings in folder names; pandas read the URL's rows without d, k, s
    rows = {
        "d=2024-01-01/s=a%2Fb/k=7/part-0": pa.table({"id": [1, 2]}),
        "d=2024-01-02/s=x y/k=0/part-0": pa.table({"id": [3]}),
        "d=2024-01-02/s=x y/k=0/part-1": pa.table({"id": [4]}),
    }
    folder = _write(tmp_path / "t", {f"{k}.{fmt}": v for k, v in rows.items()}, fmt)
    url = s3.upload(folder)
    options = s3.options if with_options else None
    local, remote = _read("pandas", fmt, str(folder), tmp_path), _read("pandas", fmt, url, tmp_path, options)
    local_hash, remote_hash = hash_frame(local), hash_frame(remote)
    assert remote_hash == local_hash
    assert remote_hash.schema == 'struct<"d":date,"id":int64,"k":int32,"s":string>', remote_hash.schema
    assert sorted(remote["s"].unique()) == ["a/b", "x y"]


@pytest.mark.skipif(not HAVE_POLARS, reason="compares the polars engine with pandas")
def test_a_partitioned_url_folder_hashes_on_pandas_as_on_polars(s3, tmp_path):
    # polars types a URL's partition folders itself (a known gap); on dates and strings it types them as Spark.
    # No hidden files: polars refuses a URL folder holding Spark's .crc files ("different file extensions")
    folder = _write(tmp_path / "t", {"d=2024-01-01/k=a/p.parquet": pa.table({"id": [1]}),
                                     "d=2024-01-02/k=b/p.parquet": pa.table({"id": [2]})}, hidden=False)  # fmt: skip
    url = s3.upload(folder)
    pandas, polars = (hash_frame(_read(name, "parquet", url, tmp_path)) for name in ("pandas", "polars"))
    assert pandas == polars and pandas.schema == 'struct<"d":date,"id":int64,"k":string>', (pandas, polars)


def test_a_url_file_with_another_column_is_refused_naming_both_files(s3, tmp_path):
    # read with the first file's columns, b dropped silently; a local folder is refused (check_alike)
    folder = _write(tmp_path / "drift", {"part-0.parquet": pa.table({"id": [1], "a": ["x"]}),
                                         "part-1.parquet": pa.table({"id": [2], "a": ["y"], "b": [5]})})  # fmt: skip
    url = s3.upload(folder)
    with pytest.raises(EngineError) as err:
        _read("pandas", "parquet", url, tmp_path)
    said = str(err.value)
    assert said.startswith(f"input 'i': its files have different columns: {url}/part-0.parquet has none that "), said
    assert f"{url}/part-1.parquet has b" in said, said


def test_url_files_in_other_partition_folders_are_refused(s3, tmp_path):
    folder = _write(tmp_path / "t", {"k=1/p.parquet": pa.table({"id": [1]}), "p.parquet": pa.table({"id": [2]})})
    url = s3.upload(folder)
    with pytest.raises(EngineError, match=r"sits in partition folders \(k\) but .*/p\.parquet in no partition"):
        _read("pandas", "parquet", url, tmp_path)


@pytest.mark.parametrize(
    ("stray", "said"),
    [
        ("notes/p.parquet", r"^input 'i': s3://\S+/t/notes is a folder inside the parquet data folder s3://\S+/t but "),
        ("README.txt", r"^input 'i': s3://\S+/t/README\.txt is not a parquet file "),
    ],
)
def test_a_stray_file_or_folder_at_a_url_is_refused_naming_it(s3, tmp_path, stray, said):
    # pyarrow read a README as parquet (failing on its bytes) and a plain folder's files as the input's
    folder = _write(tmp_path / "t", {"part-0.parquet": pa.table({"id": [1]})})
    (folder / stray).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": [9]}), folder / stray)
    url = s3.upload(folder)
    with pytest.raises(EngineError, match=said):
        _read("pandas", "parquet", url, tmp_path)


def test_a_url_folder_of_hidden_files_alone_is_empty(s3, tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "_SUCCESS").write_text("")
    url = s3.upload(folder)
    with pytest.raises(EngineError, match=r"^input 'i': the folder s3://\S+/t holds no parquet data files"):
        _read("pandas", "parquet", url, tmp_path)
    allowed = get_engine("pandas").read(IOConfig("i", format="parquet", path=url, allow_empty=True), tmp_path)
    assert allowed.shape == (0, 0)


def test_a_header_only_csv_at_a_url_is_skipped_as_locally(s3, tmp_path):
    # Spark writes a header alone for a task without rows; pyarrow took its column for a null one, then failed
    # on the next file's values ("CSV conversion error to null")
    folder = _write(tmp_path / "t", {"part-1.csv": pa.table({"id": [1, 2]})}, "csv")
    (folder / "part-0.csv").write_text("id\n")  # the first file: its columns were taken for all
    url = s3.upload(folder)
    remote, local = (_read("pandas", "csv", where, tmp_path) for where in (url, str(folder)))
    assert hash_frame(remote) == hash_frame(local)


def test_an_unsigned_drift_at_a_url_is_refused_naming_the_file(s3, tmp_path):
    folder = _write(tmp_path / "t", {"part-0.parquet": pa.table({"v": pa.array([1], pa.int64())}),
                                     "part-1.parquet": pa.table({"v": pa.array([2], pa.uint64())})})  # fmt: skip
    url = s3.upload(folder)
    with pytest.raises(EngineError, match=r"^input 'i': s3://\S+/t/part-1\.parquet: column 'v' is uint64 where s3://"):
        _read("pandas", "parquet", url, tmp_path)


def test_a_legacy_calendar_date_at_a_url_is_refused_naming_the_file(s3, tmp_path):
    # Spark 2.x's hybrid-calendar day: read as another day by pyarrow; refused locally, read silently from a URL
    old = pa.table({"d": pa.array([-354280], pa.int32()).cast(pa.date32())})
    legacy = old.replace_schema_metadata({"org.apache.spark.legacyDateTime": ""})
    folder = _write(tmp_path / "t", {"part-0.parquet": legacy})
    url = s3.upload(folder)
    with pytest.raises(EngineError, match=r"^input 'i': s3://\S+/t/part-0\.parquet: column 'd' holds date "):
        _read("pandas", "parquet", url, tmp_path)


@pytest.mark.parametrize(("fmt", "data"), [("csv", b"a,s\n1,x\xff\n"), ("json", b'{"a":1,"s":"x\xff"}\n')])
def test_text_at_a_url_that_is_not_utf8_is_refused_naming_the_file(s3, tmp_path, fmt, data):
    # read silently: pyarrow's csv reader made the column binary, its json reader kept the bytes as a string
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / f"part-0.{fmt}").write_bytes(data)
    url = s3.upload(folder)
    said = rf"^input 'i': s3://\S+/t/part-0\.{fmt} is not UTF-8 text \(byte 0xff at offset \d+, line \d\); "
    with pytest.raises(EngineError, match=said):
        _read("pandas", fmt, url, tmp_path)
