"""Engines: one interface (read, write, run a SQL transform, hash) over pandas, Spark and polars.

Example:
    >>> from ubunye.engines import get_engine
    >>> get_engine("pandas").name
    'pandas'
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ubunye.exceptions import EngineError

if TYPE_CHECKING:
    from ubunye.config import IOConfig
    from ubunye.hashing import FrameHash

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class Engine(Protocol):
    """What the runner needs from a backend. Frames are the engine's native frames."""

    name: str

    def read(self, io: IOConfig, base_dir: Path) -> Any:
        """Read one input (paths relative to ``base_dir``; delta time travel from io.version/timestamp)."""

    def write(self, frame: Any, io: IOConfig, base_dir: Path) -> None:
        """Write one output with io.mode (overwrite | append)."""

    def sql(self, query: str, sources: dict[str, Any]) -> Any:
        """Run a SQL query over the sources, each registered as a view under its name."""

    def scalar(self, query: str, sources: dict[str, Any]) -> Any:
        """Run a SQL query returning one row and one column, as a Python value."""

    def quote(self, column: str) -> str:
        """Quote an identifier for this engine's SQL dialect."""

    def hash(self, frame: Any) -> FrameHash:
        """rows-v1 hash of every row (``ubunye.hashing.hash_frame``)."""

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


def is_url(path: str) -> bool:
    """True for ``s3://...``, ``abfss://...``, ``file:///...``: paths that are not resolved locally."""
    return bool(_URL.match(path))


def resolve_path(path: str, base_dir: Path) -> str:
    """A relative local path is taken relative to the usecase_dir; URLs and absolute paths are kept.

    Example:
        >>> resolve_path("data/x", Path("/u"))
        '/u/data/x'
    """
    if is_url(path) or Path(path).is_absolute():
        return path
    return str((base_dir / path).resolve())


def location(io: IOConfig, base_dir: Path) -> str:
    """Where an input or output lives, as recorded: the resolved path, or ``table:<name>``."""
    if io.table is not None:
        return f"table:{io.table}"
    assert io.path is not None
    return resolve_path(io.path, base_dir)


def new_part_file(io: IOConfig, folder: Path) -> Path:
    """Prepare ``folder`` for one more part file (a folder of parts, as Spark writes) and return the part's path.

    ``overwrite`` empties the folder first; ``append`` adds a part beside the others.
    """
    import shutil
    import uuid

    if folder.is_file():
        if io.mode == "append":
            msg = f"output {io.name!r}: {folder} is a file; append needs a folder of part files"
            raise EngineError(msg)
        folder.unlink()
    elif folder.exists() and io.mode == "overwrite":
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"part-{uuid.uuid4().hex}.{io.format}"


def get_engine(name: str, spark_conf: dict[str, str] | None = None, spark: Any = None) -> Engine:
    """The engine called ``name`` ("pandas", "spark" or "polars"). Spark reuses ``spark`` or the active session."""
    if name == "pandas":
        from ubunye.engines.pandas_engine import PandasEngine

        return PandasEngine()
    if name == "spark":
        from ubunye.engines.spark_engine import SparkEngine

        return SparkEngine(spark=spark, spark_conf=spark_conf or {})
    if name == "polars":
        from ubunye.engines.polars_engine import PolarsEngine

        return PolarsEngine()
    msg = f"unknown engine {name!r}: use 'pandas', 'spark' or 'polars'"
    raise EngineError(msg)


__all__ = ["Engine", "get_engine", "is_url", "location", "new_part_file", "resolve_path"]
