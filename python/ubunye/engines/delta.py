"""Delta for the in-process engines (pandas, polars) through deltalake: writes with the commit hook, and reads
and versions as of io.version or io.timestamp.

A Delta table is transactional already: data files are written first, invisible until one JSON entry in
``_delta_log`` commits them, so a failed or killed write leaves the previous version current (its unreferenced
files are removed by VACUUM). deltalake writes and commits in one call, so ``before_commit`` runs when deltalake
has consumed the last row of the data: after the data is handed over, before the commit. If the hook raises,
deltalake is told the stream failed and commits nothing.

deltalake reads the stream on its own (tokio) threads, where Python code must not call deltalake again nor expect
to be on the caller's thread (the runner's locks are per thread). So deltalake runs on a worker thread, and the
stream's end hands over to the calling thread, which runs the hook and then lets the stream end or fail.

Example:
    >>> import tempfile, pyarrow as pa
    >>> from ubunye.config import IOConfig
    >>> path = tempfile.mkdtemp() + "/t"
    >>> write_delta(pa.table({"a": [1]}), IOConfig("t", format="delta"), path, lambda: None)
    >>> from deltalake import DeltaTable
    >>> DeltaTable(path).version()
    0
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from ubunye.engines.paths import resolve_path

if TYPE_CHECKING:
    from pathlib import Path

    from deltalake import DeltaTable

    from ubunye.config import IOConfig


class _Abort(Exception):
    """Raised into deltalake's stream: the hook failed, so the write must not commit."""


class _Handoff:
    """The stream's end waiting for the calling thread's decision: commit (True) or abort (False)."""

    def __init__(self) -> None:
        self.wake = threading.Event()  # the stream ended, or the write ended before it did
        self.at_end = False
        self._decided = threading.Event()
        self._commit = False

    def stream_ended(self) -> bool:
        self.at_end = True
        self.wake.set()
        self._decided.wait()
        return self._commit

    def decide(self, commit: bool) -> None:
        self._commit = commit
        self._decided.set()


def write_delta(table: pa.Table, io: IOConfig, path: str, hook: Callable[[], None]) -> None:
    """Write ``table`` to the Delta table at ``path`` with io.mode, calling ``hook`` just before the commit.

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> def refuse():
        ...     raise RuntimeError("no")
        >>> write_delta(pa.table({"a": [1]}), IOConfig("t", format="delta"), tempfile.mkdtemp(), refuse)
        Traceback (most recent call last):
        RuntimeError: no
    """
    from deltalake import write_deltalake

    handoff, failure = _Handoff(), []

    def batches() -> Iterator[pa.RecordBatch]:
        yield from table.to_batches()
        if not handoff.stream_ended():
            raise _Abort("before_commit failed: nothing is committed")

    def write() -> None:
        try:
            write_deltalake(
                path,
                pa.RecordBatchReader.from_batches(table.schema, batches()),
                mode=io.mode,  # type: ignore[call-overload]  # config allows overwrite or append only
                partition_by=io.partition_by or None,
                storage_options=io.storage_options or None,
            )
        except BaseException as exc:
            failure.append(exc)
        finally:
            handoff.wake.set()

    worker = threading.Thread(target=write, name=f"ubunye-delta-{io.name}", daemon=True)
    worker.start()
    commit = False
    try:
        handoff.wake.wait()
        if handoff.at_end:
            hook()  # on the caller's thread; if it raises, the stream fails and deltalake commits nothing
            commit = True
    finally:
        handoff.decide(commit)
        worker.join()
    if failure:
        from ubunye.hashing.delta_files import deltalake_arrow

        with deltalake_arrow(f"output {io.name!r} (Delta at {path})"):
            raise failure[0]


def timestamp_of(io: IOConfig) -> datetime.datetime | None:
    """The instant io.timestamp names (ISO 8601, UTC when it names no zone), or None: what a Delta read of ``io``
    travels back to.

    Example:
        >>> from ubunye.config import IOConfig
        >>> timestamp_of(IOConfig("t", format="delta", timestamp="2024-05-01T12:00:00Z")).isoformat()
        '2024-05-01T12:00:00+00:00'
    """
    if io.timestamp is None:
        return None
    stamp = datetime.datetime.fromisoformat(io.timestamp.replace("Z", "+00:00"))
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=datetime.UTC)


def _open(io: IOConfig, path: str) -> DeltaTable:
    """The Delta table at ``path`` as a read of ``io`` sees it: at io.version, or as of io.timestamp, else latest."""
    from deltalake import DeltaTable

    table = DeltaTable(path, storage_options=io.storage_options or None)
    if io.version is not None:
        # Checked against the latest first: deltalake asked for a version far beyond it (2**63 - 1) searches
        # for it without end.
        latest = table.version()
        if io.version > latest:
            msg = f"version {io.version} does not exist (the latest is {latest})"
            raise ValueError(msg)
        if io.version != latest:
            table.load_as_version(io.version)
    stamp = timestamp_of(io)
    if stamp is not None:
        table.load_as_version(stamp)
    return table


def read_table(io: IOConfig, path: str) -> pa.Table:
    """The rows of the Delta table at ``path`` as a read of ``io`` sees them (see :func:`table_version`).

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> path = tempfile.mkdtemp() + "/t"
        >>> write_delta(pa.table({"a": [1]}), IOConfig("t", format="delta"), path, lambda: None)
        >>> read_table(IOConfig("t", format="delta"), path).to_pydict()
        {'a': [1]}
    """
    from ubunye.hashing.delta_files import deltalake_arrow

    table = _open(io, path)
    with deltalake_arrow(f"input {io.name!r} (Delta at {path})"):
        return table.to_pyarrow_table()


def table_version(io: IOConfig, path: str) -> int:
    """The version of the Delta table at ``path`` a read of ``io`` sees: io.version when given (checked to
    exist), the version current at io.timestamp when given, else the latest. The runner reads that version
    (pinned), so the record names exactly the version that was read.

    Example:
        >>> import tempfile, pyarrow as pa
        >>> from ubunye.config import IOConfig
        >>> path = tempfile.mkdtemp() + "/t"
        >>> for _ in range(2):
        ...     write_delta(pa.table({"a": [1]}), IOConfig("t", format="delta", mode="append"), path, lambda: None)
        >>> table_version(IOConfig("t", format="delta"), path), table_version(IOConfig("t", version=0), path)
        (1, 0)
    """
    return int(_open(io, path).version())


def dataset_version(io: IOConfig, base_dir: Path) -> int | None:
    """:func:`table_version` of a Delta path input or output, None for anything else: the in-process engines'
    ``delta_version``."""
    if io.format != "delta" or io.path is None:
        return None
    return table_version(io, resolve_path(io.path, base_dir))


__all__ = ["dataset_version", "read_table", "table_version", "timestamp_of", "write_delta"]
