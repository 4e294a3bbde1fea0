"""On this venv's pyspark line: the jar's line writer on adversarial doubles, floats, decimals and strings.

The jar of each line is compiled apart (Spark 3.5's for Java 8, with a hand-written 128-bit multiply in its
double writer, SparkCompat.multiplyHigh), so the values of tests/spark/test_jvm_writer_adversarial.py that reach
every branch of the writer are hashed here too: tens of thousands of random double bit patterns, every class of
double and float, wide decimals at every byte-width edge, strings with escapes and invalid UTF-8 at every
position. The jar, the jar-free path and the twin must give tests/vectors/derive.py's lines and hashes (its float
text from Python's repr, tests/spark/adversarial_values.java_float). Only APIs every line has: the tables enter
Spark as Parquet files pyarrow writes (see test_line_conformance.py).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.spark.adversarial_values import (
    adversarial_doubles,
    adversarial_floats,
    bad_strings,
    chunks,
    dcell,
    double,
    fcell,
    float32,
    java_float,
    pad,
    strings_every_length_and_position,
    unscaled_candidates,
)
from tests.spark.conftest import jvm_lines, rows_v1, to_arrow
from tests.vectors import derive
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.profile import profile_frame
from ubunye.hashing.spark import hash_spark, profile_spark, spark_canonical_lines
from ubunye.hashing.types import parse_type, spark_type
from ubunye.testing.vectors import Vector


def _same(got: list[str], want: list[str], what: str) -> None:
    got, want = sorted(got), sorted(want)
    if got != want:
        only_got, only_want = sorted(set(got) - set(want))[:3], sorted(set(want) - set(got))[:3]
        pytest.fail(f"{what}: only in got {only_got}; only in want {only_want}")


def _agree(spark: Any, columns: list[tuple[str, str]], rows: list[list[Any]], folder: Path, name: str) -> None:
    """derive.py = the jar = the jar-free path = the twin (on the Arrow table and on Spark's own Arrow), lines,
    hashes and the profile's column fingerprints and buckets."""
    want = derive.expected(columns, rows)
    table = Vector(name, columns, rows, want).arrow()
    path = folder / f"{name}.parquet"
    pq.write_table(table, path)
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField(n, spark_type(parse_type(t))) for n, t in columns])
    df = spark.read.schema(schema).parquet(str(path))
    _same(canonical_lines(table), want["lines"], "twin vs derive.py")
    _same(jvm_lines(df), want["lines"], "jar vs derive.py")
    _same(spark_canonical_lines(df, engine="arrow"), want["lines"], "jar-free path vs derive.py")
    _same(canonical_lines(to_arrow(df)), want["lines"], "twin on Spark's Arrow vs derive.py")
    assert rows_v1(df)["data_hash"] == want["data_hash"]
    assert hash_spark(df, engine="arrow").data_hash == hash_frame(table).data_hash == want["data_hash"]
    key = [columns[0][0]]
    jvm = profile_spark(df, key=key, buckets=16, engine="jvm")
    twin = profile_frame(table, key=key, buckets=16)
    assert jvm.columns == twin.columns
    assert jvm.buckets.rows() == twin.buckets.rows()
    for i, (col, tname) in enumerate(columns):
        derived = derive.column_profile(col, derive.parse_type(tname), [r[i] for r in rows])
        assert jvm.columns[col].fingerprint == derived["fingerprint"], col


@pytest.fixture
def shortest_derive(monkeypatch: pytest.MonkeyPatch) -> None:
    """derive.py with Python's repr digits for floats (its own java_float misses the shortest digits of some
    powers of two: tests/spark/test_jvm_writer_adversarial.test_derive_py_writes_every_power_of_two_as_java_does)."""
    monkeypatch.setattr(derive, "java_float", java_float)


def test_doubles_and_floats_of_every_class_and_random_bits(spark: Any, tmp_path: Path, shortest_derive: None) -> None:
    rng = random.Random(35)
    d = [fcell(x) for x in adversarial_doubles(n_random=200)]
    d += [fcell(double(rng.getrandbits(64))) for _ in range(20000)]  # the 128-bit multiply, on any exponent
    f = [fcell(x) for x in adversarial_floats()] + [fcell(float32(rng.getrandbits(32))) for _ in range(3000)]
    maps = [{"map": [[k, k] for k in {c["float"]: c for c in chunk}.values()]} for chunk in chunks(d[:3000], 4)]
    columns = [("d", "float64"), ("f", "float32"), ("l", "list<float64>"), ("m", "map<float64,float64>")]
    _agree(spark, columns, pad([d, f, [{"list": c} for c in chunks(d, 9)], maps]), tmp_path, "floats")


def test_wide_decimals_at_every_byte_width(spark: Any, tmp_path: Path) -> None:
    c = unscaled_candidates(35)
    types = [(18, 6), (19, 0), (19, 19), (20, 2), (28, 10), (29, 0), (37, 7), (38, 0), (38, 18), (38, 25), (38, 38)]
    columns = [(f"d{p}_{s}", f"decimal({p},{s})") for p, s in types]
    cells = [[dcell(u, s) for u in c if abs(u) < 10**p] for p, s in types]
    in38 = [u for u in c if abs(u) < 10**38]
    columns.append(("l", "list<decimal(38,10)>"))
    cells.append([{"list": [dcell(u, 10) for u in chunk] + [None]} for chunk in chunks(in38, 5)])
    _agree(spark, columns, pad(cells), tmp_path, "decimals")


def test_strings_with_escapes_and_invalid_utf8_at_every_position(spark: Any, tmp_path: Path) -> None:
    plain = strings_every_length_and_position()[::3]
    bad = bad_strings()[::2]
    columns = [("s", "string"), ("b", "string"), ("m", "map<string,string>")]
    maps = [
        {"map": [[k, v] for k, v in zip({x["string_bytes"]: x for x in ch}.values(), ch, strict=False)]}
        for ch in chunks(bad, 3)
    ]
    _agree(spark, columns, pad([plain, bad, maps]), tmp_path, "strings")
