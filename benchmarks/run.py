"""`make bench`: rows-v1 speed, measured side by side in one run (never asserted in tests).

Twin section: a generated 1,000,000-row table of 8 mixed columns; rows/s of hash_frame, of a naive per-row
loop (json.dumps(sort_keys=True) + sha256), of the SHA-256 floor (hashlib over the twin's lines, built
beforehand), of DuckDB's vectorised sha256 over the same lines, and of profile_frame (profile-v1: rows-v1 +
column fingerprints + 256 buckets) beside the SHA-256 of its distinct column lines alone (its lower bound); then
hash_frame of 10,000,000 rows (rows/s and peak RSS growth). Spark section:
2,000,000 cached rows x 8 columns, local[2], the median of several runs of each, ubunye_profile_v1 among them.
Each section ends with the cost bar of profile-v1: the profile at most 2x rows-v1 alone, per engine.

Records section (benchmarks/records.py): `ubunye lineage list -n 10` on 10,000 records on a local S3 server.

Run: python -m benchmarks.run [--rows N] [--scale-rows N] [--spark-rows N] [--runs K] [--no-spark] [--records N]
    [--no-records]
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import hashlib
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ubunye.hashing import hash_frame
from ubunye.hashing.digest import _BUILTIN_SHA256, _ONE_BLOCK
from ubunye.hashing.frame import BATCH_ROWS, _lines


def _table(n: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    ints = rng.integers(-(10**12), 10**12, n)
    nullable = pd.array(rng.integers(0, 1000, n), dtype="Int64")
    nullable[rng.random(n) < 0.2] = pd.NA
    return pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "amount": pa.array(rng.normal(100, 50, n)),
            # f"customer-{i % 50_000}", built by Arrow: 10,000,000 Python strings would cost seconds and a GiB
            "name": pc.binary_join_element_wise("customer-", pa.array(np.arange(n) % 50_000).cast(pa.string()), ""),
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


def _timed_cpu(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds (every thread of this process): on a shared machine the CPU time is what the code
    itself cost, and CPU time above the wall time says more than one core worked."""
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def _rss_kib(field: str) -> int | None:
    """VmRSS or VmHWM (the peak) of this process in KiB from /proc (Linux); None elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _peak_growth(fn: Callable[[], object]) -> tuple[float, float, str]:
    """Wall seconds of ``fn()`` and how far the resident set rose above where it stood before, in MiB, and how
    that was measured. Linux: the peak (VmHWM) is reset first (/proc/self/clear_refs), so the peak is the call's
    own; elsewhere ru_maxrss, a peak since the process started, can hide a rise below an earlier peak."""
    before = _rss_kib("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # 5: reset the peak RSS to the current RSS
        reset = True
    except OSError:
        reset = False
    rusage0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    seconds = _timed(fn)
    peak = _rss_kib("VmHWM") if reset else None
    if before is not None and peak is not None:
        return seconds, (peak - before) / 1024, "peak RSS (VmHWM, reset before the call) minus RSS before"
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rusage0
    return seconds, grown / 1024, "growth of the process's peak RSS (ru_maxrss; a lower bound)"


def _duckdb_sha256(lines: pa.Table, threads: int) -> Callable[[], object]:
    """DuckDB's vectorised sha256 over the line array (a dependency of ubunye), digests back as Arrow binary."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads={threads}")
    con.register("line_table", lines)
    return lambda: con.sql("SELECT unhex(sha256(l)) AS d FROM line_table").to_arrow_table()


def _cell_lines(table: pa.Table) -> list[bytes]:
    """Every distinct column line of ``table`` (docs/rows-v1.md section 12.1), prebuilt: the lines profile-v1 must
    hash at least once each, whatever the implementation (a null's line ``{}`` is a constant)."""
    from ubunye.hashing.profile import _encoded, _wrapped
    from ubunye.hashing.text import json_string
    from ubunye.hashing.types import is_string

    out: list[bytes] = []
    for i, field in enumerate(table.schema):
        q = '"' if is_string(field.type) else ""
        prefix, suffix = "{" + json_string(field.name) + ":" + q, q + "}"
        texts = [
            _wrapped(_encoded(batch, [i])[0][0].drop_null(), prefix, suffix)
            for batch in table.slice().to_batches(max_chunksize=BATCH_ROWS)
        ]
        out += pc.unique(pa.chunked_array(texts)).cast(pa.binary()).to_pylist()
    return out


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


def _bar(
    what: str, ours: list[float], base: list[float], base_name: str = "rows-v1 alone", limit: float | None = 2.0
) -> str:
    """A cost bar (profile-v1 at most 2x rows-v1 alone; the twin at most 2x the SHA-256 floor; the jar at most 1.6x
    sum(xxhash64)), as the median of per-round ratios (the two ran back to back in each round, so a slow moment of a
    shared machine hits both) and their range; with no ``limit``, the ratio alone (a floor, not a bar)."""
    ratios = [a / b for a, b in zip(ours, base, strict=True)]
    text = f"- {what}: {statistics.median(ratios):.2f}x {base_name} (rounds {min(ratios):.2f}x to {max(ratios):.2f}x)"
    if limit is None:
        return text
    return f"{text}: {'within' if statistics.median(ratios) <= limit else 'OVER'} the bar of {limit:g}x"


def twin_section(rows: int, runs: int = 3, scale_rows: int = 10_000_000) -> list[str]:
    table = _table(rows)
    hash_frame(table)  # warm-up: first-touch allocations, imports
    _, grown, how = _peak_growth(lambda: hash_frame(table))
    lines = pa.table({"l": pa.chunked_array(list(_lines(table)), pa.string())})
    built = [line for chunk in lines.column("l").cast(pa.binary()).chunks for line in chunk.to_pylist()]
    sha = hashlib.sha256
    cells = _cell_lines(table)
    short = _BUILTIN_SHA256 if max(map(len, cells), default=0) <= _ONE_BLOCK else sha  # line_words' own choice
    duck1, duck2 = _duckdb_sha256(lines, 1), _duckdb_sha256(lines, 2)
    check = duck1().column("d")
    assert check[0].as_py() == sha(built[0]).digest() and check[-1].as_py() == sha(built[-1]).digest()
    from ubunye.hashing.profile import profile_frame

    # Rounds interleave the cases (medians), so a slow moment of a shared machine hits all alike; the naive loop,
    # ~10x slower, runs once.
    cases: list[tuple[str, Callable[[], object]]] = [
        ("hash", lambda: hash_frame(table)),
        ("floor", lambda: [sha(b).digest() for b in built]),
        ("cells", lambda: [short(b).digest() for b in cells]),
        ("duck1", duck1),
        ("duck2", duck2),
        ("profile", lambda: profile_frame(table, buckets=256)),
        ("keyed", lambda: profile_frame(table, key=["id"], buckets=256)),
    ]
    load = os.getloadavg()[0]
    walls: dict[str, list[float]] = {name: [] for name, _ in cases}
    cpus: dict[str, list[float]] = {name: [] for name, _ in cases}
    for _ in range(runs):
        for name, fn in cases:
            wall, cpu = _timed_cpu(fn)
            walls[name].append(wall)
            cpus[name].append(cpu)
    w = {name: statistics.median(v) for name, v in walls.items()}
    c = {name: statistics.median(v) for name, v in cpus.items()}
    t_naive = _timed(lambda: _naive(table))
    t_hash = w["hash"]

    def cpu_ratio(ours: str, base: str) -> float:
        return statistics.median(a / b for a, b in zip(cpus[ours], cpus[base], strict=True))

    def row(what: str, name: str, versus: str) -> str:
        return f"| {what} | {w[name]:.2f} | {c[name]:.2f} | {rows / w[name]:,.0f} | {versus} |"

    size = sum(len(b) for b in built) / max(len(built), 1)
    bound = statistics.median((a + b) / a for a, b in zip(walls["hash"], walls["cells"], strict=True))
    cpu_bound = statistics.median((a + b) / a for a, b in zip(cpus["hash"], cpus["cells"], strict=True))
    out = [
        f"### Twin: {rows:,} rows x 8 columns (int64, float64, string, bool, timestamp, decimal, date, nullable int)",
        "",
        f"Lines average {size:.0f} bytes; load average {load:.1f} on {os.cpu_count()} cores before the rounds. Wall "
        f"and CPU seconds are medians of {runs} interleaved rounds (naive: 1 run); CPU time counts every thread of "
        "the process, so CPU above wall means a second core worked, and CPU well below wall that other work took "
        "the cores.",
        "",
        "| what | wall s | CPU s | rows/s | vs hash_frame (wall) |",
        "|---|---:|---:|---:|---:|",
        row("hash_frame (rows-v1 twin, one thread)", "hash", "1.00x"),
        f"| naive loop: json.dumps(sort_keys) + sha256 per row | {t_naive:.2f} | | {rows / t_naive:,.0f} | "
        f"{t_naive / t_hash:.2f}x slower |",
        row(
            "SHA-256 floor: hashlib over the twin's prebuilt lines",
            "floor",
            f"{w['floor'] / t_hash:.2f}x (hash_frame is {t_hash / w['floor']:.2f}x the floor)",
        ),
        row(
            "DuckDB sha256 over the same lines (an Arrow array), 1 thread",
            "duck1",
            f"{w['duck1'] / t_hash:.2f}x ({w['duck1'] / w['floor']:.2f}x the hashlib floor)",
        ),
        row(
            "DuckDB sha256 over the same lines, 2 threads (two cores)",
            "duck2",
            f"{w['duck2'] / t_hash:.2f}x ({w['duck2'] / w['floor']:.2f}x the hashlib floor)",
        ),
        row(
            "profile_frame: rows-v1 + column fingerprints + 256 row buckets", "profile", f"{w['profile'] / t_hash:.2f}x"
        ),
        row("profile_frame, key=[id]: + 256 key buckets", "keyed", f"{w['keyed'] / t_hash:.2f}x"),
        row(
            f"SHA-256 of the {len(cells):,} distinct column lines alone (each column's, prebuilt)",
            "cells",
            f"{w['cells'] / t_hash:.2f}x",
        ),
        "",
        "Cost bars (median of per-round ratios):",
        _bar("hash_frame vs the SHA-256 floor", walls["hash"], walls["floor"], "the floor"),
        _bar("profile_frame vs hash_frame", walls["profile"], walls["hash"]),
        _bar("profile_frame key=[id] vs hash_frame", walls["keyed"], walls["hash"]),
        f"- profile-v1's lower bound: hash_frame plus the SHA-256 of the distinct column lines, which a profile "
        f"must hash at least once each beside all rows-v1 does: {bound:.2f}x hash_frame ({cpu_bound:.2f}x in CPU "
        f"time): the bar of 2x is {'out of' if min(bound, cpu_bound) > 2 else 'within'} reach of a profile hashing "
        "its lines at this speed",
        f"- the same ratios in CPU time (what the code itself cost, less moved by other work on the machine): "
        f"hash_frame {cpu_ratio('hash', 'floor'):.2f}x the floor, profile_frame {cpu_ratio('profile', 'hash'):.2f}x "
        f"and key=[id] {cpu_ratio('keyed', 'hash'):.2f}x hash_frame",
        "",
        f"Peak RSS rose {grown:.0f} MiB during hash_frame of {rows:,} rows ({how}); lines are built one "
        f"{BATCH_ROWS:,}-row batch at a time.",
    ]
    if scale_rows:
        del lines, built, duck1, duck2, cases
        out += ["", *_scale(table, rows, t_hash, scale_rows)]
    return out


def _scale(small: pa.Table, rows: int, t_small: float, big_rows: int) -> list[str]:
    """hash_frame of a larger table of the same generator: rows/s beside the small table's, and the peak RSS
    growth while hashing (the table is built, and its memory counted, before)."""
    big = _table(big_rows)
    small_again = _timed(lambda: hash_frame(small))  # one run of each, back to back: the same conditions
    seconds, grown, how = _peak_growth(lambda: hash_frame(big))
    r_small, r_big = rows / small_again, big_rows / seconds
    verdict = "within" if abs(r_big / r_small - 1) <= 0.15 else "OUTSIDE"
    return [
        f"Scale: hash_frame of {big_rows:,} rows (one run) at {r_big:,.0f} rows/s ({seconds:.1f} s) against "
        f"{r_small:,.0f} rows/s at {rows:,} rows (one run just before; the median above: {rows / t_small:,.0f}): "
        f"{r_big / r_small:.2f}x ({verdict} 15%). Peak RSS rose {grown:.0f} MiB while hashing the {big_rows:,} rows, "
        f"the table ({big.nbytes / 2**20:,.0f} MiB) built before ({how}).",
    ]


_JVM_PROFILE = "ubunye_profile_v1(256, array(), *): + columns + 256 buckets"
_JVM_KEYED = "ubunye_profile_v1(256, array('id'), *): key buckets"
_ARROW_PROFILE = "jar-free profile (twin in mapInArrow)"


def _profile_case(df: object, engine: str, key: list[str] | None) -> Callable[[], object]:
    from ubunye.hashing.spark import profile_spark

    return lambda: profile_spark(df, key=key, buckets=256, engine=engine)


def _spark_table(spark: Any, rows: int) -> Any:
    """The bench's Spark table, cached and counted: the twin table's 8 column types, generated on the executors."""
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
    return df


def spark_section(rows: int, runs: int, scale_rows: int = 0) -> list[str]:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import ubunye.spark as us
    from ubunye.hashing.spark import hash_spark

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # 8g: the scale run caches its whole table (20M rows: ~2.5 GiB in Spark's columnar cache).
    builder = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    spark = us.configure(builder.config("spark.driver.memory", "8g")).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    us.require(spark)
    df: Any = _spark_table(spark, rows)
    cols = sorted(df.columns)
    to_json_expr = (
        "sum(cast(conv(substr(sha2(to_json(struct(" + ",".join(cols) + ")),256),1,16),16,10) as decimal(38,0)))"
    )

    def count_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # nested: pickled by value, so the Python workers need not import this module
        yield pa.record_batch([pa.array([sum(b.num_rows for b in batches)], pa.int64())], names=["n"])

    cases: list[tuple[str, Callable[[], object]]] = [
        ("count()", lambda: df.count()),
        ("sum(xxhash64(*)) (ANSI off)", lambda: df.agg(F.expr("sum(xxhash64(*))")).first()),
        ("to_json + sha2 + conv SQL expression", lambda: df.agg(F.expr(to_json_expr)).first()),
        ("ubunye_rows_v1(*) (the jar)", lambda: df.agg(F.expr("ubunye_rows_v1(*)")).first()),
        (_HAND_OVER, lambda: df.mapInArrow(count_batches, "n long").agg(F.sum("n")).first()),
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
    cpu: dict[str, list[float]] = {name: [] for name, _ in cases}
    jvm_cpu = _jvm_cpu_clock(spark)
    for _ in range(runs):
        for name, fn in cases:
            c0 = jvm_cpu()
            times[name].append(_timed(fn))
            cpu[name].append(jvm_cpu() - c0)
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    base = medians["sum(xxhash64(*)) (ANSI off)"]
    ours = medians["ubunye_rows_v1(*) (the jar)"]
    out = [
        f"### Spark: {rows:,} cached rows x 8 columns, local[2], median of {runs} interleaved rounds",
        "",
        "JVM CPU s: CPU time of the Spark JVM (driver and executors: local[2]) per query, median; not shown where"
        " Python workers do the work (mapInArrow), whose CPU it does not count. On a shared machine it is what the"
        " query itself cost; above the wall time, both cores worked.",
        "",
        "| what | median s | JVM CPU s | rows/s | vs sum(xxhash64(*)) | vs ubunye_rows_v1 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, _ in cases:
        m = medians[name]
        c = "" if name in _PYTHON_WORK else f"{statistics.median(cpu[name]):.2f}"
        out.append(f"| {name} | {m:.2f} | {c} | {rows / m:,.0f} | {m / base:.2f}x | {m / ours:.2f}x |")
    rows_v1, jar_free = times["ubunye_rows_v1(*) (the jar)"], times["jar-free path (twin in mapInArrow)"]
    out += [
        "",
        "Speed bars:",
        _bar(
            "ubunye_rows_v1(*) vs sum(xxhash64(*))",
            rows_v1,
            times["sum(xxhash64(*)) (ANSI off)"],
            "sum(xxhash64(*))",
            limit=1.6,
        ),
        _bar(
            "  the same in JVM CPU time",
            cpu["ubunye_rows_v1(*) (the jar)"],
            cpu["sum(xxhash64(*)) (ANSI off)"],
            "sum(xxhash64(*))",
            limit=1.6,
        ),
        _bar("jar-free path vs the jar", jar_free, rows_v1, "ubunye_rows_v1(*)"),
        _bar(
            "  its floor, Spark's Arrow hand-over alone (no encoding, no hashing)",
            times[_HAND_OVER],
            rows_v1,
            "ubunye_rows_v1(*)",
            limit=None,
        ),
        "",
        "Cost of profile-v1 (the bar: at most 2x rows-v1 alone):",
        _bar("ubunye_profile_v1 vs ubunye_rows_v1 (JVM)", times[_JVM_PROFILE], rows_v1),
        _bar("ubunye_profile_v1 key=[id] vs ubunye_rows_v1 (JVM)", times[_JVM_KEYED], rows_v1),
        _bar("jar-free profile vs jar-free rows-v1 (twin in mapInArrow)", times[_ARROW_PROFILE], jar_free),
    ]
    if scale_rows:
        df.unpersist()
        out += ["", *_spark_scale(spark, rows, scale_rows, {n: medians[n] for n in _SCALE_CASES})]
    spark.stop()
    return out


#: The jar-free path's floor: Spark turning the cached rows into Arrow batches for a Python worker that only counts
#: them (no encoding, no hashing).
_HAND_OVER = "Arrow hand-over alone (mapInArrow counting rows)"


#: The cases whose work runs in Python workers, outside the JVM whose CPU time the bench reads.
_PYTHON_WORK = frozenset({_HAND_OVER, "jar-free path (twin in mapInArrow)", _ARROW_PROFILE})


def _jvm_cpu_clock(spark: Any) -> Callable[[], float]:
    """Seconds of CPU the Spark JVM has used (every thread: in local mode the executors run in it too), read from
    /proc (py4j cannot call com.sun.management's getProcessCpuTime: its class is not exported); NaN elsewhere."""
    pid = spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getPid()
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def seconds() -> float:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return math.nan
        fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        return (int(fields[11]) + int(fields[12])) / tick  # utime, stime

    return seconds


_SCALE_CASES = ("count()", "sum(xxhash64(*)) (ANSI off)", "ubunye_rows_v1(*) (the jar)")


def _spark_scale(spark: Any, rows: int, scale_rows: int, small: dict[str, float]) -> list[str]:
    """rows/s of count, sum(xxhash64) and ubunye_rows_v1 on a table ``scale_rows / rows`` times larger (one warm-up
    and the median of 3 runs each), next to the medians of the smaller table: the jar's aggregate keeps one
    MessageDigest and one line buffer per task, so its rate should not depend on the table's size."""
    from pyspark.sql import functions as F

    big: Any = _spark_table(spark, scale_rows)
    cases: dict[str, Callable[[], object]] = {
        "count()": lambda: big.count(),
        "sum(xxhash64(*)) (ANSI off)": lambda: big.agg(F.expr("sum(xxhash64(*))")).first(),
        "ubunye_rows_v1(*) (the jar)": lambda: big.agg(F.expr("ubunye_rows_v1(*)")).first(),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for fn in cases.values():
        fn()
    for _ in range(3):
        for name, fn in cases.items():
            times[name].append(_timed(fn))
    big.unpersist()
    out = [
        f"### Spark at scale: {rows:,} vs {scale_rows:,} cached rows, local[2] (median of 3 at {scale_rows:,})",
        "",
        f"| what | rows/s at {rows:,} | rows/s at {scale_rows:,} | change |",
        "|---|---:|---:|---:|",
    ]
    for name in cases:
        small_rate, big_rate = rows / small[name], scale_rows / statistics.median(times[name])
        out.append(f"| {name} | {small_rate:,.0f} | {big_rate:,.0f} | {big_rate / small_rate - 1:+.0%} |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--scale-rows", type=int, default=10_000_000, help="rows of the twin's scale run (0: none)")
    parser.add_argument("--spark-rows", type=int, default=2_000_000)
    parser.add_argument("--spark-scale-rows", type=int, default=20_000_000, help="rows of Spark's scale run (0: none)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--records", type=int, default=10_000, help="records in the object-store listing timing")
    parser.add_argument("--no-records", action="store_true")
    args = parser.parse_args(argv)
    machine = (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, pyarrow {pa.__version__}"
    )
    print(f"Machine: {machine}\n")
    print("\n".join(twin_section(args.rows, args.runs, args.scale_rows)))
    if not args.no_spark:
        print()
        print("\n".join(spark_section(args.spark_rows, args.runs, args.spark_scale_rows)))
    if not args.no_records:
        from benchmarks.records import records_section

        print()
        print("\n".join(records_section(args.records)))
    # Its own process: a Spark JVM takes its classpath when it starts, and the Delta section's session needs
    # delta-spark's jars, which the session above did not load.
    print(flush=True)
    delta = [sys.executable, "-m", "benchmarks.delta_incremental", *(["--no-spark"] if args.no_spark else [])]
    subprocess.run(delta, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
