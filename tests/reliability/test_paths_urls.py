"""Object-store outputs are checked against the run's inputs and each other as local paths are: a Delta overwrite
onto a parquet input's URL (however spelled: a trailing slash, ``s3a://``, a doubled slash) would land its log and
files among the input's, which would then read other rows. Against a real S3 server (moto's, on 127.0.0.1)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.lineage import s3server
from tests.lineage.s3server import ACCESS_KEY, SECRET_KEY
from tests.lineage.usecase import write_task
from ubunye import run_task
from ubunye.exceptions import ConfigError

s3_server = s3server.s3_server  # the fixture
CLI = [sys.executable, "-c", "from ubunye.cli.main import main; main()"]


@pytest.fixture
def uc(tmp_path: Path) -> Path:
    return tmp_path / "uc"


def _delta_options(endpoint: str) -> dict[str, str]:
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}  # fmt: skip


def _parquet_input(s3_server) -> tuple[str, dict[str, bytes]]:
    """A bucket holding a parquet dataset at ``<bucket>/src``; its URL and every object of the bucket."""
    import s3fs

    bucket = s3_server.bucket()
    buffer = io.BytesIO()
    pd.DataFrame({"a": [1, 2]}).to_parquet(buffer)
    fs = s3fs.S3FileSystem(**s3_server.options)
    fs.pipe(f"{bucket[len('s3://') :]}/src/part-0.parquet", buffer.getvalue())
    return f"{bucket}/src", _objects(s3_server, bucket)


def _objects(s3_server, bucket: str) -> dict[str, bytes]:
    import s3fs

    fs = s3fs.S3FileSystem(**s3_server.options)
    fs.invalidate_cache()
    return {key: fs.cat_file(key) for key in fs.find(bucket[len("s3://") :])}


def _task(uc, source: str, outputs: dict[str, dict[str, object]], s3_server) -> object:
    config = {
        "inputs": {"src": {"format": "parquet", "path": source, "storage_options": s3_server.options}},
        "outputs": {
            name: {"format": "delta", "mode": "overwrite", "storage_options": _delta_options(s3_server.endpoint), **o}
            for name, o in outputs.items()
        },
        "transform": {"type": "sql", "query": "SELECT a + 10 AS a FROM src"},
    }
    if len(outputs) > 1:  # a sql transform makes one output: a task returning the frame under every name
        config["transform"] = {"type": "task"}
        code = "from ubunye import Task\n\nclass T(Task):\n    def transform(self, sources):\n"
        code += "        return {" + ", ".join(f"{n!r}: sources['src']" for n in outputs) + "}\n"
        return write_task(uc, "t", {"CONFIG": config}, code)
    return write_task(uc, "t", {"CONFIG": config}, None)


@pytest.mark.parametrize(
    ("spelling", "why"),
    [
        ("{src}/", "is the location of input 'src' (parquet), which its Delta overwrite would spoil"),
        ("s3a{rest}", "is the location of input 'src' (parquet), which its Delta overwrite would spoil"),
        ("{bucket}", "holds the location of input 'src' (s3://"),
        ("{src}/inner", "is inside the location of input 'src' (s3://"),
        # Hadoop's Path resolves '.' and '..' (s3a://b/out/../src is s3a://b/src to Spark)
        ("{bucket}/out/../src", "is the location of input 'src' (parquet), which its Delta overwrite would spoil"),
        ("s3a{rest}/./", "is the location of input 'src' (parquet), which its Delta overwrite would spoil"),
        ("{bucket}/src/x/..", "is the location of input 'src' (parquet), which its Delta overwrite would spoil"),
        ("{bucket}/x/./../src/inner", "is inside the location of input 'src' (s3://"),
    ],
)
def test_a_delta_overwrite_onto_its_own_parquet_input_at_a_url_is_refused(s3_server, uc, spelling, why):
    source, before = _parquet_input(s3_server)
    bucket = source.rsplit("/", 1)[0]
    path = spelling.format(src=source, rest=source[len("s3") :], bucket=bucket)
    task_dir = _task(uc, source, {"out": {"path": path}}, s3_server)
    with pytest.raises(ConfigError) as err:
        run_task(task_dir, engine="pandas", lineage=True)
    said = str(err.value)
    assert said.startswith(f"{task_dir / 'config.yaml'}: CONFIG.outputs.out.path: "), said
    assert why in said, said
    assert _objects(s3_server, bucket) == before  # nothing written: the input reads as it did


def test_two_outputs_at_one_url_spelled_two_ways_are_refused(s3_server, uc):
    source, before = _parquet_input(s3_server)
    bucket = source.rsplit("/", 1)[0]
    task_dir = _task(uc, source, {"a": {"path": f"{bucket}/out"}, "b": {"path": f"s3a{bucket[2:]}//out/"}}, s3_server)
    with pytest.raises(ConfigError, match=r"CONFIG\.outputs\.b\.path: s3://.*/out is also the location of output 'a'"):
        run_task(task_dir, engine="pandas", lineage=True)
    assert _objects(s3_server, bucket) == before


@pytest.mark.parametrize(
    ("side", "spelling"), [("outputs.out", "{bucket}/../src"), ("inputs.src", "{bucket}/a/../../src")]
)
def test_a_url_whose_dot_dot_climbs_above_the_bucket_is_refused(s3_server, uc, side, spelling):
    """Hadoop keeps such a '..' (a key named '..'), where other clients resolve or refuse it: no place to compare."""
    source, before = _parquet_input(s3_server)
    bucket = source.rsplit("/", 1)[0]
    path = spelling.format(bucket=bucket)
    read, written = (path, f"{bucket}/out") if side == "inputs.src" else (source, path)
    task_dir = _task(uc, read, {"out": {"path": written}}, s3_server)
    with pytest.raises(ConfigError) as err:
        run_task(task_dir, engine="pandas", lineage=True)
    key = path[len(bucket) :]
    host = bucket[len("s3://") :]
    expected = f"{task_dir / 'config.yaml'}: CONFIG.{side}.path: the key {key!r} climbs above the root of s3://{host} "
    assert str(err.value).startswith(expected), str(err.value)
    assert _objects(s3_server, bucket) == before


def _run_in_child(s3_server, uc: Path, task: str) -> None:
    """The run in a process of its own: deltalake's history read (the version its commit made) holds the GIL while
    it waits for the store, which would freeze this process's own S3 server."""
    run = [*CLI, "run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", task, "--engine", "pandas"]
    done = subprocess.run(run, capture_output=True, text=True, timeout=300, env=s3server.child_env(s3_server))
    assert done.returncode == 0, done.stderr


def test_a_delta_output_beside_its_input_and_the_delta_table_it_reads_are_allowed(s3_server, uc):
    from deltalake import DeltaTable

    source, _ = _parquet_input(s3_server)
    bucket = source.rsplit("/", 1)[0]
    # a sibling prefix (src2 beside src) is another place, not inside it
    _task(uc, source, {"out": {"path": f"{source}2"}}, s3_server)
    _run_in_child(s3_server, uc, "t")
    options = _delta_options(s3_server.endpoint)
    assert sorted(DeltaTable(f"{source}2", storage_options=options).to_pandas()["a"]) == [11, 12]
    # the Delta table read, overwritten at its own URL spelled with a trailing slash: a new version, allowed
    config = {
        "inputs": {"d": {"format": "delta", "path": f"{bucket}/src2", "storage_options": options}},
        "outputs": {"d2": {"format": "delta", "path": f"{bucket}/src2/", "storage_options": options}},
        "transform": {"type": "sql", "query": "SELECT a + 100 AS a FROM d"},
    }
    write_task(uc, "t2", {"CONFIG": config}, None)
    _run_in_child(s3_server, uc, "t2")
    table = DeltaTable(f"{bucket}/src2", storage_options=options)
    assert table.version() == 1 and sorted(table.to_pandas()["a"]) == [111, 112]
