"""The record's ``openlineage`` note tells the truth (docs/tasks-and-records.md, "OpenLineage"): ``sent`` lists only
events a backend took; an asynchronous transport is waited for; a transport the client would not use as written is
refused before the run; a disabled client or one with no transport sends nothing and the note says so. Also: the
``schema`` facet of a dataset with a decimal column, and one job per task however its names hold dots.

Real runs (pandas) and a real HTTP backend on 127.0.0.1, started and stopped by each test."""

from __future__ import annotations

import decimal
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from tests.lineage.usecase import example_usecase, last, write_task
from ubunye.exceptions import ConfigError
from ubunye.hashing import hash_frame
from ubunye.hashing.types import type_name
from ubunye.lineage import RecordStore
from ubunye.lineage.openlineage import job_name, schema_fields
from ubunye.runner import run_task

pytest.importorskip("openlineage.client")


class Backend:
    """An OpenLineage HTTP backend on 127.0.0.1: keeps every event POSTed, waits ``delay`` seconds, answers
    ``status``; ``answered`` counts the answers already written."""

    def __init__(self, status: int = 200, delay: float = 0.0) -> None:
        self.events: list[dict[str, Any]] = []
        self.answered = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with outer.lock:
                    outer.events.append(json.loads(body))
                time.sleep(delay)
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")
                self.wfile.flush()
                with outer.lock:
                    outer.answered += 1

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def uc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example usecase, with no OpenLineage settings from the machine: no env, no openlineage.yml found."""
    for name in list(os.environ):
        if name.startswith("OPENLINEAGE"):
            monkeypatch.delenv(name)
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # the client also looks in ~/.openlineage
    monkeypatch.chdir(tmp_path)  # ... and in the working directory
    return example_usecase(tmp_path)


def monitor(task_dir: Path, params: dict[str, Any] | None) -> None:
    """Put ``lineage`` and the openlineage monitor with ``params`` in a task's config.yaml."""
    path = task_dir / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["CONFIG"]["monitors"] = ["lineage", {"type": "openlineage", "params": params}]
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))


def note_of(uc: Path, task: str) -> dict[str, Any]:
    return dict(last(uc, task).extra["openlineage"])


# --- 1a. an asynchronous transport ---------------------------------------------------------------------------


def test_async_http_events_are_sent_only_once_the_backend_answered(uc: Path) -> None:
    backend = Backend(delay=1.0)  # slower than the rest of the run: a queued event is not yet delivered
    try:
        monitor(uc / "shop/daily/orders", {"transport": {"type": "async_http", "url": backend.url}})
        result = run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas")
        answered_at_return = backend.answered
    finally:
        backend.close()
    assert result.status == "success"
    assert [e["eventType"] for e in backend.events] == ["START", "COMPLETE"]
    assert answered_at_return == 2  # the run waited for both answers before the record said so
    note = note_of(uc, "orders")
    assert note["sent"] == ["START", "COMPLETE"] and "errors" not in note


def test_async_http_events_a_backend_refused_are_errors_not_sent(uc: Path) -> None:
    backend = Backend(status=500)
    try:
        transport = {"type": "async_http", "url": backend.url, "retry": {"total": 0}}
        monitor(uc / "shop/daily/orders", {"transport": transport})
        result = run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas")
    finally:
        backend.close()
    assert result.status == "success"  # a failing backend never fails the run
    assert [e["eventType"] for e in backend.events] == ["START", "COMPLETE"]  # they left; the backend said no
    note = note_of(uc, "orders")
    assert "sent" not in note
    assert [e.split(":")[0] for e in note["errors"]] == ["START", "COMPLETE"]
    assert all("status code: 500" in e for e in note["errors"]), note["errors"]


@pytest.mark.parametrize("kind", ["http", "async_http"])
def test_a_composite_whose_backend_child_refuses_is_sent_and_noted_alike_for_sync_and_async(
    uc: Path, tmp_path: Path, kind: str
) -> None:
    # The file child takes both events; the backend child answers 500. An async child made the record say nothing
    # was sent (a ConnectionError for the whole event), a sync one said sent: the same delivery, opposite records.
    backend = Backend(status=500)
    log = tmp_path / "events.jsonl"
    try:
        children = [{"type": kind, "url": backend.url, "retry": {"total": 0}},
                    {"type": "file", "log_file_path": str(log), "append": True}]  # fmt: skip
        monitor(uc / "shop/daily/orders", {"transport": {"type": "composite", "transports": children}})
        result = run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas")
    finally:
        backend.close()
    assert result.status == "success"
    assert [json.loads(line)["eventType"] for line in log.read_text().splitlines()] == ["START", "COMPLETE"]
    note = note_of(uc, "orders")
    assert note["sent"] == ["START", "COMPLETE"], note
    if kind == "async_http":  # the failure the monitor can see is noted (a sync child's is the client's to log)
        assert [e.split(":")[0] for e in note["errors"]] == ["START", "COMPLETE"], note


# --- 1b, 1d. a transport the client would not use as written ---------------------------------------------------


@pytest.mark.parametrize(
    ("transport", "key"),
    [
        ({"url": "URL"}, r"params\.transport\.type: missing"),  # the client ignores it and prints to its log
        ({}, r"params\.transport: empty"),
        ({"type": "http", "url": "URL", "tmeout": 3}, r"params\.transport\.tmeout: .*did you mean 'timeout'"),
        ({"type": "async_http", "url": "URL", "max_queue": 3}, r"params\.transport\.max_queue: "),
        ({"type": "htp", "url": "URL"}, r"params\.transport\.type: unknown transport 'htp'"),
        ({"type": "composite", "transports": [{"url": "URL"}]}, r"params\.transport\.transports\[0\]\.type: missing"),
    ],
)
def test_a_transport_the_client_would_not_use_as_written_is_refused_before_the_run(
    uc: Path, transport: dict[str, Any], key: str
) -> None:
    backend = Backend()
    try:
        given = {k: (backend.url if v == "URL" else v) for k, v in transport.items()}
        if "transports" in given:
            given["transports"] = [{"url": backend.url}]
        monitor(uc / "shop/daily/orders", {"transport": given})
        with pytest.raises(ConfigError, match=r"config\.yaml: CONFIG\.monitors\[1\]: " + key):
            run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas")
    finally:
        backend.close()
    assert backend.events == []
    assert not (uc / "data").exists() and RecordStore(uc).records("shop", "daily", "orders") == []


# --- 1b, 1c. no transport anywhere, a disabled client ------------------------------------------------------------


@pytest.mark.parametrize("params", [{"transport": None}, None, {"namespace": "team"}])
def test_with_no_transport_anywhere_nothing_is_sent_and_the_record_says_so(
    uc: Path, params: dict[str, Any] | None
) -> None:
    monitor(uc / "shop/daily/orders", params)
    assert run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas").status == "success"
    note = note_of(uc, "orders")
    assert "sent" not in note
    assert [e.split(":")[0] for e in note["errors"]] == ["START", "COMPLETE"]
    assert all("no OpenLineage transport is configured" in e for e in note["errors"])


def test_a_disabled_client_sends_nothing_and_the_record_says_so(uc: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENLINEAGE_DISABLED", "true")
    backend = Backend()
    try:
        monitor(uc / "shop/daily/orders", {"transport": {"type": "http", "url": backend.url}})
        assert run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas").status == "success"
    finally:
        backend.close()
    assert backend.events == []
    note = note_of(uc, "orders")
    assert "sent" not in note and "errors" not in note
    assert [e.split(":")[0] for e in note["skipped"]] == ["START", "COMPLETE"]
    assert all("OPENLINEAGE_DISABLED=true" in e for e in note["skipped"])


def test_a_working_transport_is_still_sent(uc: Path) -> None:
    backend = Backend()
    try:
        transport = {"type": "http", "url": backend.url, "timeout": 3, "retry": {"total": 0}, "name": "main"}
        monitor(uc / "shop/daily/orders", {"transport": transport})
        assert run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas").status == "success"
    finally:
        backend.close()
    assert [e["eventType"] for e in backend.events] == ["START", "COMPLETE"]
    note = note_of(uc, "orders")
    assert note["sent"] == ["START", "COMPLETE"] and "errors" not in note and "skipped" not in note


# --- 2. the schema facet of a dataset with a decimal column -----------------------------------------------------


def test_schema_fields_of_a_schema_with_decimal_columns() -> None:
    table = pa.table(
        {
            "id": [1, 2],
            "price": pa.array([decimal.Decimal("1.50"), decimal.Decimal("2.25")], pa.decimal128(10, 2)),
            "tags": pa.array([[decimal.Decimal("1.5")], []], pa.list_(pa.decimal128(5, 1))),
        }
    )
    expected = [(f.name, type_name(f.type, f.name)) for f in table.schema]  # arrow's types, named by rows-v1
    assert schema_fields(hash_frame(table).schema) == expected
    assert any("decimal(" in t for _, t in expected)


def test_the_schema_facet_of_an_output_with_a_decimal_column_is_sent(uc: Path) -> None:
    cfg = {
        "CONFIG": {
            "outputs": {"o": {"format": "parquet", "path": "data/prices"}},
            "transform": {"type": "sql", "query": "SELECT 1 AS id, CAST(1.50 AS DECIMAL(10,2)) AS price"},
        }
    }
    task = write_task(uc, "prices", cfg)
    log = uc.parent / "events.jsonl"
    monitor(task, {"transport": {"type": "file", "log_file_path": str(log), "append": True}})
    assert run_task(task, engine="pandas").status == "success"
    (written,) = [p for p in (uc / "data/prices").rglob("*.parquet")]
    schema = pq.read_schema(written)
    expected = [(f.name, type_name(f.type, f.name)) for f in schema]
    assert any(t.startswith("decimal(") for _, t in expected), expected
    complete = json.loads(log.read_text().splitlines()[-1])
    (out,) = complete["outputs"]
    assert [(f["name"], f["type"]) for f in out["facets"]["schema"]["fields"]] == expected


# --- 3. one job per task ----------------------------------------------------------------------------------------


def test_tasks_whose_names_hold_dots_are_two_jobs(uc: Path) -> None:
    log = uc.parent / "events.jsonl"
    tasks = [uc / "a.b" / "c" / "t", uc / "a" / "b.c" / "t"]  # a dot-joined name would be a.b.c.t for both
    for i, task in enumerate(tasks):
        task.mkdir(parents=True)
        cfg = {
            "CONFIG": {
                "outputs": {"o": {"format": "parquet", "path": f"data/o{i}"}},
                "transform": {"type": "sql", "query": "SELECT 1 AS x"},
                "monitors": [
                    "lineage",
                    {"type": "openlineage", "params": {"transport": {"type": "file", "log_file_path": str(log),
                                                                     "append": True}}},
                ],
            }
        }  # fmt: skip
        (task / "config.yaml").write_text(yaml.safe_dump(cfg))
        assert run_task(task, engine="pandas").status == "success"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    names = [e["job"]["name"] for e in events if e["eventType"] == "COMPLETE"]
    assert names == [t.relative_to(uc).as_posix() for t in tasks]  # the task's path under the usecase folder
    assert len(set(names)) == 2
    for task, name in zip(tasks, names, strict=True):
        usecase, package, name_of_task = task.relative_to(uc).parts
        (rec,) = RecordStore(uc).records(usecase, package, name_of_task)
        assert rec.extra["openlineage"]["job"] == name


def test_job_names_of_parts_holding_a_slash_or_a_percent_stay_apart() -> None:
    def name(*parts: str) -> str:
        return job_name(SimpleNamespace(usecase=parts[0], package=parts[1], task=parts[2]))  # type: ignore[arg-type]

    given = [("a/b", "c", "t"), ("a", "b/c", "t"), ("a%2Fb", "c", "t"), ("a", "b%2Fc", "t"), ("a.b", "c", "t")]
    made = [name(*parts) for parts in given]
    assert len(set(made)) == len(given), made
    assert all(m.count("/") == 2 for m in made)  # always three parts
    assert name("shop", "daily", "orders") == "/".join(("shop", "daily", "orders"))
