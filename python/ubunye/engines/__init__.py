"""Engines: one interface (read, write, run a SQL transform, hash) over pandas, Spark and polars.

This module is the package's face only: the :class:`Engine` protocol, :func:`get_engine`, and where data lives
(:func:`location`, :func:`local_path`, ...). The engines and their parts import one another, never this module.

Example:
    >>> from ubunye.engines import get_engine
    >>> get_engine("pandas").name
    'pandas'
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ubunye.engines.locks import output_lock
from ubunye.engines.paths import is_url, local_path, location, resolve_path
from ubunye.exceptions import EngineError

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import SparkSession

    from ubunye.config import IOConfig
    from ubunye.hashing import FrameHash, FrameProfile
    from ubunye.hashing.delta_files import SumsCache
    from ubunye.hashing.delta_hash import DeltaHash

#: An engine's native frame: pandas.DataFrame (pandas), polars.DataFrame (polars), pyspark.sql.DataFrame (spark).
FrameT = TypeVar("FrameT")


class Engine(Protocol[FrameT]):
    """What the runner needs from a backend, over its native frames ``FrameT``.

    What a transform returned (a native frame, a narwhals frame, an Arrow table...) is taken as ``object`` and
    turned into a ``FrameT`` by :meth:`native`, or refused.

    Our engines implement every member declared here. A backend written to docs/backends.md's interface may
    lack ``check_output``, ``profile``, ``delta_version`` and ``hash_delta``: the runner checks for those and runs
    without them (no early output check, the plain hash, no Delta version, no per-file sums). One more member
    is optional and not declared: ``local_root(where: str) -> Path | None``, the driver-local path behind an
    output's location, or None when it is not on the driver's disk (Spark, whose plain paths may be HDFS or
    DBFS). The runner locks outputs at it when an engine has it, else at :func:`local_path`.
    """

    name: str

    def read(self, io: IOConfig, base_dir: Path) -> FrameT:
        """Read one input (paths relative to ``base_dir``; delta time travel from io.version/timestamp)."""

    def write(
        self, frame: FrameT, io: IOConfig, base_dir: Path, *, before_commit: Callable[[], None] | None = None
    ) -> int | None:
        """Write one output with io.mode (overwrite | append), all of it or nothing (see ``engines.transaction``).

        ``before_commit`` is called once the new data is completely written and staged, just before it is made
        visible; if it raises, nothing is made visible and its exception propagates unchanged. Returns the Delta
        version the write's own commit made, when it made one and the engine can tell (found by a mark the commit
        carries, never as "the latest", which another run may have made since); None otherwise, and then the
        runner records the version ``delta_version`` reads right after the write.
        """

    def check_output(self, io: IOConfig, base_dir: Path) -> None:
        """Raise EngineError if the output cannot be written, from its config and location alone (no frame), so a
        run can be refused before any input is read. ``write`` checks the same again."""

    def sql(self, query: str, sources: Mapping[str, object]) -> FrameT:
        """Run a SQL query over the sources (each passed through :meth:`native`), each a view under its name."""

    def scalar(self, query: str, sources: Mapping[str, object]) -> Any:  # noqa: ANN401 (one SQL value, any type)
        """Run a SQL query returning one row and one column, as a Python value."""

    def quote(self, column: str) -> str:
        """Quote an identifier for this engine's SQL dialect."""

    def hash(self, frame: FrameT) -> FrameHash:
        """rows-v1 hash of every row (``ubunye.hashing.hash_frame``)."""

    def profile(self, frame: FrameT, *, key: list[str] | None, buckets: int) -> FrameProfile:
        """rows-v1 hash plus column fingerprints and row buckets (``ubunye.hashing.profile.profile_frame``)."""

    def delta_version(self, io: IOConfig, base_dir: Path) -> int | None:
        """The Delta version a read of ``io`` sees now (io.version / timestamp resolved, else the latest), or
        None when ``io`` is not a Delta path. The runner reads inputs at this version and records it."""

    def hash_delta(self, io: IOConfig, base_dir: Path, *, version: int | None, cache: SumsCache) -> DeltaHash | None:
        """rows-v1 of the Delta path input ``io`` at ``version``, from the per-file sums in ``cache`` where they
        hold, reading only the other files (``ubunye.hashing.delta_hash``): the hash of the frame :meth:`read`
        returns, always; with ``io.profile``, its profile too (``DeltaHash.profile``, from per-file partials
        cached for ``io.key`` and ``io.buckets``), that of the frame alike. None when ``io`` is not a Delta path;
        an exception when this engine cannot hash it so (the runner then hashes the frame whole and records why)."""

    def native(self, frame: object) -> FrameT:
        """Turn what a transform returned (native or narwhals) into a native frame, or raise EngineError."""

    def from_pandas(self, frame: pd.DataFrame) -> FrameT:
        """Make a frame of this engine from a pandas DataFrame."""

    def hold(self, frame: FrameT) -> FrameT:
        """Keep a frame that is hashed, checked and written (Spark: persist), returning the frame to use."""

    def release(self, frame: FrameT) -> None:
        """Undo :meth:`hold`."""

    def environment(self) -> dict[str, str | None]:
        """Engine facts for the record's environment (Spark: version, JVM version, session time zone)."""


#: What an engine needs beyond ubunye's own dependencies: the module, and the extra that installs it.
_NEEDS = {"spark": ("pyspark", "spark"), "polars": ("polars", "polars")}


def _require(name: str) -> None:
    """Raise EngineError naming the engine, the module and the extra when the engine's library is not installed."""
    if importlib.util.find_spec(_NEEDS[name][0]) is None:
        raise EngineError(_missing(name, sys.version_info[:2]))


def _missing(name: str, python: tuple[int, int]) -> str:
    """What to do when engine ``name``'s library is not installed, on Python ``python``.

    Example:
        >>> _missing("polars", (3, 11))
        "the polars engine needs polars: pip install 'ubunye[polars]'"
        >>> _missing("polars", (3, 10))  # doctest: +ELLIPSIS
        'the polars engine needs polars >= 2.1, which is built for Python 3.11 and later (this is Python 3.10): ...'
    """
    module, extra = _NEEDS[name]
    if name == "polars" and python < (3, 11):  # pip would answer "no matching distribution" to the extra here
        return (f"the polars engine needs polars >= 2.1, which is built for Python 3.11 and later (this is Python "
                f"{python[0]}.{python[1]}): run it on Python 3.11+, or use the pandas or spark engine")  # fmt: skip
    hint = " (or run where Spark is installed)" if name == "spark" else ""
    return f"the {name} engine needs {module}: pip install 'ubunye[{extra}]'{hint}"


def get_engine(
    name: str, spark_conf: dict[str, str] | None = None, spark: SparkSession | None = None
) -> Engine[Any]:  # the frame type follows the name, known only when it runs
    """The engine called ``name`` ("pandas", "spark" or "polars"). Spark reuses ``spark`` or the active session.

    An unknown name, or an engine whose library is not installed, is an ``EngineError`` saying what to do.

    Example:
        >>> get_engine("duckdb")
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: unknown engine 'duckdb': use 'pandas', 'spark' or 'polars'
    """
    if name == "pandas":
        from ubunye.engines.pandas_engine import PandasEngine

        return PandasEngine()
    if name == "spark":
        _require(name)  # here: the engine imports pyspark only when it first needs the session, mid-run
        from ubunye.engines.spark_engine import SparkEngine

        return SparkEngine(spark=spark, spark_conf=spark_conf or {})
    if name == "polars":
        _require(name)
        from ubunye.engines.polars_engine import PolarsEngine

        return PolarsEngine()
    msg = f"unknown engine {name!r}: use 'pandas', 'spark' or 'polars'"
    raise EngineError(msg)


__all__ = ["Engine", "FrameT", "get_engine", "is_url", "local_path", "location", "output_lock", "resolve_path"]
