"""``ubunye diff`` and what it may take from a record or a name: damaged buckets named with the record file, a hash
method this ubunye does not compute named as such, and ``--a``/``--b`` names that are neither a file here nor a
possible catalog table refused before any engine starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.test_diff_adversarial import _frame, _run, _save
from ubunye.cli.diff import diff_runs, diff_targets
from ubunye.cli.main import app
from ubunye.lineage.diff import DiffError
from ubunye.lineage.record import BucketsRecord, MalformedRecord

runner = CliRunner()


def test_damaged_bucket_data_names_the_record_file_and_field(tmp_path):
    """It said "run B: o.buckets: data is not base64 ..." without the record file."""
    a = _run(tmp_path, "a", _frame([1, 2, 3]), key=["id"])
    b = _run(tmp_path, "b", _frame([1, 5, 3]), key=["id"])
    b.outputs[0].buckets = BucketsRecord(n=16, data="AAAA")
    pa_, pb = _save(tmp_path, a, "ra"), _save(tmp_path, b, "rb")
    result = runner.invoke(app, ["diff", pa_, pb])
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr == f"error: {pb}: outputs[0].buckets: data is not base64 of zlib-compressed buckets\n"
    with pytest.raises(MalformedRecord) as err:  # without a file: the run is named instead
        diff_runs(a, b)
    assert str(err.value) == "run B (b): outputs[0].buckets: data is not base64 of zlib-compressed buckets"


def test_bucket_counts_contradicting_the_row_count_are_a_damaged_record_not_overwritten_data(tmp_path):
    a = _run(tmp_path, "a", _frame([1, 2, 3]), key=["id"])
    b = _run(tmp_path, "b", _frame([1, 5, 3]), key=["id"])
    a.outputs[0].row_count = 4
    pa_, pb = _save(tmp_path, a, "ra"), _save(tmp_path, b, "rb")
    result = runner.invoke(app, ["diff", pa_, pb])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {pa_}: outputs[0].buckets: the buckets hold 3 rows, the dataset's row_count is 4\n"


@pytest.mark.parametrize(("method", "named"), [("rows-v0", "hash method 'rows-v0'"),
                                                (None, "no hash method (a v1 record?)")])  # fmt: skip
def test_a_hash_method_this_ubunye_does_not_compute_is_named_not_called_overwritten(tmp_path, method, named):
    """No usable buckets, and run B's data hash made by another method: diff hashed B's rows with rows-v1, found
    another hash and said B's data "is no longer what the run recorded (it was overwritten since)"."""
    a = _run(tmp_path, "a", _frame([1, 2, 3]), key=["id"])
    b = _run(tmp_path, "b", _frame([1, 5, 3]), key=["id"])
    for d in (a.outputs[0], b.outputs[0]):
        d.buckets = None
    b.outputs[0].hash_method = method
    with pytest.raises(DiffError) as err:
        diff_runs(a, b)
    assert str(err.value) == (
        f"run B (b): the record of o names {named}, not one this ubunye reads (rows-v1), and no row buckets to check "
        "its rows by: cannot tell its rows"
    )
    result = runner.invoke(app, ["diff", _save(tmp_path, a, "ra"), _save(tmp_path, b, "rb")])
    assert result.exit_code == 2 and "overwritten" not in result.stderr, result.output
    assert f"names {named}, not one this ubunye reads" in result.stderr


def test_equal_hash_strings_of_two_hash_methods_are_not_the_same_data(tmp_path):
    """compare says "not comparable" for the hash methods rows-v1 and rows-v2; diff said "same data hash: no row
    differs" because the strings were equal. It reads the rows, by the buckets, and shows them."""
    a = _run(tmp_path, "a", _frame([1, 2, 3]), key=["id"])
    b = _run(tmp_path, "b", _frame([1, 5, 3]), key=["id"])
    b.outputs[0].data_hash, b.outputs[0].hash_method = a.outputs[0].data_hash, "rows-v2"
    report = diff_runs(a, b)
    assert not report.same and report.diff is not None and report.diff.changed.rows == 1
    assert report.note == "hash_method rows-v1 -> rows-v2; 1 of 16 key buckets differ"


# --- --a / --b: a file here, or a catalog table, or neither ---------------------------------------------------------


def _diff_without_spark(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``ubunye diff`` in a child whose Spark cannot start (no Java, no Spark home): a name taken for a catalog
    table would fail on the JVM, not with the error under test."""
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java"), "SPARK_HOME": str(tmp_path / "no-spark"),
           "PATH": os.path.dirname(sys.executable)}  # fmt: skip
    code = "from ubunye.cli.main import main; main()"
    return subprocess.run([sys.executable, "-c", code, "diff", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("old.parquet", "a name ending in .parquet is a file name, not a catalog table"),
        ("old.delta", "a name ending in .delta is a file name, not a catalog table"),
        ("day.csv.gz", "a name ending in .gz is a file name, not a catalog table"),
        ("old-data", "it is not spelled like a catalog table (db.table, each part letters, digits and _, or `quoted`)"),
    ],
)
def test_a_missing_file_name_is_no_such_file_or_table_without_starting_spark(tmp_path, target, why):
    """``old.delta`` (or ``old-data``) with no such file here was taken for a Spark catalog table: Spark started (or
    failed to) before the read said the table did not exist."""
    _frame([1]).to_parquet(tmp_path / "new.parquet")
    result = _diff_without_spark(tmp_path, "--a", target, "--b", "new.parquet")
    assert result.returncode == 2, result
    here = "no file or folder of that name here"
    assert result.stderr == f"error: --a: no such file or table: {target} ({here}, and {why})\n"
    assert result.stdout == ""


def test_a_table_name_with_a_file_engine_or_format_is_no_such_file_or_table(tmp_path):
    _frame([1]).to_parquet(tmp_path / "new.parquet")
    with pytest.raises(DiffError, match=r"^--a: no such file or table: sales \(.*table needs --engine spark\)$"):
        diff_targets("sales", str(tmp_path / "new.parquet"), engine_a="polars")
    with pytest.raises(DiffError, match=r"^--b: no such file or table: sales \(.*--format-b says it is a file"):
        diff_targets(str(tmp_path / "new.parquet"), "sales", fmt_b="parquet")


@pytest.mark.parametrize("target", ["sales", "db.sales", "cat.db.sales_2024", "`odd name.parquet`", "db.`x-y`"])
def test_names_spelled_like_tables_are_left_to_the_catalog(target):
    from ubunye.cli.diff import _maybe_table

    assert _maybe_table(target, None, None, "A") is True
    assert _maybe_table(target, None, "spark", "A") is True


@pytest.mark.spark
def test_a_name_that_is_neither_a_file_nor_a_table_says_so(spark, tmp_path, monkeypatch):
    """A name that could be a table but is not one: it was "A: cannot read old: input 'old': cannot read table at
    table:old: [TABLE_OR_VIEW_NOT_FOUND] ..."."""
    monkeypatch.chdir(tmp_path)
    _frame([1]).to_parquet(tmp_path / "new.parquet")
    with pytest.raises(DiffError) as err:
        diff_targets("ubunye_no_such_table", "new.parquet")
    assert str(err.value) == (
        "--a: no such file or table: ubunye_no_such_table (no file or folder of that name here, and the Spark "
        "catalog has no table of that name)"
    )
