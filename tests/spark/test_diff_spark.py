"""Profiles and ``ubunye diff`` on Spark: a Spark-written Delta table against a pandas-written parquet folder,
Delta versions a Spark run reads and writes, and a catalog table diffed directly."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from tests.spark.conftest import arrow_frame
from ubunye.cli.diff import diff_targets
from ubunye.lineage.diff import diff_tables


def _orders(seed: int, n: int = 300) -> pd.DataFrame:
    rng = random.Random(seed)
    return pd.DataFrame({
        "order_id": pd.array(range(1, n + 1), dtype="int64"),
        "region": pd.array([rng.choice(["n", "s", None]) for _ in range(n)], dtype="string"),
        "cents": pd.array([rng.randint(0, 999) for _ in range(n)], dtype="int64"),
    })  # fmt: skip


def _edited(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    out.loc[[4, 77], "cents"] = [5, 6]
    out.loc[10, "region"] = None
    out = out.drop(index=[20, 21])
    extra = pd.DataFrame({"order_id": pd.array([900], dtype="int64"), "region": pd.array(["w"], dtype="string"),
                          "cents": pd.array([1], dtype="int64")})  # fmt: skip
    return pd.concat([out, extra], ignore_index=True)


def test_spark_delta_against_pandas_parquet_equals_the_full_diff(spark: Any, tmp_path: Path) -> None:
    base = _orders(3)
    frame = arrow_frame(spark, pa.Table.from_pandas(base, preserve_index=False))  # 3.5: CANNOT_MERGE_TYPE on pandas 3
    frame.repartition(3).write.format("delta").save(str(tmp_path / "a"))
    edited = _edited(base)
    edited.to_parquet(tmp_path / "b.parquet")
    report = diff_targets(str(tmp_path / "a"), str(tmp_path / "b.parquet"), engine_a="spark", key=["order_id"],
                          limit=1000)  # fmt: skip
    # The same diff over every row of both tables, with nothing filtered: what the buckets must not lose.
    arrow = lambda f: pa.Table.from_pandas(f, preserve_index=False)  # noqa: E731
    full = diff_tables(arrow(base), arrow(edited), key=["order_id"], limit=1000)
    d = report.diff
    assert d is not None
    ids = lambda rows: sorted(r["order_id"] for r in rows)  # noqa: E731  (Spark's row order is its own)
    assert ids(d.only_a.rows) == ids(full.only_a.rows) == ["21", "22"]
    assert ids(d.only_b.rows) == ids(full.only_b.rows) == ["900"]
    got = {(c.key["order_id"], c.column, c.a, c.b) for c in d.changed.cells}
    assert got == {(c.key["order_id"], c.column, c.a, c.b) for c in full.changed.cells}
    region = "null" if pd.isna(base.region[10]) else f'"{base.region[10]}"'
    want = {("5", "cents", str(base.cents[4]), "5"), ("78", "cents", str(base.cents[77]), "6")}
    assert got == want | ({("11", "region", region, "null")} if region != "null" else set())
    assert report.a["rows_read"] < len(base) // 4


def test_a_spark_run_records_the_delta_versions_it_read_and_wrote(spark: Any, tmp_path: Path) -> None:
    from tests.lineage.usecase import example_usecase, records
    from ubunye.lineage.compare import compare_records
    from ubunye.runner import run_pipeline

    uc = example_usecase(tmp_path)
    for _ in range(2):
        run_pipeline(uc, "shop", "daily", ["orders", "revenue"], dt="2026-12-01", engine="spark")
    orders = records(uc, "orders")
    assert [r.outputs[0].version for r in orders] == [0, 1]
    revenue = records(uc, "revenue")
    assert [r.inputs[0].version for r in revenue] == [0, 1]
    assert revenue[-1].outputs[0].columns is not None and revenue[-1].outputs[0].buckets is not None
    c = compare_records(*revenue)
    # Same rows written twice: the same data; the input's version moved but not its rows, so nothing moved.
    assert c.summary == "same data"
    assert (c.inputs[0].data, c.inputs[0].versions()) == ("unchanged", "Delta version 0 -> 1")
    # The pandas engine gives the same profile for the same data: records of both engines compare equal.
    run_pipeline(uc, "shop", "daily", ["revenue"], dt="2026-12-01", engine="pandas")
    both = compare_records(revenue[-1], records(uc, "revenue")[-1])
    assert both.outputs[0].data == "unchanged"
    assert both.outputs[0].columns is not None and not both.outputs[0].columns.changed
    assert both.outputs[0].buckets is not None and both.outputs[0].buckets.differing == []
