"""profile-v1 in the conformance vectors and the suite (docs/rows-v1.md section 12.4).

The vectors' ``expected_profile`` is written by tests/vectors/derive.py; here: the spec's own examples against
that derivation, what section 12.2 says follows from the rules checked on the files, the derivation's type-name
parser against the twin's (the two written apart), and ``check_profile`` passing the twin and failing a
backend that gets a column wrong, naming the vector, the column and the bucket.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import textwrap
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest

from tests.conftest import VECTOR_DIR, VECTORS
from tests.vectors import derive
from ubunye.hashing.types import parse_type as twin_parse_type
from ubunye.hashing.types import type_name
from ubunye.testing.vectors import Vector, load_vectors

pytest_plugins = ["pytester"]

ALL = VECTORS + load_vectors(VECTOR_DIR / "bytes")


def vector(name: str) -> Vector:
    return next(v for v in ALL if v.name == name)


def case(v: Vector, n: int, key: list[str] | None) -> list[list]:
    (found,) = [c["buckets"] for c in v.expected_profile["buckets"] if c["n"] == n and c["key"] == key]
    return found


def profile_frame_or_skip():
    # Being written beside this suite (python/ubunye/hashing/profile.py): the checks of the files run without it.
    return pytest.importorskip("ubunye.hashing.profile").profile_frame


# -- the spec's examples, against the derivation ------------------------------------------------------------------


def test_section_12_1_example_column_lines_and_counts():
    tree = derive.parse_type("int64")
    assert [derive.column_line("id", tree, c) for c in [1, 2, None]] == ['{"id":1}', '{"id":2}', "{}"]
    p = derive.column_profile("id", tree, [1, 2, None])
    assert (p["type"], p["nulls"], p["nans"]) == ("int64", 1, None)


def test_section_12_1_fingerprint_input():
    p = derive.column_profile("a\tb", derive.parse_type("float64"), [{"float": "NaN"}, None])
    s1 = s2 = 0
    for line in ['{"a\\tb":"NaN"}', "{}"]:
        h = hashlib.sha256(line.encode()).digest()
        s1, s2 = (s1 + int.from_bytes(h[:8], "big")) % 2**64, (s2 + int.from_bytes(h[8:16], "big")) % 2**64
    text = f'profile-v1-column\n"a\\tb"\nfloat64\n2\n{s1:016x}\n{s2:016x}'
    assert p == {
        "type": "float64",
        "nulls": 1,
        "nans": 1,
        "sum1": f"{s1:016x}",
        "sum2": f"{s2:016x}",
        "fingerprint": "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
    }


def test_section_12_2_example_key_line():
    row = {"region": "EU", "day": {"date": "2024-01-01"}, "amount": {"float": "0.5"}}
    trees = {"region": "string", "day": "date", "amount": "float64"}
    assert derive.key_line(row, ["region", "day"], trees) == '{"day":"2024-01-01","region":"EU"}'
    assert derive.key_line({"region": None, "day": None}, ["region", "day"], trees) == "{}"


@pytest.mark.parametrize(("n", "key"), [(3, None), (0, None), (131072, None), (8, []), (8, ["x", "x"]), (8, ["y"])])
def test_the_derivation_refuses_cases_outside_section_12_2(n, key):
    with pytest.raises(ValueError, match=r"power of two|distinct columns"):
        derive.bucket_case([("x", "int64")], [[1]], n, key)


# -- the files: what section 12.2 says follows from the rules -----------------------------------------------------


@pytest.mark.parametrize("v", ALL, ids=lambda v: v.name)
def test_bucket_counts_and_sums_add_up_to_the_table(v):
    e, cases = v.expected, v.expected_profile["buckets"]
    assert {(c["n"], None) for c in cases if c["key"] is None} >= {(8, None), (1, None)}
    for c in cases:
        indices = [b[0] for b in c["buckets"]]
        assert indices == sorted(set(indices)) and all(0 <= i < c["n"] for i in indices), c
        assert all(b[1] > 0 for b in c["buckets"]), "only buckets that hold a row are listed"
        assert sum(b[1] for b in c["buckets"]) == e["row_count"]
        for j, total in ((2, e["sum1"]), (3, e["sum2"])):
            assert f"{sum(int(b[j], 16) for b in c['buckets']) % 2**64:016x}" == total
    if e["row_count"]:
        assert case(v, 1, None) == [[0, e["row_count"], e["sum1"], e["sum2"]]]  # section 12.2's example


@pytest.mark.parametrize("v", [v for v in ALL if len(v.columns) == 1], ids=lambda v: v.name)
def test_one_column_tables_column_sums_are_the_table_sums(v):
    # The column line of the only column is the row's own line (sections 12.1 and 2).
    ((name, _),) = v.columns
    col = v.expected_profile["columns"][name]
    assert (col["sum1"], col["sum2"]) == (v.expected["sum1"], v.expected["sum2"])


@pytest.mark.parametrize(("name", "key"), [("floats", ["x"]), ("timestamps", ["ntz", "ts"])])
def test_a_key_of_every_column_buckets_like_no_key(name, key):
    # Its key line is the row's canonical line, so k = h (section 12.2).
    v = vector(name)
    assert case(v, 8, key) == case(v, 8, None)


@pytest.mark.parametrize("v", ALL, ids=lambda v: v.name)
def test_column_nulls_and_nans_as_the_cells_say(v):
    for i, (name, tname) in enumerate(v.columns):
        cells = [row[i] for row in v.rows]
        col = v.expected_profile["columns"][name]
        assert col["nulls"] == cells.count(None)
        if tname in ("float32", "float64"):
            assert col["nans"] == sum(1 for c in cells if c == {"float": "NaN"})
        else:
            assert col["nans"] is None


def _buckets_with_key_order(v: Vector, key: list[str], n: int, order) -> list[list]:
    """The buckets of a misreading: key members ordered by ``order`` (the text of each member) instead."""
    names = [c for c, _ in v.columns]
    trees = {c: derive.parse_type(t) for c, t in v.columns}
    acc: dict[int, list] = {}
    for row, line in zip(v.rows, v.expected["lines"], strict=True):
        cells = dict(zip(names, row, strict=True))
        members = sorted((k for k in key if cells[k] is not None), key=order)
        kline = "{" + ",".join(f"{derive.jstr(k)}:{derive.encode(cells[k], trees[k])}" for k in members) + "}"
        i = int.from_bytes(hashlib.sha256(kline.encode()).digest()[28:32], "big") % n
        h = hashlib.sha256(line.encode()).digest()
        b = acc.setdefault(i, [i, 0, 0, 0])
        b[1] += 1
        b[2] = (b[2] + int.from_bytes(h[:8], "big")) % 2**64
        b[3] = (b[3] + int.from_bytes(h[8:16], "big")) % 2**64
    return [[i, c, f"{x:016x}", f"{y:016x}"] for i, c, x, y in sorted(acc.values())]


def test_the_vectors_pin_the_key_line_order():
    # A key sorted by UTF-16 units (Java's compareTo) or left in the order given would bucket these differently.
    text = vector("text")
    key = ["\U0001f600", "\uff61"]
    assert case(text, 8, key) == _buckets_with_key_order(text, key, 8, lambda k: k.encode("utf-8"))
    assert case(text, 8, key) != _buckets_with_key_order(text, key, 8, lambda k: k.encode("utf-16-be"))
    keyed = vector("profile_keys")
    for n in (2, 256):
        assert case(keyed, n, ["region", "day"]) != _buckets_with_key_order(
            keyed, ["region", "day"], n, ["region", "day"].index
        )


# -- the derivation's own type-name parser ----------------------------------------------------------------------


def test_the_derivation_parses_every_vector_type_as_the_twin_does():
    names = {t for v in ALL for _, t in v.columns}
    assert len(names) > 20
    for t in names:
        assert derive.parse_type(t) == twin_parse_type(t), t


@pytest.mark.parametrize(
    "bad",
    ["int", "list<int64", "map<string>", "decimal(39,2)", "decimal(5,6)", "decimal(5)", 'struct<"a" int64>',
     "struct<a:int64>", 'struct<"a":int64', "int64>", "timestamp_tz", 'struct<"\\x":int64>'],
)  # fmt: skip
def test_the_derivation_refuses_what_is_not_a_type_name(bad):
    with pytest.raises(ValueError):
        derive.parse_type(bad)


def test_the_derivation_reads_escaped_field_names():
    assert derive.parse_type('struct<"a\\"b\\u001F\\\\":int64>') == ("struct", (('a"b\x1f\\', "int64"),))


# -- check_profile: the twin passes, a wrong backend fails with what differs ----------------------------------------


@pytest.mark.parametrize("v", ALL, ids=lambda v: v.name)
def test_the_twin_gives_every_vector_profile(v):
    profile_frame_or_skip()
    from ubunye.testing.backend_conformance import check_profile

    check_profile(v.arrow(), v.expected_profile, data_hash=v.expected["data_hash"], backend="twin", what=v.name)


class _Rows:
    def __init__(self, schema, rows):
        self.schema, self.rows = schema, rows

    def collect(self):
        return self.rows


def _local_time(table: pa.Table) -> _Rows:
    """Broken: instants written as the local wall clock (UTC+2), still labelled UTC."""
    local = ZoneInfo("Africa/Johannesburg")
    schema = [(f.name, type_name(f.type, f.name)) for f in table.schema]

    def shift(t: str, v):
        moved = t == "timestamp" and v is not None and dt.MINYEAR < v.year < dt.MAXYEAR
        return v.astimezone(local).replace(tzinfo=dt.timezone.utc) if moved else v

    return _Rows(
        schema, [tuple(shift(t, v) for (_, t), v in zip(schema, r.values(), strict=True)) for r in table.to_pylist()]
    )


_BUCKET_LINE = re.compile(
    r"buckets n=(\d+), key=(.+?): bucket (\d+): backend count \d+, sum1 \w+, sum2 \w+; "
    r"reference count (\d+), sum1 (\w+), sum2 (\w+)$"
)


def test_a_wrong_column_fails_naming_the_vector_column_and_buckets():
    profile_frame_or_skip()
    from ubunye.testing.backend_conformance import check_profile

    v = vector("timestamps")
    with pytest.raises(AssertionError) as info:
        check_profile(_local_time(v.arrow()), v.expected_profile, backend="backend 'broken'", what="vector 'ts'")
    message = str(info.value)
    want = v.expected_profile["columns"]["ts"]
    assert message.startswith("backend 'broken' differs from the profile-v1 reference on vector 'ts':\n")
    assert "column 'ts' (timestamp): sum1: backend " in message and f", reference {want['sum1']}" in message
    assert "column 'ts' (timestamp): fingerprint: backend sha256:" in message
    assert f", reference {want['fingerprint']}" in message
    assert "column 'ntz'" not in message  # the wall-clock column is right, and not blamed
    # Rows moved, so the keyless cases and the ts key differ, and every bucket named shows the vector's numbers.
    named = [_BUCKET_LINE.search(line) for line in message.splitlines()]
    named = [m.groups() for m in named if m]
    assert {(n, key) for n, key, *_ in named} == {("8", "none"), ("1", "none"), ("8", '["ts"]'), ("8", '["ntz","ts"]')}
    for n, key, index, *numbers in named:
        listed = {b[0]: b[1:] for b in case(v, int(n), None if key == "none" else json.loads(key))}
        assert [int(numbers[0]), *numbers[1:]] == listed.get(int(index), [0, "0" * 16, "0" * 16])


def test_the_right_rows_pass_check_profile():
    profile_frame_or_skip()
    from ubunye.testing.backend_conformance import check_profile

    v = vector("profile_keys")
    table = v.arrow()
    frame = _Rows(
        [(f.name, type_name(f.type, f.name)) for f in table.schema], [tuple(r.values()) for r in table.to_pylist()]
    )
    check_profile(frame, v.expected_profile, data_hash=v.expected["data_hash"])


def _suite_module(attrs: str) -> str:
    return textwrap.dedent(
        f"""
        import pytest

        from ubunye.engines import get_engine
        from ubunye.testing.backend_conformance import BackendConformance


        class TestQuiet(BackendConformance):
            {attrs}

            @pytest.fixture
            def engine(self):
                return get_engine("pandas")
        """
    )


def test_profile_checks_are_turned_off_only_with_a_reason(pytester):
    pytester.makepyfile(test_no_reason=_suite_module("profile = False"))
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-k", "profile and duplicates")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*TestQuiet.profile = False: to turn profile checks off, set it to the reason*"])

    pytester.makepyfile(test_reason=_suite_module('profile = "profiles are made by the warehouse"'))
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-rs", "test_reason.py", "-k", "profile")
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped", 0) >= len(ALL) and "failed" not in outcomes, result.stdout.str()[-2000:]
    result.stdout.fnmatch_lines(["*does not claim profile-v1: profiles are made by the warehouse*"])
