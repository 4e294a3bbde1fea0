"""Parquet INT96 timestamps, as the pandas and polars engines read them: instants in UTC, in microseconds.

INT96 (Spark's default ``outputTimestampType``, Databricks', Hive's and Impala's) holds a UTC-based instant in
nanoseconds: nanoseconds of the day (8 bytes, little-endian), then a Julian day (4 bytes). Spark reads it as
``timestamp`` (an instant) in microseconds; pyarrow and polars read it without a zone (``timestamp_ntz``), so
one file hashed one way on Spark and another on the local engines, silently. This module owns what the engines
need to read it as Spark does (docs/rows-v1.md section 5.3):

- :func:`int96_leaves`: which leaves of which columns a file's footer stores as INT96 (pure);
- :func:`as_instants`: an Arrow schema with those leaves :data:`INSTANT` (pure; polars converts it to its types);
- :func:`refuse_mixed`: a folder whose files hold one column as INT96 (``timestamp``) in one and as a timestamp
  without zone (``timestamp_ntz``) in another is refused, as an append that would make it is (pure);
- :func:`refuse_sub_microseconds`: a value with a non-zero sub-microsecond part is refused, not truncated.

Example:
    >>> import datetime as dt, tempfile
    >>> from pathlib import Path
    >>> import pyarrow.parquet as pq
    >>> file = Path(tempfile.mkdtemp()) / "part-0.parquet"
    >>> rows = pa.table({"id": [1], "t": pa.array([dt.datetime(9999, 12, 31)], pa.timestamp("us"))})
    >>> pq.write_table(rows, file, use_deprecated_int96_timestamps=True)
    >>> leaves = int96_leaves(pq.read_metadata(file), str(file))
    >>> leaves
    {'t': frozenset({0})}
    >>> as_instants(pq.read_schema(file), leaves).field("t").type
    TimestampType(timestamp[us, tz=UTC])
    >>> micros = pq.read_table(file, coerce_int96_timestamp_unit="us")
    >>> refuse_sub_microseconds("i", str(file), leaves, micros)  # whole microseconds: nothing to say
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from ubunye.engines.inputs import column_difference
from ubunye.engines.parquet_leaves import children, leaf_arrays, leaf_types
from ubunye.engines.transaction import type_text
from ubunye.exceptions import EngineError

if TYPE_CHECKING:
    import pyarrow.parquet as pq
    from pyarrow.fs import FileSystem

#: How an INT96 timestamp is read: an instant (UTC) in microseconds, as Spark reads it. Microseconds hold any year
#: INT96 holds; nanoseconds wrap past 2262 and before 1677 (9999-12-31 read as 1816-03-29).
INSTANT = pa.timestamp("us", "UTC")

#: The INT96 leaves of one file: column name -> the numbers of its leaves stored as INT96, counted depth-first
#: within the column as parquet orders them (a plain column's only leaf is 0; a map's key comes before its value).
Leaves = Mapping[str, frozenset[int]]


def _rebuilt(kind: pa.DataType, fields: list[pa.Field]) -> pa.DataType:
    """The nested type ``kind`` with its child fields (``parquet_leaves.children``) replaced by ``fields``."""
    if pa.types.is_struct(kind):
        return pa.struct(fields)
    if pa.types.is_map(kind):
        return pa.map_(fields[0], fields[1], kind.keys_sorted)
    if pa.types.is_fixed_size_list(kind):
        return pa.list_(fields[0], kind.list_size)
    return pa.large_list(fields[0]) if pa.types.is_large_list(kind) else pa.list_(fields[0])


def _with_instants(kind: pa.DataType, int96: frozenset[int], first: int = 0) -> pa.DataType:
    """``kind`` with its timestamp leaves numbered (from ``first``) in ``int96`` as :data:`INSTANT`."""
    nested = children(kind)
    if nested is None:
        return INSTANT if first in int96 and pa.types.is_timestamp(kind) else kind
    fields = []
    for f in nested:
        fields.append(f.with_type(_with_instants(f.type, int96, first)))
        first += len(leaf_types(f.type))
    return _rebuilt(kind, fields)


def int96_leaves(footer: pq.FileMetaData, file: str) -> dict[str, frozenset[int]]:
    """The columns of the parquet file ``file`` (named in an error) whose footer ``footer`` stores a leaf as INT96,
    with those leaves (:data:`Leaves`); empty when it has none. Only the footer tells: the Arrow schema read of it
    does not tell INT96 from a timestamp without zone (which stays one).

    Example:
        >>> import pyarrow.parquet as pq, tempfile
        >>> from pathlib import Path
        >>> file = Path(tempfile.mkdtemp()) / "f.parquet"
        >>> stamps = pa.array([0], pa.timestamp("us"))
        >>> pq.write_table(pa.table({"n": [1], "s": pa.StructArray.from_arrays([[1], stamps], ["k", "t"])}), file,
        ...                use_deprecated_int96_timestamps=True)
        >>> int96_leaves(pq.read_metadata(file), str(file))
        {'s': frozenset({1})}
    """
    parquet = footer.schema
    int96 = {i for i in range(len(parquet)) if parquet.column(i).physical_type == "INT96"}
    if not int96:
        return {}
    fields = list(parquet.to_arrow_schema())
    # pyarrow makes one Arrow leaf of each parquet leaf, in order: the count is checked, never assumed
    if sum(len(leaf_types(f.type)) for f in fields) != len(parquet):
        raise EngineError(f"{file}: its parquet columns do not match the Arrow schema read of it")
    found, first = {}, 0
    for f in fields:
        count = len(leaf_types(f.type))
        mine = frozenset(i - first for i in int96 if first <= i < first + count)
        if mine:
            found[f.name] = mine
        first += count
    return found


def as_instants(schema: pa.Schema, *leaves: Leaves) -> pa.Schema:
    """``schema`` (parquet files' schema as read) with every leaf that any of the files (their :data:`Leaves`)
    stores as INT96 :data:`INSTANT`: the value is UTC-based, so reading it in UTC keeps its instant, as Spark does.

    Example:
        >>> as_instants(pa.schema([("t", pa.list_(pa.timestamp("us")))]), {"t": frozenset({0})}).field("t").type
        ListType(list<item: timestamp[us, tz=UTC]>)
    """
    merged: dict[str, frozenset[int]] = {}
    for one in leaves:
        for name, mine in one.items():
            merged[name] = merged.get(name, frozenset()) | mine
    for name, mine in merged.items():
        i = schema.get_field_index(name)
        if i >= 0:
            schema = schema.set(i, schema.field(i).with_type(_with_instants(schema.field(i).type, mine)))
    return schema


def refuse_mixed(input_name: str, footers: Sequence[tuple[str, pq.FileMetaData]]) -> None:
    """Raise EngineError naming the column and two files when one file of an input (``footers``: each file's name
    and footer, in the order read) stores a leaf of a column as INT96, read as ``timestamp``, and another stores
    that leaf as a timestamp without zone (``timestamp_ntz``, ``isAdjustedToUTC=false``): rows-v1 types differ,
    and reading both as one would relabel one file's values silently. An older ubunye's pandas append onto a
    Spark INT96 output made such a folder; the append check refuses that append now with the same words. INT96
    beside a timestamp with a zone (an append of instants) is alike.

    Example:
        >>> import datetime as dt, tempfile, pyarrow.parquet as pq
        >>> from pathlib import Path
        >>> folder, t = Path(tempfile.mkdtemp()), pa.table({"t": [dt.datetime(2024, 1, 1)]})
        >>> pq.write_table(t, folder / "a.parquet", use_deprecated_int96_timestamps=True)
        >>> pq.write_table(t, folder / "b.parquet")
        >>> refuse_mixed("i", [(str(folder / n), pq.read_metadata(folder / n)) for n in ("a.parquet", "b.parquet")])
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'i': its files have different column types: column 't' is timestamp ...
    """
    read = [(file, footer, int96_leaves(footer, file)) for file, footer in footers]
    if not any(leaves for _, _, leaves in read):
        return
    # (column, leaf) -> the first file holding it as INT96, and the first holding it as a zone-less timestamp
    instant: dict[tuple[str, int], int] = {}
    local: dict[tuple[str, int], int] = {}
    schemas = []
    for n, (_, footer, leaves) in enumerate(read):
        schema = as_instants(footer.schema.to_arrow_schema(), leaves)
        schemas.append(schema)
        for field in schema:
            for i, kind in enumerate(leaf_types(field.type)):
                if i in leaves.get(field.name, ()):
                    instant.setdefault((field.name, i), n)
                elif pa.types.is_timestamp(kind) and kind.tz is None:
                    local.setdefault((field.name, i), n)
    for key in sorted(instant.keys() & local.keys(), key=lambda k: min(instant[k], local[k])):
        name = key[0]
        a, b = sorted((instant[key], local[key]))
        kinds = [{name: type_text(schemas[n].field(name).type, name)} for n in (a, b)]
        why = column_difference(read[a][0], kinds[0], read[b][0], kinds[1])
        msg = f"input {input_name!r}: its files have {why}: INT96 holds an instant (read in UTC, as Spark reads it), "
        msg += "a timestamp without zone a local date-time, and reading both as one would relabel one file's values "
        msg += "silently (rows-v1 hashes them as other types); rewrite one file with the other's type, or read them "
        msg += "as separate inputs"
        raise EngineError(msg)


def _micros(array: pa.Array) -> pa.Array:
    """A timestamp array as int64 microseconds (a finer unit is exact here: it was read in microseconds)."""
    if array.type.unit != "us":
        array = array.cast(pa.timestamp("us", array.type.tz))
    return array.cast(pa.int64())


def refuse_sub_microseconds(
    input_name: str,
    file: str,
    leaves: Leaves,
    micros: pa.Table,
    filesystem: FileSystem | None = None,
    shown: str | None = None,
) -> None:
    """Raise EngineError naming the input, file, column and the value when an INT96 timestamp of ``file`` (on
    ``filesystem``, else local) holds a non-zero sub-microsecond part: read in microseconds (as Spark reads it)
    it is truncated, and two files differing only there would hash alike (docs/rows-v1.md section 5.3 refuses
    that). Spark writes whole microseconds: its files pass.

    ``shown`` is the file as the user names it, in the error (default ``file``): a URL's file is ``file`` on its
    store (``bucket/key``, or ``key`` alone), which names neither the scheme the user wrote (``s3a://``) nor, on
    some stores, the bucket.

    ``micros`` holds the file's rows as the engine read them (at least its INT96 columns, in microseconds or a
    finer unit, any zone): only the INT96 columns are read once more, in nanoseconds. A value past 2262 wraps
    there, but both reads compute ``day * units_per_day + nanoseconds_of_day // (ns per unit)`` in 64-bit
    arithmetic, so ``nanoseconds - 1000 * microseconds`` (wrapping alike) is the sub-microsecond part at any year.
    """
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    import pyarrow.fs as pafs

    if not leaves:
        return
    shown = file if shown is None else shown
    nanos = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(coerce_int96_timestamp_unit="ns"))
    fragment = nanos.make_fragment(file, filesystem or pafs.LocalFileSystem())
    read = fragment.to_table(columns=list(leaves))  # names, not dotted paths: a top-level column each
    if read.num_rows != micros.num_rows:
        raise EngineError(f"input {input_name!r}: {shown} holds {read.num_rows} rows, but {micros.num_rows} were read")
    for name, mine in leaves.items():
        ns_leaves = leaf_arrays(read.column(name).combine_chunks())
        us_leaves = leaf_arrays(micros.column(name).combine_chunks())
        for i in sorted(mine):
            us = _micros(us_leaves[i])
            finer = pc.subtract(ns_leaves[i].cast(pa.int64()), pc.multiply(us, 1000))
            odd = pc.not_equal(finer, 0)  # null where either read is null
            if not pc.any(odd).as_py():
                continue
            row = pc.index(odd, True).as_py()
            text = f"{pa.array([us[row].as_py()], pa.int64()).cast(pa.timestamp('us')).cast(pa.string())[0]}"
            where = "" if children(read.schema.field(name).type) is None else " (inside it)"
            msg = (
                f"input {input_name!r}: {shown}: column {name!r} holds an INT96 timestamp{where} with a non-zero "
                f"sub-microsecond part ({text}{finer[row].as_py():03d}Z): rows-v1 hashes microseconds "
                "(docs/rows-v1.md section 5.3), and dropping the nanoseconds would make different instants hash "
                "alike; write it in microseconds (Spark writes INT96 in whole microseconds)"
            )
            raise EngineError(msg)


__all__ = ["INSTANT", "Leaves", "as_instants", "int96_leaves", "refuse_mixed", "refuse_sub_microseconds"]
