"""compare_records over the checked-in records: verdicts per dataset, what moved, the exit code."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.lineage.fixtures import record
from ubunye.lineage.compare import PackageMove, compare_datasets, compare_records
from ubunye.lineage.record import DatasetRecord, RunRecord


def _by_name(diffs):
    return {d.name: d for d in diffs}


def test_same_data_on_another_machine_names_the_package_moves():
    c = compare_records(record("revenue-old-env"), record("revenue-a"))
    assert (c.verdict, c.exit_code) == ("same", 0)
    assert c.packages == [PackageMove("pandas", "2.2.3", "3.1.1"), PackageMove("pyarrow", "17.0.0", "26.0.1")]
    assert c.summary == "same data; what moved: environment (pandas 2.2.3 -> 3.1.1, pyarrow 17.0.0 -> 26.0.1)"
    assert c.code.status == c.config.status == "unchanged" and c.environment.status == "changed"


def test_rerun_is_same_data_and_nothing_moved():
    c = compare_records(record("revenue-a"), record("revenue-same"))
    assert (c.summary, c.exit_code, c.moved) == ("same data", 0, [])
    assert [d.data for d in c.outputs + c.inputs] == ["unchanged", "unchanged"]
    assert [t.stage for t in c.timings][:1] == ["read"] and c.duration.a and c.duration.b  # informative only


def test_new_input_day_is_a_change_explained_by_input_and_template_variable():
    c = compare_records(record("revenue-a"), record("revenue-1202"))
    assert (c.verdict, c.exit_code) == ("changed", 1)
    assert _by_name(c.outputs)["revenue"].data == "changed" and _by_name(c.inputs)["orders"].data == "changed"
    assert c.summary.startswith("data changed: output revenue; what moved: ")
    assert "input orders" in c.moved and "template variables (dt 2026-12-01 -> 2026-12-02)" in c.moved
    assert "code" not in c.moved


def test_code_change_that_fails_an_expectation():
    c = compare_records(record("customers-good"), record("customers-bug"))
    assert c.code.status == "changed" and c.moved[0] == "code"
    assert c.status.a == "success" and c.status.b == "failed"
    (exp,) = c.expectations
    assert (exp.target, exp.rule, exp.passed_a, exp.passed_b) == ("outputs.customers", "expression", True, False)
    assert any("run B failed in expectations" in n for n in c.notes)


def test_the_same_rows_from_a_run_that_failed_are_not_said_to_be_the_same_data():
    # "same data", exit 0, when run B failed an error expectation and wrote nothing
    out = DatasetRecord("o", data_hash="sha256:1", hash_method="rows-v1", written=True)
    done = RunRecord(run_id="a", usecase="u", package="p", task="t", status="success", outputs=[out])
    failed = replace(done, run_id="b", status="failed",
                     outputs=[replace(done.outputs[0], written=False)])  # fmt: skip
    for a, b, said in ((done, failed, "run B failed"), (failed, done, "run A failed")):
        c = compare_records(a, b)
        assert (c.verdict, c.exit_code) == ("same", 1)
        assert c.summary == f"same rows computed, but {said}: its outputs may not hold them", c.summary
    c = compare_records(done, replace(failed, status="running"), states=("success", "interrupted"))
    assert c.exit_code == 1 and c.summary.startswith("same rows computed, but run B interrupted"), c.summary
    assert (compare_records(done, replace(done, run_id="c")).summary, compare_records(done, done).exit_code) == (
        "same data",
        0,
    )


def test_an_input_not_hashed_on_one_side_is_named_not_nothing_moved():
    # A changed output beside an input hashed in run A only (hash_inputs off in run B) said "nothing recorded
    # moved": the input the change may come from was in the table only.
    out = DatasetRecord("o", data_hash="sha256:1", hash_method="rows-v1", written=True)
    src = DatasetRecord("orders", data_hash="sha256:9", hash_method="rows-v1")
    a = RunRecord(run_id="a", usecase="u", package="p", task="t", status="success", outputs=[out], inputs=[src])
    b = replace(a, run_id="b", outputs=[replace(out, data_hash="sha256:2")], inputs=[DatasetRecord("orders")])
    c = compare_records(a, b)
    assert (c.verdict, c.exit_code, c.moved) == ("changed", 1, [])
    assert c.summary == "data changed: output o; inputs not compared: input orders (no data hash in run B: not hashed)"
    same = compare_records(a, replace(b, outputs=[out]))
    assert same.summary == "same data"  # the outputs' data decide; an input not compared changes nothing there
    moved = compare_records(replace(a, code_hash="sha256:c1"), replace(b, code_hash="sha256:c2"))
    assert moved.summary == (
        "data changed: output o; what moved: code; "
        "inputs not compared: input orders (no data hash in run B: not hashed)"
    )


def test_v1_against_v2_is_not_comparable_never_changed_or_unchanged():
    c = compare_records(record("revenue-v1"), record("revenue-a"))
    out = _by_name(c.outputs)["revenue"]
    assert (out.data, out.reason) == ("not comparable", "hash_method none -> rows-v1")
    assert (c.verdict, c.exit_code) == ("not comparable", 1)
    assert c.summary.startswith("data not comparable: output revenue (hash_method none -> rows-v1)")
    assert _by_name(c.inputs)["orders"].data == "unknown"  # v1 never hashed inputs
    assert c.code.status == c.config.status == c.environment.status == "unknown" and c.packages == []
    assert "ubunye (0.6.2 -> 0.7.0)" in c.moved and "backend (spark -> pandas)" in c.moved
    assert c.record_versions == (1, 2)


def test_two_v1_records_with_equal_hashes_are_not_comparable():
    a = record("revenue-v1")
    c = compare_records(a, replace(a, run_id="other"))
    assert c.verdict == "not comparable" and c.exit_code == 1


def test_two_missing_hashes_are_unknown_with_the_hash_error():
    c = compare_records(record("durations-a"), record("durations-b"))
    out = _by_name(c.outputs)["durations"]
    assert out.data == "unknown" and out.hash_a is None and out.hash_b is None
    assert out.reason.startswith("no data hash in either run: HashError: ") and "since_midnight" in out.reason
    assert _by_name(c.inputs)["orders"].reason == "no data hash in either run: not hashed"
    assert (c.verdict, c.exit_code) == ("unknown", 1)
    assert c.summary.startswith("data unknown: output durations (no data hash)")


def test_dataset_rules():
    hashed = DatasetRecord("o", data_hash="sha256:1", hash_method="rows-v1", schema_hash="sha256:s")
    assert compare_datasets("output", hashed, replace(hashed, data_hash="sha256:2")).data == "changed"
    assert compare_datasets("output", hashed, replace(hashed, hash_method="rows-v2")).data == "not comparable"
    assert compare_datasets("output", hashed, DatasetRecord("o", hash_error="boom")).data == "unknown"
    assert compare_datasets("output", DatasetRecord("o"), DatasetRecord("o")).data == "unknown"
    assert compare_datasets("output", hashed, replace(hashed, schema_hash="sha256:t")).schema == "changed"
    assert compare_datasets("output", None, hashed).data == "added"
    assert compare_datasets("output", hashed, None).data == "removed"


def test_an_added_output_is_a_change_and_no_outputs_is_unknown():
    base = RunRecord(run_id="a", usecase="u", package="p", task="t", status="success")
    extra = replace(base, run_id="b", outputs=[DatasetRecord("new", data_hash="sha256:1", hash_method="rows-v1")])
    c = compare_records(base, extra)
    assert c.summary.startswith("data changed: output new (added)") and c.exit_code == 1
    assert compare_records(base, replace(base, run_id="c")).verdict == "unknown"


@pytest.mark.parametrize("state", ["interrupted", "failed", "running"])
def test_a_dataset_missing_from_a_run_that_did_not_finish_is_unknown_not_removed(state):
    # A run killed before its first checkpoint records no datasets: compare said "output o (removed)", a change.
    done = RunRecord(run_id="a", usecase="u", package="p", task="t", status="success",
                     outputs=[DatasetRecord("o", data_hash="sha256:1", hash_method="rows-v1")],
                     inputs=[DatasetRecord("i", data_hash="sha256:2", hash_method="rows-v1")])  # fmt: skip
    cut = replace(done, run_id="b", status="running", outputs=[], inputs=[])
    c = compare_records(done, cut, states=("success", state))
    assert [(d.name, d.data) for d in (*c.outputs, *c.inputs)] == [("o", "unknown"), ("i", "unknown")]
    assert c.summary.startswith(
        f"data unknown: output o (not in run B's record: the run {state} before it was recorded)"
    ), c.summary
    assert c.exit_code == 1
    back = compare_records(cut, done, states=(state, "success"))
    assert [d.data for d in back.outputs] == ["unknown"] and "run A's record" in back.summary
    # A finished run without a dataset the other has: that is a change
    assert compare_records(done, replace(cut, status="success"), states=("success", "success")).outputs[0].data == (
        "removed"
    )


def test_to_dict_is_json():
    c = compare_records(record("revenue-v1"), record("customers-bug"))
    data = json.loads(json.dumps(c.to_dict()))
    assert data["exit_code"] == 1 and data["summary"] == c.summary and "different tasks" in " ".join(data["notes"])


def test_docstring_examples():
    import doctest

    import ubunye.lineage.compare as module

    assert doctest.testmod(module).failed == 0
