"""The polars engine against the pandas engine on the same files: parquet INT96 timestamps (instants, as Spark reads
them), parquet folders an append left with types rows-v1 hashes alike, Delta partition values the log holds but
folder names do not, and polars Object columns refused before a write."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.optional import NO_POLARS, needs_polars
from ubunye.cli.hash import hash_target
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.exceptions import EngineError

pytestmark = needs_polars

pl = pytest.importorskip("polars", reason=NO_POLARS)

STAMPS = [
    dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    dt.datetime(2024, 1, 1, 12, 0, 0, 1),
    dt.datetime(1, 1, 1),
    None,
]


def _hashes(path: Path, fmt: str) -> dict[str, dict[str, object]]:
    """``ubunye hash`` of ``path`` on the polars and the pandas engine (schema, hash, every line)."""
    return {e: hash_target(str(path), fmt, e, show_lines=20) for e in ("polars", "pandas")}


def _same(path: Path, fmt: str) -> dict[str, object]:
    got = _hashes(path, fmt)
    assert got["polars"]["data_hash"] == got["pandas"]["data_hash"], got
    assert got["polars"]["schema"] == got["pandas"]["schema"]
    return got["polars"]


# -- 1, 2: INT96 is an instant (timestamp, UTC, microseconds) with or without an Arrow schema in the footer ------


@pytest.mark.parametrize("store_schema", [True, False], ids=["arrow-schema", "as-spark-writes"])
@pytest.mark.parametrize("unit", ["us", "ns"])
def test_int96_reads_as_an_instant_like_pandas_and_plain_utc_micros(
    tmp_path: Path, store_schema: bool, unit: str
) -> None:
    stamps = STAMPS if unit == "us" else [s for s in STAMPS if s is None or 1677 < s.year < 2262]
    table = pa.table({"t": pa.array(stamps, pa.timestamp("us")).cast(pa.timestamp(unit))})
    pq.write_table(table, tmp_path / "int96.parquet", use_deprecated_int96_timestamps=True, store_schema=store_schema)
    assert pq.ParquetFile(tmp_path / "int96.parquet").schema.column(0).physical_type == "INT96"
    # the same instants as an INT64 timestamp with a zone: what Spark reads an INT96 column as
    pq.write_table(pa.table({"t": table["t"].cast(pa.timestamp("us", "UTC"))}), tmp_path / "utc.parquet")

    frame = get_engine("polars").read(IOConfig("i", format="parquet", path="int96.parquet"), tmp_path)
    assert frame.schema["t"] == pl.Datetime("us", "UTC")
    assert frame["t"].dt.replace_time_zone(None).to_list() == stamps
    got = _same(tmp_path / "int96.parquet", "parquet")
    want = hash_target(str(tmp_path / "utc.parquet"), "parquet", "polars")
    assert (got["schema"], got["data_hash"]) == (want["schema"], want["data_hash"])
    assert got["schema"] == 'struct<"t":timestamp>'


def test_int96_nested_and_beside_a_map_is_an_instant(tmp_path: Path) -> None:
    stamps = pa.array(STAMPS, pa.timestamp("us"))
    table = pa.table({
        "s": pa.StructArray.from_arrays([stamps], ["u"]),
        "l": pa.array([[x] for x in STAMPS], pa.list_(pa.timestamp("us"))),
    })  # fmt: skip
    pq.write_table(table, tmp_path / "n.parquet", use_deprecated_int96_timestamps=True, store_schema=False)
    got = _same(tmp_path / "n.parquet", "parquet")
    assert got["schema"] == 'struct<"l":list<timestamp>,"s":struct<"u":timestamp>>'
    with_map = table.append_column("m", pa.array([[("k", 1)]] * len(STAMPS), pa.map_(pa.string(), pa.int64())))
    pq.write_table(with_map, tmp_path / "m.parquet", use_deprecated_int96_timestamps=True, store_schema=False)
    assert _same(tmp_path / "m.parquet", "parquet")["schema"].startswith('struct<"l":list<timestamp>,"m":map<')


# -- 3: a non-zero sub-microsecond part of an INT96 timestamp is refused, naming the column ---------------------


@pytest.mark.parametrize("nested", [False, True])
def test_int96_nanoseconds_are_refused_not_truncated(tmp_path: Path, nested: bool) -> None:
    stamps = pa.array([1_700_000_000_123_456_001, None], pa.timestamp("ns"))
    column = pa.StructArray.from_arrays([stamps], ["u"]) if nested else stamps
    pq.write_table(pa.table({"t": column}), tmp_path / "p.parquet", use_deprecated_int96_timestamps=True,
                   store_schema=False)  # fmt: skip
    with pytest.raises(EngineError, match=r"column 't' .*sub-microsecond"):
        get_engine("polars").read(IOConfig("i", format="parquet", path="p.parquet"), tmp_path)


def test_int96_whole_microseconds_past_2262_are_not_refused(tmp_path: Path) -> None:
    # INT96 read in nanoseconds wraps past 2262: the check must not take the wrap for nanoseconds
    pq.write_table(pa.table({"t": pa.array(STAMPS, pa.timestamp("us"))}), tmp_path / "p.parquet",
                   use_deprecated_int96_timestamps=True, store_schema=False)  # fmt: skip
    frame = get_engine("polars").read(IOConfig("i", format="parquet", path="p.parquet"), tmp_path)
    assert frame["t"].dt.replace_time_zone(None).to_list() == STAMPS


# -- 4: an appended parquet folder whose files differ in types rows-v1 hashes alike ------------------------------

T = dt.datetime(2026, 12, 1, 12, 0, 0, 250000)
APPENDS = {
    "zones": (pl.Series("c", [T]).dt.replace_time_zone("UTC"), pl.Series("c", [T]).dt.replace_time_zone("Asia/Tokyo")),
    "units-ns-ms": (pl.Series("c", [T], pl.Datetime("ns")), pl.Series("c", [T], pl.Datetime("ms"))),
    "units-us-ns": (pl.Series("c", [T], pl.Datetime("us")), pl.Series("c", [T], pl.Datetime("ns"))),
    "categorical": (pl.Series("c", ["a"], pl.Categorical), pl.Series("c", ["b"])),
    "string-first": (pl.Series("c", ["b"]), pl.Series("c", ["a"], pl.Categorical)),
    "enums": (pl.Series("c", ["a"], pl.Enum(["a"])), pl.Series("c", ["b"], pl.Enum(["b", "a"]))),
    "array-list": (pl.Series("c", [[1, 2]], pl.Array(pl.Int64, 2)), pl.Series("c", [[3, 4]])),
    "nested": (
        pl.Series("c", [{"x": [T]}], pl.Struct({"x": pl.List(pl.Datetime("ns", "UTC"))})),
        pl.Series("c", [{"x": [T]}], pl.Struct({"x": pl.Array(pl.Datetime("us", "Asia/Tokyo"), 1)})),
    ),
}


@pytest.mark.parametrize("case", sorted(APPENDS))
@pytest.mark.parametrize("partitioned", [False, True])
def test_appended_parquet_of_other_types_reads_like_pandas(tmp_path: Path, case: str, partitioned: bool) -> None:
    # an append to one folder, or (partitioned) a folder k=0, k=1 of each day, as Spark lays partitions out
    engine = get_engine("polars")
    for day, series in enumerate(APPENDS[case]):
        path = f"out/k=day{day}" if partitioned else "out"  # text: the engines infer other integer widths
        engine.write(pl.DataFrame([series, pl.Series("v", [day])]), IOConfig("o", format="parquet", path=path,
                     mode="append"), tmp_path)  # fmt: skip
    got = _same(tmp_path / "out", "parquet")
    assert got["row_count"] == 2
    read = engine.read(IOConfig("i", format="parquet", path="out"), tmp_path)
    assert read.height == 2 and read.columns[0] == "c"


# -- 5: a polars Object column is refused before anything is written ---------------------------------------------


class _Point:
    def __init__(self, x: int) -> None:
        self.x = x


@pytest.mark.parametrize("fmt", ["delta", "parquet", "json", "csv"])
def test_object_column_is_refused_before_the_write(tmp_path: Path, fmt: str) -> None:
    objects = pl.Series("o", [_Point(1), _Point(2)], dtype=pl.Object)
    frame = pl.DataFrame([pl.Series("id", [1, 2]), objects])
    with pytest.raises(EngineError, match=r"output 'out': column 'o' has the polars type Object"):
        get_engine("polars").write(frame, IOConfig("out", format=fmt, path="out"), tmp_path)
    assert not (tmp_path / "out").exists()


# -- 6: Delta partition values as the log holds them, not as folder names read --------------------------------------


@pytest.mark.parametrize(
    ("column", "values"),
    [("k=v", ["x", "y"]), ("a/b", ["x", "y"]), ("p", ["__HIVE_DEFAULT_PARTITION__", "x"])],
    ids=["equals-in-name", "slash-in-name", "hive-null-text"],
)
def test_delta_partition_values_come_from_the_log(tmp_path: Path, column: str, values: list[str]) -> None:
    from deltalake import DeltaTable, write_deltalake

    write_deltalake(str(tmp_path / "t"), pa.table({column: values, "v": [1, 2]}), partition_by=[column])
    log = DeltaTable(str(tmp_path / "t")).get_add_actions(flatten=True)
    assert sorted(pa.table(log).column(f"partition.{column}").to_pylist()) == sorted(values)  # what the log holds
    frame = get_engine("polars").read(IOConfig("i", format="delta", path="t"), tmp_path)
    assert sorted(frame.select(column, "v").rows()) == sorted(zip(values, [1, 2], strict=True))
    _same(tmp_path / "t", "delta")
