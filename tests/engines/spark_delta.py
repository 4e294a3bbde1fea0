"""A Delta table laid out as Spark writes one, without Spark: a partitioned table of one ``id`` file per partition
value, its log as Spark's (the value as text in ``partitionValues``, the file path URI-escaped after Hive's
escaping), so tests can read what deltalake and polars make of Spark's tables on machines or venvs without Spark."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def spark_style_table(root: Path, column: str, spark_type: str, files: list[tuple[str, str, str]]) -> None:
    """Write at ``root`` a Delta table partitioned by ``column`` (of ``spark_type``, e.g. ``decimal(5,2)``): for
    each ``(value as logged, folder, path as logged)`` of ``files``, one data file in ``folder`` holding the int
    ``id`` i (its index), added in the log under ``path as logged``."""
    fields = [
        {"name": "id", "type": "integer", "nullable": True, "metadata": {}},
        {"name": column, "type": spark_type, "nullable": True, "metadata": {}},
    ]
    meta = {
        "id": str(uuid.uuid4()),
        "format": {"provider": "parquet", "options": {}},
        "schemaString": json.dumps({"type": "struct", "fields": fields}),
        "partitionColumns": [column],
        "configuration": {},
        "createdTime": 1700000000000,
    }
    actions: list[dict[str, object]] = [
        {"commitInfo": {"timestamp": 1700000000000, "operation": "WRITE", "engineInfo": "Apache-Spark/3.5.1"}},
        {"metaData": meta},
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
    ]
    for i, (value, folder, logged) in enumerate(files):
        name = f"part-0000{i}-{uuid.uuid4()}.c000.snappy.parquet"
        (root / folder).mkdir(parents=True)
        pq.write_table(pa.table({"id": pa.array([i], pa.int32())}), root / folder / name)
        stats = {"numRecords": 1, "minValues": {"id": i}, "maxValues": {"id": i}, "nullCount": {"id": 0}}
        add = {"path": f"{logged}/{name}", "partitionValues": {column: value}, "dataChange": True}
        add |= {"size": (root / folder / name).stat().st_size, "modificationTime": 1700000000000}
        actions.append({"add": add | {"stats": json.dumps(stats)}})
    (root / "_delta_log").mkdir()
    (root / "_delta_log" / f"{0:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))
