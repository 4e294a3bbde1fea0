"""Partition columns of ``name=value`` folders are typed as Spark types them, on the pandas and polars engines
(ubunye.engines.partition_types). Before, pyarrow and polars each guessed: ``k=0`` was int32 on pandas and int64 on
polars, ``dt=2024-01-01`` a string on pandas and a date on polars, so one folder hashed differently per engine.

The expected types and values are those Spark 4.2 gave reading the same folder names (spark.read.parquet, a
local[1] session, session time zone America/St_Johns), written out here by hand as pyarrow types and Python values.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from tests.optional import HAVE_POLARS, LOCAL_ENGINES, NO_POLARS
from ubunye.cli.hash import hash_target
from ubunye.engines.partition_types import partition_column, unescape_path_name
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame

NULL = "__HIVE_DEFAULT_PARTITION__"

# folder values of one column -> (Spark's type, Spark's values), as Spark 4.2 read them
SPARK_READ = [
    (["0"], pa.int32(), [0]),
    (["007"], pa.int32(), [7]),
    (["-0"], pa.int32(), [0]),
    (["+5"], pa.int32(), [5]),
    (["3000000000"], pa.int64(), [3000000000]),
    (["1", "3000000000"], pa.int64(), [1, 3000000000]),
    (["12345678901234567890"], pa.decimal128(20, 0), [Decimal("12345678901234567890")]),
    (["1" + "0" * 39], pa.float64(), [1e39]),  # over 38 digits: a double
    (["1", "12345678901234567890"], pa.decimal128(20, 0), [Decimal(1), Decimal("12345678901234567890")]),
    (["1.5"], pa.float64(), [1.5]),
    (["1e3"], pa.decimal128(4, 0), [Decimal(1000)]),  # a BigDecimal of scale -3, before double is tried
    (["1E+20"], pa.decimal128(21, 0), [Decimal(10**20)]),
    (["1E-3"], pa.float64(), [0.001]),
    (["1.0"], pa.float64(), [1.0]),
    (["Infinity"], pa.float64(), [math.inf]),
    (["-Infinity"], pa.float64(), [-math.inf]),
    (["1e400"], pa.float64(), [math.inf]),
    (["1.5d"], pa.float64(), [1.5]),  # Java's Double.parseDouble takes the suffix
    (["inf"], pa.string(), ["inf"]),
    (["0x10"], pa.string(), ["0x10"]),
    (["1_000"], pa.string(), ["1_000"]),
    (["true"], pa.string(), ["true"]),
    (["1", "1.5"], pa.float64(), [1.0, 1.5]),
    (["3000000000", "1.5"], pa.string(), ["3000000000", "1.5"]),  # bigint and double: string, nothing rounded
    (["12345678901234567890", "1.5"], pa.string(), ["12345678901234567890", "1.5"]),
    (["2024-01-01"], pa.date32(), [dt.date(2024, 1, 1)]),
    (["2024-1-1"], pa.string(), ["2024-1-1"]),
    (["2024-02-30"], pa.string(), ["2024-02-30"]),
    (["2024-01-01T10%3A00%3A00"], pa.string(), ["2024-01-01T10:00:00"]),
    (["2024-01-01 10%3A00%3A00Z"], pa.string(), ["2024-01-01 10:00:00Z"]),
    (["1", "2024-01-01"], pa.string(), ["1", "2024-01-01"]),
    ([NULL], pa.null(), [None]),  # Spark's void
    ([NULL, "7"], pa.int32(), [None, 7]),
    (["a%2Fb"], pa.string(), ["a/b"]),
    (["%31"], pa.string(), ["1"]),  # numbers are tried on the text as written, strings unescaped
    (["1%2E5"], pa.string(), ["1.5"]),
]


@pytest.mark.parametrize(("raws", "kind", "values"), SPARK_READ, ids=[" ".join(c[0])[:30] for c in SPARK_READ])
def test_partition_column_types_values_as_spark(raws: list[str], kind: pa.DataType, values: list[object]) -> None:
    column = partition_column("k", raws)
    assert column.type == kind
    assert column.to_pylist() == values


def test_nan_is_a_double() -> None:
    column = partition_column("k", ["NaN", "2"])
    assert column.type == pa.float64()
    assert math.isnan(column[0].as_py()) and column[1].as_py() == 2.0


@pytest.mark.parametrize(
    "raws", [["2024-01-01 10%3A00%3A00"], ["2024-01-01 10:00:00.5"], ["2024-01-01", "2024-01-02 10%3A00%3A00"]]
)
def test_a_timestamp_column_is_refused_naming_it(raws: list[str]) -> None:
    # Spark reads it as a local time of its session's time zone (13:30 UTC in America/St_Johns for 10:00)
    with pytest.raises(EngineError, match=r"partition column 'ts' holds '2024-01-0\d 10:00:00.*timestamp"):
        partition_column("ts", raws)


def test_unescape_path_name() -> None:
    assert unescape_path_name("a%2Fb%3d%zz%") == "a/b=%zz%"


# -- the engines ---------------------------------------------------------------------------------------------------

BIG = "98765432109876543210"  # over a bigint: decimal(20,0)

# (folder values per file) for columns a..g, and each column's type and values as Spark reads them
FOLDERS = {
    "a": (["007", "-0", "+5"], pa.int32(), [7, 0, 5]),
    "b": (["1", "3000000000", NULL], pa.int64(), [1, 3000000000, None]),
    "c": (["1", BIG, "1e3"], pa.decimal128(20, 0), [Decimal(1), Decimal(BIG), Decimal(1000)]),
    "d": (["1.5", "Infinity", "7"], pa.float64(), [1.5, math.inf, 7.0]),
    "e": (["2024-01-01", NULL, "2024-12-31"], pa.date32(), [dt.date(2024, 1, 1), None, dt.date(2024, 12, 31)]),
    "f": (["2024-1-1", "a%2Fb", "007"], pa.string(), ["2024-1-1", "a/b", "007"]),
    "g": (["3000000000", "1.5", "-0"], pa.string(), ["3000000000", "1.5", "-0"]),
}  # fmt: skip


def _folder(tmp_path: Path, fmt: str) -> tuple[Path, pa.Table]:
    """A folder of three files in name=value folders (a=.../b=.../...), one row each, and the table Spark reads."""
    root = tmp_path / fmt
    for i in range(3):
        where = root.joinpath(*(f"{name}={raws[i]}" for name, (raws, _, _) in FOLDERS.items()))
        where.mkdir(parents=True)
        row = pa.table({"v": pa.array([i], pa.int64())})
        if fmt == "parquet":
            pq.write_table(row, where / "part-0.parquet")
        elif fmt == "csv":
            pcsv.write_csv(row, where / "part-0.csv")
        else:
            (where / "part-0.json").write_text(f'{{"v": {i}}}\n')
    columns = {"v": pa.array([0, 1, 2], pa.int64())}
    columns.update({name: pa.array(values, kind) for name, (_, kind, values) in FOLDERS.items()})
    return root, pa.table(columns)


@pytest.mark.parametrize("engine", ["pandas", "polars"])
def test_parquet_partitions_hash_as_spark_reads_them(tmp_path: Path, engine: str) -> None:
    root, spark = _folder(tmp_path, "parquet")
    expected = hash_frame(spark)
    read = hash_target(str(root), engine=engine)
    assert read["schema"] == expected.schema
    assert read["data_hash"] == expected.data_hash


def test_pandas_and_polars_hash_one_partitioned_folder_alike(tmp_path: Path) -> None:
    root = tmp_path / "t"
    for dt_, k, f, v in [("2024-01-01", "0", "1.5", 1), ("2024-01-02", "3000000000", "2", 2)]:
        where = root / f"dt={dt_}" / f"k={k}" / f"f={f}"
        where.mkdir(parents=True)
        pq.write_table(pa.table({"v": pa.array([v], pa.int64())}), where / "part-0.parquet")
    pandas = hash_target(str(root), engine="pandas")
    if HAVE_POLARS:  # Python 3.10 has no polars: pandas alone, against Spark's reading below
        polars = hash_target(str(root), engine="polars")
        assert (pandas["schema"], pandas["data_hash"]) == (polars["schema"], polars["data_hash"])
    spark = pa.table({
        "v": pa.array([1, 2], pa.int64()),
        "dt": pa.array([dt.date(2024, 1, 1), dt.date(2024, 1, 2)], pa.date32()),
        "k": pa.array([0, 3000000000], pa.int64()),
        "f": pa.array([1.5, 2.0], pa.float64()),
    })  # fmt: skip
    assert pandas["data_hash"] == hash_frame(spark).data_hash


def test_int_partitions_are_spark_ints_on_both_engines(tmp_path: Path) -> None:
    root = tmp_path / "t"
    for k in ("0", "1"):
        (root / f"k={k}").mkdir(parents=True)
        pq.write_table(pa.table({"v": pa.array([int(k)], pa.int64())}), root / f"k={k}" / "part-0.parquet")
    spark = hash_frame(pa.table({"v": pa.array([0, 1], pa.int64()), "k": pa.array([0, 1], pa.int32())}))
    for engine in LOCAL_ENGINES:
        assert hash_target(str(root), engine=engine)["data_hash"] == spark.data_hash, engine


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_pandas_text_partitions_hash_as_spark_reads_them(tmp_path: Path, fmt: str) -> None:
    root, spark = _folder(tmp_path, fmt)
    read = hash_target(str(root), engine="pandas")
    assert read["schema"] == hash_frame(spark).schema
    assert read["data_hash"] == hash_frame(spark).data_hash


@pytest.mark.parametrize("engine", ["pandas", "polars"])
def test_a_timestamp_partition_is_refused_naming_input_and_column(tmp_path: Path, engine: str) -> None:
    where = tmp_path / "t" / "ts=2024-01-01 10%3A00%3A00"
    where.mkdir(parents=True)
    pq.write_table(pa.table({"v": [1]}), where / "part-0.parquet")
    with pytest.raises(EngineError, match=r"partition column 'ts' holds '2024-01-01 10:00:00', which Spark reads"):
        hash_target(str(tmp_path / "t"), engine=engine)


@pytest.mark.parametrize(("engine", "fmt"), [("pandas", "parquet"), ("pandas", "csv"), ("polars", "parquet")])
def test_an_empty_partition_value_is_refused_as_spark_refuses_it(tmp_path: Path, engine: str, fmt: str) -> None:
    # Spark: "Empty partition column value in 'k='"; the pandas and polars engines read it as the text "".
    for value in ("", "a"):
        where = tmp_path / "t" / f"k={value}"
        where.mkdir(parents=True)
        if fmt == "csv":
            pcsv.write_csv(pa.table({"v": [1]}), where / "part-0.csv")
        else:
            pq.write_table(pa.table({"v": [1]}), where / "part-0.parquet")
    with pytest.raises(EngineError, match=r"partition column 'k' has an empty value \(a folder named 'k='\)"):
        hash_target(str(tmp_path / "t"), engine=engine, fmt=fmt)


@pytest.mark.parametrize("engine", ["pandas", "polars"])
@pytest.mark.parametrize("held", ["k", "K"])
def test_a_partition_folder_naming_a_column_of_the_files_is_refused(tmp_path: Path, engine: str, held: str) -> None:
    # Spark reads the folder's value in the files' column's place (names ignore case); pyarrow kept both ('K' and
    # 'k') or failed to merge them, polars replaced an exact name only: each engine read another table.
    where = tmp_path / "t" / "k=1"
    where.mkdir(parents=True)
    pq.write_table(pa.table({held: ["a"], "x": [1]}), where / "part-0.parquet")
    said = f"the partition folder 'k=1' names column 'k', which the files hold too \\(as '{held}'"
    with pytest.raises(EngineError, match=said):
        hash_target(str(tmp_path / "t"), engine=engine)


# -- years and zeros Spark reads otherwise than Python -------------------------------------------------------------
# Measured with Spark's own PartitioningUtils.parsePartitions (folders /base/k=<value>, session zone UTC) on Spark
# 3.5.9, 4.0.5, 4.2.0 and 4.3.0, which all gave these; a date's value is Spark's day count (days since 1970-01-01).
# Before, any sign or fifth year digit raised ("a year Python's dates do not hold"), refusing a column Spark reads
# as strings, and a zero with an exponent was decimal(1,0).
SPARK_EDGES = [
    (["-2024-01-01", "x"], pa.string(), ["-2024-01-01", "x"]),
    (["+2024-01-01", "x"], pa.string(), ["+2024-01-01", "x"]),
    (["12024-01-01", "region-a"], pa.string(), ["12024-01-01", "region-a"]),
    (["+2024-01-01"], pa.string(), ["+2024-01-01"]),  # java.time's strict "uuuu": "+" only beyond four digits
    (["12024-01-01"], pa.string(), ["12024-01-01"]),  # and beyond four digits only with "+"
    (["-0000-01-01"], pa.string(), ["-0000-01-01"]),  # "-0" is refused
    (["-0001-02-29"], pa.string(), ["-0001-02-29"]),  # year -1 (2 BC) is no leap year
    (["+00000000-01-01"], pa.string(), ["+00000000-01-01"]),  # eight year digits: the cast to date refuses it
    (["+5881580-07-12"], pa.string(), ["+5881580-07-12"]),  # a day beyond 32 bits
    (["-2024-01-01"], pa.date32(), [-1458779]),
    (["-12024-01-01"], pa.date32(), [-5111204]),
    (["+12024-01-01"], pa.date32(), [3672148]),
    (["+02024-01-01"], pa.date32(), [19723]),
    (["0000-02-29"], pa.date32(), [-719469]),
    (["-2024-02-29", "2024-01-01"], pa.date32(), [-1458720, 19723]),
    (["+5881580-07-11", "-5877641-06-23"], pa.date32(), [2**31 - 1, -(2**31)]),
    (["0e5"], pa.decimal128(6, 0), [Decimal(0)]),  # BigDecimal 0 of scale -5: Decimal.set gives precision 1+5
    (["0E10"], pa.decimal128(11, 0), [Decimal(0)]),
    (["00e2"], pa.decimal128(3, 0), [Decimal(0)]),
    (["0.0e5"], pa.decimal128(5, 0), [Decimal(0)]),
    (["1e3", "0e5"], pa.decimal128(6, 0), [Decimal(1000), Decimal(0)]),
    (["2024-01-01 10%3A00%3A00.12"], pa.string(), ["2024-01-01 10:00:00.12"]),  # "[.S]": one fraction digit
    (["+2024-01-01 10%3A00%3A00"], pa.string(), ["+2024-01-01 10:00:00"]),
    (["+1234567-01-01 10%3A00%3A00"], pa.string(), ["+1234567-01-01 10:00:00"]),  # beyond a timestamp's range
]


@pytest.mark.parametrize(("raws", "kind", "values"), SPARK_EDGES, ids=[" ".join(c[0])[:30] for c in SPARK_EDGES])
def test_signed_years_and_zero_exponents_type_as_spark(
    raws: list[str], kind: pa.DataType, values: list[object]
) -> None:
    column = partition_column("k", raws)
    assert column.type == kind
    assert column.equals(pa.array(values, kind))


def test_spark_day_counts_are_the_proleptic_calendar_days() -> None:
    # the day counts above, found again by numpy's proleptic Gregorian datetime64 (astronomical years)
    import numpy as np

    for text in ("-2024-01-01", "-12024-01-01", "+12024-01-01", "0000-02-29", "-2024-02-29", "+5881580-07-11"):
        column = partition_column("k", [text])
        assert column.cast(pa.int32()).to_pylist() == [int(np.datetime64(text.lstrip("+"), "D").astype(np.int64))]


@pytest.mark.parametrize("raws", [["-2024-01-01 10%3A00%3A00"], ["+12024-01-01 10%3A00%3A00", "2024-01-01"]])
def test_a_timestamp_of_a_signed_year_is_refused_as_a_timestamp(raws: list[str]) -> None:
    with pytest.raises(EngineError, match=r"partition column 'ts' holds '[+-]\d+-01-01 10:00:00', which Spark reads"):
        partition_column("ts", raws)


@pytest.mark.parametrize("engine", ["pandas", "polars"])
def test_signed_year_folders_hash_as_spark_reads_them(tmp_path: Path, engine: str) -> None:
    pytest.importorskip(engine, reason=NO_POLARS)  # pandas is the package's own; polars an extra
    # s: a date and a string, so strings (was refused); d: dates of years Python's dates do not hold; z: 0e5
    folders = [("-2024-01-01", "-2024-01-01", "0e5"), ("x", "+12024-01-01", "1e3")]
    root = tmp_path / "t"
    for i, (s, d, z) in enumerate(folders):
        where = root / f"s={s}" / f"d={d}" / f"z={z}"
        where.mkdir(parents=True)
        pq.write_table(pa.table({"v": pa.array([i], pa.int64())}), where / "part-0.parquet")
    spark = pa.table({
        "v": pa.array([0, 1], pa.int64()),
        "s": pa.array(["-2024-01-01", "x"], pa.string()),
        "d": pa.array([-1458779, 3672148], pa.date32()),  # Spark's day counts (SPARK_EDGES)
        "z": pa.array([Decimal(0), Decimal(1000)], pa.decimal128(6, 0)),
    })  # fmt: skip
    read = hash_target(str(root), engine=engine)
    assert read["schema"] == hash_frame(spark).schema
    assert read["data_hash"] == hash_frame(spark).data_hash


# -- digits other than 0-9 -----------------------------------------------------------------------------------------
# Measured with spark.read.parquet (session zone UTC) on Spark 3.5.9, 4.0.5 and 4.2, which all gave these (and
# tests/spark/test_partition_types_spark.py checks them on the Spark it runs on). Java's Integer.parseInt, Long and
# BigDecimal take any Unicode decimal digit of the Basic Multilingual Plane ("\u0663" is 3); java.time's date and
# time parsers and Double.parseDouble take 0-9 only, and a digit beyond that plane is no digit to any of them.
# Before, "\u0662\u0660\u0662\u0664-01-01" was a date, its timestamp refused, and "\U0001d7cf" an int.
SPARK_DIGITS = [
    (["\u0662\u0660\u0662\u0664-01-01"], pa.string(), ["\u0662\u0660\u0662\u0664-01-01"]),
    (["2024-\u0660\u0661-01"], pa.string(), ["2024-\u0660\u0661-01"]),
    (["\u0662\u0660\u0662\u0664-01-01 10%3A00%3A00"], pa.string(), ["\u0662\u0660\u0662\u0664-01-01 10:00:00"]),
    (["2024-01-01 \u0661\u0660%3A00%3A00"], pa.string(), ["2024-01-01 \u0661\u0660:00:00"]),
    (["\u0663"], pa.int32(), [3]),
    (["\uff11\uff12"], pa.int32(), [12]),  # fullwidth digits
    (["-\u0663", "3000000000"], pa.int64(), [-3, 3000000000]),
    (["\u0661e3"], pa.decimal128(4, 0), [Decimal(1000)]),
    (["1e\u0663"], pa.decimal128(4, 0), [Decimal(1000)]),
    (["\u0661.5"], pa.string(), ["\u0661.5"]),  # a BigDecimal of scale 1, and no double
    (["\U0001d7cf"], pa.string(), ["\U0001d7cf"]),  # MATHEMATICAL BOLD DIGIT ONE: two chars to Java
    (["-\U0001d7cf\U0001d7cf"], pa.string(), ["-\U0001d7cf\U0001d7cf"]),
    (["1e\U0001d7cf"], pa.string(), ["1e\U0001d7cf"]),
]


@pytest.mark.parametrize(("raws", "kind", "values"), SPARK_DIGITS, ids=[ascii(c[0])[:30] for c in SPARK_DIGITS])
def test_digits_other_than_ascii_type_as_spark(raws: list[str], kind: pa.DataType, values: list[object]) -> None:
    column = partition_column("k", raws)
    assert column.type == kind
    assert column.to_pylist() == values


def test_an_int_of_other_digits_beside_doubles_is_refused_as_spark_fails() -> None:
    # int and double make a double column; Spark then fails on Double.parseDouble("\u0661") (INVALID_PARTITION_VALUE).
    # Before, the value was read as null.
    with pytest.raises(EngineError, match=r"partition column 'k' holds '\u0661' beside doubles, which Spark fails"):
        partition_column("k", ["\u0661", "1.5"])


# Spark 3.5's unescapePathName decodes "%" and two chars Integer.parseInt(_, 16) takes ("%+1" is U+0001, "%\u0663\u0663"
# is "3"), Spark 4.0 and later two ASCII hex digits only (measured on 3.5.9, 4.0.5 and 4.2): no reading is every
# line's, so the pandas and polars engines refuse them. Before, they read Spark 4's.
LINE_ESCAPES = [["a%+1"], ["%\u0663\u0663"], ["x%-0"], ["%\uff21\uff41"]]


@pytest.mark.parametrize("raws", LINE_ESCAPES, ids=ascii)
def test_an_escape_spark_lines_read_otherwise_is_refused(raws: list[str]) -> None:
    with pytest.raises(EngineError, match=r"partition column 'k' holds .*, whose %-escapes Spark 3.5 reads as"):
        partition_column("k", raws)


# -- folder layouts ------------------------------------------------------------------------------------------------
# Spark refuses to read these (3.5.9, 4.0.5, 4.2: EMPTY_PARTITION_COLUMN_NAME, COLUMN_ALREADY_EXISTS, names compared
# in lower case); before, polars hashed them all and pandas all but the repeated name (a pyarrow error).
SPARK_REFUSED_LAYOUTS = {
    "=1": r"the partition folder '=1' names no column \(nothing before '='\), which Spark refuses",
    "K=1/k=2": r"the partition folders 'K=1' and 'k=2' name one column \('K' and 'k', as Spark's names ignore case",
    "k=1/k=2": r"the partition folders 'k=1' and 'k=2' name one column \('k'\), which Spark refuses to read",
    "%4B=1/k=2": r"the partition folders '%4B=1' and 'k=2' name one column \('K' and 'k'",
}
#: A column name Spark 3.5 and 4 unescape otherwise: refused as its values are.
LINE_LAYOUTS = {"%+1=1": r"the partition folder '%\+1=1' names column '%\+1', whose %-escapes Spark 3.5 reads"}
#: Names alike in Python's casefold but not in Spark's lower case: two columns, as Spark reads them.
READ_LAYOUTS = ["\u00df=1/ss=2", "I=1/\u0131=2", "\u0130=1/i=2"]


def _layout(tmp_path: Path, folders: str) -> Path:
    root = tmp_path / "t"
    (root / folders).mkdir(parents=True)
    pq.write_table(pa.table({"v": pa.array([7], pa.int64())}), root / folders / "part-0.parquet")
    return root


@pytest.mark.parametrize("engine", ["pandas", "polars"])
@pytest.mark.parametrize(
    ("folders", "said"),
    [pytest.param(*c, id=ascii(c[0])) for c in [*SPARK_REFUSED_LAYOUTS.items(), *LINE_LAYOUTS.items()]],
)
def test_a_layout_spark_refuses_is_refused_naming_the_folders(
    tmp_path: Path, engine: str, folders: str, said: str
) -> None:
    pytest.importorskip(engine, reason=NO_POLARS)  # pandas is the package's own; polars an extra
    with pytest.raises(EngineError, match=r"input '.*/t': " + said):
        hash_target(str(_layout(tmp_path, folders)), engine=engine)


@pytest.mark.parametrize("engine", ["pandas", "polars"])
@pytest.mark.parametrize("folders", READ_LAYOUTS, ids=ascii)
def test_names_spark_tells_apart_are_two_columns(tmp_path: Path, engine: str, folders: str) -> None:
    pytest.importorskip(engine, reason=NO_POLARS)  # pandas is the package's own; polars an extra
    columns = {"v": pa.array([7], pa.int64())}
    columns.update({part.split("=")[0]: pa.array([int(part.split("=")[1])], pa.int32()) for part in folders.split("/")})
    read = hash_target(str(_layout(tmp_path, folders)), engine=engine)
    assert (read["schema"], read["data_hash"]) == (
        hash_frame(pa.table(columns)).schema,
        hash_frame(pa.table(columns)).data_hash,
    )
