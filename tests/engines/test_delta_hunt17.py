"""Delta tables the pandas and polars engines (deltalake) read or write otherwise than Spark, each read as Spark
reads it or refused naming the column:

- INT96 data files (plain delta-spark's default ``outputTimestampType``) with a 9999-12-31 end date: pandas and
  ``hash_delta`` failed ("would lose data", naming no column, and blamed on pyarrow below 21), polars read
  2262-04-11 23:47:16.854775 silently;
- a partition column holding a timestamp with a time zone, which deltalake writes without its zone (Spark reads
  it in its session's zone);
- a CHAR(n) column, which Spark reads padded with spaces and deltalake and polars as stored;
- a deltalake failure no pyarrow version causes (deletion vectors) is said as it is, on any pyarrow.

The tables Spark would write are written here without Spark: a data file as Spark writes it (pyarrow, INT96,
no Arrow schema) and a Delta log by hand, or deltalake with the field metadata Spark keeps a CHAR's type in."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

deltalake = pytest.importorskip("deltalake", reason="deltalake is not installed in this venv")

from tests.optional import LOCAL_ENGINES  # noqa: E402
from ubunye.config import IOConfig  # noqa: E402
from ubunye.engines import get_engine  # noqa: E402
from ubunye.exceptions import EngineError  # noqa: E402
from ubunye.hashing import hash_frame  # noqa: E402
from ubunye.hashing.delta_files import pyarrow_version_failure  # noqa: E402
from ubunye.hashing.delta_hash import hash_delta  # noqa: E402

UTC = dt.timezone.utc
PROTOCOL = {"minReaderVersion": 1, "minWriterVersion": 2}


def _delta_by_hand(path: Path, table: pa.Table, spark_schema: dict, protocol: dict = PROTOCOL) -> str:
    """A one-file Delta table as delta-spark 3.2 writes one with Spark's defaults: its data file with INT96
    timestamps and no Arrow schema, its log naming the file."""
    (path / "_delta_log").mkdir(parents=True)
    data = path / "part-00000-0.c000.snappy.parquet"
    pq.write_table(table, data, use_deprecated_int96_timestamps=True, store_schema=False)
    actions = [
        {"protocol": protocol},
        {"metaData": {"id": "0a0a0a0a-0000-0000-0000-000000000000", "format": {"provider": "parquet", "options": {}},
                      "schemaString": json.dumps(spark_schema), "partitionColumns": [], "configuration": {},
                      "createdTime": 1700000000000}},
        {"add": {"path": data.name, "partitionValues": {}, "size": data.stat().st_size,
                 "modificationTime": 1700000000000, "dataChange": True}},
    ]  # fmt: skip
    (path / "_delta_log" / "00000000000000000000.json").write_text("\n".join(json.dumps(a) for a in actions) + "\n")
    return str(path)


def _field(name: str, kind: object, metadata: dict | None = None) -> dict:
    return {"name": name, "type": kind, "nullable": True, "metadata": metadata or {}}


SCD = [(1, dt.datetime(2024, 1, 1, tzinfo=UTC), dt.datetime(9999, 12, 31, tzinfo=UTC)),
       (2, dt.datetime(2024, 1, 1, tzinfo=UTC), dt.datetime(2024, 3, 1, 12, 0, 0, 7, tzinfo=UTC)),
       (3, dt.datetime(1, 1, 1, tzinfo=UTC), None)]  # fmt: skip


def _scd(path: Path) -> tuple[str, str]:
    """An SCD table with a 9999-12-31 end date written as Spark writes it; the hash of its rows as instants."""
    stamp = pa.timestamp("us", "UTC")
    rows = pa.table({
        "id": pa.array([r[0] for r in SCD], pa.int64()),
        "valid_from": pa.array([r[1] for r in SCD], stamp),
        "valid_to": pa.array([r[2] for r in SCD], stamp),
    })  # fmt: skip
    spark = {"type": "struct", "fields": [_field("id", "long"), _field("valid_from", "timestamp"),
                                          _field("valid_to", "timestamp")]}  # fmt: skip
    data = Path(_delta_by_hand(path, rows, spark)) / "part-00000-0.c000.snappy.parquet"
    assert pq.ParquetFile(data).schema.column(2).physical_type == "INT96"
    return str(path), hash_frame(rows).data_hash


@pytest.mark.parametrize("name", LOCAL_ENGINES)
def test_an_int96_delta_table_past_2262_reads_its_instants(tmp_path: Path, name: str) -> None:
    path, want = _scd(tmp_path / "scd")
    engine = get_engine(name)
    frame = engine.read(IOConfig("scd", format="delta", path=path), tmp_path)
    assert engine.hash(frame).data_hash == want


def test_an_int96_delta_table_past_2262_hashes_its_instants(tmp_path: Path) -> None:
    path, want = _scd(tmp_path / "scd")
    assert hash_delta(path).hash.data_hash == want


@pytest.mark.parametrize("name", LOCAL_ENGINES)
def test_a_delta_output_partitioned_by_a_zoned_timestamp_is_refused(tmp_path: Path, name: str) -> None:
    # deltalake writes the partition value '2024-01-01 12:00:00.000000' (no zone): Spark in Asia/Kolkata reads
    # 12:00 there, 06:30 UTC; the Spark engine refuses the same write on Delta 3.2
    engine = get_engine(name)
    at = pd.to_datetime(["2024-01-01 12:00", "2024-06-01 23:30"])
    frame = engine.from_pandas(pd.DataFrame({"id": [1, 2], "t": at.tz_localize("UTC")}))
    io = IOConfig("o", format="delta", path="o", partition_by=["t"])
    with pytest.raises(EngineError, match=r"^output 'o': partition column 't' is a timestamp with a time zone"):
        engine.write(frame, io, tmp_path)
    assert not (tmp_path / "o").exists()
    # a zoneless timestamp is a local time to every reader: written, as before
    engine.write(engine.from_pandas(pd.DataFrame({"id": [1, 2], "t": at})), io, tmp_path)
    assert (tmp_path / "o" / "_delta_log").is_dir()


def _char_table(path: Path, declared: str) -> str:
    from deltalake import DeltaTable, write_deltalake
    from deltalake.schema import Field, PrimitiveType, Schema

    key = "__CHAR_VARCHAR_TYPE_STRING"  # where Spark keeps a CHAR(n) or VARCHAR(n) column's type
    schema = Schema([Field("id", PrimitiveType("long")), Field("c", PrimitiveType("string"), metadata={key: declared})])
    DeltaTable.create(str(path), schema)
    write_deltalake(str(path), pa.table({"id": [1], "c": ["ab"]}), mode="append")
    return str(path)


@pytest.mark.parametrize("name", LOCAL_ENGINES)
def test_a_char_column_is_refused_where_spark_pads_it(tmp_path: Path, name: str) -> None:
    path = _char_table(tmp_path / "chr", "char(5)")
    engine = get_engine(name)
    with pytest.raises(EngineError, match=r"^input 'chr' \(Delta at .*\): column 'c' is a Spark char\(5\)"):
        engine.read(IOConfig("chr", format="delta", path=path), tmp_path)
    with pytest.raises(EngineError, match=r"^output 'chr': column 'c' is a Spark char\(5\) in the Delta table"):
        frame = engine.from_pandas(pd.DataFrame({"id": [2], "c": ["cd"]}))
        engine.write(frame, IOConfig("chr", format="delta", path=path, mode="append"), tmp_path)
    assert deltalake.DeltaTable(path).version() == 1  # nothing written


def test_a_char_column_is_refused_by_hash_delta_and_varchar_is_read(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match=r"column 'c' is a Spark char\(5\)"):
        hash_delta(_char_table(tmp_path / "chr", "char(5)"))
    path = _char_table(tmp_path / "vc", "varchar(5)")  # read as stored by Spark too
    want = hash_frame(pa.table({"id": [1], "c": ["ab"]})).data_hash
    assert hash_delta(path).hash.data_hash == want
    for name in LOCAL_ENGINES:
        engine = get_engine(name)
        assert engine.hash(engine.read(IOConfig("vc", format="delta", path=path), tmp_path)).data_hash == want


def test_a_failure_no_pyarrow_causes_is_not_blamed_on_pyarrow(tmp_path: Path) -> None:
    # deletion vectors: deltalake's Arrow reader refuses them on every pyarrow; on pyarrow < 21 the error said
    # "deltalake's Arrow side needs pyarrow >= 21 ... pip install" all the same
    protocol = {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"],
                "writerFeatures": ["deletionVectors"]}  # fmt: skip
    rows = pa.table({"id": pa.array([1], pa.int64())})
    path = _delta_by_hand(tmp_path / "dv", rows, {"type": "struct", "fields": [_field("id", "long")]}, protocol)
    engine = get_engine("pandas")
    with pytest.raises(EngineError) as caught:
        engine.read(IOConfig("dv", format="delta", path=path), tmp_path)
    said = str(caught.value)
    assert "deletionVectors" in said and "pip install" not in said and "needs pyarrow" not in said, said


def test_which_failures_a_pyarrow_version_causes() -> None:
    assert pyarrow_version_failure(TypeError("field() takes at least 2 positional arguments (1 given)"))
    assert pyarrow_version_failure(pa.ArrowInvalid("Unrecognized type: 24"))
    assert pyarrow_version_failure(pa.ArrowNotImplementedError("Unsupported cast from string_view to utf8"))
    assert not pyarrow_version_failure(pa.ArrowInvalid("Casting from timestamp[ns] to timestamp[us] would lose data"))
    assert not pyarrow_version_failure(deltalake.exceptions.DeltaProtocolError("reader features: deletionVectors"))
