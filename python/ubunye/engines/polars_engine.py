"""The polars engine: polars' own readers and writers, Delta through deltalake, SQL with ``polars.SQLContext``.

It is the third engine to show how small a backend is: polars frames expose ``__arrow_c_stream__``, so hashing
them needs nothing (``hash_frame`` reads them through Arrow), and ``ubunye.testing.backend_conformance`` checks
that what it reads, writes and computes hashes like the pandas reference. ``ENGINE: backend: polars`` in a
config.yaml, or ``--engine polars``, selects it.

Example:
    >>> import polars as pl
    >>> PolarsEngine().scalar("SELECT COUNT(*) FROM t", {"t": pl.DataFrame({"a": [1, 2]})})
    2
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from ubunye.config import IOConfig
from ubunye.engines import local_path, resolve_path, transaction
from ubunye.engines.delta import write_delta
from ubunye.engines.inputs import data_files, has_partitions
from ubunye.engines.locks import output_lock
from ubunye.engines.transaction import CommitHook
from ubunye.exceptions import EngineError
from ubunye.hashing import FrameHash, hash_frame

if TYPE_CHECKING:
    from ubunye.hashing.profile import FrameProfile


def _timestamp(text: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _sep(io: IOConfig) -> str:
    return str(io.options.get("sep", io.options.get("delimiter", ",")))


def _write_part(frame: pl.DataFrame, io: IOConfig, part: Path) -> None:
    """One part file, as Spark and the pandas engine write them."""
    if io.format == "parquet":
        frame.write_parquet(part)
    elif io.format == "csv":
        frame.write_csv(part, separator=_sep(io))
    else:
        frame.write_ndjson(part)


class PolarsEngine:
    """Runs tasks in this process on polars DataFrames (eager; a LazyFrame a transform returns is collected)."""

    name = "polars"

    def read(self, io: IOConfig, base_dir: Path) -> pl.DataFrame:
        if io.table is not None:
            msg = f"input {io.name!r}: catalog tables (table: {io.table}) need the spark engine"
            raise EngineError(msg)
        assert io.path is not None
        path = resolve_path(io.path, base_dir)
        try:
            if io.format == "delta":
                local = local_path(path)
                if local is not None and not local.exists():
                    msg = f"input {io.name!r}: no such file or folder: {local}"
                    raise EngineError(msg)
                version: Any = _timestamp(io.timestamp) if io.timestamp is not None else io.version
                return pl.read_delta(path, version=version, storage_options=io.storage_options or None)
            return self._read_files(io, path)
        except EngineError:
            raise
        except Exception as exc:  # polars and deltalake raise their own error types
            msg = f"input {io.name!r}: cannot read {io.format} at {path}: {type(exc).__name__}: {exc}"
            raise EngineError(msg) from exc

    def _read_files(self, io: IOConfig, path: str) -> pl.DataFrame:
        files = data_files(io, path)  # checked: no stray file, no empty folder, UTF-8 text (inputs.py)
        if files == []:
            return pl.DataFrame()  # allow_empty, and no schema is declared: no rows, no columns
        storage = io.storage_options or None
        if files is None:  # a URL: polars lists it
            source: Any = path
            hive: bool | None = None
        else:
            local = local_path(path)
            assert local is not None
            source = [str(f) for f in files]
            hive = has_partitions(files, local) or None  # name=value folders become columns, as Spark reads them
        glob = files is None  # listed files are taken literally: a [ or * in a name is not a pattern
        if io.format == "parquet":
            return pl.scan_parquet(source, storage_options=storage, hive_partitioning=hive, glob=glob).collect()
        if io.format == "csv":
            return pl.scan_csv(source, separator=_sep(io), storage_options=storage, glob=glob).collect()
        return pl.scan_ndjson(source, storage_options=storage).collect()

    def write(
        self,
        frame: pl.DataFrame,
        io: IOConfig,
        base_dir: Path,
        *,
        before_commit: Callable[[], None] | None = None,
    ) -> None:
        """Write one output, all of it or nothing (``engines.transaction``); ``before_commit`` runs just before
        the new data becomes visible.

        Example:
            >>> import tempfile
            >>> base = Path(tempfile.mkdtemp())
            >>> PolarsEngine().write(pl.DataFrame({"a": [1]}), IOConfig("o", format="csv", path="o"), base)
            >>> PolarsEngine().read(IOConfig("o", format="csv", path="o"), base).height
            1
        """
        self.check_output(io, base_dir)
        assert io.path is not None
        path = resolve_path(io.path, base_dir)
        hook = CommitHook(before_commit)
        try:
            transaction.refuse_columns(io, frame.head(0).to_arrow().schema)  # no rows: the types only
            if io.format == "delta":
                with output_lock(path):  # a no-op for URLs; serialises local runs
                    write_delta(frame.to_arrow(), io, path, hook)
            else:
                transaction.write_parts(io, path, self.name, lambda part: _write_part(frame, io, part), hook)
        except Exception as exc:
            error = transaction.write_error(io, path, exc, hook)
            if error is exc:
                raise
            raise error from exc

    def check_output(self, io: IOConfig, base_dir: Path) -> None:
        """Raise EngineError if this output cannot be written, judged from its config and location alone, so the
        runner can refuse before reading anything (``write`` checks again, and checks the columns).

        Example:
            >>> PolarsEngine().check_output(IOConfig("o", format="csv", path="/u/o", partition_by=["id"]), Path("/u"))
            Traceback (most recent call last):
            ubunye.exceptions.EngineError: output 'o': the polars engine cannot write csv partitioned by 'id' ...
        """
        if io.table is not None:
            msg = f"output {io.name!r}: catalog tables (table: {io.table}) need the spark engine"
            raise EngineError(msg)
        assert io.path is not None
        transaction.refuse_unwritable(io, resolve_path(io.path, base_dir), self.name)

    def sql(self, query: str, sources: dict[str, Any]) -> pl.DataFrame:
        frames = {name: self.native(frame) for name, frame in sources.items()}
        return pl.SQLContext(frames=frames).execute(query, eager=True)

    def scalar(self, query: str, sources: dict[str, Any]) -> Any:
        return self.sql(query, sources).row(0)[0]

    def quote(self, column: str) -> str:
        return '"' + column.replace('"', '""') + '"'

    def hash(self, frame: pl.DataFrame) -> FrameHash:
        return hash_frame(frame)

    def profile(self, frame: pl.DataFrame, *, key: list[str] | None, buckets: int) -> FrameProfile:
        from ubunye.hashing.profile import profile_frame

        return profile_frame(frame, key=key, buckets=buckets)

    def delta_version(self, io: IOConfig, base_dir: Path) -> int | None:
        from ubunye.engines.delta import dataset_version

        return dataset_version(io, base_dir)

    def native(self, frame: Any) -> pl.DataFrame:
        if type(frame).__module__.startswith("narwhals"):
            import narwhals as nw

            frame = nw.to_native(frame)
        if isinstance(frame, pl.LazyFrame):
            return frame.collect()
        if isinstance(frame, pl.DataFrame):
            return frame
        import pyarrow as pa

        if isinstance(frame, pa.Table):
            return pl.from_arrow(frame)  # type: ignore[return-value]
        msg = f"the polars engine needs a polars DataFrame, got {type(frame).__module__}.{type(frame).__name__}"
        raise EngineError(msg)

    def from_pandas(self, frame: Any) -> pl.DataFrame:
        from ubunye.engines.pandas_engine import _to_arrow  # the rows-v1 conversion: what is hashed is kept

        return pl.from_arrow(_to_arrow(frame))  # type: ignore[return-value]

    def hold(self, frame: pl.DataFrame) -> pl.DataFrame:
        return frame

    def release(self, frame: pl.DataFrame) -> None:
        return None

    def environment(self) -> dict[str, Any]:
        return {"version": pl.__version__}
