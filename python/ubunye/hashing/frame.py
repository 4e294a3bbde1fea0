"""hash_frame and canonical_lines: which frame kinds rows-v1 accepts, and the batching over them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal, TypeGuard

import pyarrow as pa

from ubunye.exceptions import HashError
from ubunye.hashing.dictionaries import joinable
from ubunye.hashing.digest import FrameHash, add_sums, finish, sum_lines
from ubunye.hashing.encode import encode_batch
from ubunye.hashing.pieces import pieces
from ubunye.hashing.port import is_rows_frame, port_to_arrow
from ubunye.hashing.stream import stream_to_arrow
from ubunye.hashing.types import schema_string

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

# Rows per encoded batch: bounds peak memory (lines live one batch at a time) without per-batch overhead mattering.
# Slices of it are clamped to the rows left by hand: pyarrow's Table.slice does not clamp a table of no columns
# (3 rows sliced (0, 65536) have 65536), and such a table's rows count (docs/rows-v1.md sections 3 and 9).
BATCH_ROWS = 65_536


FrameKind = Literal["pyspark", "pandas", "polars", "other"]
_LIBRARIES: tuple[FrameKind, ...] = ("pyspark", "pandas", "polars")


def frame_kind(frame: object) -> FrameKind:
    """Which library's DataFrame ``frame`` is, from its type alone (no library is imported to ask).

    Example:
        >>> import pandas as pd
        >>> import pyarrow as pa
        >>> frame_kind(pd.DataFrame({"x": [1]})), frame_kind(pa.table({"x": [1]}))
        ('pandas', 'other')
    """
    # A subclass (class Orders(pd.DataFrame)) is its library's frame too: its rows are read by that library's rules.
    for cls in type(frame).__mro__:
        mod, name = cls.__module__, cls.__name__
        if name == "DataFrame":
            for lib in _LIBRARIES:
                if mod == lib or mod.startswith(lib + "."):
                    return lib
    return "other"


def _is_pandas(frame: object) -> TypeGuard[pd.DataFrame]:
    return frame_kind(frame) == "pandas"


def _is_spark(frame: object) -> TypeGuard[DataFrame]:
    return frame_kind(frame) == "pyspark"


def _is_polars_lazy(frame: object) -> bool:
    mod = type(frame).__module__
    return type(frame).__name__ == "LazyFrame" and (mod == "polars" or mod.startswith("polars."))


def to_arrow(frame: object) -> pa.Table:
    """The Arrow table rows-v1 hashes for pandas, an Arrow Table/RecordBatch, an Arrow stream (a polars LazyFrame is
    collected first), or a port frame. Columns whose chunks Arrow cannot join into one batch (dictionaries holding
    a null value) come decoded (``dictionaries.joinable``)."""
    return joinable(_to_arrow(frame))


def _to_arrow(frame: object) -> pa.Table:
    if isinstance(frame, pa.Table):
        return frame
    if isinstance(frame, pa.RecordBatch):
        return pa.Table.from_batches([frame])
    if _is_pandas(frame):
        from ubunye.hashing.pandas_frame import pandas_to_arrow

        return pandas_to_arrow(frame)
    library = type(frame).__module__.split(".")[0]
    if (library in ("pandas", "polars") and type(frame).__name__ == "Series") or isinstance(
        frame, (pa.Array, pa.ChunkedArray)
    ):
        # one column, not a table: Arrow would refuse it as "non-struct type int64", naming nothing the user wrote
        kind = f"{library}.{type(frame).__name__}"
        msg = f"rows-v1 hashes tables: a {kind} is one column; give a table of it (e.g. series.to_frame())"
        raise HashError(msg)
    if _is_polars_lazy(frame):
        # A query, not rows: collected as the polars engine collects one a transform returns (reading its schema
        # as a port frame's would resolve the query just to refuse it, with polars' PerformanceWarning).
        frame = frame.collect()  # type: ignore[attr-defined]
    if hasattr(frame, "__arrow_c_stream__"):
        return stream_to_arrow(frame)  # a column Arrow cannot import is a section-11 error naming it
    if is_rows_frame(frame):
        return port_to_arrow(frame)
    msg = (
        f"rows-v1 cannot hash a {type(frame).__module__}.{type(frame).__name__}: give a pandas DataFrame, "
        "a pyarrow Table or RecordBatch, a Spark DataFrame, an object with __arrow_c_stream__, "
        "or one with collect() and schema (ubunye.hashing.port)"
    )
    raise HashError(msg)


def _lines(table: pa.Table) -> Iterator[pa.Array]:
    # Fixed-size slices, each made one contiguous batch: many small chunks (small parquet row groups, concatenated
    # frames) would otherwise pay the per-batch cost of every Arrow kernel call once per chunk.
    for start in range(0, table.num_rows, BATCH_ROWS):
        piece = table.slice(start, min(BATCH_ROWS, table.num_rows - start))  # unclamped without columns
        batches = piece.to_batches()
        batch = batches[0] if len(batches) == 1 else piece.combine_chunks().to_batches()[0]
        for part in pieces(batch):  # wide rows: lines within Arrow's 2 GiB string arrays
            yield encode_batch(part)


def hash_arrow(table: pa.Table) -> FrameHash:
    """rows-v1 of an Arrow table with the Python twin."""
    schema = schema_string(table.schema)
    parts = []
    for lines in _lines(table):
        parts.append(sum_lines(lines))
    n, s1, s2 = add_sums(parts)
    return finish(schema, n, s1, s2, engine="arrow")


def hash_frame(frame: object) -> FrameHash:
    """The rows-v1 fingerprint of every row of a table (docs/rows-v1.md).

    Accepts a pandas DataFrame, a pyarrow Table or RecordBatch, a Spark DataFrame (the JVM function when the
    ubunye jar is registered in its session, else the twin on the executors), or anything exposing
    ``__arrow_c_stream__`` (polars, DuckDB relations...), or any frame with ``collect()`` and a rows-v1
    ``schema`` (the port, ``ubunye.hashing.port.RowsFrame``). Raises ``HashError`` naming the column and type
    when a column cannot be hashed.

    Example:
        >>> import pandas as pd
        >>> a = hash_frame(pd.DataFrame({"id": [1, 2], "name": ["x", "y"]}))
        >>> b = hash_frame(pd.DataFrame({"name": ["y", "x"], "id": [2, 1]}))
        >>> a == b, a.row_count
        (True, 2)
    """
    if _is_spark(frame):
        from ubunye.hashing.spark import hash_spark

        return hash_spark(frame)
    return hash_arrow(to_arrow(frame))


def canonical_lines(frame: object, limit: int | None = None) -> list[str]:
    """The canonical lines rows-v1 hashes, in the frame's row order: for debugging a mismatch.

    Example:
        >>> import pandas as pd
        >>> canonical_lines(pd.DataFrame({"b": [1.0], "a": ["x"]}))
        ['{"a":"x","b":1.0}']
    """
    if _is_spark(frame):
        from ubunye.hashing.spark import spark_canonical_lines

        return spark_canonical_lines(frame, limit)
    table = to_arrow(frame)
    schema_string(table.schema)  # the same type checks and errors as hash_frame
    if limit is not None:
        table = table.slice(0, min(limit, table.num_rows))  # clamped: see BATCH_ROWS
    out: list[str] = []
    for lines in _lines(table):
        out.extend(lines.to_pylist())
    return out
