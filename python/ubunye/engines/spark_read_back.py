"""A csv or json output written by Spark is read back before it is committed, as the in-process engines do
(``ubunye.engines._io``): text loses what it cannot spell (microseconds in a json timestamp, a long that fits an
int comes back as int32, a value holding a line break split into rows by a reader without ``multiLine``), and the
record must never claim a hash the data lacks.

The new files alone are read (the staging folder holds nothing else until the commit), with the options the
engine reads that output with, and hashed as the frame was; on a difference the write is refused, naming the
first difference, and nothing is committed.

Example:
    >>> check_read_back(spark, frame, hash_frame(frame), io, "/u/.o.ubunye-staging-1", {})  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ubunye.exceptions import EngineError, HashError
from ubunye.hashing import FrameHash, hash_frame
from ubunye.hashing.types import spark_type_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ubunye.config import IOConfig


def check_read_back(
    spark: SparkSession, frame: DataFrame, expected: FrameHash, io: IOConfig, target: str, options: dict[str, str]
) -> None:
    """Raise EngineError naming the output, the format and the first difference unless the files Spark just wrote
    at ``target`` read back (with ``options``) as ``expected``, the hash of ``frame``."""
    where = f"output {io.name!r}: {io.format} does not read back as the frame written"
    try:
        back = spark.read.options(**options).load(target, format=io.format)
        got = hash_frame(back)
    except HashError as exc:
        raise EngineError(f"{where} ({exc}); nothing was committed, the previous data is as it was") from exc
    if (got.data_hash, got.schema, got.row_count) == (expected.data_hash, expected.schema, expected.row_count):
        return
    msg = f"{where}: {_first_difference(frame, back, expected, got)}, so the record's hash would not be the data's; "
    msg += "nothing was committed, the previous data is as it was. Write format: parquet or delta (they keep types "
    msg += f"and nulls), or change the column so {io.format} holds it as it is"
    raise EngineError(msg)


def _first_difference(frame: DataFrame, back: DataFrame, expected: FrameHash, got: FrameHash) -> str:
    """A column's name or type, the row count, else the first column whose values differ (each hashed alone)."""
    names, read = frame.columns, back.columns
    if expected.schema != got.schema:
        missing = [n for n in names if n not in read]
        if missing:
            return f"column {missing[0]!r} of the frame does not read back (read back: {', '.join(read)})"
        extra = [n for n in read if n not in names]
        if extra:
            return f"column {extra[0]!r} reads back but is not in the frame"
        for was, now in zip(frame.schema.fields, back.schema.fields, strict=False):
            a, b = spark_type_name(was.dataType, was.name), spark_type_name(now.dataType, now.name)
            if (was.name, a) != (now.name, b):
                return f"column {was.name!r} is {a} in the frame but reads back as {b}"
        return f"the schema differs ({expected.schema} written, {got.schema} read back)"
    if expected.row_count != got.row_count:
        return f"{expected.row_count} rows were written but {got.row_count} read back"
    # Positional: Spark resolves names case-insensitively, and rows-v1 allows names differing only in case.
    ours, theirs = frame.toDF(*(f"_{i}" for i in range(len(names)))), back.toDF(*(f"_{i}" for i in range(len(read))))
    for i, name in enumerate(names):
        if hash_frame(ours.select(f"_{i}")).data_hash != hash_frame(theirs.select(f"_{i}")).data_hash:
            return f"the values of column {name!r} differ"
    return "the values differ"


__all__ = ["check_read_back"]
