"""rows-v1 (and profile-v1) of a Delta table, reading only the files whose numbers are not cached: ``hash_delta``.

A table's sums are the sums of its files' sums (docs/rows-v1.md section 8), so the hash of a snapshot is the sum,
over its add actions, of each file's sums: cached when the file's identity (path, size, modification time,
deletion vector) is the one they were computed for, else read now. Removed files simply are not added: summing
the current add actions, rather than subtracting removed files from a cached total, costs the same reads (only the
new files) and cannot carry an error forward: whatever happened since the cached snapshot (OPTIMIZE, VACUUM,
RESTORE, an overwrite, a crashed run), the total is rebuilt from the snapshot being hashed.

A profiled input (``profile=True``: docs/rows-v1.md section 12) is hashed the same way: a profile is counts and
sums too (column sums, null and NaN counts, bucket counts and sums), so the table's profile is the merge of its
files' partials (``ubunye.hashing.delta_numbers.ProfileParts``), each cached for the key and bucket count it was
made with; a partial of another key or bucket count, schema, table or ubunye version is never used.

The result is the hash (and profile) a full read gives, always: on Arrow that of
``DeltaTable.to_pyarrow_table()`` (the pandas engine's read), on Spark that of ``spark.read.format("delta")`` at
the same version. When a file's rows cannot be told apart from the table's (deletion vectors, column mapping...
on Spark), the table reader reads the whole table and ``reason`` says why (``hash_mode="full"``); the cache is
refilled from that read, so the next hash is incremental again.

Example:
    >>> import tempfile, pyarrow as pa
    >>> from deltalake import DeltaTable, write_deltalake
    >>> from ubunye.hashing import hash_frame
    >>> from ubunye.lineage.file_sums import FileSumsCache
    >>> path, cache = tempfile.mkdtemp() + "/t", FileSumsCache(tempfile.mkdtemp())
    >>> for i in range(3):
    ...     write_deltalake(path, pa.table({"a": [i]}), mode="append")
    >>> first = hash_delta(path, cache=cache)
    >>> first.hash_mode, first.reason, first.files_read
    ('full', 'no sums of this table are cached yet', 3)
    >>> write_deltalake(path, pa.table({"a": [3]}), mode="append")
    >>> again = hash_delta(path, cache=cache)
    >>> again.hash_mode, again.files_reused, again.files_read
    ('incremental', 3, 1)
    >>> again.hash == hash_frame(DeltaTable(path).to_pyarrow_table())
    True

With the profile on, cached per-file partials of that key and bucket count are merged with the new files':

    >>> from ubunye.hashing.profile import profile_frame
    >>> first = hash_delta(path, cache=cache, profile=True, key=["a"], buckets=8)
    >>> write_deltalake(path, pa.table({"a": [4]}), mode="append")
    >>> again = hash_delta(path, cache=cache, profile=True, key=["a"], buckets=8)
    >>> again.hash_mode, again.files_read
    ('incremental', 1)
    >>> again.profile == profile_frame(DeltaTable(path).to_pyarrow_table(), key=["a"], buckets=8)
    True
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import unquote, urlsplit

from ubunye.exceptions import HashError
from ubunye.hashing.delta_files import DeltaFile, DeltaSnapshot, P, SumsCache, read_snapshot
from ubunye.hashing.delta_numbers import Cached, FileNumbers, Identity, ProfileParts, RowSums
from ubunye.hashing.digest import FrameHash, check_engine
from ubunye.hashing.profile import DEFAULT_BUCKETS, FrameProfile, check_profile_options

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.dataset as ds
    from pyspark.sql import SparkSession

    from ubunye.hashing.delta_spark import SparkDeltaFiles

log = logging.getLogger("ubunye")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


@dataclass(frozen=True)
class DeltaHash:
    """The rows-v1 hash (and profile-v1) of one Delta snapshot, and how it was made.

    Attributes:
        hash: the ``FrameHash``, equal to that of the table read whole.
        hash_mode: ``"incremental"`` (cached numbers of some files were used, only the others read) or ``"full"``
            (every file was read).
        reason: why the hash is full (None when incremental).
        version: the table version hashed.
        files: data files in the snapshot.
        files_reused: files whose cached numbers were used.
        files_read: files read now (all of them when full).
        files_removed: files of the cached snapshot no longer in this one (their numbers are not counted).
        profile: the ``FrameProfile`` (equal to that of the table read whole) when asked for, else None.
    """

    hash: FrameHash
    hash_mode: Literal["incremental", "full"]
    reason: str | None
    version: int
    files: int
    files_reused: int
    files_read: int
    files_removed: int
    profile: FrameProfile | None = None


def table_location(uri: str) -> str:
    """The text a table's cached sums are filed under: an absolute local path, or the URL without a trailing ``/``.

    Example:
        >>> table_location("s3://bucket/sales/"), table_location("file:///data/sales"), table_location("file:/data/x")
        ('s3://bucket/sales', '/data/sales', '/data/x')
    """
    if re.match(r"(?i)file:/(?!/)", uri):  # file:/data/sales, as Spark and Hadoop print a local path
        return Path(unquote(uri[len("file:") :])).resolve().as_posix()
    m = _SCHEME.match(uri)
    if m is None:
        from ubunye.engines.paths import home_expanded

        try:
            return home_expanded(uri).resolve().as_posix()
        except ValueError as exc:
            raise HashError(f"Delta table location: {exc}") from None
    if m.group(1).lower() == "file":
        return Path(unquote(urlsplit(uri).path)).resolve().as_posix()
    return uri.rstrip("/")


def _cached(
    numbers: FileNumbers[P], cache: SumsCache | None, location: str, reader: str, snap: DeltaSnapshot
) -> tuple[Cached[P] | None, str]:
    """The cached numbers to use (or None) and, when None, why not."""
    noun = numbers.noun
    if cache is None:
        return None, f"no cache of per-file {noun} was given"
    try:
        cached = numbers.load(cache, location, reader)
    except Exception as exc:  # a cache that cannot be read costs a full read, never the hash
        log.warning("Delta table %s: cached file %s ignored, hashing in full: %s", location, noun, exc)
        return None, f"cached {noun} ignored: {exc}"
    if cached is None:
        return None, numbers.missing()
    if cached.table_id != snap.table_id:
        why = f"the cached {noun} are of another table at this location (id {cached.table_id}, now {snap.table_id})"
        log.warning("Delta table %s: %s; hashing in full", location, why)
        return None, why
    return cached, ""


def _rows_agree(rows: int, f: DeltaFile) -> bool:
    """Whether ``rows`` may be the rows of ``f``: its numRecords, less the rows its deletion vector deletes (known
    when the vectors were read); any count when the log does not tell."""
    if f.records is None or (f.deletion_vector is not None and f.deleted is None):
        return True
    return rows == f.records - (f.deleted.count if f.deleted is not None else 0)


def _split(
    numbers: FileNumbers[P], snap: DeltaSnapshot, schema: tuple[str, str], cached: Cached[P] | None, why: str
) -> tuple[dict[str, P], str]:
    """The files whose cached numbers can be used, and why none can when that is so (``schema``: the schema
    string and what else decides the reader's values, as ``FileSums.schema`` and ``FileSums.read``)."""
    noun = numbers.noun
    text, read = schema
    if cached is not None and cached.schema != text:
        return {}, f"the table's schema changed since its {noun} were cached (was {cached.schema}, now {text})"
    if cached is not None and cached.read != read:
        # e.g. columns renamed under column mapping (the schema string alike, each name now another column's
        # values), a CHAR column made a STRING, the session's CHAR padding turned off: the same files, other rows
        return {}, (
            f"the table is read otherwise than when its {noun} were cached (was {cached.read or 'plain'}, now "
            f"{read or 'plain'})"
        )
    reused: dict[str, P] = {}
    if cached is not None:
        for f in snap.files:
            part = cached.reusable(f)
            # A file holds exactly the log's numRecords rows (less those its deletion vector deletes, when read): a
            # cached part that counts other rows is not this file's (whatever its identity says): it is read again.
            if part is not None and _rows_agree(numbers.rows(part), f):
                reused[f.path] = part
    if not reused and not why:
        why = f"none of the {len(snap.files)} files has cached {noun}" if snap.files else "the table has no data files"
    return reused, why


def _gone(location: str, reused: Mapping[str, object]) -> str | None:
    """The first file of ``reused`` (paths relative to the table, as the log has them) that is not in storage, for
    a table on this machine's disk (a stat each); None when all are, or the table is elsewhere. A cached file's
    numbers say nothing of whether it is still there: a full read would fail on it (or skip it)."""
    if _SCHEME.match(location):
        return None
    root = Path(location)
    for path in reused:
        if not _SCHEME.match(path) and not (root / unquote(path)).is_file():
            return path
    return None


def _save(
    numbers: FileNumbers[P],
    cache: SumsCache | None,
    cached: Cached[P] | None,
    where: tuple[str, DeltaSnapshot, str, str, str],
    files: dict[str, tuple[Identity, P]],
) -> None:
    location, snap, reader, schema, read = where
    same = cached is not None and (cached.schema, cached.read) == (schema, read) and dict(cached.files) == files
    if cache is None or same:
        return
    try:
        numbers.save(cache, location, snap.table_id, reader, schema, snap.version, files, read)
    except Exception as exc:  # the hash is right either way; the next one just reads more
        log.warning("Delta table %s: could not keep the per-file %s: %s", location, numbers.noun, exc)


def _on_arrow(
    numbers: FileNumbers[P], dataset: ds.Dataset, snap: DeltaSnapshot, reused: dict[str, P], why: str
) -> tuple[dict[str, P], P, dict[str, P], int, str]:
    """Reads the files not reused on Arrow: ``(per_file, total, reused, files read, why)``."""
    from ubunye.hashing.delta_files import arrow_file_parts

    got, missing = arrow_file_parts(dataset, [f.path for f in snap.files if f.path not in reused], numbers.of_batches)
    if missing:  # never expected: the dataset is built from the same add actions; the table whole, uncached
        why = f"deltalake's dataset has no fragment for {len(missing)} file(s) of the log, e.g. {missing[0]!r}"
        return {}, numbers.of_batches(dataset.to_batches()), {}, len(snap.files), why
    per_file = {**reused, **got}
    return per_file, numbers.add(per_file[f.path] for f in snap.files), reused, len(got), why


def _on_spark(
    numbers: FileNumbers[P], files: SparkDeltaFiles, snap: DeltaSnapshot, reused: dict[str, P], why: str
) -> tuple[dict[str, P], P, dict[str, P], int, str]:
    """Reads the files not reused on Spark: ``(per_file, total, reused, files read, why)``."""
    if why:  # nothing cached to use: the whole table, each file's numbers kept for next time
        per_file, total = files.read_table(numbers)
        return per_file, total, {}, len(snap.files), why
    got, whole, why = files.read([f for f in snap.files if f.path not in reused], numbers)
    if whole is not None:
        return got, whole, {}, len(snap.files), why
    reused = {p: s for p, s in reused.items() if p not in got}  # read again (a partition's): fresh
    per_file = {**reused, **got}
    return per_file, numbers.add(per_file[f.path] for f in snap.files), reused, len(got), why


def _arrow_columns(schema: pa.Schema) -> tuple[tuple[str, str], ...]:
    from ubunye.hashing.types import type_name

    return tuple(sorted((n, type_name(schema.field(n).type, n)) for n in schema.names))


def _run(
    numbers: FileNumbers[P],
    source: tuple[ds.Dataset | None, SparkDeltaFiles | None],
    cache: SumsCache | None,
    where: tuple[str, DeltaSnapshot, str, str, str],
    chosen: str,
) -> DeltaHash:
    """The hash (and profile) of the snapshot from the files of ``source`` (deltalake's dataset, or Spark's
    reader), cached numbers of ``numbers``' kind reused where they hold; ``where`` is (location, snapshot, reader,
    schema string, what else decides the reader's values)."""
    location, snap, reader, schema, setup = where
    cached, why = _cached(numbers, cache, location, reader, snap)
    reused, why = _split(numbers, snap, (schema, setup), cached, why)
    gone = _gone(location, reused)
    if gone is not None:  # the full read fails on it, or skips its rows (Spark's ignoreMissingFiles): as it does
        reused, why = {}, f"the data file {gone} of the log is not in storage"
    dataset, files = source
    if files is not None:
        per_file, total, reused, read, why = _on_spark(numbers, files, snap, reused, why)
    else:
        assert dataset is not None
        from ubunye.hashing.delta_files import deltalake_arrow

        with deltalake_arrow(f"Delta table at {location}"):  # deltalake's dataset, read on this pyarrow
            per_file, total, reused, read, why = _on_arrow(numbers, dataset, snap, reused, why)
    result, profiled = numbers.finish(total, chosen)
    # Only files whose numbers are known are kept (on Spark a row of an unrecognised file counts in the total only).
    _save(
        numbers,
        cache,
        cached,
        where,
        {f.path: (f.identity, per_file[f.path]) for f in snap.files if f.path in per_file},
    )
    removed = len(set(cached.files) - {f.path for f in snap.files}) if cached is not None else 0
    mode: Literal["incremental", "full"] = "incremental" if reused else "full"
    if mode == "full" and not why:  # e.g. a partition read for its deletion vectors held every file
        why = "every file of the table had to be read"
    return DeltaHash(result, mode, why or None, snap.version, len(snap.files), len(reused), read, removed, profiled)


def hash_delta(
    table_uri: str,
    *,
    cache: SumsCache | None = None,
    version: int | None = None,
    spark: SparkSession | None = None,
    engine: str | None = None,
    storage_options: dict[str, str] | None = None,
    profile: bool = False,
    key: Sequence[str] | None = None,
    buckets: int | None = DEFAULT_BUCKETS,
) -> DeltaHash:
    """rows-v1 of the Delta table at ``table_uri`` (at ``version``, else the latest), reading only the files whose
    numbers ``cache`` does not hold, and refilling it; with ``profile``, its profile-v1 too (``key``, ``buckets``
    as for ``profile_frame``), from per-file partials cached for that key and bucket count.

    Without ``spark`` the table is read as deltalake's ``to_pyarrow_table()`` reads it (the pandas engine's
    read); with a SparkSession, as ``spark.read.format("delta")`` reads it, ``engine`` choosing the JVM function
    or the twin on the executors as in ``hash_spark`` (None: the JVM when the session can run it). The log is read
    with deltalake in both cases (``storage_options`` are its own). A cache that cannot be read or written is
    logged and costs a full read, never the hash.

    Raises:
        HashError: a column rows-v1 cannot hash (naming it).
        ProfileOptionError: with ``profile``, a key or bucket count profile-v1 cannot use (naming it), before any
            file is read.
        ValueError: ``engine`` is not one of ``"arrow"``, ``"jvm"``, None, or ``"jvm"`` without Spark.
        EngineError: without Spark, deltalake failed on a pyarrow older than it declares (pyarrow >= 21), or the
            table uses column mapping (which deltalake's Arrow reader does not apply); a local path deltalake would
            take for another (``%``); with Spark, a URL deltalake would take for another place than Spark does
            (``%``, ``?``, ``#``).
        deltalake's errors: the table cannot be opened at that version, or (without Spark) deltalake's Arrow
            reader cannot read it, exactly as ``to_pyarrow_table()`` would fail.
    """
    check_engine(engine, none_too=True)
    if spark is None and engine == "jvm":
        raise ValueError("engine='jvm' hashes through Spark: give spark=, or engine='arrow' / None for deltalake")
    from deltalake import DeltaTable

    from ubunye.hashing.delta_files import check_deltalake_path

    location = table_location(table_uri)
    # its log is read by deltalake on Spark too, and must be the log of the files Spark reads
    check_deltalake_path(table_uri, f"Delta table at {location}", hadoop=spark is not None)
    table = DeltaTable(table_uri, version=version, storage_options=storage_options)
    snap = read_snapshot(table, deletion_vectors=spark is not None)
    source: tuple[ds.Dataset | None, SparkDeltaFiles | None]
    if spark is None:
        from ubunye.hashing.delta_files import arrow_dataset
        from ubunye.hashing.types import schema_string

        dataset = arrow_dataset(table)
        schema, chosen, reader, names = schema_string(dataset.schema), "arrow", "deltalake", dataset.schema.names
        columns, source, setup = _arrow_columns(dataset.schema), (dataset, None), ""
    else:
        from ubunye.hashing.delta_spark import SparkDeltaFiles
        from ubunye.hashing.types import spark_columns

        files = SparkDeltaFiles(spark, table_uri, snap, engine)
        schema, chosen, reader, names = files.schema, files.engine, "spark", files.columns
        columns, source, setup = spark_columns(files.struct), (None, files), files.read_setup
    where = (location, snap, reader, schema, setup)
    if not profile:
        return _run(RowSums(schema), source, cache, where, chosen)
    chosen_key, n = check_profile_options(names, key, buckets)  # a ProfileOptionError names it, before any read
    return _run(ProfileParts(schema, columns, chosen_key, n), source, cache, where, chosen)
