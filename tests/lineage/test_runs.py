"""Whole runs on the pandas engine: identity across entry points, stable hashes, and every failure on disk."""

from __future__ import annotations

import json
import logging

import pandas as pd
import pyarrow as pa
import pytest

import ubunye
from tests.lineage.usecase import example_usecase, fingerprints, last, records, write_task
from ubunye import notebook
from ubunye.context import RunOptions
from ubunye.exceptions import EngineError, ExpectationError, TaskError
from ubunye.lineage import LineageRecorder, RecordStore
from ubunye.runner import run_pipeline, run_task

DT = "2026-12-01"


@pytest.fixture
def uc(tmp_path):
    usecase_dir = example_usecase(tmp_path)
    run_task(usecase_dir / "shop/daily/orders", dt=DT, lineage=False)
    return usecase_dir


def test_identity_is_the_same_from_every_entry_point(uc):
    from typer.testing import CliRunner

    from ubunye.cli.main import app

    task_dir = uc / "shop/daily/revenue"
    run_task(task_dir, dt=DT, lineage=True)
    run_pipeline(uc, "shop", "daily", ["revenue"], dt=DT, lineage=True)
    notebook.run(task_dir, dt=DT, engine="pandas")
    cli = CliRunner().invoke(app, ["run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "revenue", "-dt", DT])
    assert cli.exit_code == 0, cli.output
    found = records(uc, "revenue")
    assert sorted(r.entry_point for r in found) == ["cli", "notebook", "pipeline", "python"]
    assert {r.identity for r in found} == {("shop", "daily", "revenue")}
    folders = {p.parent for p in (uc / ".ubunye/lineage").rglob("*.json")}
    assert folders == {uc / ".ubunye/lineage/shop/daily/revenue"}
    assert len({tuple(fingerprints(r)) for r in found}) == 1


def test_record_v2_is_complete(uc):
    result = run_task(uc / "shop/daily/revenue", dt=DT, lineage=True)
    record = last(uc, "revenue")
    assert result.record_path == RecordStore(uc).path_of(record)
    assert (record.record_version, record.status, record.backend) == (2, "success", "pandas")
    assert record.ubunye_version == ubunye.__version__
    assert record.template_vars == {"dt": DT, "dtf": None, "mode": None}
    assert record.config_hash.startswith("sha256:") and record.code_hash.startswith("sha256:")
    assert record.environment["packages"]["pandas"] == pd.__version__ and record.environment_hash
    assert record.started_at <= record.ended_at and record.duration_seconds >= 0
    (inp,) = record.inputs
    (out,) = record.outputs
    assert (inp.name, inp.format, inp.row_count, inp.hash_method, inp.hash_error) == (
        "orders",
        "delta",
        500,
        "rows-v1",
        None,
    )
    assert inp.location == str(uc / "data/orders")  # relative path resolved against the usecase_dir
    assert (out.name, out.row_count, out.written, out.location) == ("revenue", 4, True, str(uc / f"data/revenue/{DT}"))
    assert out.data_hash.startswith("sha256:") and out.data_hash != out.schema_hash
    assert {(t.stage, t.name) for t in record.timings} >= {
        ("read", "orders"),
        ("transform", "revenue"),
        ("write", "revenue"),
    }
    assert all(e.passed for e in record.expectations) and len(record.expectations) == 5


def test_unchanged_rerun_gives_identical_hashes(uc):
    run_task(uc / "shop/daily/revenue", dt=DT)
    run_task(uc / "shop/daily/revenue", dt=DT)
    a, b = records(uc, "revenue")
    assert fingerprints(a) == fingerprints(b)
    assert (a.code_hash, a.config_hash, a.environment_hash) == (b.code_hash, b.config_hash, b.environment_hash)
    assert a.run_id != b.run_id


def test_one_changed_cell_changes_the_input_and_output_hash(uc):
    from deltalake import DeltaTable, write_deltalake

    run_task(uc / "shop/daily/revenue", dt=DT)
    table = DeltaTable(str(uc / "data/orders")).to_pandas()
    row = table.index[table["status"] != "cancelled"][0]
    table.loc[row, "amount_cents"] += 1
    # as Arrow: deltalake takes a pandas frame only from pandas 2.2 on (Databricks 14.3 to 16.4 LTS run 1.5.3)
    write_deltalake(str(uc / "data/orders"), pa.Table.from_pandas(table), mode="overwrite")
    run_task(uc / "shop/daily/revenue", dt=DT)
    a, b = records(uc, "revenue")
    assert a.inputs[0].data_hash != b.inputs[0].data_hash
    assert a.outputs[0].data_hash != b.outputs[0].data_hash
    assert a.inputs[0].schema_hash == b.inputs[0].schema_hash and a.inputs[0].row_count == b.inputs[0].row_count


def test_editing_a_py_file_changes_code_hash(uc):
    task_dir = uc / "shop/daily/orders"
    run_task(task_dir, dt=DT)
    helper = task_dir / "generator.py"
    helper.write_text(helper.read_text() + "\n# a comment\n")
    run_task(task_dir, dt=DT)
    a, b = records(uc, "orders")
    assert a.code_hash != b.code_hash
    assert fingerprints(a) == fingerprints(b)


def test_hash_inputs_false_leaves_inputs_unhashed(uc):
    no_inputs = RunOptions.resolve(hash_inputs=False)
    run_task(uc / "shop/daily/revenue", dt=DT, monitors=[LineageRecorder()], options=no_inputs)
    record = last(uc, "revenue")
    (inp,) = record.inputs
    assert (inp.row_count, inp.data_hash, inp.hash_error) == (None, None, None)
    assert record.hash_inputs is False and record.outputs[0].data_hash is not None


def test_record_written_at_start_as_running(uc):
    seen = []

    class Peek:
        def task_start(self, context, **_):
            seen.append(json.loads(RecordStore(uc).path("shop", "daily", "revenue", context.run_id).read_text()))

    run_task(uc / "shop/daily/revenue", dt=DT, lineage=True, monitors=[Peek()])
    assert seen[0]["status"] == "running" and seen[0]["code_hash"]
    assert last(uc, "revenue").status == "success"


def test_no_lineage_leaves_no_record(uc):
    run_task(uc / "shop/daily/revenue", dt=DT, lineage=False)
    assert records(uc, "revenue") == []


# --- failures: each leaves a failed record on disk that says where -------------------------------------------


def _failed(uc, task, stage):
    record = last(uc, task)
    assert record.status == "failed"
    assert record.error is not None and record.error.stage == stage, record.error
    assert record.ended_at is not None
    return record


def test_read_failure(uc):
    cfg = {
        "CONFIG": {
            "inputs": {"orders": {"format": "parquet", "path": "data/missing"}},
            "outputs": {"o": {"format": "parquet", "path": "data/o"}},
            "transform": {"type": "sql", "query": "SELECT * FROM orders"},
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "bad_read", cfg)
    with pytest.raises(TaskError, match="failed in read"):
        run_task(uc / "shop/daily/bad_read")
    record = _failed(uc, "bad_read", "read")
    assert record.error.name == "orders" and "data/missing" in record.error.message
    assert record.inputs[0].data_hash is None and "failed in read" in record.inputs[0].hash_error
    assert [(t.stage, t.name) for t in record.timings] == [("read", "orders")]


FAILING_TASK = """
from ubunye import Task

class Boom(Task):
    def transform(self, sources):
        raise ZeroDivisionError("no revenue to divide")
"""


def test_transform_failure(uc):
    cfg = {
        "CONFIG": {
            "inputs": {"orders": {"format": "delta", "path": "data/orders"}},
            "outputs": {"o": {"format": "parquet", "path": "data/o"}},
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "boom", cfg, FAILING_TASK)
    with pytest.raises(TaskError, match="failed in transform") as err:
        run_task(uc / "shop/daily/boom")
    assert isinstance(err.value.__cause__, ZeroDivisionError)
    record = _failed(uc, "boom", "transform")
    assert record.error.type == "ZeroDivisionError" and "no revenue" in record.error.message
    assert record.inputs[0].data_hash is not None  # what was read is still recorded
    assert record.outputs[0].written is False and record.outputs[0].data_hash is None
    assert [t.stage for t in record.timings] == ["read", "hash", "transform"]


def test_wrong_output_names_are_a_clear_error(uc):
    code = (
        "from ubunye import Task\n\n"
        "class T(Task):\n    def transform(self, sources):\n        return {'other': sources['orders']}\n"
    )
    cfg = {
        "CONFIG": {
            "inputs": {"orders": {"format": "delta", "path": "data/orders"}},
            "outputs": {"o": {"format": "parquet", "path": "data/o"}},
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "names", cfg, code)
    with pytest.raises(TaskError, match=r"missing \['o'\].*not configured \['other'\]"):
        run_task(uc / "shop/daily/names")
    _failed(uc, "names", "transform")


def test_write_failure(uc):
    # A table whose column deltalake would cast the new rows into (1.5 stored as 1): refused inside the write, once
    # the rows are hashed and checked (a file where the folder goes is refused before the run now).
    import pyarrow as pa
    from deltalake import write_deltalake

    write_deltalake(str(uc / "data/o"), pa.table({"x": pa.array([1], pa.int64())}))
    cfg = {
        "CONFIG": {
            "inputs": {"orders": {"format": "delta", "path": "data/orders"}},
            "outputs": {"o": {"format": "delta", "path": "data/o"}},
            "transform": {"type": "sql", "query": "SELECT 1.5 AS x FROM orders"},
            "expectations": {"o": {"row_count": {"min": 1}}},
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "bad_write", cfg)
    with pytest.raises(TaskError, match="failed in write"):
        run_task(uc / "shop/daily/bad_write")
    record = _failed(uc, "bad_write", "write")
    assert record.outputs[0].written is False and record.outputs[0].data_hash is not None
    assert record.expectations[0].passed and record.timings[-1].stage == "write"


def test_expectation_failure_blocks_the_write_and_is_recorded(uc):
    cfg = {
        "CONFIG": {
            "inputs": {"orders": {"format": "delta", "path": "data/orders"}},
            "outputs": {"o": {"format": "parquet", "path": "data/o"}},
            "transform": {"type": "sql", "query": "SELECT * FROM orders"},
            "expectations": {
                "o": {
                    "row_count": {"min": 1000},
                    "unique": ["region"],
                    "accepted_values": {"status": ["paid"]},
                    "expression": "quantity > 0",
                    "not_null": ["no_such_column"],
                }
            },
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "strict", cfg)
    with pytest.raises(ExpectationError, match="expectation"):
        run_task(uc / "shop/daily/strict")
    record = _failed(uc, "strict", "expectations")
    got = {(e.rule, e.column): (e.passed, e.observed) for e in record.expectations}
    assert got[("row_count", None)] == (False, 500)
    assert got[("unique", "region")] == (False, 4)
    assert got[("accepted_values", "status")][0] is False and got[("expression", None)] == (True, 0)
    broken = next(e for e in record.expectations if e.column == "no_such_column")
    assert broken.passed is False and broken.error
    assert not (uc / "data/o").exists() and record.outputs[0].written is False


def test_warn_expectation_does_not_fail(uc):
    cfg = {
        "CONFIG": {
            "inputs": {"orders": {"format": "delta", "path": "data/orders"}},
            "outputs": {"o": {"format": "parquet", "path": "data/o"}},
            "transform": {"type": "sql", "query": "SELECT * FROM orders"},
            "expectations": {"o": {"severity": "warn", "row_count": {"max": 1}}},
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "lenient", cfg)
    assert run_task(uc / "shop/daily/lenient").status == "success"
    (e,) = last(uc, "lenient").expectations
    assert (e.passed, e.severity, e.observed) == (False, "warn", 500)


UNHASHABLE = """
import pandas as pd
from ubunye import Task

class Odd(Task):
    def transform(self, sources):
        return {"o": pd.DataFrame({"id": [1, 2], "nothing": pd.Series([None, None], dtype=object)})}
"""


def test_hash_failure_is_honest(uc):
    cfg = {"CONFIG": {"outputs": {"o": {"format": "parquet", "path": "data/odd"}}, "monitors": ["lineage"]}}
    write_task(uc, "odd", cfg, UNHASHABLE)
    assert run_task(uc / "shop/daily/odd").status == "success"
    (out,) = last(uc, "odd").outputs
    assert out.data_hash is None and out.schema_hash is None and out.row_count is None
    assert "HashError" in out.hash_error and "nothing" in out.hash_error
    assert out.written is True


# --- monitors and secrets ------------------------------------------------------------------------------------


def test_monitor_calling_rule(uc, caplog):
    calls = {}

    class Old:  # written for 0.7: knows nothing of inputs/expectations/timings
        def task_end(self, status, outputs):
            calls["old"] = (status, len(outputs))

    class New:
        def task_end(self, status, inputs, timings, expectations):
            calls["new"] = (status, len(inputs), bool(timings))

    class Any_:
        def task_end(self, **kwargs):
            calls["any"] = sorted(kwargs)

    class Broken:
        name = "broken-monitor"

        def task_start(self, **kwargs):
            raise RuntimeError("monitor bug")

    with caplog.at_level(logging.WARNING, logger="ubunye"):
        result = run_task(uc / "shop/daily/revenue", dt=DT, monitors=[Old(), New(), Any_(), Broken()])
    assert result.status == "success"
    assert calls["old"] == ("success", 1) and calls["new"] == ("success", 1, True)
    assert {"inputs", "expectations", "timings", "outputs", "status", "error"} <= set(calls["any"])
    assert "broken-monitor" in caplog.text and "monitor bug" in caplog.text


def test_secrets_never_reach_the_record(uc, monkeypatch):
    monkeypatch.setenv("ORDERS_TOKEN", "tok-123-secret")
    cfg = {
        "CONFIG": {
            "inputs": {
                "orders": {
                    "format": "delta",
                    "path": "data/orders",
                    "storage_options": {"AWS_SECRET_ACCESS_KEY": "{{ env.ORDERS_TOKEN }}", "token": "abc-secret"},
                }
            },
            "outputs": {"o": {"format": "parquet", "path": "data/o", "options": {"password": "pw-secret"}}},
            "transform": {"type": "sql", "query": "SELECT * FROM orders"},
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "secret", cfg)
    # the pandas engine refuses the option before the run (it would ignore it), naming it but not its value
    with pytest.raises(EngineError, match=r"output 'o': the pandas engine does not apply option password='\*\*\*'"):
        run_task(uc / "shop/daily/secret")
    del cfg["CONFIG"]["outputs"]["o"]["options"]
    write_task(uc, "secret", cfg)
    run_task(uc / "shop/daily/secret")
    text = RecordStore(uc).path_of(last(uc, "secret")).read_text()
    for secret in ("tok-123-secret", "abc-secret"):
        assert secret not in text
    assert '"token": "***"' in text


def test_credentials_in_a_url_location_are_redacted(uc):
    cfg = {
        "CONFIG": {
            "inputs": {"x": {"format": "parquet", "path": "s3://AKIAXX:sup3rsecret@bucket/x?sig=s1gn3d"}},
            "outputs": {"o": {"format": "parquet", "path": "data/o"}},
            "transform": {"type": "sql", "query": "SELECT * FROM x"},
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "url", cfg)
    with pytest.raises(TaskError):
        run_task(uc / "shop/daily/url")
    path = RecordStore(uc).path_of(last(uc, "url"))
    text = path.read_text()
    assert "sup3rsecret" not in text and "s1gn3d" not in text
    assert last(uc, "url").inputs[0].location == "s3://AKIAXX:***@bucket/x?sig=***"


def test_sample_fraction_in_config_runs_with_a_warning(uc, caplog):
    task_dir = uc / "shop/daily/revenue"
    cfg = (
        (task_dir / "config.yaml")
        .read_text()
        .replace("    - lineage", "    - {type: lineage, params: {sample_fraction: 0.1}}")
    )
    (task_dir / "config.yaml").write_text(cfg)
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        run_task(task_dir, dt=DT)
    assert "deprecated" in caplog.text
    assert last(uc, "revenue").outputs[0].row_count == 4


def test_pipeline_stops_at_the_first_failure(uc):
    write_task(
        uc,
        "boom",
        {"CONFIG": {"outputs": {"o": {"format": "parquet", "path": "data/o"}}, "monitors": ["lineage"]}},
        FAILING_TASK,
    )
    with pytest.raises(TaskError):
        run_pipeline(uc, "shop", "daily", ["boom", "revenue"], dt=DT)
    assert records(uc, "revenue") == []


def test_failed_input_expectation_stops_before_the_transform(uc):
    cfg = {
        "CONFIG": {
            "inputs": {"orders": {"format": "delta", "path": "data/orders"}},
            "outputs": {"o": {"format": "parquet", "path": "data/o"}},
            "transform": {"type": "sql", "query": "SELECT * FROM orders"},
            "expectations": {"orders": {"accepted_values": {"region": ["north"]}}},
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "gate", cfg)
    with pytest.raises(ExpectationError):
        run_task(uc / "shop/daily/gate")
    record = _failed(uc, "gate", "expectations")
    (e,) = record.expectations
    assert (e.target, e.rule, e.column, e.passed) == ("inputs.orders", "accepted_values", "region", False)
    assert e.observed > 0
    assert "transform" not in [t.stage for t in record.timings]


UNHASHABLE_INPUT = """
import pandas as pd
from ubunye import Task

class Count(Task):
    def transform(self, sources):
        return {"o": pd.DataFrame({"n": [len(sources["odd"])]})}
"""


def test_an_input_that_cannot_be_hashed_is_honest(uc, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = uc / "data/odd"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"t": pa.array([1, 2], pa.time64("us"))}), folder / "part-0.parquet")  # no rows-v1 name
    cfg = {
        "CONFIG": {
            "inputs": {"odd": {"format": "parquet", "path": "data/odd"}},
            "outputs": {"o": {"format": "parquet", "path": "data/o"}},
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "odd_in", cfg, UNHASHABLE_INPUT)
    assert run_task(uc / "shop/daily/odd_in").status == "success"
    record = last(uc, "odd_in")
    (inp,) = record.inputs
    assert inp.data_hash is None and inp.schema_hash is None and inp.hash_error
    assert record.outputs[0].data_hash is not None


HELPER_TASK = """
from helper import VALUE
import pandas as pd
from ubunye import Task

class T(Task):
    def transform(self, sources):
        return {"o": pd.DataFrame({"v": [VALUE]})}
"""


def test_each_task_imports_its_own_helper_modules(uc):
    results = []
    for task, value in (("one", 1), ("two", 2), ("one", 3)):
        task_dir = write_task(uc, task, {"CONFIG": {"outputs": {"o": {"format": "parquet", "path": f"data/{task}"}}}})
        (task_dir / "transformations.py").write_text(HELPER_TASK)
        (task_dir / "helper.py").write_text(f"VALUE = {value}\n")
        results.append(run_task(task_dir).outputs["o"]["v"].tolist())
    assert results == [[1], [2], [3]]


# --- accepted_values that names only null ---------------------------------------------------------------------------


def _only_null_accepted(frame: object, engine_name: str, spark: object = None) -> tuple[bool, int | None]:
    from ubunye import expectations as expect
    from ubunye.config.model import Expectations
    from ubunye.engines import get_engine

    engine = get_engine(engine_name, spark=spark) if spark is not None else get_engine(engine_name)
    (result,) = expect.check(Expectations("outputs.o", {"accepted_values": {"s": [None]}}), frame, engine)
    return result.passed, result.observed


# Two values, one null: only null is accepted, so the two values are the offending rows (nulls always pass).
ROWS = {"s": ["a", None, "b"]}


@pytest.mark.parametrize("engine_name", ["pandas", "polars"])
def test_accepted_values_of_only_null_refuses_every_value(engine_name):
    frame = pd.DataFrame(ROWS) if engine_name == "pandas" else pytest.importorskip("polars").DataFrame(ROWS)
    assert _only_null_accepted(frame, engine_name) == (False, 2)


def test_accepted_values_of_only_null_refuses_every_value_on_spark(spark):
    assert _only_null_accepted(spark.createDataFrame(pd.DataFrame(ROWS)), "spark", spark) == (False, 2)


@pytest.mark.parametrize("engine_name", ["pandas", "polars"])
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_accepted_values_that_sql_has_no_literal_for_fail_the_rule(engine_name, value):
    # repr(inf) in the SQL named a column: a frame holding a column 'inf' passed a rule its values break
    from ubunye import expectations as expect
    from ubunye.config.model import Expectations
    from ubunye.engines import get_engine

    rows = {"v": [1.0, 2.0], "inf": [1.0, 2.0], "nan": [1.0, 2.0]}
    frame = pd.DataFrame(rows) if engine_name == "pandas" else pytest.importorskip("polars").DataFrame(rows)
    rule = Expectations("outputs.o", {"accepted_values": {"v": [value, 1.0]}})
    (result,) = expect.check(rule, frame, get_engine(engine_name))
    assert result.passed is False and "not a finite number" in (result.error or ""), result


def test_accepted_values_given_as_numpy_scalars_are_sql_literals():
    # repr(np.float64(1.5)) is "np.float64(1.5)" on numpy 2: the rule's SQL did not parse
    import numpy as np

    from ubunye import expectations as expect
    from ubunye.config.model import Expectations
    from ubunye.engines import get_engine

    rule = Expectations("outputs.o", {"accepted_values": {"v": [np.float64(1.5), np.float64(2.0)]}})
    (result,) = expect.check(rule, pd.DataFrame({"v": [1.5, 2.0, 3.0]}), get_engine("pandas"))
    assert (result.passed, result.observed, result.error) == (False, 1, None), result


# --- an exception with no message ------------------------------------------------------------------------------------

SILENT = """
from ubunye import Task

class Silent(Task):
    def transform(self, sources):
        raise {exc}
"""


@pytest.mark.parametrize("exc", ["MemoryError", "AssertionError", "ValueError"])
def test_an_exception_with_no_message_is_named_by_its_type(uc, exc):
    cfg = {"CONFIG": {"outputs": {"o": {"format": "parquet", "path": "data/o"}}, "monitors": ["lineage"]}}
    write_task(uc, "silent", cfg, SILENT.format(exc=f"{exc}()"))
    with pytest.raises(TaskError) as err:
        run_task(uc / "shop/daily/silent")
    assert str(err.value).startswith(f"task shop/daily/silent failed in transform: {exc} (record: "), str(err.value)
    record = _failed(uc, "silent", "transform")
    assert (record.error.type, record.error.message) == (exc, exc)
