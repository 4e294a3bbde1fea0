"""A real S3-compatible HTTP server for the tests: moto's standalone server on 127.0.0.1, a free port, stopped by
the fixture's teardown. Clients talk to it as a user's would: s3fs with ``endpoint_url`` in storage_options, or
``AWS_ENDPOINT_URL`` in the environment (child processes, the CLI).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

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


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3]:
    """moto's ThreadedMotoServer on 127.0.0.1 (port 0: the OS picks a free one) for the whole session."""
    pytest.importorskip("s3fs")
    server_mod = pytest.importorskip("moto.server")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield S3(f"http://{host}:{port}")
    finally:
        server.stop()


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
