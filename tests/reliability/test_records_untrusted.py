"""Readers never trust a file: every malformed record is one line naming its path and field, never a traceback,
and never hides the other records.

Each case plants a file among the checked-in fixture records (a real store, eleven good runs) and runs the real
CLI: ``lineage list`` still lists the eleven and names the bad file on stderr (exit 0); ``show``, ``trace`` and
``compare`` of the bad file print one ``error:`` line (exit 2) and nothing on stdout; no file is changed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.lineage.fixtures import RECORDS, RUNS, install
from ubunye.cli.main import app
from ubunye.exceptions import RecordError
from ubunye.lineage.record import DatasetRecord, ErrorInfo, MalformedRecord, RunRecord
from ubunye.lineage.store import MAX_DEPTH, MAX_RECORD_BYTES, RecordStore, load_record

runner = CliRunner()
BAD_ID = "20261203T000000.000000Z-bad001"
GOOD_IDS = set(RUNS.values())


@pytest.fixture
def uc(tmp_path: Path) -> Path:
    """A usecase dir whose store holds the eleven fixture records."""
    install(tmp_path)
    return tmp_path


def invoke(*args: Any):
    return runner.invoke(app, [str(a) for a in args])


def fixture(name: str = "customers-bug") -> dict[str, Any]:
    """A real record (failed, with inputs, outputs, timings, expectations and an error) as a JSON object."""
    return json.loads((RECORDS / f"{name}.json").read_text())


def folder(uc: Path, task: str = "customers") -> Path:
    return uc / ".ubunye/lineage/shop/daily" / task


def plant(uc: Path, content: bytes | str | dict[str, Any], name: str = BAD_ID, task: str = "customers") -> Path:
    """Write a file among the records of shop/daily/<task>; a dict is written as JSON."""
    path = folder(uc, task) / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, dict):
        content = json.dumps(content, indent=2)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def snapshot(uc: Path) -> dict[str, str]:
    """Every file of the store and its sha256 (a reader must change none)."""
    root = uc / ".ubunye"
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def set_at(data: Any, where: str, value: Any) -> None:
    """Set the field at ``outputs[0].row_count`` (a field path as the errors name it) to ``value``."""
    steps = re.findall(r"[^.\[\]]+|\[\d+\]", where)
    for step in steps[:-1]:
        data = data[int(step[1:-1])] if step.startswith("[") else data[step]
    last = steps[-1]
    if last.startswith("["):
        data[int(last[1:-1])] = value
    else:
        data[last] = value


def assert_listed_with_one_problem(uc: Path, line: str) -> None:
    """``list`` (JSON and table) shows the eleven good runs, and ``line`` once on stderr; exit 0."""
    result = invoke("lineage", "list", "-d", uc, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {r["run_id"] for r in rows if r["problem"] is None} == GOOD_IDS
    assert [r["problem"] for r in rows if r["problem"]] == [line]
    assert result.stderr.splitlines() == [f"warning: unreadable run record {line}"]
    table = invoke("lineage", "list", "-d", uc)
    assert table.exit_code == 0 and table.stderr.splitlines() == [f"warning: unreadable run record {line}"]
    first_cells = [row.split("│")[1].strip() for row in table.stdout.splitlines() if row.startswith("│")]
    assert set(first_cells) >= {r["short_id"] for r in rows if r["run_id"] in GOOD_IDS}


def assert_refused(uc: Path, ref: str, line: str, *args: Any, other: str = RUNS["customers-good"]) -> None:
    """show, trace (plain and --json) and compare against a good run: one error line, exit 2, nothing else."""
    for argv in (("show", ref), ("trace", ref), ("show", ref, "--json"), ("trace", ref, "--json"),
                 ("compare", other, ref), ("compare", ref, other, "--json")):  # fmt: skip
        result = invoke("lineage", *argv, "-d", uc, *args)
        assert result.exit_code == 2, (argv, result.output)
        assert result.stderr.splitlines() == [f"error: {line}"], argv
        assert result.stdout == "", argv


def refused_everywhere(uc: Path, path: Path, line: str) -> None:
    before = snapshot(uc)
    assert_listed_with_one_problem(uc, line)
    assert_refused(uc, path.stem, line)
    assert_refused(uc, str(path), line)  # a record file named directly
    with pytest.raises(RecordError) as err:
        load_record(path)
    assert str(err.value) == line
    assert snapshot(uc) == before


# --- every field of the wrong type -----------------------------------------------------------------------------------

WRONG_TYPES = [
    ("status", None, "expected str, got null"),
    ("status", 1, "expected str, got int"),
    ("started_at", 20261202, "expected str or null, got int"),
    ("ended_at", ["2026"], "expected str or null, got list"),
    ("duration_seconds", "0.2", "expected float or null, got str"),
    ("duration_seconds", True, "expected float or null, got bool"),
    ("duration_seconds", -1.5, "expected a number >= 0, got -1.5"),
    ("duration_seconds", 10**400, "expected float or null, got an int too large for a float"),
    ("ubunye_version", 7, "expected str or null, got int"),
    ("backend", {"name": "pandas"}, "expected str or null, got dict"),
    ("entry_point", False, "expected str or null, got bool"),
    ("usecase_dir", 1.5, "expected str or null, got float"),
    ("model", [], "expected str or null, got list"),
    ("task_version", 1, "expected str or null, got int"),
    ("template_vars", ["dt"], "expected dict, got list"),
    ("template_vars.dt", 20261202, "expected str or null, got int"),
    ("config_hash", 12, "expected str or null, got int"),
    ("config", "CONFIG", "expected dict or null, got str"),
    ("code_hash", True, "expected str or null, got bool"),
    ("environment", None, "expected dict, got null"),
    ("environment.packages", ["pandas"], "expected dict, got list"),
    ("environment.packages.pandas", 3.1, "expected str or null, got float"),
    ("environment_hash", {}, "expected str or null, got dict"),
    ("hash_inputs", "false", "expected bool or null, got str"),
    ("hash_inputs", 0, "expected bool or null, got int"),
    ("inputs", {"orders": {}}, "expected list, got dict"),
    ("inputs[0]", "orders", "expected dict, got str"),
    ("inputs[0].name", None, "expected str, got null"),
    ("inputs[0].data_hash", 12, "expected str or null, got int"),
    ("outputs", "customers", "expected list, got str"),
    ("outputs[0].row_count", "59", "expected int or null, got str"),
    ("outputs[0].row_count", 59.0, "expected int or null, got float"),
    ("outputs[0].row_count", True, "expected int or null, got bool"),
    ("outputs[0].row_count", -1, "expected a number >= 0, got -1"),
    ("outputs[0].format", 1, "expected str or null, got int"),
    ("outputs[0].location", ["/x"], "expected str or null, got list"),
    ("outputs[0].schema_hash", False, "expected str or null, got bool"),
    ("outputs[0].data_hash", "not-a-hash", "expected 'sha256:' and 64 lowercase hex digits, got 'not-a-hash'"),
    ("outputs[0].data_hash", "", "expected 'sha256:' and 64 lowercase hex digits, got ''"),
    ("outputs[0].data_hash", "sha256:zz", "expected 'sha256:' and 64 lowercase hex digits, got 'sha256:zz'"),
    ("outputs[0].schema_hash", "SHA256:00", "expected 'sha256:' and 64 lowercase hex digits, got 'SHA256:00'"),
    ("outputs[0].hash_method", 1, "expected str or null, got int"),
    ("outputs[0].hash_error", {}, "expected str or null, got dict"),
    ("outputs[0].schema", ["customer"], "expected str or null, got list"),
    ("outputs[0].mode", 0, "expected str or null, got int"),
    ("outputs[0].version", "3", "expected int or null, got str"),
    ("outputs[0].timestamp", 0, "expected str or null, got int"),
    ("outputs[0].written", "no", "expected bool or null, got str"),
    ("outputs[0].written", 0, "expected bool or null, got int"),
    ("outputs[0].hash_mode", 1, "expected str or null, got int"),
    ("outputs[0].hash_mode", "partial", "expected one of incremental, full, got 'partial'"),
    ("outputs[0].hash_reason", ["why"], "expected str or null, got list"),
    ("timings", {}, "expected list, got dict"),
    ("timings[0].stage", None, "expected str, got null"),
    ("timings[0].name", 1, "expected str or null, got int"),
    ("timings[0].seconds", "0.1", "expected float, got str"),
    ("timings[0].seconds", None, "expected float, got null"),
    ("expectations[0]", [], "expected dict, got list"),
    ("expectations[0].target", 1, "expected str, got int"),
    ("expectations[0].rule", None, "expected str, got null"),
    ("expectations[0].passed", "true", "expected bool, got str"),
    ("expectations[0].passed", 1, "expected bool, got int"),
    ("expectations[0].column", 1, "expected str or null, got int"),
    ("expectations[0].severity", None, "expected str, got null"),
    ("expectations[0].error", False, "expected str or null, got bool"),
    ("error", "boom", "expected dict or null, got str"),  # a v1 record may say so; a v2 one may not
    ("error.type", None, "expected str, got null"),
    ("error.message", 42, "expected str, got int"),
    ("error.stage", [], "expected str, got list"),
    ("error.name", 1, "expected str or null, got int"),
    ("process", "pid 12", "expected dict or null, got str"),
    ("process.host", None, "expected str, got null"),
    ("process.pid", "12", "expected int, got str"),
    ("process.pid", 0, "expected a number >= 1, got 0"),
    ("process.pid", -1, "expected a number >= 1, got -1"),
    ("process.started", 12, "expected str or null, got int"),
    ("status", "done", "expected one of running, success, failed, got 'done'"),
    ("started_at", "yesterday", "expected an ISO 8601 UTC time, got 'yesterday'"),
    ("ended_at", "2026-12-01T10:00:00", "expected an ISO 8601 UTC time, got '2026-12-01T10:00:00'"),
    ("record_version", "2", "expected an int >= 1 (a record version), got '2'"),
    ("record_version", True, "expected an int >= 1 (a record version), got bool"),
    ("record_version", 2.0, "expected an int >= 1 (a record version), got float"),
    ("record_version", 0, "expected an int >= 1 (a record version), got 0"),
]


@pytest.mark.parametrize(("where", "value", "reason"), WRONG_TYPES, ids=[f"{w}={v!r}"[:60] for w, v, _ in WRONG_TYPES])
def test_every_field_of_the_wrong_type_is_named(uc, where, value, reason):
    data = fixture()
    data["run_id"] = BAD_ID
    data["process"] = {"host": "build-7", "pid": 12, "started": "1@b"}
    set_at(data, where, value)
    path = plant(uc, data)
    refused_everywhere(uc, path, f"{path}: {where}: {reason}")


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("outputs[0].name", "missing"),
        ("timings[0].seconds", "missing"),
        ("expectations[0].passed", "missing"),
        ("error.message", "missing"),
        ("process.pid", "missing"),
        ("status", "missing"),
        ("run_id", "missing: not a run record"),
    ],
)
def test_a_required_field_missing_is_named(uc, where, reason):
    data = fixture()
    data["run_id"] = BAD_ID
    data["process"] = {"host": "build-7", "pid": 12, "started": None}
    steps = re.findall(r"[^.\[\]]+|\[\d+\]", where)
    target = data
    for step in steps[:-1]:
        target = target[int(step[1:-1])] if step.startswith("[") else target[step]
    del target[steps[-1]]
    path = plant(uc, data)
    refused_everywhere(uc, path, f"{path}: {where}: {reason}")


def test_a_newer_record_version_says_to_upgrade(uc):
    path = plant(uc, {**fixture(), "run_id": BAD_ID, "record_version": 3})
    refused_everywhere(uc, path, f"{path}: record_version 3 is newer than this ubunye reads (2); upgrade ubunye")


def test_v1_fields_are_named_as_the_file_spells_them(uc):
    v1 = {**fixture("revenue-v1"), "run_id": BAD_ID, "duration_sec": "41.2"}
    path = plant(uc, v1, task="revenue")
    refused_everywhere(uc, path, f"{path}: duration_sec: expected float or null, got str")


# --- files that are not JSON, or not plain JSON ------------------------------------------------------------------


def test_empty_file(uc):
    path = plant(uc, b"")
    refused_everywhere(uc, path, f"{path}: corrupt run record (empty file)")


def test_truncated_json_names_the_place_it_stops(uc):
    text = (RECORDS / "customers-bug.json").read_text().replace(RUNS["customers-bug"], BAD_ID)
    cut = text[: len(text) // 2]
    with pytest.raises(json.JSONDecodeError) as err:
        json.loads(cut)
    path = plant(uc, cut)
    refused_everywhere(uc, path, f"{path}: corrupt run record (not valid JSON: {err.value})")


def test_binary_garbage(uc):
    path = plant(uc, bytes(range(256)) * 8)
    refused_everywhere(uc, path, f"{path}: corrupt run record (not UTF-8: byte 0x80 at offset 128)")


def test_latin1_bytes_inside_an_otherwise_good_record(uc):
    text = json.dumps({**fixture(), "run_id": BAD_ID}).encode("utf-8")
    at = text.index(b"/tmp/ubunye-fixtures")
    path = plant(uc, text[:at] + b"caf\xe9/" + text[at:])
    refused_everywhere(uc, path, f"{path}: corrupt run record (not UTF-8: byte 0xe9 at offset {at + 3})")


def test_a_json_value_that_is_not_an_object(uc):
    path = plant(uc, "[1, 2, 3]")
    refused_everywhere(uc, path, f"{path}: not a run record (expected a JSON object, got list)")


def test_nesting_too_deep_for_the_parser(uc):
    depth = 200_000  # far past Python's recursion limit: json raises RecursionError, which must not escape
    path = plant(uc, '{"run_id": "x", "config": ' + "[" * depth + "]" * depth + "}")
    refused_everywhere(uc, path, f"{path}: corrupt run record (nested deeper than {MAX_DEPTH} levels)")


def test_nesting_deeper_than_the_bound_names_the_field(uc):
    data = {**fixture(), "run_id": BAD_ID}
    deep: Any = []
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    data["config"] = {"CONFIG": {"transform": {"params": deep}}}
    path = plant(uc, data)
    # depth 1 is the record; config 2, CONFIG 3, transform 4, params 5, then one level per [0]
    where = "config.CONFIG.transform.params" + "[0]" * (MAX_DEPTH - 4)
    refused_everywhere(uc, path, f"{path}: {where}: nested deeper than {MAX_DEPTH} levels")


@pytest.mark.parametrize(
    ("where", "literal", "reason"),
    [
        ("duration_seconds", "NaN", "expected float or null, got NaN"),
        ("duration_seconds", "Infinity", "expected float or null, got Infinity"),
        ("timings[0].seconds", "-Infinity", "expected float, got -Infinity"),
    ],
)
def test_nan_and_infinity_where_a_number_is_expected(uc, where, literal, reason):
    data = {**fixture(), "run_id": BAD_ID}
    set_at(data, where, "@@NUMBER@@")
    path = plant(uc, json.dumps(data).replace('"@@NUMBER@@"', literal))
    refused_everywhere(uc, path, f"{path}: {where}: {reason}")


def test_nan_in_free_form_values_loads_and_json_output_stays_valid(uc):
    data = {**fixture(), "run_id": BAD_ID}
    data["expectations"][0]["observed"] = "@@NAN@@"
    data["config"]["CONFIG"]["transform"] = {"type": "task", "params": {"threshold": "@@INF@@"}}
    plant(uc, json.dumps(data).replace('"@@NAN@@"', "NaN").replace('"@@INF@@"', "Infinity"))

    def strict(text: str) -> Any:
        return json.loads(text, parse_constant=lambda c: pytest.fail(f"--json printed {c}"))

    for command in ("show", "trace"):
        result = invoke("lineage", command, BAD_ID, "-d", uc, "--json")
        assert result.exit_code == 0, result.output
        out = strict(result.stdout)
        assert out["expectations"][0]["observed"] == "NaN"
        assert out["config"]["CONFIG"]["transform"]["params"]["threshold"] == "Infinity"
    listed = invoke("lineage", "list", "-d", uc, "--json")
    assert BAD_ID in {r["run_id"] for r in strict(listed.stdout)} and listed.stderr == ""
    compared = invoke("lineage", "compare", RUNS["customers-bug"], BAD_ID, "-d", uc, "--json")
    # run A (customers-bug) failed: the same rows, not "same data" (exit 1)
    assert compared.exit_code == 1 and strict(compared.stdout)["verdict"] == "same"
    shown = invoke("lineage", "trace", BAD_ID, "-d", uc)
    assert shown.exit_code == 0 and '"threshold": Infinity' in shown.stdout


@pytest.mark.parametrize(
    ("text", "where", "key"),
    [
        ('{"run_id": "%s", "status": "failed", "status": "success"}', None, "status"),
        (
            '{"run_id": "%s", "status": "failed", "outputs": [{"name": "o", "data_hash": "a", "data_hash": "b"}]}',
            "outputs[0]",
            "data_hash",
        ),
    ],
)
def test_a_key_given_twice_is_refused(uc, text, where, key):
    path = plant(uc, text % BAD_ID)
    refused_everywhere(uc, path, f"{path}: " + (f"{where}: " if where else "") + f"duplicate key {key!r}")


def test_a_lone_surrogate(uc):
    data = {**fixture(), "run_id": BAD_ID}
    data["outputs"][0]["location"] = "@@S@@"
    path = plant(uc, json.dumps(data).replace('"@@S@@"', '"data/\\ud800x"'))
    refused_everywhere(uc, path, f"{path}: outputs[0].location: text holds a lone surrogate (not a character)")


def test_an_integer_too_long_for_python(uc):
    data = {**fixture(), "run_id": BAD_ID}
    data["outputs"][0]["row_count"] = "@@N@@"
    path = plant(uc, json.dumps(data).replace('"@@N@@"', "9" * 5000))
    with pytest.raises(ValueError) as err:
        json.loads("9" * 5000)
    refused_everywhere(uc, path, f"{path}: corrupt run record (not valid JSON: {err.value})")


@pytest.mark.parametrize("size", [MAX_RECORD_BYTES + 1, 100 * 2**20])
def test_a_huge_file_is_refused_before_it_is_read(uc, size):
    path = folder(uc) / f"{BAD_ID}.json"
    with path.open("wb") as fh:  # sparse: nothing of it is on disk, nothing of it may be read
        fh.truncate(size)
    refused_everywhere(
        uc, path, f"{path}: not read: {size:,} bytes, more than a run record may have ({MAX_RECORD_BYTES // 2**20} MiB)"
    )


def test_a_fifo_named_like_a_record_does_not_hang_the_reader(uc):
    path = folder(uc) / f"{BAD_ID}.json"
    os.mkfifo(path)
    line = f"{path}: not a run record (not a regular file)"
    assert_listed_with_one_problem(uc, line)
    result = invoke("lineage", "show", BAD_ID, "-d", uc)
    assert (result.exit_code, result.stderr.splitlines()) == (2, [f"error: {line}"])


# --- identity ------------------------------------------------------------------------------------------------------


def test_a_record_copied_into_another_tasks_folder(uc):
    good = RUNS["revenue-a"]
    source = uc / f".ubunye/lineage/shop/daily/revenue/{good}.json"
    path = folder(uc, "orders") / f"{good}.json"
    path.write_bytes(source.read_bytes())
    line = f"{path}: task: 'revenue' does not match the folder it sits in ('orders')"
    assert_listed_with_one_problem(uc, line)
    assert_refused(uc, good, line, "-t", "orders", other=RUNS["orders-1201"])
    shown = invoke("lineage", "show", good, "-d", uc, "-t", "revenue", "--json")  # the original is still itself
    assert shown.exit_code == 0 and json.loads(shown.stdout)["path"] == str(source)


def test_a_record_under_another_file_name(uc):
    data = fixture()  # run_id customers-bug's, file named BAD_ID
    path = plant(uc, data)
    line = f"{path}: run_id: {data['run_id']!r} does not match the file name it sits in ({BAD_ID!r})"
    refused_everywhere(uc, path, line)


@pytest.mark.parametrize(
    ("where", "value", "why"),
    [
        ("usecase", "../../etc", "starts with '.'"),
        ("package", "a/b", "contains '/'"),
        ("task", "x\\y", "contains '\\\\'"),
        ("run_id", "", "empty"),
        ("task", "revenue\u202egnp.exe", "contains U+202E"),  # a bidi override: the terminal would reorder it
        ("usecase", "shop\x1b[2J", "contains U+001B"),
        ("package", "d" * 251, "longer than 250 bytes"),
    ],
)
def test_identity_fields_must_be_plain_names(uc, where, value, why):
    data = {**fixture(), "run_id": BAD_ID, where: value}
    path = plant(uc, data)
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    refused_everywhere(uc, path, f"{path}: {where}: not a plain name ({why}): {shown}")


# --- several at once ------------------------------------------------------------------------------------------------


def test_many_malformed_records_never_hide_the_good_ones(uc):
    bad = {
        "a-empty": b"",
        "b-garbage": b"\xff\xfe\x00garbage",
        "c-list": b"[]",
        "d-type": json.dumps({**fixture(), "run_id": "d-type", "outputs": [{"name": 1}]}).encode(),
    }
    paths = {name: plant(uc, content, name=name) for name, content in bad.items()}
    result = invoke("lineage", "list", "-d", uc, "--json")
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert {r["run_id"] for r in rows if not r["problem"]} == GOOD_IDS
    problems = {r["run_id"]: (r["field"], r["state"]) for r in rows if r["problem"]}
    assert problems == {"a-empty": (None, "unreadable"), "b-garbage": (None, "unreadable"),
                        "c-list": (None, "unreadable"), "d-type": ("outputs[0].name", "unreadable")}  # fmt: skip
    assert result.stderr.splitlines() == [
        f"warning: unreadable run record {paths['d-type']}: outputs[0].name: expected str, got int",
        f"warning: unreadable run record {paths['c-list']}: not a run record (expected a JSON object, got list)",
        f"warning: unreadable run record {paths['b-garbage']}: corrupt run record (not UTF-8: byte 0xff at offset 0)",
        f"warning: unreadable run record {paths['a-empty']}: corrupt run record (empty file)",
    ]
    store = RecordStore(uc)
    assert {r.run_id for r in store.records()} == GOOD_IDS
    latest = invoke("lineage", "compare", "latest~1", "latest", "-d", uc, "-t", "revenue")
    assert latest.exit_code == 1 and latest.stdout.startswith("data changed")


# --- markup is never read from data ------------------------------------------------------------------------------


AB = "sha256:" + "ab" * 32  # a well-formed digest (markup in a hash makes the record malformed now)


def test_markup_in_names_and_messages_prints_literally(uc):
    task, name = "[bold red]t", "[link=https://evil.example/x]out"
    message = "boom [/] [red]not red[/red] :warning: \x1b[2J [link=https://evil.example/]click[/link]"
    store = RecordStore(uc)
    for run_id, status in (("20261203T010000Z-mk1", "success"), ("20261203T020000Z-mk2", "failed")):
        started = f"2026-12-03T{run_id[9:11]}:00:00Z"
        store.write(RunRecord(
            run_id=run_id, usecase="[u]", package="[p]", task=task, status=status, started_at=started,
            outputs=[DatasetRecord(name, location="data/[/bold]x", data_hash=AB, hash_method="[i]m")],
            error=ErrorInfo("[b]Err", message, "[blink]write", "[/]name") if status == "failed" else None,
        ))  # fmt: skip
    shown_message = message.replace("\x1b", "\\x1b")
    where = ("-u", "[u]", "-p", "[p]", "-t", task)
    table = invoke("lineage", "list", "-d", uc, *where)
    assert table.exit_code == 0, table.output
    assert "[u]/[p]/[bold red]t" in table.stdout and "[link=https://evil.example/x]out=-" in table.stdout
    assert "[i]m" in table.stdout
    for command in ("show", "trace"):
        out = invoke("lineage", command, "latest", "-d", uc, *where)
        assert out.exit_code == 0, out.output
        assert f"error in [blink]write ([/]name): [b]Err: {shown_message}" in out.stdout
        assert "[link=https://evil.example/x]out" in out.stdout and "data/[/bold]x" in out.stdout
        assert "\x1b" not in out.stdout
    compared = invoke("lineage", "compare", "latest~1", "latest", "-d", uc, *where)
    assert compared.exit_code == 1, compared.output  # run B failed: the same rows computed, not "same data"
    assert f"note: run B failed in [blink]write: {shown_message}" in compared.stdout
    assert "[u]/[p]/[bold red]t" in compared.stdout and "\x1b" not in compared.stdout


def test_markup_in_a_problem_line_prints_literally(uc):
    path = plant(uc, {**fixture(), "run_id": "[bold]x", "status": "[red]done"}, name="[bold]x")
    line = f"{path}: status: expected one of running, success, failed, got '[red]done'"
    assert_listed_with_one_problem(uc, line)
    table = invoke("lineage", "list", "-d", uc)
    assert "[bold]x" in table.stdout and "[red]done" in table.stdout


# --- the writer keeps the readers' rules ----------------------------------------------------------------------------


def test_the_store_never_writes_what_it_could_not_read(tmp_path):
    store = RecordStore(tmp_path)
    base = {"run_id": "r1", "usecase": "u", "package": "p", "task": "t"}
    with pytest.raises(MalformedRecord, match=r"r1\.json: duration_seconds: expected float or null, got NaN$"):
        store.write(RunRecord(**base, duration_seconds=math.nan))
    with pytest.raises(MalformedRecord, match=r"r1\.json: status: expected one of running, success, failed"):
        store.write(RunRecord(**base, status="interrupted"))
    with pytest.raises(RecordError, match=r"bad run_id '\.\./\.\./x' of u/p/t: not a plain name"):
        store.write(RunRecord(**{**base, "run_id": "../../x"}))
    assert not (tmp_path / ".ubunye").exists() or not any((tmp_path / ".ubunye").rglob("*.json"))
    path = store.write(RunRecord(**base, status="success"))
    before = path.read_bytes()
    with pytest.raises(MalformedRecord):
        store.write(RunRecord(**base, outputs=[DatasetRecord("o", row_count=-3)]))
    assert path.read_bytes() == before  # the good record is not replaced by a bad one


@pytest.mark.parametrize(("option", "value"), [("-u", ".."), ("-p", "a/b"), ("-t", "x\x1b[2J")])
def test_a_filter_that_is_not_a_name_is_refused_not_followed(uc, option, value):
    result = invoke("lineage", "list", "-d", uc, option, value)
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    name = {"-u": "usecase", "-p": "package", "-t": "task"}[option]
    assert line.startswith(f"error: bad {name} {value!r} of ") and "not a plain name" in line
    assert "\x1b" not in line


# --- what the types alone do not say: names given twice, the profile's key, bucket count and counts -------------


def profiled(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with a profile on outputs[0] (59 rows; a float column; 4 buckets keyed by customer)."""
    fp = "sha256:" + "0" * 64
    data["outputs"][0].update(
        columns={"customer": {"type": "string", "nulls": 0, "nans": None, "fingerprint": fp},
                 "orders": {"type": "int64", "nulls": 2, "nans": None, "fingerprint": fp},
                 "score": {"type": "float64", "nulls": 1, "nans": 3, "fingerprint": fp}},
        buckets={"n": 4, "data": "eJxjYKAtAAAAYAAB"}, key=["customer"], profile_method="profile-v1",
    )  # fmt: skip
    return data


PROFILE_PROBLEMS = [
    ("outputs[0].buckets.n", 3, "", "expected a power of two from 1 to 65536, got 3"),
    ("outputs[0].buckets.n", 96, "", "expected a power of two from 1 to 65536, got 96"),
    ("outputs[0].buckets.n", 0, "", "expected a number >= 1, got 0"),
    ("outputs[0].buckets.n", 131_072, "", "expected a number <= 65536, got 131072"),
    ("outputs[0].buckets.n", 4.0, "", "expected int, got float"),
    ("outputs[0].buckets.data", 7, "", "expected str, got int"),
    ("outputs[0].key", [], "", "expected a non-empty list of column names or null, got []"),
    ("outputs[0].key", ["customer", "customer"], "[1]", "'customer' is repeated (outputs[0].key[0] has it too)"),
    ("outputs[0].key", ["customer", 1], "[1]", "expected str, got int"),
    ("outputs[0].key", ["cust"], "[0]", "'cust' is not a column of the dataset (its columns: ['customer', "),
    ("outputs[0].columns.orders.nulls", 60, "", "expected at most the dataset's row_count (59), got 60"),
    ("outputs[0].columns.orders.nans", 0, "", "expected null for a 'int64' column (NaNs are counted for floats"),
    ("outputs[0].columns.score.nans", 59, "", "expected at most row_count - nulls (59 - 1), got 59"),
]


@pytest.mark.parametrize(("where", "value", "item", "reason"), PROFILE_PROBLEMS,
                         ids=[f"{w}={v!r}"[:60] for w, v, _, _ in PROFILE_PROBLEMS])  # fmt: skip
def test_profile_fields_are_checked_beyond_their_types(uc, where, value, item, reason):
    """A bucket count of 3 loaded (n is a power of two, docs/rows-v1.md section 12.2), as did a key naming a column
    twice or no column of the dataset, and more nulls than rows: every reader took them as they were."""
    data = profiled(fixture())
    data["run_id"] = BAD_ID
    set_at(data, where, value)
    path = plant(uc, data)
    at = where + item
    with pytest.raises(MalformedRecord) as err:
        load_record(path)
    assert (err.value.path, err.value.field) == (str(path), at)
    assert str(err.value).startswith(f"{path}: {at}: {reason}")
    result = invoke("lineage", "show", path)
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr.startswith(f"error: {path}: {at}: {reason}")


def test_a_good_profile_loads(uc):
    data = profiled(fixture())
    data["run_id"] = BAD_ID
    path = plant(uc, data)
    d = load_record(path).outputs[0]
    assert (d.key, d.buckets.n, d.columns["score"].nans) == (["customer"], 4, 3)


@pytest.mark.parametrize("side", ["outputs", "inputs"])
def test_a_dataset_named_twice_is_refused_by_every_reader(uc, side):
    """Only compare and diff refused a record naming one output (or input) twice; show, trace and list showed it,
    and the store wrote it. The loader refuses it now, so every reader, and the writer, does."""
    data = fixture()
    data["run_id"] = BAD_ID
    data[side].append({**data[side][0], "data_hash": "sha256:" + "1" * 64})
    path = plant(uc, data)
    name = data[side][0]["name"]
    refused_everywhere(uc, path, f"{path}: {side}[1].name: {name!r} is repeated ({side}[0] has it too)")
    store = RecordStore(uc)
    record = RunRecord.from_dict({**fixture(), "run_id": BAD_ID + "w"})
    getattr(record, side).append(getattr(record, side)[0])
    with pytest.raises(MalformedRecord, match=rf"{side}\[1\]\.name: {name!r} is repeated"):
        store.write(record)
