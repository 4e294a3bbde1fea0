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
  differ from that (:meth:`SparkDeltaFiles.read`): a deletion vector only when its deleted rows are a few runs
  of row indices (filtered out by ``_metadata.row_index``, the position Delta's vectors count by), no column
  mapping, no table feature not known to leave a file's rows alone, partition columns of types whose values
  deltalake parses exactly. The DataFrame's schema string must be the table's, and each file's row count the
  ``numRecords`` of its add action when the log has it; else the whole table is read. The data schema given is
  the reader's, field metadata included: a CHAR(n) column's values are padded on read alike.

Reading a few files alone is one Spark job and little else, because that job is most of what an incremental hash
costs on Spark:

- the table's schema is taken from the Delta log deltalake read (:func:`log_struct`) when it is one Spark's
  Delta reader gives as it is (plain types, no field metadata beside comments and the like, no void column), so
  Spark's Delta reader is not even opened: opening it at a version its session has not seen replays the log in
  Spark jobs of their own (about a second after another process committed). Whenever the reader is opened (for
  a read of the whole table), its schema string must be the log's, else a ``HashError``;
- the DataFrame is built from SQL text in few py4j calls, not from Column objects (each ``F.col`` or ``.alias`` is
  several round trips, ``F.col`` one of them a class lookup through every jar): one Parquet reader, its schema handed
  over once, for every read; each read's projection (its file, the table's columns in order, partition values as
  typed literals, text as its UTF-8 bytes: :func:`sql_string`) one ``selectExpr``, so one analysis; the jar's call
  one ``F.expr``. A read of one file names the file by a constant (its log path), so Spark neither carries a path in
  every row nor groups rows by one; files read together are told by ``_metadata.file_path``. What an incremental
  hash costs beyond that is Spark's own per-query work (the Parquet relation, analysis, planning, the one job) and,
  in a young JVM, the JIT compiling it;
- a few small files (:data:`ONE_TASK_BYTES` in all) are read in one task, so that the grouping by file needs no
  shuffle: one stage instead of two. Without the jar each Spark partition's sums are added up on the driver,
  never in a shuffle.

With the jar the sums are ``ubunye_rows_v1(<the table's columns>)`` per file; without, the twin runs in
``mapInArrow`` and each Spark partition's sums of each file come back as 32-bit halves (Spark has no unsigned
64-bit type), added up on the driver: no Spark addition, so nothing ``spark.sql.ansi.enabled`` could make
overflow (:func:`jvm_file_sums`, :func:`twin_file_sums`).

Example:
    >>> files = SparkDeltaFiles(spark, path, read_snapshot(DeltaTable(path)), None)  # doctest: +SKIP
    >>> files.schema  # doctest: +SKIP
    'struct<"id":int64>'
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import struct
from collections.abc import Iterator, Sequence
from decimal import Decimal
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
from ubunye.hashing.pieces import pieces
from ubunye.hashing.spark import session_engine
from ubunye.hashing.types import spark_identifier, spark_schema_string
from ubunye.spark.session import FUNCTION

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

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
#: Files read alone whose sizes add up to at most this are read in one Spark task: the grouping by file then needs
#: no shuffle (one stage, not two). A few MB take one task less time than a stage costs; more keep Spark's split.
ONE_TASK_BYTES = 8 * 2**20
#: Field metadata known to change neither a column's type as Spark's Delta reader gives it nor its values: a log
#: schema with no other (CHAR and VARCHAR, collations, column mapping, type changes...) is not taken for the
#: reader's, which is then opened for its schema.
PLAIN_METADATA = frozenset(
    {
        "comment",
        "delta.generationExpression",
        "delta.identity.start",
        "delta.identity.step",
        "delta.identity.highWaterMark",
        "delta.identity.allowExplicitInsert",
        "delta.invariants",
    }
)
#: The Delta protocol's primitive type names whose Spark type the reader gives as the log names it (``void``, which
#: the reader drops, is not one of them), beside ``decimal(p,s)``.
_PLAIN_TYPES = frozenset(
    {
        *("boolean", "byte", "short", "integer", "long", "float", "double"),
        *("string", "binary", "date", "timestamp", "timestamp_ntz"),
    }
)
_DECIMAL = re.compile(r"^decimal\(\s*\d+\s*,\s*\d+\s*\)$")
#: The field metadata Spark keeps a CHAR(n) or VARCHAR(n) column's declared type in (the column is a string).
_CHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"
#: The session settings that decide whether Spark pads a CHAR(n) column's values on read.
_CHAR_CONFS = ("spark.sql.readSideCharPadding", "spark.sql.legacy.charVarcharAsString")
#: Field metadata (keys starting so) that maps a column-mapped table's logical columns to its files' columns.
_MAPPING_KEYS = ("delta.columnMapping.", "parquet.field.")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_GLOB = re.compile(r"[{}\[\]*?\\]")  # Spark expands these in a path it is given
_HALVES = ("n", "s1_hi", "s1_lo", "s2_hi", "s2_lo")
_PARTS = "f string, " + ", ".join(f"{c} long" for c in _HALVES)


def _rebuildable(t: DataType) -> bool:
    """Partition types whose values deltalake parses as Delta's reader casts them (no time zone, no encoding)."""
    from pyspark.sql import types as T

    simple = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType, T.DecimalType)
    return isinstance(t, (*simple, T.BooleanType, T.DateType)) or type(t) is T.StringType


def sql_string(text: str) -> str:
    """``text`` as a Spark SQL string: its UTF-8 bytes in a binary literal, cast. No quote, backslash or unicode in
    it can end the literal or be read as an escape, whatever ``spark.sql.parser.escapedStringLiterals`` says.

    Example:
        >>> sql_string("a'b")
        "CAST(X'612762' AS STRING)"
    """
    return f"CAST(X'{text.encode('utf-8').hex().upper()}' AS STRING)"


def _sql_value(value: object) -> str:
    """A partition value (as deltalake parses it) as Spark SQL of the type ``F.lit`` gives it, exactly: ints as
    integer literals, floats through their shortest text (NaN and infinities by Java's names), decimals as BigDecimal
    literals of their own scale. A date goes as ISO text: a ``datetime.date`` handed to the JVM (``F.lit``) becomes a
    java.sql.Date, whose hybrid Julian calendar moves the days before 1582-10-15 (1582-10-10 became 1582-10-20: a
    wrong incremental hash) and refuses years before 1000; a cast of text is proleptic Gregorian, as Spark's dates
    are since 3.0.

    Raises:
        ValueError: a value with no exact literal (a type deltalake does not give for a partition column read
            alone, a text that is not UTF-8, a decimal NaN).

    Example:
        >>> [_sql_value(v) for v in (None, True, -7, -0.0, float("nan"), Decimal("-12.50"), dt.date(999, 6, 15))]
        ['NULL', 'TRUE', '-7', "CAST('-0.0' AS DOUBLE)", "CAST('NaN' AS DOUBLE)", '-12.50BD', "'0999-06-15'"]
    """
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = "NaN" if math.isnan(value) else repr(value).replace("inf", "Infinity")
        return f"CAST('{text}' AS DOUBLE)"
    if isinstance(value, Decimal) and value.is_finite():
        return format(value, "f") + "BD"
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return f"'{value.isoformat()}'"
    if isinstance(value, str):
        return sql_string(value)  # UnicodeEncodeError (a ValueError) for a lone surrogate
    raise ValueError(f"no Spark SQL literal for the partition value {value!r} ({type(value).__name__})")


def _typed_literal(value: object, t: DataType) -> str:
    """A partition value as Spark SQL of the table's type ``t``: what ``F.lit(value).cast(t)`` gives, in text."""
    return f"CAST({_sql_value(value)} AS {t.simpleString()})"


def _plain(tree: object) -> bool:
    """Whether a Delta log schema (its JSON, parsed) is one Spark's Delta reader gives as it is: see
    :func:`log_struct`."""
    if isinstance(tree, str):
        return tree in _PLAIN_TYPES or _DECIMAL.match(tree) is not None
    if not isinstance(tree, dict):
        return False
    kind = tree.get("type")
    if kind == "struct":
        fields = tree.get("fields")
        return isinstance(fields, list) and all(
            isinstance(f, dict)
            and isinstance(f.get("metadata", {}), dict)
            and set(f.get("metadata", {})) <= PLAIN_METADATA
            and _plain(f.get("type"))
            for f in fields
        )
    if kind == "array":
        return _plain(tree.get("elementType"))
    if kind == "map":
        return _plain(tree.get("keyType")) and _plain(tree.get("valueType"))
    return False


def log_struct(schema_json: str) -> StructType | None:
    """The schema Spark's Delta reader gives a table, from its Delta log's schema (``DeltaSnapshot.schema_json``),
    or None when that is not known to be the same: the reader builds its schema from the log's (Spark's own JSON),
    only dropping void columns and field metadata, so a schema of plain types (no ``void``) whose fields carry no
    metadata but :data:`PLAIN_METADATA` is the reader's, name for name and type for type.

    Example:
        >>> log_struct('{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}')
        StructType([StructField('a', LongType(), True)])
        >>> log_struct('{"type":"struct","fields":[{"name":"a","type":"void","nullable":true,"metadata":{}}]}')
    """
    from pyspark.sql import types as T

    try:
        tree = json.loads(schema_json)
    except ValueError:
        return None
    if not isinstance(tree, dict) or tree.get("type") != "struct" or not _plain(tree):
        return None
    try:
        return T.StructType.fromJson(tree)
    except (KeyError, TypeError, ValueError):
        return None


def _mapping(tree: object, path: tuple[str, ...] = ()) -> list[Any]:
    """Every field of a Delta log schema (its JSON, parsed), nested ones too, with its column mapping metadata
    (physical name, id, nested ids): what tells which column of a Parquet file each logical column reads."""
    out: list[Any] = []
    if not isinstance(tree, dict):
        return out
    kind = tree.get("type")
    if kind == "struct":
        for f in tree.get("fields") or ():
            if not isinstance(f, dict):
                continue
            name = (*path, str(f.get("name")))
            meta = f.get("metadata")
            meta = meta if isinstance(meta, dict) else {}
            kept = sorted([k, json.dumps(v, sort_keys=True)] for k, v in meta.items() if k.startswith(_MAPPING_KEYS))
            out.append([list(name), kept])
            out.extend(_mapping(f.get("type"), name))
    elif kind == "array":
        out.extend(_mapping(tree.get("elementType"), (*path, "element")))
    elif kind == "map":
        out.extend(_mapping(tree.get("keyType"), (*path, "key")))
        out.extend(_mapping(tree.get("valueType"), (*path, "value")))
    return out


def mapping_digest(schema_json: str) -> str:
    """A digest of a column-mapped table's mapping of logical to physical columns (:func:`_mapping`): a column
    renamed, dropped or added under column mapping changes it, though the rows-v1 schema string may stay the same
    (two columns of one type swapping names; one dropped and another of its name and type added).

    Example:
        >>> f = '{"name":"a","type":"long","nullable":true,"metadata":{"delta.columnMapping.physicalName":"col-%s"}}'
        >>> one, two = (mapping_digest('{"type":"struct","fields":[%s]}' % (f % i)) for i in (1, 2))
        >>> one == two, one.startswith("sha256:")
        (False, True)
    """
    try:
        tree = json.loads(schema_json)
    except ValueError:
        tree = schema_json  # not JSON: the text itself
    text = json.dumps(_mapping(tree) if isinstance(tree, dict) else [str(tree)], sort_keys=True)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


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
            found = [sum_lines(encode_batch(piece)) for piece in pieces(rows)]
            acc[path] = add_sums([acc.get(path, (0, 0, 0)), *found])
    out: dict[str, list[Any]] = {c: [] for c in ("f", *_HALVES)}
    for path, (n, s1, s2) in acc.items():
        for column, value in zip(out, (path, n, *to_halves(s1), *to_halves(s2)), strict=True):
            out[column].append(value)
    schema = pa.schema([("f", pa.string()), *[(c, pa.int64()) for c in list(out)[1:]]])
    yield pa.RecordBatch.from_pydict(out, schema=schema)


def _partition_key(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """A partition's values as a key that tells what Python's equality does not: 0.0 from -0.0 (equal to Python, two
    partitions to Delta: the files of both were read as one, every row given the first's sign) and NaN from
    nothing (a NaN equals no NaN: the files of a NaN partition were not found among the snapshot's).

    Example:
        >>> nan = float("nan")
        >>> _partition_key((0.0,)) == _partition_key((-0.0,)), _partition_key((nan,)) == _partition_key((float(nan),))
        (False, True)
    """
    return tuple(
        ("float", "nan" if math.isnan(v) else struct.pack(">d", v)) if isinstance(v, float) else v for v in values
    )


def _literal_reason(files: Sequence[DeltaFile], names: Sequence[str]) -> str:
    """Why a partition value of ``files`` cannot be written as an exact SQL literal (never expected of the values
    deltalake parses for the types read alone), or ``""``."""
    for f in files:
        for name, value in zip(names, f.partition, strict=True):
            try:
                _sql_value(value)
            except ValueError as exc:
                return f"partition column {name!r} of {f.path}: {exc}"
    return ""


#: The session settings that rebase dates and timestamps read from Parquet files not written by Spark.
_REBASE_CONFS = ("spark.sql.parquet.datetimeRebaseModeInRead", "spark.sql.parquet.int96RebaseModeInRead")


def _has_datetime(kind: Any) -> bool:  # noqa: ANN401 (a pyspark DataType)
    """Whether the Spark type ``kind`` holds a date or a timestamp, at any depth."""
    from pyspark.sql.types import ArrayType, DateType, MapType, StructType, TimestampNTZType, TimestampType

    if isinstance(kind, DateType | TimestampType | TimestampNTZType):
        return True
    if isinstance(kind, StructType):
        return any(_has_datetime(f.dataType) for f in kind.fields)
    if isinstance(kind, ArrayType):
        return _has_datetime(kind.elementType)
    if isinstance(kind, MapType):
        return _has_datetime(kind.keyType) or _has_datetime(kind.valueType)
    return False


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
        self._table: DataFrame | None = None
        struct = log_struct(snapshot.schema_json) if snapshot.schema_json else None
        if struct is None:  # the reader's own schema: it is opened now
            self._table = self._open()
            struct = self._table.schema
        #: The table's Spark schema, as Spark's Delta reader gives it.
        self.struct = struct
        self.columns = list(struct.names)
        self.schema = spark_schema_string(struct)  # a column rows-v1 cannot hash fails here, named
        self.engine = session_engine(spark, engine)
        #: What decides the values the reader gives beside the schema string (``FileSums.read``), ``""`` when
        #: nothing does: cached numbers made under another are not this table's rows as read now.
        self.read_setup = self._read_setup()
        lower = {c.lower() for c in self.columns}
        self._file = next(n for n in (f"_ubunye_file{i}" for i in range(len(lower) + 1)) if n not in lower)

    def _conf(self, key: str) -> str:
        try:
            return str(self._spark.conf.get(key))
        except Exception:  # not a setting this Spark knows: not set
            return "unset"

    def _read_setup(self) -> str:
        """What beside the schema string decides the values Spark's Delta reader gives this table's files: the
        column mapping (a rename or a drop and re-add under it may keep the schema string and change the column
        a name reads), CHAR and VARCHAR columns with the session settings that pad CHAR values on read (ALTER
        COLUMN c TYPE STRING, or the padding turned off, keeps the schema string and drops the padding), and the
        table features not known to leave a file's rows alone. ``""`` when none applies (a plain table)."""
        snap = self._snap
        parts = []
        mode = str(snap.configuration.get("delta.columnMapping.mode", "none"))
        if mode.lower() != "none":
            parts.append(f"column mapping {mode} {mapping_digest(snap.schema_json)}")
        fields = self.struct.fields
        chars = [f"{spark_identifier(f.name)} {f.metadata[_CHAR_KEY]}" for f in fields if _CHAR_KEY in f.metadata]
        if chars:
            confs = ", ".join(f"{k}={self._conf(k)}" for k in _CHAR_CONFS)
            parts.append(f"CHAR/VARCHAR columns {', '.join(chars)} ({confs})")
        unknown = sorted(snap.features - SAFE_FEATURES)
        if unknown:
            parts.append(f"table features {', '.join(unknown)}")
        # A timestamp partition value without a zone in the log (as deltalake writes it) is read in the session's
        # time zone; dates and timestamps in files written without Spark's version metadata (deltalake's) are
        # rebased on read as the session's rebase modes say (LEGACY moves 1500-01-01 to 1499-12-23).
        kinds = {f.name: f.dataType.simpleString() for f in fields}
        if any(kinds.get(name) == "timestamp" for name in snap.partition_columns):
            parts.append(f"session time zone {self._conf('spark.sql.session.timeZone')}")
        if any(_has_datetime(f.dataType) for f in fields):
            parts.append(", ".join(f"{k}={self._conf(k)}" for k in _REBASE_CONFS))
        return "; ".join(parts)

    def _open(self) -> DataFrame:
        return self._spark.read.format("delta").option("versionAsOf", self._snap.version).load(self._uri)

    @property
    def table(self) -> DataFrame:
        """The snapshot through Spark's Delta reader, opened on first use (files read alone never need it).

        Raises:
            HashError: the reader's schema string is not the one taken from the Delta log (never a hash of a
                schema the reader does not read).
        """
        if self._table is None:
            table = self._open()
            schema = spark_schema_string(table.schema)
            if schema != self.schema:
                msg = (
                    f"Spark's Delta reader reads {self._uri} with the schema {schema}, not {self.schema} as its "
                    "Delta log's schema gave: ubunye took one for the other (please report it)"
                )
                raise HashError(msg)
            self._table = table
        return self._table

    def read(self, wanted: Sequence[DeltaFile], numbers: FileNumbers[P]) -> tuple[dict[str, P], P | None, str]:
        """The numbers of (at least) the files in ``wanted``, read the cheapest way that is exact.

        Returns ``(per_file, total, why)``: ``total`` is None when only some files were read (the caller adds the
        cached numbers of the others); when the whole table had to be read, it is the table's and ``why`` says
        why. Files with deletion vectors are read through Spark's Delta reader restricted to their partitions
        (an exact filter on partition columns, which the reader does prune by), others alone.
        """
        if not wanted:
            return {}, None, ""
        why = self._table_reason() or _literal_reason(wanted, self._snap.partition_columns)
        got: dict[str, P] = {}
        # A file whose deletion vector is spelt out (its deleted rows as a filter of row indices Spark plans well,
        # the log's row count known to check them by) is read alone with those rows filtered out: what Delta's
        # reader does. Each is a read of its own: a partitioned table with more than the reads allowed alone
        # reads their partitions through Delta's reader instead, as for a vector that is not spelt out.
        spelt = [f for f in wanted if f.deletion_vector is not None and _spelt_out(f)]
        plain = len({_partition_key(f.partition) for f in wanted if f.deletion_vector is None})
        if self._snap.partition_columns and plain + len(spelt) > MAX_PARTITIONS_ALONE:
            spelt = []
        alone_dv = {f.path for f in spelt}
        with_dv = [f for f in wanted if f.deletion_vector is not None and f.path not in alone_dv]
        if not why and with_dv:
            if self._snap.partition_columns:
                got = self._read_partitions(with_dv, numbers)
            else:
                why = (
                    f"{len(with_dv)} file(s) to read have deletion vectors too scattered to filter by row index "
                    f"(more than {MAX_LISTED_ROWS:,} deleted rows in short runs or {MAX_RANGES} longer runs) or no "
                    "row count in the log, which Spark's Delta reader applies only reading the whole table (it is "
                    "not partitioned)"
                )
        alone = [f for f in wanted if (f.deletion_vector is None or f.path in alone_dv) and f.path not in got]
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
        if snap.empty_partitions:
            # deltalake parses the log's "" as null; Spark's Delta reader gives a string column "": a file of either
            # would be rebuilt with a null (and a partition's filter would miss the other), so neither is read alone.
            shown = ", ".join(repr(c) for c in sorted(snap.empty_partitions))
            return (
                f"partition column(s) {shown} hold the empty string in the Delta log, which deltalake reads as null: "
                "its files are told from null ones by Spark's Delta reader only"
            )
        fields = {f.name: f.dataType for f in self.struct.fields}
        declared = {f.name: str(f.metadata.get(_CHAR_KEY, "")) for f in self.struct.fields}
        for name in snap.partition_columns:
            if name not in fields or not _rebuildable(fields[name]):
                shown = fields[name].simpleString() if name in fields else "missing from the schema"
                return f"partition column {name!r} ({shown}): its values are rebuilt by Spark's Delta reader only"
            if declared[name].lower().startswith("char"):
                # The log holds a CHAR partition value as written (unpadded); Spark's Delta reader pads it on read.
                return (
                    f"partition column {name!r} ({declared[name]}): Spark's Delta reader pads its values, which are "
                    "rebuilt by it only"
                )
        return ""

    def _alone_reason(self, alone: Sequence[DeltaFile]) -> str:
        """Why the files in ``alone`` cannot be read alone, or ``""``."""
        # Spark expands glob characters in a path it is given (writers escape them in partition folders: never seen)
        odd = [
            f.path for f in alone if _SCHEME.match(f.path) or f.path.startswith("/") or _GLOB.search(unquote(f.path))
        ]
        if odd or _GLOB.search(self._uri):
            return f"a path Spark would not read as given ({odd[0] if odd else self._uri!r})"
        # one read per partition, and one per file with a deletion vector (its own row filter)
        groups = len({(_partition_key(f.partition), f.path if f.deletion_vector is not None else None) for f in alone})
        if groups > MAX_PARTITIONS_ALONE:
            return (
                f"the files to read take {groups} reads (one per partition, and per file with a deletion vector): "
                f"more than {MAX_PARTITIONS_ALONE} are read whole"
            )
        return ""

    def _read_partitions(self, files: Sequence[DeltaFile], numbers: FileNumbers[P]) -> dict[str, P]:
        """The numbers of every file in the partitions of ``files``, through Spark's Delta reader (so with their
        deletion vectors applied), which reads only the files of those partitions."""
        fields = {f.name: f.dataType for f in self.struct.fields}
        names = self._snap.partition_columns
        wanted = {_partition_key(f.partition): f.partition for f in files}
        # One filter in SQL text (one py4j call), each partition's values compared null-safe; a balanced OR keeps the
        # parser's and planner's recursion shallow however many partitions there are.
        tests = [
            "("
            + " AND ".join(
                f"{spark_identifier(n)} <=> {_typed_literal(v, fields[n])}" for n, v in zip(names, values, strict=True)
            )
            + ")"
            for _, values in sorted(wanted.items(), key=lambda kv: repr(kv[0]))
        ]
        inside = [f for f in self._snap.files if _partition_key(f.partition) in wanted]
        frame = self.table.where(_any_of(tests))
        per_file, unmatched = self._grouped(self._with_file(frame), inside, numbers)
        if unmatched:
            msg = f"Spark's Delta reader read a file that is not one of the snapshot's ({next(iter(unmatched))})"
            raise HashError(msg)
        for f in inside:  # a file none of whose rows is left (all deleted) has none to group
            if f.path not in per_file:
                per_file[f.path] = numbers.add([])
        return per_file

    def _with_file(self, frame: DataFrame) -> DataFrame:
        # SQL text: a py4j call per column for the projection, where each F.col is a dozen
        return frame.selectExpr(
            f"_metadata.file_path AS {spark_identifier(self._file)}", *[spark_identifier(c) for c in self.columns]
        )

    def read_files(self, wanted: Sequence[DeltaFile], numbers: FileNumbers[P]) -> tuple[dict[str, P], str]:
        """The numbers of ``wanted`` (files without deletion vectors of a table :meth:`read` may read alone), each
        read alone; or ``({}, why)`` when what was read is not provably the table's rows of those files."""
        from pyspark.sql import types as T

        if not wanted:
            return {}, ""
        names = self._snap.partition_columns
        data = T.StructType([f for f in self.struct.fields if f.name not in set(names)])
        # Files without a deletion vector are read together per partition; one with, alone, filtered by its own.
        groups: dict[tuple[Any, ...], list[DeltaFile]] = {}
        for f in wanted:
            own = f.path if f.deletion_vector is not None else None  # read alone, filtered by its own vector
            groups.setdefault((_partition_key(f.partition), own), []).append(f)
        # Few py4j calls and Dataset operations (each of those an analysis of its plan): one reader, its schema
        # handed over once, for every read; each read's projection one selectExpr of SQL text (see the module's
        # docstring). The data schema's nullability does not matter: Spark's file sources read every given field as
        # nullable.
        reader = self._spark.read.format("parquet").schema(data)
        root = self._uri.rstrip("/")
        frames = []
        for files in groups.values():
            values = files[0].partition  # one partition's files: their values are alike, -0.0 and NaN included
            paths = [f"{root}/{unquote(f.path)}" for f in files]
            read = reader.load(paths[0] if len(paths) == 1 else paths)
            if files[0].deleted is not None and files[0].deleted.runs:
                read = read.where(_kept_rows(files[0].deleted.runs))
            # A read of one file names it itself (its log path, a constant): Spark then neither carries the
            # file's path in every row nor groups rows by it; several files in one read are told by Spark's own.
            file = sql_string(files[0].path) if len(files) == 1 else "_metadata.file_path"
            frames.append(read.selectExpr(*self._projection(file, values)))
        alone = reduce(lambda a, b: a.union(b), frames)  # by position: every projection lists the columns alike
        if sum(f.size for f in wanted) <= ONE_TASK_BYTES:  # one task: the grouping by file needs no shuffle
            alone = alone.coalesce(1)
        schema = spark_schema_string(T.StructType(alone.schema.fields[1:]))
        if schema != self.schema:
            return {}, f"the files read alone give the schema {schema}, not the table's {self.schema}"
        per_file, unmatched = self._grouped(alone, wanted, numbers)
        if unmatched:
            return {}, f"Spark read a file that is not one of those asked for ({next(iter(unmatched))})"
        for f in wanted:
            if f.path not in per_file:
                per_file[f.path] = numbers.add([])
            count = numbers.rows(per_file[f.path])
            deleted = f.deleted.count if f.deleted is not None else 0
            if f.records is not None and count != f.records - deleted:
                said = f"{f.records} less the {deleted} its deletion vector deletes" if deleted else f"{f.records}"
                return {}, f"{f.path}: {count} rows read alone, the Delta log says {said}"
        return per_file, ""

    def _projection(self, file: str, values: tuple[Any, ...]) -> list[str]:
        """The SQL of a read's columns: its file (the SQL ``file``), then the table's columns in the table's order,
        each partition column its value (``values``, in the log's order) typed as the table's column."""
        fields = {f.name: f.dataType for f in self.struct.fields}
        rebuilt = dict(zip(self._snap.partition_columns, values, strict=True))
        return [
            f"{file} AS {spark_identifier(self._file)}",
            *[
                f"{_typed_literal(rebuilt[c], fields[c])} AS {spark_identifier(c)}" if c in rebuilt
                else spark_identifier(c)
                for c in self.columns
            ],
        ]  # fmt: skip

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
        by_path = {f.path: f for f in files}
        per_file: dict[str, P] = {}
        unmatched: dict[str, P] = {}
        for spark_path, sums in found.items():
            # A file read alone names itself by its log path (relative: never one of Spark's URIs). Spark names a
            # file by its URL-encoded URI, the log by its URL-encoded path under the table: match the decoded
            # path's tail (file names repeat across partition folders, so the whole relative path).
            decoded = unquote(spark_path)
            match = (
                [by_path[spark_path]]
                if spark_path in by_path
                else [f for f in by_name.get(decoded.rsplit("/", 1)[-1], []) if decoded.endswith("/" + unquote(f.path))]
            )
            if len(match) == 1 and match[0].path not in per_file:
                per_file[match[0].path] = sums
            else:
                unmatched[spark_path] = sums
        return per_file, unmatched


#: Most deleted row indices a file's filter lists (an IN list, which Spark turns into one hash set), and most
#: longer runs of them it tests beside (a BETWEEN each, in a balanced OR: Spark's planner recurses over the
#: expression, and measured, 2,048 BETWEENs in an OR chain overflow its stack, 1,600 exhaust a 1 GiB heap).
#: Planning the SQL text grows with the list: 0.1 s for 1,000 indices, seconds for 10,000 (on a loaded machine);
#: past these limits the table reader reads (the whole table, or the file's partitions).
MAX_LISTED_ROWS = 4_096
MAX_RANGES = 64
#: Runs up to this long are listed row by row; longer ones are ranges.
_SHORT_RUN = 16


def _filter_parts(runs: Sequence[tuple[int, int]]) -> tuple[list[int], list[tuple[int, int]]] | None:
    """The row indices listed and the ranges of a filter deleting ``runs``, or None past the limits above."""
    listed = [i for a, b in runs if b - a < _SHORT_RUN for i in range(a, b + 1)]
    ranges = [(a, b) for a, b in runs if b - a >= _SHORT_RUN]
    if len(listed) > MAX_LISTED_ROWS or len(ranges) > MAX_RANGES:
        return None
    return listed, ranges


def _spelt_out(f: DeltaFile) -> bool:
    """Whether a file with a deletion vector can be read alone: its deleted rows a filter within the limits above,
    and the log's row count known (the rows read alone must be that count less the deleted ones)."""
    runs = f.deleted.runs if f.deleted is not None else None
    return runs is not None and f.records is not None and _filter_parts(runs) is not None


def _any_of(terms: Sequence[str]) -> str:
    """``terms`` joined by OR as a balanced tree: its depth grows with the log of their count."""
    if len(terms) == 1:
        return terms[0]
    half = len(terms) // 2
    return f"({_any_of(terms[:half])} OR {_any_of(terms[half:])})"


def _kept_rows(runs: Sequence[tuple[int, int]]) -> str:
    """A Spark SQL condition keeping the rows of a Parquet file read alone whose row index is in none of ``runs``
    (within the limits of :func:`_filter_parts`).

    Example:
        >>> _kept_rows([(3, 3), (5, 6), (20, 40)])
        'NOT ((_metadata.row_index IN (3, 5, 6) OR _metadata.row_index BETWEEN 20 AND 40))'
    """
    parts = _filter_parts(runs)
    if parts is None:
        raise ValueError(f"{len(runs)} runs of deleted rows are more than a filter of row indices takes")
    listed, ranges = parts
    terms = [f"_metadata.row_index IN ({', '.join(map(str, listed))})"] if listed else []
    spans = [f"_metadata.row_index BETWEEN {a} AND {b}" for a, b in ranges]
    if spans:
        terms.append(_any_of(spans))
    return "NOT (" + _any_of(terms) + ")"


def jvm_file_sums(frame: DataFrame, file: str, columns: list[str], schema: str) -> dict[str, Sums]:
    """rows-v1 sums per file of ``frame`` (the column ``file``, then ``columns``) by ``ubunye_rows_v1``, each
    file's data hash checked against the one rebuilt from its sums for ``schema``."""
    from pyspark.sql import functions as F

    require_function(frame, FUNCTION)
    # The alias inside the SQL text and the key as the frame's own column: F.col and .alias are several py4j round
    # trips each, frame[name] one.
    call = FUNCTION + "(" + ", ".join(spark_identifier(c) for c in columns) + ") AS h"
    out: dict[str, Sums] = {}
    for row in frame.groupBy(frame[spark_identifier(file)]).agg(F.expr(call)).collect():
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
    """rows-v1 sums per file of ``frame`` (a file column, then ``columns``) by the twin in ``mapInArrow``: one row
    per file and Spark partition comes back, added up here (no shuffle, and no Spark arithmetic on a sum)."""
    names = list(columns)
    # Positional names: mapInArrow resolves names itself and trips on dots in them.
    positional = frame.toDF("_f", *[f"_{i}" for i in range(len(names))])
    parts: dict[str, list[Sums]] = {}
    for row in positional.mapInArrow(lambda it: _file_partials(it, names), _PARTS).collect():
        n, s1_high, s1_low, s2_high, s2_low = (int(row[c]) for c in _HALVES)
        parts.setdefault(str(row["f"]), []).append((n, from_halves(s1_high, s1_low), from_halves(s2_high, s2_low)))
    return {path: add_sums(found) for path, found in parts.items()}
