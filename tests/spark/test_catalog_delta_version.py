"""A Delta output written by Spark through a catalog table name records the version its own commit made.

The record said version null for such an output, where a path output recorded its version. Nothing serialises the
writers of a catalog table (no lock on the driver's disk), so the version is the one whose commit carries this
write's mark as Delta's userMetadata, never the latest (which may be another writer's). When it cannot be told
(the user's own userMetadata replaces the mark), the record says null and the log says why. A catalog table of
another provider (parquet) has no version, and gets no mark among its options.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from tests.lineage.usecase import last, write_task
from tests.spark.conftest import rows_v1
from ubunye.config.model import IOConfig
from ubunye.engines.delta import COMMIT_MARK
from ubunye.engines.spark_engine import SparkEngine
from ubunye.hashing.delta_hash import table_location
from ubunye.runner import run_task

_QUERY = "SELECT id, CAST(id * 10 AS STRING) AS s FROM VALUES ({}) AS t(id)"


def _run(spark: Any, uc: Path, task: str, output: dict[str, Any], ids: str) -> Any:
    """Run a task writing the rows ``ids`` to ``output`` on the Spark engine; its record, read from disk."""
    cfg = {
        "MODEL": "etl",
        "ENGINE": {"backend": "spark"},
        "CONFIG": {
            "outputs": {"o": output},
            "transform": {"type": "sql", "query": _QUERY.format(ids)},
            "monitors": ["lineage"],
        },
    }
    run_task(write_task(uc, task, cfg), engine="spark", spark=spark)
    return last(uc, task).outputs[0]


def _commit_info(spark: Any, table: str, version: int) -> dict[str, Any]:
    """The commitInfo of ``version`` as the table's Delta log file (``_delta_log/<version>.json``) holds it."""
    where = Path(table_location(spark.sql(f"DESCRIBE DETAIL {table}").first()["location"]))
    lines = (where / "_delta_log" / f"{version:020d}.json").read_text().splitlines()
    actions = [json.loads(line) for line in lines if line.strip()]
    return next(a["commitInfo"] for a in actions if "commitInfo" in a)


def _marked(info: dict[str, Any]) -> bool:
    return str(info.get("userMetadata", "")).startswith(f"{COMMIT_MARK}=")


def _hash_at(spark: Any, table: str, version: int, *, added: bool = False) -> str:
    """rows-v1 of the table at ``version``; ``added``: of the rows that version added to the one before."""
    query = f"SELECT * FROM {table} VERSION AS OF {version}"
    if added:
        query += f" EXCEPT ALL SELECT * FROM {table} VERSION AS OF {version - 1}"
    return str(rows_v1(spark.sql(query))["data_hash"])


def test_a_delta_catalog_output_records_the_version_its_commit_made(spark, tmp_path) -> None:
    table = "default.ubunye_catalog_version"
    uc = tmp_path / "uc"
    try:
        first = _run(spark, uc, "cat", {"format": "delta", "table": table, "mode": "overwrite"}, "1L), (2L")
        spark.sql(f"INSERT INTO {table} VALUES (7, 'other')")  # another writer's commit: version 1
        second = _run(spark, uc, "cat", {"format": "delta", "table": table, "mode": "overwrite"}, "3L")
        # no format: the existing Delta table's own
        third = _run(spark, uc, "cat", {"table": table, "mode": "append"}, "4L), (5L")
        assert [first.version, second.version, third.version] == [0, 2, 3]
        marks = set()
        for record in (first, second, third):
            info = _commit_info(spark, table, record.version)
            assert _marked(info), info  # the record's version is the commit this run made, as its log file says
            marks.add(info["userMetadata"])
            assert record.written is True and record.data_hash is not None
            # an overwrite's version holds the frame hashed; an append's adds it to the version before
            assert record.data_hash == _hash_at(spark, table, record.version, added=record is third), record
        assert len(marks) == 3 and not _marked(_commit_info(spark, table, 1))
        assert _hash_at(spark, table, 1) != second.data_hash  # the other writer's version holds other rows
        assert third.row_count == 2 and spark.table(table).count() == 3
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")


class _CommitsBeforeTheVersionIsRead:
    """The session, but another writer appends to ``table`` just before the first ``DESCRIBE HISTORY``: after this
    write's commit, before its version is read back (on a catalog table nothing keeps it out)."""

    def __init__(self, spark: Any, table: str) -> None:
        self._spark, self._table, self.committed = spark, table, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._spark, name)

    def sql(self, query: str, *args: Any, **kwargs: Any) -> Any:
        if query.startswith("DESCRIBE HISTORY") and not self.committed:
            self.committed = True
            self._spark.sql(f"INSERT INTO {self._table} VALUES (100L, 'other')")
        return self._spark.sql(query, *args, **kwargs)


def test_the_version_is_this_write_s_commit_not_a_later_one(spark, tmp_path) -> None:
    table = "default.ubunye_catalog_version_raced"
    spark.sql(f"CREATE TABLE {table} (id BIGINT, s STRING) USING delta")  # version 0
    try:
        session = _CommitsBeforeTheVersionIsRead(spark, table)
        engine = SparkEngine(spark=session)  # type: ignore[arg-type]
        frame = spark.sql(_QUERY.format("1L), (2L"))
        got = engine.write(frame, IOConfig("o", format="delta", table=table, mode="append"), tmp_path)
        assert session.committed
        latest = spark.sql(f"DESCRIBE HISTORY {table} LIMIT 1").first()["version"]
        assert (got, latest) == (1, 2)  # its own commit; the latest is the other writer's
        assert _marked(_commit_info(spark, table, 1)) and not _marked(_commit_info(spark, table, 2))
        assert _hash_at(spark, table, 1) == rows_v1(frame)["data_hash"]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_a_catalog_write_with_its_own_user_metadata_records_no_version_and_says_why(spark, tmp_path, caplog) -> None:
    table = "default.ubunye_catalog_version_own"
    uc = tmp_path / "uc"
    output = {"format": "delta", "table": table, "mode": "overwrite", "options": {"userMetadata": "nightly load"}}
    try:
        with caplog.at_level(logging.WARNING, logger="ubunye"):
            record = _run(spark, uc, "own", output, "1L")
        assert record.written is True and record.version is None  # never a guess: the latest may be another's
        said = [r.getMessage() for r in caplog.records if "is not recorded" in r.getMessage()]
        assert len(said) == 1 and f"catalog table {table}" in said[0] and "own userMetadata" in said[0], said
        assert spark.sql(f"DESCRIBE HISTORY {table} LIMIT 1").first()["userMetadata"] == "nightly load"
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_a_parquet_catalog_output_records_no_version_and_gets_no_mark(spark, tmp_path, caplog) -> None:
    uc = tmp_path / "uc"
    tables = {"default.ubunye_catalog_parquet": "parquet", "default.ubunye_catalog_default": None}
    try:
        for table, fmt in tables.items():  # None: the session's default source (parquet here)
            output = {"table": table, "mode": "overwrite", **({"format": fmt} if fmt else {})}
            with caplog.at_level(logging.WARNING, logger="ubunye"):
                made = _run(spark, uc, "pq", output, "1L")
                added = _run(spark, uc, "pq", {**output, "mode": "append"}, "2L")
            for record in (made, added):
                assert record.written is True and record.version is None and record.data_hash is not None
            details = " ".join(str(tuple(r)) for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect())
            assert "parquet" in details.lower() and COMMIT_MARK not in details and "userMetadata" not in details
            assert spark.table(table).count() == 2
        assert not [r for r in caplog.records if "version" in r.getMessage().lower()]
    finally:
        for table in tables:
            spark.sql(f"DROP TABLE IF EXISTS {table}")
