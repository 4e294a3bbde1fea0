"""Parquet files the pandas and polars engines read as other values than Spark, from defects found in the eighteenth
session:

- Spark 3.x writing with ``spark.sql.parquet.datetimeRebaseModeInWrite`` / ``int96RebaseModeInWrite`` LEGACY (and
  Spark 2.x always) stores dates before 1582-10-15 and timestamps before 1900 in the hybrid Julian calendar, saying
  so in the footer (``org.apache.spark.legacyDateTime``, ``org.apache.spark.legacyINT96``); Spark rebases them on
  read, pyarrow and polars read other days silently (DATE'1000-01-01' as 1000-01-06). Refused now, naming the
  file, column and value; a legacy file holding no such value reads (and hashes) as the same rows without the key.
- a folder whose second file holds a uint64 (or a duration) where the first holds int64 was hashed as int64 by
  pandas, and refused by polars naming no file. Refused now on both, naming the file, column and type.

Spark's files are written here without Spark, as Spark writes them: the stored values are what Spark stores for
the hybrid calendar, derived here from the Julian calendar's day number (a formula independent of the module's),
with the footer keys Spark adds (checked against a file Spark 3.5.9 wrote: DATE'1000-01-01' is stored as the day
this derivation gives).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import convert_to_deltalake

from tests.optional import HAVE_POLARS, LOCAL_ENGINES
from ubunye.cli.hash import hash_target
from ubunye.exceptions import EngineError
from ubunye.hashing.delta_hash import hash_delta

ENGINES = ["pandas", "polars"]
EPOCH_JDN = 2440588  # the Julian day number of 1970-01-01
DAY_US = 86_400 * 1_000_000


def julian_day(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a Julian calendar date: what Spark stores in a legacy file for that date before
    1582-10-15 (the Julian day number by the Julian calendar's own formula)."""
    a = (14 - month) // 12
    y, m = year + 4800 - a, month + 12 * a - 3
    return day + (153 * m + 2) // 5 + 365 * y + y // 4 - 32083 - EPOCH_JDN


def gregorian_day(day: dt.date) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (what Spark stores for dates after 1582-10-15)."""
    return day.toordinal() - dt.date(1970, 1, 1).toordinal()


def spark_file(
    path: Path, table: pa.Table, *, keys: tuple[str, ...], version: str = "3.5.9", as_int96: bool = True
) -> None:
    """``table`` as Spark writes it: its version and the legacy ``keys`` in the footer; timestamps as INT96
    (Spark's default outputTimestampType), or with ``as_int96=False`` as INT64 (``TIMESTAMP_MICROS``)."""
    metadata = {"org.apache.spark.version": version, **{f"org.apache.spark.{k}": "" for k in keys}}
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(metadata), path, use_deprecated_int96_timestamps=as_int96)


def dates(days: list[int | None]) -> pa.Array:
    return pa.array(days, pa.int32()).cast(pa.date32())


def int96(days: list[int | None]) -> pa.Array:
    """Midnight UTC of each day, stored as INT96 by :func:`spark_file`."""
    return pa.array([None if d is None else d * DAY_US for d in days], pa.int64()).cast(pa.timestamp("us"))


def refusal(target: str, fmt: str, engine: str) -> str:
    with pytest.raises(EngineError) as info:
        hash_target(target, fmt, engine)
    return str(info.value)


def test_derivation_matches_the_day_spark_stored() -> None:
    # Spark 3.5.9 with datetimeRebaseModeInWrite=LEGACY stored DATE'1000-01-01' as day -354280 (seen in its file),
    # which pyarrow reads as 1000-01-06: five days off, the Julian calendar's lag in the year 1000
    assert julian_day(1000, 1, 1) == -354280
    assert gregorian_day(dt.date(1000, 1, 6)) == julian_day(1000, 1, 1)


@pytest.mark.parametrize("engine", ENGINES)
def test_legacy_date_in_second_file_is_refused_naming_it(tmp_path: Path, engine: str) -> None:
    folder = tmp_path / "t"
    modern = gregorian_day(dt.date(2024, 5, 1))
    spark_file(folder / "part-0.parquet", pa.table({"id": [1], "d": dates([modern])}), keys=("legacyDateTime",))
    old = julian_day(1000, 1, 1)
    rows = pa.table({"id": [2, 3], "d": dates([modern, old])})
    spark_file(folder / "part-1.parquet", rows, keys=("legacyDateTime",))
    msg = refusal(str(folder), "parquet", engine)
    assert f"{folder / 'part-1.parquet'}: column 'd' holds date 1000-01-01" in msg
    assert "org.apache.spark.legacyDateTime" in msg
    if HAVE_POLARS:  # the other engine says the same (Python 3.10 has no polars: pandas alone)
        assert msg == refusal(str(folder), "parquet", "polars" if engine == "pandas" else "pandas")


@pytest.mark.parametrize("engine", ENGINES)
def test_legacy_int96_nested_is_refused(tmp_path: Path, engine: str) -> None:
    # INT96 has no min/max statistics: the values are read; a list of them after other leaves (a struct's two)
    folder = tmp_path / "t"
    old = julian_day(1000, 1, 1)
    struct = pa.StructArray.from_arrays([pa.array([1, 2]), pa.array(["a", "b"])], ["x", "y"])
    stamps = pa.array([[None], [old * DAY_US, None]], pa.list_(pa.int64())).cast(pa.list_(pa.timestamp("us")))
    table = pa.table({"s": struct, "l": stamps})
    spark_file(folder / "part-0.parquet", table, keys=("legacyDateTime", "legacyINT96"))
    msg = refusal(str(folder), "parquet", engine)
    assert "column 'l.list.element' holds timestamp 1000-01-01 00:00:00 UTC" in msg
    assert "org.apache.spark.legacyINT96" in msg


@pytest.mark.parametrize("engine", ENGINES)
def test_legacy_int96_in_a_map_under_a_dotted_name_is_refused(tmp_path: Path, engine: str) -> None:
    folder = tmp_path / "t"
    old = julian_day(1200, 3, 1) * DAY_US
    values = pa.array([[("k", 0)], [("j", old), ("i", None)]], pa.map_(pa.string(), pa.int64()))
    stamps = values.cast(pa.map_(pa.string(), pa.timestamp("us")))
    table = pa.table({"id": [1, 2], "a.b": stamps, "z": dates([0, 1])})
    spark_file(folder / "part-0.parquet", table, keys=("legacyINT96",))
    assert "holds timestamp 1200-03-01 00:00:00 UTC" in refusal(str(folder), "parquet", engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_spark_2_file_without_keys_is_legacy(tmp_path: Path, engine: str) -> None:
    # Spark reads every file Spark 2.x wrote in the hybrid calendar (it had no other)
    folder = tmp_path / "t"
    spark_file(folder / "part-0.parquet", pa.table({"d": dates([julian_day(1500, 2, 29)])}), keys=(), version="2.4.8")
    msg = refusal(str(folder), "parquet", engine)
    assert "column 'd' holds date 1500-02-29" in msg
    assert "written by Spark 2.4.8" in msg


@pytest.mark.parametrize("engine", ENGINES)
def test_legacy_instant_before_1900_is_refused_and_ntz_is_not(tmp_path: Path, engine: str) -> None:
    old = gregorian_day(dt.date(1899, 12, 31)) * DAY_US  # the hybrid calendar is Gregorian there: the zone's shift
    ntz = pa.array([julian_day(1000, 1, 1) * DAY_US], pa.int64())
    # Spark writes timestamp_ntz as INT64 without isAdjustedToUTC and never rebases it
    plain = tmp_path / "ntz" / "part-0.parquet"
    plain.parent.mkdir()
    meta = {"org.apache.spark.version": "3.5.9", "org.apache.spark.legacyDateTime": ""}
    pq.write_table(pa.table({"t": ntz.cast(pa.timestamp("us"))}).replace_schema_metadata(meta), plain)
    assert hash_target(str(plain.parent), "parquet", engine)["row_count"] == 1
    instants = pa.table({"t": pa.array([old], pa.int64()).cast(pa.timestamp("us", "UTC"))})
    spark_file(tmp_path / "tz" / "part-0.parquet", instants, keys=("legacyDateTime",), as_int96=False)
    msg = refusal(str(tmp_path / "tz"), "parquet", engine)
    assert "column 't' holds timestamp 1899-12-31 00:00:00 UTC" in msg


@pytest.mark.parametrize("engine", ENGINES)
def test_legacy_keys_with_modern_values_hash_as_without(tmp_path: Path, engine: str) -> None:
    # from the first Gregorian day (1582-10-15) and 1900-01-02 on, both calendars store the same numbers
    first = gregorian_day(dt.date(1582, 10, 15))
    later = gregorian_day(dt.date(1900, 1, 2))
    table = pa.table({
        "id": [1, 2, 3],
        "d": dates([first, None, gregorian_day(dt.date(2024, 1, 1))]),
        "t": int96([later, None, gregorian_day(dt.date(9999, 12, 31))]),
    })  # fmt: skip
    spark_file(tmp_path / "legacy" / "part-0.parquet", table, keys=("legacyDateTime", "legacyINT96"))
    spark_file(tmp_path / "corrected" / "part-0.parquet", table, keys=())
    legacy = hash_target(str(tmp_path / "legacy"), "parquet", engine)
    corrected = hash_target(str(tmp_path / "corrected"), "parquet", engine)
    assert legacy["row_count"] == 3
    assert legacy["data_hash"] == corrected["data_hash"]


def test_delta_data_file_in_legacy_calendar_is_refused(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    spark_file(old / "part-0.parquet", pa.table({"d": dates([julian_day(1000, 1, 1)])}), keys=("legacyDateTime",))
    modern = pa.table({"d": dates([gregorian_day(dt.date(1582, 10, 15))])})
    spark_file(new / "part-0.parquet", modern, keys=("legacyDateTime",))
    spark_file(tmp_path / "plain" / "part-0.parquet", modern, keys=())
    for table in (old, new, tmp_path / "plain"):
        convert_to_deltalake(str(table))
    with pytest.raises(EngineError, match=r"part-0.parquet: column 'd' holds date 1000-01-01"):
        hash_delta(str(old))
    assert hash_delta(str(new)).hash == hash_delta(str(tmp_path / "plain")).hash


@pytest.mark.parametrize(
    "second",
    [pa.array([2], pa.uint64()), pa.array([2], pa.uint8()), pa.array([2], pa.duration("us"))],
    ids=["uint64", "uint8", "duration"],
)
def test_unsigned_or_duration_in_second_file_is_refused_naming_it(tmp_path: Path, second: pa.Array) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    pq.write_table(pa.table({"id": [1], "v": pa.array([1], pa.int64())}), folder / "part-0.parquet")
    pq.write_table(pa.table({"id": [2], "v": second}), folder / "part-1.parquet")
    messages = [refusal(str(folder), "parquet", engine) for engine in LOCAL_ENGINES]
    assert len(set(messages)) == 1, messages
    assert f"{folder / 'part-1.parquet'}: column 'v' is {second.type} where" in messages[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_nested_unsigned_in_second_file_is_refused(tmp_path: Path, engine: str) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    pq.write_table(pa.table({"s": pa.array([{"u": 1}], pa.struct([("u", pa.int16())]))}), folder / "part-0.parquet")
    pq.write_table(pa.table({"s": pa.array([{"u": 2}], pa.struct([("u", pa.uint8())]))}), folder / "part-1.parquet")
    assert "column 's' is struct<u: uint8> where" in refusal(str(folder), "parquet", engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_files_alike_in_signed_types_still_read(tmp_path: Path, engine: str) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    pq.write_table(pa.table({"v": pa.array([1], pa.int64())}), folder / "part-0.parquet")
    pq.write_table(pa.table({"v": pa.array([2], pa.int64())}), folder / "part-1.parquet")
    assert hash_target(str(folder), "parquet", engine)["row_count"] == 2
