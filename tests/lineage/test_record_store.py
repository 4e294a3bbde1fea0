"""The record (v2, v1 loading), the store (one path, atomic writes, listing, problems reported with the path)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from pathlib import Path

import pytest

from ubunye.exceptions import RecordError
from ubunye.lineage import DatasetRecord, RecordStore, RunRecord, load_record
from ubunye.lineage.environment import capture_environment, code_hash

V1 = {  # the shape ubunye wrote before 0.7 (RunContext.to_dict): no record_version, no hash_method
    "run_id": "20250101T000000Z",
    "task_path": "shop/daily/revenue",
    "usecase": "shop",
    "package": "daily",
    "task_name": "revenue",
    "profile": "dev",
    "model": "etl",
    "version": "0.1.0",
    "config_hash": "sha256:cc",
    "started_at": "2025-01-01T00:00:00Z",
    "ended_at": "2025-01-01T00:00:09Z",
    "duration_sec": 9.0,
    "status": "error",
    "inputs": [{"name": "orders", "direction": "input", "format": "delta", "location": "/o", "row_count": None}],
    "outputs": [
        {
            "name": "revenue",
            "direction": "output",
            "format": "parquet",
            "location": "/x",
            "row_count": 4,
            "schema_hash": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "data_hash": "sha256:abababababababababababababababababababababababababababababababab",
        }
    ],
    "error": "boom",
}


def test_store_path_is_the_one_layout(tmp_path):
    store = RecordStore(tmp_path)
    assert store.path("shop", "daily", "revenue", "r1") == tmp_path / ".ubunye/lineage/shop/daily/revenue/r1.json"
    with pytest.raises(RecordError):
        store.path("shop", "..", "revenue", "r1")


def test_round_trip_and_atomic_write(tmp_path):
    store = RecordStore(tmp_path)
    record = RunRecord(run_id="r1", usecase="shop", package="daily", task="t", outputs=[DatasetRecord("o")])
    path = store.write(record)
    record.status = "success"
    assert store.write(record) == path
    assert load_record(path) == record
    assert json.loads(path.read_text())["record_version"] == 2
    assert [p.name for p in path.parent.iterdir()] == ["r1.json"]  # no temporary file left behind


def test_v1_record_loads_as_version_1_with_new_fields_empty(tmp_path):
    path = tmp_path / ".ubunye/lineage/shop/daily/revenue/old.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(V1))
    record = load_record(path)
    assert record.record_version == 1
    assert record.identity == ("shop", "daily", "revenue") and record.task_version == "0.1.0"
    assert (record.status, record.duration_seconds, record.error.message) == ("failed", 9.0, "boom")
    assert record.code_hash is None and record.environment == {} and record.environment_hash is None
    assert record.timings == [] and record.expectations == [] and record.template_vars == {}
    assert (
        record.outputs[0].data_hash == "sha256:abababababababababababababababababababababababababababababababab"
        and record.outputs[0].hash_method is None
    )
    assert record.inputs[0].data_hash is None and record.inputs[0].hash_method is None
    assert record.extra == {"task_path": "shop/daily/revenue", "profile": "dev"}
    assert [r.run_id for r in RecordStore(tmp_path).records()] == ["20250101T000000Z"]


def test_corrupt_and_newer_records_are_reported_with_their_path(tmp_path):
    store = RecordStore(tmp_path)
    store.write(RunRecord(run_id="good", usecase="shop", package="daily", task="t"))
    folder = store.folder("shop", "daily", "t")
    (folder / "half.json").write_text('{"run_id": "half", "usec')
    (folder / "future.json").write_text(json.dumps({**V1, "run_id": "future", "record_version": 3}))
    (folder / ".good.123.tmp").write_text("{")  # a write in progress is not a record
    entries = {e.path.name: e for e in store.entries()}
    assert set(entries) == {"good.json", "half.json", "future.json"}
    assert entries["good.json"].record is not None
    assert str(folder / "half.json") in entries["half.json"].problem and "corrupt" in entries["half.json"].problem
    assert str(folder / "future.json") in entries["future.json"].problem
    assert "record_version 3 is newer" in entries["future.json"].problem
    with pytest.raises(RecordError, match=r"half\.json"):
        load_record(folder / "half.json")
    assert [r.run_id for r in store.records()] == ["good"]


@pytest.mark.parametrize("level", ["usecase", "package", "task"])
def test_a_symlinked_folder_in_the_store_is_not_entered(tmp_path, level):
    # glob followed links: one to "/" in the store (or --records /proc, whose <pid>/root is one) had every *.json
    # three folders down read as a record. The store's own folders are folders; a link among them is not its.
    store = RecordStore(tmp_path / "uc")
    store.write(RunRecord(run_id="mine", usecase="shop", package="daily", task="a"))
    elsewhere = RecordStore(tmp_path / "other")
    elsewhere.write(RunRecord(run_id="theirs", usecase="shop", package="daily", task="a"))
    mine, theirs = store.path_of(store.load("mine")), elsewhere.path_of(elsewhere.load("theirs"))
    up = {"task": 1, "package": 2, "usecase": 3}[level]  # the folder of that level: .../shop/daily/a upwards
    folder, target = mine.parents[up - 1], theirs.parents[up - 1]
    (folder.parent / "linked").symlink_to(target, target_is_directory=True)
    assert [e.path for e in store.entries()] == [mine]
    assert [r.run_id for r in store.records()] == ["mine"] and len(elsewhere.entries()) == 1


def test_listing_filters_by_identity(tmp_path):
    store = RecordStore(tmp_path)
    for task in ("a", "b"):
        store.write(RunRecord(run_id=f"r-{task}", usecase="shop", package="daily", task=task))
    assert [r.task for r in store.records("shop", "daily", "a")] == ["a"]
    assert len(store.records()) == 2
    assert store.load("r-b").task == "b"
    assert RecordStore(tmp_path / "nothing").entries() == []


def test_code_hash_rule(tmp_path):
    (tmp_path / "transformations.py").write_text("x = 1\n")
    (tmp_path / "helper.py").write_text("y = 2\n")
    first = code_hash(tmp_path)
    (tmp_path / "notes.txt").write_text("not code")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "cached.py").write_text("z")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "h.py").write_text("z")
    assert code_hash(tmp_path) == first
    (tmp_path / "helper.py").write_bytes(b"y = 2\r\n")
    assert code_hash(tmp_path) == first  # line endings normalised
    (tmp_path / "helper.py").write_text("y = 3\n")
    assert code_hash(tmp_path) != first
    (tmp_path / "helper.py").write_text("y = 2\n")
    (tmp_path / "helper.py").rename(tmp_path / "helper2.py")
    assert code_hash(tmp_path) != first  # the relative path counts


def test_environment_has_versions_and_never_environment_variables(monkeypatch):
    monkeypatch.setenv("UBUNYE_TEST_SECRET", "hunter2-very-secret")
    env = capture_environment("pandas")
    for key in ("python_version", "python_implementation", "platform", "machine"):
        assert env[key]
    for pkg in ("pyspark", "delta-spark", "pandas", "pyarrow", "numpy", "narwhals", "scikit-learn", "torch", "mlflow"):
        assert pkg in env["packages"]
    # the polars engine's own version (a polars upgrade was not shown by compare): installed in the test venv
    polars = importlib.util.find_spec("polars") is not None  # absent on Python 3.10 (the extra needs 3.11)
    assert env["packages"]["polars"] == (importlib.metadata.version("polars") if polars else None)
    assert env["packages"]["torch"] is None  # absent, recorded as absent
    assert "hunter2" not in json.dumps(env)


def test_redaction_of_cloud_keys_and_urls():
    from ubunye.lineage.redact import redact_config, redact_url

    conf = {
        "spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net": "K1",
        "fs.s3a.access.key": "A1",
        "fs.s3a.secret.key": "S1",
        "spark.sql.shuffle.partitions": "4",
        "primaryKey": "id",
        "nested": [{"api_key": "X1", "path": "abfss://c@acct.dfs.core.windows.net/p"}],
    }
    out = redact_config(conf)
    assert out["spark.sql.shuffle.partitions"] == "4" and out["primaryKey"] == "id"
    assert "K1" not in str(out) and "A1" not in str(out) and "S1" not in str(out) and "X1" not in str(out)
    assert redact_url("read https://user:pw@host/x failed") == "read https://user:***@host/x failed"
    assert redact_url("https://host/x?token=abc&page=2") == "https://host/x?token=***&page=2"
    assert redact_url("https://ghp_tok3n@github.com/o/r") == "https://***@github.com/o/r"
    assert redact_url("abfss://raw@acct.dfs.core.windows.net/p") == "abfss://raw@acct.dfs.core.windows.net/p"


def test_a_records_url_with_no_path_is_refused_not_taken_as_the_cwd(tmp_path, monkeypatch):
    from tests.lineage.usecase import write_task
    from ubunye.runner import run_task

    with pytest.raises(RecordError, match=r"records location 'file://' has no path"):
        RecordStore(records="file://")
    task_dir = write_task(tmp_path / "uc", "t", {"CONFIG": {"outputs": {"o": {"format": "parquet", "path": "o"}}}})
    (task_dir / "transformations.py").write_text(
        "import pandas as pd\nfrom ubunye import Task\n\nclass T(Task):\n"
        "    def transform(self, sources):\n        return {'o': pd.DataFrame({'a': [1]})}\n"
    )
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("UBUNYE_RECORDS", "file://")
    with pytest.raises(RecordError, match=r"has no path"):
        run_task(task_dir, engine="pandas", lineage=True)
    assert list(cwd.iterdir()) == [] and not (tmp_path / "uc" / "o").exists()


@pytest.mark.parametrize(
    ("records", "why"),
    [("file://host/srv/r", "has no path"), ("file:///srv/r#x", "query or fragment"), ("file:///srv/r?v=1", "query")],
)
def test_a_records_url_of_another_host_or_with_a_fragment_is_refused(records, why):
    # urlsplit dropped the host (another machine's /srv/r taken as this one's) and the fragment (another folder)
    with pytest.raises(RecordError, match=why):
        RecordStore(records=records)
    assert RecordStore(records="file://localhost/srv/r").root == Path("/srv/r").resolve()
