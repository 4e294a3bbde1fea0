"""`make bench`, Delta section: the incremental hash of a 200-file Delta table after one file is appended (on
Spark also after a DELETE that writes deletion vectors), against the full hash of it, on both engines (never
asserted in tests; the bar: at least 20x faster than a full hash); and the same with the profile on (column
fingerprints and 256 buckets keyed on ``id``, from per-file partials) against a full profile.

Each round appends one file (not timed), then times the full hash (the table read whole and hashed, as the
engines do without a cache) and ``hash_delta`` with the cache filled by the previous round (it reads the log and
the one new file). Medians of the rounds, after one untimed round of both; the cache is in a local folder. One
section per file size (10,000 and 50,000 rows by default: 0.2 and 1 MB, both far below Delta's own target).

Run: python -m benchmarks.delta_incremental [--files N] [--rows-per-file N [N ...]] [--runs K] [--no-spark]
[--no-deltalake] [--no-profiles]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa


def _rows(n: int, start: int) -> pa.Table:
    rng = np.random.default_rng(start)
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table(
        {
            "id": ids,
            "amount": rng.normal(100, 50, n),
            "name": pa.array([f"customer-{i % 50_000}" for i in ids]),
            "active": rng.random(n) < 0.5,
            "day": pa.array((19_000 + ids % 3000).astype(np.int32), pa.int32()).cast(pa.date32()),
            "qty": pa.array(np.where(rng.random(n) < 0.2, None, ids % 1000), pa.int64()),
        }
    )


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _rounds(
    runs: int, append: Callable[[int], None], full: Callable[[], Any], incremental: Callable[[], Any]
) -> list[str]:
    full_s, inc_s, read = [], [], []
    # Round 0 is a warm-up of both paths alike (JIT, Python workers, the first read of one file), not timed: a
    # warm-up of the full hash alone would time the incremental one cold in its first round.
    for i in range(runs + 1):
        append(i)
        t_inc, h = _timed(incremental)
        t_full, reference = _timed(full)
        got = h.profile if h.profile is not None else h.hash
        if got != reference or h.hash_mode != "incremental":  # a bench of a wrong hash measures nothing
            raise RuntimeError(f"incremental {h} differs from the full one {reference}")
        if i > 0:
            inc_s.append(t_inc)
            full_s.append(t_full)
            read.append(h.files_read)
    f, n = statistics.median(full_s), statistics.median(inc_s)
    return [f"| {f:.3f} | {n:.3f} | {f / n:.0f}x | {max(read)} |"]


#: The profile the profiled rows measure: 256 buckets keyed on ``id`` (the bench's own choice of key).
PROFILE: dict[str, Any] = {"key": ["id"], "buckets": 256}


def arrow_rows(files: int, rows: int, runs: int, profile: bool = False) -> list[str]:
    from deltalake import DeltaTable, write_deltalake

    from ubunye.hashing import hash_frame
    from ubunye.hashing.delta_hash import hash_delta
    from ubunye.hashing.profile import profile_frame
    from ubunye.lineage.file_sums import FileSumsCache

    path, cache = tempfile.mkdtemp() + "/t", FileSumsCache(tempfile.mkdtemp())
    for i in range(files):
        write_deltalake(path, _rows(rows, i * rows), mode="append")
    options: dict[str, Any] = {"profile": True, **PROFILE} if profile else {}
    hash_delta(path, cache=cache, **options)  # fills the cache: every file read once

    def full() -> Any:
        table = DeltaTable(path).to_pyarrow_table()
        return profile_frame(table, **PROFILE) if profile else hash_frame(table)

    line = _rounds(
        runs,
        lambda i: write_deltalake(path, _rows(rows, (files + i) * rows), mode="append"),
        full,
        lambda: hash_delta(path, cache=cache, **options),
    )
    what = "profile keyed on id" if profile else "hash"
    return [f"| Arrow (deltalake, the twin), {what} {line[0]}"]


def spark_rows(files: int, rows: int, runs: int, profile: bool = False) -> list[str]:
    from ubunye.engines.spark_engine import new_session
    from ubunye.hashing.delta_hash import hash_delta
    from ubunye.hashing.spark import hash_spark, profile_spark
    from ubunye.lineage.file_sums import FileSumsCache
    from ubunye.spark import jvm_usable

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = new_session()
    engine = "jvm" if jvm_usable(spark) else "arrow"
    path, cache = tempfile.mkdtemp() + "/t", FileSumsCache(tempfile.mkdtemp())

    def frame(n: int, start: int) -> Any:
        return spark.range(start, start + n).selectExpr(
            "id", "rand(1) * 100 as amount", "concat('customer-', cast(id % 50000 as string)) as name",
            "rand(2) < 0.5 as active", "date_add(date'2020-01-01', cast(id % 3000 as int)) as day",
            "if(rand(3) < 0.2, null, id % 1000) as qty",
        )  # fmt: skip

    frame(files * rows, 0).repartition(files).write.format("delta").save(path)
    options: dict[str, Any] = {"profile": True, **PROFILE} if profile else {}
    hash_delta(path, cache=cache, spark=spark, engine=engine, **options)  # fills the cache

    def full() -> Any:
        table = spark.read.format("delta").load(path)
        return profile_spark(table, engine=engine, **PROFILE) if profile else hash_spark(table, engine=engine)

    line = _rounds(
        runs,
        lambda i: frame(rows, (files + i) * rows).coalesce(1).write.format("delta").mode("append").save(path),
        full,
        lambda: hash_delta(path, cache=cache, spark=spark, engine=engine, **options),
    )
    spark.stop()
    jar = "ubunye_profile_v1" if profile else "ubunye_rows_v1"
    what = f"{jar}, the jar" if engine == "jvm" else "the twin in mapInArrow: no jar"
    kind = "profile keyed on id" if profile else "hash"
    return [f"| Spark local[2] ({what}), {kind} {line[0]}"]


def spark_delete_rows(files: int, rows: int, runs: int) -> list[str]:
    """Each round deletes three rows of a table with deletion vectors on (each delete gives the files it touches a
    vector): the files with vectors are read alone, their deleted rows filtered out by row index."""
    from ubunye.engines.spark_engine import new_session
    from ubunye.hashing.delta_hash import hash_delta
    from ubunye.hashing.spark import hash_spark
    from ubunye.lineage.file_sums import FileSumsCache
    from ubunye.spark import jvm_usable

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = new_session()
    engine = "jvm" if jvm_usable(spark) else "arrow"
    path, cache = tempfile.mkdtemp() + "/t", FileSumsCache(tempfile.mkdtemp())
    spark.range(files * rows).selectExpr(
        "id", "rand(1) * 100 as amount", "concat('customer-', cast(id % 50000 as string)) as name",
        "rand(2) < 0.5 as active", "date_add(date'2020-01-01', cast(id % 3000 as int)) as day",
    ).repartition(files).write.format("delta").option("delta.enableDeletionVectors", "true").save(path)  # fmt: skip
    hash_delta(path, cache=cache, spark=spark, engine=engine)  # fills the cache

    def full() -> Any:
        return hash_spark(spark.read.format("delta").load(path), engine=engine)

    line = _rounds(
        runs,
        lambda i: spark.sql(f"DELETE FROM delta.`{path}` WHERE id IN ({1000 + 7 * i}, {5000 + 7 * i}, {9000 + 7 * i})"),
        full,
        lambda: hash_delta(path, cache=cache, spark=spark, engine=engine),
    )
    spark.stop()
    return [f"| Spark local[2], hash after a DELETE of 3 rows (deletion vectors) {line[0]}"]


def delta_section(
    files: int = 200,
    rows: int = 10_000,
    runs: int = 3,
    spark: bool = True,
    profiles: bool = True,
    deltalake: bool = True,
    deletes: bool = True,
) -> list[str]:
    """The Delta section of `make bench`, as Markdown lines (with ``profiles``, the profiled rows too; without
    ``deltalake`` or ``spark``, that engine's rows are left out)."""
    out = [
        f"### Delta: {files} files x {rows:,} rows, one file appended, median of {runs} rounds (after one untimed "
        "round of both)",
        "",
        "| engine | full s | incremental s | speed-up | files read |",
        "|---|---:|---:|---:|---:|",
    ]
    if deltalake:
        out.extend(arrow_rows(files, rows, runs))
        if profiles:
            out.extend(arrow_rows(files, rows, runs, profile=True))
    if spark:
        out.extend(spark_rows(files, rows, runs))
        if profiles:
            out.extend(spark_rows(files, rows, runs, profile=True))
        if deletes:
            out.extend(spark_delete_rows(files, rows, runs))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument(
        "--rows-per-file", type=int, nargs="+", default=[10_000, 50_000],
        help="one section per size; the profiled and DELETE rows in the first only",
    )  # fmt: skip
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--no-deltalake", action="store_true", help="leave out the deltalake (Arrow) rows")
    parser.add_argument("--no-profiles", action="store_true")
    args = parser.parse_args(argv)
    for n, rows in enumerate(args.rows_per_file):
        first = n == 0
        section = delta_section(
            args.files,
            rows,
            args.runs,
            spark=not args.no_spark,
            profiles=first and not args.no_profiles,
            deltalake=not args.no_deltalake,
            deletes=first,
        )
        print(("" if first else "\n") + "\n".join(section), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
