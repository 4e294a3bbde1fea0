"""Per-file profile-v1 partials of a Delta table on Spark (docs/rows-v1.md section 12): the numbers
``ubunye.hashing.delta_spark`` groups by file when a profiled input is hashed incrementally.

A profile is counts and sums, so the profile of a table is the merge of its files' profiles; the rows of each file
are chosen by ``SparkDeltaFiles`` exactly as for the rows-v1 sums, only what is computed over them differs:

- with the jar, ``ubunye_profile_v1`` grouped by the file column: one result struct per file, its own data hash
  and fingerprints checked against the ones rebuilt from its numbers, as ``profile_spark`` checks the table's;
- without, the twin's ``Profiler`` in ``mapInArrow``: each Spark partition sends one blob of numbers per file it
  read (``ProfileSums.to_bytes``: only the buckets a row fell in), and the driver merges a file's blobs. No Spark
  arithmetic touches a sum, so ``spark.sql.ansi.enabled`` cannot overflow one.

Example:
    >>> twin_file_profiles(frame, ["id"], None, 256)  # doctest: +SKIP
    {'file:/data/t/part-0.parquet': ProfileSums(...)}
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from ubunye.hashing.delta_spark import sql_string
from ubunye.hashing.jvm import checked_profile_sums, require_function
from ubunye.hashing.profile import Profiler, ProfileSums, merge
from ubunye.hashing.types import spark_identifier
from ubunye.spark.session import FUNCTIONS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def jvm_file_profiles(
    frame: DataFrame,
    file: str,
    columns: Sequence[str],
    schema: str,
    kinds: tuple[tuple[str, str], ...],
    key: tuple[str, ...] | None,
    n: int,
) -> dict[str, ProfileSums]:
    """The profile partial of every file of ``frame`` (the column ``file``, then ``columns``; ``kinds`` their
    ``(name, type name)`` in code point order, as ``spark_columns`` gives them) by ``ubunye_profile_v1``."""
    from pyspark.sql import functions as F

    require_function(frame, FUNCTIONS[2])
    # SQL text, as jvm.profile_call's Columns but in one py4j call (each F.col or F.lit is several)
    names = ", ".join(spark_identifier(c) for c in columns)
    call = f"{FUNCTIONS[2]}({int(n)}, array({', '.join(sql_string(k) for k in key or ())}), {names}) AS p"
    rows = frame.groupBy(frame[spark_identifier(file)]).agg(F.expr(call)).collect()
    return {str(row[file]): checked_profile_sums(row["p"], schema, kinds, key, n) for row in rows}


def _file_blobs(
    batches: Iterator[pa.RecordBatch], names: list[str], key: tuple[str, ...] | None, n: int
) -> Iterator[pa.RecordBatch]:
    """One blob of profile numbers per file read by one Spark partition (column 0 the file, then the table's)."""
    done: dict[str, ProfileSums] = {}
    current: tuple[str, Profiler] | None = None

    def close() -> None:
        if current is not None:
            path, profiler = current
            done[path] = merge([done[path], profiler.sums()]) if path in done else profiler.sums()

    for batch in batches:
        if not batch.num_rows:
            continue
        data = pa.RecordBatch.from_arrays(batch.columns[1:], names=names)
        files = batch.column(0).dictionary_encode()
        for i, path in enumerate(files.dictionary.to_pylist()):
            # A partition reads its files one after the other: one profiler at a time bounds the memory of the
            # lines each keeps, however many small files Spark packs into the partition.
            if current is None or current[0] != path:
                close()
                current = (path, Profiler(data.schema, key, n))
            rows = data if len(files.dictionary) == 1 else data.filter(pc.equal(files.indices, i))
            current[1].add(rows)
    close()
    if done:
        paths = list(done)
        yield pa.RecordBatch.from_pydict(
            {"f": paths, "blob": [done[p].to_bytes() for p in paths]},
            schema=pa.schema([("f", pa.string()), ("blob", pa.binary())]),
        )


def twin_file_profiles(
    frame: DataFrame, columns: Sequence[str], key: tuple[str, ...] | None, n: int
) -> dict[str, ProfileSums]:
    """The profile partial of every file of ``frame`` (a file column, then ``columns``) by the twin in
    ``mapInArrow``; a file read by several partitions has its partials merged here."""
    names = list(columns)
    # Positional names: mapInArrow resolves names itself and trips on dots in them.
    positional = frame.toDF("_f", *[f"_{i}" for i in range(len(names))])
    blobs = positional.mapInArrow(lambda it: _file_blobs(it, names, key, n), "f string, blob binary").collect()
    parts: dict[str, list[ProfileSums]] = {}
    for row in blobs:
        parts.setdefault(str(row["f"]), []).append(ProfileSums.from_bytes(row["blob"]))
    return {path: merge(found) for path, found in parts.items()}


__all__ = ["jvm_file_profiles", "twin_file_profiles"]
