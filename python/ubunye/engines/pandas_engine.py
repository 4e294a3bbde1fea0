"""The pandas engine: pyarrow for parquet/csv/json, deltalake (delta-rs) for Delta, DuckDB for SQL.

Frames are pandas DataFrames with Arrow-backed dtypes (``pd.ArrowDtype``), so what was read keeps its exact
types (an int column with nulls stays int64) and hashes the same as on Spark.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from io import TextIOWrapper
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

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
from ubunye.engines.delta import read_table
from ubunye.engines.inputs import (
    SPARK_ROW_METADATA,
    check_alike,
    check_utf8,
    column_paths,
    data_files,
    header_alone,
    refuse_compression,
    refuse_spark_only_types,
    remote_files,
)
from ubunye.engines.int96 import as_instants, int96_leaves, refuse_mixed, refuse_sub_microseconds
from ubunye.engines.legacy_dates import refuse_legacy_dates, refuse_legacy_file, refuse_unsigned_drift
from ubunye.engines.parquet_leaves import refuse_logical_only
from ubunye.engines.partition_types import refuse_overlap, text_partitioning, typed_partitions
from ubunye.engines.paths import escaped_url, local_path
from ubunye.exceptions import EngineError, error_text
from ubunye.hashing.delta_files import parquet_read_options
from ubunye.hashing.dictionaries import decode_column

if TYPE_CHECKING:
    import duckdb
    import pyarrow.dataset as ds
    import pyarrow.fs as pafs


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    # Without ignore_metadata, a file's pandas metadata makes its index columns (set_index("id").to_parquet) the
    # frame's index: left out of the hash and of every output, where polars and Spark read them as columns.
    frame: pd.DataFrame = table.to_pandas(types_mapper=pd.ArrowDtype, ignore_metadata=True)
    return frame


def sandboxed_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection that reaches no file, network or extension, its settings locked.

    A query is config (or a template value pasted into it): it may read the frames registered under the
    inputs' names and nothing else. Without this, ``read_csv('/etc/passwd')`` would read outside the declared
    inputs (unrecorded) and ``COPY ... TO`` would write outside the atomic, recorded output write.

    Example:
        >>> import duckdb
        >>> try:
        ...     sandboxed_connection().sql("SELECT * FROM read_csv('/etc/passwd')")
        ... except duckdb.PermissionException as exc:
        ...     print(str(exc)[:60])
        Permission Error: Cannot access file "/etc/passwd" - file sy
    """
    import duckdb

    off: dict[str, str | bool | int | float | list[str]] = {"enable_external_access": False}
    off |= {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    con = duckdb.connect(config=off)
    try:
        con.execute("SET lock_configuration = true")  # no query can SET external access back on
    except BaseException:
        con.close()
        raise
    return con


def only_select(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Raise EngineError unless ``query`` is exactly one SELECT statement (WITH, VALUES, FROM-first included).

    Two statements would run both and keep the last result silently; anything but a SELECT (COPY, ATTACH, SET,
    CREATE, PRAGMA...) changes state instead of computing a frame.

    Example:
        >>> import duckdb
        >>> only_select(duckdb.connect(), "SELECT 1; SELECT 2")
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: SQL query 'SELECT 1; SELECT 2': holds 2 statements; a query must be ...
    """
    import duckdb

    try:
        statements = con.extract_statements(query)
    except duckdb.Error as exc:
        msg = f"SQL query {_excerpt(query)}: {type(exc).__name__}: {exc}"
        raise EngineError(msg) from exc
    if len(statements) != 1:
        msg = f"SQL query {_excerpt(query)}: holds {len(statements)} statements; a query must be exactly one SELECT"
        raise EngineError(msg)
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        name = getattr(kind, "name", str(kind))
        msg = f"SQL query {_excerpt(query)}: is a {name} statement; a query must be exactly one SELECT"
        raise EngineError(msg)


def _excerpt(query: str, limit: int = 200) -> str:
    """The query quoted for a message, cut to ``limit`` characters."""
    text = query if len(query) <= limit else query[:limit] + "..."
    return repr(text)


def _file_format(
    io: IOConfig, block_size: int | None = None, texts: tuple[str, ...] = ()
) -> str | ds.FileFormat | None:
    """How pyarrow reads files of ``io``: csv with the separator and Spark's nulls (the columns ``texts`` as text),
    parquet with INT96 timestamps in microseconds, else the format's name; csv in blocks of ``block_size`` bytes
    (None: pyarrow's 1 MB, too small for a longer row)."""
    import pyarrow.dataset as ds

    if io.format == "parquet":
        # Spark's default INT96 holds any year; pyarrow reads it as nanoseconds, where a year past 2262 or before 1677
        # wrapped silently to another instant (9999-12-31 read as 1816-03-29). Spark reads it in microseconds too.
        return ds.ParquetFileFormat(read_options=parquet_read_options())
    if io.format != "csv":
        return io.format
    import pyarrow.csv as pcsv

    # Only an unquoted empty field is null; a quoted one ("") is the empty string (as polars reads csv; Spark reads
    # it as null) and "nan" a float NaN (polars and Spark read text), as pyarrow writes them. pyarrow's defaults
    # read a null string as "" and the text NA, NULL, nan... as null, so neither nulls nor NaN nor such strings
    # came back.
    nulls = pcsv.ConvertOptions(
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
        column_types=dict.fromkeys(texts, pa.string()),
    )
    blocks = pcsv.ReadOptions(block_size=block_size) if block_size else None
    return ds.CsvFileFormat(parse_options=csv_parse_options(io), convert_options=nulls, read_options=blocks)


def _json_table(
    io: IOConfig, sources: str | list[str], whole: pa.Schema | None, block_size: int | None, **partitions: object
) -> pa.Table:
    """Every row of ``io``'s json files, in blocks of ``block_size``, with the schema ``whole`` (inferred from every
    row of every file: pyarrow infers it from the first block of the first file, and a key first seen later was
    dropped), their fields pyarrow would read as timestamps read as their text, and the partition columns.

    Each file is read by itself (``pyarrow.json.read_json``), in the order listed: pyarrow's dataset scan of a
    folder of json files (JsonFileFormat) deadlocked now and then, a run hanging where no SIGTERM ends it.

    JSON has no timestamps: pyarrow infers one from ISO text ("2024-01-01", "...T12:00:00+02:00", read as 10:00
    without a zone, the offset lost), where Spark and polars read the string, as this does now.
    """
    import pyarrow.dataset as ds
    import pyarrow.json as pj

    blocks = pj.ReadOptions(block_size=block_size) if block_size else None
    # lists the files and their partition values (name=value folders); it reads no rows
    found = ds.dataset(sources, format=ds.JsonFileFormat(read_options=blocks), **partitions)
    fields = list(whole) if whole is not None else list(found.schema)
    names = {f.name for f in fields}
    parts = [f for f in found.schema if f.name not in names]  # the partition columns
    texts = pa.schema([f.with_type(_timestamps_as_text(f.type)) for f in fields])
    schema = pa.schema([*texts, *parts])
    # the parser takes the fields as given (text not parsed, then printed back)
    parse = pj.ParseOptions(explicit_schema=texts)
    tables = []
    for fragment in found.get_fragments():
        try:
            with found.filesystem.open_input_stream(fragment.path) as stream:  # decompressed as named (.gz)
                read = pj.read_json(stream, read_options=blocks, parse_options=parse)
        except pa.ArrowInvalid as exc:  # named as the dataset scan named it (a "straddling" row still retried)
            raise pa.ArrowInvalid(f"Could not open JSON input source '{fragment.path}': Invalid: {exc}") from exc
        keys = ds.get_partition_keys(fragment.partition_expression)
        values = [pa.repeat(pa.scalar(keys.get(f.name), f.type), read.num_rows) for f in parts]
        tables.append(pa.Table.from_arrays([*read.select(texts.names).columns, *values], schema=schema))
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _table(
    io: IOConfig,
    sources: str | list[str],
    whole: pa.Schema | None,
    shown: Callable[[str], str] = str,
    **partitions: object,
) -> pa.Table:
    """Every row of ``io``'s files (json with the schema ``whole``: :func:`_json_table`) in blocks large enough for
    its longest row; a csv column this pyarrow read as wrapped nanosecond timestamps is read as its text instead,
    as newer pyarrow reads it (docs/rows-v1.md section 5.3: never a wrapped instant); a parquet INT96 timestamp as
    an instant in UTC (:func:`_parquet_table`, its refusals naming a file as ``shown`` names it)."""
    import pyarrow.dataset as ds

    if io.format == "json":
        return larger_blocks(lambda size: _json_table(io, sources, whole, size, **partitions))[0]
    if io.format == "parquet":
        return _parquet_table(io, ds.dataset(sources, format=_file_format(io), **partitions), shown)

    def scan(texts: tuple[str, ...] = (), columns: list[str] | None = None) -> pa.Table:
        def read(size: int | None) -> pa.Table:
            return ds.dataset(sources, format=_file_format(io, size, texts), **partitions).to_table(columns=columns)

        return larger_blocks(read)[0]

    table = scan()
    suspects = _nanosecond_columns(table) if io.format == "csv" and _csv_wraps_nanoseconds() else []
    if suspects:
        written = scan(tuple(suspects), suspects)  # the same files, those columns as their text
        wrapped = tuple(n for n in suspects if not _within_nanoseconds(written.column(n), table.schema.field(n).type))
        table = scan(wrapped) if wrapped else table
    return _valueless_as_text(table) if io.format == "csv" else table


def _valueless_as_text(table: pa.Table) -> pa.Table:
    """``table`` (csv read) with each column pyarrow typed null (no value in any row: a header alone, or an empty
    field in every row) as text, as Spark (inferSchema) and polars type it; rows-v1 refused the null type, so the
    same file hashed on Spark and polars and not on pandas. Its values are all null either way.

    Example:
        >>> _valueless_as_text(pa.table({"x": pa.array([None], pa.null()), "n": [1]})).schema.types
        [DataType(string), DataType(int64)]
    """
    if not any(pa.types.is_null(f.type) for f in table.schema):
        return table
    return table.cast(pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in table.schema]))


def _header_table(io: IOConfig, text: bytes) -> pa.Table:
    """The table of a csv file whose ``text`` is a header alone: its columns, as text (:func:`_valueless_as_text`),
    without rows. pyarrow reads the header as it reads any (the separator, quotes, a byte order mark), ended by a
    line break it needs (a header without one failed: "Empty CSV file or block"), where Spark reads its columns."""
    import io as bytes_io

    import pyarrow.csv as pcsv

    read = pcsv.read_csv(bytes_io.BytesIO(text.rstrip(b"\r\n") + b"\n"), parse_options=csv_parse_options(io))
    return _valueless_as_text(read)


def _parquet_table(io: IOConfig, dataset: ds.Dataset, shown: Callable[[str], str] = str) -> pa.Table:
    """Every row of the parquet ``dataset``, its INT96 timestamps instants in UTC (ubunye.engines.int96): a folder
    holding a column as INT96 in one file and without zone in another is refused, and so is an INT96 value with
    nanoseconds, checked against the microseconds read here (the scan keeps the files' order). A file is named as
    ``shown`` names it: a URL's file by its URL, where its path on the store lacks the scheme (``bucket/key``)."""
    fragments = list(dataset.get_fragments())
    footers = [(fragment.path, fragment.metadata) for fragment in fragments]  # each footer read once
    leaves = [int96_leaves(footer, path) for path, footer in footers]
    if not any(leaves):
        return dataset.to_table()
    refuse_mixed(io.name, [(shown(path), footer) for path, footer in footers])
    table, first = dataset.to_table(), 0
    for (path, footer), mine in zip(footers, leaves, strict=True):
        if mine:
            rows = table.slice(first, footer.num_rows).select(list(mine))
            refuse_sub_microseconds(io.name, path, mine, rows, dataset.filesystem, shown(path))
        first += footer.num_rows
    return table.cast(as_instants(table.schema, *leaves))


@functools.cache
def _csv_wraps_nanoseconds() -> bool:
    """Whether this pyarrow's csv reader infers a timestamp beyond the nanosecond range as ``timestamp[ns]``,
    wrapping it to another instant (pyarrow 14: 9999-12-31T00:00:00.000Z as 1816-03-29...), where newer pyarrow
    (26) reads such a column as text. Asked once, of a one-value csv: a newer pyarrow is spared the re-read."""
    import io

    import pyarrow.csv as pcsv

    probe = pcsv.read_csv(io.BytesIO(b"t\n9999-12-31T00:00:00.000Z\n"))
    return bool(pa.types.is_timestamp(probe.schema.field(0).type))


def _nanosecond_columns(table: pa.Table) -> list[str]:
    """The columns of ``table`` that are timestamps in nanoseconds."""
    return [f.name for f in table.schema if pa.types.is_timestamp(f.type) and f.type.unit == "ns"]


#: The microseconds from 1970 whose timestamps pyarrow 26 reads as nanoseconds: from the first whole second whose
#: nanoseconds an int64 holds (it checks the seconds first: 1677-09-21T00:12:44) to the int64's last microsecond.
_NS_RANGE_US = (-(2**63 // 10**9) * 10**6, (2**63 - 1) // 1000)


def _within_nanoseconds(texts: pa.ChunkedArray, kind: pa.TimestampType) -> bool:
    """Whether every timestamp written in ``texts`` (csv text this pyarrow inferred as ``kind``, nanoseconds) lies
    in the range pyarrow 26 reads as nanoseconds (:data:`_NS_RANGE_US`): parsed in microseconds, which hold any
    year. False when one does not parse so: the column is then read as its text, never as a guess."""
    import pyarrow.compute as pc

    cut = pc.replace_substring_regex(texts, pattern=r"(\.[0-9]{6})[0-9]+", replacement=r"\1")
    try:
        micros = cut.cast(pa.timestamp("us", kind.tz)).cast(pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    low, high = (v.as_py() for v in pc.min_max(micros).values())
    if low is None:
        return True
    if low < _NS_RANGE_US[0] or high > _NS_RANGE_US[1]:
        return False
    # of the last microsecond only nanoseconds 0 to 807 fit: its digits past the sixth, dropped to parse, decide
    last = texts.filter(pc.equal(micros, _NS_RANGE_US[1]))
    finer = pc.struct_field(pc.extract_regex(last, r"\.[0-9]{6}(?P<ns>[0-9]{1,3})"), [0])
    nanos = pc.max(pc.utf8_rpad(finer, 3, "0").cast(pa.int64())).as_py()
    return nanos is None or nanos <= (2**63 - 1) % 1000


def _remote_source(io: IOConfig, url: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow filesystem and path on it to read the URL ``url`` with ``io.storage_options``, given to the
    URL's fsspec filesystem (as the records store and polars take them); none given: pyarrow's own filesystem of
    the URL, configured from the environment. Without this the options were ignored, and the environment's
    endpoint and credentials read other data than polars read with the same config.

    Either way the path is the key as written (``engines.paths.literal_parts``), as polars and Spark read it:
    pyarrow given the URL itself read ``s3://b/t%20x`` as the folder ``t x`` and ``s3://b/t#x`` as ``t``
    (silently other data), and refused ``t x``, ``té`` and ``t?x``; it is given the path escaped instead."""
    from pyarrow.fs import FileSystem, FSSpecHandler, PyFileSystem

    if not io.storage_options:
        own: tuple[pafs.FileSystem, str] = FileSystem.from_uri(escaped_url(url))
        return own
    import fsspec

    try:
        fs, path = fsspec.core.url_to_fs(url, **io.storage_options)
    except (ImportError, ValueError, TypeError) as exc:
        msg = f"input {io.name!r}: cannot open {url} with its storage_options: {error_text(exc)}"
        raise EngineError(msg) from exc
    return PyFileSystem(FSSpecHandler(fs)), path


#: What a URL's first path segment is, by scheme, where a missing one is said by name.
_BUCKETS = {"s3": "bucket", "s3a": "bucket", "s3n": "bucket", "gs": "bucket", "gcs": "bucket"}
_BUCKETS |= dict.fromkeys(("abfs", "abfss", "az", "adl"), "container")


def _missing_remote(io: IOConfig, url: str) -> str | None:
    """What is missing when reading the URL ``url`` found no file, as a local path's error says it (``no such file
    or folder``; ``no such bucket`` when the bucket is missing too), or None when the URL is there (a file gone
    mid-read) or the store cannot say: the reader's own message then stands. Without this, s3fs's and pyarrow's
    message was the path alone (``cannot read parquet at s3://b/nothere: b/nothere``)."""
    from pyarrow.fs import FileType

    try:
        fs, source = _remote_source(io, url)
        if fs.get_file_info(source).type != FileType.NotFound:
            return None
        scheme, bucket = url.split("://", 1)[0].lower(), source.split("/", 1)[0]
        kind = _BUCKETS.get(scheme)
        if kind and fs.get_file_info(bucket).type == FileType.NotFound:
            return f"input {io.name!r}: no such {kind}: {scheme}://{bucket} (reading {url})"
    except (EngineError, OSError, pa.ArrowException, ValueError, TypeError, ImportError):
        return None
    return f"input {io.name!r}: no such file or folder: {url}"


def _options_refused(io: IOConfig, url: str, exc: Exception) -> str:
    """Why ``io.storage_options`` did not open ``url``, with the names fsspec's filesystems take: the upper-case
    names deltalake (object_store) takes, AWS_REGION and the like, are not theirs."""
    scheme = url.split("://", 1)[0]
    msg = f"input {io.name!r}: CONFIG.inputs.{io.name}.storage_options: the {scheme}:// filesystem pandas reads "
    msg += f"{io.format} with (fsspec's) does not take them ({error_text(exc)}); it takes its own names (s3fs: key, "
    msg += "secret, endpoint_url, client_kwargs...), where Delta inputs (deltalake) take AWS_REGION and the like"
    return msg


def _json_schema(file: Path | str, filesystem: pafs.FileSystem | None = None) -> pa.Schema:
    """The schema pyarrow infers from every row of the json ``file`` (on ``filesystem``, else local; one read)."""
    import pyarrow.json as pj

    def read(size: int | None) -> pa.Schema:
        blocks = pj.ReadOptions(block_size=size) if size else None
        if filesystem is None:
            return pj.read_json(file, read_options=blocks).schema
        with filesystem.open_input_stream(str(file)) as stream:  # decompressed as named (.gz), as read_json does
            return pj.read_json(stream, read_options=blocks).schema

    return larger_blocks(read)[0]


def _schema_of(io: IOConfig, file: Path | str, filesystem: pafs.FileSystem | None = None) -> pa.Schema:
    """The schema pyarrow reads ``file`` of ``io`` with (on ``filesystem``, else local): json's inferred from every
    row, parquet's INT96 timestamps as instants (an append's drift check compares them as read)."""
    import pyarrow.dataset as ds

    on: dict[str, Any] = {} if filesystem is None else {"filesystem": filesystem}
    if io.format == "json":
        return _json_schema(file, filesystem)
    if io.format == "parquet":
        dataset = ds.dataset(str(file), format=_file_format(io), **on)
        footer = next(iter(dataset.get_fragments())).metadata
        return as_instants(dataset.schema, int96_leaves(footer, str(file)))
    return larger_blocks(lambda size: ds.dataset(str(file), format=_file_format(io, size), **on).schema)[0]


def _bad_text(table: pa.Table) -> bool:
    """Whether csv or json text read into ``table`` was not UTF-8: pyarrow's csv reader reads such a column as
    binary, its json reader keeps the bytes in a string column (which full validation finds), silently both."""
    if any(pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type) for f in table.schema):
        return True
    try:
        table.validate(full=True)
    except pa.ArrowInvalid:
        return True
    return False


def _unified(schemas: list[pa.Schema]) -> pa.Schema:
    """One schema for files of the same column paths (check_alike): their fields' types unified, or the first
    file's when pyarrow cannot (the read then fails on the file that differs, naming it)."""
    try:
        return pa.unify_schemas(schemas)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return schemas[0]


def _timestamps_as_text(kind: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(kind):
        return pa.string()
    if pa.types.is_struct(kind):
        return pa.struct(
            [kind.field(i).with_type(_timestamps_as_text(kind.field(i).type)) for i in range(kind.num_fields)]
        )
    if pa.types.is_list(kind):
        return pa.list_(kind.value_field.with_type(_timestamps_as_text(kind.value_type)))
    return kind


def _refuse_rounded_integers(
    io: IOConfig,
    files: Sequence[Path | str],
    table: pa.Table,
    filesystem: pafs.FileSystem | None = None,
    shown: Callable[[Path | str], str] = str,
) -> None:
    """Raise EngineError naming the input, file (as ``shown`` names it) and column when a csv or json file (on
    ``filesystem``, else local) holds an integer beyond the 64-bit range in a column pyarrow read as float64: every
    such value was rounded (9223372036854775809 and ...810 both 9223372036854775808.0), a guessed value. Only a
    float64 column holding a whole number of at least 2**63 in magnitude is looked at again, as text (csv) or by
    Python's json (json, its lines): rare, so free."""
    import pyarrow.compute as pc

    for name in table.column_names:
        column = table.column(name)
        if column.type != pa.float64() or column.null_count == len(column):
            continue
        big = pc.and_(pc.greater_equal(pc.abs(column), 2.0**63), pc.equal(pc.floor(column), column))
        if not pc.any(big).as_py():
            continue
        for file in files:
            found = _integer_text(io, file, name, filesystem)
            if found is not None:
                msg = (
                    f"input {io.name!r}: {shown(file)}: column {name!r} holds the integer {found}, beyond 64 bits: "
                    "read as a float64 it would be rounded; store it as a string, or as a decimal in parquet"
                )
                raise EngineError(msg)


def _integer_text(io: IOConfig, file: Path | str, name: str, filesystem: pafs.FileSystem | None) -> str | None:
    """The first integer written in ``file``'s column ``name`` (on ``filesystem``, else local) that a 64-bit
    integer cannot hold, or None."""
    if io.format == "csv":
        import pyarrow.csv as pcsv

        convert = pcsv.ConvertOptions(column_types={name: pa.string()}, include_columns=[name])
        try:
            if filesystem is None:
                texts = pcsv.read_csv(file, parse_options=csv_parse_options(io), convert_options=convert)
            else:
                with filesystem.open_input_stream(str(file)) as stream:  # decompressed as named, as read_csv does
                    texts = pcsv.read_csv(stream, parse_options=csv_parse_options(io), convert_options=convert)
        except (pa.ArrowInvalid, KeyError):  # a partition column, or the column is in another file
            return None
        values = texts.column(0).to_pylist()
    else:
        values = []
        opened = Path(file).open("rb") if filesystem is None else filesystem.open_input_stream(str(file))
        with opened, TextIOWrapper(opened, encoding="utf-8") as lines:
            for line in lines:
                row = json.loads(line) if line.strip() else None
                values.append(row.get(name) if isinstance(row, dict) else None)
    for v in values:
        text = v.strip() if isinstance(v, str) else v if isinstance(v, int) and not isinstance(v, bool) else None
        if isinstance(text, int):
            if not -(2**63) <= text < 2**63:
                return str(text)
        elif (
            text is not None
            and text.lstrip("+-").isascii()
            and text.lstrip("+-").isdigit()
            and not -(2**63) <= int(text) < 2**63
        ):
            return text
    return None


def _json_line(io: IOConfig, row: dict[str, Any]) -> str:
    """One row as a JSON line. JSON has no NaN or Infinity: Python writes them as bare tokens, which pandas reads
    back and polars and other readers refuse as not JSON; refused, naming the column."""
    try:
        return json.dumps(row, default=str, allow_nan=False)
    except ValueError:
        for name, value in row.items():
            try:
                json.dumps(value, default=str, allow_nan=False)
            except ValueError:
                raise EngineError(_no_json_number(io, name, value)) from None
        raise


def _no_json_number(io: IOConfig, name: str, value: object) -> str:
    msg = f"output {io.name!r}: column {name!r} holds "
    if not isinstance(value, float):
        msg += "NaN or Infinity inside its values, which JSON cannot hold (a bare NaN is no JSON: other readers "
        return msg + "refuse the file); make them null where the column is built, or write parquet"
    if math.isnan(value):
        msg += "NaN, which JSON cannot hold (a bare NaN is no JSON: other readers refuse the file); a pandas float "
        msg += f"column holds a missing value as NaN: df[{name!r}].astype('Float64') makes it null (float64), or "
        return msg + "write parquet"
    msg += f"{value}, which JSON cannot hold (other readers refuse the file); replace it (e.g. with null: "
    return msg + f"df[{name!r}].replace([np.inf, -np.inf], None)), or write parquet"


def _for_delta(table: pa.Table) -> pa.Table:
    """``table`` with its columns in types deltalake writes and reads back as they are, each hashing as before
    (docs/rows-v1.md section 7): a dictionary column (``pd.ArrowDtype(dictionary)``, as a parquet of categoricals
    reads back) as its values, which deltalake otherwise refuses as a partition column ("failed to read partition
    column value as Scalar", naming none); a ``decimal256`` of precision up to 38 as the ``decimal128`` Delta has.

    Example:
        >>> t = pa.table({"d": pa.array(["a", "b"]).dictionary_encode(), "n": pa.array([1, 2], pa.decimal256(5, 0))})
        >>> _for_delta(t).schema.types
        [DataType(string), Decimal128Type(decimal128(5, 0))]
    """
    columns, changed = [], False
    for i, field in enumerate(table.schema):
        column = table.column(i)
        if pa.types.is_dictionary(field.type):
            column, changed = decode_column(column, field.name), True
        t = column.type
        if pa.types.is_decimal256(t) and t.precision <= 38:
            column, changed = column.cast(pa.decimal128(t.precision, t.scale)), True
        columns.append(column)
    if not changed:
        return table
    return pa.Table.from_arrays(columns, names=table.schema.names)


class PandasEngine(LocalEngine[pd.DataFrame]):
    """Runs tasks in this process on pandas DataFrames.

    Example:
        >>> import tempfile
        >>> engine, base = PandasEngine(), Path(tempfile.mkdtemp())
        >>> engine.write(pd.DataFrame({"a": [1, 2]}), IOConfig("o", format="parquet", path="o"), base)
        >>> engine.scalar("SELECT COUNT(*) FROM t", {"t": engine.read(IOConfig("o", format="parquet", path="o"), base)})
        2
    """

    name = "pandas"

    # -- reading ---------------------------------------------------------------------------------------------------
    def read(self, io: IOConfig, base_dir: Path) -> pd.DataFrame:
        path = self._input_path(io, base_dir)
        try:
            if io.format == "delta":
                return _to_pandas(read_table(io, path))
            return _to_pandas(reread_after_swap(path, lambda: self._read_files(io, path)))
        except EngineError:
            raise
        except (OSError, pa.ArrowException, ValueError) as exc:
            missing = None
            if isinstance(exc, FileNotFoundError) and local_path(path) is None:
                missing = _missing_remote(io, path)
            msg = missing or f"input {io.name!r}: cannot read {io.format} at {path}: {exc}"
            raise EngineError(msg) from exc
        except Exception as exc:  # deltalake raises its own errors (TableNotFoundError...)
            msg = f"input {io.name!r}: cannot read {io.format} at {path}: {error_text(exc)}"
            raise EngineError(msg) from exc

    def _read_files(self, io: IOConfig, path: str) -> pa.Table:

        files = data_files(io, path)  # checked: no stray file, no empty folder, UTF-8 text (inputs.py)
        if files == []:
            return pa.table({})  # allow_empty, and no schema is declared: no rows, no columns
        if files is None:  # a URL: listed here, by the same rules
            return self._read_url(io, path)
        root = local_path(path)
        assert root is not None
        return self._read_listed(io, files, root)

    def _read_url(self, io: IOConfig, url: str) -> pa.Table:
        """The files at the URL ``url``, listed by the rules of a local folder (inputs.remote_files) and read as
        :meth:`_read_listed` reads a local folder's, on the URL's filesystem: the same folder reads as the same
        table wherever it is stored. pyarrow listed and read a URL itself before: partition folders read as no
        column and a file with another column read with the first file's, silently."""
        filesystem, root = _remote_source(io, url)
        try:
            files = remote_files(io, filesystem, root, url)
        except TypeError as exc:  # fsspec opens the filesystem lazily: an option it does not take shows here
            if not io.storage_options:
                raise
            raise EngineError(_options_refused(io, url, exc)) from exc
        if not files:
            return pa.table({})  # allow_empty, as a local folder
        base = root.rstrip("/")

        def shown(file: Path | str) -> str:  # a file as the user names it: its URL
            return url.rstrip("/") + str(file)[len(base) :]

        listed = [Path(f) for f in files]
        try:
            return self._read_listed(io, listed, Path(base), filesystem, shown)
        except Exception:
            # A header or key that is not UTF-8 fails the read itself (pyarrow names no file; read() then named the
            # folder): the text is checked now, as a local folder's is before its read (data_files), and named so.
            if io.format in ("csv", "json"):
                for file in listed:
                    check_utf8(io, file, filesystem=filesystem, shown=shown(file))
            raise

    def _read_listed(
        self,
        io: IOConfig,
        files: list[Path],
        root: Path,
        filesystem: pafs.FileSystem | None = None,
        shown: Callable[[Path | str], str] = str,
    ) -> pa.Table:
        """The listed ``files`` under ``root`` (on ``filesystem``, else local; named in errors as ``shown`` names
        them), checked alike and read with their partition columns typed as Spark types them."""
        refuse_compression(io, files, "pyarrow's dataset reader", (".zst",))
        if len(files) == 1:  # a folder's csv file of a header alone is left out (inputs.py): this is a file's input
            text = header_alone(io, files[0], filesystem=filesystem, shown=shown(files[0]))
            if text is not None:
                if filesystem is not None:  # pyarrow reads a header that is not UTF-8 without a word; a local one
                    check_utf8(io, files[0], filesystem=filesystem, shown=shown(files[0]))  # is checked already
                return _header_table(io, text)
        if io.format == "parquet":  # from the footers, before pyarrow reads one (pyarrow 14 fails on a FLOAT16)
            for file in files:
                refuse_logical_only(io.name, file, shown(file), filesystem)
        schemas = functools.cache(lambda file: _schema_of(io, file, filesystem))
        check_alike(io, files, root, lambda file: column_paths(schemas(file)), shown=shown)
        refuse_overlap(io.name, schemas(files[0]).names if files else [], files, root)
        if io.format == "parquet":  # alike: the first file says what Spark declared for all
            declared = schemas(files[0]).metadata or {}
            refuse_spark_only_types(io, declared.get(SPARK_ROW_METADATA), shown(files[0]))
            # pyarrow would cast an unsigned drift to the first file's type; Spark's hybrid-calendar days read as
            # other days here
            refuse_unsigned_drift(io.name, [(shown(f), schemas(f)) for f in files])
            if filesystem is None:
                refuse_legacy_dates(io.name, files)
            else:
                for file in files:
                    with filesystem.open_input_file(str(file)) as handle:
                        parquet = pq.ParquetFile(handle, coerce_int96_timestamp_unit="us")
                        refuse_legacy_file(f"input {io.name!r}", shown(file), parquet)
        whole = _unified([schemas(f) for f in files]) if io.format == "json" else None
        # name=value folders become columns, read as their text, then typed as Spark types them (not pyarrow's guess)
        hive = text_partitioning(files, root)
        on: dict[str, Any] = {} if filesystem is None else {"filesystem": filesystem}
        sources = [str(f) for f in files]
        table = _table(io, sources, whole, shown, **on, **hive)
        if io.format in ("csv", "json"):
            if filesystem is not None and _bad_text(table):  # checked before the read locally (data_files)
                for file in files:
                    check_utf8(io, file, filesystem=filesystem, shown=shown(file))
            _refuse_rounded_integers(io, files, table, filesystem, shown)
        return typed_partitions(io.name, table, files, root)

    def _file_schema(self, io: IOConfig, file: Path) -> pa.Schema:
        return _schema_of(io, file)

    # -- writing (the rest is LocalEngine's) ------------------------------------------------------------------------
    def _arrow(self, frame: pd.DataFrame, *, rows: bool) -> pa.Table:
        # every row either way: the part file is written from it; a date64 as date32, which polars reads as a date
        return date32_table(pandas_table(frame))

    def _delta_arrow(self, frame: pd.DataFrame) -> pa.Table:
        return _for_delta(date32_table(pandas_table(frame)))

    def _write_part(self, frame: pd.DataFrame, table: pa.Table, io: IOConfig, part: Path) -> None:
        """One part file: a folder of part files, as Spark writes them (so either engine reads what the other wrote)."""
        if io.format == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, part, compression=parquet_codec(io))
        elif io.format == "csv":
            import pyarrow.csv as pcsv

            pcsv.write_csv(table, part, pcsv.WriteOptions(delimiter=separator(io)))
        else:
            with part.open("w", encoding="utf-8") as fh:
                for row in table.to_pylist():
                    fh.write(_json_line(io, {k: v for k, v in row.items() if v is not None}) + "\n")

    # -- transforming ----------------------------------------------------------------------------------------------
    def _relation(
        self, query: str, sources: Mapping[str, object]
    ) -> tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyRelation]:
        con = sandboxed_connection()
        try:
            only_select(con, query)
            for name, frame in sources.items():
                con.register(name, pandas_table(self.native(frame)))
            return con, con.sql(query)
        except BaseException:
            con.close()
            raise

    def sql(self, query: str, sources: Mapping[str, object]) -> pd.DataFrame:
        con, rel = self._relation(query, sources)
        try:
            return _to_pandas(rel.to_arrow_table())
        finally:
            con.close()

    def scalar(self, query: str, sources: Mapping[str, object]) -> Any:  # noqa: ANN401 (one SQL value, any type)
        con, rel = self._relation(query, sources)
        try:
            return rel.fetchall()[0][0]
        finally:
            con.close()

    # -- frames ----------------------------------------------------------------------------------------------------
    def native(self, frame: object) -> pd.DataFrame:
        if isinstance(frame, pd.DataFrame):
            return frame
        if isinstance(frame, pa.Table):
            return _to_pandas(frame)
        frame = unwrap(frame)
        if isinstance(frame, pd.DataFrame):
            return frame
        msg = f"the pandas engine needs a pandas DataFrame, got {type(frame).__module__}.{type(frame).__name__}"
        raise EngineError(msg)

    def from_pandas(self, frame: pd.DataFrame) -> pd.DataFrame:
        return frame

    def environment(self) -> dict[str, str | None]:
        return {}
