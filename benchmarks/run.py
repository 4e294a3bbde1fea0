"""`make bench`: rows-v1 speed, measured side by side in one run (never asserted in tests).

Twin section: a generated 1,000,000-row table of 8 mixed columns; rows/s of hash_frame, of a naive per-row
loop (json.dumps(sort_keys=True) + sha256), of the SHA-256 floor (hashlib over the twin's lines, built
beforehand) and of profile_frame (profile-v1: rows-v1 + column fingerprints + 256 buckets). Spark section:
2,000,000 cached rows x 8 columns, local[2], the median of several runs of each, ubunye_profile_v1 among them.
Each section ends with the cost bar of profile-v1: the profile at most 2x rows-v1 alone, per engine.

Records section (benchmarks/records.py): `ubunye lineage list -n 10` on 10,000 records on a local S3 server.

Run: python -m benchmarks.run [--rows N] [--spark-rows N] [--runs K] [--no-spark] [--records N] [--no-records]
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import hashlib
import json
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from ubunye.hashing import hash_frame
from ubunye.hashing.frame import _lines


def _table(n: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    ints = rng.integers(-(10**12), 10**12, n)
    nullable = pd.array(rng.integers(0, 1000, n), dtype="Int64")
    nullable[rng.random(n) < 0.2] = pd.NA
    return pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "amount": pa.array(rng.normal(100, 50, n)),
            "name": pa.array([f"customer-{i % 50_000}" for i in range(n)]),
            "active": pa.array(rng.random(n) < 0.5),
            "ts": pa.array((1_700_000_000_000_000 + ints).astype("datetime64[us]")).cast(pa.timestamp("us", "UTC")),
            "price": pa.array(ints, pa.int64()).cast(pa.decimal128(19, 0)).cast(pa.decimal128(21, 2)),
            "day": pa.array((19_000 + rng.integers(0, 3000, n)).astype(np.int32), pa.int32()).cast(pa.date32()),
            "qty": pa.array(nullable),
        }
    )


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _naive(table: pa.Table) -> None:
    def default(v: object) -> object:
        if isinstance(v, dt.datetime | dt.date):
            return v.isoformat()
        if isinstance(v, decimal.Decimal):
            return str(v)
        raise TypeError(type(v))

    total = 0
    for row in table.to_pylist():
        line = json.dumps({k: v for k, v in row.items() if v is not None}, sort_keys=True, default=default)
        total += int.from_bytes(hashlib.sha256(line.encode()).digest()[:8], "big")


def _bar(what: str, ours: list[float], base: list[float]) -> str:
    """The cost bar of profile-v1: the profile at most 2x rows-v1 alone, as the median of per-round ratios (the two ran
    back to back in each round, so a slow moment of a shared machine hits both) and their range."""
    ratios = [a / b for a, b in zip(ours, base, strict=True)]
    verdict = "within" if statistics.median(ratios) <= 2 else "OVER"
    return (
        f"- {what}: {statistics.median(ratios):.2f}x rows-v1 alone (rounds {min(ratios):.2f}x to "
        f"{max(ratios):.2f}x): {verdict} the bar of 2x"
    )


def twin_section(rows: int, runs: int = 3) -> list[str]:
    table = _table(rows)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    hash_frame(table)  # warm-up: first-touch allocations, imports
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    built = [line for batch in _lines(table) for line in batch.cast(pa.binary()).to_pylist()]
    sha = hashlib.sha256
    # hash_frame, the floor and the profiles alternate over the rounds (medians), so a slow moment hits all
    # alike; the naive loop, ~10x slower, runs once.
    from ubunye.hashing.profile import profile_frame

    hashes, floors, profiles, keyed = [], [], [], []
    for _ in range(runs):
        hashes.append(_timed(lambda: hash_frame(table)))
        floors.append(_timed(lambda: [sha(b).digest() for b in built]))
        profiles.append(_timed(lambda: profile_frame(table, buckets=256)))
        keyed.append(_timed(lambda: profile_frame(table, key=["id"], buckets=256)))
    t_hash, t_floor = statistics.median(hashes), statistics.median(floors)
    t_prof, t_keyed = statistics.median(profiles), statistics.median(keyed)
    t_naive = _timed(lambda: _naive(table))
    out = [
        f"### Twin: {rows:,} rows x 8 columns (int64, float64, string, bool, timestamp, decimal, date, nullable int)",
        "",
        f"| what | seconds (median of {runs}; naive: 1 run) | rows/s | vs hash_frame |",
        "|---|---:|---:|---:|",
        f"| hash_frame (rows-v1 twin) | {t_hash:.2f} | {rows / t_hash:,.0f} | 1.00x |",
        f"| naive loop: json.dumps(sort_keys) + sha256 per row | {t_naive:.2f} | {rows / t_naive:,.0f} | "
        f"{t_naive / t_hash:.2f}x slower |",
        f"| SHA-256 floor: hashlib over the twin's prebuilt lines | {t_floor:.2f} | {rows / t_floor:,.0f} | "
        f"{t_floor / t_hash:.2f}x (hash_frame is {t_hash / t_floor:.2f}x the floor) |",
        f"| profile_frame: rows-v1 + column fingerprints + 256 row buckets | {t_prof:.2f} | {rows / t_prof:,.0f} | "
        f"{t_prof / t_hash:.2f}x |",
        f"| profile_frame, key=[id]: + 256 key buckets | {t_keyed:.2f} | {rows / t_keyed:,.0f} | "
        f"{t_keyed / t_hash:.2f}x |",
        "",
        "Cost of profile-v1 (the bar: at most 2x rows-v1 alone):",
        _bar("profile_frame vs hash_frame", profiles, hashes),
        _bar("profile_frame key=[id] vs hash_frame", keyed, hashes),
        "",
        f"Peak RSS grew by {(rss1 - rss0) / 1024:.0f} MiB during hash_frame (process peak {rss1 / 1024:.0f} MiB; "
        "lines are built one 65,536-row batch at a time).",
    ]
    return out


_JVM_PROFILE = "ubunye_profile_v1(256, array(), *): + columns + 256 buckets"
_JVM_KEYED = "ubunye_profile_v1(256, array('id'), *): key buckets"
_ARROW_PROFILE = "jar-free profile (twin in mapInArrow)"


def _profile_case(df: object, engine: str, key: list[str] | None) -> Callable[[], object]:
    from ubunye.hashing.spark import profile_spark

    return lambda: profile_spark(df, key=key, buckets=256, engine=engine)


def spark_section(rows: int, runs: int) -> list[str]:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import ubunye.spark as us
    from ubunye.hashing.spark import hash_spark

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    spark = us.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    us.require(spark)
    df = spark.range(rows).selectExpr(
        "id",
        "rand(1) * 100 as amount",
        "concat('customer-', cast(id % 50000 as string)) as name",
        "rand(2) < 0.5 as active",
        "timestamp_micros(1700000000000000 + id * 1000003) as ts",
        "cast(id * 0.37 as decimal(20,2)) as price",
        "date_add(date'2020-01-01', cast(id % 3000 as int)) as day",
        "if(rand(3) < 0.2, null, cast(id % 1000 as int)) as qty",
    )
    df = df.cache()
    df.count()
    cols = sorted(df.columns)
    to_json_expr = (
        "sum(cast(conv(substr(sha2(to_json(struct(" + ",".join(cols) + ")),256),1,16),16,10) as decimal(38,0)))"
    )
    cases: list[tuple[str, Callable[[], object]]] = [
        ("count()", lambda: df.count()),
        ("sum(xxhash64(*)) (ANSI off)", lambda: df.agg(F.expr("sum(xxhash64(*))")).first()),
        ("to_json + sha2 + conv SQL expression", lambda: df.agg(F.expr(to_json_expr)).first()),
        ("ubunye_rows_v1(*) (the jar)", lambda: df.agg(F.expr("ubunye_rows_v1(*)")).first()),
        ("jar-free path (twin in mapInArrow)", lambda: hash_spark(df, engine="arrow")),
        (_JVM_PROFILE, _profile_case(df, "jvm", None)),
        (_JVM_KEYED, _profile_case(df, "jvm", ["id"])),
        (_ARROW_PROFILE, _profile_case(df, "arrow", None)),
    ]
    spark.conf.set("spark.sql.ansi.enabled", "false")
    for _, fn in cases:
        fn()  # warm-up: JIT, Python workers
    # Rounds interleave the cases (A B C D E, A B C D E, ...) so that a slow moment of a shared machine hits
    # every case alike instead of one case's whole series.
    times: dict[str, list[float]] = {name: [] for name, _ in cases}
    for _ in range(runs):
        for name, fn in cases:
            times[name].append(_timed(fn))
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    base = medians["sum(xxhash64(*)) (ANSI off)"]
    ours = medians["ubunye_rows_v1(*) (the jar)"]
    out = [
        f"### Spark: {rows:,} cached rows x 8 columns, local[2], median of {runs} interleaved rounds",
        "",
        "| what | median s | rows/s | vs sum(xxhash64(*)) | vs ubunye_rows_v1 |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, _ in cases:
        m = medians[name]
        out.append(f"| {name} | {m:.2f} | {rows / m:,.0f} | {m / base:.2f}x | {m / ours:.2f}x |")
    rows_v1, jar_free = times["ubunye_rows_v1(*) (the jar)"], times["jar-free path (twin in mapInArrow)"]
    out += [
        "",
        "Cost of profile-v1 (the bar: at most 2x rows-v1 alone):",
        _bar("ubunye_profile_v1 vs ubunye_rows_v1 (JVM)", times[_JVM_PROFILE], rows_v1),
        _bar("ubunye_profile_v1 key=[id] vs ubunye_rows_v1 (JVM)", times[_JVM_KEYED], rows_v1),
        _bar("jar-free profile vs jar-free rows-v1 (twin in mapInArrow)", times[_ARROW_PROFILE], jar_free),
    ]
    spark.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--spark-rows", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--records", type=int, default=10_000, help="records in the object-store listing timing")
    parser.add_argument("--no-records", action="store_true")
    args = parser.parse_args(argv)
    machine = (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, pyarrow {pa.__version__}"
    )
    print(f"Machine: {machine}\n")
    print("\n".join(twin_section(args.rows, args.runs)))
    if not args.no_spark:
        print()
        print("\n".join(spark_section(args.spark_rows, args.runs)))
    if not args.no_records:
        from benchmarks.records import records_section

        print()
        print("\n".join(records_section(args.records)))
    from benchmarks.delta_incremental import delta_section

    print()
    print("\n".join(delta_section(spark=not args.no_spark)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
