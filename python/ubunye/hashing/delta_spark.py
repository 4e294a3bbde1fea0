"""Per-file rows-v1 sums (or profile-v1 partials) of a Delta table on Spark, equal to what
``spark.read.format("delta")`` reads of each file.

What is computed per file is the caller's ``FileNumbers`` (``ubunye.hashing.delta_numbers``: rows-v1 sums, or
profile partials made by ``ubunye.hashing.delta_spark_profiles``); which rows are read for which file is this
module's. Two ways, each one Spark job whose result is a few numbers per file:

- the whole table through Spark's Delta reader, grouped by ``_metadata.file_path``: exact by construction
  (deletion vectors, column mapping and partition values are the reader's own), and what a full hash costs. Spark's
  Delta reader does not skip files on a ``_metadata.file_path`` filter (it reads them all and drops the rows), so
  this is never a way to read a few files;
- a few files alone, through Spark's Parquet reader with the table's data schema (what Delta's reader does
  underneath: a column a file lacks is null, nested fields alike), their partition columns rebuilt from the add
  actions' values cast to the table's types, grouped by file. Only when nothing of the table makes a file's rows
  differ from that (:meth:`SparkDeltaFiles.read`): no deletion vector on the files read, no column
  mapping, no table feature not known to leave a file's rows alone, partition columns of types whose values
  deltalake parses exactly. The DataFrame's schema string must be the table's, and each file's row count the
  ``numRecords`` of its add action when the log has it; else the whole table is read.

With the jar the sums are ``ubunye_rows_v1(<the table's columns>)`` per file; without, the twin runs in
``mapInArrow`` and each file's sums come back as 32-bit halves, so no Spark addition can overflow whatever
``spark.sql.ansi.enabled`` says (:func:`jvm_file_sums`, :func:`twin_file_sums`).

Example:
    >>> files = SparkDeltaFiles(spark, path, read_snapshot(DeltaTable(path)), None)  # doctest: +SKIP
    >>> files.schema  # doctest: +SKIP
    'struct<"id":int64>'
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import reduce
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc

from ubunye.exceptions import HashError
from ubunye.hashing.delta_files import DeltaFile, DeltaSnapshot, P, Sums
from ubunye.hashing.digest import add_sums, finish, from_halves, sum_lines, to_halves
from ubunye.hashing.encode import encode_batch
from ubunye.hashing.jvm import require_function
from ubunye.hashing.spark import choose_engine
from ubunye.hashing.types import spark_identifier, spark_schema_string
from ubunye.spark.session import FUNCTION

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import DataType

    from ubunye.hashing.delta_numbers import FileNumbers

#: Table features known to leave a data file's rows as its Parquet file holds them (beside the partition values).
#: ``deletionVectors`` is judged per file, ``columnMapping`` by its mode; anything else reads the whole table.
SAFE_FEATURES = frozenset(
    {
        "appendOnly",
        "invariants",
        "checkConstraints",
        "changeDataFeed",
        "generatedColumns",
        "identityColumns",
        "rowTracking",
        "domainMetadata",
        "clustering",
        "inCommitTimestamp",
        "timestampNtz",
        "v2Checkpoint",
        "vacuumProtocolCheck",
        "deletionVectors",
        "columnMapping",
    }
)
#: Most partitions (distinct partition values) whose files are read alone in one job; more are read with the table.
MAX_PARTITIONS_ALONE = 256
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_GLOB = re.compile(r"[{}\[\]*?\\]")  # Spark expands these in a path it is given
_HALVES = ("n", "s1_hi", "s1_lo", "s2_hi", "s2_lo")
_PARTS = "f string, " + ", ".join(f"{c} long" for c in _HALVES)


def _rebuildable(t: DataType) -> bool:
    """Partition types whose values deltalake parses as Delta's reader casts them (no time zone, no encoding)."""
    from pyspark.sql import types as T

    simple = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType, T.DecimalType)
    return isinstance(t, (*simple, T.BooleanType, T.DateType)) or type(t) is T.StringType


def _file_partials(batches: Iterator[pa.RecordBatch], names: list[str]) -> Iterator[pa.RecordBatch]:
    """Each file's row count and sums over one Spark partition (column 0 the file, then the table's columns)."""
    acc: dict[str, Sums] = {}
    for batch in batches:
        if not batch.num_rows:
            continue
        data = pa.RecordBatch.from_arrays(batch.columns[1:], names=names)
        files = batch.column(0).dictionary_encode()
        paths = files.dictionary.to_pylist()
        for i, path in enumerate(paths):
            # One file per batch is the rule (a batch is read from one file); filtering costs only otherwise.
            rows = data if len(paths) == 1 else data.filter(pc.equal(files.indices, i))
            acc[path] = add_sums([acc.get(path, (0, 0, 0)), sum_lines(encode_batch(rows))])
    out: dict[str, list[Any]] = {c: [] for c in ("f", *_HALVES)}
    for path, (n, s1, s2) in acc.items():
        for column, value in zip(out, (path, n, *to_halves(s1), *to_halves(s2)), strict=True):
            out[column].append(value)
    schema = pa.schema([("f", pa.string()), *[(c, pa.int64()) for c in list(out)[1:]]])
    yield pa.RecordBatch.from_pydict(out, schema=schema)


class SparkDeltaFiles:
    """One Delta snapshot as Spark's Delta reader reads it: its schema string, and the numbers of its files
    (``numbers``: rows-v1 sums or profile partials, ``ubunye.hashing.delta_numbers``).

    Args:
        spark: the session.
        table_uri: the table's path or URL, as Spark reads it.
        snapshot: the snapshot (``read_snapshot`` with ``deletion_vectors=True``), whose version Spark reads.
        engine: ``"jvm"``, ``"arrow"`` or None (the JVM function when ``ubunye.spark.jvm_usable``).
    """

    def __init__(self, spark: SparkSession, table_uri: str, snapshot: DeltaSnapshot, engine: str | None) -> None:
        self._spark = spark
        self._uri = table_uri
        self._snap = snapshot
        self.table = spark.read.format("delta").option("versionAsOf", snapshot.version).load(table_uri)
        self.columns = list(self.table.columns)
        self.schema = spark_schema_string(self.table.schema)  # a column rows-v1 cannot hash fails here, named
        self.engine = choose_engine(self.table, engine)
        lower = {c.lower() for c in self.columns}
        self._file = next(n for n in (f"_ubunye_file{i}" for i in range(len(lower) + 1)) if n not in lower)

    def read(self, wanted: Sequence[DeltaFile], numbers: FileNumbers[P]) -> tuple[dict[str, P], P | None, str]:
        """The numbers of (at least) the files in ``wanted``, read the cheapest way that is exact.

        Returns ``(per_file, total, why)``: ``total`` is None when only some files were read (the caller adds the
        cached numbers of the others); when the whole table had to be read, it is the table's and ``why`` says
        why. Files with deletion vectors are read through Spark's Delta reader restricted to their partitions
        (an exact filter on partition columns, which the reader does prune by), others alone.
        """
        if not wanted:
            return {}, None, ""
        why = self._table_reason()
        got: dict[str, P] = {}
        with_dv = [f for f in wanted if f.deletion_vector is not None]
        if not why and with_dv:
            if self._snap.partition_columns:
                got = self._read_partitions(with_dv, numbers)
            else:
                why = (
                    f"{len(with_dv)} file(s) to read have deletion vectors, which Spark's Delta reader applies only "
                    "reading the whole table (it is not partitioned)"
                )
        alone = [f for f in wanted if f.deletion_vector is None and f.path not in got]
        if not why:
            why = self._alone_reason(alone)
        if not why:
            more, why = self.read_files(alone, numbers)
            got.update(more)
        if not why:
            return got, None, ""
        per_file, total = self.read_table(numbers)
        return per_file, total, why

    def _table_reason(self) -> str:
        """Why no file of this table can be read but with the whole table, or ``""``."""
        snap = self._snap
        mode = snap.configuration.get("delta.columnMapping.mode", "none")
        if mode != "none":
            return f"column mapping (delta.columnMapping.mode={mode}): Spark's Delta reader reads the whole table"
        unknown = sorted(snap.features - SAFE_FEATURES)
        if unknown:
            shown = ", ".join(unknown)
            return f"table feature(s) {shown}: not known to leave a file's rows as its Parquet file holds them"
        if "_metadata" in {c.lower() for c in self.columns}:
            return "a column named _metadata hides Spark's file metadata"
        fields = {f.name: f.dataType for f in self.table.schema.fields}
        for name in snap.partition_columns:
            if name not in fields or not _rebuildable(fields[name]):
                shown = fields[name].simpleString() if name in fields else "missing from the schema"
                return f"partition column {name!r} ({shown}): its values are rebuilt by Spark's Delta reader only"
        return ""

    def _alone_reason(self, alone: Sequence[DeltaFile]) -> str:
        """Why the files in ``alone`` cannot be read alone, or ``""``."""
        odd = [f.path for f in alone if _SCHEME.match(f.path) or f.path.startswith("/")]
        if odd or _GLOB.search(self._uri):
            return f"a path Spark would not read as given ({odd[0] if odd else self._uri!r})"
        groups = len({f.partition for f in alone})
        if groups > MAX_PARTITIONS_ALONE:
            return f"the files to read span {groups} partitions (more than {MAX_PARTITIONS_ALONE} are read whole)"
        return ""

    def _read_partitions(self, files: Sequence[DeltaFile], numbers: FileNumbers[P]) -> dict[str, P]:
        """The numbers of every file in the partitions of ``files``, through Spark's Delta reader (so with their
        deletion vectors applied), which reads only the files of those partitions."""
        from pyspark.sql import functions as F

        fields = {f.name: f.dataType for f in self.table.schema.fields}
        names = self._snap.partition_columns
        wanted = {f.partition for f in files}
        tests = [
            reduce(
                lambda a, b: a & b,
                [
                    F.col(spark_identifier(n)).eqNullSafe(F.lit(v).cast(fields[n]))
                    for n, v in zip(names, values, strict=True)
                ],
            )
            for values in sorted(wanted, key=repr)
        ]
        inside = [f for f in self._snap.files if f.partition in wanted]
        frame = self.table.where(reduce(lambda a, b: a | b, tests))
        per_file, unmatched = self._grouped(self._with_file(frame), inside, numbers)
        if unmatched:
            msg = f"Spark's Delta reader read a file that is not one of the snapshot's ({next(iter(unmatched))})"
            raise HashError(msg)
        for f in inside:  # a file none of whose rows is left (all deleted) has none to group
            if f.path not in per_file:
                per_file[f.path] = numbers.add([])
        return per_file

    def _with_file(self, frame: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        return frame.select(
            F.col("_metadata.file_path").alias(self._file), *[F.col(spark_identifier(c)) for c in self.columns]
        )

    def read_files(self, wanted: Sequence[DeltaFile], numbers: FileNumbers[P]) -> tuple[dict[str, P], str]:
        """The numbers of ``wanted`` (files without deletion vectors of a table :meth:`read` may read alone), each
        read alone; or ``({}, why)`` when what was read is not provably the table's rows of those files."""
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        if not wanted:
            return {}, ""
        parts = set(self._snap.partition_columns)
        fields = {f.name: f.dataType for f in self.table.schema.fields}
        data = T.StructType([f for f in self.table.schema.fields if f.name not in parts])
        groups: dict[tuple[Any, ...], list[DeltaFile]] = {}
        for f in wanted:
            groups.setdefault(f.partition, []).append(f)
        frames = []
        root = self._uri.rstrip("/")
        for values, files in groups.items():
            read = self._spark.read.schema(data).parquet(*[f"{root}/{unquote(f.path)}" for f in files])
            rebuilt = {
                name: F.lit(value).cast(fields[name]).alias(name)
                for name, value in zip(self._snap.partition_columns, values, strict=True)
            }
            columns = [rebuilt[c] if c in rebuilt else F.col(spark_identifier(c)) for c in self.columns]
            frames.append(read.select(F.col("_metadata.file_path").alias(self._file), *columns))
        alone = reduce(lambda a, b: a.unionByName(b), frames)
        schema = spark_schema_string(alone.drop(self._file).schema)
        if schema != self.schema:
            return {}, f"the files read alone give the schema {schema}, not the table's {self.schema}"
        per_file, unmatched = self._grouped(alone, wanted, numbers)
        if unmatched:
            return {}, f"Spark read a file that is not one of those asked for ({next(iter(unmatched))})"
        for f in wanted:
            if f.path not in per_file:
                per_file[f.path] = numbers.add([])
            count = numbers.rows(per_file[f.path])
            if f.records is not None and count != f.records:
                return {}, f"{f.path}: {count} rows read alone, the Delta log says {f.records}"
        return per_file, ""

    def read_table(self, numbers: FileNumbers[P]) -> tuple[dict[str, P], P]:
        """The whole table through Spark's Delta reader: the sums of each file that can be told, and the table's.

        Every row counts in the table's sums; a file of the snapshot gets sums (zero when no row of it is left)
        only when every row read was matched to a file of the snapshot.
        """
        frame = self._with_file(self.table)
        per_file, unmatched = self._grouped(frame, self._snap.files, numbers)
        total = numbers.add([*per_file.values(), *unmatched.values()])
        if not unmatched:
            for f in self._snap.files:
                if f.path not in per_file:
                    per_file[f.path] = numbers.add([])
        return per_file, total

    def _grouped(
        self, frame: DataFrame, files: Sequence[DeltaFile], numbers: FileNumbers[P]
    ) -> tuple[dict[str, P], dict[str, P]]:
        """Per-file numbers of ``frame`` (the file column, then the table's columns), keyed by log path, and those
        of any file Spark named that is none of ``files``."""
        found = numbers.spark(frame, self._file, self.columns, self.schema, self.engine)
        by_name: dict[str, list[DeltaFile]] = {}
        for f in files:
            by_name.setdefault(unquote(f.path).rsplit("/", 1)[-1], []).append(f)
        per_file: dict[str, P] = {}
        unmatched: dict[str, P] = {}
        for spark_path, sums in found.items():
            # Spark names the file by its URL-encoded URI, the log by its URL-encoded path under the table: match
            # the decoded path's tail (file names repeat across partition folders, so the whole relative path).
            decoded = unquote(spark_path)
            match = [f for f in by_name.get(decoded.rsplit("/", 1)[-1], []) if decoded.endswith("/" + unquote(f.path))]
            if len(match) == 1 and match[0].path not in per_file:
                per_file[match[0].path] = sums
            else:
                unmatched[spark_path] = sums
        return per_file, unmatched


def jvm_file_sums(frame: DataFrame, file: str, columns: list[str], schema: str) -> dict[str, Sums]:
    """rows-v1 sums per file of ``frame`` (the column ``file``, then ``columns``) by ``ubunye_rows_v1``, each
    file's data hash checked against the one rebuilt from its sums for ``schema``."""
    from pyspark.sql import functions as F

    require_function(frame, FUNCTION)
    call = FUNCTION + "(" + ", ".join(spark_identifier(c) for c in columns) + ")"
    out: dict[str, Sums] = {}
    for row in frame.groupBy(file).agg(F.expr(call).alias("h")).collect():
        h = row["h"]
        n, s1, s2 = add_sums([(int(h["row_count"]), int(h["sum1"]), int(h["sum2"]))])  # unsigned, as cached
        if finish(schema, n, s1, s2, engine="jvm").data_hash != h["data_hash"]:
            msg = (
                f"the JVM's data hash of {row[file]} differs from the one rebuilt from its sums for "
                f"schema {schema}: the jar and the Python package disagree (version mismatch?)"
            )
            raise HashError(msg)
        out[str(row[file])] = (n, s1, s2)
    return out


def twin_file_sums(frame: DataFrame, columns: list[str]) -> dict[str, Sums]:
    """rows-v1 sums per file of ``frame`` (a file column, then ``columns``) by the twin in ``mapInArrow``."""
    from pyspark.sql import functions as F

    names = list(columns)
    # Positional names: mapInArrow resolves names itself and trips on dots in them.
    positional = frame.toDF("_f", *[f"_{i}" for i in range(len(names))])
    parts = positional.mapInArrow(lambda it: _file_partials(it, names), _PARTS)
    totals = parts.groupBy("f").agg(*[F.sum(c).alias(c) for c in _HALVES])
    out: dict[str, Sums] = {}
    for row in totals.collect():
        n, s1_high, s1_low, s2_high, s2_low = (int(row[c]) for c in _HALVES)
        out[str(row["f"])] = (n, from_halves(s1_high, s1_low), from_halves(s2_high, s2_low))
    return out
