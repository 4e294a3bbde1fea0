"""Spark faults found by hunt 18 (pyspark 3.5 and the installed Spark), tested on the installed Spark.

- A SparkSession that could not start (a spark_conf value Spark refuses) was taken for a remote filesystem:
  "output 'o': cannot overwrite parquet at <a local path> safely: that storage has no atomic rename".
- ``spark.sql.ansi.enabled`` (and the other settings that change what a query gives) was not in the record's
  environment: ``lineage compare`` said "nothing recorded moved" when only it had.
- A failing ``expression`` rule was reported without its expression, and a Spark ParseException (whose message
  starts with a line break) as "ParseException: " alone.
- Parquet files holding unsigned integers or Arrow durations, which the pandas and polars engines refuse to hash
  (rows-v1 section 11), were hashed by Spark as the types it reads them as (uint8 as smallint, a duration as int64).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.lineage.usecase import records, write_task
from ubunye.config.model import Expectations, IOConfig
from ubunye.engines.spark_engine import SparkEngine
from ubunye.exceptions import EngineError, HashError
from ubunye.expectations import check, describe
from ubunye.hashing import hash_frame
from ubunye.lineage.compare import compare_records
from ubunye.runner import run_task

_STARTS = """
import sys
from pathlib import Path

from ubunye.config.model import IOConfig
from ubunye.engines.spark_engine import SparkEngine

cases = {
    "memory": {"spark.master": "local[1]", "spark.executor.memory": "1x"},
    "serializer": {"spark.master": "local[1]", "spark.serializer": "no.such.Serializer"},
}
for name, conf in cases.items():
    engine = SparkEngine(spark_conf={"spark.ui.enabled": "false", **conf})
    for step in ("check_output", "environment"):
        try:
            if step == "check_output":
                engine.check_output(IOConfig("o", format="parquet", path="o", mode="overwrite"), Path(sys.argv[1]))
            else:
                engine.environment()
            print(name, step, "started")
        except Exception as exc:
            print(name, step, type(exc).__name__, isinstance(exc, EngineError), exc)
""".replace("import SparkEngine\n", "import SparkEngine\nfrom ubunye.exceptions import EngineError\n")


def test_a_session_that_cannot_start_says_so_with_sparks_reason(tmp_path, spark_child_env) -> None:
    # A spark_conf value spark-submit refuses (the JVM dies before the gateway opens), and one SparkContext refuses
    # (the JVM runs, the context's constructor throws): a local output is no remote one in either case.
    args = [sys.executable, "-c", _STARTS, str(tmp_path)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, env=spark_child_env, check=False)
    lines = dict((" ".join(line.split()[:2]), line) for line in done.stdout.splitlines())
    assert len(lines) == 4, (done.stdout, done.stderr[-3000:])
    for line in lines.values():
        assert "SessionStartError True the Spark session could not start: " in line, line
        assert "atomic rename" not in line, line
    # the JVM died before it could answer: pyspark's words, and where the JVM's own went
    assert "Java gateway" in lines["memory check_output"] and "standard error" in lines["memory check_output"]
    assert "Executor memory" in done.stderr  # what the JVM said there
    # the JVM answered: its exception, naming the class it could not find
    assert "ClassNotFoundException" in lines["serializer check_output"], lines
    assert "no.such.Serializer" in lines["serializer check_output"], lines
    assert lines["serializer environment"] == lines["serializer check_output"].replace("check_output", "environment")


def test_a_run_whose_session_cannot_start_is_not_blamed_on_the_record_store(tmp_path, spark_child_env) -> None:
    # A Delta output at a URL needs no session before the run starts: the lineage monitor's task_start (the
    # engine's environment) started it first, and the run said "monitor lineage could not write the run record".
    uc = tmp_path / "uc"
    config = {
        "ENGINE": {"backend": "spark", "spark_conf": {"spark.master": "local[1]", "spark.executor.memory": "1x"}},
        "CONFIG": {
            "outputs": {"o": {"format": "delta", "path": "s3a://no-such-bucket/o"}},
            "transform": {"type": "sql", "query": "SELECT 1 AS a"},
            "monitors": ["lineage"],
        },
    }
    write_task(uc, "t", config)
    cli = [sys.executable, "-c", "from ubunye.cli.main import main; main()"]
    run = [*cli, "run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "t"]
    done = subprocess.run(run, capture_output=True, text=True, timeout=600, env=spark_child_env, check=False)
    [said] = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert done.returncode == 2, done.stderr[-3000:]
    assert said.startswith("error: task shop/daily/t did not start: SessionStartError: the Spark session "), said
    assert "run record" not in said and "monitor" not in said, said


def _run_sql(uc: Path, task: str, query: str, spark) -> None:
    cfg = {
        "MODEL": "etl",
        "ENGINE": {"backend": "spark"},
        "CONFIG": {
            "outputs": {"o": {"format": "parquet", "path": f"data/{task}"}},
            "transform": {"type": "sql", "query": query},
            "monitors": ["lineage"],
        },
    }
    run_task(write_task(uc, task, cfg), engine="spark", spark=spark)


def test_ansi_mode_is_recorded_and_compare_names_it(spark, conf, tmp_path) -> None:
    # size(NULL) is -1 with ANSI off (and spark.sql.legacy.sizeOfNull's default), NULL with it on
    query = "SELECT id, size(CASE WHEN id % 2 = 0 THEN array(id) END) AS n FROM VALUES (0L), (1L) AS t(id)"
    conf("spark.sql.legacy.sizeOfNull", "true")
    seen = {}
    for ansi in ("false", "true"):
        conf("spark.sql.ansi.enabled", ansi)
        seen[ansi] = spark.sql(query).where("id = 1").head()["n"]
        _run_sql(tmp_path, "ansi", query, spark)
    assert seen["false"] != seen["true"], seen  # the setting changes the data
    a, b = records(tmp_path, "ansi")
    assert (a.environment["spark"]["ansi_enabled"], b.environment["spark"]["ansi_enabled"]) == ("false", "true")
    found = compare_records(a, b)
    assert found.verdict != "same", found.summary
    assert "spark.ansi_enabled false -> true" in found.summary, found.summary
    assert "nothing recorded moved" not in found.summary


def test_the_settings_that_change_results_are_read_from_the_session(spark, conf) -> None:
    from ubunye.engines.spark_engine import RESULT_SETTINGS

    conf("spark.sql.storeAssignmentPolicy", "LEGACY")
    conf("spark.sql.legacy.timeParserPolicy", "LEGACY")
    conf("spark.sql.parquet.int96TimestampConversion", "true")  # the same INT96 file read as other instants
    facts = SparkEngine(spark=spark).environment()
    for fact, key in RESULT_SETTINGS.items():
        assert facts[fact] == spark.conf.get(key), fact
    assert (facts["store_assignment_policy"], facts["time_parser_policy"]) == ("LEGACY", "LEGACY")
    assert facts["parquet_int96_conversion"] == "true"


def test_failing_expressions_are_named_and_a_parse_error_says_what_failed(spark) -> None:
    engine = SparkEngine(spark=spark)
    frame = spark.sql("SELECT * FROM VALUES (1, 5), (2, -1), (3, 0) AS t(a, b)")
    rows = [(r["a"], r["b"]) for r in frame.collect()]
    broken = "a >> > 1"
    with pytest.raises(Exception) as raised:  # what Spark itself says of it
        spark.sql(f"SELECT {broken}").collect()
    said = [line.strip() for line in str(raised.value).splitlines() if line.strip()]

    results = check(Expectations("outputs.o", {"expression": ["a > 1", "b > 0", broken]}), frame, engine)
    shown = [describe(r) for r in results]
    assert shown[0] == f"outputs.o expression(a > 1): observed {sum(not a > 1 for a, _ in rows)}"
    assert shown[1] == f"outputs.o expression(b > 0): observed {sum(not b > 0 for _, b in rows)}"
    error = results[2].error
    assert error is not None and "\n" not in error and not results[2].passed
    # Spark's first line that says something, not the type's name alone (the position differs: the rule's SQL
    # is not this probe's)
    _, _, text = error.partition(": ")
    assert text.startswith(said[0].rsplit("(line", 1)[0].rstrip()), (error, said)  # pyspark 3.5: no space before
    assert shown[2] == f"outputs.o expression({broken}): {error}"


@pytest.mark.parametrize(
    ("name", "column"),
    [
        ("u8", pa.array([0, 255], pa.uint8())),
        ("u64", pa.array([0, 2**64 - 1], pa.uint64())),
        ("dur", pa.array([1, -5], pa.duration("us"))),
        ("nested", pa.array([{"x": 1}, None], pa.struct([("x", pa.uint16())]))),
    ],
)
def test_parquet_types_the_other_engines_refuse_are_refused_by_spark(spark, tmp_path, name, column) -> None:
    from ubunye.engines import get_engine

    folder = tmp_path / name
    folder.mkdir()
    pq.write_table(pa.table({"id": [1, 2], "c": column}), folder / "part-0.parquet")
    io = IOConfig("i", format="parquet", path=name)
    # the pandas engine reads the file and refuses to hash it, naming the column (or field) and type
    with pytest.raises(HashError) as local:
        get_engine("pandas").hash(get_engine("pandas").read(io, tmp_path))
    with pytest.raises(EngineError) as raised:
        hash_frame(SparkEngine(spark=spark).read(io, tmp_path))
    message = str(raised.value)
    leaf = column.type if name != "nested" else column.type.field(0).type
    path = "c" if name != "nested" else "c.x"
    assert f"input 'i': {'column' if path == 'c' else 'field'} {path!r} of {folder / 'part-0.parquet'}" in message
    assert f"is a {leaf}," in message and "rows-v1" in message, message
    assert repr(path) in str(local.value) and str(leaf) in str(local.value)


def test_a_second_file_holding_an_unsigned_integer_is_refused_too(spark, tmp_path) -> None:
    folder = tmp_path / "two"
    folder.mkdir()
    pq.write_table(pa.table({"c": pa.array([1], pa.int16())}), folder / "part-0.parquet")
    pq.write_table(pa.table({"c": pa.array([2], pa.uint8())}), folder / "part-1.parquet")
    with pytest.raises(EngineError, match=r"column 'c' of .*part-1\.parquet is a uint8"):
        SparkEngine(spark=spark).read(IOConfig("i", format="parquet", path="two"), tmp_path)
