"""``ubunye diff``: its rows equal a brute-force full join done here, it reads only differing buckets, and data
overwritten since a run is an error, never a wrong diff (docs/rows-v1.md section 12)."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.lineage.usecase import example_usecase, last, records
from ubunye.cli.diff import diff_runs, diff_targets
from ubunye.cli.main import app
from ubunye.lineage.diff import DiffError, diff_tables
from ubunye.runner import run_pipeline

runner = CliRunner()


def _table(seed: int, n: int = 400) -> pd.DataFrame:
    rng = random.Random(seed)
    return pd.DataFrame(
        {
            "id": pd.array(range(1, n + 1), dtype="int64"),
            "region": pd.array([rng.choice(["n", "s", None]) for _ in range(n)], dtype="string"),
            "amount": pd.array([rng.randint(0, 9) if rng.random() > 0.1 else None for _ in range(n)], dtype="Int64"),
            "score": [rng.choice([0.5, float("nan"), 1.25]) for _ in range(n)],
        }
    )


def _changed(base: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Random edits: cells changed (NaN to null too), rows removed, rows added, one row duplicated."""
    rng = random.Random(seed)
    out = base.copy()
    for i in rng.sample(range(len(out)), 5):
        column = rng.choice(["region", "amount", "score"])
        out.loc[i, column] = {"region": "e", "amount": 99, "score": 7.5}[column]
    out = out.drop(index=rng.sample(range(len(out)), 3))
    extra = pd.DataFrame({"id": pd.array([1001, 1002], dtype="int64"), "region": pd.array(["w", None], dtype="string"),
                          "amount": pd.array([1, None], dtype="Int64"), "score": [0.5, 2.0]})  # fmt: skip
    return pd.concat([out, extra, out.iloc[[0]]], ignore_index=True)


def _cell(value: object) -> object:
    """A cell as the brute force compares it: null, NaN and numbers apart, written out with Python's own repr."""
    if value is None or value is pd.NA:
        return "null"
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, float):
        return repr(float(value))
    return repr(int(value)) if isinstance(value, int | np.integer) else repr(str(value))


def _file_rows(path: Path) -> list[tuple]:
    """The rows as the file holds them (pandas wrote NaN of a numpy float column as null), read by pyarrow."""
    import pyarrow.parquet as pq

    return [tuple(_cell(r[c]) for c in ("id", "region", "amount", "score")) for r in pq.read_table(path).to_pylist()]


def _brute_force(a: list[tuple], b: list[tuple]) -> tuple[Counter, Counter, set]:
    """Keys (column 0) only in A / only in B (multisets of whole rows for repeated keys), (key, column) changed."""
    rows_a, rows_b = defaultdict(list), defaultdict(list)
    for r in a:
        rows_a[r[0]].append(r)
    for r in b:
        rows_b[r[0]].append(r)
    only_a, only_b, changed = Counter(), Counter(), set()
    columns = ["id", "region", "amount", "score"]
    for k in set(rows_a) | set(rows_b):
        ra, rb = rows_a.get(k, []), rows_b.get(k, [])
        if len(ra) == 1 and len(rb) == 1:
            changed |= {(int(k), c) for c, x, y in zip(columns, ra[0], rb[0], strict=True) if x != y}
        else:
            only_a.update(Counter(ra) - Counter(rb))
            only_b.update(Counter(rb) - Counter(ra))
    return only_a, only_b, changed


def _ours(rows: list[dict[str, str]]) -> Counter:
    # Canonical texts back to the brute force's cells (the test tables hold ints, strings and floats only).
    def cell(text: str) -> object:
        if text == "null":
            return "null"
        if text == '"NaN"':
            return "NaN"
        value = json.loads(text)
        return repr(value)

    return Counter(tuple(cell(r[c]) for c in ("id", "region", "amount", "score")) for r in rows)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_keyed_diff_of_two_parquet_files_equals_a_full_join(tmp_path, seed):
    a, b = _table(seed), _changed(_table(seed), seed)
    a.to_parquet(tmp_path / "a.parquet")
    b.to_parquet(tmp_path / "b.parquet")
    report = diff_targets(str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), key=["id"], limit=10_000)
    only_a, only_b, changed = _brute_force(_file_rows(tmp_path / "a.parquet"), _file_rows(tmp_path / "b.parquet"))
    d = report.diff
    assert _ours(d.only_a.rows) == only_a and d.only_a.count == sum(only_a.values())
    assert _ours(d.only_b.rows) == only_b and d.only_b.count == sum(only_b.values())
    assert {(int(c.key["id"]), c.column) for c in d.changed.cells} == changed
    assert d.changed.rows == len({k for k, _ in changed})
    # Only the rows of differing buckets were read, far fewer than the table.
    assert report.a["rows_read"] < len(a) / 4 and report.b["rows_read"] < len(b) / 4


def test_keyless_diff_is_a_multiset_difference(tmp_path):
    a = _table(5, 200)
    b = pd.concat([a.iloc[3:], a.iloc[[10, 10]]], ignore_index=True)  # 3 rows gone, one row now three times
    a.to_parquet(tmp_path / "a.parquet")
    b.to_parquet(tmp_path / "b.parquet")
    d = diff_targets(str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), limit=1000).diff
    rows_a, rows_b = Counter(_file_rows(tmp_path / "a.parquet")), Counter(_file_rows(tmp_path / "b.parquet"))
    assert _ours(d.only_a.rows) == rows_a - rows_b
    assert _ours(d.only_b.rows) == rows_b - rows_a


def test_equal_tables_in_another_order_are_the_same(tmp_path):
    a = _table(7)
    a.to_parquet(tmp_path / "a.parquet")
    a.iloc[::-1][["score", "id", "amount", "region"]].to_parquet(tmp_path / "b.parquet")
    report = diff_targets(str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), key=["id"])
    assert report.same and report.diff is None


def test_columns_and_types_that_differ_are_named():
    import pyarrow as pa

    a = pa.table({"id": [1, 2], "x": pa.array([1, 2], pa.int32()), "gone": [1, 1]})
    b = pa.table({"id": [1, 2], "x": pa.array([1, 3], pa.int64()), "new": ["a", "b"]})
    d = diff_tables(a, b, key=["id"])
    assert (d.columns_only_a, d.columns_only_b, d.types) == (["gone"], ["new"], {"x": ("int32", "int64")})
    assert [(c.key, c.column, c.a, c.b) for c in d.changed.cells] == [({"id": "2"}, "x", "2", "3")]


@pytest.mark.parametrize(
    ("key", "words"),
    [
        (["nope"], "a.parquet: profile-v1: key column 'nope' is not a column of the table"),
        (["id", "id"], "key column 'id' is repeated"),
    ],
)
def test_a_key_that_is_not_a_column_is_a_clear_error(tmp_path, key, words):
    _table(1, 10).to_parquet(tmp_path / "a.parquet")
    _table(2, 10).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(DiffError) as err:
        diff_targets(str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), key=key)
    assert words in str(err.value)


# --- two runs -------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The example run twice, order 8's amount corrected in between (as make demo does)."""
    uc = example_usecase(tmp_path_factory.mktemp("diff"))
    run_pipeline(uc, "shop", "daily", ["orders", "revenue"], dt="2026-12-01", engine="pandas")
    gen = uc / "shop" / "daily" / "orders" / "generator.py"
    plain = '"amount_cents": rng.integers(199, 25_000, rows).astype("int64"),'
    assert plain in gen.read_text()
    gen.write_text(gen.read_text().replace(plain, plain.replace('rng.integers', 'bump(rng.integers').replace(
        '"int64"),', '"int64")),')) + "\n\ndef bump(a):\n    a[7] += 100\n    return a\n")  # fmt: skip
    run_pipeline(uc, "shop", "daily", ["orders", "revenue"], dt="2026-12-01", engine="pandas")
    return uc


def test_the_runs_records_name_the_changed_column_buckets_and_versions(two_runs):
    from ubunye.lineage.compare import compare_records

    a, b = records(two_runs, "revenue")[-2:]
    c = compare_records(a, b)
    assert c.summary == (
        "data changed: output revenue (column revenue_cents; 1 of 256 key buckets); what moved: input orders "
        "(Delta version 0 -> 1; column amount_cents; 1 of 256 key buckets)"
    )
    orders = records(two_runs, "orders")
    assert [r.outputs[0].version for r in orders] == [0, 1]
    assert b.inputs[0].key == ["order_id"] and b.outputs[0].key == ["region"]


def test_diff_of_two_runs_reads_delta_at_the_recorded_versions(two_runs):
    a, b = records(two_runs, "orders")[-2:]
    report = diff_runs(a, b)
    assert (report.a["version"], report.b["version"]) == (0, 1)
    cells = [(c.key, c.column) for c in report.diff.changed.cells]
    assert cells == [({"order_id": "8"}, "amount_cents")]
    assert report.diff.only_a.count == report.diff.only_b.count == 0
    assert report.a["rows_read"] < 20  # one bucket of 500 orders


def test_a_plain_path_overwritten_since_is_an_error_not_a_wrong_diff(two_runs):
    a, b = records(two_runs, "revenue")[-2:]
    with pytest.raises(DiffError, match="is no longer what the run recorded"):
        diff_runs(a, b)


def test_cli_exit_codes_and_json(two_runs):
    where = ["-d", str(two_runs), "-u", "shop", "-p", "daily"]
    changed = runner.invoke(app, ["diff", "latest~1", "latest", "-t", "orders", "--json", *where])
    assert changed.exit_code == 1, changed.output
    data = json.loads(changed.stdout)
    assert data["diff"]["changed"]["rows"] == 1 and data["buckets"]["n"] == 256
    same = runner.invoke(app, ["diff", "latest~1", "latest", "-t", "orders", "--dataset", "outputs.orders",
                               "-d", str(two_runs), "-u", "shop", "-p", "daily", "--key", "order_id"])  # fmt: skip
    assert same.exit_code == 1
    gone = runner.invoke(app, ["diff", "latest~1", "latest", "-t", "revenue", *where])
    assert gone.exit_code == 2 and gone.stderr.startswith("error: run A"), gone.output
    missing = runner.invoke(app, ["diff", "latest~1", "latest", "-t", "orders", "--dataset", "outputs.nope", *where])
    assert missing.exit_code == 2 and "has no dataset 'outputs.nope'" in missing.stderr
    last_orders = last(two_runs, "orders")
    itself = runner.invoke(app, ["diff", last_orders.run_id, last_orders.run_id, "-t", "orders", *where])
    assert itself.exit_code == 0 and "same data" in itself.stdout


def test_cli_usage_errors(tmp_path: Path):
    for args, words in (
        (["diff"], "give two runs"),
        (["diff", "--a", "x"], "give both --a and --b"),
        (["diff", "--a", "x", "--b", "y", "--engine", "flink"], "'flink' is not one of"),
        (["diff", "--a", str(tmp_path / "no"), "--b", str(tmp_path / "no")], "no such file or folder"),
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert words in result.output, (args, result.output)
