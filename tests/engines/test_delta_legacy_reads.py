"""A Delta table whose data file Spark wrote in its legacy hybrid calendar, from a defect found in the nineteenth
session: a file Spark 2.4 wrote (or Spark 3 with ``datetimeRebaseModeInWrite=LEGACY``) holding DATE'1000-01-01'
was read by the pandas and polars engines as 1000-01-06 (Spark reads the day as 1000-01-01), hashed without a word,
and a run wrote those days on: only the per-file hash refused it, and the runner then hashed the misread frame whole
instead (hash_mode full, the refusal as its reason). Now both engines' Delta reads refuse it, naming the input, the
table, the data file, the column and the value, before the transform runs; and the runner never turns that refusal
into a whole-frame hash.

The data files are written as Spark writes them (the stored days are the hybrid calendar's, with the footer keys
Spark adds: see tests/engines/test_legacy_dates.py, checked against a file Spark 3.5.9 wrote), then made a Delta
table by deltalake's ``convert_to_deltalake``, whose log holds the statistics it reads from the files' footers.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("deltalake", reason="deltalake is not installed in this venv")

from deltalake import DeltaTable, convert_to_deltalake

from tests.engines.test_legacy_dates import dates, gregorian_day, int96, julian_day, spark_file
from tests.lineage.usecase import last, write_task
from tests.optional import LOCAL_ENGINES
from ubunye.cli.hash import hash_target
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.exceptions import EngineError, TaskError
from ubunye.lineage import RecordStore
from ubunye.lineage.record import DatasetRecord
from ubunye.runner import _hash_table, _Table, run_task

OLD = julian_day(1000, 1, 1)  # DATE'1000-01-01' as Spark stores it in the hybrid calendar
MODERN = gregorian_day(dt.date(2024, 5, 1))


def delta_of(folder: Path, files: dict[str, pa.Table], *, stats: bool = True, **spark: object) -> Path:
    """A Delta table at ``folder`` whose data files are ``files`` (name -> rows) as Spark writes them (``spark``:
    :func:`spark_file`'s keys and version), its log made by deltalake from them; without ``stats``, the log holds
    none (as Spark writes past its indexed columns)."""
    for name, rows in files.items():
        spark_file(folder / name, rows, **spark)  # type: ignore[arg-type]
    convert_to_deltalake(str(folder))
    if not stats:
        for log in (folder / "_delta_log").glob("*.json"):
            lines = [json.loads(line) for line in log.read_text().splitlines()]
            for line in lines:
                line.get("add", {}).pop("stats", None)
            log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return folder


def read_refusal(engine: str, folder: Path) -> str:
    with pytest.raises(EngineError) as info:  # a LegacyCalendarError
        get_engine(engine).read(IOConfig("orders", format="delta", path=str(folder)), folder.parent)
    return str(info.value)


@pytest.mark.parametrize("stats", [True, False], ids=["stats", "no-stats"])
@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_a_legacy_date_in_a_delta_file_is_refused_naming_table_file_column_value(
    tmp_path: Path, engine: str, stats: bool
) -> None:
    folder = tmp_path / "t"
    files = {
        "part-0.parquet": pa.table({"id": [1], "d": dates([MODERN])}),
        "part-1.parquet": pa.table({"id": [2, 3], "d": dates([MODERN, OLD])}),
    }
    delta_of(folder, files, stats=stats, keys=("legacyDateTime",))
    msg = read_refusal(engine, folder)
    assert msg.startswith(f"input 'orders' (Delta at {folder}): part-1.parquet: column 'd' holds date 1000-01-01 ")
    assert "org.apache.spark.legacyDateTime" in msg
    if "polars" in LOCAL_ENGINES:
        assert msg == read_refusal("polars" if engine == "pandas" else "pandas", folder)


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_a_spark_2_int96_timestamp_in_a_delta_file_is_refused(tmp_path: Path, engine: str) -> None:
    # INT96 has no min/max in the footer: the legacy file's column is read to find its smallest value
    folder = delta_of(
        tmp_path / "t", {"part-0.parquet": pa.table({"t": int96([MODERN, OLD])})}, keys=(), version="2.4.8"
    )
    msg = read_refusal(engine, folder)
    assert "part-0.parquet: column 't' holds timestamp 1000-01-01 00:00:00 UTC" in msg
    assert "written by Spark 2.4.8" in msg


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_legacy_keys_with_modern_values_read_as_without(tmp_path: Path, engine: str) -> None:
    # from 1582-10-15 (dates) and 1900-01-02 (instants) on, both calendars store the same numbers
    rows = pa.table({
        "d": dates([gregorian_day(dt.date(1582, 10, 15)), None, MODERN]),
        "t": int96([gregorian_day(dt.date(1900, 1, 2)), None, MODERN]),
    })  # fmt: skip
    legacy = delta_of(tmp_path / "legacy", {"part-0.parquet": rows}, keys=("legacyDateTime", "legacyINT96"))
    plain = delta_of(tmp_path / "plain", {"part-0.parquet": rows}, keys=())
    got = hash_target(str(legacy), "delta", engine)
    assert got["row_count"] == 3
    assert got["data_hash"] == hash_target(str(plain), "delta", engine)["data_hash"]


def instants(days: list[int | None]) -> pa.Array:
    """Midnight UTC of each day, as instants (stored as INT64 by ``spark_file(..., as_int96=False)``)."""
    return int96(days).cast(pa.timestamp("us", "UTC"))


def test_only_files_the_log_allows_an_old_value_in_are_looked_at(tmp_path: Path) -> None:
    # The cost: the log's statistics pick the files whose footers are read before a polars read; none for a table
    # without a date or timestamp column, or whose files' minimums are later.
    from ubunye.hashing.delta_files import _legacy_candidates

    files = {
        "part-0.parquet": pa.table({"d": dates([MODERN]), "t": instants([MODERN])}),
        "part-1.parquet": pa.table({"d": dates([OLD]), "t": instants([MODERN])}),
        "part-2.parquet": pa.table({"d": dates([None]), "t": instants([None])}),  # nulls only: no minimum
        "part-3.parquet": pa.table({"d": dates([MODERN]), "t": instants([gregorian_day(dt.date(1899, 12, 31))])}),
    }
    table = DeltaTable(str(delta_of(tmp_path / "dated", files, keys=(), as_int96=False)))
    assert sorted(_legacy_candidates(table)) == ["part-1.parquet", "part-3.parquet"]
    plain = delta_of(tmp_path / "plain", {"part-0.parquet": pa.table({"n": [1], "s": ["x"]})}, keys=())
    assert _legacy_candidates(DeltaTable(str(plain))) == []
    bare = DeltaTable(str(delta_of(tmp_path / "bare", files, stats=False, keys=(), as_int96=False)))
    assert len(_legacy_candidates(bare)) == 4  # no statistics: any file may hold one
    listed = pa.table({"l": pa.array([[MODERN]], pa.list_(pa.int32())).cast(pa.list_(pa.date32()))})
    nested = delta_of(tmp_path / "nested", {"part-0.parquet": listed}, keys=())
    assert _legacy_candidates(DeltaTable(str(nested))) == ["part-0.parquet"]  # no statistics inside a list


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_a_run_reading_it_fails_before_the_transform_and_writes_nothing(tmp_path: Path, engine: str) -> None:
    source = delta_of(tmp_path / "src", {"part-0.parquet": pa.table({"d": dates([OLD])})}, version="2.4.8", keys=())
    out, uc = tmp_path / "out", tmp_path / "uc"
    config = {
        "CONFIG": {
            "inputs": {"src": {"format": "delta", "path": str(source)}},
            "outputs": {"out": {"format": "parquet", "path": str(out)}},
            "transform": {"type": "sql", "query": "SELECT d FROM src"},
        }
    }
    with pytest.raises(TaskError, match=r"failed in read: input 'src' \(Delta at .*column 'd' holds date 1000-01-01"):
        run_task(write_task(uc, "t", config), engine=engine, lineage=True)
    assert not out.exists()
    record = last(uc, "t")
    assert record.inputs[0].data_hash is None and record.inputs[0].hash_mode is None


def test_the_runner_does_not_hash_a_refused_table_whole(tmp_path: Path) -> None:
    # Were a refusal to reach the per-file hash (an engine whose read let the table pass), the misread frame must
    # not be hashed whole in its place: the refusal goes on, naming the input.
    folder = delta_of(tmp_path / "t", {"part-0.parquet": pa.table({"d": dates([OLD])})}, keys=("legacyDateTime",))
    io = IOConfig("orders", format="delta", path=str(folder))
    record = DatasetRecord(name="orders", format="delta")  # as the runner makes one before hashing it
    table = _Table(tmp_path, 0, RecordStore(tmp_path).file_sums())
    with pytest.raises(EngineError, match=rf"^input 'orders' \(Delta at {folder}\): .*holds date 1000-01-01"):
        _hash_table(record, get_engine("pandas"), io, table)
    assert record.hash_mode is None and record.hash_reason is None
