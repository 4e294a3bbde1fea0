"""Parquet INT96 timestamps on the pandas and polars engines, through their one owner ``ubunye.engines.int96``.

- a folder holding a column as INT96 (``timestamp``) in one file and as a timestamp without zone
  (``timestamp_ntz``) in another, as an older ubunye's pandas append onto a Spark output left it, hashed as UTC
  on pandas (the zone-less file relabelled) and as ``timestamp_ntz`` on polars when that file sorted first: both
  engines refuse it now, naming the column and both files, as the append check refuses such an append; INT96
  beside timestamps with a zone (an append of instants) still reads, one hash on both engines;
- the sub-microsecond check compares the main read's microseconds with one more read in nanoseconds: it must
  pair each file's rows and each nested leaf with the right values (several files of other lengths, lists, maps,
  structs; a year-9999 value), and say the same thing on both engines;
- the polars engine's append check took INT96 for ``timestamp_ntz`` (it accepted the append making such a
  folder and refused an append of instants).

Files are written without Spark, as Spark writes them (INT96, no Arrow schema); expected hashes come from
``hash_frame`` of the same rows built independently as UTC microsecond timestamps.
"""

from __future__ import annotations

import datetime as dt
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.optional import NO_POLARS, needs_polars
from ubunye.cli.hash import hash_target
from ubunye.config import IOConfig
from ubunye.engines import get_engine, int96
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame

pytestmark = needs_polars

pl = pytest.importorskip("polars", reason=NO_POLARS)

ENGINES = ("pandas", "polars")
UTC = dt.timezone.utc
DAY_NS = 86_400 * 10**9
JULIAN_EPOCH = 2_440_588  # the Julian day of 1970-01-01, as INT96 counts days
NANOS = 1_700_000_000_123_456_001  # 2023-11-14T22:13:20.123456001Z


def _write(file: Path, table: pa.Table, *, int96_: bool) -> Path:
    """``table`` as a parquet file: as Spark writes INT96 (no Arrow schema in the footer), else as pyarrow writes
    plain INT64 timestamps (a zone-less one with ``isAdjustedToUTC=false``)."""
    file.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, file, use_deprecated_int96_timestamps=int96_, store_schema=not int96_, compression="none",
                   use_dictionary=False, write_statistics=False)  # fmt: skip
    types = [pq.read_metadata(file).schema.column(i).physical_type for i in range(len(pq.read_metadata(file).schema))]
    assert ("INT96" in types) == int96_
    return file


def _read(engine: str, folder: Path) -> object:
    return get_engine(engine).read(IOConfig("i", format="parquet", path=str(folder)), folder.parent)


def _refusals(folder: Path) -> dict[str, str]:
    """What each engine says reading ``folder`` (it must refuse it)."""
    said = {}
    for engine in ENGINES:
        with pytest.raises(EngineError) as info:
            _read(engine, folder)
        said[engine] = str(info.value)
    return said


def _hashes_alike(folder: Path, want: pa.Table) -> None:
    """Both engines hash ``folder`` as ``hash_frame`` hashes ``want``, and with the same lines."""
    expected = hash_frame(want)
    got = {e: hash_target(str(folder), "parquet", e, show_lines=50) for e in ENGINES}
    for engine, done in got.items():
        assert (done["schema"], done["data_hash"]) == (expected.schema, expected.data_hash), engine
    assert sorted(got["pandas"]["lines"]) == sorted(got["polars"]["lines"])


# -- 1. one column as INT96 in one file and zone-less in another: refused on both engines ------------------------

WHEN = [dt.datetime(2024, 1, 1, 12), dt.datetime(9999, 12, 31, 23, 59, 59, 999999), None]


def _column(kind: pa.DataType, shape: str) -> pa.Table:
    stamps = pa.array(WHEN, pa.timestamp("us")).cast(kind)
    if shape == "flat":
        return pa.table({"id": [1, 2, 3], "t": stamps})
    return pa.table({"id": [1, 2, 3], "t": pa.StructArray.from_arrays([pa.array([7, 8, 9]), stamps], ["n", "u"])})


@pytest.mark.parametrize("shape", ["flat", "nested"])
@pytest.mark.parametrize("int96_first", [True, False], ids=["int96-first", "ntz-first"])
def test_int96_beside_zone_less_timestamps_is_refused_on_both_engines(
    tmp_path: Path, shape: str, int96_first: bool
) -> None:
    names = ("a.parquet", "b.parquet") if int96_first else ("b.parquet", "a.parquet")
    spark = _write(tmp_path / "o" / names[0], _column(pa.timestamp("us"), shape), int96_=True)
    local = _write(tmp_path / "o" / names[1], _column(pa.timestamp("us"), shape), int96_=False)
    said = _refusals(tmp_path / "o")
    kind = "timestamp" if shape == "flat" else 'struct<"n":int64,"u":timestamp>'
    ntz = kind.replace("timestamp", "timestamp_ntz")
    first, second = ((spark, kind), (local, ntz)) if int96_first else ((local, ntz), (spark, kind))
    want = f"different column types: column 't' is {first[1]} in {first[0]} but {second[1]} in {second[0]}"
    for engine, message in said.items():
        assert want in message, (engine, message)
    assert said["pandas"] == said["polars"]


def test_an_old_pandas_append_onto_int96_is_refused_with_the_append_checks_words(tmp_path: Path) -> None:
    # what ubunye before INT96 instants left: a Spark INT96 part, then a pandas part of naive timestamps (INT64)
    rows = pa.table({"t": pa.array([dt.datetime(2024, 1, 1, 12)], pa.timestamp("us"))})
    spark = _write(tmp_path / "o" / "part-00000-spark.parquet", rows, int96_=True)
    old = _write(tmp_path / "o" / "part-00001-pandas.parquet", rows.cast(pa.schema([("t", pa.timestamp("ns"))])),
                 int96_=False)  # fmt: skip
    # the append itself is refused now, on either engine, in these words
    for engine, frame in (("pandas", rows.to_pandas()), ("polars", pl.from_arrow(rows))):
        out = tmp_path / f"append-{engine}"
        _write(out / "part-00000-spark.parquet", rows, int96_=True)
        with pytest.raises(EngineError, match=r"column 't' is timestamp in \S+ but timestamp_ntz in the new part"):
            get_engine(engine).write(frame, IOConfig("o", format="parquet", path=str(out), mode="append"), tmp_path)
    for message in _refusals(tmp_path / "o").values():
        assert f"column 't' is timestamp in {spark} but timestamp_ntz in {old}" in message


@pytest.mark.parametrize("int96_first", [True, False], ids=["int96-first", "utc-first"])
def test_int96_beside_utc_instants_reads_on_both_engines_one_hash(tmp_path: Path, int96_first: bool) -> None:
    # an append of instants (INT64 with a zone) onto a Spark INT96 output: alike, whichever file sorts first
    names = ("a.parquet", "b.parquet") if int96_first else ("b.parquet", "a.parquet")
    _write(tmp_path / "o" / names[0], _column(pa.timestamp("us"), "nested"), int96_=True)
    _write(tmp_path / "o" / names[1], _column(pa.timestamp("us", "UTC"), "nested"), int96_=False)
    for engine in ENGINES:  # the append check agrees: an append of instants onto INT96 is taken
        out = tmp_path / f"append-{engine}"
        _write(out / "part-0.parquet", _column(pa.timestamp("us"), "flat"), int96_=True)
        instants = _column(pa.timestamp("us", "UTC"), "flat")
        frame = instants.to_pandas(types_mapper=pd_arrow) if engine == "pandas" else pl.from_arrow(instants)
        get_engine(engine).write(frame, IOConfig("o", format="parquet", path=str(out), mode="append"), tmp_path)
        _hashes_alike(out, pa.concat_tables([instants, instants]))
    utc = _column(pa.timestamp("us", "UTC"), "nested")
    _hashes_alike(tmp_path / "o", pa.concat_tables([utc, utc]))


def pd_arrow(kind: pa.DataType) -> object:
    import pandas as pd

    return pd.ArrowDtype(kind)


# -- 2. the sub-microsecond check pairs the main read's microseconds with the right nanoseconds -------------------


def _int96_bytes(nanos: int) -> bytes:
    """An INT96 value as parquet stores it: nanoseconds of the day (8 bytes), then the Julian day (4 bytes)."""
    return struct.pack("<qi", nanos % DAY_NS, nanos // DAY_NS + JULIAN_EPOCH)


def _moved(file: Path, nanos: int, day: dt.date) -> None:
    """``file`` with its one INT96 value of ``nanos`` moved to ``day`` (a value past 2262 pyarrow cannot write)."""
    data = file.read_bytes()
    assert data.count(_int96_bytes(nanos)) == 1
    moved = _int96_bytes(nanos % DAY_NS + (day - dt.date(1970, 1, 1)).days * DAY_NS)
    file.write_bytes(data.replace(_int96_bytes(nanos), moved))


def _nested(stamps: list[int | None]) -> pa.Table:
    """Rows holding ``stamps`` (nanoseconds) in a list of structs and as a map's values, beside an id."""
    ns = pa.array(stamps, pa.timestamp("ns"))
    rows = list(range(len(stamps)))
    return pa.table({
        "id": rows,
        "ls": pa.array([[{"k": i, "u": s}] if i % 2 else None for i, s in zip(rows, ns.to_pylist(), strict=True)],
                       pa.list_(pa.struct([("k", pa.int64()), ("u", pa.timestamp("ns"))]))),
        "m": pa.array([[("k", s)] for s in ns.to_pylist()], pa.map_(pa.string(), pa.timestamp("ns"))),
    })  # fmt: skip


def _whole(n: int) -> list[int | None]:
    return [None if i == 2 else NANOS - 1 + i * 1000 for i in range(n)]  # ...123456000: whole microseconds


@pytest.mark.parametrize("odd_file", ["a", "b"])
def test_nanoseconds_are_found_in_the_file_and_leaf_that_holds_them(tmp_path: Path, odd_file: str) -> None:
    # a: 5 rows, b: 2 rows; the odd value sits in one row of one file, in the list of structs (odd rows only)
    stamps = {"a": _whole(5), "b": _whole(2)}
    stamps[odd_file][1] = NANOS  # row 1: a list holding it
    for name, values in stamps.items():
        _write(tmp_path / "o" / f"{name}.parquet", _nested(values), int96_=True)
    said = _refusals(tmp_path / "o")
    odd = tmp_path / "o" / f"{odd_file}.parquet"
    want = f"input 'i': {odd}: column 'ls' holds an INT96 timestamp (inside it) with a non-zero sub-microsecond part "
    for message in said.values():
        assert want + "(2023-11-14 22:13:20.123456001Z)" in message, message
    assert said["pandas"] == said["polars"]  # one message, from one place


def test_whole_microseconds_in_several_nested_files_hash_as_utc_instants(tmp_path: Path) -> None:
    for name, n in (("a", 5), ("b", 2)):
        _write(tmp_path / "o" / f"{name}.parquet", _nested(_whole(n)), int96_=True)
    want = pa.concat_tables(_nested(_whole(n)) for n in (5, 2))
    utc = pa.schema([
        want.schema.field("id"),
        pa.field("ls", pa.list_(pa.struct([("k", pa.int64()), ("u", pa.timestamp("us", "UTC"))]))),
        pa.field("m", pa.map_(pa.string(), pa.timestamp("us", "UTC"))),
    ])  # fmt: skip
    _hashes_alike(tmp_path / "o", want.cast(utc))


def test_a_year_9999_value_with_nanoseconds_is_refused_and_without_them_read(tmp_path: Path) -> None:
    end = dt.date(9999, 12, 31)
    table = pa.table({"t": pa.array([NANOS], pa.timestamp("ns"))})
    _moved(_write(tmp_path / "odd" / "a.parquet", table, int96_=True), NANOS, end)
    for message in _refusals(tmp_path / "odd").values():
        assert "column 't' holds an INT96 timestamp with a non-zero sub-microsecond part " in message
        assert "(9999-12-31 22:13:20.123456001Z)" in message
    whole = pa.table({"t": pa.array([NANOS - 1], pa.timestamp("ns"))})
    _moved(_write(tmp_path / "whole" / "a.parquet", whole, int96_=True), NANOS - 1, end)
    want = pa.table({"t": pa.array([dt.datetime(9999, 12, 31, 22, 13, 20, 123456, UTC)], pa.timestamp("us", "UTC"))})
    _hashes_alike(tmp_path / "whole", want)


# -- 3. the module itself ---------------------------------------------------------------------------------------


def test_int96_leaves_are_numbered_within_their_column_from_the_footer(tmp_path: Path) -> None:
    file = _write(tmp_path / "n.parquet", _nested(_whole(3)), int96_=True)
    leaves = int96.int96_leaves(pq.read_metadata(file), str(file))
    assert leaves == {"ls": frozenset({1}), "m": frozenset({1})}  # the struct's u; the map's value
    schema = int96.as_instants(pq.read_schema(file), leaves)
    assert schema.field("ls").type.value_type.field("u").type == int96.INSTANT
    assert schema.field("m").type.item_type == int96.INSTANT and schema.field("m").type.key_type == pa.string()
    plain = _write(tmp_path / "p.parquet", _column(pa.timestamp("us"), "flat"), int96_=False)
    assert int96.int96_leaves(pq.read_metadata(plain), str(plain)) == {}


def test_polars_names_the_files_when_int96_files_differ_in_another_column(tmp_path: Path) -> None:
    # INT96 files were read in one scan with the first file's types: a column no one type holds was polars'
    # error naming no file (or, where polars casts, read as the first file's type)
    stamps = pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("us"))
    a = _write(tmp_path / "o" / "a.parquet", pa.table({"t": stamps, "x": pa.array([1], pa.int32())}), int96_=True)
    b = _write(tmp_path / "o" / "b.parquet", pa.table({"t": stamps, "x": pa.array([2**40], pa.int64())}), int96_=True)
    with pytest.raises(EngineError, match=rf"column 'x' is Int32 in {a} but Int64 in {b}"):
        _read("polars", tmp_path / "o")
