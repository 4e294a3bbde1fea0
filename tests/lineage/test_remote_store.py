"""Record stores on object storage (docs/tasks-and-records.md, "Records in object stores"), against a real
S3-compatible server (moto's, on 127.0.0.1) reached through s3fs as a user would: runs write there, every
reader reads there, nothing half-written is ever read, credentials never leave the process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.lineage import s3server
from tests.lineage.s3server import S3, SECRET_KEY, child_env
from tests.lineage.usecase import example_usecase, write_task
from ubunye.cli.main import app
from ubunye.exceptions import ConfigError, RecordError, TaskError
from ubunye.lineage import RecordStore, RunRecord
from ubunye.lineage.store import RUNNING_DIR, RecordURL, records_location
from ubunye.runner import run_task

s3_server, s3 = s3server.s3_server, s3server.s3  # the fixtures
runner = CliRunner()
CLI = [sys.executable, "-c", "from ubunye.cli.main import main; main()"]


def fs_of(s3: S3):
    import s3fs

    return s3fs.S3FileSystem(**s3.options, use_listings_cache=False)


def objects(s3: S3, url: str) -> dict[str, bytes]:
    """Every object under ``url`` (relative key -> bytes), read straight from the server."""
    fs = fs_of(s3)
    root = url.removeprefix("s3://").rstrip("/")
    return {k[len(root) + 1 :]: fs.cat_file(k) for k in fs.find(root)}


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def record(run_id: str, status: str = "running", task: str = "revenue", started: str | None = None) -> RunRecord:
    return RunRecord(run_id=run_id, usecase="shop", package="daily", task=task, status=status, started_at=started)


# --- layout and states ---------------------------------------------------------------------------------------------


def test_a_run_writes_its_record_under_the_url_in_the_one_layout(tmp_path: Path, s3: S3) -> None:
    uc = example_usecase(tmp_path)
    url = s3.bucket() + "/team/records"
    result = run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas", records=url)
    assert result.status == "success"
    assert isinstance(result.record_path, RecordURL)
    assert str(result.record_path) == f"{url}/shop/daily/orders/{result.run_id}.json"
    stored = objects(s3, url)
    # the running states are gone once the final record is there: one object per finished run
    assert list(stored) == [f"shop/daily/orders/{result.run_id}.json"]
    data = json.loads(stored[f"shop/daily/orders/{result.run_id}.json"])
    assert (data["run_id"], data["status"], data["outputs"][0]["row_count"]) == (result.run_id, "success", 500)
    assert not (uc / ".ubunye").exists()  # nothing went to the default store
    loaded = RecordStore(records=url).resolve("latest", "shop", "daily", "orders").record
    assert loaded is not None and loaded.to_dict() == data


def test_running_states_are_write_once_objects_and_the_final_one_wins(s3: S3) -> None:
    url = s3.bucket() + "/records"
    store = RecordStore(records=url)
    r = record("20261203T080000.000000Z-aaaaaa", started="2026-12-03T08:00:00Z")
    first = store.write(r)
    r.timings = []
    r.extra = {"checkpoint": 1}
    second = store.write(r)
    assert str(first) != str(second)  # a new object per state: none is ever overwritten
    keys = sorted(objects(s3, url))
    assert keys == sorted(str(p).removeprefix(url + "/") for p in (first, second))
    assert all(f"/{RUNNING_DIR}/{r.run_id}/" in k for k in keys)
    # A reader takes the newest running state.
    (entry,) = store.entries()
    assert entry.record.extra == {"checkpoint": 1} and entry.record.status == "running"
    assert entry.path.stem == r.run_id
    # A kill between the final write and the clean-up leaves both: the final record is the one read.
    fs = fs_of(s3)
    stale = fs.cat_file(str(first).removeprefix("s3://"))
    r.status = "success"
    final = store.write(r)
    fs.pipe_file(str(first).removeprefix("s3://"), stale)
    assert sorted(objects(s3, url)) == sorted([str(final).removeprefix(url + "/"), str(first).removeprefix(url + "/")])
    (entry,) = store.entries()
    assert entry.record.status == "success" and str(entry.path) == str(final)
    # A final record is written once: a second one for the same run id is refused, the first kept...
    r.status = "failed"
    with pytest.raises(RecordError, match="already there"):
        store.write(r)
    assert json.loads(objects(s3, url)[str(final).removeprefix(url + "/")])["status"] == "success"
    # ...unless it is the same bytes (a write retried after its reply was lost): that write is done already
    r.status = "success"
    assert str(store.write(r)) == str(final)


def test_a_record_copied_under_another_task_is_refused_naming_the_object(s3: S3) -> None:
    url = s3.bucket() + "/records"
    store = RecordStore(records=url)
    r = record("20261203T080000.000000Z-bbbbbb", status="success")
    written = store.write(r)
    fs = fs_of(s3)
    other = f"{url}/shop/daily/orders/{r.run_id}.json".removeprefix("s3://")
    fs.pipe_file(other, fs.cat_file(str(written).removeprefix("s3://")))
    problems = [e for e in store.entries() if e.problem]
    assert len(problems) == 1 and problems[0].field == "task"
    assert problems[0].problem.startswith(f"s3://{other}: task: 'revenue' does not match the folder")


def test_a_corrupt_object_is_reported_with_its_url(s3: S3) -> None:
    url = s3.bucket() + "/records"
    fs_of(s3).pipe_file(f"{url}/shop/daily/revenue/r-half.json".removeprefix("s3://"), b'{"run_id": "r-ha')
    (entry,) = RecordStore(records=url).entries()
    assert entry.record is None and entry.problem.startswith(f"{url}/shop/daily/revenue/r-half.json: corrupt")


# --- readers ---------------------------------------------------------------------------------------------------------


def test_lineage_commands_read_a_remote_store(tmp_path: Path, s3: S3) -> None:
    uc = example_usecase(tmp_path)
    url = s3.bucket() + "/records"
    runs = [run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas", records=url) for _ in range(2)]
    listed = invoke("lineage", "list", "--records", url, "--json")
    assert listed.exit_code == 0, listed.output
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [runs[1].run_id, runs[0].run_id]
    shown = invoke("lineage", "show", "latest", "--records", url, "-t", "orders", "--json")
    assert shown.exit_code == 0 and json.loads(shown.stdout)["run_id"] == runs[1].run_id
    assert json.loads(shown.stdout)["path"] == str(runs[1].record_path)
    traced = invoke("lineage", "trace", runs[0].run_id[:20], "--records", url)
    assert traced.exit_code == 0 and runs[0].run_id in traced.stdout
    compared = invoke("lineage", "compare", "latest~1", "latest", "--records", url, "-t", "orders")
    assert compared.exit_code == 0, compared.output  # the same generated orders both times
    assert compared.stdout.startswith("same data")


def test_list_n_reads_only_the_records_it_shows(s3: S3) -> None:
    url = s3.bucket() + "/records"
    store = RecordStore(records=url)
    ids = [f"20261203T08{i:02d}00.000000Z-{i:06x}" for i in range(30)]
    for rid in ids[1:]:
        store.write(record(rid, "success", started=f"2026-12-03T08:{int(rid[11:13]):02d}:00Z"))
    # The oldest run's object is not JSON: reading it would report it.
    fs_of(s3).pipe_file(f"{url}/shop/daily/revenue/{ids[0]}.json".removeprefix("s3://"), b"not json")
    shown = invoke("lineage", "list", "--records", url, "-n", "10", "--json")
    assert shown.exit_code == 0 and shown.stderr == "", shown.output
    assert [r["run_id"] for r in json.loads(shown.stdout)] == ids[::-1][:10]
    everything = invoke("lineage", "list", "--records", url, "--json")  # without -n every record is read
    assert everything.exit_code == 0
    assert "unreadable run record" in everything.stderr and ids[0] in everything.stderr
    assert len(json.loads(everything.stdout)) == 30


def test_the_environment_variable_is_the_same_setting(tmp_path: Path, s3: S3, monkeypatch) -> None:
    uc = example_usecase(tmp_path)
    url = s3.bucket() + "/records"
    monkeypatch.setenv("UBUNYE_RECORDS", url)
    result = run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas")
    assert str(result.record_path).startswith(url + "/shop/daily/orders/")
    listed = invoke("lineage", "list", "--json")
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [result.run_id]


def test_a_local_folder_given_as_records_holds_the_same_layout(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    uc = example_usecase(tmp_path)
    shared = tmp_path / "volumes" / "records"
    result = run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas", records=f"file://{shared}")
    assert result.record_path == shared / "shop/daily/orders" / f"{result.run_id}.json"
    assert not (uc / ".ubunye").exists()
    listed = invoke("lineage", "list", "--records", shared, "--json")
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [result.run_id]


# --- credentials ----------------------------------------------------------------------------------------------------


def test_no_secret_key_reaches_a_record_or_any_output(tmp_path: Path, s3_server: S3, monkeypatch) -> None:
    for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "UBUNYE_RECORDS"):
        monkeypatch.delenv(name, raising=False)
    uc = example_usecase(tmp_path)
    src, out = {"format": "parquet", "path": "data/none"}, {"format": "parquet", "path": "data/out"}
    sql = {"type": "sql", "query": "SELECT * FROM src"}
    broken = {"CONFIG": {"inputs": {"src": src}, "outputs": {"out": out}, "transform": sql, "monitors": ["lineage"]}}
    write_task(uc, "broken", broken)
    # 1. storage_options in Python
    url = s3_server.bucket() + "/records"
    result = run_task(
        uc / "shop/daily/orders", dt="2026-12-01", engine="pandas", records=url, storage_options=s3_server.options
    )
    assert result.status == "success"
    # 2. the environment, through the CLI in a child process (a run, a list, a show, and a failing run)
    env = child_env(s3_server)
    outputs = []
    for args in (
        ["run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "orders", "-dt", "2026-12-02", "--engine", "pandas"],
        ["lineage", "list"],
        ["lineage", "trace", "latest", "-t", "orders"],
        ["run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "broken", "--engine", "pandas"],
    ):
        done = subprocess.run(
            [*CLI, *map(str, args), "--records", url], capture_output=True, text=True, env=env, timeout=300
        )
        outputs.append(done.stdout + done.stderr)
    assert outputs[0].count("success") == 1 and "failed in read" in outputs[3], outputs
    stored = objects(s3_server, url)
    assert len(stored) == 3  # three runs, each one final object
    for key, data in stored.items():
        assert SECRET_KEY.encode() not in data, key
    for text in outputs:
        assert SECRET_KEY not in text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET_KEY.encode() not in path.read_bytes(), path


# --- bad input ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("nosuchfs://bucket/records", "unknown scheme 'nosuchfs://'"),
        ("gs://bucket/records", "install it: pip install 'ubunye[gcs]'"),
    ],
)
def test_a_records_url_nothing_opens_is_one_error_line(tmp_path: Path, url: str, says: str, monkeypatch) -> None:
    if url.startswith("gs:"):
        try:
            import gcsfs  # noqa: F401
        except ImportError:
            pass
        else:
            pytest.skip("gcsfs is installed here")
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    uc = example_usecase(tmp_path)
    run = [*CLI, "run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "orders", "--engine", "pandas"]
    for args in ([*run, "--records", url], [*CLI, "lineage", "list", "--records", url]):
        done = subprocess.run(args, capture_output=True, text=True, timeout=120)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert lines[0].startswith(f"error: records {url}: ") and says in lines[0], lines[0]
    assert not (uc / "data").exists()


def test_an_unreachable_store_fails_the_run_before_any_output(tmp_path: Path, s3: S3, monkeypatch) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{closed}")
    uc = example_usecase(tmp_path)
    with pytest.raises(RecordError, match=r"^s3://somebucket/records: cannot reach the record store"):
        run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas", records="s3://somebucket/records")
    assert not (uc / "data").exists() and not (uc / ".ubunye").exists()


def test_a_missing_bucket_is_named_before_the_run(tmp_path: Path, s3: S3) -> None:
    uc = example_usecase(tmp_path)
    with pytest.raises(RecordError, match=r"no-such-bucket-ubunye does not exist"):
        run_task(uc / "shop/daily/orders", engine="pandas", records="s3://no-such-bucket-ubunye/records")
    assert not (uc / "data").exists()


def test_readers_name_a_missing_bucket_instead_of_listing_no_runs(s3: S3) -> None:
    # A bucket that does not exist lists empty, as a new prefix does: "no runs", exit 0, hid the typo.
    for command in (("list",), ("show", "latest", "-t", "orders"), ("compare", "latest~1", "latest", "-t", "orders")):
        result = invoke("lineage", *command, "--records", "s3://no-such-bucket-ubunye/records")
        assert result.exit_code != 0, (command, result.output)
        assert "no-such-bucket-ubunye does not exist" in result.output and "Traceback" not in result.output
    empty = invoke("lineage", "list", "--records", s3.bucket() + "/records")  # a bucket with no runs yet
    assert (empty.exit_code, "no runs under" in empty.output) == (0, True), empty.output


def test_a_store_refusing_the_first_write_means_the_run_does_not_start(tmp_path: Path, s3: S3) -> None:
    uc = example_usecase(tmp_path)
    url = s3.bucket() + "/records"
    store = RecordStore(records=url)
    fs_of(s3).rm(url.removeprefix("s3://").split("/")[0], recursive=True)  # the bucket goes after the check
    with pytest.raises(TaskError, match="did not start: monitor lineage could not write the run record"):
        run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas", records=store)
    assert not (uc / "data").exists()


def test_an_output_inside_a_local_records_root_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    uc = example_usecase(tmp_path)
    shared = tmp_path / "ops" / "records"
    for where, why in ((shared / "shop" / "out", "is inside"), (shared.parent, "holds"), (shared, "is")):
        out = {"format": "parquet", "path": str(where), "mode": "overwrite"}
        cfg = {"CONFIG": {"outputs": {"out": out}, "transform": {"type": "sql", "query": "SELECT 1 AS x"},
                          "monitors": ["lineage"]}}  # fmt: skip
        task = write_task(uc, "clash", cfg)
        with pytest.raises(ConfigError, match=rf"CONFIG\.outputs\.out\.path: .* {why} the record store {shared}"):
            run_task(task, engine="pandas", records=shared)
        assert not shared.exists()


@pytest.mark.parametrize(
    ("blocked", "code", "says"),
    [
        ("fsspec", "RecordStore(records='s3://b/records')",
         "records s3://b/records: needs fsspec; install it: pip install 'ubunye[s3]'"),
        ("s3fs", "RecordStore(records='s3://b/records')",
         "records s3://b/records: no filesystem for s3:// is installed"),
        # fsspec knows abfs:// (and says which package it needs) but not abfss://, which adlfs adds when installed
        ("adlfs", "RecordStore(records='abfss://raw@acct.dfs.core.windows.net/records')",
         "records abfss://raw@acct.dfs.core.windows.net/records: no filesystem for abfss:// is installed"),
    ],
)  # fmt: skip
def test_a_missing_package_names_the_extra(blocked: str, code: str, says: str) -> None:
    # The package is made unimportable in a child interpreter (sys.modules[name] = None), as if not installed.
    script = f"import sys; sys.modules[{blocked!r}] = None\nfrom ubunye.lineage.store import RecordStore\n{code}"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ubunye.exceptions.RecordError: " + says), last
    extra = {"s3fs": "s3", "adlfs": "azure"}.get(blocked)
    if extra:
        assert last.endswith(f"install it: pip install 'ubunye[{extra}]'"), last


def test_a_password_in_the_records_url_is_in_no_error(tmp_path: Path, s3: S3) -> None:
    # The store's own client quotes the URL's authority whole ('Invalid bucket name "AKIA...:<password>@b"'): the
    # password is remembered as a secret once the URL is read, so every error text masks it.
    from ubunye.lineage.redact import forget_secrets

    url = "s3://AKIAUBUNYETESTKEY01:TopSecretValue99@" + s3.bucket().removeprefix("s3://") + "/records"
    uc = example_usecase(tmp_path)
    try:
        with pytest.raises(RecordError) as err:
            RecordStore(records=url).check()
        assert "TopSecretValue99" not in str(err.value) and "***" in str(err.value), err.value
        forget_secrets()
        for args in (["lineage", "list", "--records", url],
                     ["run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "orders", "--records", url]):  # fmt: skip
            done = invoke(*args)
            assert done.exit_code == 2 and "TopSecretValue99" not in done.output + done.stderr, done.stderr
    finally:
        forget_secrets()
    assert not (uc / "data").exists()


@pytest.mark.parametrize("records", [" s3://team-bucket/records", "s3://team-bucket/records ", "recs ", "\trecs"])
def test_a_records_location_with_surrounding_whitespace_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, records: str
) -> None:
    # " s3://b/r" was a local folder " s3:" in the current folder, "s3://b/r " the prefix "r /": never what was meant.
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    uc = example_usecase(tmp_path)
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    with pytest.raises(RecordError, match=r"records location .* whitespace"):
        RecordStore(records=records)
    with pytest.raises(RecordError, match=r"records location .* whitespace"):
        run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas", records=records)
    for args in (["lineage", "list", "--records", records],
                 ["run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "orders", "--records", records]):  # fmt: skip
        done = invoke(*args)
        (line,) = done.stderr.strip().splitlines()
        assert done.exit_code == 2 and line.startswith("error: records location ") and "--records" in line, line
    assert list(work.iterdir()) == [] and not (uc / "data").exists()
    monkeypatch.setenv("UBUNYE_RECORDS", f" {work / 'env'} ")  # the environment variable is stripped, as documented
    assert RecordStore(records=records_location()).root == work / "env"


def test_the_shown_url_keeps_an_azure_container() -> None:
    from ubunye.lineage.remote import shown_url

    url = "abfss://raw@acct.dfs.core.windows.net/records"
    assert shown_url(url) == url  # a container, as mask_text keeps it: the address shown still works
    assert shown_url("abfss://raw:acctkey-123@acct.dfs.core.windows.net/r") == "abfss://***@acct.dfs.core.windows.net/r"
    assert shown_url("sftp://ops:hunter22@host/records") == "sftp://***@host/records"
