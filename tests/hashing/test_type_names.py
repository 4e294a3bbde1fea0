"""ubunye.hashing.types names every type: a name, its Arrow type and its Spark type say the same thing, and the
one unique-name check speaks for Arrow, Spark and the port alike (no SparkSession: pyspark types are objects)."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

from tests.conftest import VECTORS
from ubunye.exceptions import HashError
from ubunye.hashing import hash_frame
from ubunye.hashing.types import (
    arrow_type,
    format_type,
    parse_columns,
    parse_schema,
    parse_type,
    schema_string,
    spark_schema_string,
    spark_type,
    spark_type_name,
    type_kinds,
    type_name,
)

T = pytest.importorskip("pyspark.sql.types")

NAMES = sorted({t for v in VECTORS for _, t in v.columns})


@pytest.mark.parametrize("name", [*NAMES, 'list<struct<"":bool,"é":timestamp_ntz>>'])
def test_a_name_its_arrow_type_and_its_spark_type_agree(name: str) -> None:
    tree = parse_type(name)
    text = format_type(tree)
    assert type_name(arrow_type(tree), "c") == spark_type_name(spark_type(tree), "c") == text
    assert format_type(parse_type(text)) == text
    assert text == name or "struct" in name  # a vector may give struct fields in any order


def test_struct_fields_given_out_of_order_are_named_in_code_point_order() -> None:
    tree = parse_type('struct<"é":int8,"b":map<date,list<binary>>,"a":decimal(38,0)>')
    want = 'struct<"a":decimal(38,0),"b":map<date,list<binary>>,"é":int8>'
    assert format_type(tree) == type_name(arrow_type(tree), "c") == spark_type_name(spark_type(tree), "c") == want


def test_every_spark_spelling_of_a_type_has_its_rows_v1_name() -> None:
    spellings = {
        "int8": T.ByteType(),
        "int16": T.ShortType(),
        "int32": T.IntegerType(),
        "int64": T.LongType(),
        "float32": T.FloatType(),
        "float64": T.DoubleType(),
        "bool": T.BooleanType(),
        "string": T.VarcharType(3),
        "binary": T.BinaryType(),
        "date": T.DateType(),
        "timestamp": T.TimestampType(),
        "timestamp_ntz": T.TimestampNTZType(),
        "decimal(7,7)": T.DecimalType(7, 7),
    }
    assert {spark_type_name(t, "c") for t in spellings.values()} == set(spellings)
    assert [spark_type_name(t, "c") for t in spellings.values()] == list(spellings)
    assert spark_type_name(T.CharType(2), "c") == spark_type_name(T.StringType(), "c") == "string"


def test_a_spark_schema_is_named_like_the_arrow_table_it_holds() -> None:
    table = pa.table(
        {"z.y": pa.array([1], pa.int16()), "a": pa.array([[{"k": 1.5}]], pa.list_(pa.struct([("k", pa.float32())])))}
    )
    schema = T.StructType(
        [
            T.StructField("z.y", T.ShortType()),
            T.StructField("a", T.ArrayType(T.StructType([T.StructField("k", T.FloatType())]))),
        ]
    )
    assert spark_schema_string(schema) == schema_string(table.schema) == hash_frame(table).schema
    assert [n for n, _ in parse_schema(spark_schema_string(schema))] == ["a", "z.y"]


@pytest.mark.parametrize(
    ("spark_t", "message"),
    [
        (T.ArrayType(T.YearMonthIntervalType()), r"column 'c' \(field 'c\[\]'\) of Spark type interval year to month"),
        (T.MapType(T.StringType(), T.NullType()), r"column 'c' \(field 'c\{value\}'\) of Spark type void"),
        (T.DayTimeIntervalType(), r"column 'c' of Spark type interval day to second"),
    ],
)
def test_a_spark_type_without_a_name_is_refused_naming_column_field_and_type(spark_t, message):
    with pytest.raises(HashError, match=message):
        spark_type_name(spark_t, "c")


def test_arrow_errors_call_a_column_with_a_dot_a_column() -> None:
    with pytest.raises(HashError, match=r"cannot hash column 'a\.b' of type uint8"):
        schema_string(pa.schema([("a.b", pa.uint8())]))
    with pytest.raises(HashError, match=r"cannot hash field 'a\.b' of type uint8"):
        schema_string(pa.schema([("a", pa.struct([("b", pa.uint8())]))]))


def test_one_unique_name_check_for_arrow_spark_and_the_port() -> None:
    top = "the table has two columns named 'x': rows-v1 needs unique names"
    messages = []
    for call in (
        lambda: schema_string(pa.schema([("x", pa.int8()), ("x", pa.string())])),
        lambda: spark_schema_string(T.StructType([T.StructField("x", T.ByteType()), T.StructField("x", T.ByteType())])),
        lambda: parse_columns([("x", "int8"), ("x", "string")]),
    ):
        with pytest.raises(HashError) as info:
            call()
        messages.append(str(info.value))
    assert all(m.startswith(top) for m in messages) and len(set(messages)) == 1
    nested = "column 's' (field 's.t') is a struct with two fields named 'q'"
    arrow = pa.struct([("t", pa.struct([("q", pa.int8()), ("q", pa.int8())]))])
    spark = T.StructType([T.StructField("t", T.StructType([T.StructField("q", T.ByteType())] * 2))])
    for call in (lambda: type_name(arrow, "s"), lambda: spark_type_name(spark, "s")):
        with pytest.raises(HashError, match="^" + re.escape(nested)):
            call()


@pytest.mark.parametrize(
    "bad",
    ["struct<1:int64>", 'struct<"a":int64', "list<int64>>", "decimal(5,6)", "decimal(0,0)", "map<string>", "int"],
)
def test_the_parser_refuses_what_is_not_a_name(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_type(bad)


def test_kinds_are_every_part_of_a_tree() -> None:
    tree = parse_type('map<string,list<struct<"a":decimal(5,2),"b":timestamp_ntz>>>')
    assert type_kinds(tree) == {"map", "string", "list", "struct", "decimal", "timestamp_ntz"}
    assert type_kinds(parse_type("date")) == {"date"}


def test_spark_s_arrow_export_of_a_variant_is_refused_at_any_depth() -> None:
    # What pyspark's toArrow() gives for parse_json(...): two binaries, the marker in the field metadata.
    variant = pa.struct(
        [pa.field("metadata", pa.binary(), metadata={"variant": "true"}), pa.field("value", pa.binary())]
    )
    for t, shown in ((variant, "'v'"), (pa.list_(variant), r"'v\[\]'"), (pa.struct([("x", variant)]), r"'v\.x'")):
        with pytest.raises(HashError, match=rf"{shown} of type .*: a Spark variant"):
            type_name(t, "v")
    # the same struct without the marker is two binaries like any other
    plain = pa.struct([("metadata", pa.binary()), ("value", pa.binary())])
    assert type_name(plain, "v") == 'struct<"metadata":binary,"value":binary>'
