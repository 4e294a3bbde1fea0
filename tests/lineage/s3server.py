"""A real S3-compatible HTTP server for the tests: moto's standalone server on 127.0.0.1, a free port, stopped by
the fixture's teardown. Clients talk to it as a user's would: s3fs with ``endpoint_url`` in storage_options, or
``AWS_ENDPOINT_URL`` in the environment (child processes, the CLI).

:class:`FaultyProxy` sits in front of it on 127.0.0.1 and breaks chosen requests the way a network or a store
does: a reply lost after the store applied the request, a reply the store would give (a 409, a 412).
"""

from __future__ import annotations

import http.client
import os
import socket
import socketserver
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

import pytest

#: Credentials of the test server only (moto accepts any): distinctive, so a test can look for them in output.
ACCESS_KEY = "AKIAUBUNYETESTKEY01"
SECRET_KEY = "ubunye-test-secret-Zq8Xr2Vw9"


@dataclass(frozen=True)
class S3:
    """A running server and the environment a child process needs to reach it."""

    endpoint: str

    @property
    def env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    @property
    def options(self) -> dict[str, object]:
        """storage_options reaching the server without any environment."""
        return {"endpoint_url": self.endpoint, "key": ACCESS_KEY, "secret": SECRET_KEY}

    def bucket(self) -> str:
        """A new, empty bucket; its ``s3://`` URL."""
        import s3fs

        name = f"ubunye-{uuid.uuid4().hex[:12]}"
        s3fs.S3FileSystem(**self.options).mkdir(name)
        return f"s3://{name}"

    def polars_options(self) -> dict[str, object]:
        """storage_options as polars takes them (object_store's names), reaching the server without any environment."""
        return {
            "aws_endpoint_url": self.endpoint,
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_region": "us-east-1",
            "aws_allow_http": "true",
        }

    def upload(self, folder: Path) -> str:
        """Every file under ``folder``, the same bytes, into a new bucket; the folder's URL."""
        import s3fs

        bucket = self.bucket()
        fs = s3fs.S3FileSystem(**self.options)
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                fs.pipe(
                    f"{bucket[len('s3://') :]}/{folder.name}/{file.relative_to(folder).as_posix()}", file.read_bytes()
                )
        return f"{bucket}/{folder.name}"


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3]:
    """moto's server in a child process on 127.0.0.1 for the whole session, stopped at its end.

    A child, not a thread of this process: deltalake's object store (polars' listing with storage_options, a Delta
    table's history) waits for a reply holding the GIL, and a server thread here would then never answer."""
    pytest.importorskip("s3fs")
    pytest.importorskip("moto.server", reason="moto[server] is not installed in this venv")
    with socket.socket() as probe:  # a free port: moto's server takes one on its command line
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    child = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if child.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto's server did not start on 127.0.0.1:{port}") from None
                time.sleep(0.1)
        yield S3(f"http://127.0.0.1:{port}")
    finally:
        child.terminate()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


@pytest.fixture
def s3(s3_server: S3, monkeypatch: pytest.MonkeyPatch) -> S3:
    """The server, with this process's environment pointing at it (as a user's shell would)."""
    for k, v in s3_server.env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    return s3_server


def child_env(s3: S3, **extra: str) -> dict[str, str]:
    """The environment of a child process that reaches the server."""
    return {**os.environ, **s3.env, **extra}


@dataclass(frozen=True)
class Fault:
    """What :class:`FaultyProxy` does with one request: ``drop_reply`` forwards it to the server and then closes
    the client's connection before relaying a byte of the reply (the request was applied, its reply lost);
    ``reply`` answers ``(status, body)`` itself without forwarding (what a store would answer)."""

    drop_reply: bool = False
    reply: tuple[int, bytes] | None = None


@dataclass
class Seen:
    """One request through the proxy: method, path (with the query), the server's status (None: not forwarded),
    and the fault applied."""

    method: str
    path: str
    status: int | None
    fault: Fault | None


@dataclass
class FaultyProxy:
    """An HTTP proxy on 127.0.0.1 (a free port) in front of ``upstream``: every request is forwarded as it came
    (the same headers, so signatures hold) and its reply relayed, except where ``fault(method, path)`` returns a
    :class:`Fault`. A context manager: the server stops on exit. ``seen`` lists the requests in order."""

    upstream: str
    fault: Callable[[str, str], Fault | None]
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        proxy = self
        target = urlsplit(self.upstream)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, and Expect: 100-continue answered

            def log_message(self, *_: object) -> None:
                pass

            def _body(self) -> bytes:
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():  # forwarded raw, still chunked
                    raw = b""
                    while True:
                        line = self.rfile.readline()
                        raw += line
                        if int(line.split(b";")[0].strip(), 16) == 0:
                            while (trailer := self.rfile.readline()) not in (b"\r\n", b"\n", b""):
                                raw += trailer
                            return raw + b"\r\n"
                        raw += self.rfile.read(int(line.split(b";")[0].strip(), 16) + 2)
                size = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(size) if size else b""

            def _answer(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
                self.send_response_only(status)
                for k, v in headers:
                    if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(k, v)
                length = dict((k.lower(), v) for k, v in headers).get("content-length", "0")
                self.send_header("Content-Length", length if self.command == "HEAD" else str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _any(self) -> None:
                body = self._body()
                fault = proxy.fault(self.command, self.path)
                if fault is not None and fault.reply is not None:
                    proxy.seen.append(Seen(self.command, self.path, None, fault))
                    self._answer(fault.reply[0], [("Content-Type", "application/xml")], fault.reply[1])
                    return
                conn = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=60)
                try:
                    conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                    for k, v in self.headers.items():
                        if k.lower() != "expect":  # answered here already
                            conn.putheader(k, v)
                    conn.endheaders(body or None)
                    reply = conn.getresponse()
                    data = reply.read()
                finally:
                    conn.close()
                proxy.seen.append(Seen(self.command, self.path, reply.status, fault))
                if fault is not None and fault.drop_reply:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)  # the request was applied; its reply is lost
                    return
                self._answer(reply.status, reply.getheaders(), data)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _any

        class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="faulty-proxy", daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def options(self) -> dict[str, object]:
        """storage_options reaching the server through the proxy."""
        return {"endpoint_url": self.endpoint, "key": ACCESS_KEY, "secret": SECRET_KEY}

    def __enter__(self) -> FaultyProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=30)
