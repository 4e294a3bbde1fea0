"""Records that contradict themselves or the readers: facts a data hash covers that differ under one hash, NaN in
a free field, a rule recorded twice, a key of many names, run ids the CLI would read as something else, and an
unreadable record that may be the newest run."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace

import pytest

from ubunye.exceptions import RecordError
from ubunye.hashing.digest import schema_hash
from ubunye.lineage import RecordStore, RunRecord
from ubunye.lineage.compare import compare_datasets, compare_records
from ubunye.lineage.record import ColumnRecord, DatasetRecord, ExpectationResult, MalformedRecord

H1, FP = "sha256:" + "11" * 32, "sha256:" + "f0" * 32
#: One output as a real run records it: data hash, schema hash (of its schema string, as compare checks) and schema
#: string, one column's profile.
OUT = DatasetRecord("o", row_count=3, schema_hash=schema_hash('struct<"v":int64>'), data_hash=H1,
                    hash_method="rows-v1", schema='struct<"v":int64>',
                    columns={"v": ColumnRecord(type="int64", nulls=0, fingerprint=FP)},
                    profile_method="profile-v1")  # fmt: skip


def _with_column(**changes: object) -> DatasetRecord:
    assert OUT.columns is not None
    return replace(OUT, columns={"v": replace(OUT.columns["v"], **changes)})


# --- 1: equal data hashes, facts the hash covers differ --------------------------------------------------------------
@pytest.mark.parametrize(
    ("b", "why"),
    [
        (replace(OUT, schema_hash="sha256:" + "ab" * 32), "schema hashes differ"),
        (replace(OUT, schema='struct<"v":int32>'), "schemas differ"),
        (_with_column(type="float64"), "column v: types int64 and float64 under one fingerprint"),
        (_with_column(nulls=1), "column v: nulls 0 and 1 under one fingerprint"),
    ],
    ids=["schema_hash", "schema", "column-type", "column-nulls"],
)
def test_equal_data_hashes_with_contradicting_schema_facts_are_unknown(b: DatasetRecord, why: str) -> None:
    """The data hash covers the schema (docs/rows-v1.md section 9) and a fingerprint its column's type and values
    (section 12.1): compare said "same data", exit 0, while its schema column said changed."""
    d = compare_datasets("output", OUT, b)
    assert (d.data, d.reason) == ("unknown", f"the records disagree: equal data hashes, but {why}")
    a_run = RunRecord(run_id="a", usecase="u", package="p", task="t", status="success", outputs=[OUT])
    c = compare_records(a_run, replace(a_run, run_id="b", outputs=[b]))
    assert (c.verdict, c.exit_code) == ("unknown", 1)
    assert c.summary.startswith(f"data unknown: output o (the records disagree: equal data hashes, but {why}")
    assert compare_datasets("output", OUT, replace(OUT)).data == "unchanged"  # a record agreeing with itself


# --- 8: NaN in a free field ------------------------------------------------------------------------------------------
def test_nan_in_the_environment_is_refused_naming_the_field() -> None:
    """environment.python_version = NaN in both records gave "what moved: environment (python_version nan -> nan)"."""
    data = RunRecord(run_id="r", usecase="u", package="p", task="t").to_dict()
    data["environment"] = {"python_version": float("nan"), "spark": {"version": float("inf")}}
    with pytest.raises(MalformedRecord, match=r"^/x/r\.json: environment\.(python_version|spark\.version): expected "
                       r"text or a finite number, got (NaN|Infinity)$"):  # fmt: skip
        RunRecord.from_dict(json.loads(json.dumps(data)), "/x/r.json")


def test_compare_calls_nan_the_same_as_nan() -> None:
    """A record built in code (or a config read from YAML ``.nan``) holds NaN: equal values are never "changed"."""
    nan = float("nan")
    a = RunRecord(run_id="a", usecase="u", package="p", task="t", environment={"python_version": nan},
                  config={"params": {"x": nan}}, config_hash=H1)  # fmt: skip
    b = replace(a, run_id="b", environment={"python_version": float("nan")}, config={"params": {"x": float("nan")}})
    c = compare_records(a, b)
    assert c.moved == [] and c.config_keys == []
    assert [(f.name, f.status) for f in c.environment_facts] == [("python_version", "unchanged")]


# --- 9: one rule recorded twice --------------------------------------------------------------------------------------
def _rule(passed: bool, params: object = None) -> ExpectationResult:
    return ExpectationResult("outputs.o", "expression", passed, 0 if passed else 2, None, params)


def test_every_result_of_a_rule_recorded_twice_is_compared() -> None:
    """A run records one ``expression`` result per expression, all with one target, rule and column: a dict kept
    the last, so compare said "expectations: no outcome changed" while show said "1 passed, 1 failed"."""
    base = RunRecord(run_id="a", usecase="u", package="p", task="t", expectations=[_rule(True, "v > 0")])
    twice = replace(base, run_id="b", expectations=[_rule(False, "v < 9"), _rule(True, "v > 0")])
    (moved,) = compare_records(base, twice).expectations
    assert (moved.passed_a, moved.passed_b, moved.params) == (None, False, "v < 9")
    # Without params to tell them apart (two checks of one rule), outcomes are counted, not overwritten.
    same = replace(base, expectations=[_rule(True), _rule(False)])
    (moved,) = compare_records(replace(base, expectations=[_rule(True)]), same).expectations
    assert (moved.passed_a, moved.passed_b) == (None, False)
    assert compare_records(same, replace(same, expectations=[_rule(False), _rule(True)])).expectations == []
    # A rule whose params changed (a bound moved) is still one rule whose outcome changed.
    old, new = _rule(True, {"min": 1}), replace(_rule(False, {"min": 5}), rule="row_count")
    (moved,) = compare_records(replace(base, expectations=[replace(old, rule="row_count")]),
                               replace(base, expectations=[new])).expectations  # fmt: skip
    assert (moved.rule, moved.passed_a, moved.passed_b, moved.params) == ("row_count", True, False, {"min": 5})


# --- 6: a key of many names ------------------------------------------------------------------------------------------
def test_a_repeated_key_name_among_many_is_named() -> None:
    """The check of repeated key names was quadratic (60,000 names: 29 s); it must still name the repeat."""
    names = [f"c{i}" for i in range(60_000)]
    data = RunRecord(run_id="r", usecase="u", package="p", task="t").to_dict()
    data["outputs"] = [{"name": "o", "key": [*names, "c7"]}]
    with pytest.raises(MalformedRecord, match=r"^/x/r\.json: outputs\[0\]\.key\[60000\]: 'c7' is repeated "
                       r"\(outputs\[0\]\.key\[7\] has it too\)$"):  # fmt: skip
        RunRecord.from_dict(data, "/x/r.json")


# --- 7: run ids the CLI cannot address -------------------------------------------------------------------------------
@pytest.mark.parametrize("run_id", ["latest", "latest~2", "x.json", "~r"])
def test_the_store_refuses_run_ids_the_readers_would_read_as_something_else(tmp_path, run_id: str) -> None:
    """``latest`` was written, and ``show latest`` then showed another run; ``x.json`` and ``~r`` read as files."""
    store = RecordStore(tmp_path)
    with pytest.raises(RecordError, match=rf"^bad run_id '{run_id}' of u/p/t: (reads as|ends with|starts with)"):
        store.write(RunRecord(run_id=run_id, usecase="u", package="p", task="t"))
    assert not (tmp_path / ".ubunye").exists()
    assert store.write(RunRecord(run_id="latest-ish", usecase="u", package="p", task="t")).name == "latest-ish.json"


# --- 3: an unreadable record that may be the newest ------------------------------------------------------------------
def _two_runs(tmp_path) -> tuple[RecordStore, list[str]]:
    store = RecordStore(tmp_path)
    ids = ["20261201T020000Z-a", "20261202T020000Z-b"]
    for i, run_id in enumerate(ids):
        at = f"2026-12-0{i + 1}T02:00:00Z"
        store.write(RunRecord(run_id=run_id, usecase="u", package="p", task="t", status="success", started_at=at,
                              ended_at=at))  # fmt: skip
    return store, ids


def test_latest_never_passes_over_an_unreadable_record_that_may_be_newer(tmp_path) -> None:
    """The newest record, truncated, sorted as the earliest: ``latest`` was the second newest, no word said."""
    store, ids = _two_runs(tmp_path)
    newest = store.folder("u", "p", "t") / "20261203T020000Z-c.json"
    newest.write_text('{"run_id": "20261203T020000Z-c", "status": "succ')  # written now: after both runs ended
    for ref in ("latest", "latest~1", "latest~2"):
        with pytest.raises(RecordError, match=rf"^'{ref}' may be a run whose record cannot be read: {newest}: corrupt"):
            store.resolve(ref, "u", "p", "t")
    assert store.resolve(ids[1]).record.run_id == ids[1]  # by id, the readable runs are still there
    # A file last written before the run chosen ended cannot be a later run: it is passed over.
    old = time.mktime((2026, 11, 1, 0, 0, 0, 0, 0, 0))
    os.utime(newest, (old, old))
    assert store.resolve("latest", "u", "p", "t").record.run_id == ids[1]
    assert store.resolve("latest~1", "u", "p", "t").record.run_id == ids[0]


def test_a_success_with_an_output_not_written_is_refused_naming_the_field() -> None:
    """A success record whose output said written: false compared as "same data", exit 0: a run succeeds only once
    every output is committed, so the record contradicts itself."""
    run = RunRecord(run_id="r", usecase="u", package="p", task="t", status="success",
                    outputs=[replace(OUT, written=True), replace(OUT, name="p", written=False)])  # fmt: skip
    with pytest.raises(MalformedRecord, match=r"^/x/r\.json: outputs\[1\]\.written: false in a run whose status is"):
        RunRecord.from_dict(json.loads(json.dumps(run.to_dict())), "/x/r.json")
    for fine in (replace(run, status="failed"), replace(run, outputs=[replace(OUT, written=None)])):
        assert RunRecord.from_dict(json.loads(json.dumps(fine.to_dict())), "/x/r.json") == fine
