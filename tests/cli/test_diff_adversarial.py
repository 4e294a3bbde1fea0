"""``ubunye diff`` and ``ubunye lineage compare`` attacked: awkward values against a brute-force join done here,
records that contradict themselves, datasets named twice, keys that are not usable, data gone from under a run.

The brute force reads both files with pyarrow and compares Python values (``float.hex`` keeps -0.0 apart from 0.0,
``str(Decimal)`` keeps the scale, instants compare in UTC); it never calls the encoder under test.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import math
import random
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.optional import LOCAL_ENGINES
from ubunye.cli.diff import diff_runs, diff_targets
from ubunye.cli.main import app
from ubunye.hashing.profile import profile_frame
from ubunye.lineage.compare import compare_records
from ubunye.lineage.diff import DiffError, diff_tables
from ubunye.lineage.profiles import profile_fields
from ubunye.lineage.record import DatasetRecord, MalformedRecord, RunRecord

runner = CliRunner()

K1, K2, F, D, TS, S = "k 1", 'k"2.`x`', "f.x", "d", "ts", "s\u00e9 t"
KEY = [K1, K2]
SCHEMA = pa.schema([
    (K1, pa.int64()),
    (K2, pa.string()),
    (F, pa.float64()),
    (D, pa.decimal128(10, 2)),
    (TS, pa.timestamp("us", tz="UTC")),
    (S, pa.struct([("a", pa.int64()), ("b", pa.list_(pa.string()))])),
])  # fmt: skip
FLOATS = [0.0, -0.0, float("nan"), None, 1.5, float("inf"), 1e23]
STRINGS = ["a", "é", "e\u0301", '"q"', "\\", "\x00\n\t", "😀", "null", ""]


def _value(rng: random.Random, column: str) -> object:
    if column == K1:
        return rng.choice([None, 1, 2, 3, -4])
    if column == K2:
        return rng.choice([None, *STRINGS[:5]])
    if column == F:
        return rng.choice(FLOATS)
    if column == D:
        return rng.choice([None, Decimal("1.50"), Decimal("0.00"), Decimal("-3.25")])
    if column == TS:
        utc = dt.timezone.utc
        return rng.choice([None, dt.datetime(2024, 1, 1, 12, tzinfo=utc), dt.datetime(1969, 12, 31, tzinfo=utc)])
    return rng.choice([None, {"a": None, "b": None}, {"a": 1, "b": ["x", None]}, {"a": 1, "b": []}])


def _tables(seed: int) -> tuple[pa.Table, pa.Table]:
    """A: random rows (null and repeated keys among them); B: A edited (cells, rows gone, rows added, duplicates)."""
    rng = random.Random(seed)
    rows_a = [{c: _value(rng, c) for c in SCHEMA.names} for _ in range(120)]
    rows_b = copy.deepcopy(rows_a)
    for row in rng.sample(rows_b, 25):
        column = rng.choice([F, D, TS, S, F])
        row[column] = _value(rng, column)
    for i in sorted(rng.sample(range(len(rows_b)), 6), reverse=True):
        del rows_b[i]
    rows_b += [{c: _value(rng, c) for c in SCHEMA.names} for _ in range(6)]
    rows_b += copy.deepcopy(rng.sample(rows_b, 4))
    rng.shuffle(rows_b)
    return pa.Table.from_pylist(rows_a, SCHEMA), pa.Table.from_pylist(rows_b, SCHEMA)


def _norm(v: object) -> object:
    if v is None:
        return ("null",)
    if isinstance(v, float):
        return ("nan",) if math.isnan(v) else ("f", v.hex())
    if isinstance(v, bool | int):
        return ("i", v)
    if isinstance(v, str):
        return ("s", v)
    if isinstance(v, Decimal):
        return ("d", str(v))
    if isinstance(v, dt.datetime):
        return ("t", v.astimezone(dt.timezone.utc).isoformat())
    if isinstance(v, dict):
        return ("struct", tuple(sorted((k, _norm(x)) for k, x in v.items() if x is not None)))
    if isinstance(v, list):
        return ("list", tuple(_norm(x) for x in v))
    raise AssertionError(f"unexpected value {v!r}")


def _decode(column: str, text: str) -> object:
    """A canonical cell text of the diff back to a Python value of the column's type."""
    if text == "null":
        return None
    if column == F:
        value = json.loads(text)
        return float(value)  # "NaN", "Infinity" and numbers alike
    if column == D:
        return json.loads(text, parse_float=Decimal, parse_int=Decimal)
    if column == TS:
        return dt.datetime.fromisoformat(json.loads(text))
    return json.loads(text)


def _row(row: dict[str, Any], columns: list[str]) -> tuple:
    return tuple(_norm(row[c]) for c in columns)


def _brute_force(a: pa.Table, b: pa.Table, key: list[str] | None) -> tuple[Counter, Counter, dict]:
    columns = a.column_names
    rows_a, rows_b = a.to_pylist(), b.to_pylist()
    if key is None:
        ca, cb = Counter(_row(r, columns) for r in rows_a), Counter(_row(r, columns) for r in rows_b)
        return ca - cb, cb - ca, {}
    by_a, by_b = defaultdict(list), defaultdict(list)
    for r in rows_a:
        by_a[_row(r, key)].append(r)
    for r in rows_b:
        by_b[_row(r, key)].append(r)
    only_a, only_b, changed = Counter(), Counter(), {}
    for k in set(by_a) | set(by_b):
        ra, rb = by_a.get(k, []), by_b.get(k, [])
        if len(ra) == 1 and len(rb) == 1:
            for c in columns:
                if c not in key and _norm(ra[0][c]) != _norm(rb[0][c]):
                    changed[(k, c)] = (_norm(ra[0][c]), _norm(rb[0][c]))
        else:
            ca, cb = Counter(_row(r, columns) for r in ra), Counter(_row(r, columns) for r in rb)
            only_a.update(ca - cb)
            only_b.update(cb - ca)
    return only_a, only_b, changed


def _ours(rows: list[dict[str, str]], columns: list[str]) -> Counter:
    return Counter(tuple(_norm(_decode(c, r[c])) for c in columns) for r in rows)


@pytest.mark.parametrize("key", [KEY, None], ids=["keyed", "keyless"])
@pytest.mark.parametrize("seed", [11, 12])
def test_awkward_values_pandas_file_against_polars_file_equal_a_full_join(tmp_path, seed, key):
    a, b = _tables(seed)
    pq.write_table(a, tmp_path / "a.parquet")
    polars = pytest.importorskip("polars")
    polars.from_arrow(b).write_parquet(tmp_path / "b.parquet")  # polars' writer: its own types and encodings
    a, b = pq.read_table(tmp_path / "a.parquet"), pq.read_table(tmp_path / "b.parquet").select(SCHEMA.names)
    report = diff_targets(str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), key=key, limit=10_000,
                          engine_b="polars")  # fmt: skip
    only_a, only_b, changed = _brute_force(a, b, key)
    assert only_a and only_b, "the edits must leave rows on both sides"
    d = report.diff
    assert d is not None and not report.same and (d.types, d.columns_only_a, d.columns_only_b) == ({}, [], [])
    columns = SCHEMA.names
    assert (_ours(d.only_a.rows, columns), d.only_a.count) == (only_a, sum(only_a.values()))
    assert (_ours(d.only_b.rows, columns), d.only_b.count) == (only_b, sum(only_b.values()))
    got = {
        (tuple(_norm(_decode(k, v)) for k, v in c.key.items()), c.column): (
            _norm(_decode(c.column, c.a)), _norm(_decode(c.column, c.b))
        )
        for c in d.changed.cells
    }  # fmt: skip
    assert got == changed
    assert d.changed.rows == len({k for k, _ in changed})
    assert report.a["rows_read"] < a.num_rows and report.b["rows_read"] < b.num_rows


def test_rows_in_another_order_and_columns_reordered_are_the_same(tmp_path):
    a, _ = _tables(3)
    pq.write_table(a, tmp_path / "a.parquet")
    b = a.take(list(reversed(range(a.num_rows)))).select(list(reversed(a.column_names)))
    pytest.importorskip("polars").from_arrow(b).write_parquet(tmp_path / "b.parquet")
    for key in (KEY, None):
        report = diff_targets(str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), key=key)
        assert report.same and report.diff is None


# --- records: tiny runs made here, one parquet output each --------------------------------------------------------
def _run(tmp_path: Path, run_id: str, frame: pd.DataFrame, key: list[str] | None = None, n: int = 16,
         folder: str | None = None) -> RunRecord:  # fmt: skip
    """A run record of one output ``o`` written to ``tmp_path/<folder or run_id>/part-0.parquet``."""
    where = tmp_path / (folder or run_id)
    where.mkdir(exist_ok=True)
    frame.to_parquet(where / "part-0.parquet", index=False)
    prof = profile_frame(frame, key=key, buckets=n)
    out = DatasetRecord("o", format="parquet", location=str(where), row_count=prof.hash.row_count,
                        schema_hash=prof.hash.schema_hash, data_hash=prof.hash.data_hash, hash_method="rows-v1",
                        schema=prof.hash.schema, **profile_fields(prof))  # fmt: skip
    return RunRecord(run_id=run_id, usecase="u", package="p", task="t", status="success", backend="pandas",
                     outputs=[out])  # fmt: skip


def _save(tmp_path: Path, record: RunRecord, name: str) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(record.to_dict()))
    return str(path)


def _frame(values: list[int], ids: list[int] | None = None) -> pd.DataFrame:
    ids = ids or list(range(1, len(values) + 1))
    return pd.DataFrame({"id": pd.array(ids, dtype="int64"), "v": pd.array(values, dtype="int64")})


def test_equal_data_hashes_with_differing_profiles_are_never_same_data(tmp_path):
    """A record whose data hash says one thing and whose profile says another (damaged or edited by hand):
    compare said "same data" (exit 0) and diff "same data hash: no row differs" while the rows differ."""
    a = _run(tmp_path, "a", _frame([1, 2, 3]), key=["id"])
    b = _run(tmp_path, "b", _frame([1, 5, 3]), key=["id"])
    b.outputs[0].data_hash = a.outputs[0].data_hash  # the edit: B claims A's data hash
    c = compare_records(a, b)
    (o,) = c.outputs
    assert (o.data, c.verdict, c.exit_code) == ("unknown", "unknown", 1)
    assert o.reason == "the records disagree: equal data hashes, but column v; 1 of 16 key buckets differ"
    assert c.summary.startswith("data unknown: output o (the records disagree: equal data hashes, but column v")
    result = runner.invoke(app, ["lineage", "compare", _save(tmp_path, a, "ra"), _save(tmp_path, b, "rb")])
    assert result.exit_code == 1 and "same data" not in result.stdout, result.output
    # B's data hash is not the hash of its own buckets: no row read can be checked against B's record, so diff
    # names the contradiction (it read the rows and checked them against a hash B's rows cannot have).
    with pytest.raises(
        MalformedRecord, match=r"^run B \(b\): outputs\[0\]: the record contradicts itself: its data_hash"
    ):
        diff_runs(a, b)
    # A row count that contradicts the hash is caught too.
    b2 = _run(tmp_path, "b2", _frame([1, 2, 3]), key=["id"])
    b2.outputs[0].row_count = 4
    assert compare_records(a, b2).outputs[0].reason == "the records disagree: equal data hashes, but row counts 3 and 4"
    # Records that agree with themselves are unaffected.
    same = _run(tmp_path, "s", _frame([1, 2, 3]), key=["id"])
    assert compare_records(a, same).summary == "same data"


def test_a_type_change_alone_is_never_same_data(tmp_path):
    # Buckets sum rows, not types: equal buckets, different data hashes. diff read no row, so said "same data".
    ints = _frame([10, 20, 30])
    a = _run(tmp_path, "a", ints, key=["id"], folder="shared")
    b = _run(tmp_path, "b", ints.astype({"v": "int32"}), key=["id"], folder="other")
    assert a.outputs[0].buckets.data == b.outputs[0].buckets.data and a.outputs[0].data_hash != b.outputs[0].data_hash
    report = diff_runs(a, b)  # each at its own location: the type change is shown, every row read
    assert not report.same and report.diff is not None and report.diff.types
    assert report.note == "no bucket differs: every row is read and checked against its record"
    # B overwrote A's location (the usual overwrite): A's data is gone, which is said, never "same data"
    b_over = _run(tmp_path, "b", ints.astype({"v": "int32"}), key=["id"], folder="shared")
    with pytest.raises(DiffError, match=r"run A .* is no longer what the run recorded .*int64"):
        diff_runs(a, b_over)


@pytest.mark.parametrize("side", ["A", "B"])
def test_an_appended_output_is_not_diffed_against_its_record(tmp_path, side):
    # An append's record hashes the rows it added; the location holds more: diff said "overwritten since"
    a = _run(tmp_path, "a", _frame([1, 2]), key=["id"], folder="shared")
    b = _run(tmp_path, "b", _frame([3, 4], ids=[3, 4]), key=["id"], folder="shared")
    (a if side == "A" else b).outputs[0].mode = "append"
    with pytest.raises(DiffError, match=rf"run {side} \(.*\) wrote outputs.o with mode: append: its record hashes"):
        diff_runs(a, b)


@pytest.mark.parametrize("first", [True, False], ids=["copy-first", "copy-last"])
def test_a_dataset_named_twice_in_a_record_is_an_error_naming_file_and_field(tmp_path, first):
    """B lists output ``o`` twice, once with A's hash: compare said "same data" when the copy came last and diff
    when it came first, each picking another of the two."""
    a = _run(tmp_path, "a", _frame([1, 2, 3]), key=["id"])
    b = _run(tmp_path, "b", _frame([1, 5, 3]), key=["id"])
    b.outputs.insert(0 if first else 1, copy.deepcopy(a.outputs[0]))
    pa_, pb = _save(tmp_path, a, "ra"), _save(tmp_path, b, "rb")
    for cmd in (["lineage", "compare"], ["diff"]):
        result = runner.invoke(app, [*cmd, pa_, pb])
        assert result.exit_code == 2, (cmd, result.output)
        assert result.stderr == f"error: {pb}: outputs[1].name: 'o' is repeated (outputs[0] has it too)\n"
        assert result.stdout == ""
    with pytest.raises(MalformedRecord, match=r"outputs\[1\]\.name: 'o' is repeated"):
        compare_records(a, b)
    with pytest.raises(MalformedRecord, match="is repeated"):
        diff_runs(a, b)


def test_a_repeated_or_empty_key_is_refused_by_diff_tables():
    t, u = pa.table({"id": [1, 2], "v": [1, 2]}), pa.table({"id": [1, 2], "v": [1, 3]})
    with pytest.raises(DiffError, match="key column 'id' is repeated"):
        diff_tables(t, u, key=["id", "id"])
    with pytest.raises(DiffError, match="the key is empty"):
        diff_tables(t, u, key=[])


def test_keys_listed_in_another_order_still_use_the_buckets(tmp_path):
    """A key line sorts its columns, so buckets of [x, y] and of [y, x] are the same buckets: the diff read every
    row instead ("the runs' buckets use different keys"). Records written here store the key sorted; one
    written by another writer (or by hand) need not."""
    rows = 400
    fa = pd.DataFrame({"x": list(range(rows)), "y": [i % 7 for i in range(rows)], "v": [0] * rows})
    fb = fa.copy()
    fb.loc[5, "v"] = 9
    a = _run(tmp_path, "a", fa, key=["x", "y"], n=256)
    b = _run(tmp_path, "b", fb, key=["y", "x"], n=256)
    b.outputs[0].key = ["y", "x"]
    report = diff_runs(a, b)
    assert report.note == "1 of 256 key buckets differ"
    assert report.a["rows_read"] < 10 and report.b["rows_read"] < 10
    assert [(c.key, c.column, c.a, c.b) for c in report.diff.changed.cells] == [({"x": "5", "y": "5"}, "v", "0", "9")]


def test_buckets_of_another_profile_method_are_not_read_as_profile_v1(tmp_path):
    a = _run(tmp_path, "a", _frame([1, 2, 3]), key=["id"])
    b = _run(tmp_path, "b", _frame([1, 5, 3]), key=["id"])
    b.outputs[0].profile_method = "profile-v2"  # a later method: its bucket numbers need not mean the same
    report = diff_runs(a, b)
    assert report.note == "the records' profiles (profile-v1 and profile-v2) are not comparable: every row is read"
    assert report.a["rows_read"] == 3 and report.diff is not None and report.diff.changed.rows == 1


def test_data_overwritten_without_the_key_column_is_the_overwritten_error(tmp_path):
    """Run A's folder now holds a table without A's key column: the bucket filter failed with the profile's
    words ("key column 'id' is not a column of the table"), naming neither the run nor what happened."""
    a = _run(tmp_path, "a", _frame([1, 2, 3]), key=["id"])
    b = _run(tmp_path, "b", _frame([1, 5, 3]), key=["id"])
    pd.DataFrame({"other": [1]}).to_parquet(tmp_path / "a" / "part-0.parquet", index=False)
    with pytest.raises(DiffError) as err:
        diff_runs(a, b)
    assert str(err.value).startswith(f"run A (a): the data at {tmp_path / 'a'} is no longer what the run recorded")
    assert "key column 'id' is not a column" in str(err.value)
    result = runner.invoke(app, ["diff", _save(tmp_path, a, "ra"), _save(tmp_path, b, "rb")])
    assert result.exit_code == 2 and "is no longer what the run recorded" in result.stderr, result.output


def test_a_corrupt_parquet_file_in_place_of_a_runs_data_is_an_error(tmp_path):
    a = _run(tmp_path, "a", _frame([1, 2, 3]), key=["id"])
    b = _run(tmp_path, "b", _frame([1, 5, 3]), key=["id"])
    (tmp_path / "b" / "part-0.parquet").write_bytes(b"PAR1 not a parquet file PAR1")
    for engine in LOCAL_ENGINES:
        result = runner.invoke(app, ["diff", _save(tmp_path, a, "ra"), _save(tmp_path, b, "rb"), "-e", engine])
        assert result.exit_code == 2, result.output
        # its own reason, not "the data it recorded is gone": the file is there, and unreadable
        assert result.stderr.startswith("error: run B (b): cannot read o of run b: "), result.stderr
        assert "gone" not in result.stderr


def test_limit_zero_counts_everything_and_lists_nothing(tmp_path):
    _frame([1, 2, 3]).to_parquet(tmp_path / "a.parquet")
    _frame([1, 5, 3, 4]).to_parquet(tmp_path / "b.parquet")
    result = runner.invoke(app, ["diff", "--a", str(tmp_path / "a.parquet"), "--b", str(tmp_path / "b.parquet"),
                                 "--key", "id", "--limit", "0", "--json"])  # fmt: skip
    assert result.exit_code == 1, result.output
    d = json.loads(result.stdout)["diff"]
    assert (d["only_b"]["count"], d["only_b"]["rows"], d["changed"]["rows"], d["changed"]["cells"]) == (1, [], 1, [])
    text = runner.invoke(app, ["diff", "--a", str(tmp_path / "a.parquet"), "--b", str(tmp_path / "b.parquet"),
                               "--key", "id", "--limit", "0"])  # fmt: skip
    assert text.exit_code == 1 and "rows differ: 0 only in A, 1 only in B, 1 changed" in text.stdout


def delta_runs(tmp_path: Path) -> tuple[RunRecord, RunRecord]:
    """Two runs overwriting one Delta table (versions 0 and 1), then a third overwrite and a VACUUM that deletes
    the files of versions 0 and 1: time travel to them finds the log but not the data."""
    from deltalake import DeltaTable, write_deltalake

    where = tmp_path / "t"
    runs = []
    for i, frame in enumerate((_frame([1, 2, 3]), _frame([1, 5, 3]), _frame([7]))):
        write_deltalake(str(where), pa.Table.from_pandas(frame, preserve_index=False), mode="overwrite")
        prof = profile_frame(frame, key=["id"], buckets=16)
        out = DatasetRecord("o", format="delta", location=str(where), row_count=prof.hash.row_count, version=i,
                            schema_hash=prof.hash.schema_hash, data_hash=prof.hash.data_hash, hash_method="rows-v1",
                            schema=prof.hash.schema, **profile_fields(prof))  # fmt: skip
        runs.append(RunRecord(run_id=f"r{i}", usecase="u", package="p", task="t", backend="pandas", outputs=[out]))
    assert len(DeltaTable(str(where)).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False))
    return runs[0], runs[1]


@pytest.mark.parametrize("engine", ["pandas", "polars"])
def test_delta_time_travel_after_vacuum_is_a_clear_error(tmp_path, engine):
    a, b = delta_runs(tmp_path)
    result = runner.invoke(app, ["diff", _save(tmp_path, a, "ra"), _save(tmp_path, b, "rb"), "-e", engine])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: run A (r0): cannot read o of run r0 (the data it recorded is gone): ")
    assert "\n" not in result.stderr.rstrip("\n")


def test_the_text_output_keeps_each_heading_on_one_line_and_names_a_column_only_change(tmp_path):
    """Headings were table titles, wrapped to the width of a narrow table ("rows only in" / "A (1)"); a change of
    column type alone printed "rows differ: 0 only in A, 0 only in B, 0 changed"."""
    _frame([1, 2, 3]).to_parquet(tmp_path / "a.parquet")
    _frame([1, 5, 3, 4]).to_parquet(tmp_path / "b.parquet")
    args = ["diff", "--a", str(tmp_path / "a.parquet"), "--b", str(tmp_path / "b.parquet"), "--key", "id"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert "rows only in B (1)" in lines and "changed cells (1 rows; 1 cells shown)" in lines, result.stdout
    _frame([1, 2, 3]).astype({"v": "int32"}).to_parquet(tmp_path / "b.parquet")
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert lines_of(result.stdout)[:1] == [f"diff {tmp_path / 'b.parquet'}: columns differ, rows alike"]
    assert "  column v type int64 -> int32" in lines_of(result.stdout)


def lines_of(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_data_rewritten_with_other_column_types_is_the_overwritten_error(tmp_path):
    """Run A's folder rewritten with the same values as int32: its bucket numbers (sums of row lines, which hold
    no types) still matched the record, and the diff reported a type change neither run recorded."""
    a = _run(tmp_path, "a", _frame([1, 2, 3]), key=["id"])
    b = _run(tmp_path, "b", _frame([1, 5, 3]), key=["id"])
    _frame([1, 2, 3]).astype({"v": "int32"}).to_parquet(tmp_path / "a" / "part-0.parquet", index=False)
    with pytest.raises(DiffError) as err:
        diff_runs(a, b)
    assert str(err.value) == (
        f"run A (a): the data at {tmp_path / 'a'} is no longer what the run recorded (it was overwritten since) (its "
        'columns are struct<"id":int64,"v":int32>, the run recorded struct<"id":int64,"v":int64>); cannot diff it'
    )
