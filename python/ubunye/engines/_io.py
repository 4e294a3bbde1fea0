"""What the engines share to read and write: a pandas frame's Arrow form, the csv separator, and the half of an
in-process engine (pandas, polars) that does not depend on its frames (:class:`LocalEngine`).

Example:
    >>> import pandas as pd
    >>> pandas_table(pd.DataFrame({"x": [1.5, float("nan")]})).column("x").to_pylist()
    [1.5, nan]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

import pyarrow as pa

from ubunye.engines.delta import dataset_version, write_delta
from ubunye.engines.locks import output_lock
from ubunye.engines.paths import location, resolve_path
from ubunye.engines.transaction import CommitHook, refuse_columns, refuse_unwritable, write_error, write_parts
from ubunye.exceptions import EngineError, HashError
from ubunye.hashing import FrameHash, FrameProfile, hash_frame, profile_frame
from ubunye.hashing.frame import to_arrow

if TYPE_CHECKING:
    import pandas as pd

    from ubunye.config import IOConfig
    from ubunye.hashing.delta_files import SumsCache
    from ubunye.hashing.delta_hash import DeltaHash

#: The native frame of an in-process engine (pandas.DataFrame, polars.DataFrame).
FrameT = TypeVar("FrameT")


def pandas_table(frame: pd.DataFrame) -> pa.Table:
    """``frame`` as Arrow with the rows-v1 rules (NaN stays NaN), so what is written is what was hashed; a frame
    rows-v1 refuses (a mixed object column...) is converted as pyarrow does it."""
    try:
        return to_arrow(frame)
    except HashError:
        return pa.Table.from_pandas(frame, preserve_index=False)


def unwrap(frame: object) -> object:
    """The native frame inside a narwhals frame (``nw.from_native(...)``), else ``frame`` as it is.

    Example:
        >>> import narwhals as nw, pandas as pd
        >>> type(unwrap(nw.from_native(pd.DataFrame({"a": [1]})))).__name__
        'DataFrame'
    """
    if type(frame).__module__.startswith("narwhals"):
        import narwhals as nw

        return nw.to_native(frame, pass_through=True)
    return frame


def separator(io: IOConfig) -> str:
    """The csv field separator: ``options.sep``, else ``options.delimiter`` (Spark's two names), else a comma.

    Example:
        >>> from ubunye.config import IOConfig
        >>> separator(IOConfig("i", format="csv", options={"delimiter": ";"}))
        ';'
    """
    return str(io.options.get("sep", io.options.get("delimiter", ",")))


class LocalEngine(ABC, Generic[FrameT]):
    """An engine running in this process on frames of type ``FrameT``, writing through Arrow: outputs go to local
    folders of part files (``engines.transaction``) or to Delta through deltalake (``engines.delta``), catalog
    tables are refused, and a frame is held as it is.

    A subclass reads, runs SQL, and says how its frame becomes Arrow (:meth:`_arrow`) and how it writes one part
    file (:meth:`_write_part`), so either engine reads what the other (or Spark) wrote.
    """

    name: str

    @abstractmethod
    def _arrow(self, frame: FrameT, *, rows: bool) -> pa.Table:
        """``frame`` as Arrow: every row when ``rows``, else (when cheaper) its columns and types alone."""

    @abstractmethod
    def _write_part(self, frame: FrameT, table: pa.Table, io: IOConfig, part: Path) -> None:
        """Write one part file of ``io.format`` at ``part``; ``table`` is ``_arrow(frame, rows=False)``."""

    def _input_path(self, io: IOConfig, base_dir: Path) -> str:
        """Where the input ``io`` is read, resolved; EngineError for a catalog table."""
        if io.table is not None:
            msg = f"input {io.name!r}: catalog tables (table: {io.table}) need the spark engine"
            raise EngineError(msg)
        assert io.path is not None
        return resolve_path(io.path, base_dir)

    def write(
        self, frame: FrameT, io: IOConfig, base_dir: Path, *, before_commit: Callable[[], None] | None = None
    ) -> None:
        """Write one output, all of it or nothing (``engines.transaction``); ``before_commit`` runs just before
        the new data becomes visible, and what it raises propagates unchanged."""
        self.check_output(io, base_dir)
        path = location(io, base_dir)
        hook = CommitHook(before_commit)
        try:
            table = self._arrow(frame, rows=io.format == "delta")
            refuse_columns(io, table.schema)  # before anything is written
            if io.format == "delta":
                with output_lock(path):  # a no-op for URLs; serialises local runs
                    write_delta(table, io, path, hook)
            else:
                write_parts(io, path, self.name, lambda part: self._write_part(frame, table, io, part), hook)
        except Exception as exc:
            error = write_error(io, path, exc, hook)
            if error is exc:
                raise
            raise error from exc

    def check_output(self, io: IOConfig, base_dir: Path) -> None:
        """Raise EngineError if this output cannot be written, judged from its config and location alone, so the
        runner can refuse before reading anything (``write`` checks again, and checks the columns)."""
        refuse_unwritable(io, location(io, base_dir), self.name)

    def quote(self, column: str) -> str:
        """A double-quoted SQL identifier (DuckDB and polars SQL alike)."""
        return '"' + column.replace('"', '""') + '"'

    def hash(self, frame: FrameT) -> FrameHash:
        return hash_frame(frame)

    def profile(self, frame: FrameT, *, key: list[str] | None, buckets: int) -> FrameProfile:
        return profile_frame(frame, key=key, buckets=buckets)

    def delta_version(self, io: IOConfig, base_dir: Path) -> int | None:
        return dataset_version(io, base_dir)

    def hash_delta(self, io: IOConfig, base_dir: Path, *, version: int | None, cache: SumsCache) -> DeltaHash | None:
        """The Delta input's hash (and profile, when ``io.profile``) as deltalake's ``to_pyarrow_table()`` reads it
        (the pandas engine's read)."""
        if io.format != "delta" or io.path is None:
            return None
        from ubunye.hashing.delta_hash import hash_delta

        path = self._input_path(io, base_dir)
        return hash_delta(
            path, cache=cache, version=version, storage_options=io.storage_options or None,
            profile=io.profile, key=io.key or None, buckets=io.buckets,
        )  # fmt: skip

    def hold(self, frame: FrameT) -> FrameT:
        return frame

    def release(self, frame: FrameT) -> None:
        return None


__all__ = ["FrameT", "LocalEngine", "pandas_table", "separator", "unwrap"]
