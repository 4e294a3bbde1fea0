"""The Spark engine on this Spark line: a task run leaves the receipts the pandas engine leaves, a pandas frame
handed to Spark (``engine.from_pandas``) keeps every value, and ``ubunye diff`` reads a Spark-written table.

The main suite runs these on pyspark 4.2; pyspark 3.5 differs in what the engine calls (its createDataFrame takes
no Arrow table, its DataFrame has no toArrow), which is what this file is here to catch.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from tests.lineage.usecase import example_usecase, fingerprints, last
from ubunye.cli.diff import diff_targets
from ubunye.engines import get_engine
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame
from ubunye.lineage.diff import diff_tables
from ubunye.runner import run_pipeline


def _delta(spark: Any) -> None:
    # configure_delta adds Delta's extension only with the delta-spark jars of this line
    if "io.delta.sql.DeltaSparkSessionExtension" not in spark.conf.get("spark.sql.extensions", ""):
        pytest.skip(f"no delta-spark jars for Spark {spark.version} on Maven Central (README, 'The jars')")


def test_a_task_leaves_the_receipts_the_pandas_engine_leaves(spark: Any, tmp_path: Path) -> None:
    _delta(spark)
    tasks = ["orders", "revenue", "customers"]
    on_pandas, on_spark = example_usecase(tmp_path / "p"), example_usecase(tmp_path / "s")
    run_pipeline(on_pandas, "shop", "daily", tasks, dt="2026-12-01", engine="pandas", lineage=True)
    run_pipeline(on_spark, "shop", "daily", tasks, dt="2026-12-01", engine="spark", spark=spark, lineage=True)
    for task in tasks:
        p, s = last(on_pandas, task), last(on_spark, task)
        assert (p.backend, s.backend) == ("pandas", "spark")
        assert s.status == "success" and all(d.data_hash for d in s.inputs + s.outputs), task
        assert fingerprints(p) == fingerprints(s), task
        assert [(d.name, d.columns) for d in p.outputs] == [(d.name, d.columns) for d in s.outputs], task


def test_from_pandas_keeps_every_value(spark: Any) -> None:
    frame = pd.DataFrame({
        "id": pd.array([1, 2, None], dtype="Int64"),
        "x": pd.array([1.5, None, float("nan")], dtype="float64"),
        "s": pd.array(["a", None, "ü\n\"q\""], dtype="string"),
        "d": [dt.date(2020, 1, 1), None, dt.date(1, 1, 1)],
        "ts": pd.to_datetime(["2024-03-10 12:30:45.123456", None, "1900-01-01 00:00:00.000001"]),
        "tz": pd.to_datetime(["2024-03-10 12:30:45.123456+05:30", None, "1969-12-31 23:59:59.000000+00:00"], utc=True),
        "dec": [decimal.Decimal("1.50"), None, decimal.Decimal("-0.01")],
        "tags": [["a", "b"], [], None],
        "attrs": [{"k": 1, "v": "x"}, None, {"k": None, "v": "y"}],
    })  # fmt: skip
    maps = pa.array([[("a", 1), ("b", None)], None, []], pa.map_(pa.string(), pa.int64()))
    frame["m"] = pd.arrays.ArrowExtensionArray(maps)
    engine = get_engine("spark", spark=spark)
    want = hash_frame(frame)  # the twin on the pandas frame
    got = hash_frame(engine.from_pandas(frame))
    assert (got.row_count, got.schema, got.data_hash) == (want.row_count, want.schema, want.data_hash)


def test_diff_of_a_spark_written_delta_table_against_a_pandas_parquet_file(spark: Any, tmp_path: Path) -> None:
    _delta(spark)
    base = pd.DataFrame({"order_id": pd.array(range(1, 201), dtype="int64"),
                         "cents": pd.array([i * 7 % 1000 for i in range(200)], dtype="int64")})  # fmt: skip
    engine = get_engine("spark", spark=spark)
    engine.from_pandas(base).repartition(3).write.format("delta").save(str(tmp_path / "a"))
    edited = base.copy()
    edited.loc[4, "cents"] = 5
    edited = edited.drop(index=[20])
    edited.to_parquet(tmp_path / "b.parquet")
    report = diff_targets(str(tmp_path / "a"), str(tmp_path / "b.parquet"), engine_a="spark", key=["order_id"],
                          limit=1000)  # fmt: skip
    full = diff_tables(pa.Table.from_pandas(base, preserve_index=False), pa.Table.from_pandas(edited,
                       preserve_index=False), key=["order_id"], limit=1000)  # fmt: skip
    d = report.diff
    assert d is not None
    assert sorted(r["order_id"] for r in d.only_a.rows) == sorted(r["order_id"] for r in full.only_a.rows) == ["21"]
    assert not d.only_b.rows
    cells = {(c.key["order_id"], c.column, c.a, c.b) for c in d.changed.cells}
    assert cells == {(c.key["order_id"], c.column, c.a, c.b) for c in full.changed.cells} == {("5", "cents", "28", "5")}


def test_the_spark_engine_writes_what_every_engine_reads_back(spark: Any, tmp_path: Path) -> None:
    # parquet timestamps as TIMESTAMP_MICROS for the write (the session's setting put back), csv read back before
    # the commit with multiLine: the calls this line's SparkConf and readers must take
    from ubunye.config import IOConfig
    from ubunye.exceptions import EngineError

    engine, key = get_engine("spark", spark=spark), "spark.sql.parquet.outputTimestampType"
    before = spark.conf.get(key, None)
    frame = spark.sql("SELECT 1 AS n, TIMESTAMP'2024-01-01 12:00:00.123456Z' AS t, 'a\\nb' AS s")
    engine.write(frame, IOConfig("o", format="parquet", path="p"), tmp_path)
    assert spark.conf.get(key, None) == before
    for reader in (engine, get_engine("pandas")):
        back = reader.hash(reader.read(IOConfig("o", format="parquet", path="p"), tmp_path))
        assert (back.schema, back.data_hash) == (engine.hash(frame).schema, engine.hash(frame).data_hash)
    text = frame.selectExpr("n", "s")
    engine.write(text, IOConfig("o", format="csv", path="c"), tmp_path)
    assert (
        engine.hash(engine.read(IOConfig("o", format="csv", path="c"), tmp_path)).data_hash
        == engine.hash(text).data_hash
    )
    with pytest.raises(EngineError, match=r"output 'o': csv does not read back as the frame written: the values"):
        engine.write(frame, IOConfig("o", format="csv", path="c"), tmp_path)


def test_the_engines_own_session_reads_and_writes_dates_before_1582(tmp_path: Path) -> None:
    # A session the engine starts itself (here through the CLI, a JVM of its own): Spark 3.5 refused a parquet date
    # before 1582-10-15 (SparkUpgradeException, a traceback) unless its rebase modes say CORRECTED, as Spark 4's do
    import json
    import os
    import subprocess
    import sys

    import pyarrow.parquet as pq

    dates = pa.array([dt.date(1500, 3, 1), dt.date(1582, 10, 10), dt.date(2024, 1, 1)], pa.date32())
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "d": dates}), tmp_path / "old.parquet")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    got = {}
    for engine in ("pandas", "spark"):
        cli = [
            str(Path(sys.executable).parent / "ubunye"),
            "hash",
            str(tmp_path / "old.parquet"),
            "--engine",
            engine,
            "--json",
        ]
        done = subprocess.run(cli, capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        got[engine] = json.loads(done.stdout)["data_hash"]
    assert got["spark"] == got["pandas"] == hash_frame(pq.read_table(tmp_path / "old.parquet")).data_hash


def test_the_spark_engines_append_checks_on_this_line(spark: Any, tmp_path: Path) -> None:
    # an ordinary daily append passes (read back with the frame's types, compared with the output as Spark reads
    # it), a drifting one is refused before the commit, the quotes round-trip on pandas
    from ubunye.config import IOConfig
    from ubunye.exceptions import EngineError

    engine, pandas = get_engine("spark", spark=spark), get_engine("pandas")
    io = IOConfig("o", format="csv", path="a", partition_by=["dt"], mode="append")
    for day, text in (("2024-01-01", 'say "hi"'), ("2024-01-02", "007")):
        engine.write(spark.createDataFrame([(1, text, day)], "n int, s string, dt string"), io, tmp_path)
    assert sorted(pandas.read(IOConfig("o", format="csv", path="a"), tmp_path)["s"].tolist()) == ["007", 'say "hi"']
    with pytest.raises(EngineError, match=r"cannot append to .*column 'n' is int32 in the output .* but float64"):
        engine.write(spark.createDataFrame([(1.5, "x", "2024-01-03")], "n double, s string, dt string"), io, tmp_path)
    assert engine.read(io, tmp_path).count() == 2


def test_the_spark_engines_table_checks_on_this_line(spark: Any, tmp_path: Path) -> None:
    # a parquet catalog table is not overwritten (refused by check_output, before any read); a Delta append that
    # leaves out a column Delta does not fill is refused, one leaving out a generated column is written
    from ubunye.config import IOConfig

    engine, table = get_engine("spark", spark=spark), "default.ubunye_line_kept"
    spark.sql(f"CREATE TABLE {table} (a INT) USING parquet")
    try:
        with pytest.raises(EngineError, match=rf"cannot overwrite the parquet catalog table {table} safely"):
            engine.check_output(IOConfig("o", table=table), tmp_path)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
    _delta(spark)
    from delta.tables import DeltaTable

    path = str(tmp_path / "d")
    DeltaTable.create(spark).location(path).addColumn("a", "BIGINT").addColumn(
        "g", "BIGINT", generatedAlwaysAs="a * 2"
    ).addColumn("m", "STRING").execute()
    io = IOConfig("o", format="delta", path=path, mode="append")
    with pytest.raises(EngineError, match=r"its column 'm' is not in the frame \(it would be stored as null\)"):
        engine.write(spark.sql("SELECT 1L AS a"), io, tmp_path)
    engine.write(spark.sql("SELECT 1L AS a, 'q' AS m"), io, tmp_path)
    assert [tuple(r) for r in spark.read.format("delta").load(path).collect()] == [(1, 2, "q")]
    # an overwrite keeps the table's schema as an append does: checked alike, unless overwriteSchema replaces it
    over = IOConfig("o", format="delta", path=path)
    with pytest.raises(EngineError, match=r"its column 'm' is not in the frame .*overwriteSchema: true"):
        engine.write(spark.sql("SELECT 2L AS a"), over, tmp_path)
    # Spark writes Delta's files as every engine reads them, whatever the session says (INT96, LEGACY rebase)
    saved = {k: spark.conf.get(k, None) for k in _PINNED}
    try:
        for key, value in _PINNED.items():
            spark.conf.set(key, value)
        frame = spark.sql("SELECT 1L AS id, DATE '1000-01-01' AS d, TIMESTAMP '2300-01-01 00:00:00' AS t")
        pinned = IOConfig("o", format="delta", path=str(tmp_path / "pinned"))
        engine.write(frame, pinned, tmp_path)
        pandas = get_engine("pandas")
        back = pandas.read(pinned, tmp_path)
        assert back["d"].tolist() == [dt.date(1000, 1, 1)]
        assert pandas.hash(back).data_hash == engine.hash(frame).data_hash
    finally:
        for key, value in saved.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)


#: A session's settings that made Spark's parquet files read otherwise on other engines (engines pin them).
_PINNED = {
    "spark.sql.parquet.outputTimestampType": "INT96",
    "spark.sql.parquet.datetimeRebaseModeInWrite": "LEGACY",
    "spark.sql.parquet.int96RebaseModeInWrite": "LEGACY",
}


def test_from_pandas_takes_nanosecond_timestamps_at_any_depth(spark: Any) -> None:
    # pandas before 3 (Databricks 15.4 and 16.4 LTS run 1.5.3) parses datetimes to nanoseconds, and pyarrow gives a
    # pandas Timestamp for each: pyspark 3.5's createDataFrame refused it (CANNOT_ACCEPT_OBJECT_IN_TYPE, its type
    # check is exact). Spelled out as datetime64[ns] here, so pandas 3 (which parses to microseconds) meets it too.
    ns, ns_utc = pa.timestamp("ns"), pa.timestamp("ns", tz="UTC")
    naive = [dt.datetime(2024, 3, 10, 12, 30, 45, 123456), None, dt.datetime(1900, 1, 1, 0, 0, 0, 1)]
    aware = [dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc), None, None]
    frame = pd.DataFrame({
        "ts": pd.Series(naive, dtype="datetime64[ns]"),
        "tz": pd.Series(aware, dtype="datetime64[ns, UTC]"),
    })  # fmt: skip
    frame["lst"] = pd.arrays.ArrowExtensionArray(pa.array([[naive[0], None], None, []], pa.list_(ns)))
    st_type = pa.struct([("at", ns_utc), ("n", pa.int64())])
    st = pa.array([{"at": aware[0], "n": 1}, {"at": None, "n": 2}, None], st_type)
    frame["st"] = pd.arrays.ArrowExtensionArray(st)
    engine = get_engine("spark", spark=spark)
    want = hash_frame(frame)
    got = engine.from_pandas(frame)
    assert got.schema.simpleString() == (
        "struct<ts:timestamp_ntz,tz:timestamp,lst:array<timestamp_ntz>,st:struct<at:timestamp,n:bigint>>"
    )
    found = hash_frame(got)
    assert (found.row_count, found.schema, found.data_hash) == (want.row_count, want.schema, want.data_hash)


def test_from_pandas_refuses_a_sub_microsecond_timestamp_on_every_line(spark: Any) -> None:
    # Spark 4 takes the Arrow table and cut the nanoseconds without a word (3.5's Python rows refused them): the
    # frame handed on was not the one given. Whole microseconds in a nanosecond column are fine (above).
    frame = pd.DataFrame({"id": [1, 2], "ts": pd.Series([1_000_000_000, 1_000_000_001], dtype="datetime64[ns]")})
    with pytest.raises(EngineError, match=r"column 'ts' holds .*sub-microsecond part: Spark timestamps keep micro"):
        get_engine("spark", spark=spark).from_pandas(frame)


def test_python_rows_refuses_a_sub_microsecond_timestamp_naming_the_column() -> None:
    # The rows pyspark 3.5 is given (it takes no Arrow table): Spark keeps microseconds, so a nanosecond part would
    # be cut without a word
    from ubunye.engines.spark_engine import python_rows
    from ubunye.exceptions import EngineError

    at = pa.array([{"at": 1_000_000_001}], pa.struct([("at", pa.timestamp("ns"))]))
    with pytest.raises(EngineError, match=r"column 'st\[\]\.at' holds 1970-01-01 00:00:01.000000001, which has a sub"):
        python_rows(pa.table({"st": pa.array([[at[0].as_py()]], pa.list_(at.type))}))
    assert python_rows(pa.table({"t": pa.array([1_000_001_000], pa.timestamp("ns"))})) == [
        (dt.datetime(1970, 1, 1, 0, 0, 1, 1),)
    ]


def test_python_rows_refuses_maps_a_dict_would_change_naming_the_column() -> None:
    # pyspark 3.5 takes maps as dicts: a key twice (or -0.0 and 0.0, one dict key) kept one entry without a word,
    # and a struct key raised a bare TypeError
    from ubunye.engines.spark_engine import python_rows
    from ubunye.exceptions import EngineError

    twice = pa.array([[("a", 1), ("a", 2)]], pa.map_(pa.string(), pa.int64()))
    zeros = pa.array([[(-0.0, 1), (0.0, 2)]], pa.map_(pa.float64(), pa.int64()))
    for maps in (twice, zeros):
        with pytest.raises(EngineError, match=r"map column 'st\.m' holds a map with a key twice"):
            python_rows(pa.table({"st": pa.StructArray.from_arrays([maps], ["m"])}))
    keyed = pa.array([[({"x": 1}, 1)]], pa.map_(pa.struct([("x", pa.int64())]), pa.int64()))
    with pytest.raises(EngineError, match=r"map column 'm' has keys of type struct<x: int64>"):
        python_rows(pa.table({"m": keyed}))
    assert python_rows(pa.table({"m": pa.array([[(-0.0, 1)]], pa.map_(pa.float64(), pa.int64()))})) == [({-0.0: 1},)]


def test_from_pandas_names_the_column_spark_cannot_take(spark: Any) -> None:
    from ubunye.engines.spark_engine import _takes_arrow_tables

    # pyspark 3.5 said "uint8 is not supported in conversion to Arrow" and a bare "date value out of range"
    engine = get_engine("spark", spark=spark)
    with pytest.raises(EngineError, match=r"^column 'flags' of type uint8 has no Spark type"):
        engine.from_pandas(pd.DataFrame({"id": [1], "flags": pd.Series([3], dtype="uint8")}))
    # 0001-01-01 03:00 in Kolkata is 0000-12-31 21:30 UTC: Spark holds it, Python's datetime does not
    early = pd.Series(pd.arrays.ArrowExtensionArray(pa.array([-62135605800], pa.timestamp("s", "Asia/Kolkata"))))
    if _takes_arrow_tables():  # pyspark 4 takes the Arrow table itself
        assert engine.from_pandas(pd.DataFrame({"t": early})).count() == 1
    else:  # pyspark 3.5 builds Python rows
        with pytest.raises(EngineError, match=r"^column 't' of type timestamp\[s, tz=Asia/Kolkata\] holds a value Py"):
            engine.from_pandas(pd.DataFrame({"t": early}))
