"""A Spark job in its own process: hash tests.spark.tables.mixed_table and print one JSON line.

Run by the slow tests with another JAVA_HOME or another master:
``python -m tests.spark.hash_job --master local[1]`` from the repository root.
"""

from __future__ import annotations

import argparse
import json

from pyspark.sql import SparkSession

import ubunye.spark as us
from tests.spark.tables import mixed_table


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--master", default="local[1]")
    parser.add_argument("--rows", type=int, default=3000)
    args = parser.parse_args()
    builder = (
        SparkSession.builder.master(args.master)
        .appName("ubunye-hash-job")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "3")
        .config("spark.executor.memory", "512m")
    )
    spark = us.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    us.require(spark)
    df = mixed_table(spark, args.rows).repartition(6)
    h = df.selectExpr("ubunye_rows_v1(*) AS h").first()["h"]
    jvm = spark.sparkContext._jvm
    out = {
        "java": jvm.System.getProperty("java.specification.version"),
        # Spark's own to_json prints the JVM's Double.toString: shows which JDK really ran.
        "to_json_1e23": spark.sql("SELECT to_json(named_struct('x', 1e23D))").first()[0],
        # Executor-side JDK and how many executors ran (local[n] has the driver only).
        "executor_java": sorted(
            set(
                spark.sparkContext.parallelize(range(6), 6)
                .map(lambda _: __import__("os").environ.get("JAVA_HOME", ""))
                .collect()
            )
        ),
        "executors": spark.sparkContext._jsc.sc().getExecutorIds().size(),
        "row_count": h["row_count"],
        "data_hash": h["data_hash"],
    }
    print("UBUNYE_RESULT " + json.dumps(out), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
