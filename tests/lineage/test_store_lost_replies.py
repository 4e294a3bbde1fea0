"""Create-only record writes whose reply went missing (docs/tasks-and-records.md, "Records in object stores"): the
store applied a PUT, its reply was lost, and the client's retry found the object there. A record already there with
the very bytes being written is that write, done; one with other bytes is another writer's, and stays an error.

The faults are real: tests/lineage/s3server.py's FaultyProxy on 127.0.0.1 in front of moto's S3 server forwards the
PUT and then closes the connection before relaying the reply, so s3fs retries it, as it would after a network
fault; or it answers what an S3 store answers (409 to a conditional write colliding with another, 412 without its
Condition from some S3-compatible servers).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.lineage import s3server
from tests.lineage.s3server import S3, Fault, FaultyProxy
from tests.lineage.usecase import example_usecase
from ubunye.exceptions import RecordError
from ubunye.lineage import RecordStore, RunRecord
from ubunye.runner import run_task

s3_server, s3 = s3server.s3_server, s3server.s3  # the fixtures
RUN = "20261201T000000.000000Z-bbbbbb"
CONFLICT = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>ConditionalRequestConflict</Code><Message>A conflicting '
    b"conditional operation is currently in progress against this resource. Please try again.</Message></Error>"
)
PRECONDITION = (  # as some S3-compatible servers send it: no <Condition>, so s3fs raises an OSError, not FileExists
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the '
    b"pre-conditions you specified did not hold</Message></Error>"
)


def rec(status: str = "running") -> RunRecord:
    return RunRecord(run_id=RUN, usecase="u", package="p", task="t", status=status, started_at="2026-12-01T00:00:00Z")


def objects(s3: S3, url: str) -> dict[str, bytes]:
    import s3fs

    fs = s3fs.S3FileSystem(**s3.options, use_listings_cache=False)
    root = url.removeprefix("s3://")
    return {k[len(root) + 1 :]: fs.cat_file(k) for k in fs.find(root)}


def first_put(matches: Callable[[str], bool], fault: Fault) -> Callable[[str, str], Fault | None]:
    """A fault for the first PUT whose path (without the query) ``matches``; every other request goes through."""
    done: list[str] = []

    def choose(method: str, path: str) -> Fault | None:
        if method == "PUT" and not done and matches(path.split("?")[0]):
            done.append(path)
            return fault
        return None

    return choose


def is_final(path: str) -> bool:
    return path.endswith(f"/u/p/t/{RUN}.json")


def puts(proxy: FaultyProxy, matches: Callable[[str], bool]) -> list[int | None]:
    return [s.status for s in proxy.seen if s.method == "PUT" and matches(s.path.split("?")[0])]


@pytest.mark.parametrize("which", ["final", "running"])
def test_a_write_whose_reply_was_lost_is_not_refused_as_already_there(s3: S3, which: str) -> None:
    url = s3.bucket() + "/records"
    matches = is_final if which == "final" else (lambda p: "/.running/" in p)
    with FaultyProxy(s3.endpoint, first_put(matches, Fault(drop_reply=True))) as proxy:
        store = RecordStore(records=url, storage_options=proxy.options)
        r = rec()
        running = store.write(r)
        r.status = "success"
        final = store.write(r)  # was: RecordError "a run record is already there"
    # the PUT reached the store, its reply was lost, s3fs sent it again and the store refused the copy
    assert puts(proxy, matches) == [200, 412]
    assert str(final).endswith(f"/u/p/t/{RUN}.json") and "/.running/" in str(running)
    stored = objects(s3, url)
    assert list(stored) == [f"u/p/t/{RUN}.json"]  # written once; the running state cleaned up after it
    assert json.loads(stored[f"u/p/t/{RUN}.json"])["status"] == "success"
    assert [e.record.status for e in RecordStore(records=url).entries()] == ["success"]


def test_a_run_whose_final_reply_was_lost_succeeds(tmp_path: Path, s3: S3) -> None:
    uc = example_usecase(tmp_path)
    url = s3.bucket() + "/records"

    def final(path: str) -> bool:
        return "/shop/daily/orders/" in path and "/.running/" not in path and path.endswith(".json")

    with FaultyProxy(s3.endpoint, first_put(final, Fault(drop_reply=True))) as proxy:
        result = run_task(
            uc / "shop/daily/orders", dt="2026-12-01", engine="pandas", records=url, storage_options=proxy.options
        )
    assert result.status == "success"  # was: failed, "a run record is already there", although it was
    assert puts(proxy, final) == [200, 412]
    assert list(objects(s3, url)) == [f"shop/daily/orders/{result.run_id}.json"]
    assert RecordStore(records=url).load(result.run_id).status == "success"


def test_a_412_without_its_condition_is_read_back_too(s3: S3) -> None:
    """The retry of a lost reply answered by a server whose 412 carries no Condition (s3fs: OSError, not
    FileExistsError): the bytes decide, as for a FileExistsError."""
    url = s3.bucket() + "/records"
    seen: list[str] = []

    def fault(method: str, path: str) -> Fault | None:
        if method != "PUT" or not is_final(path.split("?")[0]):
            return None
        seen.append(path)
        return Fault(drop_reply=True) if len(seen) == 1 else Fault(reply=(412, PRECONDITION))

    with FaultyProxy(s3.endpoint, fault) as proxy:
        store = RecordStore(records=url, storage_options=proxy.options)
        store.write(rec())
        store.write(rec("success"))
        assert puts(proxy, is_final) == [200, None]
        # a record of other bytes answered so stays refused (the next PUT of the key gets the 412 again)
        with pytest.raises(RecordError, match="a run record is already there"):
            store.write(rec("failed"))  # u/p/t/RUN.json holds "success": the 412 is a real one
    assert json.loads(objects(s3, url)[f"u/p/t/{RUN}.json"])["status"] == "success"


def test_a_conditional_write_conflict_is_tried_again(s3: S3) -> None:
    """S3 answers 409 ConditionalRequestConflict to a create-only PUT racing another on the same key, and says to
    try again: the write is retried, not reported as failed."""
    url = s3.bucket() + "/records"
    with FaultyProxy(s3.endpoint, first_put(is_final, Fault(reply=(409, CONFLICT)))) as proxy:
        store = RecordStore(records=url, storage_options=proxy.options)
        store.write(rec())
        store.write(rec("success"))  # was: RecordError "cannot write run record: OSError: ... conflicting"
    assert puts(proxy, is_final) == [None, 200]
    assert json.loads(objects(s3, url)[f"u/p/t/{RUN}.json"])["status"] == "success"


@pytest.mark.parametrize("same", [True, False])
def test_a_record_already_there_is_this_write_only_with_the_same_bytes(s3: S3, same: bool) -> None:
    """Without a proxy: the object is placed first (a real one, by another client), then the store writes."""
    import s3fs

    url = s3.bucket() + "/records"
    store = RecordStore(records=url)
    r = rec("success")
    text = json.dumps(r.to_dict(), indent=2, sort_keys=False, default=str) + "\n"  # what the store writes
    placed = text.encode() if same else text.replace('"success"', '"failed"').encode()
    fs = s3fs.S3FileSystem(**s3.options, use_listings_cache=False)
    fs.pipe_file(f"{url}/u/p/t/{RUN}.json".removeprefix("s3://"), placed)
    if same:
        assert str(store.write(r)) == f"{url}/u/p/t/{RUN}.json"
    else:
        with pytest.raises(RecordError, match=r"/u/p/t/.*\.json: a run record is already there"):
            store.write(r)
    assert objects(s3, url) == {f"u/p/t/{RUN}.json": placed}  # never overwritten
