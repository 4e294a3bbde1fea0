"""A backend that gets rows-v1 wrong fails the conformance suite, and the message says where."""

from __future__ import annotations

import datetime as dt
import textwrap
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest

from tests.conftest import VECTORS
from ubunye.hashing.types import type_name
from ubunye.testing.backend_conformance import Reference, check_frame

pytest_plugins = ["pytester"]

LOCAL = ZoneInfo("Africa/Johannesburg")  # UTC+2, no daylight saving: every instant moves by two hours


class Rows:
    def __init__(self, schema, rows):
        self.schema, self.rows = schema, rows

    def collect(self):
        return self.rows


def local_time_rows(table: pa.Table) -> Rows:
    """Broken: instants written as the local wall clock, still labelled UTC."""
    schema = [(f.name, type_name(f.type, f.name)) for f in table.schema]
    rows = []
    for row in table.to_pylist():
        values = []
        for (_, tname), value in zip(schema, row.values(), strict=True):
            if tname == "timestamp" and value is not None and dt.MINYEAR < value.year < dt.MAXYEAR:
                value = value.astimezone(LOCAL).replace(tzinfo=dt.timezone.utc)
            values.append(value)
        rows.append(tuple(values))
    return Rows(schema, rows)


def misnamed_rows(table: pa.Table) -> Rows:
    """Broken: a float32 column named float64 (the JVM-style 'float is a double' slip)."""
    schema = [(f.name, "float64" if pa.types.is_float32(f.type) else type_name(f.type, f.name)) for f in table.schema]
    return Rows(schema, [tuple(r.values()) for r in table.to_pylist()])


def vector(name):
    return next(v for v in VECTORS if v.name == name)


def test_timestamps_in_local_time_fail_naming_column_type_and_line():
    v = vector("timestamps")
    with pytest.raises(AssertionError) as info:
        check_frame(local_time_rows(v.arrow()), Reference.of_vector(v), backend="backend 'broken'", what="timestamps")
    message = str(info.value)
    assert "backend 'broken' differs from the rows-v1 reference on timestamps" in message
    assert "column 'ts' (timestamp): values differ" in message
    assert "column 'ntz'" not in message  # the wall-clock column is right, and not blamed
    assert 'backend:   {"ntz":"2024-03-10T12:30:45.123456","ts":"2024-03-10T14:30:45.123456Z"}' in message
    assert 'reference: {"ntz":"2024-03-10T12:30:45.123456","ts":"2024-03-10T12:30:45.123456Z"}' in message


def test_a_misnamed_type_fails_naming_column_both_types_and_line():
    v = vector("scalars")
    with pytest.raises(AssertionError) as info:
        check_frame(misnamed_rows(v.arrow()), Reference.of_vector(v), what="scalars")
    message = str(info.value)
    assert "column 'f32': type float64, reference float32" in message
    assert "first differing line:" in message
    assert '"f32":0.10000000149011612' in message and '"f32":0.1,' in message
    assert "data_hash: backend sha256:" in message


def test_a_misnamed_type_with_equal_lines_still_fails():
    table = pa.table({"n": pa.array([1, 2], pa.int32())})
    wrong = Rows([("n", "int64")], [(1,), (2,)])
    with pytest.raises(
        AssertionError, match=r"column 'n': type int64, reference int32\n  canonical lines: all 2 equal"
    ):
        check_frame(wrong, Reference.of(table))


def test_the_right_rows_pass():
    v = vector("timestamps")
    schema = [(f.name, type_name(f.type, f.name)) for f in v.arrow().schema]
    check_frame(Rows(schema, [tuple(r.values()) for r in v.arrow().to_pylist()]), Reference.of_vector(v))


def test_the_whole_suite_fails_a_polars_backend_writing_local_time(pytester):
    pytest.importorskip("polars")
    pytester.makepyfile(
        test_broken_polars=textwrap.dedent(
            """
            import polars as pl
            import pytest

            from ubunye.engines.polars_engine import PolarsEngine
            from ubunye.testing.backend_conformance import BackendConformance


            def local_time(frame):
                return frame.with_columns(
                    pl.col(c).dt.convert_time_zone("Africa/Johannesburg").dt.replace_time_zone("UTC")
                    for c, t in frame.schema.items()
                    if isinstance(t, pl.Datetime) and t.time_zone is not None
                )


            class BrokenPolars(PolarsEngine):
                def read(self, io, base_dir):
                    return local_time(super().read(io, base_dir))


            class TestBrokenPolars(BackendConformance):
                example_tasks = ()

                @pytest.fixture
                def engine(self):
                    return BrokenPolars()

                def make_frame(self, engine, table):
                    return local_time(pl.from_arrow(table))
            """
        )
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    # every table holding a timestamp fails: the scalars and timestamps vectors, generated scalars, both round
    # trips, and the profiles (section 12) of the two vectors and of generated scalars
    assert outcomes["failed"] == 8, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(
        [
            "*backend 'polars' differs from the rows-v1 reference on vector 'timestamps':",
            "*column 'ts' (timestamp): values differ",
            "*first differing line:",
            '*backend:   {"ntz":"2024-03-10T12:30:45.123456","ts":"2024-03-10T14:30:45.123456Z"}',
            '*reference: {"ntz":"2024-03-10T12:30:45.123456","ts":"2024-03-10T12:30:45.123456Z"}',
        ]
    )
