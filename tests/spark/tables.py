"""Tables the Spark tests hash, built from SQL only so any process (another JVM, a cluster) builds the same rows."""

from __future__ import annotations

from typing import Any

# Every rows-v1 type, nesting, nulls, NaN, awkward text, and doubles/floats whose JDK 17 Double.toString
# is not the shortest (1e23, values in [1e16, 1e19)).
MIXED_COLUMNS = [
    "id",
    "cast(id % 7 as tinyint) as i8",
    "cast(id % 300 as smallint) as i16",
    "cast(id as int) as i32",
    "id % 2 = 0 as flag",
    "id * 1.0e16 + 1.0e16 + id * 0.37 as big",
    "case when id % 5 = 0 then cast('1e23' as double) when id % 5 = 1 then cast('NaN' as double) "
    "when id % 5 = 2 then -0.0D else 1.0D / (id + 3) end as f64",
    "cast(1.0D / (id + 3) as float) as f32",
    "cast(id as decimal(20,4)) / 7 as dec",
    "case when id % 4 = 0 then null else concat('row \"', id, '\\\\ \\t é 😀 ｡') end as s",
    "cast(concat('b', id) as binary) as bin",
    "date_from_unix_date(cast(id * 37 - 20000 as int)) as d",
    "timestamp_micros(id * 1000003 - 500000000) as ts",
    "cast(timestamp_micros(id * 999983) as timestamp_ntz) as ntz",
    "array(id, null, id + 1) as l",
    "map(cast(id % 3 as string), id, 'k', null) as m",
    "named_struct('b', id, 'a', cast(null as string), 'c', array(named_struct('x', 1.5D))) as st",
]


def mixed_table(spark: Any, n: int = 1000) -> Any:
    """``n`` rows of every rows-v1 type (see MIXED_COLUMNS)."""
    return spark.range(n).selectExpr(*MIXED_COLUMNS)


def same_as_read_back(engine: Any, frame: Any, io: Any, base: Any) -> None:
    """The output ``io`` reads back (its engine; pandas too for parquet and Delta) with the frame's hash: what the
    record holds."""
    from ubunye.config import IOConfig
    from ubunye.engines import get_engine

    want = engine.hash(frame)
    readers = [engine] + ([get_engine("pandas")] if io.format in ("parquet", "delta") else [])
    for reader in readers:
        got = reader.hash(reader.read(IOConfig(io.name, format=io.format, path=io.path), base))
        assert (got.schema, got.row_count, got.data_hash) == (want.schema, want.row_count, want.data_hash), reader
