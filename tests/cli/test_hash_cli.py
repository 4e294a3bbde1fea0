"""``ubunye hash`` on parquet, csv, json and Delta (written by deltalake), rows shuffled: the same hash."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from ubunye.cli.main import app
from ubunye.hashing import hash_frame

runner = CliRunner()

ROWS = pd.DataFrame(
    {
        "order_id": pd.array(range(1, 41), dtype="int64"),
        "customer": [f"c{i % 7:03d}" for i in range(40)],
        "amount_cents": pd.array([(i * 7919) % 10_000 for i in range(40)], dtype="int64"),
        "region": [["north", "south", "east", "west"][i % 4] for i in range(40)],
    }
)


def shuffled() -> pd.DataFrame:
    return ROWS.sample(frac=1.0, random_state=7).reset_index(drop=True)[
        ["region", "amount_cents", "customer", "order_id"]
    ]


def hash_of(*args):
    result = runner.invoke(app, ["hash", *[str(a) for a in args], "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def files(tmp_path):
    """The same rows as parquet (in order) and as csv, json lines and a deltalake Delta table (shuffled)."""
    from deltalake import write_deltalake

    ROWS.to_parquet(tmp_path / "orders.parquet", index=False)
    shuffled().to_csv(tmp_path / "orders.csv", index=False)
    shuffled().to_json(tmp_path / "orders.json", orient="records", lines=True)
    # as Arrow: deltalake takes a pandas frame only from pandas 2.2 on (Databricks 14.3 to 16.4 LTS run 1.5.3)
    write_deltalake(tmp_path / "orders_delta", pa.Table.from_pandas(shuffled()))
    parts = tmp_path / "parts"
    parts.mkdir()
    ROWS.iloc[:25].to_parquet(parts / "part-0.parquet", index=False)
    ROWS.iloc[25:].to_parquet(parts / "part-1.parquet", index=False)
    return tmp_path


def test_same_rows_in_another_order_and_format_hash_the_same(files):
    expected = hash_frame(ROWS).data_hash
    got = {
        name: hash_of(files / name) for name in ("orders.parquet", "orders.csv", "orders.json", "orders_delta", "parts")
    }
    assert {k: v["data_hash"] for k, v in got.items()} == dict.fromkeys(got, expected)
    assert [got[k]["format"] for k in got] == ["parquet", "csv", "json", "delta", "parquet"]
    assert all(v["row_count"] == 40 and v["hash_method"] == "rows-v1" and v["engine"] == "pandas" for v in got.values())
    assert got["orders.csv"]["schema"].startswith('struct<"amount_cents":int64,"customer":string')


def test_a_changed_cell_changes_the_hash(files):
    changed = ROWS.copy()
    changed.loc[3, "amount_cents"] += 1
    changed.to_parquet(files / "changed.parquet", index=False)
    assert hash_of(files / "changed.parquet")["data_hash"] != hash_of(files / "orders.parquet")["data_hash"]


def test_human_output_and_canonical_lines(files):
    result = runner.invoke(app, ["hash", str(files / "orders_delta"), "--show-lines", "2"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("target") and any(x.startswith("data hash    sha256:") for x in lines)
    assert "engine       pandas, hashed by the Python twin (Arrow)" in lines
    canonical = [x for x in lines if x.startswith("{")]
    assert len(canonical) == 2 and json.loads(canonical[0])["order_id"] == int(shuffled().order_id[0])
    assert hash_of(files / "orders.csv", "--show-lines", 3)["lines"][0].startswith('{"amount_cents":')


def test_format_can_be_given(files):
    (files / "orders.data").write_bytes((files / "orders.csv").read_bytes())
    assert hash_of(files / "orders.data", "--format", "csv")["data_hash"] == hash_frame(ROWS).data_hash


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere/orders.parquet"], "no such file or folder: nowhere/orders.parquet"),
        (["sales_table"], "a catalog table needs --engine spark"),
        # Names no file has and no catalog table could have fail before an engine starts (the rule diff uses too)
        (["old.delta", "--engine", "spark"], "no such file or folder: old.delta (a name ending in .delta is a file"),
        (["my-data", "--engine", "spark"], "no such file or folder: my-data (it is not spelled like a catalog table"),
        (["{tmp}/orders.data"], "cannot tell the format"),
        (["{tmp}/empty"], "no data files; give --format"),
        (["{tmp}/orders.csv", "--format", "delta"], "cannot read delta"),
        (["{tmp}/orders.csv", "--format", "xml"], "is not one of"),
        (["{tmp}/orders.csv", "--engine", "dask"], "is not one of"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(files, args, message):
    (files / "orders.data").write_text("a,b\n1,2\n")
    (files / "empty").mkdir()
    result = runner.invoke(app, ["hash", *[a.format(tmp=files) for a in args]])
    assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output


def test_hash_help_has_an_example():
    out = runner.invoke(app, ["hash", "--help"]).stdout
    assert "Example" in out and "--show-lines" in out and "PATH_OR_TABLE" in out


def test_spark_engine_gives_the_pandas_hash(spark, files):
    on_spark = hash_of(files / "orders_delta", "--engine", "spark")
    assert on_spark["engine"] == "spark" and on_spark["row_count"] == 40
    assert on_spark["data_hash"] == hash_of(files / "orders.parquet")["data_hash"]


@pytest.mark.parametrize("name", ["ubunye.cli.hash", "ubunye.cli.lineage", "ubunye.cli.render"])
def test_docstring_examples(name):
    import doctest
    import importlib

    assert doctest.testmod(importlib.import_module(name)).failed == 0
