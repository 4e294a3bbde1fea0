"""Four cases where engines could disagree: strings that are not UTF-8, pandas object columns of Decimal, polars
dictionaries of string views and polars Int128. Each on one table hashed by the JVM (``ubunye_rows_v1(*)``), the
jar-free path (``hash_spark(df, engine="arrow")``) and the twin (``hash_frame`` on the same rows as Arrow), plus
pandas and polars where the case comes from them (docs/rows-v1.md sections 4.1, 7 and 11)."""

from __future__ import annotations

import decimal
import random
from typing import Any

import pyarrow as pa
import pytest

from tests.conftest import VECTOR_DIR
from tests.spark.conftest import jvm_lines, rows_v1, spark_major, to_arrow, vector_frame
from tests.vectors.derive import jstr, text_of_bytes
from ubunye.exceptions import HashError
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.spark import hash_spark, spark_canonical_lines
from ubunye.testing.vectors import load_vectors

BYTE_VECTORS = load_vectors(VECTOR_DIR / "bytes")


def _three_engines(df: Any) -> str:
    """The one data hash the JVM, the jar-free path and the twin must all give for ``df``."""
    jvm = rows_v1(df)["data_hash"]
    assert hash_spark(df, engine="arrow").data_hash == jvm
    assert hash_frame(to_arrow(df)).data_hash == jvm
    return jvm


def _three_lines(df: Any) -> list[str]:
    """The one multiset of lines (sorted) the JVM, the jar-free path and the twin must all print."""
    lines = jvm_lines(df)
    assert sorted(spark_canonical_lines(df, engine="arrow")) == lines
    assert sorted(canonical_lines(to_arrow(df))) == lines
    return lines


# ---- 1. invalid UTF-8 (section 4.1) ---------------------------------------------------------------------------
# A bad byte amid ASCII, a cut 2-byte sequence, a lone continuation byte, a cut 3-byte sequence, a surrogate. Then
# U+10000 (valid), overlong forms, beyond U+10FFFF, surrogates, cut sequences.
BAD_UTF8 = ["61FF62", "C3", "80", "E282", "EDA080"]
MORE_BYTES = ["F0908080", "F0808080", "F4908080", "C080", "E08080", "EDBFBF", "EDA080EDB080", "EDA0", "EDA041"]


def _string_of(hex_bytes: str) -> str:
    return f"SELECT CAST(X'{hex_bytes}' AS STRING) AS s"


def test_bad_utf8_one_line_one_hash_on_every_engine(spark):
    hashes = {}
    for h in BAD_UTF8 + MORE_BYTES:
        df = spark.sql(_string_of(h))
        want = '{"s":' + jstr(text_of_bytes(bytes.fromhex(h))) + "}"  # the derivation, not the twin
        assert _three_lines(df) == [want], h
        assert df.selectExpr("to_json(struct(s))").first()[0] == want, h  # what Spark itself prints
        hashes[h] = _three_engines(df)
    # C3, 80, E282 and EDA080 print one line ({"s":"\ufffd"}): one hash, on every engine.
    assert len({hashes[h] for h in ["C3", "80", "E282", "EDA080"]}) == 1


def test_random_byte_strings_agree_across_engines_and_with_to_json(spark):
    rng = random.Random(1515)
    pool = [0x41, 0x22, 0x5C, 0x0A, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xFF]
    rows = [(i, bytes(rng.choice(pool) for _ in range(rng.randint(0, 10)))) for i in range(3000)]
    df = (
        spark.createDataFrame(rows, "id int, b binary")
        .repartition(7)
        .selectExpr("id", "cast(b as string) as s", "map(cast(b as string), id) as m")
    )
    lines = _three_lines(df)
    text = {i: jstr(text_of_bytes(b)) for i, b in rows}
    assert lines == sorted(f'{{"id":{i},"m":{{{t}:{i}}},"s":{t}}}' for i, t in text.items())
    spark_json = sorted(r[0] for r in df.selectExpr("to_json(struct(id, s))").collect())
    assert spark_json == sorted(f'{{"id":{i},"s":{t}}}' for i, t in text.items())
    _three_engines(df)


def test_map_keys_list_elements_and_struct_fields(spark):
    df = spark.sql(
        "SELECT map(CAST(X'FF' AS STRING), 1) AS m, "
        "map(CAST(X'EDA080' AS STRING), 3, 'a', 0, CAST(X'C3' AS STRING), 2) AS collide, "
        "array(CAST(X'61FF' AS STRING), NULL) AS l, named_struct('t', CAST(X'E282' AS STRING)) AS st"
    )
    r = "\ufffd"
    collide = f'"collide":{{"a":0,"{r}":2,"{r}":3}}'  # equal member names after replacement: ordered by value
    assert _three_lines(df) == [f'{{{collide},"l":["a{r}",null],"m":{{"{r}":1}},"st":{{"t":"{r}"}}}}']
    _three_engines(df)
    replaced = spark.sql(f"SELECT map('{r}', 1) AS m, array('a{r}', NULL) AS l, named_struct('t', '{r}') AS st")
    assert _three_engines(df.drop("collide")) == rows_v1(replaced)["data_hash"]


@pytest.mark.parametrize("vector", BYTE_VECTORS, ids=lambda v: v.name)
def test_byte_vectors_on_every_engine(spark, vector):
    df = vector_frame(spark, vector)
    assert _three_lines(df) == sorted(vector.expected["lines"])
    assert _three_engines(df) == vector.expected["data_hash"]
    assert hash_frame(vector.arrow()).data_hash == vector.expected["data_hash"]


# ---- 2. pandas object columns of Decimal (section 7) ----------------------------------------------------------
THIRTY_EIGHT = "0.12345678901234567890123456789012345678"


def test_small_precision_decimals_and_pandas_objects(spark):
    import pandas as pd

    df = spark.sql(
        "SELECT * FROM VALUES "
        f"(CAST(0.5 AS DECIMAL(1,1)), CAST(0 AS DECIMAL(18,18)), CAST('{THIRTY_EIGHT}' AS DECIMAL(38,38))), "
        "(CAST(-0.9 AS DECIMAL(1,1)), CAST(1E-18 AS DECIMAL(18,18)), CAST(NULL AS DECIMAL(38,38))) AS t(a, b, c)"
    )
    jvm = _three_engines(df)
    assert _three_lines(df) == sorted(
        ['{"a":0.5,"b":0E-18,"c":' + THIRTY_EIGHT + "}", '{"a":-0.9,"b":1E-18}'],
    )
    D = decimal.Decimal
    by_hand = pd.DataFrame(
        {
            "a": pd.Series([D("0.5"), D("-0.9")], dtype=object),
            "b": pd.Series([D("0E-18"), D("1E-18")], dtype=object),
            "c": pd.Series([D(THIRTY_EIGHT), None], dtype=object),
        }
    )
    assert hash_frame(by_hand).data_hash == jvm
    assert hash_frame(df.toPandas()).data_hash == jvm  # Spark hands pandas Decimals at the column's scale


# ---- 3. dictionaries of string_view: polars Categorical and Enum (section 7) ----------------------------------
def test_polars_categorical_and_enum_hash_as_the_spark_strings(spark):
    pl = pytest.importorskip("polars")
    words = ["b", "a", None, "b", 'q"é😀']
    df = spark.createDataFrame([(w, w, w) for w in words], "cat string, enum string, plain string")
    jvm = _three_engines(df)
    frame = pl.DataFrame(
        {
            "cat": pl.Series(words, dtype=pl.Categorical),
            "enum": pl.Series(words, dtype=pl.Enum(["a", "b", 'q"é😀'])),
            "plain": pl.Series(words, dtype=pl.String),
        }
    )
    assert hash_frame(frame).data_hash == jvm
    assert sorted(canonical_lines(frame)) == jvm_lines(df)


def test_dictionary_map_keys_hash_as_the_spark_string_keys(spark):
    """Map keys JSON escapes, dictionary-encoded on the Arrow side (as pandas ArrowDtype and polars hand them over):
    escaped once as member names (section 6), as Spark's plain string keys are. The line is built by hand."""
    keys = ['a"b', "c\\d"]
    df = spark.createDataFrame([({keys[0]: 1, keys[1]: 2},)], "m map<string,bigint>")
    jvm = _three_engines(df)
    assert jvm_lines(df) == ['{"m":{"a\\"b":1,"c\\\\d":2}}']
    dictionary = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array(keys))
    table = pa.table({"m": pa.MapArray.from_arrays(pa.array([0, 2], pa.int32()), dictionary, pa.array([1, 2]))})
    assert hash_frame(table).data_hash == jvm


# ---- 4. polars Int128 (section 11) ----------------------------------------------------------------------------
def test_polars_int128_is_refused_and_its_suggested_cast_hashes_like_spark(spark):
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"big": pl.Series([1, -(2**62), None], dtype=pl.Int128)})
    with pytest.raises(HashError, match=r"column 'big' of type Int128 \(Arrow format '_pli128'\).*section 11"):
        hash_frame(frame)
    df = spark.sql(f"SELECT CAST(x AS DECIMAL(38,0)) AS big FROM VALUES (1L), ({-(2**62)}L), (NULL) AS t(x)")
    assert hash_frame(frame.with_columns(pl.col("big").cast(pl.Decimal(38, 0)))).data_hash == _three_engines(df)


# ---- 5. types Spark declares and other readers take for another (section 11) -------------------------------------
def test_spark_variant_and_interval_columns_stored_by_spark_are_refused_on_every_engine(spark, tmp_path):
    """A variant written by Spark is a struct of two binaries to pyarrow, pandas and polars, an interval an
    integer: the pandas and polars engines hashed those (with `ubunye hash` printing a hash) where Spark refuses
    the same table. Spark's schema in the parquet footer, and the Delta log, say what the column is."""
    from ubunye.config import IOConfig
    from ubunye.engines.pandas_engine import PandasEngine
    from ubunye.exceptions import EngineError

    pytest.importorskip("polars")
    from ubunye.engines.polars_engine import PolarsEngine

    spark.sql("SELECT 1 AS id, INTERVAL '2' DAY AS i").write.parquet(str(tmp_path / "ipq"))
    spark.sql("SELECT 1 AS id, named_struct('x', INTERVAL '2' DAY) AS s").write.parquet(str(tmp_path / "spq"))
    cases = [("ipq", "parquet", "column 'i' is a Spark interval day"),
             ("spq", "parquet", r"column 's' holds a Spark interval day \(at s\.x\)")]  # fmt: skip
    if spark_major() >= 4:  # variant (parse_json) arrived in Spark 4.0: Spark 3.5 cannot write one
        spark.sql("""SELECT 1 AS id, parse_json('{"a":1}') AS v""").write.format("delta").save(str(tmp_path / "vdl"))
        spark.sql("""SELECT 1 AS id, parse_json('{"a":1}') AS v""").write.parquet(str(tmp_path / "vpq"))
        variant = "column 'v' is a Spark variant"
        cases += [("vdl", "delta", variant), ("vpq", "parquet", variant)]
    for folder, fmt, said in cases:
        with pytest.raises(HashError, match=r"cannot hash column '[vis]'"):
            hash_spark(spark.read.format(fmt).load(str(tmp_path / folder)))
        io = IOConfig("src", format=fmt, path=folder)
        for engine in (PandasEngine(), PolarsEngine()):
            with pytest.raises(EngineError, match=said):
                engine.read(io, tmp_path)
