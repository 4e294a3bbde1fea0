"""The data files of a Delta table's snapshot, each with the identity its rows-v1 sums are kept under, and those
sums on Arrow, read by the very reader that reads the table whole.

rows-v1 sums add (docs/rows-v1.md section 8), so a table's ``(row_count, sum1, sum2)`` are the sums over its data
files of each file's own. A Delta data file never changes once written (its name holds a UUID): its rows are a
function of its path, its size and modification time in the add action, and its deletion vector, if it has one.
That identity is what a cache of per-file sums is keyed by (:class:`FileSums`), and of per-file profile-v1
partials (:class:`FileProfiles`: a profile's numbers add up the same way, section 12).

On Arrow the table's rows are exactly what ``DeltaTable.to_pyarrow_table()`` returns (the pandas engine's read),
INT96 timestamps read in microseconds (:func:`parquet_read_options`): a pyarrow dataset of one fragment per add
action, each read with the table's schema (a column a file lacks is null, partition columns come from the add
action's partitionValues). :func:`arrow_file_sums` (and
:func:`arrow_file_parts`, for any per-file numbers) reads a file as a dataset of that one fragment with that same
schema, format and filesystem, so its rows are the rows the whole read takes from that file, by construction;
deltalake refuses both reads alike for what it cannot read (deletion vectors, column mapping).

Example:
    >>> import tempfile, pyarrow as pa
    >>> from deltalake import DeltaTable, write_deltalake
    >>> path = tempfile.mkdtemp() + "/t"
    >>> write_deltalake(path, pa.table({"a": [1, 2]}))
    >>> write_deltalake(path, pa.table({"a": [3]}), mode="append")
    >>> table = DeltaTable(path)
    >>> snap = read_snapshot(table)
    >>> dataset = arrow_dataset(table)
    >>> sums, missing = arrow_file_sums(dataset, [f.path for f in snap.files])
    >>> from ubunye.hashing.digest import add_sums, finish
    >>> from ubunye.hashing import hash_frame
    >>> from ubunye.hashing.types import schema_string
    >>> full = hash_frame(table.to_pyarrow_table())
    >>> finish(schema_string(dataset.schema), *add_sums(sums.values())) == full
    True
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import importlib.util
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import unquote

import pyarrow as pa

from ubunye.hashing.digest import add_sums, sum_lines
from ubunye.hashing.encode import encode_batch
from ubunye.hashing.frame import BATCH_ROWS
from ubunye.hashing.pieces import pieces
from ubunye.hashing.profile import ProfileSums
from ubunye.hashing.types import schema_string

if TYPE_CHECKING:
    import numpy as np
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

#: ``(row_count, sum1, sum2)`` of some rows, sums unsigned (docs/rows-v1.md section 8).
Sums = tuple[int, int, int]
#: What is kept per file: its ``Sums``, or its ``ProfileSums`` when the table is profiled.
P = TypeVar("P")


@dataclass(frozen=True)
class Deleted:
    """The rows a deletion vector deletes from its file, by row index (the row's position in the Parquet file, as
    Spark's ``_metadata.row_index`` gives it).

    Attributes:
        count: how many rows it deletes.
        runs: the deleted indices as inclusive ``(first, last)`` runs, increasing; None when there are more than
            :data:`MAX_DELETED_RUNS` (then the file is only read through the table reader).

    Example:
        >>> import numpy as np
        >>> _deleted(np.array([True, False, False, True, False]))
        Deleted(count=3, runs=((1, 2), (4, 4)))
    """

    count: int
    runs: tuple[tuple[int, int], ...] | None


#: Most runs of deleted rows a file's deletion vector is spelt out in (a filter term each) for reading it alone.
MAX_DELETED_RUNS = 2048


@dataclass(frozen=True)
class DeltaFile:
    """One add action of a snapshot.

    Attributes:
        path: the path as the log holds it (relative to the table, URL-encoded).
        size: its ``size`` in bytes.
        modified: its ``modificationTime`` (milliseconds since the epoch).
        deletion_vector: ``None`` without a deletion vector, else a digest of the rows it keeps (see
            :func:`read_snapshot`): a changed deletion vector is a changed identity.
        records: ``numRecords`` of its statistics (before any deletion vector), None when the log has none.
        partition: its partition values, typed by the table schema as deltalake parses them, aligned with
            :attr:`DeltaSnapshot.partition_columns`.
        deleted: with a deletion vector (read with ``deletion_vectors=True``), the rows it deletes.
    """

    path: str
    size: int
    modified: int
    deletion_vector: str | None = None
    records: int | None = None
    partition: tuple[Any, ...] = ()
    deleted: Deleted | None = field(default=None, compare=False, repr=False)

    @property
    def identity(self) -> tuple[int, int, str | None]:
        """What, beside the path, tells this file's rows: the key its sums are cached under."""
        return self.size, self.modified, self.deletion_vector


@dataclass(frozen=True)
class DeltaSnapshot:
    """The files of one version of a Delta table, and what of its log decides how a file may be read alone.

    Attributes:
        version: the version read.
        table_id: ``metaData.id``: a table recreated at the same path has another.
        partition_columns: the partition columns, in the log's order.
        files: one :class:`DeltaFile` per add action.
        features: the reader and writer table features the protocol names.
        configuration: ``metaData.configuration`` (``delta.columnMapping.mode``...).
        schema_json: the table's schema in the Delta protocol's JSON (Spark's ``StructType`` JSON), as deltalake
            gives it; ``""`` when unknown.
        empty_partitions: the partition columns some file of which has the empty string as its value in the log.
            deltalake parses it as null (:attr:`DeltaFile.partition` is None for it, as for a null), Spark's Delta
            reader gives a string column the empty string: which a file holds cannot be told from ``files``.
    """

    version: int
    table_id: str
    partition_columns: tuple[str, ...]
    files: tuple[DeltaFile, ...]
    features: frozenset[str]
    configuration: Mapping[str, str]
    schema_json: str = ""
    empty_partitions: frozenset[str] = frozenset()


def _reusable(files: Mapping[str, tuple[tuple[int, int, str | None], P]], file: DeltaFile) -> P | None:
    """What ``files`` keeps for ``file`` when it was kept for the same identity (size, mtime, deletion vector)."""
    entry = files.get(file.path)
    if entry is None or tuple(entry[0]) != file.identity:
        return None
    return entry[1]


@dataclass(frozen=True)
class FileSums:
    """Per-file rows-v1 sums of one Delta table as one reader reads it: what a cache keeps between runs.

    Sums of a file are only valid for the same table (``table_id``), the same reader (``"deltalake"`` or
    ``"spark"``: the two may type a column differently), the same schema string and the same ``read`` (what
    else decides the values the reader gives, beside the schema string: on Spark a column-mapped table's mapping,
    CHAR columns and the session's padding of them: ``SparkDeltaFiles.read_setup``; ``""`` when nothing does);
    ``files`` maps a file's log path to its identity (:attr:`DeltaFile.identity`) and sums.

    Example:
        >>> files = {"p.parquet": ((10, 5, None), (2, 7, 9))}
        >>> s = FileSums("/data/t", "id-1", "deltalake", 'struct<"a":int64>', 3, files)
        >>> s.reusable(DeltaFile("p.parquet", 10, 5)), s.reusable(DeltaFile("p.parquet", 10, 6))
        ((2, 7, 9), None)
    """

    table: str
    table_id: str
    reader: str
    schema: str
    version: int
    files: Mapping[str, tuple[tuple[int, int, str | None], Sums]]
    read: str = ""

    def reusable(self, file: DeltaFile) -> Sums | None:
        """The cached sums of ``file`` when its identity is the one they were computed for, else None."""
        return _reusable(self.files, file)


@dataclass(frozen=True)
class FileProfiles:
    """Per-file profile-v1 partials (docs/rows-v1.md section 12) of one Delta table as one reader reads it, for one
    key and bucket count: what a cache keeps between runs of a profiled input.

    A file's partial holds its rows-v1 sums, its column sums, null and NaN counts and its buckets, all counts and
    sums, so the table's profile is their :func:`~ubunye.hashing.profile.merge`. Partials are only valid for the
    same table, reader, schema string, ``read`` (as for :class:`FileSums`), ``key`` (sorted, or None) and
    ``buckets`` (0 for none): rows fall in other buckets under another key or count.

    Example:
        >>> from ubunye.hashing.profile import empty_sums
        >>> part = empty_sums('struct<"a":int64>', (("a", "int64"),), None, 2)
        >>> files = {"p.parquet": ((10, 5, None), part)}
        >>> p = FileProfiles("/data/t", "id-1", "deltalake", part.schema, 3, None, 2, files)
        >>> p.reusable(DeltaFile("p.parquet", 10, 5)) == part, p.reusable(DeltaFile("p.parquet", 11, 5))
        (True, None)
    """

    table: str
    table_id: str
    reader: str
    schema: str
    version: int
    key: tuple[str, ...] | None
    buckets: int
    files: Mapping[str, tuple[tuple[int, int, str | None], ProfileSums]]
    read: str = ""

    def reusable(self, file: DeltaFile) -> ProfileSums | None:
        """The cached partial of ``file`` when its identity is the one it was computed for, else None."""
        return _reusable(self.files, file)


class SumsCache(Protocol):
    """Where per-file sums and profiles are kept between runs (``ubunye.lineage.file_sums.FileSumsCache``: in the
    record store).

    ``load`` / ``load_profiles`` return None when nothing is kept for the table and reader (and key and bucket
    count), and raise (naming the file) for what they kept but cannot trust: the caller then hashes in full and
    says why. ``save`` / ``save_profiles`` replace what is kept.
    """

    def load(self, table: str, reader: str) -> FileSums | None: ...

    def save(self, sums: FileSums) -> None: ...

    def load_profiles(
        self, table: str, reader: str, key: tuple[str, ...] | None, buckets: int
    ) -> FileProfiles | None: ...

    def save_profiles(self, profiles: FileProfiles) -> None: ...


def _features(table: DeltaTable) -> frozenset[str]:
    protocol = table.protocol()
    return frozenset([*(protocol.reader_features or ()), *(protocol.writer_features or ())])


def _deleted(keep: np.ndarray) -> Deleted:
    """The rows a keep-mask (numpy booleans, True for a row kept) deletes. A mask may stop short of the file's
    last row (rows past it are kept): the caller checks the rows read against the log's count."""
    import numpy as np

    gone = np.flatnonzero(~keep)
    if not len(gone):
        return Deleted(0, ())
    breaks = np.flatnonzero(np.diff(gone) != 1)
    if len(breaks) + 1 > MAX_DELETED_RUNS:
        return Deleted(len(gone), None)
    firsts = np.concatenate([gone[:1], gone[breaks + 1]]).tolist()
    lasts = np.concatenate([gone[breaks], gone[-1:]]).tolist()
    return Deleted(len(gone), tuple(zip(firsts, lasts, strict=True)))


def _kept_digest(keep: np.ndarray) -> str:
    """A digest of a deletion vector's keep-mask: equal masks, equal digests (so equal rows of the same file)."""
    import numpy as np

    bits = np.packbits(keep)
    return "sha256:" + hashlib.sha256(len(keep).to_bytes(8, "big") + bits.tobytes()).hexdigest()


def _deletion_vectors(table: DeltaTable, paths: list[str]) -> dict[str, tuple[str, Deleted]]:
    """Log path -> digest of its deletion vector and the rows it deletes, for the files that have one.

    deltalake gives the vectors by file URI (not the log path) and without their descriptors, so a file is matched
    by the decoded log path its URI ends with, and identified by what its vector keeps.
    """
    import numpy as np

    by_name: dict[str, list[str]] = {}
    for p in paths:  # by file name first: a scan of every path per vector is quadratic on a big table
        by_name.setdefault(unquote(p).rsplit("/", 1)[-1], []).append(p)
    out: dict[str, tuple[str, Deleted]] = {}
    vectors = pa.table(table.deletion_vectors())
    for uri, mask in zip(vectors.column("filepath").to_pylist(), vectors.column("selection_vector"), strict=True):
        decoded = unquote(str(uri))
        named = by_name.get(decoded.rsplit("/", 1)[-1], [])
        match = [p for p in named if decoded.endswith("/" + unquote(p))]
        if len(match) != 1:
            msg = f"the deletion vector of {uri} matches {len(match)} files of the Delta log (expected 1)"
            raise ValueError(msg)
        keep = np.asarray(mask.values.to_numpy(zero_copy_only=False), dtype=np.bool_)
        out[match[0]] = (_kept_digest(keep), _deleted(keep))
    return out


def read_snapshot(table: DeltaTable, deletion_vectors: bool = False) -> DeltaSnapshot:
    """The files of the version ``table`` (a ``deltalake.DeltaTable``) is at, with their identities.

    With ``deletion_vectors``, the table's deletion vectors are read (only when its protocol has the
    ``deletionVectors`` feature) so that each file's identity names the rows it keeps; without, a table whose
    protocol allows them is one whose files deltalake's Arrow reader refuses anyway.

    Example:
        >>> import tempfile, pyarrow as pa
        >>> from deltalake import DeltaTable, write_deltalake
        >>> path = tempfile.mkdtemp() + "/t"
        >>> write_deltalake(path, pa.table({"a": [1], "day": ["x"]}), partition_by=["day"])
        >>> snap = read_snapshot(DeltaTable(path))
        >>> snap.version, snap.partition_columns, [(f.records, f.partition) for f in snap.files]
        (0, ('day',), [(1, ('x',))])
    """
    meta = table.metadata()
    partition_columns = tuple(meta.partition_columns)
    actions = pa.table(table.get_add_actions(flatten=False))
    paths = [str(p) for p in actions.column("path").to_pylist()]
    sizes = actions.column("size_bytes").to_pylist()
    modified = actions.column("modification_time").to_pylist()
    records = (
        actions.column("num_records").to_pylist() if "num_records" in actions.column_names else [None] * len(paths)
    )
    if partition_columns and "partition" in actions.column_names:
        values = [tuple(v[c] for c in partition_columns) for v in actions.column("partition").to_pylist()]
    else:
        values = [()] * len(paths)
    features = _features(table)
    vectors = _deletion_vectors(table, paths) if deletion_vectors and "deletionVectors" in features else {}
    files = tuple(
        DeltaFile(p, int(s), int(m), None, None if r is None else int(r), v)
        for p, s, m, r, v in zip(paths, sizes, modified, records, values, strict=True)
    )
    files = tuple(
        replace(f, deletion_vector=vectors[f.path][0], deleted=vectors[f.path][1]) if f.path in vectors else f
        for f in files
    )
    # The log's own partition values (``partitions()`` gives them as text): an empty string there is parsed as null
    # in the add actions above, so which columns hold one is asked separately.
    empty = frozenset(c for p in (table.partitions() if partition_columns else ()) for c, v in p.items() if v == "")
    return DeltaSnapshot(
        int(table.version()),
        str(meta.id),
        partition_columns,
        files,
        features,
        dict(meta.configuration or {}),
        table.schema().to_json(),
        empty,
    )


def batch_sums(batches: Iterable[pa.RecordBatch]) -> Sums:
    """rows-v1 ``(row_count, sum1, sum2)`` of an iterable of Arrow record batches (the twin).

    Example:
        >>> batch_sums(pa.table({"a": [1, 2]}).to_batches())[0]
        2
    """
    parts: list[Sums] = []
    for batch in batches:
        if batch.num_rows:
            parts.extend(sum_lines(encode_batch(piece)) for piece in pieces(batch))
    return add_sums(parts)


def parquet_read_options() -> ds.ParquetReadOptions:
    """How Arrow reads parquet files, for the engines' own reads and deltalake's alike: INT96 timestamps (Spark's
    default ``outputTimestampType``, as plain delta-spark writes a table) in microseconds, as Spark reads them.
    pyarrow's default reads them in nanoseconds, where a value past 2262 or before 1677 (a 9999-12-31 end date) does not
    fit: it wrapped, and the cast to the log's microseconds failed ("would lose data") naming no column. Only INT96
    columns are affected (the Delta protocol's timestamps are microseconds). pyarrow reads them without a zone: a
    Delta read casts them to the log's ``timestamp`` (UTC, an instant, as Spark reads INT96), and a plain parquet
    read must make them UTC itself (``ubunye.engines.int96.as_instants``), else they hash as ``timestamp_ntz``.

    Example:
        >>> parquet_read_options().coerce_int96_timestamp_unit
        'us'
    """
    import pyarrow.dataset as ds

    return ds.ParquetReadOptions(coerce_int96_timestamp_unit="us")


#: The oldest pyarrow deltalake's Arrow side declares (its own ``pyarrow`` extra: ``deltalake[pyarrow]``). Older ones
#: work in part: measured with pyarrow 14.0.1, unpartitioned tables are read and written (the demo runs), but a
#: partitioned table's read fails inside deltalake (pyarrow 14's ``pa.field`` takes no schema capsule), as do some
#: others ("Unrecognized type").
DELTALAKE_PYARROW = (21, 0)


def _old_pyarrow() -> bool:
    found = tuple(int(p) for p in pa.__version__.split(".")[:2] if p.isdigit())
    return found < DELTALAKE_PYARROW


#: What an Arrow error says when pyarrow does not know a type deltalake hands it (its C data interface: a format
#: string an older pyarrow has no type for; an IPC schema of a newer type).
_UNKNOWN_TYPE = ("Unrecognized type", "format string")


def pyarrow_version_failure(exc: BaseException) -> bool:
    """Whether ``exc``, raised inside deltalake's Arrow side, is a failure an older pyarrow can cause: a call its
    API does not take (a TypeError or AttributeError: pyarrow 14's ``pa.field`` of a schema capsule), or a type or
    operation it lacks (ArrowNotImplementedError, an unknown type). Not deltalake's own errors (a reader feature
    it lacks, such as deletion vectors) nor a value pyarrow refuses (ArrowInvalid: "would lose data"), which the
    newest pyarrow raises alike.

    Example:
        >>> pyarrow_version_failure(TypeError("field() takes at least 2 positional arguments (1 given)"))
        True
        >>> pyarrow_version_failure(pa.ArrowInvalid("Casting from timestamp[ns] to timestamp[us] would lose data"))
        False
    """
    if isinstance(exc, pa.ArrowException):  # before TypeError: ArrowTypeError is one, and is about values too
        return isinstance(exc, pa.ArrowNotImplementedError) or any(w in str(exc) for w in _UNKNOWN_TYPE)
    return isinstance(exc, (TypeError, AttributeError, ImportError))


@contextmanager
def deltalake_arrow(what: str) -> Iterator[None]:
    """Around a read or write of a Delta table as Arrow through deltalake: on a pyarrow older than deltalake
    declares (:data:`DELTALAKE_PYARROW`), a failure inside deltalake that pyarrow's version can cause
    (:func:`pyarrow_version_failure`) becomes an EngineError naming ``what``, the failure, this pyarrow and what to
    do, instead of a bare TypeError from deltalake's internals; any other failure (deletion vectors, a value
    pyarrow refuses) goes on as it is, as on the newest pyarrow. What works on the older pyarrow still works.

    Example:
        >>> with deltalake_arrow("input 'orders' (Delta at data/orders)"):
        ...     pass
    """
    from ubunye.exceptions import EngineError, UbunyeError

    try:
        yield
    except Exception as exc:
        if not _old_pyarrow() or isinstance(exc, UbunyeError) or not pyarrow_version_failure(exc):
            raise
        need = ".".join(map(str, DELTALAKE_PYARROW))
        first = (str(exc).strip().splitlines() or [""])[0]
        msg = (
            f"{what}: deltalake failed ({type(exc).__name__}: {first}); deltalake's Arrow side needs pyarrow >= "
            f"{need} (its own requirement) and this Python has pyarrow {pa.__version__}: pip install "
            f"'pyarrow>={need}', or use the Spark engine (it reads Delta with delta-spark)"
        )
        raise EngineError(msg) from exc


#: What deltalake mishandles in a local path (measured with deltalake 1.6.6): it decodes ``%`` (``a%20b`` is read
#: and written as ``a b``: another folder, or a log of one and files of the other), and a ``[`` or ``]`` makes its
#: writer panic ("Invalid object store url": a pyo3 PanicException, which is no Exception and passes every handler).
_READ_CHARS, _WRITE_CHARS = "%", "%[]"
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


#: What deltalake reads in a URL as URL syntax where every other reader takes the characters as written: it decodes
#: ``%`` escapes and ends the path at ``?`` or ``#`` (measured, deltalake 1.6.6: ``s3://b/t%20x`` is read and written
#: as the key ``t x``, ``s3://b/u#x`` as ``u``, ``s3://b/v?x`` as ``v``; an escaped URL does not help). Spark's
#: Hadoop paths, polars' object store and ubunye's own listing take ``t%20x`` as the key ``t%20x``
#: (``engines.paths.literal_parts``), so deltalake would read another table than the one named, or write its log
#: among another dataset's files (a run's own parquet input at ``s3://b/t x``). Spark reads ``file:///d/a%20b`` as
#: ``a%20b`` too, where deltalake and ubunye (``engines.paths.local_path``) read the folder ``a b``.
_URL_CHARS = "%?#"


def check_deltalake_path(path: str, what: str, *, write: bool = False, hadoop: bool = False) -> None:
    """Raise EngineError naming ``what`` when deltalake would read or write (``write``) another place than
    ``path`` names, or panic on it: an object-store URL holding ``%``, ``?`` or ``#`` (:data:`_URL_CHARS`); a local
    path holding ``%`` (or, to write, ``[`` or ``]``). A ``file://`` URL passes (its ``%`` escapes are the URL's
    own, decoded alike by deltalake and ubunye), unless ``hadoop`` (its log read for Spark, which reads a URL's
    characters as they are).

    Example:
        >>> check_deltalake_path("/data/orders", "input 'orders'")
        >>> check_deltalake_path("/data/a%20b", "input 'orders'")
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'orders': deltalake cannot use the local path /data/a%20b: ...
        >>> check_deltalake_path("s3://b/t#x", "output 'o'", write=True)
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: output 'o': the URL s3://b/t#x holds '#', which deltalake reads as URL ...
    """
    from ubunye.exceptions import EngineError

    if _URL.match(path):
        scheme, _, rest = path.partition("://")
        odd = [c for c in _URL_CHARS if c in rest] if hadoop or scheme.lower() != "file" else []
        if odd:
            shown = " and ".join(repr(c) for c in odd)
            if hadoop:
                other = "Spark reads them as the characters they are: the Delta log deltalake would read is not the "
                other += "one of the files Spark reads; rename the table's folder without them"
            else:
                verb = "write" if write else "read"
                other = (
                    f"Spark and the other readers take them as the characters they are: deltalake would {verb} "
                    f"another key than {path} (and may {'overwrite' if write else 'read'} another dataset there); "
                    "rename the table's folder without them, or use the Spark engine (delta-spark)"
                )
            msg = (
                f"{what}: the URL {path} holds {shown}, which deltalake reads as URL syntax (it decodes '%' escapes, "
                f"and '?' or '#' end the path); {other}"
            )
            raise EngineError(msg)
        return
    found = [c for c in (_WRITE_CHARS if write else _READ_CHARS) if c in path]
    if not found:
        return
    why = []
    if "%" in found:
        why.append("it decodes '%' (a%20b would be 'a b', another folder)")
    if "[" in found or "]" in found:
        why.append("its writer fails on '[' and ']' in a path")
    msg = (
        f"{what}: deltalake cannot use the local path {path}: {'; '.join(why)}; rename the folder, or use the Spark "
        "engine (delta-spark)"
    )
    raise EngineError(msg)


#: The field metadata key Spark keeps a CHAR(n) or VARCHAR(n) column's declared type under (its data is a string).
_CHAR_VARCHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"
_CHAR = re.compile(r"(?<![a-z0-9_])char\s*\(\s*\d+\s*\)", re.IGNORECASE)  # char(5), not varchar(5)


def spark_char_column(schema_json: str | None) -> str | None:
    """Words naming the first column of a Delta log's schema (Spark's JSON) that Spark declares CHAR(n), at any
    depth (Spark keeps the declared type in the top field's metadata, ``__CHAR_VARCHAR_TYPE_STRING``), else None.
    Spark reads such a value padded with spaces to n characters ('ab' as 'ab   ' in a char(5): read-side padding,
    Spark 3.4's default), deltalake and polars as stored; VARCHAR(n) is read as stored by all.

    Example:
        >>> spark_char_column('{"type":"struct","fields":[{"name":"c","type":"string","nullable":true,'
        ...                   '"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"char(5)"}}]}')
        "column 'c' is a Spark char(5)"
        >>> spark_char_column('{"type":"struct","fields":[{"name":"v","type":"string","nullable":true,'
        ...                   '"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"varchar(5)"}}]}') is None
        True
    """
    import json

    if schema_json is None:
        return None
    try:
        schema = json.loads(schema_json)
    except (ValueError, RecursionError):
        return None
    for top in _fields(schema):
        for f in [top, *_nested_fields(top.get("type"))]:
            meta = f.get("metadata")
            declared = meta.get(_CHAR_VARCHAR_KEY) if isinstance(meta, dict) else None
            if isinstance(declared, str) and _CHAR.search(declared):
                name = str(top.get("name"))
                kind = "is a Spark" if f is top else f"holds a Spark CHAR (at field {f.get('name')!r}):"
                return f"column {name!r} {kind} {declared}"
    return None


def _fields(struct: object) -> list[dict[str, Any]]:
    fields = struct.get("fields") if isinstance(struct, dict) else None
    return [f for f in fields if isinstance(f, dict)] if isinstance(fields, list) else []


def _nested_fields(kind: object, depth: int = 0) -> list[dict[str, Any]]:
    """The struct fields inside a Spark JSON type, at any depth (arrays, maps and structs)."""
    if not isinstance(kind, dict) or depth > 100:
        return []
    if kind.get("type") == "struct":
        return [g for f in _fields(kind) for g in (f, *_nested_fields(f.get("type"), depth + 1))]
    inner = [kind.get(k) for k in ("elementType", "keyType", "valueType")]
    return [g for t in inner for g in _nested_fields(t, depth + 1)]


def refuse_char_columns(schema_json: str | None, what: str) -> None:
    """Raise EngineError naming ``what`` and the column when the Delta log's schema declares a CHAR(n) column
    (:func:`spark_char_column`): Spark reads it padded, deltalake and polars as stored, so the same table would
    hash one way on Spark and another here, silently.

    Example:
        >>> refuse_char_columns('{"type":"struct","fields":[{"name":"c","type":"string","nullable":true,'
        ...                     '"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"char(5)"}}]}', "input 'i'")
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'i': column 'c' is a Spark char(5) (so its Delta log says), ...
    """
    from ubunye.exceptions import EngineError

    found = spark_char_column(schema_json)
    if found is not None:
        msg = f"{what}: {found} (so its Delta log says), which Spark reads padded with spaces to its length ('ab' "
        msg += "as 'ab   ' in a char(5)) and deltalake and polars read as stored: the same rows would hash one way "
        msg += "on Spark and another here; read it with the Spark engine, or make the column a STRING (rpad its "
        msg += "values first to keep what Spark reads)"
        raise EngineError(msg)


def check_arrow_readable(table: DeltaTable, what: str) -> None:
    """Raise EngineError naming ``what`` when deltalake's Arrow reader (``to_pyarrow_table``, ``to_pyarrow_dataset``)
    would not read ``table``'s values as Spark does: column mapping, a CHAR(n) column (:func:`refuse_char_columns`),
    a type Spark declares that rows-v1 refuses. A table with the ``columnMapping`` reader feature it refuses
    itself; one of reader version 2 with ``delta.columnMapping.mode`` set (as delta-spark and Databricks write them)
    it reads by the logical names, which its Parquet files do not hold: every value null, silently (measured with
    deltalake 1.6.6, mode ``name`` and ``id``)."""
    from ubunye.exceptions import EngineError
    from ubunye.hashing.types import spark_declared_refusal

    schema_json = table.schema().to_json()
    refuse_char_columns(schema_json, what)
    refused = spark_declared_refusal(schema_json)
    if refused is not None:  # deltalake reads a variant as a struct of its two binaries: hashed, where Spark refuses
        msg = f"{what}: {refused} (so its Delta log says), which rows-v1 does not hash (docs/rows-v1.md section 11) "
        msg += "and deltalake reads as its binary encoding; read it with the Spark engine, or store it as text first"
        raise EngineError(msg)
    mode = str((table.metadata().configuration or {}).get("delta.columnMapping.mode", "none"))
    if mode.lower() != "none":
        msg = (
            f"{what}: the table uses column mapping (delta.columnMapping.mode={mode}), which deltalake's Arrow "
            "reader does not apply (it would read every value as null); read it with the Spark engine (delta-spark)"
        )
        raise EngineError(msg)
    _refuse_negative_decimal_partitions(table, what)


#: What deltalake does with a negative decimal partition value with a fraction (measured with deltalake 1.6.6): it
#: turns it into text it then fails on, naming no column. Said alike on writes (ubunye.engines.delta) and reads.
NEGATIVE_DECIMAL_PARTITION = "deltalake turns such a partition value into text it cannot read (-1.50 into '-1.-50')"


def negative_fraction(values: pa.Array | pa.ChunkedArray) -> object:
    """The first value of ``values`` (decimals, or a dictionary of them) that is negative with a non-zero fraction,
    as a partition value deltalake cannot write nor read (:data:`NEGATIVE_DECIMAL_PARTITION`); None when there
    is none (nulls, whole negatives such as -1.00 and positive values are read and written as they are).

    Example:
        >>> import decimal
        >>> d = pa.decimal128(5, 2)
        >>> negative_fraction(pa.array([decimal.Decimal("-1.00"), decimal.Decimal("-0.50"), None], d))
        Decimal('-0.50')
        >>> negative_fraction(pa.array([decimal.Decimal("-1.00"), decimal.Decimal("1.50")], d)) is None
        True
    """
    import pyarrow.compute as pc

    if isinstance(values.type, pa.DictionaryType):
        values = values.cast(values.type.value_type)
    t = values.type
    if not pa.types.is_decimal(t) or t.scale == 0 or len(values) == 0:
        return None
    whole = pc.round(values, ndigits=0, round_mode="towards_zero")
    bad = pc.fill_null(pc.and_(pc.less(values, pa.scalar(0, t)), pc.not_equal(values, whole)), False)
    found = pc.filter(values, bad)
    return found[0].as_py() if len(found) else None


def _refuse_negative_decimal_partitions(table: DeltaTable, what: str) -> None:
    """deltalake's Arrow reader (``to_pyarrow_dataset``) fails on a negative decimal partition value with a fraction
    in the log (Spark writes them as they are: "-1.50"), with pyarrow's error naming neither the table nor the
    column: refused first, named. The add actions are looked at only when a partition column is such a decimal."""
    from ubunye.exceptions import EngineError

    columns = list(table.metadata().partition_columns)
    if not columns:
        return
    schema = pa.schema(table.schema().to_arrow())
    decimals = [c for c in columns if pa.types.is_decimal(schema.field(c).type) and schema.field(c).type.scale > 0]
    if not decimals:
        return
    actions = pa.table(table.get_add_actions(flatten=True))
    for column in decimals:
        name = f"partition.{column}"
        value = negative_fraction(actions.column(name)) if name in actions.column_names else None
        if value is not None:
            t = schema.field(column).type
            msg = f"{what}: partition column {column!r} (decimal({t.precision},{t.scale})) holds a negative value "
            msg += f"with a fraction ({value}) in its Delta log, and {NEGATIVE_DECIMAL_PARTITION}; "
            raise EngineError(msg + _engines_reading(table))


def _engines_reading(table: DeltaTable) -> str:
    """The advice ending a refusal of ``table`` that deltalake cannot read: the engines that do. polars' own Delta
    reader reads it, except where the polars engine hands the table to deltalake's reader itself, because its own
    reader misreads it (``ubunye.engines.polars_engine``: partition values it takes from folder names, a URL whose
    logged paths hold ``%``, a map column): then only Spark is named, with polars' reason. Spark alone is named
    too where polars is not installed (the polars extra does not install on Python 3.10). Asked of the polars
    engine's own checks, imported here only, so a pandas read imports polars only on its way to this refusal."""
    if importlib.util.find_spec("polars") is None:
        return "read the table with the Spark engine (the polars engine is not installed here)"
    from ubunye.engines.polars_engine import _partitions_polars_misreads

    why = _partitions_polars_misreads(table, url=_at_url(table)) or _polars_map_reason(table)
    if why is None:
        return "read the table with the polars or Spark engine"
    return (
        f"polars' own Delta reader {why}, so the polars engine reads it through deltalake too: read the table with "
        "the Spark engine"
    )


def _at_url(table: DeltaTable) -> bool:
    """Whether ``table`` is at a URL, not in a local folder (what polars' escaping of logged paths depends on)."""
    from ubunye.engines.paths import local_path
    from ubunye.exceptions import EngineError

    try:
        return local_path(table.table_uri) is None
    except EngineError:  # a file:// URL deltalake would not give: taken as a URL, so Spark alone is named
        return True


def _polars_map_reason(table: DeltaTable) -> str | None:
    """Why the polars engine reads ``table`` through deltalake for a map column (its own reader keeps one entry
    per map key), as ``ubunye.engines.polars_engine`` says it; None without one, or where the schema is not
    polars' (then its own reader says why it fails)."""
    import polars as pl

    from ubunye.engines.polars_engine import _map_column

    try:
        column = _map_column(pl.DataFrame(pa.schema(table.schema().to_arrow()).empty_table()).schema)
    except Exception:
        return None
    return None if column is None else f"keeps one entry per map key (column {column!r})"


def arrow_dataset(table: DeltaTable) -> ds.Dataset:
    """The pyarrow dataset ``to_pyarrow_table()`` reads (one fragment per add action, the table's schema).

    Raises:
        EngineError: deltalake failed on a pyarrow older than it declares (:func:`deltalake_arrow`), or the table
            uses column mapping (:func:`check_arrow_readable`).
        deltalake.exceptions.DeltaProtocolError: deltalake's Arrow reader cannot read the table (deletion vectors,
            reader features it does not know): neither can ``to_pyarrow_table()``.
    """
    import pyarrow.dataset as ds

    check_arrow_readable(table, f"Delta table at {table.table_uri}")
    # deltalake gives each fragment a guarantee built from the file's min/max statistics of every column of the
    # schema it is handed: a quarter of a millisecond a file, 70% of an incremental hash of a 200-file table
    # and 0.56 s of one of a 5,000-file table (measured, deltalake 1.6.6). Without a filter no guarantee
    # changes a value read, so it is handed the partition columns alone (whose values it does set on each
    # fragment, by its own parsing of the log), and the fragments are read with the whole schema.
    with deltalake_arrow(f"Delta table at {table.table_uri}"):
        schema = pa.schema(table.schema().to_arrow())  # what to_pyarrow_dataset() reads by default
        parts = pa.schema([schema.field(c) for c in table.metadata().partition_columns])
        slim = table.to_pyarrow_dataset(schema=parts, parquet_read_options=parquet_read_options())
    return ds.FileSystemDataset(list(slim.get_fragments()), schema, slim.format, slim.filesystem)


def arrow_file_sums(dataset: ds.Dataset, wanted: Collection[str]) -> tuple[dict[str, Sums], list[str]]:
    """The sums of the files whose log paths are in ``wanted``, each read as the whole ``dataset``
    (:func:`arrow_dataset`) reads it: a dataset of that one fragment with the same schema, format and filesystem;
    and the wanted paths no fragment has (then the caller reads the table whole).

    Raises:
        HashError: a column rows-v1 cannot hash, naming it, before any file is read.
    """
    return arrow_file_parts(dataset, wanted, batch_sums)


def _refuse_legacy_footer(
    what: str, path: str, footer: pq.FileMetaData, open_input: Callable[[], pa.NativeFile]
) -> None:
    """Raise LegacyCalendarError naming ``what``, the data file (its log ``path``), column and value when the
    file whose ``footer`` is given holds a date or timestamp Spark wrote in its legacy hybrid calendar, which
    deltalake's and polars' readers read as another day (ubunye.engines.legacy_dates). Only a footer carrying
    Spark's legacy keys or an old Spark version has its values looked at (``open_input`` opens the file then, for
    a column whose statistics lack a minimum); any other costs nothing more."""
    import pyarrow.parquet as pq

    from ubunye.engines.legacy_dates import legacy_footer, refuse_legacy_file

    if not legacy_footer(footer.metadata):
        return
    with open_input() as fh:
        refuse_legacy_file(what, path, pq.ParquetFile(fh, metadata=footer, coerce_int96_timestamp_unit="us"))


def refuse_legacy_scanned(dataset: ds.Dataset, what: str) -> None:
    """:func:`_refuse_legacy_footer` for every data file of ``dataset`` (a Delta table's, as deltalake's
    ``to_pyarrow_dataset`` gives it) once it was read: its fragments keep the footers the read took, so no file is
    opened again, except a legacy one (Spark's legacy keys in its footer) that holds a column without statistics.

    Raises:
        LegacyCalendarError: naming ``what``, the data file, the column and the value.
    """
    for fragment in dataset.get_fragments():
        opener = functools.partial(dataset.filesystem.open_input_file, fragment.path)
        _refuse_legacy_footer(what, fragment.path, fragment.metadata, opener)


def _dated_leaves(kind: pa.DataType, names: tuple[str, ...] | None) -> Iterator[tuple[tuple[str, ...] | None, Any]]:
    """``(names, first)`` for each leaf of ``kind`` Spark may store in its hybrid calendar: its path of struct field
    names (None inside a list or map, which the log keeps no statistics of) and the first value stored alike in
    both calendars (ubunye.engines.legacy_dates.stored_alike_from)."""
    from ubunye.engines.legacy_dates import stored_alike_from

    first = stored_alike_from(kind)
    if first is not None:
        yield names, first
    elif pa.types.is_struct(kind):
        for i in range(kind.num_fields):
            field = kind.field(i)
            yield from _dated_leaves(field.type, None if names is None else (*names, field.name))
    elif pa.types.is_map(kind):
        yield from _dated_leaves(kind.key_type, None)
        yield from _dated_leaves(kind.item_type, None)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        yield from _dated_leaves(kind.value_type, None)


def _stat(actions: pa.Table, kind: str, names: tuple[str, ...]) -> pa.Array | None:
    """The log's ``kind`` statistic (``min``, ``null_count``) of the leaf at ``names``, one value a file (null
    where its file has none), or None when the log keeps none for it."""
    if kind not in actions.column_names:
        return None
    values: pa.Array = actions.column(kind).combine_chunks()
    for name in names:
        if not pa.types.is_struct(values.type) or values.type.get_field_index(name) < 0:
            return None
        values = values.flatten()[values.type.get_field_index(name)]  # a file's null struct nulls its fields
    return values


def _legacy_candidates(table: DeltaTable) -> list[str]:
    """The log paths of the data files of ``table`` that may store a date before 1582-10-15 or a timestamp before
    1900-01-02, the values Spark may have stored in its hybrid calendar, by the log's statistics: a
    file whose minimum of every such column is later (or that holds only nulls there) stores every value alike in
    both calendars. A column the log keeps no minimum of (no statistics, past the indexed columns, inside a list
    or map) makes every file a candidate. No file is read: none at all for a table without such columns."""
    import pyarrow.compute as pc

    partition_columns = set(table.metadata().partition_columns)
    schema = pa.schema(table.schema().to_arrow())
    leaves = [leaf for f in schema if f.name not in partition_columns for leaf in _dated_leaves(f.type, (f.name,))]
    if not leaves:
        return []
    actions = pa.table(table.get_add_actions(flatten=False))
    paths = [str(p) for p in actions.column("path").to_pylist()]
    if not paths or any(names is None for names, _ in leaves):
        return paths
    records = actions.column("num_records").combine_chunks() if "num_records" in actions.column_names else None
    wanted = pa.array([False] * len(paths), pa.bool_())
    for names, first in leaves:
        assert names is not None
        low, nulls = _stat(actions, "min", names), _stat(actions, "null_count", names)
        if low is None:
            return paths
        if isinstance(first, dt.datetime) and pa.types.is_timestamp(low.type) and low.type.tz is None:
            first = first.replace(tzinfo=None)  # a zone-less column's statistics: its UTC wall times
        try:
            early = pc.fill_null(pc.less(low, pa.scalar(first, low.type)), True)  # no minimum: may hold any
        except (pa.ArrowException, TypeError, ValueError):  # statistics of another type than the schema's
            return paths
        if nulls is not None and records is not None:  # a file holding only nulls there has no minimum
            early = pc.and_(early, pc.invert(pc.fill_null(pc.equal(nulls, records), False)))
        wanted = pc.or_(wanted, early)
    return [p for p, w in zip(paths, wanted.to_pylist(), strict=True) if w]


def table_filesystem(table: DeltaTable, storage_options: dict[str, str] | None) -> pa.fs.FileSystem:
    """A filesystem rooted at ``table``'s folder, to read its data files' footers and its log's files: Arrow's own
    for a local table (a footer in ~0.1 ms, where deltalake's Python file handle takes ~1 ms), else deltalake's
    (its object store, with ``storage_options``: the store deltalake reads the table from).

    Example:
        >>> import tempfile
        >>> from deltalake import DeltaTable, write_deltalake
        >>> path = tempfile.mkdtemp() + "/t"
        >>> write_deltalake(path, pa.table({"a": [1]}))
        >>> table_filesystem(DeltaTable(path), None).get_file_info("_delta_log/00000000000000000000.json").is_file
        True
    """
    import pyarrow.fs as pa_fs
    from deltalake.fs import DeltaStorageHandler

    from ubunye.engines.paths import local_path

    try:
        root = local_path(table.table_uri)
    except Exception:  # a URL local_path refuses: deltalake's store opens what deltalake opened
        root = None
    if root is not None:
        return pa_fs.SubTreeFileSystem(str(root), pa_fs.LocalFileSystem())
    return pa_fs.PyFileSystem(DeltaStorageHandler(table.table_uri, storage_options))


def refuse_legacy_delta(table: DeltaTable, what: str, storage_options: dict[str, str] | None = None) -> None:
    """Raise LegacyCalendarError naming ``what``, the data file, the column and the value when a data file of
    ``table`` (a ``deltalake.DeltaTable`` at the version to read) holds a date or timestamp Spark wrote in its
    legacy hybrid calendar, which deltalake's and polars' readers read as another day; before a read by a reader
    whose footers are not at hand (polars' ``scan_delta``).

    Cost: the log's statistics (already loaded) say which files may hold a value before the calendars agree; only
    those files' footers are read (one ranged read each), and only a legacy one's values. A table without date or
    timestamp columns, or whose files' minimums are later, costs no file read.

    Example:
        >>> import tempfile
        >>> from deltalake import DeltaTable, write_deltalake
        >>> path = tempfile.mkdtemp() + "/t"
        >>> write_deltalake(path, pa.table({"a": [1]}))
        >>> refuse_legacy_delta(DeltaTable(path), "input 'i'")
    """
    candidates = _legacy_candidates(table)
    if not candidates:
        return
    import pyarrow.parquet as pq

    filesystem = table_filesystem(table, storage_options)
    for path in candidates:
        opener = functools.partial(filesystem.open_input_file, unquote(path))
        with opener() as fh:
            footer = pq.ParquetFile(fh).metadata
        _refuse_legacy_footer(what, path, footer, opener)


def arrow_file_parts(
    dataset: ds.Dataset, wanted: Collection[str], of_batches: Callable[[Iterable[pa.RecordBatch]], P]
) -> tuple[dict[str, P], list[str]]:
    """As :func:`arrow_file_sums`, each file's numbers made by ``of_batches`` from its batches (``batch_sums``,
    or a profile's partial).

    Raises:
        HashError: a column rows-v1 cannot hash, naming it, before any file is read.
        LegacyCalendarError: (an EngineError) a file holds a date or timestamp Spark wrote in its legacy hybrid
            calendar, which this reader would read as another day (ubunye.engines.legacy_dates), naming the file,
            column and value.
    """
    import pyarrow.dataset as ds

    schema_string(dataset.schema)
    # Fragments carry the decoded path (deltalake's filesystem is rooted at the table), the log the encoded one.
    want = {unquote(p): p for p in wanted}
    fragments = [(want[f.path], f) for f in dataset.get_fragments() if f.path in want]
    missing = sorted(set(wanted) - {path for path, _ in fragments})
    if missing:
        return {}, missing
    out: dict[str, P] = {}
    for path, fragment in fragments:
        one = ds.FileSystemDataset([fragment], dataset.schema, dataset.format, dataset.filesystem)
        out[path] = of_batches(one.to_batches(batch_size=BATCH_ROWS))
        # after the read, from the footer it took (a legacy file's numbers are dropped here, never returned)
        opener = functools.partial(dataset.filesystem.open_input_file, fragment.path)
        _refuse_legacy_footer("Delta table", path, fragment.metadata, opener)
    return out, []
