"""The Spark engine against the pandas engine: the same task, the same Delta tables, the same receipts."""

from __future__ import annotations

import datetime as dt
import time

import pandas as pd
import pytest

from tests.lineage.usecase import example_usecase, fingerprints, last, records, write_task
from ubunye import notebook
from ubunye.config.model import IOConfig
from ubunye.engines import get_engine
from ubunye.engines.spark_engine import SparkEngine
from ubunye.exceptions import EngineError, TaskError
from ubunye.runner import run_pipeline, run_task

DT = "2026-12-01"
TASKS = ["orders", "revenue", "customers"]
FRAME = pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", None], "score": pd.array([1.5, None, 3.0], dtype="Float64")})


def same(a, b) -> bool:
    """Two FrameHashes agree (``engine``, which implementation ran, may differ)."""
    return (a.row_count, a.data_hash, a.schema_hash, a.schema) == (b.row_count, b.data_hash, b.schema_hash, b.schema)


def test_missing_delta_jars_error_says_how_to_add_them():
    engine = SparkEngine(spark=object())
    err = engine._fail(
        IOConfig("t", format="delta", path="p"), "input", "/p", Exception("[DATA_SOURCE_NOT_FOUND] delta")
    )
    assert "spark.jars.packages=io.delta:delta-spark_" in str(err) and "DeltaSparkSessionExtension" in str(err)


def test_same_task_on_spark_and_pandas_leaves_identical_receipts(spark, tmp_path):
    on_pandas = example_usecase(tmp_path / "p")
    on_spark = example_usecase(tmp_path / "s")
    run_pipeline(on_pandas, "shop", "daily", TASKS, dt=DT, engine="pandas", lineage=True)
    run_pipeline(on_spark, "shop", "daily", TASKS, dt=DT, engine="spark", spark=spark, lineage=True)
    for task in TASKS:
        p, s = last(on_pandas, task), last(on_spark, task)
        assert (p.backend, s.backend) == ("pandas", "spark")
        assert fingerprints(p) == fingerprints(s), task
        assert all(d.data_hash for d in s.inputs + s.outputs)
        assert [(e.rule, e.column, e.passed, e.observed) for e in p.expectations] == [
            (e.rule, e.column, e.passed, e.observed) for e in s.expectations
        ]
        assert p.code_hash == s.code_hash
    env = last(on_spark, "revenue").environment
    assert env["spark"]["version"] == spark.version and env["spark"]["session_time_zone"] == "UTC"
    assert env["spark"]["jvm_version"]


@pytest.mark.parametrize(("writer", "reader"), [("spark", "pandas"), ("pandas", "spark")])
def test_delta_across_engines_with_time_travel(spark, tmp_path, writer, reader):
    w = get_engine(writer, spark=spark)
    r = get_engine(reader, spark=spark)
    io = IOConfig("t", format="delta", path="delta/t")
    w.write(w.from_pandas(FRAME.head(1)), io, tmp_path)
    time.sleep(1.2)
    between = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    time.sleep(1.2)
    w.write(w.from_pandas(FRAME), io, tmp_path)
    for read_io, rows in [
        (io, 3),
        (IOConfig("t", format="delta", path="delta/t", version=0), 1),
        (IOConfig("t", format="delta", path="delta/t", timestamp=between), 1),
        (IOConfig("t", format="delta", path="delta/t", version=1), 3),
    ]:
        a, b = w.hash(w.read(read_io, tmp_path)), r.hash(r.read(read_io, tmp_path))
        assert same(a, b)
        assert a.row_count == rows


def test_catalog_table_and_formats_on_spark(spark, tmp_path):
    engine = get_engine("spark", spark=spark)
    pandas = get_engine("pandas")
    frame = engine.from_pandas(FRAME)
    engine.write(frame, IOConfig("t", format="delta", table="default.ubunye_t"), tmp_path)
    back = engine.read(IOConfig("t", table="default.ubunye_t"), tmp_path)
    assert same(engine.hash(back), pandas.hash(FRAME))
    engine.write(engine.from_pandas(FRAME.head(2)), IOConfig("t", format="delta", table="default.ubunye_t"), tmp_path)
    assert engine.read(IOConfig("t", table="default.ubunye_t"), tmp_path).count() == 2
    assert engine.read(IOConfig("t", table="default.ubunye_t", version=0), tmp_path).count() == 3
    for fmt in ("parquet", "csv", "json"):
        io = IOConfig("t", format=fmt, path=f"files/{fmt}")
        # csv infers int32 for small whole numbers: a bigint column would not read back as written (refused)
        written = frame.selectExpr("CAST(id AS INT) AS id", "name", "score") if fmt == "csv" else frame
        engine.write(written, io, tmp_path)
        engine.write(written, IOConfig("t", format=fmt, path=f"files/{fmt}", mode="append"), tmp_path)
        assert engine.read(io, tmp_path).count() == 6
        assert len(pandas.read(io, tmp_path)) == 6  # what Spark wrote, pandas reads
    parquet = IOConfig("t", format="parquet", path="files/parquet")
    assert same(engine.hash(engine.read(parquet, tmp_path)), pandas.hash(pandas.read(parquet, tmp_path)))
    with pytest.raises(EngineError, match="needs a Spark DataFrame"):
        engine.native(FRAME)


def test_notebook_reuses_the_active_session_and_the_same_store(spark, tmp_path):
    uc = example_usecase(tmp_path)
    run_task(uc / "shop/daily/orders", dt=DT, engine="pandas", lineage=False)
    result = notebook.run(uc / "shop/daily/revenue", dt=DT)
    record = last(uc, "revenue")
    assert (record.backend, record.entry_point, record.status) == ("spark", "notebook", "success")
    assert result.context.engine.spark is spark
    assert result.outputs["revenue"].count() == 4
    run_task(uc / "shop/daily/revenue", dt=DT, engine="pandas", lineage=True)
    a, b = records(uc, "revenue")
    assert fingerprints(a) == fingerprints(b)


def test_spark_failures_are_recorded(spark, tmp_path):
    uc = example_usecase(tmp_path)
    cfg = {
        "CONFIG": {
            "inputs": {"orders": {"format": "delta", "path": "data/none"}},
            "outputs": {"o": {"format": "parquet", "path": "data/o"}},
            "transform": {"type": "sql", "query": "SELECT * FROM orders"},
            "monitors": ["lineage"],
        }
    }
    write_task(uc, "bad_read", cfg)
    with pytest.raises(TaskError, match="failed in read"):
        run_task(uc / "shop/daily/bad_read", engine="spark", spark=spark)
    record = last(uc, "bad_read")
    assert (record.status, record.error.stage, record.backend) == ("failed", "read", "spark")

    run_task(uc / "shop/daily/orders", dt=DT, engine="pandas", lineage=False)
    # a write Spark itself fails (3 is not a date: ANSI's cast error, raised by the job writing the staging folder)
    failing = "SELECT *, CAST(CASE WHEN order_id > 0 THEN 'x' END AS DATE) AS d FROM orders"
    cases = {
        "bad_sql": ({"transform": {"type": "sql", "query": "SELECT no_such_column FROM orders"}}, "transform"),
        "bad_write": ({"transform": {"type": "sql", "query": failing}}, "write"),
        "bad_rows": ({"expectations": {"o": {"row_count": {"max": 10}}}}, "expectations"),
    }
    for task, (change, stage) in cases.items():
        config = {
            "inputs": {"orders": {"format": "delta", "path": "data/orders"}},
            "outputs": {"o": {"format": "parquet", "path": f"data/{task}"}},
            "transform": {"type": "sql", "query": "SELECT * FROM orders"},
            "monitors": ["lineage"],
            **change,
        }
        write_task(uc, task, {"CONFIG": config})
        with pytest.raises(TaskError, match=f"failed in {stage}"):
            run_task(uc / f"shop/daily/{task}", engine="spark", spark=spark)
        record = last(uc, task)
        assert (record.status, record.error.stage, record.backend) == ("failed", stage, "spark"), task
        assert record.inputs[0].data_hash is not None and record.timings
    assert last(uc, "bad_rows").expectations[0].observed == 500


NO_DELTA = """
import sys
from pathlib import Path
from pyspark.sql import SparkSession
from ubunye.config.model import IOConfig
from ubunye.engines.spark_engine import SparkEngine
from ubunye.exceptions import EngineError

spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
engine = SparkEngine(spark=spark)
try:
    engine.read(IOConfig("orders", format="delta", path="t"), Path(sys.argv[1]))
except EngineError as exc:
    print(exc)
"""


@pytest.mark.slow
def test_a_session_without_delta_jars_says_how_to_add_them(tmp_path, spark_child_env):
    import subprocess
    import sys

    (tmp_path / "t").mkdir()
    args = [sys.executable, "-c", NO_DELTA, str(tmp_path)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, env=spark_child_env)
    assert "Delta Lake is not available in this SparkSession" in done.stdout, done.stderr[-2000:]
    assert "spark.jars.packages=io.delta:delta-spark_" in done.stdout


@pytest.mark.parametrize("setting", [None, "INT96", "TIMESTAMP_MILLIS"])
def test_spark_parquet_timestamps_read_back_on_every_engine_whatever_the_session_says(spark, tmp_path, setting):
    # INT96 (Spark's default) reads back as timestamp_ntz elsewhere; TIMESTAMP_MILLIS drops the microseconds
    key = "spark.sql.parquet.outputTimestampType"
    before = spark.conf.get(key, None)
    if setting is not None:
        spark.conf.set(key, setting)
    try:
        frame = spark.sql(
            "SELECT 1L AS id, TIMESTAMP'2024-01-01 12:00:00.123456Z' AS t, array(TIMESTAMP'1900-01-01 00:00:00Z') AS ts"
        )
        engine = SparkEngine(spark=spark)
        engine.write(frame, IOConfig("o", format="parquet", path="o"), tmp_path)
        assert spark.conf.get(key, None) == setting if setting is not None else spark.conf.get(key, None) == before
    finally:
        spark.conf.set(key, before) if before is not None else spark.conf.unset(key)
    written = engine.hash(frame)
    for reader in (engine, get_engine("pandas"), get_engine("polars")):
        back = reader.hash(reader.read(IOConfig("o", format="parquet", path="o"), tmp_path))
        assert (back.schema, back.data_hash) == (written.schema, written.data_hash), reader.name


def test_spark_csv_and_json_outputs_are_read_back_before_the_commit(spark, tmp_path):
    # what text cannot hold is refused, naming the column, and the previous data stays; what it can is committed
    engine, pandas = SparkEngine(spark=spark), get_engine("pandas")
    for fmt, n in (("csv", "7"), ("json", "7L")):  # Spark infers int32 from csv, int64 from json
        io = IOConfig("o", format=fmt, path=f"o-{fmt}")
        engine.write(spark.sql(f"SELECT {n} AS n"), io, tmp_path)
        micros = spark.sql(f"SELECT {n} AS n, TIMESTAMP'2024-01-01 12:00:00.123456Z' AS t")
        with pytest.raises(EngineError, match=rf"output 'o': {fmt} does not read back as the frame written: "):
            engine.write(micros, io, tmp_path)
        assert [r.n for r in engine.read(io, tmp_path).collect()] == [7]
    with pytest.raises(EngineError, match=r"column 'n' is int64 in the frame but reads back as int32"):
        engine.write(spark.sql("SELECT 7L AS n"), IOConfig("o", format="csv", path="o-csv"), tmp_path)
    with pytest.raises(EngineError, match=r"column 'n' is int32 in the frame but reads back as int64"):
        engine.write(spark.sql("SELECT 7 AS n"), IOConfig("o", format="json", path="o-json"), tmp_path)
    # a line break inside a value: quoted by Spark's writer, read back whole (multiLine), on Spark and pandas
    broken = spark.sql("SELECT 1 AS n, 'a\\nb' AS s UNION ALL SELECT 2, 'x'")
    io = IOConfig("o", format="csv", path="o-csv")
    engine.write(broken, io, tmp_path)
    assert same(engine.hash(engine.read(io, tmp_path)), engine.hash(broken))
    assert sorted(pandas.read(io, tmp_path)["s"].tolist()) == ["a\nb", "x"]


@pytest.mark.parametrize("mode", ["overwrite", "append"])
@pytest.mark.parametrize("fmt", ["parquet", "delta"])
@pytest.mark.parametrize(("value", "said"), [("", "an empty string"), ("__HIVE_DEFAULT_PARTITION__", "the text")])
def test_a_partition_value_spark_stores_as_null_is_refused(spark, tmp_path, fmt, mode, value, said):
    # Spark stores both as its null partition: they would read back as null (the append and Delta were let through)
    engine = SparkEngine(spark=spark)
    io = IOConfig("o", format=fmt, path="o", partition_by=["p"], mode=mode)
    engine.write(spark.sql("SELECT 1 AS id, 'x' AS p"), io, tmp_path)
    frame = spark.sql(f"SELECT 1 AS id, 'x' AS p UNION ALL SELECT 2, '{value}'")
    with pytest.raises(EngineError, match=rf"output 'o': partition column 'p' holds {said}"):
        engine.write(frame, io, tmp_path)
    assert [tuple(r) for r in engine.read(io, tmp_path).collect()] == [(1, "x")]


def test_a_spark_append_of_other_columns_or_types_is_refused(spark, tmp_path):
    engine = SparkEngine(spark=spark)
    for i, (fmt, old, new, why) in enumerate(
        [
            ("parquet", "SELECT 1L AS a", "SELECT 1L AS b", "different columns"),
            ("parquet", "SELECT 1L AS a", "SELECT 'x' AS a", "column 'a' is int64 in .* but string in the frame"),
            ("json", "SELECT 1L AS a, 'x' AS b", "SELECT 1.5D AS a, 'y' AS b", "column 'a' is int64 in .* but float64"),
            ("csv", "SELECT 9007199254740993L AS x", "SELECT 1.5D AS x", "column 'x' is int64 in .* but float64"),
            ("csv", "SELECT 1 AS a, 'x' AS b", "SELECT 'y' AS b, 2 AS a", "columns in another order"),
        ]
    ):
        io = IOConfig("o", format=fmt, path=f"{fmt}-{i}", mode="append")
        engine.write(spark.sql(old), io, tmp_path)
        with pytest.raises(EngineError, match=rf"output 'o': cannot append to .*: {why}"):
            engine.write(spark.sql(new), io, tmp_path)
        assert same(engine.hash(engine.read(io, tmp_path)), engine.hash(spark.sql(old)))
        engine.write(spark.sql(old), io, tmp_path)  # the same columns and types still append
        assert engine.read(io, tmp_path).count() == 2


def test_spark_text_outputs_partitioned_by_a_string_day_read_back_by_value(spark, tmp_path):
    # Spark reads the folder dt=2024-01-01 back as a date: the value is compared, cast to the frame's type; an
    # empty string under another spelling of the partition column's name is still refused
    engine = SparkEngine(spark=spark)
    frame = spark.sql("SELECT 1 AS n, '2024-01-01' AS dt UNION ALL SELECT 2, '2024-01-02'")
    for fmt in ("csv", "json"):
        n = frame if fmt == "csv" else frame.selectExpr("CAST(n AS BIGINT) AS n", "dt")
        io = IOConfig("o", format=fmt, path=f"p-{fmt}", partition_by=["dt"], mode="append")
        engine.write(n, io, tmp_path)
        engine.write(n, io, tmp_path)  # the append compares the new files with the old ones
        assert engine.read(io, tmp_path).count() == 4
    with pytest.raises(EngineError, match=r"partition column 'dt' holds an empty string"):
        engine.write(
            spark.sql("SELECT 1 AS n, '' AS dt"),
            IOConfig("o", format="parquet", path="q", partition_by=["DT"]),
            tmp_path,
        )


def test_a_parquet_catalog_table_gets_microsecond_timestamps_too(spark, tmp_path):
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    engine = SparkEngine(spark=spark)
    frame = spark.sql("SELECT TIMESTAMP'2024-01-01 12:00:00.123456Z' AS t")
    engine.write(frame, IOConfig("o", format="parquet", table="default.ubunye_ts_micros"), tmp_path)
    try:
        where = spark.sql("DESCRIBE TABLE EXTENDED default.ubunye_ts_micros").where("col_name = 'Location'").first()
        files = list(Path(where.data_type.removeprefix("file:")).glob("*.parquet"))
        assert files and all(pq.read_schema(f).field("t").type == pa.timestamp("us", tz="UTC") for f in files)
    finally:
        spark.sql("DROP TABLE IF EXISTS default.ubunye_ts_micros")


def test_a_spark_day_without_rows_appends_nothing_and_empty_text_is_refused_saying_why(spark, tmp_path):
    engine = SparkEngine(spark=spark)
    for fmt in ("csv", "json"):
        io = IOConfig("o", format=fmt, path=f"d-{fmt}", partition_by=["dt"], mode="append")
        engine.write(
            spark.sql("SELECT 1L AS n, 'a' AS dt" if fmt == "json" else "SELECT 1 AS n, 'a' AS dt"), io, tmp_path
        )
        engine.write(spark.sql("SELECT 1 AS n, 'b' AS dt").where("n = 0"), io, tmp_path)  # Spark's raw error before
        assert engine.read(io, tmp_path).count() == 1
        empty = IOConfig("o", format=fmt, path=f"e-{fmt}")
        with pytest.raises(EngineError, match=rf"output 'o': {fmt} does not read back .*: the frame has no rows"):
            engine.write(spark.sql("SELECT 1 AS n").where("n = 0"), empty, tmp_path)


def test_spark_appends_of_ordinary_days_pass_and_drift_against_the_whole_output_is_refused(spark, tmp_path):
    engine = SparkEngine(spark=spark)
    # days a one-file comparison refused: an all-null column, numeric-looking text, partition values of one kind
    days = {
        "json": ["SELECT 1L AS n, 'a' AS s", "SELECT 2L AS n, CAST(NULL AS STRING) AS s"],
        "csv": ["SELECT 1 AS n, 'a' AS s", "SELECT 2 AS n, '007' AS s", "SELECT CAST(NULL AS INT) AS n, 'b' AS s"],
    }
    for fmt, queries in days.items():
        io = IOConfig("o", format=fmt, path=f"days-{fmt}", mode="append")
        for query in queries:
            engine.write(spark.sql(query), io, tmp_path)
        assert engine.read(io, tmp_path).count() == len(queries)
    stores = IOConfig("o", format="parquet", path="stores", partition_by=["store"], mode="append")
    # A new output of '007' alone reads back as the integer 7 (Spark types partition folders by their names):
    # refused; once 'ABC' is there, the folders read as text and '007' is appended as it is.
    with pytest.raises(EngineError, match="store"):
        engine.write(spark.sql("SELECT 1L AS n, '007' AS store"), stores, tmp_path)
    for store in ("ABC", "007"):
        engine.write(spark.sql(f"SELECT 1L AS n, '{store}' AS store"), stores, tmp_path)
    assert sorted(r.store for r in engine.read(stores, tmp_path).collect()) == ["007", "ABC"]
    # a json field null in the first file but typed in another: the whole output is what counts
    io = IOConfig("o", format="json", path="j", partition_by=["dt"], mode="append")
    engine.write(
        spark.sql("SELECT CAST(NULL AS BIGINT) AS x, 'a' AS dt UNION ALL SELECT 9007199254740993L, 'b'"), io, tmp_path
    )
    with pytest.raises(EngineError, match=r"column 'x' is int64 in the output as Spark reads it .* but float64"):
        engine.write(spark.sql("SELECT 1.5D AS x, 'c' AS dt"), io, tmp_path)


def test_a_lower_case_dynamic_overwrite_option_keeps_the_other_partitions(spark, tmp_path):
    engine = SparkEngine(spark=spark)
    io = IOConfig("o", format="parquet", path="o", partition_by=["dt"], options={"partitionoverwritemode": "dynamic"})
    engine.write(spark.sql("SELECT 1L AS n, 'a' AS dt UNION ALL SELECT 2L, 'b'"), io, tmp_path)
    engine.write(spark.sql("SELECT 3L AS n, 'b' AS dt"), io, tmp_path)
    assert sorted(tuple(r) for r in engine.read(io, tmp_path).collect()) == [(1, "a"), (3, "b")]


def test_a_quote_in_a_spark_csv_value_reads_back_on_pandas(spark, tmp_path):
    # Spark's default escape is a backslash, which pyarrow takes as text: quotes are doubled (RFC 4180) instead
    engine = SparkEngine(spark=spark)
    frame = spark.sql("""SELECT 1 AS n, 'say "hi"' AS s UNION ALL SELECT 2, 'back\\\\slash'""")
    io = IOConfig("o", format="csv", path="o")
    engine.write(frame.coalesce(1), io, tmp_path)
    assert sorted(get_engine("pandas").read(io, tmp_path)["s"].tolist()) == ["back\\slash", 'say "hi"']


# --- writes into an existing table: nothing lost, nothing stored otherwise than the record says -----------------


def _rows(spark, table):
    return sorted(tuple(r) for r in spark.table(table).collect())


def _delta(spark, *, path=None, table=None, columns, defaults=None):
    """A Delta table with generated, identity and default columns, made with delta-spark's builder: Spark 3.5's
    SQL has no GENERATED ALWAYS AS, and these tests run on every Spark line. ``columns``: (name, type, generated:
    an expression, "identity" or None)."""
    from delta.tables import DeltaTable, IdentityGenerator

    builder = DeltaTable.create(spark)
    builder = builder.location(path) if path is not None else builder.tableName(table)
    for name, kind, generated in columns:
        if generated is None:
            builder = builder.addColumn(name, kind)
        else:
            made = IdentityGenerator() if generated == "identity" else generated
            builder = builder.addColumn(name, kind, generatedAlwaysAs=made)
    if defaults:
        builder = builder.property("delta.feature.allowColumnDefaults", "supported")
    builder.execute()
    target = f"delta.`{path}`" if path is not None else table
    for name, value in (defaults or {}).items():
        spark.sql(f"ALTER TABLE {target} ALTER COLUMN {name} SET DEFAULT {value}")


def test_a_parquet_catalog_table_is_not_overwritten_but_appended_to_with_its_own_types(spark, tmp_path):
    # Spark's saveAsTable overwrite dropped a parquet table before writing: a failed job left no table at all
    engine = SparkEngine(spark=spark)
    table = "default.ubunye_keep_me"
    spark.sql(f"CREATE TABLE {table} (a INT, c CHAR(5)) USING parquet")
    try:
        spark.sql(f"INSERT INTO {table} VALUES (1, 'x')")
        same_types = spark.sql("SELECT 2 AS a, CAST('y' AS STRING) AS c")
        with pytest.raises(EngineError, match=rf"cannot overwrite the parquet catalog table {table} safely"):
            engine.write(same_types, IOConfig("o", table=table), tmp_path)
        refusals = [
            ("SELECT 2.7D AS a, 'y' AS c", r"its column 'a' is int but the frame's is double \(Spark would cast"),
            ("SELECT 2 AS a, 'y' AS c", r"its column 'c' is char\(5\), which Spark pads with spaces"),
            ("SELECT 2 AS a", r"its column 'c' is not in the frame \(it would be stored as null\)"),
            ("SELECT 2 AS A, 'y' AS c", r"its column 'a' is not in the frame \(the frame names it 'A'\)"),
            ("SELECT 2 AS a, 'y' AS c, 3 AS d", r"the frame's column 'd' is not one of its columns"),
        ]
        for sql, why in refusals:
            with pytest.raises(EngineError, match=rf"output 'o': cannot write to the catalog table {table}: {why}"):
                engine.write(spark.sql(sql), IOConfig("o", table=table, mode="append"), tmp_path)
        with pytest.raises(EngineError, match=rf"the catalog table {table} is parquet, but the config says format"):
            engine.write(same_types, IOConfig("o", format="delta", table=table, mode="append"), tmp_path)
        assert _rows(spark, table) == [(1, "x    ")]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_a_delta_catalog_table_written_without_a_format_stays_delta(spark, tmp_path):
    engine = SparkEngine(spark=spark)
    table = "default.ubunye_stays_delta"
    _delta(spark, table=table, columns=[("a", "BIGINT", None), ("g", "BIGINT", "a * 2")])
    try:
        engine.write(spark.sql("SELECT 1L AS a"), IOConfig("o", table=table), tmp_path)  # overwrite: a new version
        # g is Delta's to fill: a frame without it is how such a table is written
        engine.write(spark.sql("SELECT 2L AS a"), IOConfig("o", table=table, mode="append"), tmp_path)
        provider = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").where("col_name = 'Provider'").first()
        assert provider.data_type.lower() == "delta" and _rows(spark, table) == [(1, 2), (2, 4)]
        with pytest.raises(EngineError, match=r"its column 'a' is bigint but the frame's is int"):
            engine.write(spark.sql("SELECT 3 AS a"), IOConfig("o", table=table, mode="append"), tmp_path)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_a_delta_append_stores_the_frame_s_rows_or_is_refused(spark, tmp_path):
    engine = SparkEngine(spark=spark)
    path = str(tmp_path / "d")
    _delta(spark, path=path, columns=[("a", "BIGINT", None), ("c", "STRING", None), ("g", "BIGINT", "a * 2")])
    io = IOConfig("o", format="delta", path=path, mode="append")
    engine.write(spark.sql("SELECT 1L AS a, 'x' AS c"), io, tmp_path)  # g is Delta's to fill
    for sql, why in [
        ("SELECT 2L AS A, 'y' AS c", r"its column 'a' is not in the frame \(the frame names it 'A'\)"),
        ("SELECT 2 AS a, 'y' AS c", r"its column 'a' is bigint but the frame's is int \(Spark would cast"),
        ("SELECT 2L AS a, 'y' AS c, 3 AS d", r"the frame's column 'd' is not one of its columns"),
    ]:
        with pytest.raises(EngineError, match=rf"output 'o': cannot write to the Delta table at {path}: {why}"):
            engine.write(spark.sql(sql), io, tmp_path)
    merging = IOConfig("o", format="delta", path=path, mode="append", options={"mergeSchema": "true"})
    engine.write(spark.sql("SELECT 2L AS a, 'y' AS c, 3 AS d"), merging, tmp_path)  # a new column, asked for
    got = sorted(tuple(r) for r in spark.read.format("delta").load(path).collect())
    assert got == [(1, "x", 2, None), (2, "y", 4, 3)]


def test_catalog_checks_read_the_table_s_details_not_a_column_named_provider(spark, tmp_path):
    engine = SparkEngine(spark=spark)
    table, view = "default.ubunye_provider_col", "ubunye_a_view"
    spark.sql(f"CREATE TABLE {table} (id BIGINT, Provider STRING, s STRUCT<x: INT>) USING delta")
    try:
        # the column 'Provider' was read as the table's provider ("cannot overwrite the string catalog table")
        engine.write(
            spark.sql("SELECT 1L AS id, 'p' AS Provider, named_struct('x', 1) AS s"),
            IOConfig("o", table=table),
            tmp_path,
        )
        # mergeSchema in any case (Spark reads option names so), and a struct gaining a field under it
        grown = spark.sql("SELECT 2L AS id, 'q' AS Provider, named_struct('x', 2, 'y', 3) AS s")
        with pytest.raises(
            EngineError, match=r"its column 's' is struct<x:int> but the frame's is struct<x:int,y:int>"
        ):
            engine.write(grown, IOConfig("o", table=table, mode="append"), tmp_path)
        engine.write(grown, IOConfig("o", table=table, mode="append", options={"mergeschema": "true"}), tmp_path)
        assert spark.table(table).count() == 2
        spark.sql(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM {table}")
        with pytest.raises(EngineError, match=rf"output 'o': {view} is a view, not a table"):
            engine.write(grown, IOConfig("o", table=view, mode="append"), tmp_path)
    finally:
        spark.sql(f"DROP VIEW IF EXISTS {view}")
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_a_catalog_table_that_cannot_be_written_is_refused_before_the_task_reads(spark, tmp_path):
    # the refusals came from write(), after every input was read and the transform had run
    uc = example_usecase(tmp_path)
    table, view = "default.ubunye_refused_early", "ubunye_early_view"
    spark.sql(f"CREATE TABLE {table} (a INT) USING parquet")
    spark.sql(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT 1 AS a")
    code = "from ubunye import Task\n\nclass Early(Task):\n    def transform(self, sources):\n"
    code += "        raise RuntimeError('the transform ran')\n"
    try:
        cases = [
            ({"table": table}, rf"cannot overwrite the parquet catalog table {table} safely"),
            ({"table": table, "format": "delta", "mode": "append"}, rf"the catalog table {table} is parquet, but"),
            ({"table": view, "mode": "append"}, rf"{view} is a view, not a table"),
        ]
        for output, why in cases:
            cfg = {
                "CONFIG": {
                    "inputs": {"orders": {"format": "delta", "path": "data/none"}},
                    "outputs": {"o": output},
                    "monitors": ["lineage"],
                }
            }
            write_task(uc, "early", cfg, code)
            with pytest.raises(EngineError, match=rf"^output 'o': {why}"):
                run_task(uc / "shop/daily/early", engine="spark", spark=spark)
        assert _rows(spark, table) == []
    finally:
        spark.sql(f"DROP VIEW IF EXISTS {view}")
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_a_delta_append_leaving_out_a_column_delta_does_not_fill_is_refused(spark, tmp_path):
    # a frame without 'm' was taken, and its rows stored with m null: not the rows the record hashes
    engine = SparkEngine(spark=spark)
    path, table = str(tmp_path / "d"), "default.ubunye_filled"
    columns = [("a", "BIGINT", None), ("g", "BIGINT", "a * 2"), ("i", "BIGINT", "identity")]
    columns += [("n", "STRING", None), ("m", "STRING", None)]
    _delta(spark, path=path, columns=columns, defaults={"n": "'x'"})
    _delta(spark, table=table, columns=columns, defaults={"n": "'x'"})
    try:
        for io, what in [
            (IOConfig("o", format="delta", path=path, mode="append"), f"the Delta table at {path}"),
            (IOConfig("o", table=table, mode="append"), f"the catalog table {table}"),
        ]:
            with pytest.raises(EngineError, match=rf"{what}: its column 'm' is not in the frame \(it would be stored"):
                engine.write(spark.sql("SELECT 1L AS a"), io, tmp_path)
            # g, i and n are Delta's to fill (generated, identity, default): leaving them out is how it is written
            engine.write(spark.sql("SELECT 1L AS a, 'q' AS m"), io, tmp_path)
            back = spark.read.format("delta").load(path) if io.table is None else spark.table(table)
            assert [tuple(r) for r in back.collect()] == [(1, 2, 1, "x", "q")]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_a_path_spark_would_read_as_a_glob_pattern_is_refused(spark, tmp_path):
    # data/[ab] read data/a: other rows than the folder the config (and the record) names
    engine = SparkEngine(spark=spark)
    for folder, ids in (("[ab]", [1, 2]), ("a", [99])):
        (tmp_path / "data" / folder).mkdir(parents=True)
        pd.DataFrame({"id": ids}).to_parquet(tmp_path / "data" / folder / "part-0.parquet")
    glob_says = r"which Spark reads as a glob pattern \(it would read other folders than the one named"
    with pytest.raises(EngineError, match=rf"^input 'i': {tmp_path}/data/\[ab\] holds '\[', {glob_says}"):
        engine.read(IOConfig("i", format="parquet", path="data/[ab]"), tmp_path)
    for path, char in (("data/o*", "*"), ("data/{x}", "{"), ("data/o?", "?")):
        with pytest.raises(EngineError, match=rf"^output 'o': .* holds '\{char}', {glob_says}"):
            engine.check_output(IOConfig("o", format="delta", path=path), tmp_path)
    assert [r.id for r in engine.read(IOConfig("i", format="parquet", path="data/a"), tmp_path).collect()] == [99]
    # a pattern on an object store is Spark's to expand (no S3 filesystem here: it fails, but not as a glob)
    with pytest.raises(EngineError) as remote:
        engine.read(IOConfig("i", format="parquet", path="s3a://bucket/logs/2026-12-*"), tmp_path)
    assert "glob pattern" not in str(remote.value) and "s3a://bucket/logs/2026-12-*" in str(remote.value)


def test_from_pandas_takes_the_arrow_types_pandas_holds_and_spark_does_not(spark):
    # string_view, binary_view and date64 (at any depth) failed in Spark's Arrow conversion, naming no column
    import pyarrow as pa

    from ubunye.engines.pandas_engine import PandasEngine

    def arrow(values, kind):
        return pd.Series(pd.arrays.ArrowExtensionArray(pa.array(values, kind)))

    frame = pd.DataFrame(
        {
            "id": [1, 2],
            "label": arrow(["x", None], pa.string_view()),
            "raw": arrow([b"\x00\xff", b""], pa.binary_view()),
            "day": arrow([86_400_000, None], pa.date64()),
            "tags": arrow([["a", None], []], pa.list_(pa.string_view())),
            "s": arrow([{"d": 0}, None], pa.struct([("d", pa.date64())])),
        }
    )
    engine = SparkEngine(spark=spark)
    assert same(engine.hash(engine.from_pandas(frame)), PandasEngine().hash(frame))
    midday = pd.DataFrame({"day": arrow([43_200_000], pa.date64())})  # a time of day Spark's date would drop
    with pytest.raises(EngineError, match=r"^column 'day' of type date64\[ms\] cannot be handed to Spark"):
        engine.from_pandas(midday)
    views = pd.DataFrame({"v": arrow([[1]], pa.list_view(pa.int64()))})
    with pytest.raises(EngineError, match=r"^column 'v' holds a list_view<item: int64> \(an Arrow list view\)"):
        engine.from_pandas(views)


def test_a_delta_overwrite_keeping_the_table_s_schema_is_refused_unless_it_is_replaced(spark, tmp_path):
    # Delta's overwrite keeps the table's schema: a column the frame lacks stayed (as nulls), a column named in
    # another case took the table's name, while the record hashed the frame
    engine = SparkEngine(spark=spark)
    path, table = str(tmp_path / "d"), "default.ubunye_overwritten"
    spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT, extra STRING) USING delta")
    spark.sql(f"CREATE TABLE {table} (id BIGINT, extra STRING) USING delta")
    try:
        for io, what in [
            (IOConfig("o", format="delta", path=path), f"the Delta table at {path}"),
            (IOConfig("o", table=table), f"the catalog table {table}"),
        ]:
            for sql, why in [
                ("SELECT 1L AS id", r"its column 'extra' is not in the frame \(it would be stored as null\)"),
                ("SELECT 1L AS ID, 'x' AS extra", r"its column 'id' is not in the frame \(the frame names it 'ID'\)"),
            ]:
                with pytest.raises(EngineError, match=rf"cannot write to {what}: {why}.*overwriteSchema: true"):
                    engine.write(spark.sql(sql), io, tmp_path)
            # Delta ignores overwriteSchema beside replaceWhere (it keeps the schema): checked then
            ignored = IOConfig(io.name, format=io.format, path=io.path, table=io.table,
                               options={"overwriteSchema": "true", "replaceWhere": "id >= 0"})  # fmt: skip
            with pytest.raises(EngineError, match=rf"cannot write to {what}: its column 'extra' is not in the frame"):
                engine.write(spark.sql("SELECT 1L AS id"), ignored, tmp_path)
            replaced = IOConfig(io.name, format=io.format, path=io.path, table=io.table,
                                options={"overwriteSchema": "true"})  # fmt: skip
            engine.write(spark.sql("SELECT 1L AS id"), replaced, tmp_path)
            back = spark.read.format("delta").load(path) if io.table is None else spark.table(table)
            assert (back.columns, [tuple(r) for r in back.collect()]) == (["id"], [(1,)])
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_spark_writes_parquet_files_every_engine_reads_alike_whatever_the_session_says(spark, conf, tmp_path):
    # A session's INT96 timestamps and LEGACY rebase reached Delta's files: polars clamped 2300 to 2262, pyarrow
    # read 1000-01-01 as 1000-01-06, each without a word
    import datetime as dt_

    from ubunye.engines.pandas_engine import PandasEngine

    conf("spark.sql.parquet.outputTimestampType", "INT96")
    conf("spark.sql.parquet.datetimeRebaseModeInWrite", "LEGACY")
    conf("spark.sql.parquet.int96RebaseModeInWrite", "LEGACY")
    engine, pandas = SparkEngine(spark=spark), PandasEngine()
    frame = spark.sql("SELECT 1L AS id, DATE '1000-01-01' AS d, TIMESTAMP '2300-01-01 00:00:00' AS t")
    for fmt in ("delta", "parquet"):
        io = IOConfig("o", format=fmt, path=f"out_{fmt}")
        engine.write(frame, io, tmp_path)
        back = pandas.read(io, tmp_path)
        assert back["d"].tolist() == [dt_.date(1000, 1, 1)], fmt
        assert same(pandas.hash(back), engine.hash(frame)), fmt
    assert spark.conf.get("spark.sql.parquet.outputTimestampType") == "INT96"  # the session's, put back
    assert spark.conf.get("spark.sql.parquet.datetimeRebaseModeInWrite") == "LEGACY"


def test_a_write_setting_the_platform_refuses_is_said_and_the_write_goes_on(spark, caplog):
    # Databricks serverless lets a job set few session settings: a refused pin failed every parquet and Delta write
    import logging

    from ubunye.engines.spark_engine import _micros_timestamps

    class Locked:  # the session's own settings, refusing to change (fault injection: local Spark locks none)
        def __init__(self, conf):
            self._conf = conf

        def get(self, key, default=None):
            return self._conf.get(key, default)

        def set(self, key, value):
            raise RuntimeError(f"[CONFIG_NOT_AVAILABLE] Configuration {key} is not available.")

        def unset(self, key):
            raise AssertionError(f"{key} was never set: nothing to put back")

    class Session:
        conf = Locked(spark.conf)

    with caplog.at_level(logging.WARNING, logger="ubunye"):
        with _micros_timestamps(Session(), IOConfig("o", format="delta", path="d")):
            pass
    said = [r.getMessage() for r in caplog.records if "could not set" in r.getMessage()]
    assert said and all("other engines may read its parquet files otherwise" in m for m in said), said


def test_a_spark_delta_write_returns_the_version_its_own_commit_made(spark, tmp_path):
    # On an object store no lock keeps another writer from committing between a run's commit and a read of the
    # latest version: the write finds its own commit by the userMetadata mark it carries. A user's own
    # userMetadata is kept (no mark: the runner then reads the latest version back, as before).
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    engine = SparkEngine(spark=spark)
    path = tmp_path / "t"
    frame = spark.createDataFrame(pd.DataFrame({"id": [1, 2]}))
    first = engine.write(frame, IOConfig("o", format="delta", path=str(path), mode="overwrite"), tmp_path)
    write_deltalake(str(path), pa.table({"id": pa.array([3], pa.int64())}), mode="append")  # another writer's
    second = engine.write(frame, IOConfig("o", format="delta", path=str(path), mode="append"), tmp_path)
    history = {h["version"]: h for h in DeltaTable(str(path)).history()}
    assert (first, second) == (0, 2) and sorted(history) == [0, 1, 2]
    assert {history[0].get("userMetadata"), history[2].get("userMetadata")} != {None}
    assert history[0]["userMetadata"] != history[2]["userMetadata"]  # one mark per write
    own = IOConfig("o", format="delta", path=str(path), mode="append", options={"userMetadata": "nightly load"})
    assert engine.write(frame, own, tmp_path) is None
    assert DeltaTable(str(path)).history(1)[0]["userMetadata"] == "nightly load"
    # Delta's session-wide setting too: a write option (our mark) would have replaced the team's text.
    key = "spark.databricks.delta.commitInfo.userMetadata"
    spark.conf.set(key, "team-x: nightly")
    try:
        assert engine.write(frame, IOConfig("o", format="delta", path=str(path), mode="append"), tmp_path) is None
    finally:
        spark.conf.unset(key)
    assert DeltaTable(str(path)).history(1)[0]["userMetadata"] == "team-x: nightly"


def test_the_environment_names_the_delta_jars_the_session_loaded(spark):
    # The pip package delta-spark (recorded among the packages) is not what reads and writes the tables: the jars
    # the session loaded are (from spark.jars.packages here; a Databricks runtime's own there).
    import re

    packages = spark.sparkContext.getConf().get("spark.jars.packages", "")
    loaded = re.search(r"io\.delta:delta-spark[^:,]*:([^,]+)", packages)
    assert loaded is not None, packages
    assert SparkEngine(spark=spark).environment()["delta_version"] == loaded.group(1)
