"""The pandas engine: pyarrow for parquet/csv/json, deltalake (delta-rs) for Delta, DuckDB for SQL.

Frames are pandas DataFrames with Arrow-backed dtypes (``pd.ArrowDtype``), so what was read keeps its exact
types (an int column with nulls stays int64) and hashes the same as on Spark.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from ubunye.config import IOConfig
from ubunye.engines import local_path, resolve_path, transaction
from ubunye.engines.delta import write_delta
from ubunye.engines.inputs import data_files, has_partitions
from ubunye.engines.locks import output_lock
from ubunye.engines.transaction import CommitHook
from ubunye.exceptions import EngineError, HashError
from ubunye.hashing import FrameHash, hash_frame

if TYPE_CHECKING:
    from ubunye.hashing.profile import FrameProfile


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def _to_arrow(frame: pd.DataFrame) -> pa.Table:
    """Convert with the rows-v1 rules (NaN stays NaN), so what is written is what was hashed."""
    from ubunye.hashing.frame import to_arrow

    try:
        return to_arrow(frame)
    except HashError:
        return pa.Table.from_pandas(frame, preserve_index=False)


def _write_part(table: pa.Table, io: IOConfig, part: Path) -> None:
    """One part file: a folder of part files, as Spark writes them (so either engine reads what the other wrote)."""
    if io.format == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, part)
    elif io.format == "csv":
        import pyarrow.csv as pcsv

        sep = str(io.options.get("sep", io.options.get("delimiter", ",")))
        pcsv.write_csv(table, part, pcsv.WriteOptions(delimiter=sep))
    else:
        with part.open("w", encoding="utf-8") as fh:
            for row in table.to_pylist():
                fh.write(json.dumps({k: v for k, v in row.items() if v is not None}, default=str) + "\n")


def _timestamp(text: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


class PandasEngine:
    """Runs tasks in this process on pandas DataFrames.

    Example:
        >>> PandasEngine().scalar("SELECT COUNT(*) FROM t", {"t": pd.DataFrame({"a": [1, 2]})})
        2
    """

    name = "pandas"

    # -- reading ---------------------------------------------------------------------------------------------------
    def read(self, io: IOConfig, base_dir: Path) -> pd.DataFrame:
        if io.table is not None:
            msg = f"input {io.name!r}: catalog tables (table: {io.table}) need the spark engine"
            raise EngineError(msg)
        assert io.path is not None
        path = resolve_path(io.path, base_dir)
        try:
            if io.format == "delta":
                return _to_pandas(self._read_delta(io, path))
            return _to_pandas(self._read_files(io, path))
        except EngineError:
            raise
        except (OSError, pa.ArrowException, ValueError) as exc:
            msg = f"input {io.name!r}: cannot read {io.format} at {path}: {exc}"
            raise EngineError(msg) from exc
        except Exception as exc:  # deltalake raises its own errors (TableNotFoundError...)
            msg = f"input {io.name!r}: cannot read {io.format} at {path}: {type(exc).__name__}: {exc}"
            raise EngineError(msg) from exc

    def _read_delta(self, io: IOConfig, path: str) -> pa.Table:
        from deltalake import DeltaTable

        table = DeltaTable(path, version=io.version, storage_options=io.storage_options or None)
        if io.timestamp is not None:
            table.load_as_version(_timestamp(io.timestamp))
        return table.to_pyarrow_table()

    def _read_files(self, io: IOConfig, path: str) -> pa.Table:
        import pyarrow.dataset as ds

        files = data_files(io, path)  # checked: no stray file, no empty folder, UTF-8 text (inputs.py)
        if files == []:
            return pa.table({})  # allow_empty, and no schema is declared: no rows, no columns
        fmt: Any = io.format
        if io.format == "csv":
            import pyarrow.csv as pcsv

            sep = str(io.options.get("sep", io.options.get("delimiter", ",")))
            fmt = ds.CsvFileFormat(parse_options=pcsv.ParseOptions(delimiter=sep))
        if files is None:  # a URL: pyarrow lists it
            return ds.dataset(path, format=fmt).to_table()
        root = local_path(path)
        assert root is not None
        if has_partitions(files, root):  # name=value folders become columns, as Spark reads them (not dropped)
            partitioned = ds.dataset(
                [str(f) for f in files], format=fmt, partitioning="hive", partition_base_dir=str(root)
            )
            return partitioned.to_table()
        return ds.dataset([str(f) for f in files], format=fmt).to_table()

    # -- writing ---------------------------------------------------------------------------------------------------
    def write(
        self,
        frame: pd.DataFrame,
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
            >>> PandasEngine().write(pd.DataFrame({"a": [1]}), IOConfig("o", format="parquet", path="o"), base)
            >>> len(PandasEngine().read(IOConfig("o", format="parquet", path="o"), base))
            1
        """
        self.check_output(io, base_dir)
        assert io.path is not None
        path = resolve_path(io.path, base_dir)
        hook = CommitHook(before_commit)
        try:
            table = _to_arrow(frame)
            transaction.refuse_columns(io, table.schema)  # before anything is written
            if io.format == "delta":
                with output_lock(path):  # a no-op for URLs; serialises local runs
                    write_delta(table, io, path, hook)
            else:
                transaction.write_parts(io, path, self.name, lambda part: _write_part(table, io, part), hook)
        except Exception as exc:
            error = transaction.write_error(io, path, exc, hook)
            if error is exc:
                raise
            raise error from exc

    def check_output(self, io: IOConfig, base_dir: Path) -> None:
        """Raise EngineError if this output cannot be written, judged from its config and location alone, so the
        runner can refuse before reading anything (``write`` checks again, and checks the columns).

        Example:
            >>> PandasEngine().check_output(IOConfig("o", format="parquet", path="s3://b/o"), Path("/u"))
            Traceback (most recent call last):
            ubunye.exceptions.EngineError: output 'o': cannot overwrite parquet at s3://b/o safely: ...
        """
        if io.table is not None:
            msg = f"output {io.name!r}: catalog tables (table: {io.table}) need the spark engine"
            raise EngineError(msg)
        assert io.path is not None
        transaction.refuse_unwritable(io, resolve_path(io.path, base_dir), self.name)

    # -- transforming ----------------------------------------------------------------------------------------------
    def _relation(self, query: str, sources: dict[str, Any]):
        import duckdb

        con = duckdb.connect()
        for name, frame in sources.items():
            con.register(name, _to_arrow(self.native(frame)))
        return con, con.sql(query)

    def sql(self, query: str, sources: dict[str, Any]) -> pd.DataFrame:
        con, rel = self._relation(query, sources)
        try:
            return _to_pandas(rel.to_arrow_table())
        finally:
            con.close()

    def scalar(self, query: str, sources: dict[str, Any]) -> Any:
        con, rel = self._relation(query, sources)
        try:
            return rel.fetchall()[0][0]
        finally:
            con.close()

    def quote(self, column: str) -> str:
        return '"' + column.replace('"', '""') + '"'

    # -- frames ----------------------------------------------------------------------------------------------------
    def hash(self, frame: pd.DataFrame) -> FrameHash:
        return hash_frame(frame)

    def profile(self, frame: pd.DataFrame, *, key: list[str] | None, buckets: int) -> FrameProfile:
        from ubunye.hashing.profile import profile_frame

        return profile_frame(frame, key=key, buckets=buckets)

    def delta_version(self, io: IOConfig, base_dir: Path) -> int | None:
        from ubunye.engines.delta import dataset_version

        return dataset_version(io, base_dir)

    def native(self, frame: Any) -> pd.DataFrame:
        if isinstance(frame, pd.DataFrame):
            return frame
        if isinstance(frame, pa.Table):
            return _to_pandas(frame)
        if type(frame).__module__.startswith("narwhals"):
            import narwhals as nw

            native = nw.to_native(frame)
            if isinstance(native, pd.DataFrame):
                return native
            frame = native
        msg = f"the pandas engine needs a pandas DataFrame, got {type(frame).__module__}.{type(frame).__name__}"
        raise EngineError(msg)

    def from_pandas(self, frame: pd.DataFrame) -> pd.DataFrame:
        return frame

    def hold(self, frame: pd.DataFrame) -> pd.DataFrame:
        return frame

    def release(self, frame: pd.DataFrame) -> None:
        return None

    def environment(self) -> dict[str, Any]:
        return {}
