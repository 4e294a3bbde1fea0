"""`make bench`, records section: `ubunye lineage list -n 10` on a store of 10,000 records in an object store
(moto's S3 server on 127.0.0.1, reached through s3fs), one run, printed; never asserted in tests.

The store is listed once (keys only) and only the 10 newest records are read, so the time is the listing's
(10 pages of 1,000 keys) plus 10 reads, not 10,000 reads.

Run: python -m benchmarks.records [--records N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import sys
import time
import uuid
from typing import Any


def _record(i: int, at: dt.datetime) -> tuple[str, bytes]:
    from ubunye.lineage.record import DatasetRecord, RunRecord

    run_id = at.strftime("%Y%m%dT%H%M%S.%fZ") + f"-{i:06x}"
    out = DatasetRecord("revenue", "parquet", "s3://data/revenue", 4, "sha256:" + "5c" * 32, "sha256:" + "da" * 32,
                        "rows-v1", schema='struct<"region":string,"revenue_cents":int64>', mode="overwrite",
                        written=True)  # fmt: skip
    when = at.isoformat().replace("+00:00", "Z")
    record = RunRecord(run_id=run_id, usecase="shop", package="daily", task="revenue", status="success",
                       started_at=when, ended_at=when, duration_seconds=1.5, backend="pandas", outputs=[out],
                       code_hash="sha256:" + "c0" * 32)  # fmt: skip
    key = f"shop/daily/revenue/{run_id}.json"
    return key, (json.dumps(record.to_dict(), indent=2) + "\n").encode()


def _fill(fs: Any, objects: dict[str, bytes]) -> None:
    """Setup only: the objects go straight into the server's store (it runs in this process), since 10,000 PUTs
    to moto take minutes; the timings below all go over HTTP through s3fs. Falls back to PUTs."""
    try:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        backend = s3_backends[DEFAULT_ACCOUNT_ID]["global"]
        for path, data in objects.items():
            bucket, key = path.split("/", 1)
            backend.put_object(bucket, key, data)
    except (ImportError, KeyError, AttributeError, TypeError):
        fs.pipe(objects)
    fs.invalidate_cache()


def records_section(n: int) -> list[str]:
    """The timing lines of the records section."""
    import s3fs
    from moto.server import ThreadedMotoServer
    from typer.testing import CliRunner

    from ubunye.cli.main import app
    from ubunye.lineage.store import RecordStore

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    saved = {k: os.environ.get(k) for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    try:
        host, port = server.get_host_and_port()
        os.environ.update(
            AWS_ENDPOINT_URL=f"http://{host}:{port}", AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench-secret"
        )
        fs = s3fs.S3FileSystem(skip_instance_cache=True)
        bucket = f"ubunye-bench-{uuid.uuid4().hex[:8]}"
        fs.mkdir(bucket)
        url = f"s3://{bucket}/records"
        start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        objects: dict[str, Any] = {}
        for i in range(n):
            key, data = _record(i, start + dt.timedelta(minutes=i))
            objects[f"{bucket}/records/{key}"] = data
        t0 = time.perf_counter()
        _fill(fs, objects)
        filled = time.perf_counter() - t0
        runner = CliRunner()
        t0 = time.perf_counter()
        listed = runner.invoke(app, ["lineage", "list", "--records", url, "-n", "10", "--json"])
        list_n = time.perf_counter() - t0
        if listed.exit_code != 0 or len(json.loads(listed.stdout)) != 10:
            raise RuntimeError(f"lineage list failed: {listed.output}")
        t0 = time.perf_counter()
        ids = RecordStore(records=url).run_ids()
        keys = time.perf_counter() - t0
        t0 = time.perf_counter()
        shown = runner.invoke(app, ["lineage", "show", "latest", "--records", url, "-t", "revenue", "--json"])
        show = time.perf_counter() - t0
        assert shown.exit_code == 0 and len(ids) == n
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()
    return [
        f"### Records in an object store: {n:,} records on a local S3 server (moto, 127.0.0.1, through s3fs)",
        "",
        "| what | seconds (one run) |",
        "|---|---:|",
        f"| `ubunye lineage list -n 10` (lists the keys, reads 10 records) | {list_n:.2f} |",
        f"| listing the keys alone (`RecordStore.run_ids`) | {keys:.2f} |",
        f"| `ubunye lineage show latest` (lists the keys, reads 1 record) | {show:.2f} |",
        f"| storing the {n:,} records in the server (setup only, not over HTTP) | {filled:.2f} |",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    args = parser.parse_args(argv)
    print("\n".join(records_section(args.records)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
