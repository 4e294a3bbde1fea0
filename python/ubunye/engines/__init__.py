"""Engines: one interface (read, write, run a SQL transform, hash) over pandas, Spark and polars.

Example:
    >>> from ubunye.engines import get_engine
    >>> get_engine("pandas").name
    'pandas'
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ubunye.engines.locks import output_lock
from ubunye.engines.paths import is_url, local_path, resolve_path
from ubunye.exceptions import EngineError

if TYPE_CHECKING:
    from ubunye.config import IOConfig
    from ubunye.hashing import FrameHash
    from ubunye.hashing.profile import FrameProfile


class Engine(Protocol):
    """What the runner needs from a backend. Frames are the engine's native frames."""

    name: str

    def read(self, io: IOConfig, base_dir: Path) -> Any:
        """Read one input (paths relative to ``base_dir``; delta time travel from io.version/timestamp)."""

    def write(
        self, frame: Any, io: IOConfig, base_dir: Path, *, before_commit: Callable[[], None] | None = None
    ) -> None:
        """Write one output with io.mode (overwrite | append), all of it or nothing (see ``engines.transaction``).

        ``before_commit`` is called once the new data is completely written and staged, just before it is made
        visible; if it raises, nothing is made visible and its exception propagates unchanged.
        """

    def check_output(self, io: IOConfig, base_dir: Path) -> None:
        """Raise EngineError if the output cannot be written, from its config and location alone (no frame), so a
        run can be refused before any input is read. ``write`` checks the same again."""

    def sql(self, query: str, sources: dict[str, Any]) -> Any:
        """Run a SQL query over the sources, each registered as a view under its name."""

    def scalar(self, query: str, sources: dict[str, Any]) -> Any:
        """Run a SQL query returning one row and one column, as a Python value."""

    def quote(self, column: str) -> str:
        """Quote an identifier for this engine's SQL dialect."""

    def hash(self, frame: Any) -> FrameHash:
        """rows-v1 hash of every row (``ubunye.hashing.hash_frame``)."""

    def profile(self, frame: Any, *, key: list[str] | None, buckets: int) -> FrameProfile:
        """rows-v1 hash plus column fingerprints and row buckets (``ubunye.hashing.profile.profile_frame``)."""

    def delta_version(self, io: IOConfig, base_dir: Path) -> int | None:
        """The Delta version a read of ``io`` sees now (io.version / timestamp resolved, else the latest), or
        None when ``io`` is not a Delta path. The runner reads inputs at this version and records it."""

    def native(self, frame: Any) -> Any:
        """Turn what a transform returned (native or narwhals) into a native frame, or raise EngineError."""

    def from_pandas(self, frame: Any) -> Any:
        """Make a frame of this engine from a pandas DataFrame."""

    def hold(self, frame: Any) -> Any:
        """Keep a frame that is hashed, checked and written (Spark: persist), returning the frame to use."""

    def release(self, frame: Any) -> None:
        """Undo :meth:`hold`."""

    def environment(self) -> dict[str, Any]:
        """Engine facts for the record's environment (Spark: version, JVM version, session time zone)."""


def location(io: IOConfig, base_dir: Path) -> str:
    """Where an input or output lives, as recorded: the resolved path, or ``table:<name>``.

    Example:
        >>> from ubunye.config import IOConfig
        >>> location(IOConfig("t", table="db.t"), Path("/u"))
        'table:db.t'
    """
    if io.table is not None:
        return f"table:{io.table}"
    assert io.path is not None
    return resolve_path(io.path, base_dir)


def get_engine(name: str, spark_conf: dict[str, str] | None = None, spark: Any = None) -> Engine:
    """The engine called ``name`` ("pandas", "spark" or "polars"). Spark reuses ``spark`` or the active session.

    An unknown name, or an engine whose library is not installed, is an ``EngineError`` saying what to do.
    """
    if name == "pandas":
        from ubunye.engines.pandas_engine import PandasEngine

        return PandasEngine()
    if name == "spark":
        import importlib.util

        # Checked here: the engine imports pyspark only when it first needs the session, mid-run.
        if spark is None and importlib.util.find_spec("pyspark") is None:
            msg = "the spark engine needs pyspark: pip install 'ubunye[spark]' (or run where Spark is installed)"
            raise EngineError(msg)
        from ubunye.engines.spark_engine import SparkEngine

        return SparkEngine(spark=spark, spark_conf=spark_conf or {})
    if name == "polars":
        try:
            from ubunye.engines.polars_engine import PolarsEngine
        except ModuleNotFoundError as exc:
            if (exc.name or "").partition(".")[0] != "polars":
                raise
            msg = "the polars engine needs polars: pip install 'ubunye[polars]'"
            raise EngineError(msg) from None
        return PolarsEngine()
    msg = f"unknown engine {name!r}: use 'pandas', 'spark' or 'polars'"
    raise EngineError(msg)


__all__ = ["Engine", "get_engine", "is_url", "local_path", "location", "output_lock", "resolve_path"]
