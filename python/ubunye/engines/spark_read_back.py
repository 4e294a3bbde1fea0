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

from pathlib import Path
from typing import TYPE_CHECKING

from ubunye.engines._io import empty_text
from ubunye.exceptions import EngineError, HashError
from ubunye.hashing import FrameHash, hash_frame
from ubunye.hashing.types import spark_identifier, spark_type_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ubunye.config import IOConfig


def check_read_back(
    spark: SparkSession,
    frame: DataFrame,
    expected: FrameHash,
    io: IOConfig,
    target: str,
    options: dict[str, str],
    *,
    typed: bool = False,
) -> None:
    """Raise EngineError naming the output, the format and the first difference unless the files Spark just wrote
    at ``target`` read back (with ``options``) as ``expected``, the hash of ``frame``.

    ``typed`` (appends): the new files are read with the frame's types, so their values are checked; the types a
    reader infers come from the whole folder then, which :func:`refuse_drift` checks."""
    where = f"output {io.name!r}: {io.format} does not read back as the frame written"
    if expected.row_count == 0:
        raise EngineError(f"{where}: {empty_text(io)}")
    try:
        from pyspark.sql.types import StructType

        reader = spark.read.options(**options)
        parts = set(partition_columns(spark, frame, io))
        if typed:
            data = [f for f in frame.schema.fields if f.name not in parts]
            reader = reader.schema(StructType(data))
        back = _as_written(reader.load(target, format=io.format), frame, parts)
        got = hash_frame(back)
    except HashError as exc:
        raise EngineError(f"{where} ({exc}); nothing was committed, the previous data is as it was") from exc
    if (got.data_hash, got.schema, got.row_count) == (expected.data_hash, expected.schema, expected.row_count):
        return
    msg = f"{where}: {_first_difference(frame, back, expected, got)}, so the record's hash would not be the data's; "
    msg += "nothing was committed, the previous data is as it was. Write format: parquet or delta (they keep types "
    msg += f"and nulls), or change the column so {io.format} holds it as it is"
    raise EngineError(msg)


def _as_written(back: DataFrame, frame: DataFrame, parts: set[str]) -> DataFrame:
    """What Spark read back, its columns in the frame's order (Spark puts partition columns last) and its partition
    columns cast to the frame's types: Spark guesses a partition's type from the folder names of the files read
    (a string day ``2024-01-01`` as a date, beside other folders maybe not), so their values are compared, not a
    guess made from this write's folders alone."""
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in frame.schema.fields}
    cast = {c: F.col(spark_identifier(c)).cast(types[c]) for c in parts if c in back.columns}
    if cast:
        back = back.withColumns(cast)
    if sorted(back.columns) == sorted(frame.columns):
        back = back.select(*[spark_identifier(c) for c in frame.columns])
    return back


def refuse_drift(
    spark: SparkSession, frame: DataFrame, io: IOConfig, folder: Path, staging: Path, options: dict[str, str]
) -> None:
    """Raise EngineError naming the output and the first difference unless the frame an append (or a dynamic
    partition overwrite) adds to ``folder`` has the partition folders, columns and rows-v1 types of the data
    already there, as Spark reads it. Partition columns are left out: Spark types them from all the folder names
    together when the output is read.

    parquet: one existing file stands for the rest (Spark takes one file's schema for all). csv and json: the
    existing folder as Spark infers it, all files together (one day's file says little: an all-null column, a
    field Spark's json writer left out), against the frame's own types; csv by position, so in order too. A new or
    empty folder takes any frame."""
    from ubunye.engines.inputs import column_difference, listing, partition_difference

    existing, new = listing(io, folder) if folder.is_dir() else [], listing(io, staging)
    if not existing or not new:
        return
    first = existing[0]
    why = partition_difference(folder, first, folder / new[0].relative_to(staging), "the new files")
    where = str(first)
    if why is None:
        parts = set(partition_columns(spark, frame, io))
        ours = {f.name: spark_type_name(f.dataType, f.name) for f in frame.schema.fields if f.name not in parts}
        if io.format == "parquet":
            theirs = _types(spark.read.options(**options, basePath=str(folder)).load(str(first), format="parquet"))
        else:
            where = f"the output as Spark reads it ({folder})"
            theirs = _types(spark.read.options(**options).load(str(folder), format=io.format))
        theirs = {n: t for n, t in theirs.items() if n not in parts}
        if io.format == "json":  # a field null in every existing row is not there: the frame's type is the first
            ours = {n: t for n, t in ours.items() if n in theirs}
        why = column_difference(where, theirs, "the frame", ours, ordered=io.format == "csv")
    if why is None:
        return
    msg = f"output {io.name!r}: cannot append to {folder}: {why}; the output would not read back as written (old "
    msg += "rows as another type, or not at all). Nothing was committed, the previous data is as it was: make the "
    msg += "frame's columns and types those of the output, overwrite it, or write another"
    raise EngineError(msg)


def case_sensitive(spark: SparkSession) -> bool:
    """Whether the session resolves column names exactly (``spark.sql.caseSensitive``; Spark's default: false)."""
    try:
        return str(spark.conf.get("spark.sql.caseSensitive", "false")).strip().lower() == "true"
    except Exception:  # a session that keeps its settings to itself: Spark's default
        return False


def partition_columns(spark: SparkSession, frame: DataFrame, io: IOConfig) -> list[str]:
    """The frame's columns ``io.partition_by`` names, as Spark's ``partitionBy`` resolves them: exactly under
    ``spark.sql.caseSensitive=true`` (where ``a`` and ``A`` are two columns, and only the one named is a partition
    column), else ignoring case.

    Example:
        >>> frame = spark.sql("SELECT 1 AS a, 2 AS A")  # caseSensitive=true  # doctest: +SKIP
        >>> partition_columns(spark, frame, IOConfig("o", partition_by=["a"]))  # doctest: +SKIP
        ['a']
    """
    names = frame.columns
    if case_sensitive(spark):
        return [c for c in io.partition_by if c in names]
    found = []
    for wanted in io.partition_by:
        match = next((n for n in names if n == wanted), None) or next(
            (n for n in names if n.lower() == wanted.lower()), None
        )
        if match is not None:
            found.append(match)
    return found


def check_partition_values(
    spark: SparkSession, frame: DataFrame, io: IOConfig, target: str, options: dict[str, str]
) -> None:
    """Raise EngineError naming the output and the partition column unless the partition folders Spark just wrote
    at ``target`` read back, cast to the frame's types, as the frame's values (for parquet, which is not read back
    whole: its columns keep their types, but a partition column is text in a folder name, which Spark's reader
    parses by guessing: a string ``007`` comes back as the number 7, ``1.50`` as 1.5). csv and json are read back
    whole (:func:`check_read_back`), their partition columns so too."""
    parts = partition_columns(spark, frame, io)
    if not parts:
        return
    columns = [spark_identifier(c) for c in parts]
    where = f"output {io.name!r}: {io.format} partitioned by {', '.join(parts)} does not read back as the frame written"
    try:
        back = _as_written(spark.read.options(**options).load(target, format=io.format), frame, set(parts))
        missing = [c for c in parts if c not in back.columns]
        if missing:
            raise EngineError(f"{where}: partition column {missing[0]!r} does not read back; nothing was committed")
        for name, column in zip(parts, columns, strict=True):
            if hash_frame(frame.select(column)).data_hash != hash_frame(back.select(column)).data_hash:
                msg = f"{where}: the values of partition column {name!r} differ (Spark keeps a partition value as "
                msg += "text in a folder name and reads it back by guessing its type: a string '007' as the number "
                msg += "7), so the record's hash would not be the data's; nothing was committed, the previous data "
                msg += "is as it was. Write format: delta (it keeps partition values with their types), or leave "
                msg += "the column out of partition_by"
                raise EngineError(msg)
    except HashError as exc:
        raise EngineError(f"{where} ({exc}); nothing was committed, the previous data is as it was") from exc


def _types(read: DataFrame) -> dict[str, str]:
    """Column name -> rows-v1 type of what Spark read."""
    return {f.name: spark_type_name(f.dataType, f.name) for f in read.schema.fields}


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


__all__ = ["case_sensitive", "check_partition_values", "check_read_back", "partition_columns", "refuse_drift"]
