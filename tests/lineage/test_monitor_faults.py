"""An OpenLineage backend that misbehaves (docs/tasks-and-records.md, "OpenLineage": a failing backend never fails
the run): a real TCP server on 127.0.0.1, started and stopped by each test, that answers one byte at a time, never
answers, answers 500, answers garbage or closes the connection. The run finishes in bounded time, its data and its
record are intact, and the failure is noted in the record and logged."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.lineage.usecase import example_usecase, last
from ubunye.hashing import hash_frame
from ubunye.lineage.openlineage import OpenLineageMonitor
from ubunye.runner import run_task

pytest.importorskip("openlineage.client")

#: How long a misbehaving connection is kept up at most: longer than any bound the tests expect of a run.
HOLD = 40.0


def read_request(conn: socket.socket) -> bytes:
    """One whole HTTP request (headers and a Content-Length body): closing before it is read would reset the
    connection, which is another fault than the one under test."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
    )
    while len(body) < length:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


class BadBackend:
    """A TCP server on 127.0.0.1 that reads a request and then misbehaves as ``mode`` says."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0
        self.stop = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.threads = [threading.Thread(target=self._serve, daemon=True)]
        self.threads[0].start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            t = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            self.threads.append(t)
            t.start()

    def _handle(self, conn: socket.socket) -> None:
        until = time.monotonic() + HOLD
        try:
            conn.settimeout(1)
            read_request(conn)
            self.requests += 1
            if self.mode == "trickle":  # a header line now and then: every read succeeds, none ends the reply
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                while not self.stop.is_set() and time.monotonic() < until:
                    conn.sendall(b"X-Slow: y\r\n")
                    self.stop.wait(0.5)
            elif self.mode == "hang":
                while not self.stop.is_set() and time.monotonic() < until:
                    self.stop.wait(0.1)
            elif self.mode == "500":
                # "Connection: close", as this server closes every connection after one answer: without it the
                # client may send its retry on the closed keep-alive connection and see no 500 at all
                conn.sendall(
                    b"HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: 4\r\n\r\noops"
                )
            elif self.mode == "garbage":
                conn.sendall(b"\x00\xff\xfe not http at all\r\n\r\n")
            # "close": nothing at all, the connection is closed
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        for t in self.threads:
            t.join(timeout=5)


@pytest.fixture
def uc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    monkeypatch.delenv("OPENLINEAGE_URL", raising=False)
    return example_usecase(tmp_path)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Iterator[BadBackend]:
    server = BadBackend(request.param)
    yield server
    server.close()


def with_monitor(task_dir: Path, transport: dict[str, object]) -> None:
    path = task_dir / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["CONFIG"]["monitors"] = ["lineage", {"type": "openlineage", "params": {"transport": transport}}]
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))


def data_hash_on_disk(location: str) -> str | None:
    from deltalake import DeltaTable

    return hash_frame(DeltaTable(location).to_pyarrow_table()).data_hash


@pytest.mark.parametrize(
    ("backend", "says"),
    [
        ("trickle", "TimeoutError"),  # each read gets a byte: the client's read timeout never fires
        ("hang", "TimeoutError"),  # the client would retry a read timeout 5 times at 5s each, per event
        ("500", "500"),
        ("garbage", "ConnectionError"),
        ("close", "ConnectionError"),
    ],
    indirect=["backend"],
)
def test_a_misbehaving_backend_costs_bounded_time_and_is_noted(
    uc: Path, backend: BadBackend, says: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The monitor's deadline is under test for trickle and hang (3 s); the other backends answer at once, so a
    # loaded machine must not turn their error into a TimeoutError (seen in CI with 3 s for every case).
    deadline = 3.0 if backend.mode in ("trickle", "hang") else 15.0
    monkeypatch.setattr(OpenLineageMonitor, "send_timeout", deadline, raising=False)
    # the client's own retries, kept short so that only the monitor's deadline is under test for trickle and hang
    with_monitor(
        uc / "shop/daily/orders", {"type": "http", "url": backend.url, "retry": {"total": 1, "backoff_factor": 0}}
    )
    started = time.monotonic()
    result = run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas")
    took = time.monotonic() - started
    assert result.status == "success"
    assert took < 25, f"the run took {took:.0f}s: a backend held it"
    assert backend.requests >= 2  # START and COMPLETE were both tried
    rec = last(uc, "orders")
    assert rec.status == "success" and rec.run_id == result.run_id
    ol = rec.extra["openlineage"]
    assert "sent" not in ol and [e.split(":")[0] for e in ol["errors"]] == ["START", "COMPLETE"]
    assert all(says in e for e in ol["errors"]), ol["errors"]
    assert "monitor openlineage could not send COMPLETE" in caplog.text
    (out,) = rec.outputs
    assert out.written is True and out.data_hash is not None
    assert data_hash_on_disk(out.location) == out.data_hash  # the data is the data the record vouches for


def test_a_backend_that_recovers_gets_the_next_event(uc: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """START timed out; the client holding that connection is dropped and COMPLETE goes through a new one."""
    monkeypatch.setattr(OpenLineageMonitor, "send_timeout", 2.0, raising=False)
    server = BadBackend("hang")
    received: list[bytes] = []

    def answer_after_the_first(conn: socket.socket, original=server._handle) -> None:
        if server.requests == 0:
            original(conn)
            return
        server.requests += 1
        received.append(read_request(conn))
        conn.sendall(b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
        conn.close()

    server._handle = answer_after_the_first  # type: ignore[method-assign]
    try:
        with_monitor(uc / "shop/daily/orders", {"type": "http", "url": server.url, "retry": {"total": 0}})
        result = run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas")
    finally:
        server.close()
    assert result.status == "success"
    ol = last(uc, "orders").extra["openlineage"]
    assert ol["sent"] == ["COMPLETE"] and [e.split(":")[0] for e in ol["errors"]] == ["START"]
    assert len(received) == 1 and b'"eventType": "COMPLETE"' in received[0].replace(b'":"', b'": "')
