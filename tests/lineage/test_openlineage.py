"""The openlineage monitor (docs/tasks-and-records.md, "OpenLineage"): a real HTTP listener on 127.0.0.1 receives
the events of real runs (pandas, and one on Spark) sent by the official client's http transport; each event is
rebuilt with the client's own model classes and must serialise back to exactly what was received; the facets
carry the record's hashes; a failing backend never fails the run and is noted in the record."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attr
import pytest
import yaml

import ubunye.lineage
from tests.lineage import s3server
from tests.lineage.usecase import example_usecase, last, write_task
from ubunye.exceptions import ConfigError
from ubunye.lineage.openlineage import PRODUCER, ROWS_FACET, RUN_FACET, _facets, dataset_name, run_uuid, schema_fields
from ubunye.lineage.record import RunRecord
from ubunye.runner import run_task

pytest.importorskip("openlineage.client")

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    datasource_dataset,
    error_message_run,
    input_statistics_input_dataset,
    job_type_job,
    output_statistics_output_dataset,
    schema_dataset,
    tags_run,
)
from openlineage.client.serde import Serde

FACETS = Path(ubunye.lineage.__file__).parent / "facets"  # shipped in the package (pyproject's package-data)


class Listener:
    """An OpenLineage HTTP backend on 127.0.0.1: keeps every event POSTed, answers ``status``."""

    def __init__(self, status: int = 201) -> None:
        self.events: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.status = status
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.paths.append(self.path)
                outer.events.append(json.loads(body))
                self.send_response(outer.status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def with_monitor(task_dir: Path, transport: dict[str, Any], **params: Any) -> None:
    """Add the openlineage monitor to a task's config.yaml."""
    path = task_dir / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["CONFIG"]["monitors"] = ["lineage", {"type": "openlineage", "params": {"transport": transport, **params}}]
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))


# --- the client's model classes, from the JSON received ---------------------------------------------------------

_KNOWN = {
    "schema": schema_dataset.SchemaDatasetFacet,
    "dataSource": datasource_dataset.DatasourceDatasetFacet,
    "inputStatistics": input_statistics_input_dataset.InputStatisticsInputDatasetFacet,
    "outputStatistics": output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet,
    "errorMessage": error_message_run.ErrorMessageRunFacet,
    "jobType": job_type_job.JobTypeJobFacet,
    "tags": tags_run.TagsRunFacet,  # the client adds its version as a run tag
}
#: Facet fields holding a list of objects: the class of the items.
_ITEMS = {
    (schema_dataset.SchemaDatasetFacet, "fields"): schema_dataset.SchemaDatasetFacetFields,
    (tags_run.TagsRunFacet, "tags"): tags_run.TagsRunFacetFields,
}


def _facet(name: str, data: dict[str, Any]) -> Any:
    cls = _KNOWN.get(name) or _facets()[name]  # an unknown facet name fails here (KeyError)
    kwargs = {}
    for f in attr.fields(cls):
        if not f.init:
            continue
        if f.name in data or f.alias in data:
            value = data.get(f.name, data.get(f.alias))
            if (cls, f.name) in _ITEMS:
                value = [_ITEMS[cls, f.name](**x) for x in value]
            kwargs[f.alias] = value
    facet = cls(**kwargs)
    assert facet._schemaURL == data["_schemaURL"] and facet._producer == data["_producer"]
    return facet


def _facets_of(data: dict[str, Any] | None) -> dict[str, Any]:
    return {k: _facet(k, v) for k, v in (data or {}).items()}


def parse(event: dict[str, Any]) -> RunEvent:
    """The event rebuilt from its JSON with the client's own classes (their validators run: the runId is a UUID,
    the eventTime an ISO time); it must serialise back to exactly the JSON received."""
    rebuilt = RunEvent(
        eventType=RunState[event["eventType"]],
        eventTime=event["eventTime"],
        run=Run(runId=event["run"]["runId"], facets=_facets_of(event["run"].get("facets"))),
        job=Job(namespace=event["job"]["namespace"], name=event["job"]["name"],
                facets=_facets_of(event["job"].get("facets"))),
        inputs=[InputDataset(d["namespace"], d["name"], facets=_facets_of(d.get("facets")),
                             inputFacets=_facets_of(d.get("inputFacets"))) for d in event.get("inputs", [])],
        outputs=[OutputDataset(d["namespace"], d["name"], facets=_facets_of(d.get("facets")),
                               outputFacets=_facets_of(d.get("outputFacets"))) for d in event.get("outputs", [])],
        producer=event["producer"],
    )  # fmt: skip
    assert Serde.to_dict(rebuilt) == event
    return rebuilt


# --- the events of real runs --------------------------------------------------------------------------------------


def check_against_record(
    events: list[dict[str, Any]], rec: RunRecord, final: str, record_path: str, namespace: str = "ubunye"
) -> None:
    assert [e["eventType"] for e in events] == ["START", final]
    parsed = [parse(e) for e in events]
    ol = rec.extra["openlineage"]
    assert ol["run_id"] == run_uuid(rec.run_id) == parsed[0].run.runId == parsed[1].run.runId
    assert uuid.UUID(ol["run_id"]).version == 7
    assert ol["sent"] == ["START", final] and "errors" not in ol
    job = events[1]["job"]
    assert (job["namespace"], job["name"]) == (namespace, f"{rec.usecase}/{rec.package}/{rec.task}")
    assert events[0]["eventTime"] == rec.started_at and events[1]["eventTime"] == rec.ended_at
    run_facet = events[1]["run"]["facets"][RUN_FACET]
    assert run_facet["run_id"] == rec.run_id and run_facet["record"] == record_path
    assert (run_facet["code_hash"], run_facet["environment_hash"]) == (rec.code_hash, rec.environment_hash)
    for side, datasets in (("inputs", rec.inputs), ("outputs", rec.outputs)):
        sent = {(d["namespace"], d["name"]): d for d in events[1][side]}
        assert len(sent) == len(datasets)
        for d in datasets:
            got = sent[dataset_name(d.location)]
            rows = got["facets"][ROWS_FACET]
            # Serde leaves out null values: a missing key is a null
            assert (rows.get("data_hash"), rows.get("schema_hash"), rows.get("hash_method")) == (
                d.data_hash, d.schema_hash, d.hash_method,
            )  # fmt: skip
            assert rows.get("hash_error") == d.hash_error
            if d.columns:
                assert set(rows["columns"]) == set(d.columns)
                assert {k: v["fingerprint"] for k, v in rows["columns"].items()} == {
                    k: c.fingerprint for k, c in d.columns.items()
                }
            if d.schema:
                fields = [(f["name"], f["type"]) for f in got["facets"]["schema"]["fields"]]
                assert fields == schema_fields(d.schema) and fields
            stats = got.get("inputFacets" if side == "inputs" else "outputFacets", {})
            key = "inputStatistics" if side == "inputs" else "outputStatistics"
            assert (stats[key]["rowCount"] if d.row_count is not None else stats.get(key)) == d.row_count


def test_a_successful_pandas_run_sends_start_and_complete(tmp_path: Path, listener: Listener) -> None:
    uc = example_usecase(tmp_path)
    assert run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas").status == "success"
    with_monitor(uc / "shop/daily/revenue", {"type": "http", "url": listener.url})
    result = run_task(uc / "shop/daily/revenue", dt="2026-12-01", engine="pandas")
    assert result.status == "success"
    assert listener.paths == ["/api/v1/lineage", "/api/v1/lineage"]
    rec = last(uc, "revenue")
    check_against_record(listener.events, rec, "COMPLETE", str(result.record_path))
    out = listener.events[1]["outputs"][0]
    assert (out["namespace"], out["name"]) == ("file", str(uc / "data/revenue/2026-12-01"))
    assert listener.events[1]["outputs"][0]["facets"][ROWS_FACET]["data_hash"].startswith("sha256:")
    assert listener.events[0]["inputs"] == [] and listener.events[0]["outputs"] == []


def test_a_failed_run_sends_fail_with_the_error(tmp_path: Path, listener: Listener) -> None:
    uc = example_usecase(tmp_path)
    task = uc / "shop/daily/revenue"  # no orders were written: the read fails
    with_monitor(task, {"type": "http", "url": listener.url})
    with pytest.raises(Exception, match="failed in read"):
        run_task(task, dt="2026-12-01", engine="pandas")
    rec = last(uc, "revenue")
    assert rec.status == "failed"
    check_against_record(
        listener.events, rec, "FAIL", str(uc / ".ubunye/lineage/shop/daily/revenue" / f"{rec.run_id}.json")
    )
    error = listener.events[1]["run"]["facets"]["errorMessage"]
    assert error["programmingLanguage"] == "python" and rec.error.message in error["message"]
    assert listener.events[1]["outputs"][0]["facets"][ROWS_FACET]["hash_error"] == rec.outputs[0].hash_error


@pytest.mark.parametrize("backend", ["refuses", "unreachable"])
def test_a_failing_backend_never_fails_the_run_and_is_noted(tmp_path: Path, backend: str, caplog) -> None:
    uc = example_usecase(tmp_path)
    if backend == "refuses":
        server = Listener(status=400)
        transport = {"type": "http", "url": server.url}
    else:
        server = Listener()
        server.close()  # nothing listens there any more
        transport = {"type": "http", "url": server.url, "retry": {"total": 0}}
    try:
        with_monitor(uc / "shop/daily/orders", transport)
        result = run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas")
    finally:
        if backend == "refuses":
            server.close()
    assert result.status == "success"
    ol = last(uc, "orders").extra["openlineage"]
    assert "sent" not in ol and [e.split(":")[0] for e in ol["errors"]] == ["START", "COMPLETE"]
    assert ("400" if backend == "refuses" else "ConnectionError") in ol["errors"][1]
    assert "monitor openlineage could not send COMPLETE" in caplog.text
    if backend == "refuses":
        assert len(server.events) == 2  # they were sent; the backend said no


def test_the_file_transport_and_a_job_namespace(tmp_path: Path) -> None:
    uc = example_usecase(tmp_path)
    log = tmp_path / "events.jsonl"
    with_monitor(uc / "shop/daily/orders", {"type": "file", "log_file_path": str(log), "append": True},
                 namespace="team-shop")  # fmt: skip
    result = run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas")
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    assert {e["job"]["namespace"] for e in events} == {"team-shop"}
    check_against_record(events, last(uc, "orders"), "COMPLETE", str(result.record_path), "team-shop")


def test_custom_facets_follow_their_shipped_json_schemas(tmp_path: Path, listener: Listener) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    uc = example_usecase(tmp_path)
    with_monitor(uc / "shop/daily/orders", {"type": "http", "url": listener.url})
    run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas")
    for name, facet in ((ROWS_FACET, listener.events[1]["outputs"][0]["facets"][ROWS_FACET]),
                        (RUN_FACET, listener.events[1]["run"]["facets"][RUN_FACET])):  # fmt: skip
        cls = _facets()[name]
        file = cls._get_schema().split("#")[0].rsplit("/", 1)[1]
        schema = json.loads((FACETS / file).read_text())
        assert schema["$id"] + "#/$defs/" + cls.__name__ == facet["_schemaURL"]
        own = schema["$defs"][cls.__name__]["allOf"][1]  # the first part is the spec's base facet (a remote $ref)
        jsonschema.validate(facet, own)
        assert facet["_producer"] == PRODUCER


def test_bad_monitor_params_are_config_errors(tmp_path: Path) -> None:
    uc = example_usecase(tmp_path)
    task = write_task(uc, "t", {"CONFIG": {"outputs": {"o": {"format": "parquet", "path": "data/o"}},
                                           "transform": {"type": "sql", "query": "SELECT 1 AS x"},
                                           "monitors": [{"type": "openlineage", "params": {"url": "x"}}]}})  # fmt: skip
    with pytest.raises(ConfigError, match=r"CONFIG\.monitors\[0\]\.params.*url"):
        run_task(task, engine="pandas")


def test_a_spark_run_sends_its_events_with_the_records_hashes(tmp_path: Path, listener: Listener, spark) -> None:
    uc = example_usecase(tmp_path)
    assert run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="spark", spark=spark).status == "success"
    with_monitor(uc / "shop/daily/revenue", {"type": "http", "url": listener.url})
    result = run_task(uc / "shop/daily/revenue", dt="2026-12-01", engine="spark", spark=spark)
    assert result.status == "success"
    rec = last(uc, "revenue")
    assert rec.backend == "spark"
    check_against_record(listener.events, rec, "COMPLETE", str(result.record_path))


def test_without_the_client_the_run_does_not_start_and_names_the_extra(tmp_path: Path) -> None:
    uc = example_usecase(tmp_path)
    with_monitor(uc / "shop/daily/orders", {"type": "console"})
    # openlineage-python made unimportable in the child (sys.modules[name] = None), as if not installed.
    script = "import sys; sys.modules['openlineage'] = None\nfrom ubunye.cli.main import main; main()"
    args = ["run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "orders", "--engine", "pandas"]
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].endswith(
        "CONFIG.monitors[1]: the openlineage monitor needs openlineage-python: pip install 'ubunye[openlineage]'"
    )
    assert not (uc / "data").exists() and not (uc / ".ubunye").exists()


def test_the_run_id_is_a_uuidv7_of_the_runs_start_and_the_same_every_time() -> None:
    import datetime as dt

    rid = "20261202T093000.123456Z-a1b2c3"
    value = uuid.UUID(run_uuid(rid))
    started = dt.datetime(2026, 12, 2, 9, 30, 0, 123456, tzinfo=dt.timezone.utc)
    assert value.int >> 80 == int(started.timestamp() * 1000)  # the first 48 bits: milliseconds since the epoch
    assert (value.version, value.variant) == (7, uuid.RFC_4122)
    assert run_uuid(rid) == str(value) != run_uuid(rid[:-1] + "4")
    assert uuid.UUID(run_uuid("v1-run-id")) == uuid.uuid5(
        uuid.UUID("6f1c1f0e-8c4e-5a57-9a55-75626e796531"), "v1-run-id"
    )


def test_dataset_names_follow_the_naming_spec_as_the_client_names_them() -> None:
    # The client's own naming classes (openlineage.client.naming.dataset) are the oracle.
    from openlineage.client.naming import dataset as naming

    cases = [
        ("s3://bucket/data/orders", naming.S3(bucket_name="bucket", object_key="data/orders")),
        ("gs://bucket/data/orders", naming.GCS(bucket_name="bucket", object_key="data/orders")),
        ("abfss://raw@acct.dfs.core.windows.net/sales", naming.ABFSS(container="raw", service="acct", path="sales")),
        ("/u/data/orders", naming.LocalFileSystem(path="/u/data/orders")),
        ("file:///u/data/orders", naming.LocalFileSystem(path="/u/data/orders")),
        ("hdfs://nn:8020/data/o", naming.HDFS(namenode_host="nn", namenode_port="8020", path="/data/o")),
    ]
    for location, expected in cases:
        assert dataset_name(location) == (expected.get_namespace(), expected.get_name()), location
    hive = naming.Hive(host="metastore", port="9083", database="db", table="orders")
    assert dataset_name("table:db.orders", "hive://metastore:9083") == (hive.get_namespace(), hive.get_name())


# --- what leaves for the backend ---------------------------------------------------------------------------------

s3_server, s3 = s3server.s3_server, s3server.s3  # the fixtures


def test_no_secret_reaches_the_backend_and_datasets_are_named_without_credentials(tmp_path: Path, s3) -> None:
    # A password in an input's URL: masked in the record, and never sent. The dataset is named by its bucket (the
    # naming spec's s3://bucket), so a run reading it with or without credentials in the URL names one dataset.
    from ubunye.lineage.redact import forget_secrets

    bucket = s3.bucket()
    source = bucket.replace("s3://", "s3://AKIAUBUNYETESTKEY01:OlSecretPw55@") + "/data/src"
    cfg = {"CONFIG": {"inputs": {"src": {"format": "parquet", "path": source}},
                      "outputs": {"out": {"format": "parquet", "path": "data/out"}},
                      "transform": {"type": "sql", "query": "SELECT * FROM src"}}}  # fmt: skip
    task = write_task(tmp_path / "uc", "leaky", cfg)
    log = tmp_path / "events.jsonl"
    with_monitor(task, {"type": "file", "log_file_path": str(log), "append": True}, namespace="ns-OlSecretPw55")
    forget_secrets()  # a run of another test may have left the server's key id among the values masked by value
    try:
        with pytest.raises(Exception, match="no such file or folder"):
            run_task(task, engine="pandas")
    finally:
        forget_secrets()
    text = log.read_text()
    assert "OlSecretPw55" not in text
    events = [json.loads(line) for line in text.splitlines()]
    assert [e["eventType"] for e in events] == ["START", "FAIL"]
    (sent,) = events[1]["inputs"]
    assert (sent["namespace"], sent["name"]) == (bucket, "data/src")
    assert sent["facets"]["dataSource"] == {**sent["facets"]["dataSource"], "name": bucket, "uri": bucket + "/data/src"}
    assert events[1]["job"]["namespace"] == "ns-***"
    message = events[1]["run"]["facets"]["errorMessage"]["message"]
    assert "no such file or folder: s3://AKIAUBUNYETESTKEY01:***@" in message, message


def test_a_local_dataset_source_is_a_file_uri(tmp_path: Path) -> None:
    uc = example_usecase(tmp_path / "a b")  # a space: the URI has it percent-encoded
    log = tmp_path / "events.jsonl"
    with_monitor(uc / "shop/daily/orders", {"type": "file", "log_file_path": str(log), "append": True})
    run_task(uc / "shop/daily/orders", dt="2026-12-01", engine="pandas")
    complete = json.loads(log.read_text().splitlines()[-1])
    rec = last(uc, "orders")
    for sent, d in zip(complete["inputs"] + complete["outputs"], rec.inputs + rec.outputs, strict=True):
        assert d.location is not None and d.location.startswith("/")
        assert (sent["namespace"], sent["name"]) == ("file", d.location)
        assert sent["facets"]["dataSource"]["uri"] == Path(d.location).as_uri()
        assert (
            sent["facets"]["dataSource"]["uri"].startswith("file:///") and "%20" in sent["facets"]["dataSource"]["uri"]
        )


def test_dataset_names_leave_credentials_out_but_keep_an_azure_container() -> None:
    assert dataset_name("s3://AKIA1:pw-1@bucket/k") == ("s3://bucket", "k")
    assert dataset_name("hdfs://u:pw-2@nn:8020/d") == ("hdfs://nn:8020", "/d")
    assert dataset_name("abfss://raw@acct.dfs.core.windows.net/p") == ("abfss://raw@acct.dfs.core.windows.net", "p")
