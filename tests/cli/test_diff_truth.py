"""``ubunye diff`` and ``lineage compare`` say only what they checked: column facts of a side that read no row come
from its record, a cut list of changed cells says how many there are, compare prints its note on buckets that are
not comparable, and an error names the cause the evidence shows (an output the run never wrote, another engine's
types, a damaged record) rather than "overwritten since".

Every run here is a real ``ubunye run`` of a small pandas task; its record is read from disk.
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.optional import needs_polars
from ubunye.cli.diff import diff_runs
from ubunye.cli.main import app
from ubunye.lineage import RecordStore
from ubunye.lineage.compare import compare_records
from ubunye.lineage.diff import DiffError, diff_tables
from ubunye.lineage.record import RunRecord

runner = CliRunner()

CODE = """from ubunye import Task
class T(Task):
    def transform(self, sources):
        return {'out': sources['src']}
"""


def _task(uc: Path, config: str, task: str = "t") -> None:
    folder = uc / "u" / "p" / task
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(config)
    (folder / "transformations.py").write_text(CODE)


def _input(uc: Path, dt: str, table: pa.Table) -> None:
    (uc / "in" / dt).mkdir(parents=True, exist_ok=True)
    pq.write_table(table, uc / "in" / dt / "part-0.parquet")


def _run(uc: Path, dt: str, task: str = "t") -> int:
    return runner.invoke(app, ["run", "-d", str(uc), "-u", "u", "-p", "p", "-t", task, "-dt", dt]).exit_code


def _records(uc: Path, task: str = "t") -> list[tuple[RunRecord, str]]:
    """The task's records, oldest first, each with its file."""
    files = sorted((uc / ".ubunye" / "lineage" / "u" / "p" / task).glob("*.json"))
    found = RecordStore(uc).records("u", "p", task)
    assert len(found) == len(files)
    return [(r, str(next(f for f in files if f.stem == r.run_id))) for r in found]


def _diff(uc: Path, *more: str, task: str = "t") -> object:
    return runner.invoke(app, ["diff", "latest~1", "latest", "-d", str(uc), "-u", "u", "-p", "p", "-t", task, *more])


KEYED = """ENGINE: {backend: pandas}
CONFIG:
  inputs:
    src: {format: parquet, path: "in/{{ dt }}"}
  outputs:
    out: {format: parquet, path: "out/{{ dt }}", key: [id]}
  monitors: [lineage]
"""


# --- 1. a side that reads no row: its columns are the record's --------------------------------------------------


def _one_row_added(uc: Path, n_b: pa.DataType | None = None) -> None:
    """Run A over ids 1..3, run B over ids 1..4 (``n`` of type ``n_b``): the only differing bucket holds id 4, so
    run A reads no row."""
    _task(uc, KEYED)
    for dt, ids, typ in (("d1", [1, 2, 3], pa.int64()), ("d2", [1, 2, 3, 4], n_b or pa.int64())):
        _input(uc, dt, pa.table({"id": pa.array(ids, pa.int64()), "n": pa.array([10 * i for i in ids], typ)}))
        assert _run(uc, dt) == 0


def _rewrite_a(uc: Path, change: str) -> None:
    (part,) = (uc / "out" / "d1").glob("*.parquet")
    t = pq.read_table(part)
    if change == "retyped":
        t = t.set_column(t.column_names.index("n"), "n", t.column("n").cast(pa.int32()))
    else:
        t = t.drop(["n"]).append_column("extra", pa.array(["x"] * t.num_rows))
    pq.write_table(t, part)


@pytest.mark.parametrize("change", ["retyped", "column swapped"])
def test_a_side_reading_no_row_reports_the_columns_its_run_recorded(tmp_path, change):
    """Run A's data rewritten since (n as int32; or n dropped and a column added), none of its rows in the
    differing bucket: diff reported "column n type int32 -> int64" (or "column only in A: extra"), columns neither
    run had, from a read it had not checked."""
    uc = tmp_path / "uc"
    _one_row_added(uc)
    (a, _), (b, _) = _records(uc)
    assert compare_records(a, b).outputs[0].schema == "unchanged"  # the records: the same columns
    _rewrite_a(uc, change)
    report = diff_runs(a, b)
    d = report.diff
    assert d is not None and report.a["rows_read"] == 0 and report.b["rows_read"] == 1
    assert (d.types, d.columns_only_a, d.columns_only_b) == ({}, [], [])
    assert d.only_b.count == 1 and d.only_b.rows == [{"id": "4", "n": "40"}]
    assert (
        report.note is not None
        and f"run A ({a.run_id}) read no row: its columns are the ones its run recorded" in report.note
    )
    result = _diff(uc)
    assert result.exit_code == 1, result.output
    assert "column" not in result.stdout.replace("columns are the ones", ""), result.stdout


def test_a_side_reading_no_row_keeps_the_type_change_the_records_show(tmp_path):
    """B recorded n as int32, A as int64; A's file since rewritten as int32: the diff's type change is the
    records' (int64 -> int32), not the rewritten file's (none)."""
    uc = tmp_path / "uc"
    _one_row_added(uc, n_b=pa.int32())
    (a, _), (b, _) = _records(uc)
    want = {name: (c.type, b.outputs[0].columns[name].type) for name, c in a.outputs[0].columns.items()
            if c.type != b.outputs[0].columns[name].type}  # fmt: skip
    assert want == {"n": ("int64", "int32")}
    _rewrite_a(uc, "retyped")
    d = diff_runs(a, b).diff
    assert d is not None and d.types == want


# --- 2. changed cells cut at --limit: the total is kept ----------------------------------------------------------


def test_changed_cells_cut_at_the_limit_keep_their_total(tmp_path):
    """10 rows changed in 3 columns (30 cells) with --limit 20 printed "changed cells (10 rows; 20 cells shown)",
    as for 20 cells in all; JSON had no total."""
    ids = list(range(10))
    a = pd.DataFrame({"id": ids, "x": [0] * 10, "y": [0] * 10, "z": [0] * 10})
    b = pd.DataFrame({"id": ids, "x": [1] * 10, "y": [1] * 10, "z": [1] * 10})
    total = int((a.drop(columns="id") != b.drop(columns="id")).to_numpy().sum())
    a.to_parquet(tmp_path / "a.parquet")
    b.to_parquet(tmp_path / "b.parquet")
    d = diff_tables(pa.Table.from_pandas(a), pa.Table.from_pandas(b), key=["id"], limit=20)
    assert (d.changed.rows, len(d.changed.cells), d.changed.cell_count) == (10, 20, total)
    args = ["diff", "--a", str(tmp_path / "a.parquet"), "--b", str(tmp_path / "b.parquet"), "--key", "id"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert f"changed cells (10 rows; first 20 of {total} cells shown)" in result.stdout.splitlines(), result.stdout
    changed = json.loads(runner.invoke(app, [*args, "--json"]).stdout)["diff"]["changed"]
    assert (changed["rows"], len(changed["cells"]), changed["cell_count"]) == (10, 20, total)
    uncut = runner.invoke(app, [*args, "--limit", str(total)])
    assert f"changed cells (10 rows; {total} cells shown)" in uncut.stdout.splitlines(), uncut.stdout


# --- 3. compare prints its note on buckets that are not comparable -----------------------------------------------


def test_compare_prints_that_buckets_are_not_comparable(tmp_path):
    """16 buckets against 256: the JSON carried profile_note "buckets not comparable (...)"; the text, which
    prints it only for datasets without column profiles, said nothing."""
    uc = tmp_path / "uc"
    for dt, n, v in (("d1", 16, [1, 2, 3]), ("d2", 256, [1, 2, 4])):
        _task(uc, KEYED.replace("key: [id]}", f"key: [id], buckets: {n}}}"))
        _input(uc, dt, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": pa.array(v, pa.int64())}))
        assert _run(uc, dt) == 0
    args = ["lineage", "compare", "latest~1", "latest", "-d", str(uc), "-u", "u", "-p", "p", "-t", "t"]
    (out,) = json.loads(runner.invoke(app, [*args, "--json"]).stdout)["outputs"]
    assert out["columns"] is not None and out["profile_note"].startswith("buckets not comparable")
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert out["profile_note"] in result.stdout, result.stdout


def test_compare_says_values_moved_between_rows_are_the_same_values_not_an_unchanged_column(tmp_path):
    """v's values swapped between ids 1 and 2: its fingerprint (the multiset of its values) is equal, and the text
    called the column "unchanged" while every row of it changed; it says "same values" now, beside the buckets."""
    uc = tmp_path / "uc"
    _task(uc, KEYED)
    for dt, v in (("d1", ["a", "b"]), ("d2", ["b", "a"])):
        _input(uc, dt, pa.table({"id": pa.array([1, 2], pa.int64()), "v": pa.array(v, pa.string())}))
        assert _run(uc, dt) == 0
    args = ["lineage", "compare", "latest~1", "latest", "-d", str(uc), "-u", "u", "-p", "p", "-t", "t"]
    (out,) = json.loads(runner.invoke(app, [*args, "--json"]).stdout)["outputs"]
    assert "v" in out["columns"]["unchanged"]  # the JSON's field keeps its name (what compare_columns says)
    text = runner.invoke(app, [*args]).stdout
    row = next(line for line in text.splitlines() if " v " in line and "out" in line)
    assert "same values" in row and "unchanged" not in row, text
    assert any("buckets" in line and "differ" in line for line in text.splitlines()), text


# --- 4. the cause an error names is the one the evidence shows ----------------------------------------------------


def test_an_output_the_run_did_not_write_is_named_as_such_not_overwritten(tmp_path):
    """Run B failed an expectation, so it never wrote its output (written: false): diff read the location (run
    A's rows) and said B's data "was overwritten since"."""
    uc = tmp_path / "uc"
    config = KEYED.replace('path: "out/{{ dt }}"', "path: out/fixed").replace(
        "  monitors:", '  expectations:\n    out: {expression: "v < 100"}\n  monitors:'
    )
    _task(uc, config)
    for dt, v in (("d1", [1, 2]), ("d2", [1, 200])):
        _input(uc, dt, pa.table({"id": pa.array([1, 2], pa.int64()), "v": pa.array(v, pa.int64())}))
        _run(uc, dt)
    (a, _), (b, path_b) = _records(uc)
    assert (a.status, b.status, b.outputs[0].written) == ("success", "failed", False)
    result = _diff(uc)
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert "overwritten" not in result.stderr
    assert result.stderr.startswith(f"error: run B ({b.run_id}): the run did not write its output out "), result.stderr
    assert f"{path_b}: outputs[0].written; the run failed" in result.stderr


@needs_polars
def test_rows_read_with_another_engine_of_other_types_are_named_as_such(tmp_path):
    """A pandas run's csv output with a date column, diffed with -e polars (whose csv reader gives a string):
    diff said the data "was overwritten since"."""
    import datetime as dt

    uc = tmp_path / "uc"
    _task(uc, KEYED.replace('{format: parquet, path: "out/', '{format: csv, path: "out/'))
    for day, last_day in (("d1", 2), ("d2", 3)):
        days = pa.array([dt.date(2024, 1, 1), dt.date(2024, 1, last_day)])
        _input(uc, day, pa.table({"id": pa.array([1, 2], pa.int64()), "day": days}))
        assert _run(uc, day) == 0
    (a, _), _ = _records(uc)
    result = _diff(uc, "-e", "polars")
    assert result.exit_code == 2, result.output
    assert "overwritten" not in result.stderr
    start = f"error: run A ({a.run_id}): the rows read at {uc / 'out' / 'd1'} with engine polars have other column "
    assert result.stderr.startswith(start + "types than the run recorded with pandas"), result.stderr
    assert f"the run recorded {a.outputs[0].schema}): polars may read csv with other types" in result.stderr
    same_engine = _diff(uc)  # the run's own engine: the rows check out and the diff is shown
    assert same_engine.exit_code == 1, same_engine.output


def test_a_record_with_edited_buckets_is_named_damaged_not_the_data(tmp_path):
    """Two of run B's buckets swapped in its record (totals unchanged, so it does not contradict itself): the data
    is what both records' data hashes vouch for, and diff blamed it ("overwritten since")."""
    uc = tmp_path / "uc"
    _task(uc, KEYED.replace('"in/{{ dt }}"', "in/d1"))
    _input(uc, "d1", pa.table({"id": pa.array(range(20), pa.int64()), "n": pa.array(range(20), pa.int64())}))
    for dt in ("d1", "d2"):
        assert _run(uc, dt) == 0
    _, (_, path_b) = _records(uc)
    raw = json.loads(Path(path_b).read_text())
    buckets = raw["outputs"][0]["buckets"]
    packed = bytearray(zlib.decompress(base64.b64decode(buckets["data"])))
    i, j = [k for k in range(buckets["n"]) if any(packed[24 * k : 24 * k + 24])][:2]
    packed[24 * i : 24 * i + 24], packed[24 * j : 24 * j + 24] = (
        packed[24 * j : 24 * j + 24],
        packed[24 * i : 24 * i + 24],
    )
    buckets["data"] = base64.b64encode(zlib.compress(bytes(packed))).decode()
    Path(path_b).write_text(json.dumps(raw))
    (a, _), (b, _) = _records(uc)
    assert compare_records(a, b).outputs[0].data == "unknown"  # compare: the records disagree
    result = _diff(uc)
    assert result.exit_code == 2 and "overwritten" not in result.stderr, result.output
    assert result.stderr == (
        f"error: run B ({b.run_id}): the rows at {uc / 'out' / 'd2'} give the record's data hash but not its bucket "
        f"{i} of {buckets['n']} ({path_b}: outputs[0].buckets): the record is damaged; cannot diff it\n"
    )
    # The same edit with the data really rewritten since (a row changed): the data is blamed, as before.
    (part,) = (uc / "out" / "d2").glob("*.parquet")
    t = pq.read_table(part)
    pq.write_table(t.set_column(1, "n", pa.array([x + 1 for x in t.column("n").to_pylist()], pa.int64())), part)
    with pytest.raises(DiffError, match=r"is no longer what the run recorded \(it was overwritten since\)"):
        diff_runs(a, b)


def test_an_output_of_a_run_stopped_while_committing_it_may_not_have_been_written(tmp_path):
    """A run that stopped while committing its output leaves ``written`` not known (null): rows at the location
    that are not its record's may be the previous data it never replaced, which the error says."""
    uc = tmp_path / "uc"
    _task(uc, KEYED.replace('path: "out/{{ dt }}"', "path: out/fixed"))
    for dt, v in (("d1", [1, 2]), ("d2", [1, 3])):
        _input(uc, dt, pa.table({"id": pa.array([1, 2], pa.int64()), "n": pa.array(v, pa.int64())}))
        assert _run(uc, dt) == 0
    (a, _), (b, _) = _records(uc)
    with pytest.raises(DiffError, match=r"is no longer what the run recorded \(it was overwritten since\)"):
        diff_runs(a, b)  # A's rows were replaced by B's: overwritten, as before
    a.status, a.outputs[0].written = "failed", None  # as a run killed during the commit leaves its checkpoint
    with pytest.raises(DiffError) as err:
        diff_runs(a, b)
    assert str(err.value).startswith(
        f"run A ({a.run_id}): the data at {uc / 'out' / 'fixed'} is not what the run recorded (it was overwritten "
        "since, or the run stopped before committing it: its record says written: not known)"
    )
