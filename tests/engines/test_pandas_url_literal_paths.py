"""A URL's path is the store's key as written on pandas as on polars and Spark (``engines.paths.literal_parts``):
``s3://b/t%20x`` is the folder ``t%20x``, and a space, a non-ASCII letter, ``?`` and ``#`` are themselves. pandas
without storage_options gave the URL to pyarrow's ``FileSystem.from_uri``, which unescaped the path and cut it:
``t%20x`` read the folder ``t x``, ``t%C3%A9`` read ``té`` and ``t#x`` read ``t`` (silently other data, another
hash than polars' and Spark's), while ``t x`` and ``té`` failed ("Cannot parse URI") and ``t?x`` failed
("Unexpected query parameter"). The run's output checks compare URLs as the readers take them: two spellings of
one key clash, ``t%20x`` and ``t x`` (two keys) do not."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.lineage import s3server
from tests.lineage.usecase import write_task
from tests.optional import HAVE_POLARS
from ubunye.config import IOConfig, load_config
from ubunye.engines import get_engine, location
from ubunye.exceptions import ConfigError
from ubunye.hashing import hash_frame
from ubunye.paths import check_outputs

s3_server = s3server.s3_server  # the fixture
s3 = s3server.s3  # the server, with the environment pointing at it

needs_polars = pytest.mark.skipif(not HAVE_POLARS, reason="the polars engine")

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


def _folder_ids(folder: str) -> list[int]:
    return sorted(i for ids in _FOLDERS[folder].values() for i in ids)


@pytest.mark.parametrize("folder", list(_FOLDERS))
def test_pandas_reads_the_key_as_written_from_the_environment(s3, bucket, tmp_path, folder):
    got = get_engine("pandas").read(IOConfig("i", format="parquet", path=f"{bucket}/{folder}"), tmp_path)
    assert _ids(got) == _folder_ids(folder)


@pytest.mark.parametrize("folder", list(_FOLDERS))
def test_pandas_reads_the_key_as_written_with_storage_options(s3_server, bucket, tmp_path, folder):
    io = IOConfig("i", format="parquet", path=f"{bucket}/{folder}", storage_options=s3_server.options)
    assert _ids(get_engine("pandas").read(io, tmp_path)) == _folder_ids(folder)


@needs_polars
@pytest.mark.parametrize("folder", list(_FOLDERS))
def test_pandas_and_polars_read_one_url_as_one_table(s3, bucket, tmp_path, folder):
    url = f"{bucket}/{folder}"
    reads = {
        "pandas, environment": get_engine("pandas").read(IOConfig("i", format="parquet", path=url), tmp_path),
        "pandas, storage_options": get_engine("pandas").read(
            IOConfig("i", format="parquet", path=url, storage_options=s3.options), tmp_path
        ),
        "polars, environment": get_engine("polars").read(IOConfig("i", format="parquet", path=url), tmp_path),
        "polars, storage_options": get_engine("polars").read(
            IOConfig("i", format="parquet", path=url, storage_options=s3.polars_options()), tmp_path
        ),
    }
    assert {how: _ids(frame) for how, frame in reads.items()} == dict.fromkeys(reads, _folder_ids(folder))
    hashes = {how: hash_frame(frame) for how, frame in reads.items()}
    assert len(set(hashes.values())) == 1, hashes


def test_a_missing_url_is_named_as_written(s3, bucket, tmp_path):
    from ubunye.exceptions import EngineError

    with pytest.raises(EngineError, match=r"no such file or folder: s3://.*/t%20y$"):
        get_engine("pandas").read(IOConfig("i", format="parquet", path=f"{bucket}/t%20y"), tmp_path)


# --- the run's output checks: one key, however spelled, is one place; two keys are two --------------------------


def _check(tmp_path: Path, read: str, written: str) -> None:
    """check_outputs of a task reading parquet at ``read`` and overwriting a parquet output at ``written``."""
    config = {
        "inputs": {"src": {"format": "parquet", "path": read}},
        "outputs": {"out": {"format": "parquet", "mode": "overwrite", "path": written}},
        "transform": {"type": "sql", "query": "SELECT * FROM src"},
    }
    uc = tmp_path / "uc"
    cfg = load_config(write_task(uc, "t", {"CONFIG": config}))
    inputs = {name: location(io, uc) for name, io in cfg.inputs.items()}
    check_outputs(cfg, uc, {name: location(io, uc) for name, io in cfg.outputs.items()}, inputs)


@pytest.mark.parametrize(
    ("read", "written"),
    [
        ("s3://b/t%20x", "s3://b/t x"),
        ("s3://b/t x", "s3a://b/t%20x/"),
        ("s3://b/t%C3%A9", "s3://b/té"),
        ("s3://b/d/t%20x", "s3://b/d/t x"),
    ],
)
def test_two_keys_an_escape_tells_apart_do_not_clash(tmp_path, read, written):
    _check(tmp_path, read, written)  # the readers read two folders (above): neither output deletes the input


@pytest.mark.parametrize(
    ("read", "written", "why"),
    [
        ("s3://b/t%20x", "s3a://b/t%20x/", "is the location of input 'src'"),
        ("s3://b/t x", "s3://b//t x", "is the location of input 'src'"),
        ("s3://b/té", "s3a://b/./té", "is the location of input 'src'"),
        ("s3://b/t%20x/k=1", "s3://b/t%20x", "holds the location of input 'src' (s3://b/t%20x/k=1)"),
        ("s3://b/t x", "s3://b/t x/inner", "is inside the location of input 'src' (s3://b/t x)"),
    ],
)
def test_one_key_spelled_two_ways_clashes(tmp_path, read, written, why):
    with pytest.raises(ConfigError, match=r"CONFIG\.outputs\.out\.path: ") as err:
        _check(tmp_path, read, written)
    assert why in str(err.value), str(err.value)
