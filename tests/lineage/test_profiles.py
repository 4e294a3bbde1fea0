"""A dataset's profile in its record (ubunye.lineage.profiles) and what compare says of two profiles."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from ubunye.cli.main import app
from ubunye.lineage.compare import compare_records
from ubunye.lineage.profiles import buckets_record, compare_buckets, compare_columns, packed_buckets
from ubunye.lineage.record import BucketsRecord, ColumnRecord, DatasetRecord, MalformedRecord, RunRecord

# well-formed digests (a record with another is malformed): what they hash plays no part here
H1, H2, H9 = ("sha256:" + c * 64 for c in "129")


def _packed(rows: list[tuple[int, int, int]]) -> bytes:
    # Section 12.2's packed form written out here with struct, apart from the code under test.
    return b"".join(struct.pack(">QQQ", *r) for r in rows)


def _record(run_id: str, out: DatasetRecord) -> RunRecord:
    return RunRecord(run_id=run_id, usecase="u", package="p", task="t", status="success", outputs=[out])


def test_buckets_round_trip_through_a_stored_record():
    rows = [(i, (i * 7919) % 2**64, 2**64 - 1 - i) for i in range(256)]
    out = DatasetRecord("o", data_hash=H1, hash_method="rows-v1", buckets=buckets_record(_packed(rows)),
                        key=["id"], profile_method="profile-v1")  # fmt: skip
    loaded = RunRecord.from_dict(_record("a", out).to_dict())
    assert packed_buckets(loaded.outputs[0].buckets) == _packed(rows)
    assert loaded.outputs[0].key == ["id"]


@pytest.mark.parametrize("size", [0, 23, 24 * 3, 24 * 65_536 * 2])
def test_packed_buckets_of_a_wrong_size_are_refused(size):
    with pytest.raises(ValueError, match="24 bytes times a power of two"):
        buckets_record(bytes(size))


@pytest.mark.parametrize(
    ("data", "n", "words"),
    [
        ("not base64!", 4, "not base64"),
        (base64.b64encode(b"plain bytes").decode(), 4, "not base64 of zlib"),
        (base64.b64encode(zlib.compress(bytes(24 * 3))).decode(), 4, "72 bytes of buckets, 96 expected"),
        # A bomb: a megabyte of zeros claimed to be 1 bucket is cut at 25 bytes, never inflated whole, so its size
        # is not known: "more than".
        (base64.b64encode(zlib.compress(bytes(1 << 20))).decode(), 1, "holds more than 24 bytes of buckets, 24 "),
        (base64.b64encode(zlib.compress(bytes(24 * 4 + 1000))).decode(), 4, "holds more than 96 bytes of buckets"),
        # One byte too many: the whole stream was read, so its real size is said.
        (base64.b64encode(zlib.compress(bytes(3073))).decode(), 128, "holds 3073 bytes of buckets, 3072 expected"),
        (base64.b64encode(zlib.compress(bytes(25))).decode(), 1, "holds 25 bytes of buckets, 24 expected"),
        (base64.b64encode(zlib.compress(bytes(96))[:-4]).decode(), 4, "data is cut short"),
    ],
)
def test_damaged_bucket_data_is_a_malformed_record_naming_the_field(data, n, words):
    with pytest.raises(MalformedRecord) as err:
        packed_buckets(BucketsRecord(n=n, data=data), "outputs[0].buckets")
    assert str(err.value).startswith("outputs[0].buckets: ")
    assert words in str(err.value)


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("buckets", {"n": 3.5, "data": ""}, "outputs[0].buckets.n: expected int"),
        ("buckets", {"n": 0, "data": ""}, "outputs[0].buckets.n: expected a number >= 1"),
        ("buckets", {"n": 131072, "data": ""}, "outputs[0].buckets.n: expected a number <= 65536"),
        ("buckets", {"n": 4}, "outputs[0].buckets.data: missing"),
        ("columns", {"a": {"type": "int64", "nulls": -1, "fingerprint": "x"}}, "columns.a.nulls: expected a number"),
        ("columns", {"a": {"type": "int64", "nulls": 0}}, "columns.a.fingerprint: missing"),
        ("columns", ["a"], "outputs[0].columns: expected dict"),
        ("key", "id", "outputs[0].key: expected list"),
    ],
)
def test_profile_fields_of_a_stored_record_are_type_checked(field, value, words):
    data = _record("a", DatasetRecord("o")).to_dict()
    data["outputs"][0][field] = value
    with pytest.raises(MalformedRecord) as err:
        RunRecord.from_dict(data, "/r/a.json")
    assert words in str(err.value)


def test_records_without_profiles_load_and_compare_as_before():
    old = {"run_id": "a", "usecase": "u", "package": "p", "task": "t", "status": "success", "record_version": 2,
           "outputs": [{"name": "o", "data_hash": H1, "hash_method": "rows-v1"}]}  # fmt: skip
    new = {**old, "run_id": "b", "outputs": [{"name": "o", "data_hash": H2, "hash_method": "rows-v1"}]}
    a, b = RunRecord.from_dict(old), RunRecord.from_dict(new)
    assert a.outputs[0].columns is None and a.outputs[0].buckets is None
    c = compare_records(a, b)
    assert c.summary == "data changed: output o; nothing recorded moved"
    assert c.outputs[0].columns is None and c.outputs[0].buckets is None


def _col(fp: str, t: str = "int64") -> ColumnRecord:
    return ColumnRecord(type=t, nulls=0, fingerprint=fp)


def test_compare_names_changed_added_removed_columns_and_differing_buckets():
    base = [(1, 10, 20), (2, 30, 40), (0, 0, 0), (5, 6, 7)]
    moved = [(1, 10, 20), (2, 31, 40), (0, 0, 0), (4, 6, 8)]
    a = DatasetRecord("revenue", data_hash=H1, hash_method="rows-v1", profile_method="profile-v1", key=["id"],
                      columns={"id": _col("f1"), "amount": _col("f2"), "gone": _col("f3")},
                      buckets=buckets_record(_packed(base)))  # fmt: skip
    b = DatasetRecord("revenue", data_hash=H2, hash_method="rows-v1", profile_method="profile-v1", key=["id"],
                      columns={"id": _col("f1"), "amount": _col("f9", "float64"), "new": _col("f4")},
                      buckets=buckets_record(_packed(moved)))  # fmt: skip
    cols = compare_columns(a, b)
    assert (cols.changed, cols.unchanged, cols.added, cols.removed) == (["amount"], ["id"], ["new"], ["gone"])
    assert cols.types == {"amount": ("int64", "float64")}
    assert compare_buckets(a, b).differing == [1, 3]
    c = compare_records(_record("a", a), _record("b", b))
    assert c.summary.startswith(
        "data changed: output revenue (column amount; added new; removed gone; 2 of 4 key buckets)"
    )


def test_buckets_of_another_count_or_key_are_not_compared_and_say_so():
    a = DatasetRecord("o", data_hash=H1, hash_method="rows-v1", profile_method="profile-v1",
                      buckets=buckets_record(bytes(24 * 4)), key=["id"], columns={})  # fmt: skip
    for b in (
        DatasetRecord("o", data_hash=H2, hash_method="rows-v1", profile_method="profile-v1",
                      buckets=buckets_record(bytes(24 * 8)), key=["id"], columns={}),
        DatasetRecord("o", data_hash=H2, hash_method="rows-v1", profile_method="profile-v1",
                      buckets=buckets_record(bytes(24 * 4)), key=["other"], columns={}),
    ):  # fmt: skip
        d = compare_records(_record("a", a), _record("b", b)).outputs[0]
        assert d.buckets is None
        assert "buckets not comparable" in (d.profile_note or "")


def test_a_damaged_bucket_field_keeps_the_data_verdict_and_says_why():
    good = DatasetRecord("o", data_hash=H1, hash_method="rows-v1", profile_method="profile-v1",
                         buckets=buckets_record(bytes(24 * 4)), columns={})  # fmt: skip
    bad = DatasetRecord("o", data_hash=H2, hash_method="rows-v1", profile_method="profile-v1",
                        columns={})  # fmt: skip
    bad.buckets = BucketsRecord(n=4, data="AAAA")
    c = compare_records(_record("a", good), _record("b", bad))
    d = c.outputs[0]
    assert d.data == "changed"
    why = "run B: outputs[0].buckets: data is not base64 of zlib-compressed buckets"
    assert (d.profile_note, d.buckets_error) == (why, why)
    # The summary said "data changed: output o; nothing recorded moved", as if the buckets had been read.
    assert c.summary == f"data changed: output o; buckets could not be read: output o ({why}); nothing recorded moved"


def test_damaged_buckets_are_named_with_the_record_file_in_the_summary(tmp_path):
    """Through the CLI: the summary names the file and field of the damaged buckets; the verdict (and exit
    status) stay what the data hashes say."""
    rows = [(1, 10, 20), (0, 0, 0), (0, 0, 0), (0, 0, 0)]
    good = DatasetRecord("o", row_count=1, data_hash=H1, hash_method="rows-v1", profile_method="profile-v1",
                         buckets=buckets_record(_packed(rows)), columns={})  # fmt: skip
    paths = []
    for run_id, buckets in (("a", good.buckets), ("b", BucketsRecord(n=4, data="AAAA"))):
        r = _record(run_id, replace(good, buckets=buckets))
        r.inputs = [
            DatasetRecord(
                "i",
                data_hash=H9,
                hash_method="rows-v1",
            )
        ]
        path = tmp_path / f"{run_id}.json"
        path.write_text(json.dumps(r.to_dict()))
        paths.append(str(path))
    result = CliRunner().invoke(app, ["lineage", "compare", *paths, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    why = f"run B: {paths[1]}: outputs[0].buckets: data is not base64 of zlib-compressed buckets"
    assert out["summary"] == f"same data; buckets could not be read: output o ({why})"
    assert out["outputs"][0]["buckets_error"] == why


def test_bucket_counts_that_do_not_add_up_to_the_row_count_are_a_damaged_record():
    rows = [(1, 10, 20), (1, 0, 0)]
    a = DatasetRecord("o", row_count=2, data_hash=H1, hash_method="rows-v1", profile_method="profile-v1",
                      buckets=buckets_record(_packed(rows)), columns={})  # fmt: skip
    b = DatasetRecord("o", row_count=3, data_hash=H2, hash_method="rows-v1", profile_method="profile-v1",
                      buckets=buckets_record(_packed(rows)), columns={})  # fmt: skip
    d = compare_records(_record("a", a), _record("b", b)).outputs[0]
    assert d.buckets is None
    assert d.buckets_error == "run B: outputs[0].buckets: the buckets hold 2 rows, the dataset's row_count is 3"


def test_keys_listed_in_another_order_are_the_same_buckets():
    """A key line sorts its columns (docs/rows-v1.md section 12.2): compare said "buckets not comparable" for the
    keys [y, x] and [x, y] (diff already compared them sorted)."""
    base = [(1, 10, 20), (2, 30, 40)]
    moved = [(1, 10, 20), (2, 31, 40)]
    a = DatasetRecord("o", data_hash=H1, hash_method="rows-v1", profile_method="profile-v1", key=["y", "x"],
                      buckets=buckets_record(_packed(base)), columns={})  # fmt: skip
    b = DatasetRecord("o", data_hash=H2, hash_method="rows-v1", profile_method="profile-v1", key=["x", "y"],
                      buckets=buckets_record(_packed(moved)), columns={})  # fmt: skip
    changes = compare_buckets(a, b)
    assert changes is not None and changes.differing == [1]
    d = compare_records(_record("a", a), _record("b", b)).outputs[0]
    assert d.profile_note is None and d.buckets is not None
    assert compare_records(_record("a", a), _record("b", b)).summary.startswith(
        "data changed: output o (1 of 2 key buckets)"
    )
    b.key = ["x"]  # another key is still another placement
    assert compare_buckets(a, b) is None


def test_delta_versions_of_an_input_are_what_moved():
    def run(run_id: str, version: int, out_hash: str) -> RunRecord:
        r = _record(run_id, DatasetRecord("revenue", data_hash=out_hash, hash_method="rows-v1"))
        r.inputs = [DatasetRecord("orders", data_hash=f"sha256:{version}", hash_method="rows-v1", version=version)]
        return r

    c = compare_records(run("a", 41, "sha256:x"), run("b", 42, "sha256:y"))
    assert c.summary == "data changed: output revenue; what moved: input orders (Delta version 41 -> 42)"
