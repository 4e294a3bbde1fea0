"""Delta writes for the in-process engines (pandas, polars) through deltalake, with the commit hook.

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

if TYPE_CHECKING:
    from pathlib import Path

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
                mode=io.mode,  # type: ignore[arg-type]
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
        raise failure[0]


def table_version(io: IOConfig, path: str, timestamp: datetime.datetime | None = None) -> int:
    """The version of the Delta table at ``path`` a read of ``io`` sees: io.version when given (checked to
    exist), the version current at ``timestamp`` when given, else the latest. The runner reads that version
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
    from deltalake import DeltaTable

    table = DeltaTable(path, version=io.version, storage_options=io.storage_options or None)
    if timestamp is not None:
        table.load_as_version(timestamp)
    return int(table.version())


def dataset_version(io: IOConfig, base_dir: Path) -> int | None:
    """:func:`table_version` of a Delta path input or output (io.timestamp read as ISO 8601, UTC when it names
    no zone), None for anything else: the in-process engines' ``delta_version``."""
    if io.format != "delta" or io.path is None:
        return None
    from ubunye.engines.paths import resolve_path

    stamp = None
    if io.timestamp is not None:
        stamp = datetime.datetime.fromisoformat(io.timestamp.replace("Z", "+00:00"))
        stamp = stamp if stamp.tzinfo else stamp.replace(tzinfo=datetime.UTC)
    return table_version(io, resolve_path(io.path, base_dir), stamp)


__all__ = ["dataset_version", "table_version", "write_delta"]
