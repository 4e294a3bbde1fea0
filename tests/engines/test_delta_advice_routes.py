"""deltalake cannot read a negative decimal partition value with a fraction (-1.50 as '-1.-50'), so reads through
it (the pandas engine, ``hash_delta`` without Spark) refuse such a table, advising the engines that read it. That
advice said "the polars or Spark engine" for every table, also for those the polars engine itself hands to
deltalake, because its own Delta reader misreads them (a URL whose logged data file paths hold ``%``, a partition
value ``__HIVE_DEFAULT_PARTITION__``, a map column): polars refuses those too. The advice now names Spark alone
there, with polars' reason, and still names polars for a table polars' own reader reads."""

from __future__ import annotations

import json
import subprocess
import sys
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
from ubunye.hashing.delta_hash import hash_delta

s3_server = s3server.s3_server  # the fixture

#: Per data file: the value of ``s`` as logged, its folder as Spark names it, its path as Spark logs it (escaped
#: once more), and the value of the decimal(5,2) ``d``.
_PLAIN = [("x", "s=x", "s=x", "-1.50"), ("y", "s=y", "s=y", "2.00")]
_COLON = [("10:00", "s=10%3A00", "s=10%253A00", "-1.50"), ("y", "s=y", "s=y", "2.00")]
_HIVE_NULL = [("__HIVE_DEFAULT_PARTITION__", "s=__HIVE_DEFAULT_PARTITION__", "s=__HIVE_DEFAULT_PARTITION__", "-1.50"),
              ("y", "s=y", "s=y", "2.00")]  # fmt: skip
_MAP = {"type": "map", "keyType": "string", "valueType": "integer", "valueContainsNull": True}
_REFUSED = "partition column 'd' (decimal(5,2)) holds a negative value with a fraction (-1.50) in its Delta log"


def _spark_style_table(root: Path, files: list[tuple[str, str, str, str]], *, with_map: bool = False) -> None:
    """A Delta table at ``root`` as Spark writes one partitioned by the string ``s`` and the decimal(5,2) ``d`` (the
    values as text in the log, the paths URI-escaped after Hive's escaping), one ``id`` file per row (and a map
    column ``m`` when ``with_map``)."""
    fields = [{"name": "id", "type": "integer", "nullable": True, "metadata": {}}]
    if with_map:
        fields.append({"name": "m", "type": _MAP, "nullable": True, "metadata": {}})
    fields += [
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
        data = {"id": pa.array([i], pa.int32())}
        if with_map:
            data["m"] = pa.array([[("k", i)]], pa.map_(pa.string(), pa.int32()))
        pq.write_table(pa.table(data), file)
        add = {"path": f"{logged}/d={d}/{name}", "partitionValues": {"s": s, "d": d}, "dataChange": True,
               "size": file.stat().st_size, "modificationTime": 1700000000000}  # fmt: skip
        actions.append({"add": add})
    (root / "_delta_log").mkdir()
    (root / "_delta_log" / f"{0:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))


def _refused(engine: str, io: IOConfig, base: Path) -> str:
    with pytest.raises(EngineError) as err:
        get_engine(engine).read(io, base)
    return str(err.value)


@needs_polars
def test_a_url_table_with_escaped_paths_is_sent_to_spark_alone(s3_server: s3server.S3, tmp_path: Path) -> None:
    import s3fs

    local = tmp_path / "t"
    _spark_style_table(local, _COLON)
    bucket = s3_server.bucket()
    s3fs.S3FileSystem(**s3_server.options).put(str(local), f"{bucket.removeprefix('s3://')}/t", recursive=True)
    key, secret = s3_server.options["key"], s3_server.options["secret"]
    options = {"aws_endpoint_url": s3_server.endpoint, "aws_access_key_id": key, "aws_secret_access_key": secret,
               "aws_region": "us-east-1", "aws_allow_http": "true"}  # fmt: skip
    io = IOConfig("src", format="delta", path=f"{bucket}/t", storage_options=options)
    said = _refused("pandas", io, tmp_path)
    assert said.startswith(f"input 'src' (Delta at {bucket}/t): {_REFUSED}"), said
    assert "hold '%'" in said, said
    assert said.endswith("read the table with the Spark engine"), said  # was: "with the polars or Spark engine"
    # the advice holds: the polars engine refuses the table too, for the same reason
    polars = _refused("polars", io, tmp_path)
    assert "hold '%'" in polars and polars.endswith("read the table with the Spark engine"), polars
    # the hash of the table through deltalake (no Spark) advises alike
    with pytest.raises(EngineError, match=r"hold '%'.*: read the table with the Spark engine$"):
        hash_delta(f"{bucket}/t", storage_options=options)
    # the same table in a local folder: polars' own reader reads it, and the advice names polars
    said = _refused("pandas", IOConfig("src", format="delta", path=str(local)), tmp_path)
    assert said.endswith("read the table with the polars or Spark engine"), said
    assert get_engine("polars").read(IOConfig("src", format="delta", path=str(local)), tmp_path).height == 2


@needs_polars
@pytest.mark.parametrize(
    ("files", "with_map", "why"),
    [
        (_HIVE_NULL, False, "reads the partition value '__HIVE_DEFAULT_PARTITION__' of column 's' as null"),
        (_PLAIN, True, "keeps one entry per map key (column 'm')"),
    ],
    ids=["hive-default-partition", "map-column"],
)
def test_a_table_polars_hands_to_deltalake_is_sent_to_spark_alone(
    tmp_path: Path, files: list[tuple[str, str, str, str]], with_map: bool, why: str
) -> None:
    _spark_style_table(tmp_path / "t", files, with_map=with_map)
    io = IOConfig("src", format="delta", path=str(tmp_path / "t"))
    said = _refused("pandas", io, tmp_path)
    assert _REFUSED in said and f"polars' own Delta reader {why}" in said, said
    assert said.endswith("read the table with the Spark engine"), said
    polars = _refused("polars", io, tmp_path)  # the advice holds: polars refuses it, for the same reason
    assert f"polars' own Delta reader {why}" in polars and polars.endswith("with the Spark engine"), polars
    with pytest.raises(EngineError, match=r": read the table with the Spark engine$"):
        hash_delta(str(tmp_path / "t"))


@needs_polars
def test_a_table_polars_reads_itself_still_names_polars(tmp_path: Path) -> None:
    _spark_style_table(tmp_path / "t", _PLAIN)
    io = IOConfig("src", format="delta", path=str(tmp_path / "t"))
    said = _refused("pandas", io, tmp_path)
    assert _REFUSED in said and said.endswith("read the table with the polars or Spark engine"), said
    assert get_engine("polars").read(io, tmp_path).height == 2


def test_without_polars_spark_alone_is_named(tmp_path: Path) -> None:
    # as on Python 3.10, where the polars extra does not install: a child process in which polars cannot import
    _spark_style_table(tmp_path / "t", _PLAIN)
    child = (
        "import sys; sys.modules['polars'] = None\n"
        "from ubunye.hashing.delta_hash import hash_delta\n"
        "from ubunye.exceptions import EngineError\n"
        "try:\n"
        f"    hash_delta({str(tmp_path / 't')!r})\n"
        "except EngineError as exc:\n"
        "    print(exc)\n"
    )
    said = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True).stdout.strip()
    assert _REFUSED in said, said
    assert said.endswith("read the table with the Spark engine (the polars engine is not installed here)"), said
