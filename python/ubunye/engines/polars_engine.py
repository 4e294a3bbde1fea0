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
from pathlib import Path
from typing import Any

import polars as pl

from ubunye.config import IOConfig
from ubunye.engines import is_url, new_part_file, resolve_path
from ubunye.exceptions import EngineError
from ubunye.hashing import FrameHash, hash_frame


def _timestamp(text: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _sep(io: IOConfig) -> str:
    return str(io.options.get("sep", io.options.get("delimiter", ",")))


class PolarsEngine:
    """Runs tasks in this process on polars DataFrames (eager; a LazyFrame a transform returns is collected)."""

    name = "polars"

    def read(self, io: IOConfig, base_dir: Path) -> pl.DataFrame:
        if io.table is not None:
            msg = f"input {io.name!r}: catalog tables (table: {io.table}) need the spark engine"
            raise EngineError(msg)
        assert io.path is not None
        path = resolve_path(io.path, base_dir)
        if not is_url(path) and not Path(path).exists():
            msg = f"input {io.name!r}: no such file or folder: {path}"
            raise EngineError(msg)
        try:
            if io.format == "delta":
                version: Any = _timestamp(io.timestamp) if io.timestamp is not None else io.version
                return pl.read_delta(path, version=version, storage_options=io.storage_options or None)
            source = path if is_url(path) or Path(path).is_file() else f"{path.rstrip('/')}/**/*.{io.format}"
            if io.format == "parquet":
                return pl.read_parquet(source, storage_options=io.storage_options or None)
            if io.format == "csv":
                return pl.read_csv(source, separator=_sep(io), storage_options=io.storage_options or None)
            return pl.read_ndjson(source, storage_options=io.storage_options or None)
        except Exception as exc:  # polars and deltalake raise their own error types
            msg = f"input {io.name!r}: cannot read {io.format} at {path}: {type(exc).__name__}: {exc}"
            raise EngineError(msg) from exc

    def write(self, frame: pl.DataFrame, io: IOConfig, base_dir: Path) -> None:
        if io.table is not None:
            msg = f"output {io.name!r}: catalog tables (table: {io.table}) need the spark engine"
            raise EngineError(msg)
        assert io.path is not None
        path = resolve_path(io.path, base_dir)
        try:
            if io.format == "delta":
                options = {"partition_by": io.partition_by} if io.partition_by else None
                frame.write_delta(
                    path, mode=io.mode, storage_options=io.storage_options or None, delta_write_options=options
                )
            else:
                self._write_files(frame, io, Path(path))
        except EngineError:
            raise
        except Exception as exc:
            msg = f"output {io.name!r}: cannot write {io.format} to {path}: {type(exc).__name__}: {exc}"
            raise EngineError(msg) from exc

    def _write_files(self, frame: pl.DataFrame, io: IOConfig, folder: Path) -> None:
        """A folder of part files, as Spark and the pandas engine write them."""
        part = new_part_file(io, folder)
        if io.format == "parquet":
            frame.write_parquet(part)
        elif io.format == "csv":
            frame.write_csv(part, separator=_sep(io))
        else:
            frame.write_ndjson(part)

    def sql(self, query: str, sources: dict[str, Any]) -> pl.DataFrame:
        frames = {name: self.native(frame) for name, frame in sources.items()}
        return pl.SQLContext(frames=frames).execute(query, eager=True)

    def scalar(self, query: str, sources: dict[str, Any]) -> Any:
        return self.sql(query, sources).row(0)[0]

    def quote(self, column: str) -> str:
        return '"' + column.replace('"', '""') + '"'

    def hash(self, frame: pl.DataFrame) -> FrameHash:
        return hash_frame(frame)

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
