"""``ubunye lineage`` and ``ubunye diff`` over records that contradict themselves or carry terminal escapes: never
"same data" from a damaged record, never a reader's computed field overwritten by a record's, never an escape
printed as is, never another run shown in place of one that cannot be read."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from ubunye.cli.main import app
from ubunye.hashing.profile import profile_frame
from ubunye.lineage import RecordStore, RunRecord
from ubunye.lineage.profiles import profile_fields
from ubunye.lineage.record import DatasetRecord

runner = CliRunner()
ESCAPE = "\x1b]0;PWNED\x07\x1b[2J"
IDS = ("20261201T020000Z-a", "20261202T020000Z-b")
TASK = ("-u", "u", "-p", "p", "-t", "t")


def invoke(*args: object) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def _runs(tmp_path: Path, values: tuple[list[int], list[int]] = ([1, 2, 3], [1, 2, 3])) -> list[Path]:
    """Two runs of task u/p/t, each writing output ``o`` (parquet, profiled by key ``id``); their record files."""
    store, paths = RecordStore(tmp_path), []
    for run_id, v in zip(IDS, values, strict=True):
        where = tmp_path / "data" / run_id
        where.mkdir(parents=True)
        frame = pd.DataFrame({"id": pd.array([1, 2, 3], dtype="int64"), "v": pd.array(v, dtype="int64")})
        frame.to_parquet(where / "part-0.parquet", index=False)
        prof = profile_frame(frame, key=["id"], buckets=16)
        out = DatasetRecord("o", format="parquet", location=str(where), row_count=prof.hash.row_count,
                            schema_hash=prof.hash.schema_hash, data_hash=prof.hash.data_hash, hash_method="rows-v1",
                            schema=prof.hash.schema, **profile_fields(prof))  # fmt: skip
        at = f"2026-12-0{len(paths) + 1}T02:00:00Z"
        paths.append(store.write(RunRecord(run_id=run_id, usecase="u", package="p", task="t", status="success",
                                           backend="pandas", started_at=at, ended_at=at, outputs=[out])))  # fmt: skip
    return paths


def _runs_path(tmp_path: Path) -> Path:
    """Run B's record file, as _runs wrote it."""
    return tmp_path / ".ubunye" / "lineage" / "u" / "p" / "t" / f"{IDS[1]}.json"


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _set(field: str, value: object) -> Any:
    """A change of ``outputs[0].<field>`` (``columns.v.type``: a key path), as a hand edit or a damaged disk does."""

    def change(data: dict[str, Any]) -> None:
        node, *path, last = [data["outputs"][0], *field.split(".")]
        for key in path:
            node = node[key]
        node[last] = value

    return change


# --- 1: equal data hashes, schema facts differ -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("schema_hash", "sha256:" + "ab" * 32, "schema hashes differ"),
        ("schema", '{"id":"int64","v":"int32"}', "schemas differ"),
        ("columns.v.type", "float64", "column v: types int64 and float64 under one fingerprint"),
        ("columns.v.nulls", 1, "column v: nulls 0 and 1 under one fingerprint"),
    ],
    ids=["schema_hash", "schema", "column-type", "column-nulls"],
)
def test_compare_and_diff_never_say_same_data_for_contradicting_records(tmp_path, field, value, why) -> None:
    """compare said "same data" (exit 0) while its schema column said changed; diff said "same data hash: no row
    differs". The newer record's schema fact contradicts its own data hash: the data is unknown."""
    _edit(_runs(tmp_path)[1], _set(field, value))
    compared = invoke("lineage", "compare", "latest~1", "latest", "-d", tmp_path, *TASK)
    assert compared.exit_code == 1, compared.output
    first = compared.stdout.splitlines()[0]
    assert first.startswith(f"data unknown: output o (the records disagree: equal data hashes, but {why}"), first
    diffed = invoke("diff", "latest~1", "latest", "-d", tmp_path, *TASK)
    # Never "same data" from the hashes. B's schema_hash is not its schema's: named up front. Otherwise no bucket
    # differs: diff reads every row and checks it against each record, which B's fails (exit 2, naming the field).
    assert diffed.exit_code == 2 and "same data" not in diffed.stdout, diffed.output
    if field in ("schema_hash", "schema"):
        said = f"error: {_runs_path(tmp_path)}: outputs[0]: the record contradicts itself: its schema_hash is not"
        assert diffed.stderr.startswith(said), diffed.stderr
    else:
        assert diffed.stderr.startswith("error: run B (20261202T020000Z-b): ") and field.split(".")[0] in diffed.stderr


def test_an_edited_data_hash_is_a_record_contradicting_itself_not_changed_data(tmp_path) -> None:
    """Only B's data_hash edited (its buckets, row count and schema as the run recorded them): compare said "data
    changed", and diff "the data ... was overwritten since". The buckets add up to the sums the data hash is made
    of (docs/rows-v1.md sections 9 and 12.2): a data hash that is not theirs is a damaged record."""
    paths = _runs(tmp_path)
    _edit(paths[1], _set("data_hash", "sha256:" + "0" * 64))
    compared = invoke("lineage", "compare", "latest~1", "latest", "-d", tmp_path, *TASK)
    assert compared.exit_code == 1, compared.output
    said = "the record of run B contradicts itself: its data_hash is not the hash of its schema, row count and buckets"
    assert compared.stdout.splitlines()[0].startswith(f"data unknown: output o ({said})"), compared.stdout
    diffed = invoke("diff", "latest~1", "latest", "-d", tmp_path, *TASK)
    assert diffed.exit_code == 2 and "overwritten" not in diffed.stderr, diffed.output
    assert diffed.stderr.startswith(f"error: {paths[1]}: outputs[0]: the record contradicts itself: its data_hash")


def test_diff_of_equal_hashes_names_a_damaged_bucket_field(tmp_path) -> None:
    """B's buckets.data damaged, the data hashes equal: diff said "same data", exit 0 (compare notes it)."""
    paths = _runs(tmp_path)
    _edit(paths[1], _set("buckets.data", "not-base64!"))
    diffed = invoke("diff", "latest~1", "latest", "-d", tmp_path, *TASK)
    assert diffed.exit_code == 2 and "same data" not in diffed.stdout, diffed.output
    assert diffed.stderr.startswith(f"error: {paths[1]}: outputs[0].buckets: data is not base64"), diffed.stderr


def test_records_that_agree_are_still_same_data(tmp_path) -> None:
    _runs(tmp_path)
    assert invoke("lineage", "compare", "latest~1", "latest", "-d", tmp_path, *TASK).exit_code == 0
    diffed = invoke("diff", "latest~1", "latest", "-d", tmp_path, *TASK)
    assert diffed.exit_code == 0 and "same data hash: no row differs" in diffed.stdout, diffed.output


# --- 2: a record's own "state" and "path" --------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["show", "trace"])
def test_a_records_own_state_and_path_never_replace_the_readers(tmp_path, command) -> None:
    paths = _runs(tmp_path)
    _edit(paths[1], lambda d: d.update(state="failed", path="/etc/passwd", extra=1, note="kept"))
    result = invoke("lineage", command, "latest", "-d", tmp_path, *TASK, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["path"], data["status"], data["state"]) == (str(paths[1]), "success", "success")
    assert data["extra"] == {"path": "/etc/passwd", "state": "failed", "extra": 1} and data["note"] == "kept"
    gone = {"host": socket.gethostname(), "pid": os.getpid(), "started": "1@another-boot"}  # its pid since reused
    _edit(paths[1], lambda d: d.update(status="running", process=gone))
    data = json.loads(invoke("lineage", command, "latest", "-d", tmp_path, *TASK, "--json").stdout)
    assert (data["status"], data["state"], data["extra"]["state"]) == ("running", "interrupted", "failed")


# --- 3: an unreadable newest record --------------------------------------------------------------------------------
def test_show_and_compare_latest_name_an_unreadable_newest_record(tmp_path) -> None:
    """The newest record, truncated, was passed over: show latest showed the second newest, exit 0."""
    paths = _runs(tmp_path)
    newest = paths[1].with_name("20261203T020000Z-c.json")
    newest.write_text(paths[1].read_text()[:40])
    commands = [("lineage", "show", "latest"), ("lineage", "compare", "latest~1", "latest"),
                ("diff", "latest~1", "latest")]  # fmt: skip
    for args in commands:
        result = invoke(*args, "-d", tmp_path, *TASK)
        assert result.exit_code == 2 and result.stdout == "", (args, result.output)
        ref = next(a for a in args if a.startswith("latest"))
        said = f"{ref!r} may be a run whose record cannot be read: {newest}: corrupt run record"
        assert result.stderr.startswith(f"error: {said}"), result.stderr


# --- 4, 5: record text reaches the terminal escaped ----------------------------------------------------------------
def test_column_types_are_escaped_in_trace_and_compare(tmp_path) -> None:
    paths = _runs(tmp_path, ([1, 2, 3], [1, 5, 3]))
    _edit(paths[1], _set("columns.v.type", ESCAPE))
    for args in (("lineage", "trace", "latest"), ("lineage", "compare", "latest~1", "latest")):
        result = invoke(*args, "-d", tmp_path, *TASK)
        assert result.exit_code in (0, 1), result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert "\\x1b]0;PWNED\\x07\\x1b[2J" in result.stdout, result.stdout


def test_output_names_in_diff_errors_are_escaped(tmp_path) -> None:
    """diff's "outputs ... changed" and "has no dataset ... (it has: ...)" errors printed a record's names as is."""
    paths = _runs(tmp_path, ([1, 2, 3], [1, 5, 3]))

    def two_outputs(data: dict[str, Any]) -> None:
        data["outputs"][0]["name"] = "o" + ESCAPE
        data["outputs"].append({**data["outputs"][0], "name": "p" + ESCAPE})

    for path in paths:
        _edit(path, two_outputs)
    _edit(paths[1], _set("data_hash", "sha256:" + "cd" * 32))
    _edit(paths[1], lambda d: d["outputs"][1].update(data_hash="sha256:" + "ef" * 32))
    for extra in ((), ("--dataset", "outputs.q")):
        result = invoke("diff", "latest~1", "latest", "-d", tmp_path, *TASK, *extra)
        assert result.exit_code == 2, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert "o\\x1b]0;PWNED\\x07\\x1b[2J" in result.stderr, result.stderr


def test_task_folder_names_in_the_latest_error_are_escaped(tmp_path) -> None:
    store = RecordStore(tmp_path)
    folder = store.root / "u" / "p" / ("t" + ESCAPE)  # a folder anyone can make: the store lists, not checks, it
    folder.mkdir(parents=True)
    store.write(RunRecord(run_id="r1", usecase="u", package="p", task="t"))
    (folder / "r2.json").write_text("{}")
    result = invoke("lineage", "show", "latest", "-d", tmp_path)
    assert result.exit_code == 2, result.output
    assert "\x1b" not in result.output and "u/p/t\\x1b]0;PWNED\\x07\\x1b[2J" in result.stderr, result.stderr


# --- also: a v1 record named by its file ---------------------------------------------------------------------------
def test_v1_records_are_listed_by_an_id_show_accepts(tmp_path) -> None:
    """Two v1 files (old-a.json, old-b.json) holding one run id were both listed as that id, which show refused."""
    store = RecordStore(tmp_path)
    folder = store.folder("shop", "daily", "revenue")
    folder.mkdir(parents=True)
    v1 = {"run_id": "20261130T020000Z", "usecase": "shop", "package": "daily", "task_name": "revenue",
          "status": "success", "started_at": "2026-11-30T02:00:00+00:00"}  # fmt: skip
    for name in ("old-a", "old-b"):
        (folder / f"{name}.json").write_text(json.dumps(v1))
    listed = invoke("lineage", "list", "-d", tmp_path, "--json")
    assert listed.exit_code == 0, listed.output
    shorts = sorted(r["short_id"] for r in json.loads(listed.stdout))
    assert shorts == ["old-a", "old-b"]
    for short in shorts:
        shown = invoke("lineage", "show", short, "-d", tmp_path, "--json")
        assert shown.exit_code == 0 and json.loads(shown.stdout)["path"].endswith(f"{short}.json"), shown.output
