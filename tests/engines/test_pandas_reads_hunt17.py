"""The pandas engine's reads, from defects found in the seventeenth session:

- csv: pyarrow 14 (Databricks 14.3) inferred a timestamp outside 1677-2262 with a fraction (Spark writes the
  9999-12-31 "open end" as ``9999-12-31T00:00:00.000Z``) as nanoseconds and wrapped it to another instant;
  pyarrow 26 reads such a column as text. Now it is text on both.
- parquet: Spark's default INT96 timestamps past 2262 or before 1677 were read as other instants (any pyarrow);
  now read in microseconds, as Spark reads them.
- json: pyarrow's dataset scan of a folder of json files deadlocked now and then (a run hung, SIGTERM or not).
- a missing s3 input or bucket was reported as the path alone.

Expected values come from the files' own text (Python's csv and datetime), or from the same values written
another way (timestamp[us, UTC] parquet for INT96, an instant as Spark reads it).

Run these on the Databricks 14.3 stack too (pyarrow 14): ``.venv-dbr-14.3/bin/python -m pytest <this file>``.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.lineage import s3server
from ubunye.config import IOConfig
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame

s3_server = s3server.s3_server  # the fixtures
s3 = s3server.s3

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _read(folder: Path, fmt: str) -> pa.Table:
    frame = PandasEngine().read(IOConfig("i", format=fmt, path=str(folder)), folder.parent)
    return pa.Table.from_pandas(frame, preserve_index=False)


def _csv_rows(file: Path) -> list[list[str]]:
    with file.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))[1:]


# -- 1. csv timestamps beyond nanoseconds ----------------------------------------------------------------------


def test_a_csv_timestamp_past_2262_reads_as_its_text_and_hashes_as_that_text(tmp_path: Path) -> None:
    # pyarrow 14 read 9999-12-31T00:00:00.000Z as 1816-03-29 05:56:08.066277376: the run wrote that instant
    folder = tmp_path / "dim"
    folder.mkdir()
    text = "id,valid_to\n1,9999-12-31T00:00:00.000Z\n2,2024-03-01T00:00:00.000Z\n"
    (folder / "part-0.csv").write_text(text)
    rows = _csv_rows(folder / "part-0.csv")
    got = _read(folder, "csv")
    assert got.column("valid_to").to_pylist() == [r[1] for r in rows]
    as_text = pa.table({"id": pa.array([int(r[0]) for r in rows]), "valid_to": pa.array([r[1] for r in rows])})
    expected = hash_frame(as_text.to_pandas(types_mapper=pd.ArrowDtype)).data_hash
    assert PandasEngine().hash(PandasEngine().native(got)).data_hash == expected


def _nanoseconds(text: str) -> int:
    """Nanoseconds from 1970 of an ISO timestamp ``YYYY-MM-DD HH:MM:SS[.f][Z|+hh:mm|-hh:mm]`` (Python's own
    arithmetic, any year)."""
    zone = dt.timezone.utc
    if text.endswith("Z"):
        text = text[:-1]
    elif text[-6] in "+-":
        sign = 1 if text[-6] == "+" else -1
        zone = dt.timezone(sign * dt.timedelta(hours=int(text[-5:-3]), minutes=int(text[-2:])))
        text = text[:-6]
    whole, _, fraction = text.partition(".")
    when = dt.datetime.strptime(whole.replace("T", " "), "%Y-%m-%d %H:%M:%S").replace(tzinfo=zone)
    seconds = (when - EPOCH) // dt.timedelta(seconds=1)
    return seconds * 10**9 + int((fraction + "000000000")[:9])


def _held_as_nanoseconds(text: str) -> bool:
    """Whether pyarrow 26 reads ``text`` as a nanosecond timestamp: its whole seconds (it checks them first) and
    then its nanoseconds within an int64."""
    ns = _nanoseconds(text)
    return -(2**63) <= (ns // 10**9) * 10**9 and ns <= 2**63 - 1


EDGES = [
    "1677-09-21 00:12:43.145225",  # in an int64 of nanoseconds, but not its whole second: text on pyarrow 26
    "1677-09-21 00:12:44",
    "1677-09-21 00:12:44.000001",
    "2262-04-11 23:47:16.854775",
    "2262-04-11 23:47:16.854775807",
    "2262-04-11 23:47:16.854775808",
    "2262-04-11 23:47:17",
    "0001-01-01 00:00:00.5",
    "9999-12-31T00:00:00.000Z",
    "2262-04-11 22:47:16.5-01:00",
    "2262-04-12 00:47:17.1+01:00",
    "1677-09-21 00:12:44.5+01:00",
]


@pytest.mark.parametrize("value", EDGES)
def test_a_csv_timestamp_reads_as_an_instant_only_where_nanoseconds_hold_it(tmp_path: Path, value: str) -> None:
    # a second value with nine fraction digits makes pyarrow infer nanoseconds; zoned alike, so one column type
    other = "2000-01-01 00:00:00.000000001" + ("Z" if value[-1] == "Z" or value[-6] in "+-" else "")
    folder = tmp_path / "i"
    folder.mkdir()
    (folder / "part-0.csv").write_text(f"t\n{value}\n{other}\n")
    column = _read(folder, "csv").column("t")
    if _held_as_nanoseconds(value):
        assert pa.types.is_timestamp(column.type) and column.type.unit == "ns", column.type
        assert column.cast(pa.int64()).to_pylist() == [_nanoseconds(value), _nanoseconds(other)]
    else:
        assert column.to_pylist() == [value, other]  # the text as written, never a wrapped instant


# -- 2. INT96 parquet ---------------------------------------------------------------------------------------------

INSTANTS = [
    dt.datetime(9999, 12, 31),  # Spark's "open end"
    dt.datetime(2024, 3, 1, 1, 2, 3, 456789),
    dt.datetime(1, 1, 1),
    dt.datetime(1600, 6, 1),  # midnight: pyarrow 14's INT96 writer wraps a time of day before 1970 (not Spark's)
    dt.datetime(2263, 1, 1, 12, 30, 0, 5),
]


#: An INT96 timestamp is an instant (UTC-based), read as Spark reads it: ``timestamp``, in UTC.
UTC_INSTANTS = [t.replace(tzinfo=dt.timezone.utc) for t in INSTANTS]


def _write(folder: Path, *, int96: bool) -> None:
    """INT96 as Spark writes it (the wall clock of UTC), else the same instants as plain UTC microseconds."""
    folder.mkdir()
    kind = pa.timestamp("us") if int96 else pa.timestamp("us", "UTC")
    table = pa.table({"id": list(range(len(INSTANTS))), "t": pa.array(INSTANTS, kind)})
    pq.write_table(table, folder / "part-0.parquet", use_deprecated_int96_timestamps=int96)


def test_int96_timestamps_of_any_year_keep_their_value(tmp_path: Path) -> None:
    # any pyarrow read INT96 as nanoseconds: 9999-12-31 came back as 1816-03-29, 0001-01-01 as 1754-08-30
    _write(tmp_path / "int96", int96=True)
    _write(tmp_path / "micros", int96=False)
    stored = pq.ParquetFile(tmp_path / "int96" / "part-0.parquet").schema
    assert stored.column(1).physical_type == "INT96"
    got = _read(tmp_path / "int96", "parquet")
    assert got.column("t").to_pylist() == UTC_INSTANTS
    same = _read(tmp_path / "micros", "parquet")
    engine = PandasEngine()
    assert engine.hash(engine.native(got)).data_hash == engine.hash(engine.native(same)).data_hash


def test_int96_timestamps_read_from_a_url_keep_their_value(s3, tmp_path: Path) -> None:
    import s3fs

    _write(tmp_path / "int96", int96=True)
    bucket = s3.bucket()
    s3fs.S3FileSystem(**s3.options).put(str(tmp_path / "int96" / "part-0.parquet"), f"{bucket[5:]}/i/part-0.parquet")
    for options in (s3.options, None):  # fsspec's filesystem, and pyarrow's own (the environment's endpoint)
        source = IOConfig("i", format="parquet", path=f"{bucket}/i", storage_options=options)
        frame = PandasEngine().read(source, tmp_path)
        assert pa.Table.from_pandas(frame, preserve_index=False).column("t").to_pylist() == UTC_INSTANTS, options


# -- 3. a json folder read without pyarrow's dataset scan ----------------------------------------------------------


def _json_folder(folder: Path, files: int = 4, lines: int = 40_000) -> list[dict[str, object]]:
    """A folder of json-lines part files, as the pandas engine's appends write them; the rows written."""
    folder.mkdir()
    written = []
    for f in range(files):
        rows = [{"k": i, "v": f"value-{i}", "grp": i % 4, "stamp": f"k{f}"} for i in range(lines)]
        (folder / f"part-{f}.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
        written += rows
    return written


def test_a_folder_of_json_files_is_read_twenty_times_without_hanging(tmp_path: Path) -> None:
    # pyarrow's dataset json scan deadlocked in about half the reads of such a folder (gdb: ScanBatchesAsync)
    written = _json_folder(tmp_path / "data")
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from ubunye.config import IOConfig
        from ubunye.engines.pandas_engine import PandasEngine
        for _ in range(20):
            frame = PandasEngine().read(IOConfig("i", format="json", path="data"), Path({str(tmp_path)!r}))
            print(len(frame), flush=True)
        """
    )
    try:  # run() kills the child at the timeout (a hung read ignores SIGTERM)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the reads hung: {exc.stdout!r} after 240 s")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(len(written))] * 20


def test_a_json_folder_reads_its_rows_in_file_order_with_partition_values(tmp_path: Path) -> None:
    import gzip

    root = tmp_path / "p"
    expected = []
    for n, (part, value) in enumerate([("k=1", 1), ("k=2", 2), ("k=__HIVE_DEFAULT_PARTITION__", None)]):
        (root / part).mkdir(parents=True)
        rows = [{"id": n * 10 + j, "at": f"2024-01-0{j + 1}T12:00:00+02:00", "s": {"x": j}} for j in range(3)]
        body = "".join(json.dumps(r) + "\n" for r in rows)
        if n == 1:
            (root / part / "part-0.json.gz").write_bytes(gzip.compress(body.encode()))
        else:
            (root / part / "part-0.json").write_text(body)
        expected += [{**r, "k": value} for r in rows]
    got = _read(root, "json")
    assert got.to_pylist() == expected  # the ISO text kept as text, the partition column last


def test_a_json_file_whose_field_changes_type_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "i"
    folder.mkdir()
    (folder / "part-0.json").write_text('{"a": 1}\n{"a": 2}\n')
    (folder / "part-1.json").write_text('{"a": "x"}\n')
    with pytest.raises(EngineError, match=r"input 'i': cannot read json at .*part-1\.json.*changed from number"):
        _read(folder, "json")


# -- 4. a missing s3 input or bucket -------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_a_missing_s3_input_or_bucket_is_said_as_such(s3, tmp_path: Path, fmt: str) -> None:
    # said only "cannot read parquet at s3://b/nothere: b/nothere" (s3fs's FileNotFoundError is the path alone)
    bucket = s3.bucket()
    gone = f"ubunye-gone-{bucket[-12:]}"  # a bucket nobody made
    for options in (s3.options, None):
        for url, said in [
            (f"{bucket}/nothere", f"input 'i': no such file or folder: {bucket}/nothere"),
            (f"s3://{gone}/x", f"input 'i': no such bucket: s3://{gone} (reading s3://{gone}/x)"),
        ]:
            with pytest.raises(EngineError) as err:
                PandasEngine().read(IOConfig("i", format=fmt, path=url, storage_options=options), tmp_path)
            assert str(err.value) == said, (options, str(err.value))
