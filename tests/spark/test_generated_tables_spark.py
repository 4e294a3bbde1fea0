"""Generated adversarial tables (tests/hashing/generated.py) on Spark, each compared ON THE SAME TABLE: the jar
(``ubunye_rows_v1(*)``, ``ubunye_profile_v1``), the jar-free path (``engine="arrow"``), the twin on the Arrow table,
and tests/vectors/derive.py, the independent oracle; under exotic session time zones with ANSI on and off; with the
columns and rows shuffled. Then types the spec does not cover, buried in nested types: every path refuses, naming
the column and the type.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.hashing import generated as g
from tests.spark.conftest import arrow_frame, jvm_lines, rows_v1, spark_major, to_arrow
from ubunye.exceptions import HashError
from ubunye.hashing import hash_frame, profile_frame
from ubunye.hashing.spark import hash_spark, profile_spark
from ubunye.hashing.types import parse_type, spark_identifier, spark_type

SETTINGS = [("Pacific/Chatham", "true"), ("America/St_Johns", "false"), ("Asia/Kathmandu", "true")]


def _frame(spark: Any, table: g.Table, via: str) -> Any:
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField(n, spark_type(parse_type(t))) for n, t in table.typed])
    if via == "arrow":
        return arrow_frame(spark, table.arrow(), schema)
    trees = [t for _, t in table.columns]
    rows = [tuple(_py(v, t) for v, t in zip(r.values(), trees, strict=True)) for r in table.arrow().to_pylist()]
    return spark.createDataFrame(rows, schema=schema)


def _py(value: Any, tree: Any) -> Any:
    """An Arrow Python value as pyspark builds from it: maps as dicts (their keys are unique here), at any depth."""
    if value is None or isinstance(tree, str) or tree[0] == "decimal":
        return value
    if tree[0] == "list":
        return [_py(v, tree[1]) for v in value]
    if tree[0] == "map":
        return {_py(k, tree[1]): _py(v, tree[2]) for k, v in value}
    return {n: _py(value[n], t) for n, t in tree[1]}


def _profile_numbers(p: Any) -> tuple[Any, ...]:
    columns = {n: (c.type, c.nulls, c.nans, c.sum1, c.sum2, c.fingerprint) for n, c in p.columns.items()}
    return p.hash.data_hash, p.hash.row_count, columns, None if p.buckets is None else p.buckets.rows()


def test_generated_tables_agree_on_every_spark_engine(spark, conf):
    checked = 0
    for seed in range(15):
        rng = random.Random(seed)
        zone, ansi = SETTINGS[seed % len(SETTINGS)]
        conf("spark.sql.session.timeZone", zone)
        conf("spark.sql.ansi.enabled", ansi)
        table = g.gen_table(rng, g.spark_options(max_rows=6, max_columns=4, bad_utf8=seed % 2 == 0 and seed % 3 != 0))
        want = table.expected()
        assert hash_frame(table.arrow()).data_hash == want["data_hash"], table
        df = _frame(spark, table, "arrow" if seed % 3 else "rows")
        assert jvm_lines(df) == sorted(want["lines"]), (seed, table)
        assert rows_v1(df)["data_hash"] == want["data_hash"], (seed, table)
        h = hash_spark(df, engine="arrow")
        assert (h.schema, h.data_hash) == (want["schema"], want["data_hash"]), (seed, table)
        # column and row order: shuffled columns, rows spread over partitions
        names = list(df.columns)
        rng.shuffle(names)
        moved = df.select(*[spark_identifier(n) for n in names]).repartition(3)
        assert rows_v1(moved)["data_hash"] == hash_spark(moved, engine="arrow").data_hash == want["data_hash"]
        # the profile: jar, jar-free path and the twin on the Arrow table
        key = rng.choice([None, rng.sample(names, rng.randint(1, len(names)))])
        n = rng.choice([1, 4, 16])
        twin = _profile_numbers(profile_frame(table.arrow(), key=key, buckets=n))
        for engine in ("jvm", "arrow"):
            assert _profile_numbers(profile_spark(moved, key=key, buckets=n, engine=engine)) == twin, (seed, engine)
        checked += 1
    assert checked == 15


# --- refusals: types the spec does not cover, at any depth ----------------------------------------------------------

BAD_SPARK = [
    ("INTERVAL '1' DAY", "interval day"),
    ("INTERVAL '1' YEAR", "interval year"),
    ("CAST(NULL AS VOID)", "void"),
    ("parse_json('1')", "variant"),
    ("TIME'12:00:00'", "time"),
]


def _buried(rng: random.Random, expr: str, depth: int) -> tuple[str, str]:
    """``expr`` inside a random nesting, and the path suffix section 11 writes for it."""
    if depth == 0:
        return expr, ""
    inner, path = _buried(rng, expr, depth - 1)
    kind = rng.choice(["array", "struct", "map"])
    if kind == "array":
        return f"array({inner})", "[]" + path
    if kind == "map":
        return f"map('k', {inner})", "{value}" + path
    return f"named_struct('ok', 1, 'bad', {inner})", ".bad" + path


def test_types_the_spec_does_not_cover_are_refused_on_every_spark_engine(spark):
    from pyspark.sql import functions as F

    built = 0
    for seed in range(10):
        rng = random.Random(seed)
        expr, shown = BAD_SPARK[seed % len(BAD_SPARK)]
        inner, suffix = _buried(rng, expr, rng.randint(0, 2))
        try:
            df = spark.sql(f"SELECT 1 AS id, {inner} AS `c.x`")
        except Exception:  # a type this Spark cannot build (TIME before Spark 4.1): nothing to hash
            continue
        built += 1
        path = "c.x" + suffix
        for engine in ("arrow", "jvm"):  # both refuse in Python, before any job, naming column, field and type
            with pytest.raises(HashError) as err:
                hash_spark(df, engine=engine)
            assert repr("c.x") in str(err.value) and shown in str(err.value), str(err.value)
            if suffix:
                assert repr(path) in str(err.value), (path, str(err.value))
        try:
            df.agg(F.count(F.lit(1))).first()
        except Exception:  # Spark 4.2 aggregates no frame holding a TIME at all (UNSUPPORTED_TIME_TYPE, even count)
            continue
        with pytest.raises(Exception) as jvm_err:  # the SQL function itself; Spark's exception classes vary
            rows_v1(df)
        text = str(jvm_err.value)
        assert "c.x" in text and shown.split()[0] in text.lower(), text
        if suffix:
            assert path in text, (path, text)
    assert built >= (8 if spark_major() >= 4 else 6)  # the intervals, void and (Spark 4.0+) variant at least


def test_a_variant_spark_hands_over_as_arrow_is_refused_by_the_twin(spark):
    # The jar and the jar-free path refuse variant (above); Spark's own Arrow export of it must not slip past the twin.
    if spark_major() < 4:
        pytest.skip("variant (parse_json) arrived in Spark 4.0")
    df = spark.sql("""SELECT 1 AS id, parse_json('{"a": 1}') AS v""")
    with pytest.raises(HashError, match=r"'v' of type .*: a Spark variant"):
        hash_frame(to_arrow(df))
