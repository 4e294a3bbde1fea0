"""``ubunye run`` and ``ubunye version`` through Typer's CliRunner."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

import ubunye
from tests.lineage.usecase import example_usecase, last, records
from tests.optional import POLARS_MISSING
from ubunye.cli.main import app
from ubunye.exceptions import ConfigError

runner = CliRunner()


@pytest.fixture
def uc(tmp_path):
    return example_usecase(tmp_path)


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_version():
    result = invoke("version")
    assert result.exit_code == 0 and result.stdout.strip() == ubunye.__version__


def test_run_several_tasks_in_order(uc):
    result = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "orders", "-t", "revenue", "-dt", "2026-12-01")
    assert result.exit_code == 0, result.output
    assert "shop/daily/orders: success" in result.stdout and "shop/daily/revenue: success" in result.stdout
    record = last(uc, "revenue")
    assert (record.entry_point, record.template_vars["dt"], record.status) == ("cli", "2026-12-01", "success")
    assert str(uc / ".ubunye/lineage/shop/daily/revenue") in result.stdout


def test_no_lineage_flag(uc):
    result = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "orders", "--no-lineage")
    assert result.exit_code == 0, result.output
    assert records(uc) == []


def test_mode_and_engine_flags(uc):
    result = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "orders", "-m", "prod", "--engine", "pandas")
    assert result.exit_code == 0, result.output
    assert last(uc, "orders").template_vars["mode"] == "prod"
    bad = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "orders", "--engine", "flink")
    assert bad.exit_code == 2


def test_domain_error_is_one_line_on_stderr_exit_2(uc):
    result = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "nope")
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no such task folder" in lines[0]
    assert "Traceback" not in result.output


def test_failed_run_is_a_domain_error_naming_the_record(uc):
    result = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "revenue")  # no orders table yet
    assert result.exit_code == 2
    assert "failed in read" in result.stderr and ".ubunye/lineage/shop/daily/revenue" in result.stderr
    assert last(uc, "revenue").status == "failed"


def test_debug_shows_the_traceback(uc):
    result = invoke("--debug", "run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "nope")
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigError)


def test_demo_runs_and_prints_the_records(capsys):
    from ubunye import demo

    assert demo.main(["2026-12-03"]) == 0
    out = capsys.readouterr().out
    for task in ("orders", "revenue", "customers"):
        assert f"shop/daily/{task}  success" in out
    assert '"record_version": 2' in out and "rows=500" in out


@pytest.fixture
def no_polars(monkeypatch):
    """polars as if not installed: ``import polars`` raises ModuleNotFoundError."""
    monkeypatch.setitem(sys.modules, "polars", None)
    monkeypatch.delitem(sys.modules, "ubunye.engines.polars_engine", raising=False)


@pytest.mark.parametrize("command", ["run", "hash"])
def test_engine_polars_without_polars_is_one_line_naming_the_extra(uc, no_polars, command):
    if command == "run":
        result = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "orders", "--engine", "polars")
    else:
        data = uc / "data.csv"
        data.write_text("a\n1\n")
        result = invoke("hash", data, "--engine", "polars")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert lines == [f"error: {POLARS_MISSING}"], result.output  # Python 3.10: no extra to name


def test_engine_spark_without_pyspark_is_one_line_naming_the_extra(uc, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # as if not installed: find_spec gives None
    result = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", "orders", "--engine", "spark")
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        "error: the spark engine needs pyspark: pip install 'ubunye[spark]' (or run where Spark is installed)"
    ], result.output
    assert not (uc / ".ubunye").exists() or not list((uc / ".ubunye").rglob("*.json"))
