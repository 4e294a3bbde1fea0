"""Parquet INT96 timestamps on the polars engine: Spark's default ``outputTimestampType`` (Hive's and Impala's too).
polars reads them in nanoseconds and clamped a value past 2262 or before 1677 (a 9999-12-31 end date, 0001-01-01)
to 2262-04-11 23:47:16.854775807 without a word: the run went on with another instant. Each file here is written
as Spark writes one (INT96, no Arrow schema in its footer) and read by the polars engine, whose hash must be the
hash of the same values written as plain microsecond timestamps in UTC: an INT96 timestamp is an instant, read as
``timestamp`` (UTC, microseconds) as Spark reads it, not ``timestamp_ntz``."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.lineage import s3server
from tests.optional import needs_polars
from ubunye.config import IOConfig
from ubunye.engines import get_engine

pytestmark = needs_polars
s3_server = s3server.s3_server  # the fixture

#: Outside polars' nanosecond range (both ends), inside it, with microseconds, and null.
STAMPS = [
    dt.datetime(9999, 12, 31),
    dt.datetime(2024, 3, 1, 12, 30, 15, 123456),
    dt.datetime(1, 1, 1),
    dt.datetime(1500, 6, 1, 0, 0, 0, 1),
    None,
]


def _table(zone: str | None = None) -> pa.Table:
    """The rows, as INT96 holds them (no zone) or as Spark reads INT96 back (``zone="UTC"``)."""
    stamps = pa.array(STAMPS, pa.timestamp("us")).cast(pa.timestamp("us", zone))
    return pa.table({
        "id": list(range(len(STAMPS))),
        "t": stamps,
        "s": pa.StructArray.from_arrays([stamps], ["u"]),
        "l": pa.array([[x, None] for x in STAMPS], pa.list_(pa.timestamp("us"))).cast(
            pa.list_(pa.timestamp("us", zone))
        ),
    })  # fmt: skip


def _write(sink: object, table: pa.Table, *, int96: bool, spark_schema: dict | None = None) -> None:
    """One parquet file as Spark writes it when ``int96``: INT96 timestamps and no Arrow schema in the footer
    (pyarrow's ``ARROW:schema`` would tell polars the unit), Spark's own schema in the metadata if given."""
    with pq.ParquetWriter(sink, table.schema, use_deprecated_int96_timestamps=int96, store_schema=not int96) as w:
        w.write_table(table)
        if spark_schema is not None:
            w.add_key_value_metadata({"org.apache.spark.sql.parquet.row.metadata": json.dumps(spark_schema)})


def _polars_hash(path: Path | str, base: Path, **options: object) -> object:
    engine = get_engine("polars")
    frame = engine.read(IOConfig("i", format="parquet", path=str(path), **options), base)  # type: ignore[arg-type]
    return engine.hash(frame)


def test_int96_timestamps_past_2262_keep_their_instant(tmp_path: Path) -> None:
    (tmp_path / "int96").mkdir()
    (tmp_path / "micros").mkdir()
    _write(tmp_path / "int96" / "part-0.parquet", _table(), int96=True)
    _write(tmp_path / "micros" / "part-0.parquet", _table("UTC"), int96=False)
    assert pq.ParquetFile(tmp_path / "int96" / "part-0.parquet").schema.column(1).physical_type == "INT96"
    got = _polars_hash(tmp_path / "int96", tmp_path)
    want = _polars_hash(tmp_path / "micros", tmp_path)
    assert got == want


def test_int96_in_partition_folders_and_beside_a_map(tmp_path: Path) -> None:
    # the partition columns come from the folder names (not the files' schema); a map sends the read through pyarrow
    for name, int96 in (("int96", True), ("micros", False)):
        for day in ("a", "b"):
            (tmp_path / name / f"day={day}").mkdir(parents=True)
            _write(tmp_path / name / f"day={day}" / "part-0.parquet", _table(None if int96 else "UTC"), int96=int96)
    assert _polars_hash(tmp_path / "int96", tmp_path) == _polars_hash(tmp_path / "micros", tmp_path)
    entries = pa.array([[("k", 1)]] * len(STAMPS), pa.map_(pa.string(), pa.int64()))
    for name, int96 in (("m96", True), ("mus", False)):
        (tmp_path / name).mkdir()
        with_map = _table(None if int96 else "UTC").append_column("m", entries)
        _write(tmp_path / name / "part-0.parquet", with_map, int96=int96)
    assert _polars_hash(tmp_path / "m96", tmp_path) == _polars_hash(tmp_path / "mus", tmp_path)


def test_int96_at_a_url_written_by_spark(s3_server, tmp_path: Path) -> None:
    # A URL's files are polars' to list: which columns are INT96 comes from Spark's schema in the file's metadata.
    import s3fs

    spark = {"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "t", "type": "timestamp", "nullable": True, "metadata": {}},
        {"name": "s", "type": {"type": "struct", "fields": [{"name": "u", "type": "timestamp", "nullable": True,
                                                             "metadata": {}}]}, "nullable": True, "metadata": {}},
    ]}  # fmt: skip
    bucket = s3_server.bucket()
    fs = s3fs.S3FileSystem(**s3_server.options)
    for name, int96 in (("int96", True), ("micros", False)):
        buffer = io.BytesIO()
        table = _table(None if int96 else "UTC").select(["id", "t", "s"])
        _write(buffer, table, int96=int96, spark_schema=spark)
        fs.pipe(f"{bucket[len('s3://') :]}/{name}/part-0.parquet", buffer.getvalue())
    key, secret = s3_server.options["key"], s3_server.options["secret"]
    options = {"aws_endpoint_url": s3_server.endpoint, "aws_access_key_id": key, "aws_secret_access_key": secret,
               "aws_region": "us-east-1", "aws_allow_http": "true"}  # fmt: skip
    got = _polars_hash(f"{bucket}/int96", tmp_path, storage_options=options)
    want = _polars_hash(f"{bucket}/micros", tmp_path, storage_options=options)
    assert got == want


@pytest.mark.parametrize("unit", ["ns", "us"])
def test_other_timestamps_are_read_as_before(tmp_path: Path, unit: str) -> None:
    # INT64 nanoseconds (no INT96 in the file) keep their nanoseconds: only INT96 columns are read in microseconds
    values = pa.array([1_700_000_000_123_456_789 // (1 if unit == "ns" else 1000), None], pa.timestamp(unit))
    pq.write_table(pa.table({"t": values}), tmp_path / "p.parquet", store_schema=False)
    engine = get_engine("polars")
    frame = engine.read(IOConfig("i", format="parquet", path="p.parquet"), tmp_path)
    assert frame["t"].cast(int).to_list() == values.cast(pa.int64()).to_pylist()
