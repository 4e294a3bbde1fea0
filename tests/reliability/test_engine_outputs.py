"""What the in-process engines refuse to write, before writing anything (an independent battery's findings).

1. ``partition_by`` on parquet/csv/json (pandas, polars): refused, as the partition values would read back with
   guessed types (int64 -> int32 on pyarrow) and so hash unlike the record; a partition column that is not in the
   frame is named. Delta keeps partition_by, and reads back with the hash written.
2. csv/json cannot hold binary (csv: nor struct, list, map; json: nor map): refused, naming the column.
3. A file where an output folder goes is refused on overwrite too, and left byte for byte as it was.
4. ``engine.check_output(io, base_dir)``: the refusals that need no frame, callable before any input is read.

Every refusal is asserted by its exact message, and the previous output (or file) byte for byte unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from tests.optional import LOCAL_ENGINES
from ubunye.config.model import IOConfig
from ubunye.engines import get_engine
from ubunye.engines.delta import sub_microsecond_column
from ubunye.engines.spark_engine import SparkEngine
from ubunye.exceptions import EngineError

LOCAL = ["pandas", "polars"]
FILES = ["parquet", "csv", "json"]
OLD = pd.DataFrame({"id": [1, 2, 3], "tag": ["a", "b", "a"]})


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (and its hidden siblings), relative path -> bytes: what a refusal must keep."""
    return {str(p.relative_to(root.parent)): p.read_bytes() for p in sorted(root.parent.rglob("*")) if p.is_file()}


def out(fmt: str = "parquet", mode: str = "overwrite", path: str = "data/out", **kw) -> IOConfig:
    return IOConfig("out", format=fmt, path=path, mode=mode, **kw)


def write(engine_name: str, frame, io: IOConfig, base: Path) -> None:
    engine = get_engine(engine_name)
    native = engine.from_pandas(frame) if isinstance(frame, pd.DataFrame) else frame
    engine.write(native, io, base)


def refused(engine_name: str, frame, io: IOConfig, base: Path) -> str:
    """Write, expecting an EngineError; return its message."""
    with pytest.raises(EngineError) as err:
        write(engine_name, frame, io, base)
    return str(err.value)


def partition_refusal(engine_name: str, fmt: str, columns: str) -> str:
    return (
        f"output 'out': the {engine_name} engine cannot write {fmt} partitioned by {columns} so that it reads back "
        "as written (partition values come back with guessed types, and the hash would not match the record): "
        "write format: delta (partition_by is kept, with its types), or use the spark engine"
    )


# --- 1. partition_by ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FILES)
@pytest.mark.parametrize("engine_name", LOCAL)
def test_partition_by_on_files_is_refused_and_the_old_output_kept(tmp_path, engine_name, fmt):
    write(engine_name, OLD, out(fmt), tmp_path)
    before = snapshot(tmp_path / "data/out")
    for by, named in ((["id"], "'id'"), (["nocol"], "'nocol'"), (["tag", "id"], "'tag', 'id'")):
        for mode in ("overwrite", "append"):
            message = refused(engine_name, OLD, out(fmt, mode, partition_by=by), tmp_path)
            assert message == partition_refusal(engine_name, fmt, named)
    assert snapshot(tmp_path / "data/out") == before


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_delta_partition_column_not_in_the_frame_is_named_and_the_table_kept(tmp_path, engine_name):
    write(engine_name, OLD, out("delta"), tmp_path)
    before = snapshot(tmp_path / "data/out")
    message = refused(engine_name, OLD, out("delta", partition_by=["nocol"]), tmp_path)
    assert message == "output 'out': partition_by column 'nocol' is not in the frame (its columns: id, tag)"
    assert snapshot(tmp_path / "data/out") == before


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_partitioned_delta_output_reads_back_with_the_hash_written(tmp_path, engine_name):
    engine = get_engine(engine_name)
    frame = engine.from_pandas(OLD)
    io = out("delta", partition_by=["id"])
    engine.write(frame, io, tmp_path)
    assert sorted(p.name for p in (tmp_path / "data/out").iterdir() if "=" in p.name) == ["id=1", "id=2", "id=3"]
    assert engine.hash(engine.read(io, tmp_path)) == engine.hash(frame)


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_partitioned_folder_is_read_with_its_partition_column(tmp_path, engine_name):
    # as Spark writes one: the partition column lives only in the folder names, and must not be dropped
    import pyarrow.parquet as pq

    for key, rows in (("1", ["a", "c"]), ("2", ["b"])):
        (tmp_path / f"p/id={key}").mkdir(parents=True)
        pq.write_table(pa.table({"v": rows}), tmp_path / f"p/id={key}/part-0.parquet")
    (tmp_path / "p/_SUCCESS").write_text("")
    frame = get_engine(engine_name).native(get_engine(engine_name).read(out(path="p"), tmp_path))
    got = pytest.importorskip("polars").from_pandas(frame) if isinstance(frame, pd.DataFrame) else frame
    assert sorted(got.select("id", "v").rows()) == [(1, "a"), (1, "c"), (2, "b")]


# --- 2. csv and json hold text -----------------------------------------------------------------------------------


def _frame(engine_name: str, table: pa.Table):
    if engine_name == "polars":
        return pytest.importorskip("polars").from_arrow(table)
    return table.to_pandas(types_mapper=pd.ArrowDtype)


@pytest.mark.parametrize("payload", [b"text", b"\xff\xfe"], ids=["utf8", "not-utf8"])
@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("engine_name", LOCAL)
def test_binary_in_csv_or_json_is_refused_naming_the_column(tmp_path, engine_name, fmt, payload):
    write(engine_name, OLD, out(fmt), tmp_path)
    before = snapshot(tmp_path / "data/out")
    frame = _frame(engine_name, pa.table({"id": [1], "b": pa.array([payload], pa.binary())}))
    for mode in ("overwrite", "append"):
        message = refused(engine_name, frame, out(fmt, mode), tmp_path)
        assert message == f"output 'out': {fmt} cannot hold column 'b' of type binary (use parquet or delta)"
    assert snapshot(tmp_path / "data/out") == before


NESTED = {
    "struct": pa.array([{"x": 1}], pa.struct([("x", pa.int64())])),
    "list": pa.array([[1, 2]], pa.list_(pa.int64())),
    "fixed-list": pa.array([[1, 2]], pa.list_(pa.int64(), 2)),
    "map": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int64())),
}


@pytest.mark.parametrize("case", sorted(NESTED))
@pytest.mark.parametrize("engine_name", LOCAL)
def test_nested_values_in_csv_are_refused_naming_the_column(tmp_path, engine_name, case):
    if engine_name == "polars" and case == "map":
        pytest.skip("polars has no map type")
    write(engine_name, OLD, out("csv"), tmp_path)
    before = snapshot(tmp_path / "data/out")
    frame = _frame(engine_name, pa.table({"id": [1], "n": NESTED[case]}))
    kind = "list" if case == "fixed-list" else case
    message = refused(engine_name, frame, out("csv"), tmp_path)
    assert message == f"output 'out': csv cannot hold column 'n' of type {kind} (use parquet or delta)"
    assert snapshot(tmp_path / "data/out") == before


def test_a_map_in_json_is_refused_naming_the_column(tmp_path):
    frame = _frame("pandas", pa.table({"m": NESTED["map"]}))
    message = refused("pandas", frame, out("json"), tmp_path)
    assert message == "output 'out': json cannot hold column 'm' of type map (use parquet or delta)"
    assert not (tmp_path / "data/out").exists()


@pytest.mark.parametrize("engine_name", LOCAL)
def test_binary_in_parquet_is_written_and_reads_back_with_the_hash_written(tmp_path, engine_name):
    engine = get_engine(engine_name)
    frame = _frame(engine_name, pa.table({"id": [1, 2], "b": pa.array([b"text", b"\xff\xfe"], pa.binary())}))
    engine.write(frame, out(), tmp_path)
    assert engine.hash(engine.read(out(), tmp_path)) == engine.hash(frame)


def test_a_type_the_csv_writer_itself_refuses_is_wrapped_and_the_old_output_kept(tmp_path):
    # not in refuse_columns' list: pyarrow's own refusal, mid-write, names the output and the place
    write("pandas", OLD, out("csv"), tmp_path)
    before = snapshot(tmp_path / "data/out")
    interval = pa.array([pa.MonthDayNano([1, 2, 3])], pa.month_day_nano_interval())
    message = refused("pandas", _frame("pandas", pa.table({"i": interval})), out("csv"), tmp_path)
    assert message == (
        f"output 'out': cannot write csv to {tmp_path}/data/out: ArrowNotImplementedError: Unsupported cast from "
        "month_day_nano_interval to utf8 using function cast_string"
    )
    assert snapshot(tmp_path / "data/out") == before


# --- 3. a file where the output folder goes ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FILES)
@pytest.mark.parametrize("engine_name", LOCAL)
def test_overwriting_a_file_is_refused_and_the_file_kept(tmp_path, engine_name, fmt):
    (tmp_path / "data").mkdir()
    (tmp_path / "data/out").write_bytes(b"someone's data\x00\xff")
    before = snapshot(tmp_path / "data/out")
    message = refused(engine_name, OLD, out(fmt), tmp_path)
    assert message == (
        f"output 'out': {tmp_path}/data/out is a file, not an output folder; move it away or choose another path"
    )
    assert snapshot(tmp_path / "data/out") == before  # refused before the lock: not even a lock file beside it


@pytest.mark.parametrize("engine_name", LOCAL)
def test_overwriting_a_symlink_to_a_file_is_refused_and_the_file_kept(tmp_path, engine_name):
    (tmp_path / "data").mkdir()
    (tmp_path / "kept").write_bytes(b"someone's data")
    (tmp_path / "data/out").symlink_to(tmp_path / "kept")
    tail = "is a file, not an output folder; move it away or choose another path"
    # a relative path is resolved (through the link) when the config is read; an absolute one is kept
    assert refused(engine_name, OLD, out(), tmp_path) == f"output 'out': {tmp_path}/kept {tail}"
    absolute = out(path=str(tmp_path / "data/out"))
    assert refused(engine_name, OLD, absolute, tmp_path) == f"output 'out': {tmp_path}/data/out {tail}"
    assert (tmp_path / "kept").read_bytes() == b"someone's data"
    assert (tmp_path / "data/out").is_symlink()


# --- 4. check_output: refused before anything is read ------------------------------------------------------------


def remote_refusal(fmt: str, where: str) -> str:
    return (
        f"output 'out': cannot overwrite {fmt} at {where} safely: that storage has no atomic rename, so a reader "
        "could see old and new files mixed, or none. Write format: delta there (its log commits each version "
        "atomically), or a local path"
    )


def engines() -> list:
    return [*map(get_engine, LOCAL_ENGINES), SparkEngine(spark=object())]  # no session needed


@pytest.mark.parametrize("fmt", FILES)
def test_check_output_refuses_a_remote_overwrite_without_touching_anything(tmp_path, fmt):
    for engine in engines():
        with pytest.raises(EngineError) as err:
            engine.check_output(out(fmt, path="s3://bucket/out"), tmp_path)
        assert str(err.value) == remote_refusal(fmt, "s3://bucket/out")
        engine.check_output(out("delta", path="s3://bucket/out"), tmp_path)  # Delta's log commits atomically
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("engine_name", LOCAL)
def test_check_output_refuses_what_write_refuses(tmp_path, engine_name):
    engine = get_engine(engine_name)
    with pytest.raises(EngineError) as err:
        engine.check_output(out(mode="append", path="s3://bucket/out"), tmp_path)
    assert str(err.value) == (
        f"output 'out': the {engine_name} engine writes parquet to local paths only (a path or file://), not "
        "s3://bucket/out: write format: delta there, or use the spark engine"
    )
    with pytest.raises(EngineError) as err:
        engine.check_output(out("csv", partition_by=["id"]), tmp_path)
    assert str(err.value) == partition_refusal(engine_name, "csv", "'id'")
    with pytest.raises(EngineError) as err:
        engine.check_output(IOConfig("out", table="db.t"), tmp_path)
    assert str(err.value) == "output 'out': catalog tables (table: db.t) need the spark engine"
    engine.check_output(out(), tmp_path)  # nothing there yet: fine, and nothing created
    engine.check_output(out("delta", partition_by=["id"]), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_check_output_refuses_a_file_at_the_location_on_every_engine(tmp_path):
    (tmp_path / "out").write_bytes(b"keep")
    for engine in engines():
        for mode, tail in (
            ("overwrite", "is a file, not an output folder; move it away or choose another path"),
            ("append", "is a file; append needs a folder of part files"),
        ):
            with pytest.raises(EngineError) as err:  # file:// is local on Spark without asking the session
                engine.check_output(out(mode=mode, path=f"file://{tmp_path}/out"), tmp_path)
            assert str(err.value) == f"output 'out': {tmp_path}/out {tail}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (tmp_path / "out").read_bytes() == b"keep"


# --- 5. Delta stores what the frame holds, or nothing ------------------------------------------------------------


def _rows_hash(table: pa.Table):
    from ubunye.hashing import hash_frame

    return hash_frame(table)


def _delta_now(tmp_path: Path) -> tuple[int, dict[str, bytes]]:
    from deltalake import DeltaTable

    return DeltaTable(str(tmp_path / "data/out")).version(), snapshot(tmp_path / "data/out")


def _reads_back(engine_name: str, tmp_path: Path, expected: pa.Table) -> bool:
    engine = get_engine(engine_name)
    return engine.hash(engine.read(out("delta"), tmp_path)) == _rows_hash(expected)


def cast_refusal(tmp_path: Path, column: str, was: str, now: str) -> str:
    return (
        f"output 'out': column {column!r} is {was} in the frame but {now} in the Delta table at {tmp_path}/data/out: "
        f"deltalake would cast it to {now}, so the data would not be the frame the record hashes; nothing was "
        f"written, the table is as it was. Cast the column to {now} in the task, or write the new type to another "
        "table (Delta keeps a table's types, on overwrite too)"
    )


#: (the table's column, the frame's column, rows-v1 type names of each): deltalake would cast the frame's values
#: to the table's type, silently (2.7 -> 2; int32 1 stored as int64 hashes unlike the frame; a wall-clock time
#: stored as an instant).
CASTS = {
    "float-into-int": (pa.array([1]), pa.array([2.7]), "float64", "int64"),
    "int32-into-int64": (pa.array([1]), pa.array([2], pa.int32()), "int32", "int64"),
    "ntz-into-timestamp": (
        pa.array([1], pa.timestamp("us", "UTC")),
        pa.array([2], pa.timestamp("us")),
        "timestamp_ntz",
        "timestamp",
    ),
}


@pytest.mark.parametrize("case", sorted(CASTS))
@pytest.mark.parametrize("mode", ["overwrite", "append"])
@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_delta_write_that_deltalake_would_cast_is_refused_and_the_table_kept(tmp_path, engine_name, mode, case):
    stored, new, was, now = CASTS[case]
    old = pa.table({"a": stored})
    write(engine_name, _frame(engine_name, old), out("delta"), tmp_path)
    before = _delta_now(tmp_path)
    message = refused(engine_name, _frame(engine_name, pa.table({"a": new})), out("delta", mode), tmp_path)
    assert message == cast_refusal(tmp_path, "a", was, now)
    assert _delta_now(tmp_path) == before
    assert _reads_back(engine_name, tmp_path, old)


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_delta_type_without_a_rows_v1_name_is_compared_by_arrows_name(tmp_path, engine_name):
    # deltalake made the table int8 from a uint8 frame; a uint8 frame would be cast again (rows-v1 has no uint8)
    write(engine_name, _frame(engine_name, pa.table({"a": pa.array([1], pa.uint8())})), out("delta"), tmp_path)
    before = _delta_now(tmp_path)
    frame = _frame(engine_name, pa.table({"a": pa.array([2], pa.uint8())}))
    message = refused(engine_name, frame, out("delta", "append"), tmp_path)
    assert message == cast_refusal(tmp_path, "a", "uint8", "int8")
    assert _delta_now(tmp_path) == before


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_delta_append_of_the_same_rows_v1_types_in_another_form_is_kept_as_written(tmp_path, engine_name):
    # large_string or a view as string, another time zone as UTC, whole microseconds in nanoseconds: deltalake's
    # casts keep every value and the rows-v1 type, so the rows hash alike and the append goes through
    first = pa.table({"s": ["x"], "t": pa.array([1_000_000], pa.timestamp("us", "UTC"))})
    write("pandas", _frame("pandas", first), out("delta"), tmp_path)
    paris = pa.array([2_000_000_000], pa.timestamp("ns", "Europe/Paris"))  # 2 s after the epoch, whole us
    second = pa.table({"s": pa.array(["y"], pa.large_string()), "t": paris})
    write(engine_name, _frame(engine_name, second), out("delta", "append"), tmp_path)
    expected = pa.table({"s": ["x", "y"], "t": pa.array([1_000_000, 2_000_000], pa.timestamp("us", "UTC"))})
    assert _reads_back(engine_name, tmp_path, expected)


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_delta_column_missing_from_the_frame_is_named_and_the_table_kept(tmp_path, engine_name):
    write(engine_name, OLD, out("delta"), tmp_path)
    before = _delta_now(tmp_path)
    message = refused(engine_name, OLD[["id"]], out("delta", "append"), tmp_path)
    assert message == (
        f"output 'out': column 'tag' of the Delta table at {tmp_path}/data/out is not in the frame (its columns: "
        "id); Delta keeps a table's columns, on overwrite too: nothing was written"
    )
    assert _delta_now(tmp_path) == before


EMPTY_PARTITION = (
    "output 'out': partition column 'p' holds the empty string, which Delta stores as null (an empty partition "
    "value is null in the Delta protocol), so it would read back as null and the record's hash would not be the "
    "data's; nothing was written. Replace it in the task (e.g. with null, or a placeholder), or partition by "
    "another column"
)


@pytest.mark.parametrize("engine_name", LOCAL)
def test_an_empty_string_delta_partition_value_is_refused_before_anything_is_written(tmp_path, engine_name):
    frame = pd.DataFrame({"p": ["", "x"], "v": [1, 2]})
    assert refused(engine_name, frame, out("delta", partition_by=["p"]), tmp_path) == EMPTY_PARTITION
    assert not (tmp_path / "data/out").exists()  # no table, not even an empty folder
    old = pa.table({"p": ["x"], "v": [1]})
    write(engine_name, _frame(engine_name, old), out("delta", partition_by=["p"]), tmp_path)
    before = _delta_now(tmp_path)
    assert refused(engine_name, frame, out("delta", "append", partition_by=["p"]), tmp_path) == EMPTY_PARTITION
    assert _delta_now(tmp_path) == before
    assert _reads_back(engine_name, tmp_path, old)


NANOSECONDS = (
    "output 'out': column 't' holds timestamps with nanoseconds, and Delta keeps microseconds: they would be "
    "dropped, so the data would not be the frame written; nothing was written. Round the column to microseconds "
    "in the task (e.g. .dt.floor('us')), or write format: parquet (it keeps nanoseconds)"
)


@pytest.mark.parametrize("nested", [False, True], ids=["column", "in-a-struct"])
@pytest.mark.parametrize("engine_name", LOCAL)
def test_delta_nanoseconds_are_refused_unless_whole_microseconds(tmp_path, engine_name, nested):
    def table(nanos: list[int]) -> pa.Table:
        t = pa.array(nanos, pa.timestamp("ns"))
        return pa.table({"t": pa.StructArray.from_arrays([t], ["t"]) if nested else t})

    old = table([1_000])
    write(engine_name, _frame(engine_name, old), out("delta"), tmp_path)
    before = _delta_now(tmp_path)
    sub = table([2_000, 1_704_067_200_000_000_123])  # the second: 2024-01-01 00:00:00.000000123
    assert refused(engine_name, _frame(engine_name, sub), out("delta", "append"), tmp_path) == NANOSECONDS
    assert _delta_now(tmp_path) == before
    assert _reads_back(engine_name, tmp_path, old)
    write(engine_name, _frame(engine_name, table([3_000])), out("delta", "append"), tmp_path)  # lossless
    us = pa.array([1, 3], pa.timestamp("us"))
    assert _reads_back(
        engine_name, tmp_path, pa.table({"t": pa.StructArray.from_arrays([us], ["t"]) if nested else us})
    )


def _map_with_nulls(offsets: pa.Array, keys: pa.Array, items: pa.Array, mask: pa.Array) -> pa.Array:
    """``MapArray.from_arrays(offsets, keys, items, mask=mask)``, built from its buffers: pyarrow 14 (Databricks
    14.3 and 15.4 LTS) takes no ``mask`` there. The entries under a null slot stay in the child."""
    plain = pa.MapArray.from_arrays(offsets, keys, items)
    valid = pa.array([not m for m in mask.to_pylist()]).buffers()[1]
    return pa.Array.from_buffers(plain.type, len(plain), [valid, plain.buffers()[1]], children=[plain.values])


def _hidden_and_shown_nanoseconds() -> tuple[dict[str, pa.Array], dict[str, pa.Array]]:
    """Columns whose one nanosecond value (2024-01-01 00:00:00.000000123) is no value of the table (under a null
    slot, in an unused dictionary entry), and the same columns with it shown."""
    ns = pa.timestamp("ns")
    odd = 1_704_067_200_000_000_123
    values = pa.array([1_000, odd], ns)
    null_second = pa.array([False, True])
    offsets = pa.array([0, 1, 2], pa.int32())
    hidden = {
        "struct": pa.StructArray.from_arrays([values], ["t"], mask=null_second),
        "list": pa.ListArray.from_arrays(offsets, values, mask=null_second),
        "large_list": pa.LargeListArray.from_arrays(pa.array([0, 1, 2], pa.int64()), values, mask=null_second),
        "map": _map_with_nulls(offsets, pa.array(["a", "b"]), values, null_second),
        "map_key": _map_with_nulls(offsets, values, pa.array([1, 2]), null_second),
        "dictionary": pa.DictionaryArray.from_arrays(pa.array([0, 0], pa.int8()), values),
    }
    shown = {
        "struct": pa.StructArray.from_arrays([values], ["t"]),
        "list": pa.ListArray.from_arrays(offsets, values),
        "large_list": pa.LargeListArray.from_arrays(pa.array([0, 1, 2], pa.int64()), values),
        "map": pa.MapArray.from_arrays(offsets, pa.array(["a", "b"]), values),
        "map_key": pa.MapArray.from_arrays(offsets, values, pa.array([1, 2])),
        "dictionary": pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()), values),
    }
    if hasattr(pa, "ListViewArray"):  # pyarrow >= 16: views have no cast, their values are read slot by slot
        starts, sizes = pa.array([0, 1], pa.int32()), pa.array([1, 1], pa.int32())
        hidden["list_view"] = pa.ListViewArray.from_arrays(starts, sizes, values, mask=null_second)
        shown["list_view"] = pa.ListViewArray.from_arrays(starts, sizes, values)
    return hidden, shown


def test_nanoseconds_that_are_no_value_of_the_table_are_not_refused() -> None:
    hidden, shown = _hidden_and_shown_nanoseconds()
    for kind in hidden:
        assert sub_microsecond_column(pa.table({kind: hidden[kind]})) is None, kind
        assert sub_microsecond_column(pa.table({"ok": [1], kind: shown[kind].slice(1)})) == kind, kind
    assert sub_microsecond_column(pa.table({"c": pa.chunked_array([hidden["list"], shown["list"]])})) == "c"
    # seconds and milliseconds are not nanoseconds: one that overflows microseconds is not a refusal of them
    seconds = pa.array([10**13], pa.timestamp("s"))
    both = pa.StructArray.from_arrays([seconds, pa.array([1_000], pa.timestamp("ns"))], ["s", "ns"])
    assert sub_microsecond_column(pa.table({"c": both})) is None


def test_a_delta_write_takes_a_frame_whose_nanoseconds_are_hidden(tmp_path) -> None:
    hidden, _ = _hidden_and_shown_nanoseconds()
    table = pa.table({"s": hidden["struct"], "l": hidden["list"]})
    write("pandas", table, out("delta"), tmp_path)
    us = pa.array([1, None], pa.timestamp("us"))
    got = get_engine("pandas").read(out("delta"), tmp_path)
    frame = pa.Table.from_pandas(got) if isinstance(got, pd.DataFrame) else got
    assert frame.column("s").to_pylist() == [{"t": us[0].as_py()}, None]
    assert frame.column("l").to_pylist() == [[us[0].as_py()], None]


# --- 6. an append of other columns or types is refused -----------------------------------------------------------


def drift_refusal(tmp_path: Path, why: str) -> str:
    return (
        f"output 'out': cannot append to {tmp_path}/data/out: {why}; a reader takes one file's columns and types "
        "for all, so the output would not read back as written. Nothing was committed, the previous data is as "
        "it was: make the frame's columns and types those of the output, overwrite it, or write another"
    )


@pytest.mark.parametrize("drift", ["columns", "types"])
@pytest.mark.parametrize("fmt", FILES)
@pytest.mark.parametrize("engine_name", LOCAL)
def test_an_append_of_other_columns_or_types_is_refused_and_the_output_kept(tmp_path, engine_name, fmt, drift):
    first = pa.table({"a": [1]})
    write(engine_name, _frame(engine_name, first), out(fmt, "append"), tmp_path)
    (part,) = sorted((tmp_path / "data/out").iterdir())
    before = snapshot(tmp_path / "data/out")
    if drift == "columns":
        new = pa.table({"b": [1]})
        why = f"different columns: {part} has a that the new part lacks, and the new part has b that {part} lacks"
    else:
        new = pa.table({"a": ["x"]})
        why = f"different column types: column 'a' is int64 in {part} but string in the new part"
    assert refused(engine_name, _frame(engine_name, new), out(fmt, "append"), tmp_path) == drift_refusal(tmp_path, why)
    assert snapshot(tmp_path / "data/out") == before
    engine = get_engine(engine_name)
    assert engine.hash(engine.read(out(fmt), tmp_path)) == _rows_hash(first)


@pytest.mark.parametrize("fmt", FILES)
def test_an_append_by_the_other_engine_with_the_same_rows_v1_types_goes_through(tmp_path, fmt):
    # polars writes strings as large_string or views, pandas as string: one rows-v1 type, so not a drift (and
    # parquet and json columns are matched by name: another order is not one either)
    write("pandas", _frame("pandas", pa.table({"a": [1], "s": ["x"]})), out(fmt, "append"), tmp_path)
    second = {"s": ["y"], "a": [2]} if fmt != "csv" else {"a": [2], "s": ["y"]}
    write("polars", _frame("polars", pa.table(second)), out(fmt, "append"), tmp_path)
    write("pandas", _frame("pandas", pa.table({"a": [3], "s": ["z"]})), out(fmt, "append"), tmp_path)
    expected = _rows_hash(pa.table({"a": [1, 2, 3], "s": ["x", "y", "z"]}))
    for engine_name in LOCAL:
        engine = get_engine(engine_name)
        assert engine.hash(engine.read(out(fmt), tmp_path)) == expected


@pytest.mark.parametrize("engine_name", LOCAL)
def test_an_append_to_an_empty_folder_takes_any_columns(tmp_path, engine_name):
    (tmp_path / "data/out").mkdir(parents=True)
    (tmp_path / "data/out/_SUCCESS").write_text("")
    write(engine_name, _frame(engine_name, pa.table({"b": ["x"]})), out("parquet", "append"), tmp_path)
    engine = get_engine(engine_name)
    assert engine.hash(engine.read(out(), tmp_path)) == _rows_hash(pa.table({"b": ["x"]}))


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_csv_append_with_the_columns_in_another_order_is_refused(tmp_path, engine_name):
    # csv readers match a file's columns by position (polars refuses another order, Spark reads it swapped)
    first = pa.table({"a": [1], "s": ["x"]})
    write(engine_name, _frame(engine_name, first), out("csv", "append"), tmp_path)
    (part,) = sorted((tmp_path / "data/out").iterdir())
    before = snapshot(tmp_path / "data/out")
    message = refused(
        engine_name, _frame(engine_name, pa.table({"s": ["y"], "a": [2]})), out("csv", "append"), tmp_path
    )
    why = f"columns in another order: {part} has a, s but the new part s, a"
    assert message == drift_refusal(tmp_path, why)
    assert snapshot(tmp_path / "data/out") == before
    engine = get_engine(engine_name)
    assert engine.hash(engine.read(out("csv"), tmp_path)) == _rows_hash(first)


@pytest.mark.parametrize("engine_name", LOCAL)
def test_delta_nanoseconds_in_a_fixed_size_list_are_refused_too(tmp_path, engine_name):
    # a type the nanosecond walk did not enter: deltalake dropped them silently
    values = pa.array([[1_000, 1_704_067_200_000_000_123]], pa.list_(pa.timestamp("ns"), 2))
    message = refused(engine_name, _frame(engine_name, pa.table({"t": values})), out("delta"), tmp_path)
    assert message == NANOSECONDS
    assert not (tmp_path / "data" / "out").exists()


@pytest.mark.parametrize("engine_name", LOCAL)
@pytest.mark.parametrize("mode", ["overwrite", "append"])
def test_check_output_refuses_a_file_where_a_folder_above_the_output_goes(tmp_path, engine_name, mode):
    # found only by the lock's mkdir in the write stage, after the read and the transform (FileExistsError)
    (tmp_path / "data").mkdir()
    (tmp_path / "data/f").write_text("someone's file")
    with pytest.raises(EngineError) as err:
        get_engine(engine_name).check_output(out(mode=mode, path="data/f/deeper/out"), tmp_path)
    assert str(err.value) == (
        f"output 'out': {tmp_path}/data/f is a file, so no output folder can be made at {tmp_path}/data/f/deeper/out; "
        "move it away or choose another path"
    )
    assert (tmp_path / "data/f").read_text() == "someone's file"
