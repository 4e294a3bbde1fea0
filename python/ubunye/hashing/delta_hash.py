"""rows-v1 of a Delta table, reading only the files whose sums are not cached: ``hash_delta``.

A table's sums are the sums of its files' sums (docs/rows-v1.md section 8), so the hash of a snapshot is the sum,
over its add actions, of each file's sums: cached when the file's identity (path, size, modification time,
deletion vector) is the one they were computed for, else read now. Removed files simply are not added: summing
the current add actions, rather than subtracting removed files from a cached total, costs the same reads (only the
new files) and cannot carry an error forward: whatever happened since the cached snapshot (OPTIMIZE, VACUUM,
RESTORE, an overwrite, a crashed run), the total is rebuilt from the snapshot being hashed.

The result is the hash a full read gives, always: on Arrow that of ``DeltaTable.to_pyarrow_table()`` (the pandas
engine's read), on Spark that of ``spark.read.format("delta")`` at the same version. When a file's rows cannot be
told apart from the table's (deletion vectors, column mapping... on Spark), the table reader reads the whole table
and ``reason`` says why (``hash_mode="full"``); the cache is refilled from that read, so the next hash is
incremental again.

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
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import unquote, urlsplit

from ubunye.hashing.delta_files import DeltaSnapshot, FileSums, Sums, SumsCache, read_snapshot
from ubunye.hashing.digest import FrameHash, add_sums, check_engine, finish

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger("ubunye")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


@dataclass(frozen=True)
class DeltaHash:
    """The rows-v1 hash of one Delta snapshot, and how it was made.

    Attributes:
        hash: the ``FrameHash``, equal to that of the table read whole.
        hash_mode: ``"incremental"`` (cached sums of some files were used, only the others read) or ``"full"``
            (every file was read).
        reason: why the hash is full (None when incremental).
        version: the table version hashed.
        files: data files in the snapshot.
        files_reused: files whose cached sums were used.
        files_read: files read now (all of them when full).
        files_removed: files of the cached snapshot no longer in this one (their sums are not counted).
    """

    hash: FrameHash
    hash_mode: Literal["incremental", "full"]
    reason: str | None
    version: int
    files: int
    files_reused: int
    files_read: int
    files_removed: int


def table_location(uri: str) -> str:
    """The text a table's cached sums are filed under: an absolute local path, or the URL without a trailing ``/``.

    Example:
        >>> table_location("s3://bucket/sales/"), table_location("file:///data/sales")
        ('s3://bucket/sales', '/data/sales')
    """
    m = _SCHEME.match(uri)
    if m is None:
        return Path(uri).expanduser().resolve().as_posix()
    if m.group(1).lower() == "file":
        return Path(unquote(urlsplit(uri).path)).resolve().as_posix()
    return uri.rstrip("/")


def _cached(cache: SumsCache | None, location: str, reader: str, snap: DeltaSnapshot) -> tuple[FileSums | None, str]:
    """The cached sums to use (or None) and, when None, why not."""
    if cache is None:
        return None, "no cache of per-file sums was given"
    try:
        cached = cache.load(location, reader)
    except Exception as exc:  # a cache that cannot be read costs a full read, never the hash
        log.warning("Delta table %s: cached file sums ignored, hashing in full: %s", location, exc)
        return None, f"cached sums ignored: {exc}"
    if cached is None:
        return None, "no sums of this table are cached yet"
    if cached.table_id != snap.table_id:
        why = f"the cached sums are of another table at this location (id {cached.table_id}, now {snap.table_id})"
        log.warning("Delta table %s: %s; hashing in full", location, why)
        return None, why
    return cached, ""


def _split(snap: DeltaSnapshot, schema: str, cached: FileSums | None, why: str) -> tuple[dict[str, Sums], str]:
    """The files whose cached sums can be used, and why none can when that is so."""
    if cached is not None and cached.schema != schema:
        return {}, f"the table's schema changed since its sums were cached (was {cached.schema}, now {schema})"
    reused: dict[str, Sums] = {}
    if cached is not None:
        for f in snap.files:
            sums = cached.reusable(f)
            if sums is not None:
                reused[f.path] = sums
    if not reused and not why:
        why = f"none of the {len(snap.files)} files has cached sums" if snap.files else "the table has no data files"
    return reused, why


def _save(cache: SumsCache | None, new: FileSums, cached: FileSums | None) -> None:
    if cache is None or (cached is not None and cached.schema == new.schema and dict(cached.files) == dict(new.files)):
        return
    try:
        cache.save(new)
    except Exception as exc:  # the hash is right either way; the next one just reads more
        log.warning("Delta table %s: could not keep the per-file sums: %s", new.table, exc)


def hash_delta(
    table_uri: str,
    *,
    cache: SumsCache | None = None,
    version: int | None = None,
    spark: SparkSession | None = None,
    engine: str | None = None,
    storage_options: dict[str, str] | None = None,
) -> DeltaHash:
    """rows-v1 of the Delta table at ``table_uri`` (at ``version``, else the latest), reading only the files whose
    sums ``cache`` does not hold, and refilling it.

    Without ``spark`` the table is read as deltalake's ``to_pyarrow_table()`` reads it (the pandas engine's
    read); with a SparkSession, as ``spark.read.format("delta")`` reads it, ``engine`` choosing the JVM function
    or the twin on the executors as in ``hash_spark`` (None: the JVM when the session can run it). The log is read
    with deltalake in both cases (``storage_options`` are its own). A cache that cannot be read or written is
    logged and costs a full read, never the hash.

    Raises:
        HashError: a column rows-v1 cannot hash (naming it).
        ValueError: ``engine`` is not one of ``"arrow"``, ``"jvm"``, None, or ``"jvm"`` without Spark.
        deltalake's errors: the table cannot be opened at that version, or (without Spark) deltalake's Arrow
            reader cannot read it, exactly as ``to_pyarrow_table()`` would fail.
    """
    check_engine(engine, none_too=True)
    if spark is None and engine == "jvm":
        raise ValueError("engine='jvm' hashes through Spark: give spark=, or engine='arrow' / None for deltalake")
    from deltalake import DeltaTable

    location = table_location(table_uri)
    table = DeltaTable(table_uri, version=version, storage_options=storage_options)
    snap = read_snapshot(table, deletion_vectors=spark is not None)
    reader = "deltalake" if spark is None else "spark"
    cached, why = _cached(cache, location, reader, snap)
    if spark is None:
        from ubunye.hashing.delta_files import arrow_dataset, arrow_file_sums, batch_sums
        from ubunye.hashing.types import schema_string

        dataset = arrow_dataset(table)
        schema, chosen = schema_string(dataset.schema), "arrow"
        reused, why = _split(snap, schema, cached, why)
        got, missing = arrow_file_sums(dataset, [f.path for f in snap.files if f.path not in reused])
        if missing:  # never expected: the dataset is built from the same add actions; the table whole, uncached
            why = f"deltalake's dataset has no fragment for {len(missing)} file(s) of the log, e.g. {missing[0]!r}"
            reused, sums, read = {}, {}, len(snap.files)
            total = batch_sums(dataset.to_batches())
        else:
            sums, read = {**reused, **got}, len(got)
            total = add_sums(sums[f.path] for f in snap.files)
    else:
        from ubunye.hashing.delta_spark import SparkDeltaFiles

        files = SparkDeltaFiles(spark, table_uri, snap, engine)
        schema, chosen = files.schema, files.engine
        reused, why = _split(snap, schema, cached, why)
        if why:  # nothing cached to use: the whole table, each file's sums kept for next time
            (sums, total), read = files.read_table(), len(snap.files)
        else:
            got, whole, why = files.read([f for f in snap.files if f.path not in reused])
            if whole is not None:
                reused, sums, total, read = {}, got, whole, len(snap.files)
            else:
                reused = {p: s for p, s in reused.items() if p not in got}  # read again (a partition's): fresh
                sums, read = {**reused, **got}, len(got)
                total = add_sums(sums[f.path] for f in snap.files)
    result = finish(schema, *total, engine=chosen)
    # Only files whose sums are known are kept (on Spark a row of an unrecognised file counts in the total only).
    current = {f.path: (f.identity, sums[f.path]) for f in snap.files if f.path in sums}
    _save(cache, FileSums(location, snap.table_id, reader, schema, snap.version, current), cached)
    removed = len(set(cached.files) - {f.path for f in snap.files}) if cached is not None else 0
    mode: Literal["incremental", "full"] = "incremental" if reused else "full"
    if mode == "full" and not why:  # e.g. a partition read for its deletion vectors held every file
        why = "every file of the table had to be read"
    return DeltaHash(result, mode, why or None, snap.version, len(snap.files), len(reused), read, removed)
