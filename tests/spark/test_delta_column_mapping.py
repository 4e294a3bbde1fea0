"""A Delta table with column mapping (reader version 2, as delta-spark and Databricks write them when a column is
renamed or named with spaces): deltalake's Arrow reader reads it by logical names its Parquet files do not hold,
so every value came back null, silently; the pandas engine and hash_delta on Arrow hashed those nulls. Now they
refuse it, naming the table and the mode; Spark reads it (the incremental hash reads it whole, with the reason)."""

from __future__ import annotations

from pathlib import Path

import pytest
from deltalake import DeltaTable

from ubunye.config import IOConfig
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.exceptions import EngineError
from ubunye.hashing.delta_hash import hash_delta
from ubunye.hashing.spark import hash_spark
from ubunye.lineage.file_sums import FileSumsCache


@pytest.mark.parametrize("mode", ["name", "id"])
def test_a_column_mapped_table_is_refused_on_deltalake_and_hashed_right_on_spark(
    spark, tmp_path: Path, mode: str
) -> None:
    path = str(tmp_path / "t")
    (
        spark.range(5).selectExpr("id", "cast(id * 3 as string) as s").write.format("delta")
        .option("delta.columnMapping.mode", mode).option("delta.minReaderVersion", "2")
        .option("delta.minWriterVersion", "5").save(path)
    )  # fmt: skip
    spark.sql(f"ALTER TABLE delta.`{path}` RENAME COLUMN s TO `the s`")
    # What deltalake's own reader gives: the columns' values lost (the reason for the refusal, measured here).
    assert DeltaTable(path).to_pyarrow_table().column("id").null_count == 5
    io = IOConfig("mapped", format="delta", path=path)
    with pytest.raises(EngineError, match=rf"input 'mapped' .*column mapping \(delta.columnMapping.mode={mode}\)"):
        PandasEngine().read(io, tmp_path)
    with pytest.raises(EngineError, match="column mapping"):
        hash_delta(path)
    full = hash_spark(spark.read.format("delta").load(path))
    cache = FileSumsCache(tmp_path / "records")
    assert hash_delta(path, cache=cache, spark=spark).hash == full and full.row_count == 5
    more = spark.range(5, 7).selectExpr("id", "cast(id * 3 as string) as `the s`")
    more.write.format("delta").mode("append").save(path)
    again = hash_delta(path, cache=cache, spark=spark)  # a new file: read with the table, never alone
    assert again.hash == hash_spark(spark.read.format("delta").load(path)) and again.hash.row_count == 7
    assert again.hash_mode == "full" and "column mapping" in (again.reason or "")
