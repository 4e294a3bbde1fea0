"""The pandas engine, from defects found in the eighteenth session:

- parquet INT96 timestamps (Spark's default ``outputTimestampType``, Databricks' too) were read as ``timestamp_ntz``
  where Spark reads them as ``timestamp`` (an instant, UTC-based): one file, two hashes (``ubunye hash -e spark``
  and ``-e pandas``), silently. They are instants in UTC now, whatever the footer holds (no schema, an Arrow
  schema, Spark's schema), at any depth and in any year.
- an INT96 timestamp's nanoseconds were truncated: two files differing only there hashed alike (docs/rows-v1.md
  section 5.3 refuses that). Refused now, naming the file and column.
- a frame with the columns ``0`` and ``'0'`` was written (json keeping one of them, parquet and csv holding the
  name twice, unreadable) in place of the previous output; refused now before any write, naming both.
- a column pyarrow cannot convert (2**70 in an object column, Decimal('Infinity')) failed the write with pyarrow's
  words alone ("Python int too large to convert to C long"), naming no column; now named, with its dtype and value.

Files that Spark writes are written here without Spark, as Spark writes them: pyarrow with INT96 timestamps
(``use_deprecated_int96_timestamps``), without an Arrow schema in the footer, Spark's schema in its metadata.
Expected hashes come from ``hash_frame`` of the same rows built independently as UTC microsecond timestamps.
"""

from __future__ import annotations

import datetime as dt
import json
import struct
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.lineage.usecase import last, write_task
from ubunye.cli.hash import hash_target
from ubunye.exceptions import TaskError
from ubunye.hashing import hash_frame
from ubunye.runner import run_task

UTC = dt.timezone.utc
UBUNYE = str(Path(sys.executable).with_name("ubunye"))
SPARK_ROW_METADATA = "org.apache.spark.sql.parquet.row.metadata"
NO_DELTALAKE = "deltalake is not installed in this venv (make pandas2 installs the package without its dependencies)"

#: Spark's "open end", an ordinary instant, the first day, a pre-1677 one (outside nanoseconds both ways), null.
STAMPS = [
    dt.datetime(9999, 12, 31),
    dt.datetime(2024, 3, 1, 12, 30, 15, 123456),
    dt.datetime(1, 1, 1),
    dt.datetime(1500, 6, 1),
    None,
]


def _rows(zone: str | None) -> pa.Table:
    """The rows of every file here: timestamps top-level, in a struct, a list and a map's values, in ``zone``."""
    kind = pa.timestamp("us", zone)
    stamps = pa.array(STAMPS, kind)
    return pa.table({
        "id": pa.array(range(len(STAMPS)), pa.int64()),
        "t": stamps,
        "s": pa.StructArray.from_arrays([stamps, pa.array(range(len(STAMPS)), pa.int64())], ["u", "n"]),
        "l": pa.array([[x, None] for x in STAMPS], pa.list_(kind)),
        "m": pa.array([[("k", x)] for x in STAMPS], pa.map_(pa.string(), kind)),
    })  # fmt: skip


def _spark_schema() -> dict:
    def field(name: str, kind: object) -> dict:
        return {"name": name, "type": kind, "nullable": True, "metadata": {}}

    nested = {"type": "struct", "fields": [field("u", "timestamp"), field("n", "long")]}
    return {"type": "struct", "fields": [
        field("id", "long"), field("t", "timestamp"), field("s", nested),
        field("l", {"type": "array", "elementType": "timestamp", "containsNull": True}),
        field("m", {"type": "map", "keyType": "string", "valueType": "timestamp", "valueContainsNull": True}),
    ]}  # fmt: skip


#: Whether this pyarrow writes footer metadata without its own Arrow schema (not pyarrow 14: Databricks 14.3).
KEY_VALUES = hasattr(pq.ParquetWriter, "add_key_value_metadata")
#: The footer a Spark job's file has (Spark's schema), or none where this pyarrow cannot write that alone.
SPARK = "spark" if KEY_VALUES else "none"


def _write_int96(file: Path, table: pa.Table, footer: str) -> None:
    """``table`` as an INT96 parquet file, its footer holding nothing of the types (as Spark's writer without its
    metadata), an Arrow schema (pyarrow's ``store_schema``), or Spark's schema (as Spark writes it)."""
    if footer == "spark" and not KEY_VALUES:
        pytest.skip("this pyarrow writes footer metadata only with its own Arrow schema")
    file.parent.mkdir(parents=True, exist_ok=True)
    options = {"use_deprecated_int96_timestamps": True, "store_schema": footer == "arrow"}
    with pq.ParquetWriter(file, table.schema, **options) as writer:
        writer.write_table(table)
        if footer == "spark":
            writer.add_key_value_metadata({SPARK_ROW_METADATA: json.dumps(_spark_schema())})
    stored = pq.ParquetFile(file)
    assert [stored.schema.column(i).physical_type for i in range(len(stored.schema))].count("INT96") == 4
    assert (SPARK_ROW_METADATA.encode() in (stored.metadata.metadata or {})) == (footer == "spark")
    assert (b"ARROW:schema" in (stored.metadata.metadata or {})) == (footer == "arrow")


def _cli_hash(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([UBUNYE, "hash", str(path), "-e", "pandas", "--json", *extra], capture_output=True, text=True)


# -- 1. INT96 timestamps are instants -------------------------------------------------------------------------


@pytest.mark.parametrize("footer", ["none", "arrow", "spark"])
def test_int96_parquet_hashes_as_instants_in_utc(tmp_path: Path, footer: str) -> None:
    _write_int96(tmp_path / "out" / "part-0.parquet", _rows(None), footer)
    done = _cli_hash(tmp_path / "out")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    want = hash_frame(_rows("UTC"))
    assert (got["schema"], got["data_hash"], got["row_count"]) == (want.schema, want.data_hash, want.row_count)
    assert "timestamp_ntz" not in got["schema"]
    line = hash_target(str(tmp_path / "out"), "parquet", "pandas", show_lines=1)["lines"][0]
    assert json.loads(line)["t"] == "9999-12-31T00:00:00.000000Z"  # docs/rows-v1.md section 5: an instant ends in Z


def test_int96_in_partition_folders_hashes_as_instants(tmp_path: Path) -> None:
    for day in ("a", "b"):
        _write_int96(tmp_path / "out" / f"day={day}" / "part-0.parquet", _rows(None), SPARK)
    got = hash_target(str(tmp_path / "out"), "parquet", "pandas")
    rows = _rows("UTC")
    both = pa.concat_tables([rows.append_column("day", pa.array([d] * rows.num_rows)) for d in ("a", "b")])
    assert (got["schema"], got["data_hash"]) == (hash_frame(both).schema, hash_frame(both).data_hash)


def test_a_run_reading_int96_records_instants_and_appends_instants_to_it(tmp_path: Path) -> None:
    # a Spark job's INT96 output, read by a pandas task that appends the same rows (read back: instants) to it
    _write_int96(tmp_path / "out" / "part-0.parquet", _rows(None), SPARK)
    code = "from ubunye import Task\n\n\nclass T(Task):\n    def transform(self, sources):\n"
    code += "        return {'o': sources['i']}\n"
    config = {
        "ENGINE": {"backend": "pandas"},
        "CONFIG": {
            "inputs": {"i": {"format": "parquet", "path": "out"}},
            "outputs": {"o": {"format": "parquet", "path": "out", "mode": "append"}},
            "monitors": ["lineage"],
        },
    }
    assert run_task(write_task(tmp_path, "t", config, code)).status == "success"
    record = last(tmp_path, "t")
    want = hash_frame(_rows("UTC"))
    assert (record.inputs[0].schema, record.inputs[0].data_hash) == (want.schema, want.data_hash)
    assert (record.outputs[0].schema, record.outputs[0].data_hash) == (want.schema, want.data_hash)
    twice = hash_frame(pa.concat_tables([_rows("UTC"), _rows("UTC")]))
    assert hash_target(str(tmp_path / "out"), "parquet", "pandas")["data_hash"] == twice.data_hash


def test_a_spark_delta_table_with_int96_files_hashes_as_its_parquet_file(tmp_path: Path) -> None:
    # Delta's log says timestamp: deltalake read its INT96 files as instants already; the same file as plain
    # parquet now hashes alike
    pytest.importorskip("deltalake", reason=NO_DELTALAKE)
    from tests.engines.test_delta_hunt17 import _delta_by_hand

    flat = _rows(None).select(["id", "t"])
    spark = {"type": "struct", "fields": [f for f in _spark_schema()["fields"] if f["name"] in ("id", "t")]}
    table = _delta_by_hand(tmp_path / "delta", flat, spark)
    (tmp_path / "parquet").mkdir()
    pq.write_table(flat, tmp_path / "parquet" / "part-0.parquet", use_deprecated_int96_timestamps=True)
    want = hash_frame(_rows("UTC").select(["id", "t"]))
    for path, fmt in ((table, "delta"), (str(tmp_path / "parquet"), "parquet")):
        got = hash_target(path, fmt, "pandas")
        assert (got["schema"], got["data_hash"]) == (want.schema, want.data_hash), fmt


# -- 2. INT96 nanoseconds --------------------------------------------------------------------------------------

NANOS = 1_700_000_000_123_456_001  # 2023-11-14T22:13:20.123456001Z
DAY_NS = 86_400 * 10**9
JULIAN_EPOCH = 2_440_588  # the Julian day of 1970-01-01, as INT96 counts days


def _int96_bytes(nanos: int) -> bytes:
    """An INT96 value as parquet stores it: nanoseconds of the day (8 bytes), then the Julian day (4 bytes)."""
    return struct.pack("<qi", nanos % DAY_NS, nanos // DAY_NS + JULIAN_EPOCH)


def _int96_file(file: Path, nanos: int, *, day: dt.date | None = None) -> None:
    """A one-row INT96 file holding ``nanoseconds`` since the epoch, with its day moved to ``day`` if given (a
    value no nanosecond timestamp holds: pyarrow cannot write it, so its 12 bytes are set in the file)."""
    file.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({"t": pa.array([nanos], pa.timestamp("ns"))})
    pq.write_table(table, file, use_deprecated_int96_timestamps=True, store_schema=False, compression="none",
                   use_dictionary=False, write_statistics=False)  # fmt: skip
    if day is not None:
        data = file.read_bytes()
        assert data.count(_int96_bytes(nanos)) == 1
        days = (day - dt.date(1970, 1, 1)).days
        moved = _int96_bytes(nanos % DAY_NS + days * DAY_NS)
        file.write_bytes(data.replace(_int96_bytes(nanos), moved))


def test_int96_nanoseconds_are_refused_naming_the_column(tmp_path: Path) -> None:
    # two files differing only in the nanoseconds hashed alike on pandas
    for name, nanos in (("a", NANOS), ("b", NANOS + 998)):
        _int96_file(tmp_path / name / "part-0.parquet", nanos)
        done = _cli_hash(tmp_path / name)
        assert done.returncode == 2, done.stdout
        assert "column 't' holds an INT96 timestamp with a non-zero sub-microsecond part" in done.stderr
        assert f"2023-11-14 22:13:20.123456{nanos % 1000:03d}Z" in done.stderr
        assert "part-0.parquet" in done.stderr


def test_int96_nanoseconds_past_2262_are_refused_and_whole_microseconds_pass(tmp_path: Path) -> None:
    # read in nanoseconds a 9999 value wraps; the check still sees its sub-microsecond part, and no other
    end = dt.date(9999, 12, 31)
    _int96_file(tmp_path / "odd" / "part-0.parquet", NANOS, day=end)
    done = _cli_hash(tmp_path / "odd")
    assert done.returncode == 2 and "9999-12-31 22:13:20.123456001Z" in done.stderr, done.stderr
    _int96_file(tmp_path / "whole" / "part-0.parquet", NANOS - 1, day=end)  # ...123456000: whole microseconds
    got = hash_target(str(tmp_path / "whole"), "parquet", "pandas")
    want = hash_frame(
        pa.table({"t": pa.array([dt.datetime(9999, 12, 31, 22, 13, 20, 123456, UTC)], pa.timestamp("us", "UTC"))})
    )
    assert (got["schema"], got["data_hash"]) == (want.schema, want.data_hash)


def test_int96_nanoseconds_inside_a_struct_are_refused_naming_its_column(tmp_path: Path) -> None:
    inner = pa.array([NANOS], pa.timestamp("ns"))
    table = pa.table({"id": [1], "s": pa.StructArray.from_arrays([pa.array([1]), inner], ["n", "u"])})
    (tmp_path / "o").mkdir()
    pq.write_table(table, tmp_path / "o" / "part-0.parquet", use_deprecated_int96_timestamps=True, store_schema=False)
    done = _cli_hash(tmp_path / "o")
    assert done.returncode == 2 and "column 's' holds an INT96 timestamp (inside it)" in done.stderr, done.stderr


# -- 3. and 4. frames pyarrow cannot write as they are -----------------------------------------------------------


def _task(tmp_path: Path, name: str, fmt: str, frame: str) -> Path:
    code = "from decimal import Decimal\n\nimport pandas as pd\n\nfrom ubunye import Task\n\n\n"
    code += f"class T(Task):\n    def transform(self, sources):\n        return {{'o': {frame}}}\n"
    config = {
        "ENGINE": {"backend": "pandas"},
        "CONFIG": {"outputs": {"o": {"format": fmt, "path": f"out-{fmt}"}}, "monitors": ["lineage"]},
    }
    return write_task(tmp_path, name, config, code)


def _read_back(tmp_path: Path, fmt: str) -> tuple[object, ...]:
    got = hash_target(str(tmp_path / f"out-{fmt}"), fmt, "pandas")
    return got["schema"], got["row_count"], got["data_hash"]


def _good_output(tmp_path: Path, fmt: str) -> tuple[object, ...]:
    """A first run's output at ``out-<fmt>``, and its hash as read back."""
    assert run_task(_task(tmp_path, "good", fmt, "pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})")).status == "success"
    return _read_back(tmp_path, fmt)


@pytest.mark.parametrize("fmt", ["json", "parquet", "csv", "delta"])
def test_columns_named_alike_once_text_are_refused_before_any_write(tmp_path: Path, fmt: str) -> None:
    if fmt == "delta":
        pytest.importorskip("deltalake", reason=NO_DELTALAKE)
    before = _good_output(tmp_path, fmt)
    task = _task(tmp_path, "clash", fmt, "pd.DataFrame({0: [1, 2], '0': ['x', 'y']})")
    with pytest.raises(TaskError, match=r"output 'o'.*the frame's columns 0 \(int\) and '0' \(str\) are both named"):
        run_task(task)
    assert last(tmp_path, "clash").status == "failed"
    assert _read_back(tmp_path, fmt) == before  # the previous output stands


@pytest.mark.parametrize(
    ("fmt", "frame", "said"),
    [
        ("parquet", "pd.DataFrame({'id': [1], 'big': pd.Series([2**70], dtype=object)})",
         r"column 'big' of dtype object cannot be converted to Arrow to be written \(row 0 holds "
         + str(2**70) + r", a int\): OverflowError"),
        ("delta", "pd.DataFrame({'id': [1, 2], 'd': [Decimal('1'), Decimal('Infinity')]})",
         r"column 'd' of dtype object cannot be converted to Arrow to be written \(row 1 holds "
         r"Decimal\('Infinity'\), a Decimal\)"),
    ],
)  # fmt: skip
def test_a_column_pyarrow_cannot_convert_is_named_with_its_dtype(
    tmp_path: Path, fmt: str, frame: str, said: str
) -> None:
    if fmt == "delta":
        pytest.importorskip("deltalake", reason=NO_DELTALAKE)
    before = _good_output(tmp_path, fmt)
    with pytest.raises(TaskError, match=rf"output 'o': cannot write {fmt} to .*: " + said):
        run_task(_task(tmp_path, "bad", fmt, frame))
    assert _read_back(tmp_path, fmt) == before


def test_int_column_names_alone_are_still_written(tmp_path: Path) -> None:
    # no clash: written as before (their names made text), the hash refused and recorded as such
    assert run_task(_task(tmp_path, "ints", "parquet", "pd.DataFrame({0: [1], 1: ['x']})")).status == "success"
    output = last(tmp_path, "ints").outputs[0]
    assert output.written and output.data_hash is None and "string column names" in (output.hash_error or "")
    assert hash_target(str(tmp_path / "out-parquet"), "parquet", "pandas")["schema"] == 'struct<"0":int64,"1":string>'
