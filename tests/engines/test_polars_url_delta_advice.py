"""A Delta table polars' own reader misreads is read on polars through deltalake (a URL whose logged data file
paths hold ``%``, a partition value ``__HIVE_DEFAULT_PARTITION__``, ...); deltalake cannot read a negative decimal
partition value with a fraction either (-1.50 as '-1.-50'). A table with both was refused with deltalake's advice,
"read the table with the polars or Spark engine": on polars. Only Spark reads it, and the refusal now says so,
with why polars' reader cannot. The same table in a local folder reads on polars, as the refusal says."""

from __future__ import annotations

import decimal
import json
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.lineage import s3server
from tests.optional import needs_polars
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame

s3_server = s3server.s3_server  # the fixture

#: Per data file: the value of ``s`` as logged, its folder as Spark names it, its path as Spark logs it (escaped
#: once more), and the value of the decimal(5,2) ``d``.
_SPACE = [("a b", "s=a b", "s=a%20b", "-1.50"), ("x", "s=x", "s=x", "2.00")]
_HIVE_NULL = [("__HIVE_DEFAULT_PARTITION__", "s=__HIVE_DEFAULT_PARTITION__", "s=__HIVE_DEFAULT_PARTITION__", "-1.50"),
              ("x", "s=x", "s=x", "2.00")]  # fmt: skip


def _spark_style_table(root: Path, files: list[tuple[str, str, str, str]]) -> pa.Table:
    """A Delta table at ``root`` as Spark writes one partitioned by the string ``s`` and the decimal(5,2) ``d`` (the
    values as text in the log, the paths URI-escaped after Hive's escaping), one ``id`` file per row; its rows."""
    fields = [
        {"name": "id", "type": "integer", "nullable": True, "metadata": {}},
        {"name": "s", "type": "string", "nullable": True, "metadata": {}},
        {"name": "d", "type": "decimal(5,2)", "nullable": True, "metadata": {}},
    ]
    meta = {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
            "schemaString": json.dumps({"type": "struct", "fields": fields}), "partitionColumns": ["s", "d"],
            "configuration": {}, "createdTime": 1700000000000}  # fmt: skip
    actions: list[dict[str, object]] = [
        {"commitInfo": {"timestamp": 1700000000000, "operation": "WRITE", "engineInfo": "Apache-Spark/3.5.1"}},
        {"metaData": meta},
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
    ]
    for i, (s, folder, logged, d) in enumerate(files):
        name = f"part-0000{i}-{uuid.uuid4()}.c000.snappy.parquet"
        (root / folder / f"d={d}").mkdir(parents=True)
        file = root / folder / f"d={d}" / name
        pq.write_table(pa.table({"id": pa.array([i], pa.int32())}), file)
        add = {"path": f"{logged}/d={d}/{name}", "partitionValues": {"s": s, "d": d}, "dataChange": True,
               "size": file.stat().st_size, "modificationTime": 1700000000000}  # fmt: skip
        actions.append({"add": add})
    (root / "_delta_log").mkdir()
    (root / "_delta_log" / f"{0:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))
    return pa.table({
        "id": pa.array(range(len(files)), pa.int32()),
        "s": [s for s, _, _, _ in files],
        "d": pa.array([decimal.Decimal(d) for _, _, _, d in files], pa.decimal128(5, 2)),
    })  # fmt: skip


def _refused(io: IOConfig, base: Path) -> str:
    with pytest.raises(EngineError) as err:
        get_engine("polars").read(io, base)
    return str(err.value)


@needs_polars
def test_a_url_table_with_escaped_paths_and_a_negative_fraction_names_spark(
    s3_server: s3server.S3, tmp_path: Path
) -> None:
    import s3fs

    local = tmp_path / "t"
    rows = _spark_style_table(local, _SPACE)
    bucket = s3_server.bucket()
    s3fs.S3FileSystem(**s3_server.options).put(str(local), f"{bucket.removeprefix('s3://')}/t", recursive=True)
    key, secret = s3_server.options["key"], s3_server.options["secret"]
    options = {"aws_endpoint_url": s3_server.endpoint, "aws_access_key_id": key, "aws_secret_access_key": secret,
               "aws_region": "us-east-1", "aws_allow_http": "true"}  # fmt: skip
    said = _refused(IOConfig("src", format="delta", path=f"{bucket}/t", storage_options=options), tmp_path)
    assert said.startswith(f"input 'src' (Delta at {bucket}/t): partition column 'd' (decimal(5,2)) holds a "), said
    assert "(-1.50)" in said and "'-1.-50'" in said and "hold '%'" in said, said
    assert said.endswith("read the table with the Spark engine"), said  # was: "with the polars or Spark engine"
    # what the refusal says of a copy in a local folder holds: polars' own reader reads it, every value as logged
    polars = get_engine("polars")
    read = polars.read(IOConfig("src", format="delta", path=str(local)), tmp_path)
    assert polars.hash(read).data_hash == hash_frame(rows).data_hash


@needs_polars
def test_a_hive_default_partition_beside_a_negative_fraction_names_spark(tmp_path: Path) -> None:
    # polars' own reader reads the value __HIVE_DEFAULT_PARTITION__ as null: the table went to deltalake as well
    _spark_style_table(tmp_path / "t", _HIVE_NULL)
    said = _refused(IOConfig("src", format="delta", path=str(tmp_path / "t")), tmp_path)
    assert "partition column 'd' (decimal(5,2)) holds a negative value with a fraction (-1.50)" in said, said
    assert "reads the partition value '__HIVE_DEFAULT_PARTITION__' of column 's' as null" in said, said
    assert said.endswith("read the table with the Spark engine"), said


def test_spark_reads_such_a_table(spark, tmp_path: Path) -> None:
    # the advice holds: Spark takes each value from the log, -1.50 and the escaped folder alike
    rows = _spark_style_table(tmp_path / "t", _SPACE)
    engine = get_engine("spark", spark=spark)
    read = engine.read(IOConfig("src", format="delta", path=str(tmp_path / "t")), tmp_path)
    assert engine.hash(read).data_hash == hash_frame(rows).data_hash
