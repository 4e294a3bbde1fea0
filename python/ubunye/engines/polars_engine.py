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
import functools
import re
import unicodedata
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import polars as pl
import pyarrow as pa

from ubunye.config import IOConfig
from ubunye.engines._io import (
    LocalEngine,
    csv_parse_options,
    date32_table,
    larger_blocks,
    pandas_table,
    parquet_codec,
    reread_after_swap,
    separator,
    unwrap,
)
from ubunye.engines.delta import open_table, read_table, timestamp_of
from ubunye.engines.inputs import (
    SPARK_ROW_METADATA,
    check_alike,
    check_utf8,
    column_difference,
    column_paths,
    data_files,
    has_partitions,
    header_alone,
    open_text,
    refuse_compression,
    refuse_spark_only_types,
    remote_files,
)
from ubunye.engines.int96 import as_instants, int96_leaves, refuse_mixed, refuse_sub_microseconds
from ubunye.engines.legacy_dates import refuse_legacy_file, refuse_unsigned_drift
from ubunye.engines.partition_types import HIVE_NULL, partition_columns, refuse_overlap
from ubunye.engines.paths import escaped_url, literal_parts, local_path
from ubunye.exceptions import EngineError, error_text
from ubunye.hashing.delta_files import (
    check_deltalake_path,
    parquet_read_options,
    refuse_char_columns,
    refuse_legacy_delta,
    table_filesystem,
)

if TYPE_CHECKING:
    from typing import BinaryIO

    import pandas as pd
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq
    from deltalake import DeltaTable
    from polars._typing import PolarsDataType

    from ubunye.hashing.delta_files import SumsCache
    from ubunye.hashing.delta_hash import DeltaHash


def _map_column(schema: pl.Schema) -> str | None:
    """The first column of ``schema`` holding a map at any depth, else None."""

    def holds(dtype: object) -> bool:  # a polars dtype, an instance or (bare List, Struct) a class
        if isinstance(dtype, pl.Map):
            return True
        if isinstance(dtype, (pl.List, pl.Array)):
            return holds(dtype.inner)
        if isinstance(dtype, pl.Struct):
            return any(holds(f.dtype) for f in dtype.fields)
        return False

    return next((name for name, dtype in schema.items() if holds(dtype)), None)


def _delta_dtype(dtype: PolarsDataType) -> PolarsDataType:
    """``dtype`` as a Delta table holds it, at any depth: a ``Categorical`` or ``Enum`` as ``String``, an ``Array``
    as a ``List`` (rows-v1 hashes either pair alike: a dictionary is its values, a fixed-size list a list).

    deltalake writes such columns as plain strings and lists, but keeps polars' Arrow schema (an Enum's field
    metadata, the fixed size) in the data files, and polars' Delta reader then refuses the table it wrote
    ("data type mismatch for column c: incoming: Enum != target: String"); a dictionary partition column is
    refused by deltalake outright.

    Example:
        >>> _delta_dtype(pl.Struct({"e": pl.Array(pl.Enum(["a"]), 2)}))
        Struct({'e': List(String)})
    """
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        return pl.String()
    if isinstance(dtype, (pl.Array, pl.List)):
        return pl.List(_delta_dtype(dtype.inner))
    if isinstance(dtype, pl.Struct):
        return pl.Struct([pl.Field(f.name, _delta_dtype(f.dtype)) for f in dtype.fields])
    return dtype


def _is_panic(exc: BaseException) -> bool:
    # pyo3's PanicException (a Rust panic inside polars) derives from BaseException: it passes `except Exception`
    return type(exc).__name__ == "PanicException"


def _timestamp_zones(t: pa.DataType, path: str) -> list[tuple[str, str]]:
    if pa.types.is_timestamp(t):
        return [(path, t.tz)] if t.tz else []
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _timestamp_zones(t.value_type, path + "[]")
    if pa.types.is_map(t):
        return _timestamp_zones(t.key_type, path + "{key}") + _timestamp_zones(t.item_type, path + "{value}")
    if pa.types.is_struct(t):
        return [z for f in t for z in _timestamp_zones(f.type, f"{path}.{f.name}")]
    return []


def zone_polars_refuses(schema: pa.Schema) -> str | None:
    """Words naming the first timestamp column (or field) of ``schema`` whose time zone polars does not take
    (a fixed offset such as ``+05:30``, which pandas gives ``pd.to_datetime("... +05:30")``), else None.

    Example:
        >>> zone_polars_refuses(pa.schema([("t", pa.timestamp("us", "+05:30")), ("u", pa.timestamp("us", "UTC"))]))
        "column 't' has the time zone '+05:30', which polars does not take (it takes IANA names such as Asia/Kolkata)"
    """
    for field in schema:
        for where, zone in _timestamp_zones(field.type, field.name):
            try:  # an error, where polars' readers panic (and Rust prints its backtrace to stderr)
                pl.Series("t", [], dtype=pl.Datetime("us", "UTC")).dt.convert_time_zone(zone)
            except Exception:
                return (
                    f"column {where!r} has the time zone {zone!r}, which polars does not take (it takes IANA names "
                    "such as Asia/Kolkata)"
                )
    return None


def _opened(io: IOConfig, path: str) -> DeltaTable | None:
    """The Delta table at ``path`` as a read of ``io`` sees it, opened once for the checks before polars reads it;
    None where deltalake cannot open it (polars' own reader then says why)."""
    try:
        return open_table(io, path)
    except Exception:
        return None


def _delta_schema_json(table: DeltaTable | None) -> str | None:
    """The Delta table's schema as its log writes it (Spark's JSON); None where deltalake could not open it."""

    try:
        schema_json: str | None = None if table is None else table.schema().to_json()
        return schema_json
    except Exception:
        return None


def _refuse_damaged_delta_files(io: IOConfig, path: str, table: DeltaTable | None) -> None:
    """Raise EngineError naming the input, the Delta table at ``path`` and the data file when a data file of
    ``table`` has no readable parquet footer (truncated, overwritten): polars' reader panics on it ("assertion
    failed: range.end as u64 <= self.size"), naming no file and dumping Rust's panic to stderr, where the pandas
    engine names the file. Only footers are read (one ranged read each); a file that cannot be opened at all
    (missing, unreadable) is left to polars' reader to say, as is a table deltalake could not open (``None``)."""
    import pyarrow.parquet as pq

    if table is None:
        return
    try:
        files = [str(p) for p in pa.table(table.get_add_actions(flatten=True)).column("path").to_pylist()]
        filesystem = table_filesystem(table, {str(k): str(v) for k, v in io.storage_options.items()} or None)
    except Exception:  # the check only names a damaged file; polars' reader says what else fails
        return
    for file in files:
        try:
            handle = filesystem.open_input_file(unquote(file))
        except Exception:
            continue
        try:
            with handle:
                pq.ParquetFile(handle)
        except pa.ArrowInvalid as exc:  # not an OSError: a store that did not answer damaged no file
            why = error_text(exc).splitlines()[0]
            msg = f"input {io.name!r}: cannot read delta at {path}: its data file {file!r} is damaged (not a "
            raise EngineError(msg + f"readable parquet file): {why}") from None


def _root_polars_misreads(table: DeltaTable | None, local: Path | None) -> str | None:
    """Why polars' Delta reader cannot read the local Delta ``table`` (at ``local``), or None: where a folder of
    its path holds a character a URL escapes (a space, ``#``, a non-ASCII letter), deltalake's URI of the table
    escapes it (``file:///d/t%20x/``) and polars asks for the data files by that escaped path, which names no file
    ("No such file or directory", polars 2.1 with deltalake 1.6.6), where deltalake's reader (the pandas engine's)
    reads the table. None for a URL, or where deltalake could not open the table (polars' own reader says why).

    Example:
        >>> _root_polars_misreads(None, Path("/d/t x")) is None
        True
    """
    if table is None or local is None:
        return None
    try:
        uri = str(table.table_uri)
    except Exception:
        return None
    if "%" not in uri:
        return None
    return f"asks for its data files by the escaped path of its folder ({uri}), which names no file"


def _partitions_polars_misreads(table: DeltaTable | None, *, url: bool) -> str | None:
    """Why polars' Delta reader would read the partition values of ``table`` otherwise than its log holds them, or
    None: it takes them from the folder names, so a partition column whose name holds ``=`` or ``/`` (read as
    null, or refused) or a value that is the text ``__HIVE_DEFAULT_PARTITION__`` (read as null) differs. Such
    tables (written by other tools; ubunye refuses to write them) are read through deltalake's own reader. So is a
    table at a URL (``url``) whose data files' log paths hold an escape (``%``: Spark's partition folder
    ``ts=2024-01-01 10%3A00%3A00``, logged as ``ts=2024-01-01%2010%253A00%253A00``): polars asks the store for
    the logged path escaped again without unescaping it first, another object ("not found", polars 1.x), where
    deltalake (the pandas engine) and Spark read the file. None where deltalake could not open the table (polars'
    own reader then says why)."""
    if table is None:
        return None
    try:
        columns = list(table.metadata().partition_columns)
        if not columns:
            return None
        named = next((c for c in columns if "=" in c or "/" in c), None)
        if named is not None:
            return f"reads the partition column {named!r}, whose name holds '=' or '/', from its folder names wrongly"
        actions = pa.table(table.get_add_actions(flatten=True))
    except Exception:
        return None
    if url and any("%" in str(p) for p in actions.column("path").to_pylist()):
        return (
            "is not used for a table at a URL whose data files' paths in its log hold '%' (it escapes them again "
            "and asks the store for other objects; a copy of the table in a local folder reads on polars)"
        )
    for column in columns:
        name = f"partition.{column}"
        if name in actions.column_names and pa.types.is_string(actions.column(name).type):
            if HIVE_NULL in actions.column(name).to_pylist():
                return f"reads the partition value {HIVE_NULL!r} of column {column!r} as null"
    return None


def _through_deltalake(io: IOConfig, path: str, table: DeltaTable | None, why: str) -> pl.DataFrame:
    """The rows of the Delta table at ``path`` read through deltalake (``read_table``, the pandas engine's
    reader), for a table polars' own Delta reader misreads (``why``: what it does).

    deltalake cannot read a negative decimal partition value with a fraction either; its refusal advises the
    polars or Spark engine, which for this table would send the user from one reader that fails to the other.
    Refused here first, naming both readers' reasons and the engine that reads it: Spark."""
    _refuse_negative_fraction_partitions(io, path, table, why)
    return _from_arrow(read_table(io, path))


def _refuse_negative_fraction_partitions(io: IOConfig, path: str, table: DeltaTable | None, why: str) -> None:
    """Raise EngineError when a decimal partition column of the Delta ``table`` (at ``path``, read for ``io``)
    holds a negative value with a fraction, which deltalake cannot read (``NEGATIVE_DECIMAL_PARTITION``), and
    polars' own reader misreads the table (``why``): only Spark reads it. Nothing is said where the table cannot
    be looked at (``read_table``'s own checks then say what fails)."""
    from ubunye.hashing.delta_files import NEGATIVE_DECIMAL_PARTITION, negative_fraction

    if table is None:
        return
    try:
        columns = list(table.metadata().partition_columns)
        schema = pa.schema(table.schema().to_arrow())
        decimals = [c for c in columns if pa.types.is_decimal(schema.field(c).type) and schema.field(c).type.scale]
        if not decimals:
            return
        actions = pa.table(table.get_add_actions(flatten=True))
    except Exception:
        return
    for column in decimals:
        name = f"partition.{column}"
        value = negative_fraction(actions.column(name)) if name in actions.column_names else None
        if value is None:
            continue
        t = schema.field(column).type
        msg = f"input {io.name!r} (Delta at {path}): partition column {column!r} (decimal({t.precision},{t.scale})) "
        msg += f"holds a negative value with a fraction ({value}) in its Delta log, and {NEGATIVE_DECIMAL_PARTITION}; "
        msg += f"polars' own Delta reader {why}: read the table with the Spark engine"
        raise EngineError(msg)


class _Store:
    """Where the listed files of an input are: a local folder (no ``filesystem``), or the folder at the URL ``url``
    (``base`` on the pyarrow ``filesystem``, the store polars reads with ``storage`` options). A file is a path:
    local, or on ``filesystem``; polars reads it, and errors name it, by :meth:`source` (its URL). So a URL's
    folder is checked and read by the very code that reads a local one.

    Example:
        >>> _Store().source(Path("/d/k=1/p.parquet")), _Store(None, None, "b/d", "s3://b/d/").source(Path("b/d/p.csv"))
        ('/d/k=1/p.parquet', 's3://b/d/p.csv')
    """

    def __init__(
        self,
        filesystem: pafs.FileSystem | None = None,
        storage: dict[str, Any] | None = None,
        base: str = "",
        url: str = "",
    ) -> None:
        self.filesystem, self.storage = filesystem, storage
        self.base, self.url = base.rstrip("/"), url.rstrip("/")

    def source(self, file: Path | str) -> str:
        """``file`` as polars reads it and a message names it: its local path, or its URL."""
        if self.url == "":
            return str(file)
        if self.base == "":  # a store rooted at the folder itself (a bucket's root)
            return f"{self.url}/{file}"
        return self.url + str(file)[len(self.base) :]

    def parquet(self, file: Path) -> pq.ParquetFile:
        """``file``'s parquet reader (its footer read), INT96 in microseconds (as legacy_dates reads it)."""
        import pyarrow.parquet as pq

        opened = str(file) if self.filesystem is None else self.filesystem.open_input_file(str(file))
        return pq.ParquetFile(opened, coerce_int96_timestamp_unit="us")

    def open(self, file: Path) -> BinaryIO:
        """``file``'s bytes, decompressed as named (.gz, .bz2, .zst)."""
        if self.filesystem is None:
            return open_text(file)
        stream: BinaryIO = self.filesystem.open_input_stream(str(file))
        return stream


_LOCAL = _Store()


def _url_store(io: IOConfig, url: str) -> tuple[_Store, str]:
    """The store of the URL ``url`` and the folder's path on its filesystem: with ``io.storage_options``,
    deltalake's object store given them (object_store's, the store and the option names polars reads with: as
    for a Delta input); without, pyarrow's filesystem of the URL, configured from the environment (polars reads
    from the environment too). Either lists the very key polars reads: the URL's path as written
    (``engines.paths.literal_parts``). pyarrow's ``FileSystem.from_uri(url)`` unescapes the path (``t%20x`` listed
    as the folder ``t x``, whose footers were checked while polars read ``t%20x``'s rows) and refuses a space or a
    non-ASCII letter in it, so it is given the path escaped (``engines.paths.escaped_url``), which it unescapes
    back to the text as written."""
    from pyarrow.fs import FileSystem, PyFileSystem

    scheme, bucket, path = literal_parts(url)
    if not io.storage_options:
        filesystem, root = FileSystem.from_uri(escaped_url(url))
        return _Store(filesystem, None, root, url), root
    from deltalake.fs import DeltaStorageHandler

    root = path.strip("/")  # a path on the store rooted at the bucket (container)
    options = {str(k): str(v) for k, v in io.storage_options.items()}
    names = {k.lower().removeprefix("aws_") for k in options}
    endpoints = [v for k, v in options.items() if k.lower().removeprefix("aws_") in ("endpoint", "endpoint_url")]
    if "allow_http" not in names and any(v.startswith("http://") for v in endpoints):
        options["allow_http"] = "true"  # polars reads an http:// endpoint it is given; object_store alone refuses
    try:
        handler = DeltaStorageHandler(f"{scheme}://{bucket}", options)
    except Exception as exc:  # deltalake names an option it does not take
        msg = f"input {io.name!r}: cannot open {url} with its storage_options: {error_text(exc)}"
        raise EngineError(msg) from exc
    return _Store(PyFileSystem(handler), dict(io.storage_options), root, url), root


def _with_partitions(
    io: IOConfig, frame: pl.DataFrame, files: list[Path], root: Path, store: _Store = _LOCAL
) -> pl.DataFrame:
    """``frame`` (the rows of ``files``, one file after another, read without their folders) with the partition
    columns of their ``name=value`` folders, typed as Spark types them (partition_types.py): polars' own guess
    differed (``k=0`` a bigint where Spark reads an int), so a folder hashed otherwise on each engine. A column
    also in the files takes the folder's values in its place, as in Spark."""
    rows = [store.parquet(file).metadata.num_rows for file in files]
    if sum(rows) != frame.height:  # each file's rows are given its folders' values: they must be those read
        msg = f"input {io.name!r}: polars read {frame.height} rows from the files under {store.source(root)}, "
        msg += f"whose footers hold {sum(rows)}: their partition columns cannot be given"
        raise EngineError(msg)
    columns = partition_columns(io.name, files, root, rows)
    return frame.with_columns(pl.Series(name, values) for name, values in columns.items())


#: How an INT96 timestamp (Spark's default ``outputTimestampType``, Hive's and Impala's) is read on every engine:
#: an instant in microseconds, as Spark reads it (``timestamp``, not ``timestamp_ntz``), whatever else the footer
#: says (pyarrow's ``ARROW:schema`` may say nanoseconds without a zone).
_INSTANT = pl.Datetime("us", "UTC")

#: What a read with a schema of :data:`_INSTANT` for INT96 needs from polars: a file whose ``ARROW:schema`` says
#: nanoseconds (pyarrow's and pandas' default) is otherwise refused ("incoming: Datetime('ns') != target").
_INT96_CAST = pl.ScanCastOptions(datetime_cast=["nanosecond-downcast", "convert-timezone"])


class _ParquetFile:
    """One listed parquet file of an input (in ``store``: a local folder's, a URL's), as the polars engine reads
    it: its own columns (not partition folders') in polars' types with INT96 timestamps :data:`_INSTANT`
    (``schema``: the Arrow types ``ubunye.engines.int96`` gives them, converted), its footer, its INT96 leaves by
    column (``leaves``), and its name in messages (``shown``: its path, or its URL)."""

    def __init__(self, path: Path, store: _Store = _LOCAL) -> None:
        self.path, self.store, self.shown = path, store, store.source(path)
        self.natural = dict(self._scan().collect_schema())
        parquet = store.parquet(path)
        self.footer = parquet.metadata
        self.leaves = int96_leaves(self.footer, self.shown)
        self.schema: dict[str, PolarsDataType] = dict(self.natural)
        if self.leaves:
            arrow = parquet.schema_arrow
            utc = as_instants(pa.schema([arrow.field(n) for n in self.leaves]), self.leaves)
            self.schema.update(_from_arrow(utc.empty_table()).schema)

    def _scan(self, **options: Any) -> pl.LazyFrame:  # noqa: ANN401 (scan_parquet's options)
        return pl.scan_parquet(self.shown, glob=False, storage_options=self.store.storage, **options)

    def scan(self) -> pl.LazyFrame:
        if list(self.schema.items()) == list(self.natural.items()):
            return self._scan()
        return self._scan(schema=self.schema, cast_options=_INT96_CAST)


def _finer_unit(a: str, b: str) -> str:
    return a if ("ms", "us", "ns").index(a) >= ("ms", "us", "ns").index(b) else b


def _unified(a: PolarsDataType, b: PolarsDataType) -> PolarsDataType | None:
    """One polars type holding both ``a`` and ``b`` (two files' types of one column) with every value kept, where
    rows-v1 hashes them alike (an append the output check accepts: docs/rows-v1.md section 7): timestamps of
    other zones or units (the finer unit; UTC where the zones differ), Categorical, Enum and String (String),
    Array and List (List); None where no such type is known (polars' read then says what differs).

    Example:
        >>> _unified(pl.Datetime("ms", "UTC"), pl.Datetime("ns", "Asia/Tokyo")), _unified(pl.Enum(["a"]), pl.String)
        (Datetime(time_unit='ns', time_zone='UTC'), String)
    """
    if a == b:
        return a
    if isinstance(a, pl.Datetime) and isinstance(b, pl.Datetime):
        if (a.time_zone is None) != (b.time_zone is None):
            return None  # timestamp and timestamp_ntz: other rows-v1 types
        zone = a.time_zone if a.time_zone == b.time_zone else "UTC"
        return pl.Datetime(_finer_unit(a.time_unit, b.time_unit), zone)  # type: ignore[arg-type]
    text = (pl.String, pl.Categorical, pl.Enum)
    if (isinstance(a, text) or a in text) and (isinstance(b, text) or b in text):  # an instance, or a bare class
        return pl.String()
    if isinstance(a, (pl.List, pl.Array)) and isinstance(b, (pl.List, pl.Array)):
        inner = _unified(a.inner, b.inner)
        if inner is None:
            return None
        if isinstance(a, pl.Array) and isinstance(b, pl.Array) and a.size == b.size:
            return pl.Array(inner, a.size)
        return pl.List(inner)
    if isinstance(a, pl.Struct) and isinstance(b, pl.Struct):
        if [f.name for f in a.fields] != [f.name for f in b.fields]:
            return None
        fields = [(f.name, _unified(f.dtype, g.dtype)) for f, g in zip(a.fields, b.fields, strict=True)]
        if any(t is None for _, t in fields):
            return None
        return pl.Struct([pl.Field(n, t) for n, t in fields if t is not None])
    return None


def _common_schema(files: list[_ParquetFile]) -> dict[str, PolarsDataType] | None:
    """The schema every file of ``files`` is read into when their schemas differ (in the first file's column
    order), else None: one scan reads them all."""
    first = files[0].schema
    if all(list(f.schema.items()) == list(first.items()) for f in files[1:]):
        return None
    target: dict[str, PolarsDataType] = {}
    for name, dtype in first.items():
        common: PolarsDataType | None = dtype
        for f in files[1:]:
            other = f.schema.get(name)
            common = None if other is None or common is None else _unified(common, other)
        if common is None:
            return None  # not alike after all: polars' own read names the column
        target[name] = common
    return target


def _refuse_other_types(io: IOConfig, files: list[_ParquetFile]) -> None:
    """Raise EngineError naming a column and two files whose types polars cannot read as one (``_common_schema``
    found none): one scan with the first file's schema would cast the other file's values to it."""
    first = files[0]
    for file in files[1:]:
        kinds = [{n: str(t) for n, t in f.schema.items()} for f in (first, file)]
        why = column_difference(first.shown, kinds[0], file.shown, kinds[1])
        if why is not None:
            raise EngineError(f"input {io.name!r}: its files have {why}, which no one type holds with every value")


def _polars_misreads(kind: pa.DataType, path: str, column: str) -> str | None:
    """Why polars cannot read the place ``path`` in ``column`` of Arrow type ``kind`` (a parquet footer's, as
    pyarrow reads it) as the other engines do, or None: a struct naming a field twice (polars panics on it), an
    Arrow extension type (a parquet UUID polars reads as plain binary, which rows-v1 would hash; pandas and Spark
    refuse it).

    Example:
        >>> _polars_misreads(pa.list_(pa.struct([("x", pa.int8()), ("x", pa.int8())])), "c", "c")
        "field 'c[]' is a struct with two fields named 'x': rows-v1 needs unique names (docs/rows-v1.md section 2)"
    """
    where = f"column {path!r}" if path == column else f"field {path!r}"
    if isinstance(kind, pa.BaseExtensionType):
        return f"{where} is of type {kind}, which rows-v1 does not hash (docs/rows-v1.md section 11)"
    if pa.types.is_struct(kind):
        names = [kind.field(i).name for i in range(kind.num_fields)]
        twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if twice is not None:
            why = f"{where} is a struct with two fields named {twice!r}: rows-v1 needs unique names "
            return why + "(docs/rows-v1.md section 2)"
        return next((w for f in kind if (w := _polars_misreads(f.type, f"{path}.{f.name}", column))), None)
    if pa.types.is_map(kind):
        key, value = kind.key_type, kind.item_type
        return _polars_misreads(key, f"{path}{{key}}", column) or _polars_misreads(value, f"{path}{{value}}", column)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _polars_misreads(kind.value_type, f"{path}[]", column)
    return None


def _refuse_polars_misreads(io: IOConfig, files: list[Path], store: _Store) -> None:
    """Raise EngineError naming the input, file and column when a parquet file's footer holds a type polars reads
    otherwise than the other engines (:func:`_polars_misreads`), checked before polars reads a footer itself."""
    for file in files:
        for field in store.parquet(file).schema_arrow:
            why = _polars_misreads(field.type, field.name, field.name)
            if why is not None:
                raise EngineError(f"input {io.name!r}: {store.source(file)}: {why}")


def _refuse_sub_microseconds(io: IOConfig, files: list[_ParquetFile], frame: pl.DataFrame) -> None:
    """Refuse an INT96 timestamp of ``files`` with a non-zero sub-microsecond part (ubunye.engines.int96), checked
    against the microseconds polars read into ``frame`` (the files' rows in order: one scan, or one per file)."""
    if not any(f.leaves for f in files):
        return
    if sum(f.footer.num_rows for f in files) != frame.height:  # never seen: polars reads every row of each file
        msg = f"input {io.name!r}: its files hold {sum(f.footer.num_rows for f in files)} rows, {frame.height} read"
        raise EngineError(msg)
    first = 0
    for file in files:
        if file.leaves:
            rows = frame.slice(first, file.footer.num_rows).select(list(file.leaves)).to_arrow()
            # read again on its store (where a URL's file is its path on the store), named by its URL
            refuse_sub_microseconds(io.name, str(file.path), file.leaves, rows, file.store.filesystem, file.shown)
        first += file.footer.num_rows


#: The value polars gives an INT96 timestamp outside 1677-2262 (clamped to i64's largest nanosecond), in each unit
#: it may be cast to (its Delta reader casts to the log's microseconds).
_CLAMPED = {"ns": 2**63 - 1, "us": (2**63 - 1) // 1000, "ms": (2**63 - 1) // 1_000_000}


def _clamp_checks(expr: pl.Expr, dtype: PolarsDataType) -> list[pl.Expr]:
    if isinstance(dtype, pl.Datetime):
        return [(expr.cast(pl.Int64) == _CLAMPED[dtype.time_unit]).any()]
    if isinstance(dtype, pl.List):
        return _clamp_checks(expr.list.explode(), dtype.inner)
    if isinstance(dtype, pl.Array):
        return _clamp_checks(expr.arr.explode(), dtype.inner)
    if isinstance(dtype, pl.Struct):
        return [c for f in dtype.fields for c in _clamp_checks(expr.struct.field(f.name), f.dtype)]
    return []


def _clamped_column(frame: pl.DataFrame) -> str | None:
    """The first column of ``frame`` holding, at any depth, the value polars clamps an INT96 timestamp outside
    1677-2262 to (:data:`_CLAMPED`), else None. polars' Delta reader gives no other sign of it (a Delta table
    plain delta-spark wrote, with a 9999-12-31 end date, read as 2262-04-11 23:47:16.854775); the caller then reads
    the table through deltalake's Arrow, which reads INT96 in microseconds. A genuine value of that instant is
    read the same either way."""
    for name, dtype in frame.schema.items():
        checks = _clamp_checks(pl.col(name), dtype)
        if checks and frame.select(pl.any_horizontal(checks)).item():
            return str(name)
    return None


def _from_arrow(table: pa.Table) -> pl.DataFrame:
    # polars' own parquet and Delta readers keep one entry per map key; pl.from_arrow keeps them all. It reads a
    # date64 as a datetime (date32_table first), and names a column named "" column_0 (its name is put back).
    zone = zone_polars_refuses(table.schema)
    if zone is not None:
        raise EngineError(f"polars cannot hold this frame: {zone}; convert the column to UTC or an IANA zone first")
    frame = pl.from_arrow(date32_table(table))
    assert isinstance(frame, pl.DataFrame)
    if frame.columns != table.column_names:
        frame.columns = table.column_names
    return frame


def _dates_read_as_datetimes(got: PolarsDataType, want: PolarsDataType) -> bool:
    """Whether ``got`` is ``want`` with a millisecond datetime where ``want`` has a date, somewhere inside."""
    if want == pl.Date:
        return got == pl.Datetime("ms")
    if isinstance(want, pl.List) and isinstance(got, pl.List):
        return _dates_read_as_datetimes(got.inner, want.inner)
    if isinstance(want, pl.Array) and isinstance(got, pl.Array) and got.size == want.size:
        return _dates_read_as_datetimes(got.inner, want.inner)
    if isinstance(want, pl.Struct) and isinstance(got, pl.Struct):
        pairs = list(zip(got.fields, want.fields, strict=False))
        return len(got.fields) == len(want.fields) and all(
            g.name == w.name and (g.dtype == w.dtype or _dates_read_as_datetimes(g.dtype, w.dtype)) for g, w in pairs
        )
    return False


def _dates_as_dates(scan: pl.LazyFrame, arrow: pa.Schema) -> pl.LazyFrame:
    """``scan`` with the date columns polars reads as datetimes (a parquet file whose Arrow schema says date64,
    as pyarrow writes a date64 column: its values are parquet DATEs, whole days) as dates again, as pyarrow, pandas
    and Spark read them (``arrow``: the files' schema as pyarrow reads it)."""
    got = scan.collect_schema()
    want = pl.DataFrame(arrow.empty_table()).schema
    dates = [n for n, t in got.items() if n in want and t != want[n] and _dates_read_as_datetimes(t, want[n])]
    return scan.with_columns(pl.col(n).cast(want[n]) for n in dates) if dates else scan


# polars SQL's table functions that open a file or URL (read_csv('/etc/passwd')): polars has no switch to turn
# them off, and no verdict to ask before one runs: SQLContext.execute(eager=False) keeps the query as text in the plan
# and resolves its tables when the plan is first looked at, which already opens the file (its schema). So the query
# is refused before it reaches polars when its code (not its string literals) names one of them. A regex over the
# text cannot tell code from literal reliably (the name may be quoted "read_csv" or `read_csv`, in any case, with
# comments between it and its parenthesis), so the query is split into tokens the way polars' SQL tokenizer
# (sqlparser's GenericDialect) splits it; tests/engines/test_polars_adversarial.py pins each rule below against the
# installed polars, so an upgrade that changes one fails there.
#: polars 2.1's table functions (read_parquet/read_json/read_ndjson/read_csv/read_ipc), plus names later versions
#: might add; any of them anywhere in the code (called or not) is refused.
_FILE_FUNCTIONS = frozenset(
    {"read_csv", "read_parquet", "read_json", "read_ndjson", "read_ipc", "read_ipc_stream", "read_delta"}
    | {"read_excel", "read_avro", "read_lines", "read_database", "read_iceberg", "read_clipboard"}
)
#: Any other read_x(...) or scan_x(...) called is refused as well (polars SQL has no such scalar function).
_FILE_CALL = re.compile(r"(read|scan)_\w+")
_DOLLAR_TAG = re.compile(r"\$(\w*)\$")


def _is_identifier_part(c: str) -> bool:
    # str.isalpha (letters) is a subset of Rust's char::is_alphabetic: a word here never runs past one of polars'
    return c.isalpha() or c in "0123456789_$@#" or unicodedata.category(c) in ("Nl", "Mn", "Mc")


def _is_identifier_start(c: str) -> bool:
    # GenericDialect starts an identifier with a letter (Rust's is_alphabetic: marks and letter numbers too), _, # or @
    return c.isalpha() or c in "_#@" or unicodedata.category(c) in ("Nl", "Mn", "Mc")


#: Any of the known file functions' names as a word of the text, in code, a literal or a comment alike: where the
#: tokenizer above and polars' own could read a query two ways (a string's start or end), the text alone decides,
#: failing closed: a query that names one anywhere is refused, even in a string.
_FILE_NAME_ANYWHERE = re.compile(r"(?<!\w)(" + "|".join(sorted(_FILE_FUNCTIONS)) + r")(?!\w)", re.IGNORECASE)


def _code_words(query: str) -> list[tuple[str, bool]]:
    """The identifiers of ``query`` outside string literals and comments, as polars' SQL tokenizer reads them:
    each lower-cased and unquoted, with whether a ``(`` follows it (after whitespace and comments).

    Rules (each checked against polars in the tests): '...' with '' for a quote and no backslash escape; E'...'
    and U&'...' with backslash escapes; $$...$$ and $tag$...$tag$ strings; "..." and `...` identifiers (doubled
    quote inside); -- comments to the end of the line (\n), /* */ comments that nest; $ continues a word.

    Example:
        >>> _code_words("SELECT 'read_csv(' AS s, `Read_CSV` /* c */ (x)")
        [('select', False), ('as', False), ('s', False), ('read_csv', True), ('x', False)]
    """
    words: list[tuple[str, bool]] = []
    pending: int | None = None  # index in words of the last word, while only trivia followed it
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c.isspace():
            i += 1
            continue
        if query.startswith("--", i):
            j = query.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if query.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if query.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif query.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            continue
        if c == "(" and pending is not None:
            words[pending] = (words[pending][0], True)
        pending = None
        if c in '"`':
            j, name = i + 1, []
            while j < n:
                if query[j] == c:
                    if query.startswith(c, j + 1):
                        name.append(c)
                        j += 2
                        continue
                    break
                name.append(query[j])
                j += 1
            words.append(("".join(name).lower(), False))
            pending, i = len(words) - 1, j + 1
            continue
        if c == "'":
            i = _string_end(query, i + 1, backslash=False)
            continue
        if c == "$":
            tag = _DOLLAR_TAG.match(query, i)
            if tag is not None:
                j = query.find(tag.group(0), tag.end())
                i = n if j < 0 else j + len(tag.group(0))
            else:
                i += 1
            continue
        if _is_identifier_start(c):
            j = i + 1
            while j < n and _is_identifier_part(query[j]):
                j += 1
            word = query[i:j]
            prefix = query[j : j + 1] if word in ("E", "e") else query[j : j + 2] if word in ("U", "u") else ""
            if prefix in ("'", "&'"):  # E'...' and U&'...': strings with backslash escapes
                i = _string_end(query, j + len(prefix), backslash=True)
                continue
            words.append((word.lower(), False))
            pending, i = len(words) - 1, j
            continue
        i += 1
    return words


def _string_end(query: str, i: int, *, backslash: bool) -> int:
    """The index after the quote closing the '...' literal whose text starts at ``i`` (the end if none does)."""
    n = len(query)
    while i < n:
        c = query[i]
        if backslash and c == "\\":
            i += 2
        elif c == "'":
            if query.startswith("'", i + 1):
                i += 2
            else:
                return i + 1
        else:
            i += 1
    return n


def refuse_file_functions(query: str) -> None:
    """Raise EngineError if a polars SQL ``query`` calls a table function that reads files (``read_csv(...)``...),
    however it is written: quoted ("read_csv", `read_csv`), in any case, with comments before its parenthesis.

    A query (or a template value pasted into it) may read the frames registered under the inputs' names only:
    a file it opened itself would be read outside the declared, hashed and recorded inputs. A known file
    function's name is refused anywhere, a string literal or comment too (failing closed: a tokenizer that reads
    a string's start otherwise than polars would let a call through); other read_x/scan_x words are refused
    where called in code.

    Example:
        >>> refuse_file_functions("SELECT * FROM read_csv('/etc/passwd')")
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: SQL query "SELECT * FROM read_csv('/etc/passwd')": calls read_csv, which ...
        >>> refuse_file_functions("SELECT * FROM `READ_CSV` /* c */ ('/etc/passwd')")
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: SQL query "SELECT * FROM `READ_CSV` /* c */ ('/etc/passwd')": calls read_csv, ...
        >>> refuse_file_functions("SELECT 'read(x)' AS s FROM t")  # other words in a literal: fine
    """
    shown = query if len(query) <= 200 else query[:200] + "..."
    for word, called in _code_words(query):
        if word in _FILE_FUNCTIONS or (called and _FILE_CALL.fullmatch(word)):
            verb = "calls" if called else "names"
            msg = (
                f"SQL query {shown!r}: {verb} {word}, which reads files outside the task's declared inputs; "
                "declare the data as an input and query it by its name"
            )
            raise EngineError(msg)
    anywhere = _FILE_NAME_ANYWHERE.search(query)
    if anywhere is not None:
        msg = (
            f"SQL query {shown!r}: names {anywhere.group(1).lower()}, which reads files outside the task's declared "
            "inputs (refused even inside a string or comment: the query could be read otherwise than polars reads "
            "it); declare the data as an input and query it by its name"
        )
        raise EngineError(msg)


def _binary_path(t: pa.DataType, path: str) -> str | None:
    """The path (section 11 of docs/rows-v1.md: ``c.f``, ``c[]``, ``c{value}``) of the first binary in ``t``."""
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return path
    if getattr(pa.types, "is_binary_view", lambda _t: False)(t):
        return path
    if pa.types.is_dictionary(t):
        return _binary_path(t.value_type, path)
    if pa.types.is_map(t):
        return _binary_path(t.key_type, path + "{key}") or _binary_path(t.item_type, path + "{value}")
    if pa.types.is_struct(t):
        fields = (t.field(i) for i in range(t.num_fields))
        return next((found for f in fields if (found := _binary_path(f.type, f"{path}.{f.name}"))), None)
    if t.num_fields == 1:  # list, large_list, fixed_size_list, list views
        return _binary_path(t.field(0).type, path + "[]")
    return None


def _refuse_nested_binary(io: IOConfig, schema: pa.Schema) -> None:
    """Raise EngineError naming the output, column and field: json holds text, and binary inside a list or
    struct is no text (polars' json writer panics on it; a binary column itself is refused before the write).

    Example:
        >>> _refuse_nested_binary(IOConfig("o", format="json"), pa.schema([("l", pa.list_(pa.binary()))]))
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: output 'o': json cannot hold column 'l' (field 'l[]' of type binary) (use ...
    """
    for field in schema:
        path = _binary_path(field.type, field.name)
        if path is not None:
            where = f"column {field.name!r}" + (f" (field {path!r} of type binary)" if path != field.name else "")
            raise EngineError(f"output {io.name!r}: json cannot hold {where} (use parquet or delta)")


def _check_header(io: IOConfig, file: Path, store: _Store = _LOCAL) -> list[str]:
    """The column names of the csv header of ``file``, as a csv reader reads them (polars' header parser keeps a
    quoted name's doubled quotes: ``"a""b"`` is ``a""b`` to it, ``a"b`` to pandas, Spark and polars' own rows).

    Raises EngineError naming the input, file and column if the header names a column twice (two empty names
    included): polars would rename the second (``a_duplicated_0``), a column made up.

    Only the first row is parsed (as text, as polars reads it: quotes and separator alike).

    Example:
        >>> import tempfile
        >>> f = Path(tempfile.mkdtemp()) / "p.csv"
        >>> _ = f.write_text("a,a\\n1,2\\n")
        >>> _check_header(IOConfig("i", format="csv"), f)
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'i': csv header of ... names column 'a' twice; ...
    """
    shown = store.source(file)
    header = pl.read_csv(
        shown, has_header=False, n_rows=1, infer_schema=False, separator=separator(io), storage_options=store.storage
    )
    names = ["" if v is None else v for v in (header.row(0) if header.height else ())]
    seen: set[str] = set()
    for name in names:
        if name in seen:
            what = "an empty column name" if name == "" else f"column {name!r}"
            msg = f"input {io.name!r}: csv header of {shown} names {what} twice; every column needs a name of its own"
            raise EngineError(msg)
        seen.add(name)
    return names


def _refuse_wide_integers(io: IOConfig, path: str, frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` (read from csv or json), unless a column holds integers beyond 64 bits: polars reads them as
    Int128, which rows-v1 does not hash (the run would go on without the input's hash) and the other engines refuse
    or read as decimals. Raise EngineError naming the input and the column.

    Example:
        >>> wide = pl.DataFrame({"a": [2**64]}, schema={"a": pl.Int128})
        >>> _refuse_wide_integers(IOConfig("i", format="csv"), "p", wide)
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'i': column 'a' of p holds integers beyond 64 bits ...
    """
    wide = [name for name, kind in frame.schema.items() if kind in (pl.Int128, getattr(pl, "UInt128", pl.Int128))]
    if wide:
        msg = f"input {io.name!r}: column {wide[0]!r} of {path} holds integers beyond 64 bits (polars reads Int128, "
        msg += "which rows-v1 does not hash): store them as strings, or as decimals in parquet"
        raise EngineError(msg)
    return frame


def _check_csv_rows(io: IOConfig, files: list[Path], height: int, store: _Store = _LOCAL) -> None:
    """Raise EngineError naming the input and file if polars read ``files`` (``height`` rows in all) otherwise than
    Spark and the pandas engine do: a row with fewer fields than the header (polars makes up nulls for the rest,
    pyarrow refuses the file), or an empty line (polars reads a row of nulls, Spark and pyarrow skip it).

    Every file is parsed once more by pyarrow, fields split but not converted (``include_columns=[]``).

    Example:
        >>> import tempfile
        >>> f = Path(tempfile.mkdtemp()) / "p.csv"
        >>> _ = f.write_text("a,b\\n1,2\\n\\n3,4\\n")
        >>> _check_csv_rows(IOConfig("i", format="csv"), [f], pl.read_csv(f).height)
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'i': polars reads 3 rows from csv file ..., Spark and pyarrow 2: ...
    """
    import pyarrow.csv as pcsv

    parse = csv_parse_options(io)
    fields = pcsv.ConvertOptions(include_columns=[])

    def rows_of(file: Path, size: int | None) -> int:
        blocks = pcsv.ReadOptions(block_size=size) if size else None
        if store.filesystem is None:
            read = pcsv.read_csv(file, read_options=blocks, parse_options=parse, convert_options=fields)
        else:
            with store.open(file) as stream:
                read = pcsv.read_csv(stream, read_options=blocks, parse_options=parse, convert_options=fields)
        return int(read.num_rows)

    rows: list[int] = []
    for file in files:
        try:
            rows.append(larger_blocks(functools.partial(rows_of, file))[0])
        except pa.ArrowInvalid as exc:  # pyarrow names the row: "Expected 3 columns, got 2: 4,5"
            msg = f"input {io.name!r}: csv file {store.source(file)} has a row whose fields do not match its "
            msg += f"header: {exc}"
            raise EngineError(msg) from exc
    if sum(rows) == height:
        return

    def count_polars(file: Path) -> int:
        scan = pl.scan_csv(store.source(file), separator=separator(io), glob=False, storage_options=store.storage)
        return int(scan.select(pl.len()).collect().item())

    for file, count in zip(files, rows, strict=True):
        if count_polars(file) != count:
            msg = f"input {io.name!r}: polars reads {count_polars(file)} rows from csv file {store.source(file)}, "
            msg += "Spark and "
            msg += f"pyarrow {count}: an empty line (polars reads a row of nulls where they skip it) or line ends "
            msg += "polars does not take (a carriage return alone); fix the file, or read it with another engine"
            raise EngineError(msg)
    msg = f"input {io.name!r}: polars read {height} rows from its csv files, pyarrow {sum(rows)}: refused"
    raise EngineError(msg)


def _check_json_keys(io: IOConfig, files: list[Path], store: _Store = _LOCAL) -> None:
    """Raise EngineError naming the input and file if a JSON object in ``files`` names a key twice: polars keeps
    the first value and drops the second without a word; Spark and the pandas engine refuse such a file.

    pyarrow parses each file once more: it refuses a duplicate key, and also a field that changes type from row
    to row, which polars and Spark read (a number becomes its text); so a file pyarrow refuses for another
    reason is looked at line by line with Python's json, for duplicates and for a lone surrogate escape
    (``"\\ud800"``, which pyarrow refuses and polars read as a NUL).

    Example:
        >>> import tempfile
        >>> f = Path(tempfile.mkdtemp()) / "p.json"
        >>> _ = f.write_text('{"a": 1, "a": 2}\\n')
        >>> _check_json_keys(IOConfig("i", format="json"), [f])
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'i': json file ... line 1 names the key 'a' twice; ...
    """
    import pyarrow.json as pj

    for file in files:
        try:
            if store.filesystem is None:
                pj.read_json(file)
            else:
                with store.open(file) as stream:
                    pj.read_json(stream)
        except pa.ArrowInvalid:
            _check_json_lines(io, file, store)


def _check_json_lines(io: IOConfig, file: Path, store: _Store = _LOCAL) -> None:
    import io as _text
    import json

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        found = dict(items)
        if len(found) < len(items):  # a key named twice: name the first one seen again
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    raise _Twice(key)
                seen.add(key)
        return found

    shown = store.source(file)
    with store.open(file) as raw, _text.TextIOWrapper(raw, encoding="utf-8") as lines:  # .gz, .bz2, .zst too
        for number, line in enumerate(lines, 1):
            try:
                row = json.loads(line, object_pairs_hook=pairs)
            except _Twice as twice:
                msg = f"input {io.name!r}: json file {shown} line {number} names the key {twice.args[0]!r} twice; "
                msg += "polars would keep the first value and drop the second"
                raise EngineError(msg) from None
            except ValueError:
                continue  # not JSON (an empty line): polars' own read decides
            try:
                json.dumps(row, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:  # "\ud800" alone: no character; polars read it as "\x00", pyarrow refuses
                msg = f"input {io.name!r}: json file {shown} line {number} holds a lone surrogate escape (\\ud800 to "
                msg += "\\udfff without its pair), which is no character: polars would read it as a NUL"
                raise EngineError(msg) from None


class _Twice(Exception):
    """A JSON object naming a key twice (its name)."""


#: polars infers csv and json types from the first 100 rows unless told otherwise: a key first seen in row 3,000
#: of a json file was dropped without a word, a nested field too, and a csv column holding text after 100 numbers
#: failed to parse. Every row is looked at, as Spark and pyarrow do.
_WHOLE: dict[str, Any] = {"infer_schema_length": None}


# polars names parquet's "none" codec "uncompressed"
_POLARS_CODECS = {"none": "uncompressed"}


def _refuse_nul_names(frame: pl.DataFrame) -> None:
    """An EngineError naming a column (or struct field) whose name holds NUL: polars' own export of it raises a
    PanicException, which is no Exception and went out as a bare traceback."""
    from ubunye.hashing.stream import nul_name

    for name, dtype in frame.schema.items():
        found = nul_name(dtype, name)
        if found is not None:
            where = f"column {name!r}" if found == name else f"field {found!r} of column {name!r}"
            raise EngineError(f"polars cannot write {where}: its name holds a NUL character; rename it")


def _object_path(dtype: PolarsDataType, path: str) -> str | None:
    """The path (``c``, ``c.f``, ``c[]``) of the first polars ``Object`` (Python objects) in ``dtype``, else None."""
    if isinstance(dtype, pl.Object):
        return path
    if isinstance(dtype, (pl.List, pl.Array)):
        return _object_path(dtype.inner, path + "[]")
    if isinstance(dtype, pl.Struct):
        return next((p for f in dtype.fields if (p := _object_path(f.dtype, f"{path}.{f.name}"))), None)
    return None


def _refuse_objects(io: IOConfig, frame: pl.DataFrame) -> None:
    """Raise EngineError naming the output and column if ``frame`` holds a polars ``Object`` column: Python objects
    have no type a file holds. Polars exports them to Arrow as 8-byte pointers (a Delta table of memory addresses
    committed, whose hash no reader can reproduce), and its parquet writer fails ("cannot write 'Object'")."""
    for name, dtype in frame.schema.items():
        where = _object_path(dtype, name)
        if where is not None:
            field = "" if where == name else f" (field {where!r})"
            msg = f"output {io.name!r}: column {name!r}{field} has the polars type Object (Python objects), which "
            msg += f"no {io.format} file holds: cast it to a type such as String or a Struct first; nothing was written"
            raise EngineError(msg)


class PolarsEngine(LocalEngine[pl.DataFrame]):
    """Runs tasks in this process on polars DataFrames (eager; a LazyFrame a transform returns is collected).

    Example:
        >>> import tempfile
        >>> engine, base = PolarsEngine(), Path(tempfile.mkdtemp())
        >>> engine.write(pl.DataFrame({"a": [1]}), IOConfig("o", format="csv", path="o"), base)
        >>> engine.read(IOConfig("o", format="csv", path="o"), base).height
        1
        >>> engine.check_output(IOConfig("o", format="csv", path="/u/o", partition_by=["id"]), Path("/u"))
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: output 'o': the polars engine cannot write csv partitioned by 'id' ...
    """

    name = "polars"

    def read(self, io: IOConfig, base_dir: Path) -> pl.DataFrame:
        path = self._input_path(io, base_dir)
        try:
            if io.format == "delta":
                local = local_path(path)
                if local is not None and not local.exists():
                    msg = f"input {io.name!r}: no such file or folder: {local}"
                    raise EngineError(msg)
                if local is None:  # polars cuts a URL at ? and # as deltalake does: another table, read quietly
                    check_deltalake_path(path, f"input {io.name!r}")
                stamp = timestamp_of(io)
                if stamp is not None:  # UTC (deltalake refused an offset with seconds); a time before the table's
                    stamp = stamp.astimezone(dt.timezone.utc)  # first commit refused by open_table, as on pandas
                    open_table(io, path)
                version: int | dt.datetime | None = stamp if stamp is not None else io.version
                opened = _opened(io, path)
                schema_json = _delta_schema_json(opened)
                refuse_spark_only_types(io, schema_json, f"the Delta log at {path}")
                refuse_char_columns(schema_json, f"input {io.name!r} (Delta at {path})")
                if opened is not None:  # Spark's legacy hybrid calendar: polars would read other days
                    refuse_legacy_delta(opened, f"input {io.name!r} (Delta at {path})", io.storage_options or None)
                misread = _root_polars_misreads(opened, local) or _partitions_polars_misreads(opened, url=local is None)
                if misread is not None:  # deltalake's reader takes the values from the log
                    return _through_deltalake(io, path, opened, misread)
                if local is not None:  # before polars reads a footer: it panics on a damaged one, naming no file
                    _refuse_damaged_delta_files(io, path, opened)
                scan = pl.scan_delta(path, version=version, storage_options=io.storage_options or None)
                column = _map_column(scan.collect_schema())
                if column is not None:  # deltalake's Arrow keeps every map entry
                    why = f"keeps one entry per map key (column {column!r})"
                    return _through_deltalake(io, path, opened, why)
                try:
                    frame = scan.collect()
                except BaseException as exc:  # a URL's damaged data file: named, if one is
                    if isinstance(exc, Exception) or _is_panic(exc):
                        _refuse_damaged_delta_files(io, path, opened)
                    raise
                column = _clamped_column(frame)
                if column is not None:  # an INT96 file's value outside 1677-2262 (see there)
                    why = f"reads an INT96 timestamp outside 1677-2262 as another instant (column {column!r})"
                    return _through_deltalake(io, path, opened, why)
                return frame
            return reread_after_swap(path, lambda: self._read_files(io, path))
        except EngineError:
            raise
        except BaseException as exc:  # polars and deltalake raise their own error types; polars may panic
            if not isinstance(exc, Exception) and not _is_panic(exc):
                raise
            why = error_text(exc).splitlines()[0]
            zone = self._zone_refused(io, path)
            msg = f"input {io.name!r}: cannot read {io.format} at {path}: " + (zone or why)
            raise EngineError(msg) from exc

    def _zone_refused(self, io: IOConfig, path: str) -> str | None:
        """Why polars failed, when a local parquet input has a time zone polars does not take (it panics)."""
        local = local_path(path)
        if io.format != "parquet" or local is None:
            return None
        try:
            import pyarrow.parquet as pq

            first = next(iter(data_files(io, path) or []), None)
            return None if first is None else zone_polars_refuses(pq.read_schema(first))
        except Exception:  # the reason is only sought to name it; the read's own error is said otherwise
            return None

    def _read_files(self, io: IOConfig, path: str) -> pl.DataFrame:
        files = data_files(io, path)  # checked: no stray file, no empty folder, UTF-8 text (inputs.py)
        if files is None:  # a URL: listed here, by the same rules
            return self._read_url(io, path)
        if files == []:
            return pl.DataFrame()  # allow_empty, and no schema is declared: no rows, no columns
        local = local_path(path)
        assert local is not None
        return self._read_listed(io, path, files, local)

    def _read_url(self, io: IOConfig, url: str) -> pl.DataFrame:
        """The files at the URL ``url``, listed by the rules of a local folder (inputs.remote_files) and read as
        :meth:`_read_listed` reads a local folder's, from the URL's store: the same folder reads as the same table
        wherever it is stored. polars listed a URL itself before: a folder Spark wrote (its ``.crc`` files) was
        refused, and partition folders were typed by polars' guess (``k=0`` a bigint where Spark reads an int)."""
        store, root = _url_store(io, url)
        assert store.filesystem is not None
        listed = remote_files(io, store.filesystem, root, url)
        if not listed:
            return pl.DataFrame()  # allow_empty, as a local folder
        files = [Path(f) for f in listed]
        try:
            return self._read_listed(io, url, files, Path(store.base), store)
        except Exception:
            if io.format in ("csv", "json"):  # polars refuses text that is not UTF-8 naming no file: name it
                for file in files:  # (a local folder's is checked before the read: data_files)
                    check_utf8(io, file, filesystem=store.filesystem, shown=store.source(file))
            raise

    def _read_listed(
        self, io: IOConfig, path: str, files: list[Path], root: Path, store: _Store = _LOCAL
    ) -> pl.DataFrame:
        """The listed ``files`` of the input at ``path`` (its folder ``root`` in ``store``), checked alike and read
        with their partition columns typed as Spark types them."""
        refuse_compression(io, files, "polars", (".bz2",))
        headers = [_check_header(io, file, store) for file in files] if io.format == "csv" else []
        if headers and len(files) == 1:  # a folder's csv file of a header alone is left out (inputs.py)
            text = header_alone(io, files[0], filesystem=store.filesystem, shown=store.source(files[0]))
            if text is not None:  # its columns as text, no rows, as Spark and pandas read it: polars refused a
                return pl.DataFrame(schema=dict.fromkeys(headers[0], pl.String))  # header without a line break
        if io.format == "parquet":  # before polars reads a footer: it panics on a struct naming a field twice
            _refuse_polars_misreads(io, files, store)
        check_alike(io, files, root, lambda file: column_paths(self._file_schema(io, file, store)), shown=store.source)
        hive = has_partitions(files, root)  # name=value folders become columns, as Spark reads them
        if hive and io.format != "parquet":
            msg = f"input {io.name!r}: its {io.format} files sit in partition folders (name=value), and polars "
            msg += f"reads no partition column from {io.format} (the column would be missing): use parquet, "
            msg += "or read this input with the pandas or Spark engine"
            raise EngineError(msg)
        if hive:
            refuse_overlap(io.name, self._file_schema(io, files[0], store).names, files, root)
        if io.format == "parquet":
            frame = self._read_parquet(io, files, hive, store)
            return _with_partitions(io, frame, files, root, store) if hive else frame
        # listed files are taken literally: a [ or * in a name is not a pattern
        source = [store.source(f) for f in files]
        if io.format == "csv":
            scan = pl.scan_csv(source, **_WHOLE, separator=separator(io), storage_options=store.storage, glob=False)
            frame = _refuse_wide_integers(io, path, scan.collect())
            _check_csv_rows(io, files, frame.height, store)
            if headers and len(headers[0]) == frame.width and frame.columns != headers[0]:
                frame.columns = headers[0]  # alike in every file (check_alike)
            return frame
        _check_json_keys(io, files, store)
        json_scan = pl.scan_ndjson(source, **_WHOLE, storage_options=store.storage)
        return _refuse_wide_integers(io, path, json_scan.collect())

    def _read_parquet(self, io: IOConfig, files: list[Path], hive: bool, store: _Store) -> pl.DataFrame:
        # listed files are scanned without their name=value folders (polars guesses those types): _with_partitions;
        # and taken literally: a [ or * in a name is not a pattern
        source = [store.source(f) for f in files]
        scan = pl.scan_parquet(source, storage_options=store.storage, glob=False)
        opened = [store.parquet(f) for f in files]
        first, arrow = source[0], opened[0].schema_arrow
        # alike (check_alike) up to types rows-v1 hashes alike: the first file's schema says Spark's for all
        refuse_spark_only_types(io, (arrow.metadata or {}).get(SPARK_ROW_METADATA), first)
        refuse_unsigned_drift(io.name, [(s, f.schema_arrow) for s, f in zip(source, opened, strict=True)])
        for shown, parquet in zip(source, opened, strict=True):  # Spark's hybrid-calendar days: other days here
            refuse_legacy_file(f"input {io.name!r}", shown, parquet)
        zone = zone_polars_refuses(arrow)
        if zone is not None:  # said before polars panics on it
            raise EngineError(f"input {io.name!r}: polars cannot read {first}: {zone}")
        local = [_ParquetFile(f, store) for f in files]
        refuse_mixed(io.name, [(f.shown, f.footer) for f in local])
        common = _common_schema(local)
        if common is not None:  # files of other zones, units, dictionaries (an append): each read, then cast
            scan = self._each_file(local, common)
        elif any(f.leaves for f in local):  # one scan with the files' schema, if alike: else it would cast
            _refuse_other_types(io, local)
            scan = pl.scan_parquet(
                source, storage_options=store.storage, glob=False, schema=local[0].schema, cast_options=_INT96_CAST
            )
        scan = _dates_as_dates(scan, arrow)
        schema = scan.collect_schema()
        column = _map_column(schema)
        if column is None:
            frame = scan.collect()
            _refuse_sub_microseconds(io, local, frame)
            return frame
        if hive:
            msg = f"input {io.name!r}: column {column!r} is a map, and polars' parquet reader keeps one entry "
            msg += "per key (a duplicate key's entries, which rows-v1 counts, would be dropped silently); the "
            msg += "polars engine reads maps through pyarrow, for listed files without partition folders only: "
            msg += "use the pandas engine for this input"
            raise EngineError(msg)
        import pyarrow.dataset as pds

        micros = pds.ParquetFileFormat(read_options=parquet_read_options())
        on: dict[str, Any] = {} if store.filesystem is None else {"filesystem": store.filesystem}
        table = pds.dataset([str(f) for f in files], format=micros, **on).to_table()
        frame = _from_arrow(table.cast(as_instants(table.schema, *[f.leaves for f in local])))
        _refuse_sub_microseconds(io, local, frame)
        return frame

    @staticmethod
    def _each_file(files: list[_ParquetFile], common: dict[str, PolarsDataType]) -> pl.LazyFrame:
        """The rows of ``files`` read one file at a time and cast to ``common``: one scan of files whose types
        differ fails in polars ("data type mismatch": another zone, unit, Enum's categories, Array and List), where
        the other engines read them. Partition columns are added after (:func:`_with_partitions`)."""
        casts = [pl.col(name).cast(dtype) for name, dtype in common.items()]
        return pl.concat([file.scan().select(casts) for file in files], how="vertical")

    def _file_schema(self, io: IOConfig, file: Path, store: _Store = _LOCAL) -> pa.Schema:
        storage, source = store.storage, store.source(file)
        if io.format == "parquet":  # its INT96 timestamps as read: instants (an append's drift check compares them)
            schema = pl.Schema(_ParquetFile(file, store).schema)
        elif io.format == "csv":
            scan = pl.scan_csv(source, **_WHOLE, separator=separator(io), glob=False, storage_options=storage)
            schema = scan.collect_schema()
        else:
            schema = pl.scan_ndjson(source, **_WHOLE, storage_options=storage).collect_schema()
        return pl.DataFrame(schema=schema).to_arrow().schema  # no rows: the Arrow types polars reads them as

    def write(
        self, frame: pl.DataFrame, io: IOConfig, base_dir: Path, *, before_commit: Callable[[], None] | None = None
    ) -> int | None:
        """Write one output (see :meth:`LocalEngine.write`), refusing a polars ``Object`` column first."""
        if isinstance(frame, pl.DataFrame):
            _refuse_objects(io, frame)
        return super().write(frame, io, base_dir, before_commit=before_commit)

    def hash_delta(self, io: IOConfig, base_dir: Path, *, version: int | None, cache: SumsCache) -> DeltaHash | None:
        """Never: polars reads Delta with its own reader, whose frame is hashed whole."""
        if io.format != "delta" or io.path is None:
            return None
        raise EngineError("the polars engine reads Delta tables with polars and hashes what it read whole")

    def _arrow(self, frame: pl.DataFrame, *, rows: bool) -> pa.Table:
        _refuse_nul_names(frame)
        return frame.to_arrow() if rows else frame.head(0).to_arrow()  # polars writes part files itself

    def _delta_arrow(self, frame: pl.DataFrame) -> pa.Table:
        _refuse_nul_names(frame)
        # the table written to Delta, in the types polars' Delta reader reads back (_delta_dtype)
        schema = frame.schema
        plain = {name: _delta_dtype(dtype) for name, dtype in schema.items()}
        changed = [pl.col(name).cast(dtype) for name, dtype in plain.items() if dtype != schema[name]]
        return (frame.with_columns(changed) if changed else frame).to_arrow()

    def _write_part(self, frame: pl.DataFrame, table: pa.Table, io: IOConfig, part: Path) -> None:
        """One part file, as Spark and the pandas engine write them."""
        if io.format == "json":
            _refuse_nested_binary(io, table.schema)
        try:
            if io.format == "parquet":
                codec = _POLARS_CODECS.get(parquet_codec(io), parquet_codec(io))
                frame.write_parquet(part, compression=codec)  # type: ignore[arg-type]  # a name of PARQUET_CODECS
            elif io.format == "csv":
                frame.write_csv(part, separator=separator(io))
            else:
                frame.write_ndjson(part)
        except BaseException as exc:
            # A writer polars has not implemented panics in Rust: pyo3's PanicException derives from BaseException,
            # so it would pass every `except Exception` on its way out, the output's own error handling included.
            if type(exc).__name__ != "PanicException":
                raise
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            msg = f"output {io.name!r}: polars cannot write this frame as {io.format} (it panicked: {why}); nothing "
            msg += "was committed. Write format: parquet or delta, or cast the column polars cannot write"
            raise EngineError(msg) from exc

    def sql(self, query: str, sources: Mapping[str, object]) -> pl.DataFrame:
        refuse_file_functions(query)
        frames = {name: self.native(frame) for name, frame in sources.items()}
        return pl.SQLContext(frames=frames).execute(query, eager=True)

    def scalar(self, query: str, sources: Mapping[str, object]) -> Any:  # noqa: ANN401 (one SQL value, any type)
        return self.sql(query, sources).row(0)[0]

    def native(self, frame: object) -> pl.DataFrame:
        frame = unwrap(frame)
        if isinstance(frame, pl.LazyFrame):
            return frame.collect()
        if isinstance(frame, pl.DataFrame):
            return frame
        if isinstance(frame, pa.Table):
            return _from_arrow(frame)
        msg = f"the polars engine needs a polars DataFrame, got {type(frame).__module__}.{type(frame).__name__}"
        raise EngineError(msg)

    def from_pandas(self, frame: pd.DataFrame) -> pl.DataFrame:
        return _from_arrow(pandas_table(frame, strict=True))  # the rows-v1 conversion: what is hashed is kept

    def environment(self) -> dict[str, str | None]:
        return {"version": pl.__version__}
