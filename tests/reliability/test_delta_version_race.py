"""A Delta output on an object store names the version its own commit made.

No lock spans machines there: another writer may commit between a run's commit and its reading the table back,
and "the latest version" then names the other writer's data (two records claiming one version with different
hashes, the run's own version named by none, and a later diff calling the run's intact data overwritten). The
commit carries a mark of its own; the version is the one holding it.

The run is a child process: deltalake's history read holds the GIL, which would stop this process's own servers
(the store and the proxy are Python threads here).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from tests.lineage import s3server
from tests.lineage.s3server import ACCESS_KEY, SECRET_KEY, FaultyProxy
from tests.lineage.usecase import last, write_task
from tests.optional import HAVE_POLARS
from ubunye.hashing import hash_frame

ENGINES = ["pandas", "polars"] if HAVE_POLARS else ["pandas"]
CLI = [sys.executable, "-c", "from ubunye.cli.main import main; main()"]
s3_server = s3server.s3_server  # the fixture


def _store(endpoint: str) -> dict[str, str]:
    """deltalake's options reaching the test server at ``endpoint``."""
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}  # fmt: skip


def _other_writer(table: str, options: dict[str, str]) -> None:
    """Another process appends two rows to the table, straight to the store (not through the proxy)."""
    code = textwrap.dedent(f"""
        import pyarrow as pa
        from deltalake import write_deltalake
        write_deltalake({table!r}, pa.table({{"id": [7, 8]}}), mode="append", storage_options={options!r})
    """)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("engine_name", ENGINES)
def test_a_commit_by_another_writer_right_after_the_runs_own_is_not_recorded_as_the_runs(
    s3_server, tmp_path, engine_name
):
    from deltalake import DeltaTable, write_deltalake

    upstream = _store(s3_server.endpoint)
    table = f"{s3_server.bucket()}/race"
    write_deltalake(table, pa.table({"id": [0]}), storage_options=upstream)  # version 0
    state = {"committed": False, "other": False}

    def fault(method: str, path: str) -> None:
        bare = path.split("?")[0]
        if state["committed"] and not state["other"]:  # the run's first request after its commit
            state["other"] = True
            _other_writer(table, upstream)
        elif method == "PUT" and "/_delta_log/" in bare and bare.endswith(".json"):
            state["committed"] = True
        return None

    uc = tmp_path / "uc"
    with FaultyProxy(s3_server.endpoint, fault) as proxy:
        out = {"format": "delta", "path": table, "mode": "overwrite", "storage_options": _store(proxy.endpoint)}
        config = {
            "ENGINE": {"backend": engine_name},
            "CONFIG": {
                "inputs": {},
                "outputs": {"o": out},
                "transform": {"type": "sql", "query": "SELECT CAST(1 AS BIGINT) AS id UNION ALL SELECT 2"},
                "monitors": ["lineage"],
            },
        }
        write_task(uc, "race", config)
        run = [*CLI, "run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "race"]
        done = subprocess.run(run, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    assert state["other"], "the other writer never ran: the proxy saw no commit of the run"
    versions = {v: DeltaTable(table, version=v, storage_options=upstream).to_pyarrow_table() for v in range(3)}
    assert DeltaTable(table, storage_options=upstream).version() == 2  # the run's commit, then the other's
    assert sorted(versions[1].column("id").to_pylist()) == [1, 2]  # version 1 is the run's overwrite
    output = last(uc, "race").outputs[0]
    assert output.version == 1, f"the record names version {output.version}, the run committed version 1"
    assert output.data_hash == hash_frame(versions[1]).data_hash  # the record matches the version it names
