"""Record stores given odd locations and odd contents (docs/tasks-and-records.md, "Where records go", "Readers
never trust a file"): every location either means one place to every reader and writer, or is refused in one line
naming it, before anything is written; a run id found in several tasks is named, never guessed. Object stores are
moto's S3 server on 127.0.0.1 (tests/lineage/s3server.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.lineage import s3server
from tests.lineage.s3server import S3
from tests.lineage.usecase import example_usecase
from ubunye.cli.main import app
from ubunye.exceptions import RecordError, TaskError
from ubunye.lineage import RecordStore, RunRecord
from ubunye.runner import run_task

s3_server, s3 = s3server.s3_server, s3server.s3  # the fixtures
runner = CliRunner()
DT = "2026-12-01"


def rec(run_id: str, task: str = "t", usecase: str = "u", package: str = "p", status: str = "success") -> RunRecord:
    at = "2026-12-01T00:00:00Z"
    return RunRecord(run_id=run_id, usecase=usecase, package=package, task=task, status=status, started_at=at)


def s3_objects(s3: S3, bucket_url: str) -> list[str]:
    import s3fs

    fs = s3fs.S3FileSystem(**s3.options, use_listings_cache=False)
    root = bucket_url.removeprefix("s3://")
    return sorted(k[len(root) + 1 :] for k in fs.find(root))


@pytest.mark.parametrize(
    ("tail", "says"),
    [
        ("//records", "an empty segment ('//')"),  # s3fs writes under b//records; listing b/records never finds it
        ("/a/../records", "the segment '..'"),  # kept as a key; another tool would read it as b/records
        ("/./records", "the segment '.'"),
        ("/records?versionId=1", "no query or fragment"),
        ("/records#x", "no query or fragment"),
    ],
)
def test_an_object_store_url_with_odd_segments_is_refused_before_a_write(s3: S3, tail: str, says: str) -> None:
    bucket = s3.bucket()
    with pytest.raises(RecordError, match="records s3://") as err:
        RecordStore(records=bucket + tail).write(rec("r1"))
    assert says in str(err.value)
    assert s3_objects(s3, bucket) == []  # nothing was written anywhere


@pytest.mark.parametrize(
    ("records", "says"),
    [
        ("s3://", "names no bucket or container"),  # was taken as the local path "s3:" in the current folder
        ("s3:///records", "names no bucket or container"),
        ("s3:/bucket/records", "looks like a URL without '//'"),  # a folder "s3:" in the current folder
        ("gs:bucket", "looks like a URL without '//'"),
        ("$HOME/records", "'$HOME', which nothing expands"),  # a folder named "$HOME"
        ("${RECORDS_ROOT}/x", "'${RECORDS_ROOT}'"),
        ("jdbc:postgresql:records", "looks like a URL (jdbc:...)"),  # was a folder "jdbc:postgresql:records"
        ("~nosuchuser-ubunye/records", "no home folder is known for user"),  # was a RuntimeError traceback
    ],
)
def test_a_records_location_that_would_land_somewhere_unmeant_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, records: str, says: str
) -> None:
    uc = example_usecase(tmp_path)
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    with pytest.raises(RecordError, match="records") as err:
        RecordStore(records=records)
    assert says in str(err.value)
    with pytest.raises((RecordError, TaskError)):
        run_task(uc / "shop/daily/orders", dt=DT, engine="pandas", records=records)
    monkeypatch.setenv("UBUNYE_RECORDS", records)  # the same setting
    result = runner.invoke(app, ["run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "orders", "-dt", DT])
    assert result.exit_code == 2, result.output
    shown = " ".join(result.output.replace("│", " ").split())  # the usage box wraps long lines
    assert says in shown and "Traceback" not in result.output
    assert list(work.iterdir()) == []  # no folder was made in the current folder
    assert not (uc / "data").exists()  # the run did not start


def test_an_upper_case_scheme_is_the_same_store(s3: S3) -> None:
    bucket = s3.bucket()
    RecordStore(records=bucket.replace("s3://", "S3://") + "/records").write(rec("r1"))
    assert [r.run_id for r in RecordStore(records=bucket + "/records").records()] == ["r1"]


def test_a_records_root_that_is_a_file_is_an_error_for_readers_not_an_empty_store(tmp_path: Path) -> None:
    uc = example_usecase(tmp_path)
    root = tmp_path / "records"
    root.write_text("not a folder")
    with pytest.raises(RecordError, match="not a folder"):
        RecordStore(records=root).entries()
    for args in (["list"], ["show", "latest", "-u", "u", "-p", "p", "-t", "t"]):
        result = runner.invoke(app, ["lineage", *args, "-d", str(uc), "--records", str(root)])
        assert result.exit_code == 2, result.output
        assert "not a folder" in result.output and str(root) in result.output
    with pytest.raises(TaskError, match="did not start"):
        run_task(uc / "shop/daily/orders", dt=DT, engine="pandas", records=root)
    assert root.read_text() == "not a folder" and not (uc / "data").exists()


@pytest.mark.parametrize("where", ["local", "s3"])
def test_one_run_id_in_two_tasks_is_named_never_guessed(tmp_path: Path, s3: S3, where: str) -> None:
    store = RecordStore(records=tmp_path / "records" if where == "local" else s3.bucket() + "/records")
    store.write(rec("20261201T000000.000000Z-aaaaaa", task="t1"))
    store.write(rec("20261201T000000.000000Z-aaaaaa", task="t2"))
    for find in (lambda: store.load("20261201T000000.000000Z-aaaaaa"),
                 lambda: store.resolve("20261201T000000.000000Z-aaaaaa")):  # fmt: skip
        with pytest.raises(RecordError, match=r"runs of 2 tasks \(u/p/t1, u/p/t2\)"):
            find()
    assert store.resolve("20261201T000000.000000Z-aaaaaa", "u", "p", "t2").record.task == "t2"


@pytest.mark.parametrize(
    "name",
    # '%2F' is no '/', '::' no chained URL, '?versionid=' (lower case) no version id to s3fs; '?versionId=' is one
    # (refused: test_a_name_s3fs_reads_as_a_version_id_is_refused_on_s3_and_kept_locally)
    ["daily sales", "täglich", "[bold]x", "a#b", "x*", "a?b", "a%2Fb", "a%20b%", "a+b&c=d", "a::b", "b?versionid=1"],
)
def test_names_with_spaces_unicode_and_url_characters_round_trip_through_s3(s3: S3, name: str) -> None:
    url = s3.bucket() + "/records"
    store = RecordStore(records=url)
    running = rec("20261201T000000.000000Z-bbbbbb", task=name, usecase=name, status="running")
    store.write(running)
    other = rec("20261201T000000.000000Z-cccccc", task="t")
    store.write(other)
    running.status = "success"
    store.write(running)  # the final object, and the running ones deleted
    got = {(r.usecase, r.task, r.status) for r in RecordStore(records=url).records()}
    assert got == {(name, name, "success"), ("u", "t", "success")}
    assert RecordStore(records=url).resolve("latest", name, "p", name).record.run_id == running.run_id
    keys = s3_objects(s3, url)
    assert not any("/.running/" in k for k in keys) and len(keys) == 2


def test_two_runs_started_in_the_same_second_have_distinct_ids_and_latest_is_the_last_to_end(tmp_path: Path) -> None:
    uc = example_usecase(tmp_path)
    first = run_task(uc / "shop/daily/orders", dt=DT, engine="pandas")
    second = run_task(uc / "shop/daily/orders", dt=DT, engine="pandas")
    assert first.run_id != second.run_id
    store = RecordStore(uc)
    assert store.resolve("latest", "shop", "daily", "orders").record.run_id == second.run_id
    # the same second, the same microsecond even: the random part keeps the ids (and files) apart
    a, b = rec("20261201T000000.000000Z-aaaaaa"), rec("20261201T000000.000000Z-bbbbbb")
    a.ended_at = b.ended_at = "2026-12-01T00:00:01Z"
    for r in (b, a):
        RecordStore(records=tmp_path / "r").write(r)
    entries = RecordStore(records=tmp_path / "r").entries()
    assert [e.record.run_id for e in entries] == [a.run_id, b.run_id]  # a tie: the file name decides, every time
    assert os.listdir(tmp_path / "r/u/p/t") and len(os.listdir(tmp_path / "r/u/p/t")) == 2


# --- names an object store's filesystem reads as something else; the order of a run's objects --------------------

RUN = "20261201T000000.000000Z-dddddd"


def put_object(s3: S3, url: str, data: bytes) -> None:
    """An object written by another tool, its key exactly as given (botocore, not s3fs: s3fs would cut a key at
    '?versionId=')."""
    import boto3

    bucket, _, key = url.removeprefix("s3://").partition("/")
    client = boto3.client("s3", endpoint_url=s3.endpoint, aws_access_key_id=s3server.ACCESS_KEY,
                          aws_secret_access_key=s3server.SECRET_KEY, region_name="us-east-1")  # fmt: skip
    client.put_object(Bucket=bucket, Key=key, Body=data)


def record_bytes(r: RunRecord, **extra: object) -> bytes:
    import json

    r.extra = dict(extra)
    return json.dumps(r.to_dict(), indent=2).encode()


@pytest.mark.parametrize("name", ["a?versionId=1", "x?versionId=", "v?versionId=null&y=2"])
@pytest.mark.parametrize("part", ["usecase", "package", "task", "run_id"])
def test_a_name_s3fs_reads_as_a_version_id_is_refused_on_s3_and_kept_locally(
    tmp_path: Path, s3: S3, part: str, name: str
) -> None:
    """s3fs cuts every path at '?versionId=': the running state of task 'a?versionId=1' went to the key 'u/p/a', and
    the final write to the same key was refused as "already there" (a failed run). Refused before any write now,
    naming the name and why; a local folder keeps such a name as it is."""
    bucket = s3.bucket()
    ids = {"usecase": "u", "package": "p", "task": "t", "run_id": RUN, part: name}
    r = RunRecord(**ids, status="running", started_at="2026-12-01T00:00:00Z")
    with pytest.raises(RecordError) as err:
        RecordStore(records=bucket + "/records").write(r)
    says = str(err.value)
    assert says.startswith(f"bad {part} {name!r} of ") and f"cannot be a name in {bucket}/records: s3fs" in says
    assert "'?versionId=' in a path as an S3 object version id" in says and "rename it" in says
    assert s3_objects(s3, bucket) == []  # nothing written, under no key
    store = RecordStore(records=bucket + "/records")
    with pytest.raises(RecordError, match=rf"bad {part} "):
        store.path(*ids.values())
    if part != "run_id":  # a reader asking for its runs is told the same, not shown another prefix's
        with pytest.raises(RecordError, match=rf"bad {part} "):
            store.resolve("latest", ids["usecase"], ids["package"], ids["task"])
    local = RecordStore(records=tmp_path / "records")
    local.write(r)
    r.status = "success"
    local.write(r)
    (got,) = RecordStore(records=tmp_path / "records").records()
    assert (got.usecase, got.package, got.task, got.run_id, got.status) == (*ids.values(), "success")


def test_a_run_of_a_task_named_like_a_version_id_does_not_start_on_s3(tmp_path: Path, s3: S3) -> None:
    import shutil

    uc = example_usecase(tmp_path)
    task = uc / "shop/daily/a?versionId=1"
    shutil.copytree(uc / "shop/daily/orders", task)
    url = s3.bucket() + "/records"
    with pytest.raises(TaskError, match=r"did not start: .*bad task 'a\?versionId=1' of shop/daily/a\?versionId=1"):
        run_task(task, dt=DT, engine="pandas", records=url)
    assert s3_objects(s3, url) == [] and not (uc / "data").exists()
    assert run_task(task, dt=DT, engine="pandas").status == "success"  # the usecase_dir's own store takes it


def test_a_key_s3fs_would_misread_is_unreadable_not_another_objects_record(s3: S3) -> None:
    """A record another tool wrote under 'u/p/a?versionId=1/': reading it through s3fs would read the object
    'u/p/a' instead, here a record saying success where the run failed."""
    url = s3.bucket() + "/records"
    r = RunRecord(run_id=RUN, usecase="u", package="p", task="a?versionId=1", status="failed")
    put_object(s3, f"{url}/u/p/a?versionId=1/{RUN}.json", record_bytes(r))
    r.status = "success"
    put_object(s3, f"{url}/u/p/a", record_bytes(r))  # what s3fs reads for that key
    (entry,) = RecordStore(records=url).entries()
    assert entry.record is None  # was: the record of 'u/p/a', status success
    assert entry.problem == (
        f"{url}/u/p/a?versionId=1/{RUN}.json: cannot read run record: s3fs would address another object "
        "('records/u/p/a') (s3fs reads '?versionId=' in a path as an S3 object version id)"
    )


def test_running_states_rank_by_their_number_and_never_above_the_final_record(s3: S3) -> None:
    """A run's running states are ordered by their sequence as a number (as text, '9' came after '10'), and only
    ASCII digits make one (str.isdigit takes '٩', which as text sorted above the final record)."""
    url = s3.bucket() + "/records"
    running = f"{url}/u/p/t/.running/{RUN}"
    for n in (9, 10):
        put_object(s3, f"{running}/{n}.json", record_bytes(rec(RUN, status="running"), n=n))
    (entry,) = RecordStore(records=url).entries()
    assert entry.record.extra == {"n": 10}  # was: {"n": 9}
    put_object(s3, f"{url}/u/p/t/{RUN}.json", record_bytes(rec(RUN)))
    put_object(s3, f"{running}/٩.json", record_bytes(rec(RUN, status="running")))
    for found in (RecordStore(records=url).entries()[0], RecordStore(records=url).resolve("latest", "u", "p", "t")):
        assert found.record.status == "success" and str(found.path) == f"{url}/u/p/t/{RUN}.json"  # was: running


def test_a_running_state_deleted_between_listing_and_reading_gives_the_final_record(s3: S3) -> None:
    """A reader lists a run's newest running state; the run then writes its final record and deletes its running
    states; the reader's read finds nothing. It reads the final record (was: the run listed as unreadable,
    FileNotFoundError, although its record is there)."""
    url = s3.bucket() + "/records"
    reader, writer = RecordStore(records=url), RecordStore(records=url)
    r = rec(RUN, status="running")
    writer.write(r)
    with reader.frozen():  # one listing for the whole block, as a reader command has
        assert reader.run_ids() == [RUN]
        r.status = "success"
        writer.write(r)
        assert s3_objects(s3, url) == [f"u/p/t/{RUN}.json"]
        found = [reader.entries()[0], next(reader.newest()), reader.resolve("latest", "u", "p", "t")]
    for entry in found:
        assert entry.record is not None, entry.problem
        assert entry.record.status == "success" and str(entry.path) == f"{url}/u/p/t/{RUN}.json"
