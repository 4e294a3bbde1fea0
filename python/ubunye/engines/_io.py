"""What the engines share to read and write: a pandas frame's Arrow form, the csv separator, and the half of an
in-process engine (pandas, polars) that does not depend on its frames (:class:`LocalEngine`).

Example:
    >>> import pandas as pd
    >>> pandas_table(pd.DataFrame({"x": [1.5, float("nan")]})).column("x").to_pylist()
    [1.5, nan]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import pyarrow as pa

from ubunye.engines.delta import dataset_version, write_delta
from ubunye.engines.inputs import column_difference, listing, partition_difference
from ubunye.engines.locks import output_lock
from ubunye.engines.paths import local_path, location, resolve_path
from ubunye.engines.transaction import (
    CommitHook,
    refuse_columns,
    refuse_unwritable,
    type_text,
    write_error,
    write_parts,
)
from ubunye.exceptions import EngineError, HashError
from ubunye.hashing import FrameHash, FrameProfile, hash_frame, profile_frame
from ubunye.hashing.frame import to_arrow
from ubunye.lineage.secrets import is_secret_name

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow.csv as pcsv

    from ubunye.config import IOConfig
    from ubunye.hashing.delta_files import SumsCache
    from ubunye.hashing.delta_hash import DeltaHash

#: The native frame of an in-process engine (pandas.DataFrame, polars.DataFrame).
FrameT = TypeVar("FrameT")
T = TypeVar("T")


def pandas_table(frame: pd.DataFrame, *, strict: bool = False) -> pa.Table:
    """``frame`` as Arrow with the rows-v1 rules (NaN stays NaN), so what is written is what was hashed; a frame
    rows-v1 refuses (a mixed object column...) is converted as pyarrow does it, or with ``strict`` refused.

    ``strict`` is for a frame handed to another engine (``from_pandas``): there the converted frame is hashed
    again, and pyarrow's conversion (a date column holding a datetime keeps its day, a set its iteration order)
    would be hashed as if it were the frame, where the pandas engine records the refusal as ``hash_error``. A
    conversion whose result rows-v1 refuses too (an empty object column becomes Arrow's null type, a uint8 stays
    unsigned) changes nothing that would be hashed: taken, and its hash refused there as on pandas.

    Raises:
        EngineError: with ``strict``, naming the column rows-v1 refuses and why, when pyarrow's conversion of it
            would be hashed; either way, naming the columns when two have one name once made text (``0`` and
            ``'0'``), or the column, its dtype and value when pyarrow cannot convert it (2**70 in an object column).
    """
    try:
        return to_arrow(frame)
    except HashError as exc:
        _refuse_name_clashes(frame)
        converted = _pyarrow_table(frame)
        if strict and _hashable_types(converted.schema):
            raise EngineError(f"from_pandas: {exc}") from None
        return converted


def _refuse_name_clashes(frame: pd.DataFrame) -> None:
    """Raise EngineError naming the two columns of ``frame`` whose names are one text. pandas tells the column
    ``0`` from ``'0'``; Arrow and every file format name a column by its text, so one hid the other (json kept one)
    or the file held one name twice (parquet, csv), which no engine reads back."""
    seen: dict[str, object] = {}
    for name in frame.columns:
        text = str(name)
        if text not in seen:
            seen[text] = name
            continue
        first = seen[text]
        if type(first) is type(name) and first == name:
            msg = f"the frame has two columns named {name!r}"
        else:
            msg = f"the frame's columns {first!r} ({type(first).__name__}) and {name!r} ({type(name).__name__}) are "
            msg += f"both named {text!r} once made text"
        msg += " (as Arrow and every file format name columns): one would hide the other, or the file would hold "
        msg += "the name twice and read back nowhere; nothing was written. Rename one (df.columns.map(str) shows them)"
        raise _Unwritable(msg)


class _Unwritable(EngineError):
    """A pandas frame pyarrow cannot convert as it is (:func:`pandas_table`); a write names its output in front."""


#: What pyarrow raises converting pandas values it cannot hold (an int beyond 64 bits, Decimal('Infinity')...).
_CONVERSION_ERRORS = (pa.ArrowException, TypeError, ValueError, OverflowError)


def _pyarrow_table(frame: pd.DataFrame) -> pa.Table:
    """``frame`` as pyarrow converts it; where it cannot, an EngineError naming the column, its dtype and the first
    value pyarrow refuses. pyarrow's own message named neither ("OverflowError: Python int too large to convert to
    C long" for 2**70 in an object column; "'str' object cannot be interpreted as an integer" for
    Decimal('Infinity'))."""
    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    except _CONVERSION_ERRORS as exc:
        for i, name in enumerate(frame.columns):
            try:
                pa.Table.from_pandas(frame.iloc[:, [i]], preserve_index=False)
            except _CONVERSION_ERRORS as one:
                column = frame.iloc[:, i]
                first = (str(one).strip().splitlines() or [""])[0]
                msg = f"column {name!r} of dtype {column.dtype} cannot be converted to Arrow to be written"
                msg += f"{_refused_value(column)}: {type(one).__name__}: {first}"
                raise _Unwritable(msg) from exc
        raise


def _refused_value(column: pd.Series) -> str:
    """Words naming the first value of an object ``column`` pyarrow refuses on its own, else ``""`` (a value
    refused only beside others: mixed kinds)."""
    if column.dtype != object:
        return ""
    for row, value in enumerate(column):
        try:
            pa.array([value], from_pandas=True)
        except _CONVERSION_ERRORS:
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            return f" (row {row} holds {shown}, a {type(value).__name__})"
    return ""


def _hashable_types(schema: pa.Schema) -> bool:
    from ubunye.hashing.types import schema_string

    try:
        schema_string(schema)
    except HashError:
        return False
    return True


def _date32_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_date64(t):
        return pa.date32()
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        inner = t.value_field.with_type(_date32_type(t.value_type))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(inner, t.list_size)
        return pa.large_list(inner) if pa.types.is_large_list(t) else pa.list_(inner)
    if pa.types.is_map(t):
        return pa.map_(_date32_type(t.key_type), _date32_type(t.item_type))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_date32_type(f.type)) for f in t])
    return t


def date32_table(table: pa.Table) -> pa.Table:
    """``table`` with every ``date64`` (at any depth) as ``date32``, the same days: polars reads a date64 as a
    datetime (from Arrow, and from a parquet file whose Arrow schema says date64), where rows-v1, pandas and Spark
    read a date.

    Raises:
        EngineError: a date64 holds a time of day (not a date; rows-v1 refuses it too), naming the column.

    Example:
        >>> import datetime as dt
        >>> date32_table(pa.table({"d": pa.array([dt.date(2024, 1, 1)], pa.date64())})).schema.field("d").type
        DataType(date32[day])
    """
    for i, f in enumerate(table.schema):
        plain = _date32_type(f.type)
        if plain != f.type:
            try:
                table = table.set_column(i, f.with_type(plain), table.column(i).cast(plain))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                msg = f"column {f.name!r} of type {f.type} holds a value that is not a whole day: {exc}"
                raise EngineError(msg) from None
    return table


#: How often a local input is listed and read again when a file it listed is gone (an overwrite swapped the folder).
_REREADS = 5


def reread_after_swap(path: str, read: Callable[[], T]) -> T:
    """``read()`` of the local input at ``path``, again (listing it afresh) when a file it listed has gone.

    An overwrite of that location by another run swaps the whole folder in one rename (engines.transaction): a
    reader that listed the old folder's files finds them gone, where listing again finds the new output, complete.
    Without this the nightly reader failed with FileNotFoundError while the data was there all along. An input
    that stays gone (deleted, not replaced) still fails, on the last try.
    """
    if local_path(path) is None:
        return read()
    for attempt in range(_REREADS):
        try:
            return read()
        except FileNotFoundError:
            if attempt == _REREADS - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def unwrap(frame: object) -> object:
    """The native frame inside a narwhals frame (``nw.from_native(...)``), else ``frame`` as it is.

    Example:
        >>> import narwhals as nw, pandas as pd
        >>> type(unwrap(nw.from_native(pd.DataFrame({"a": [1]})))).__name__
        'DataFrame'
    """
    if type(frame).__module__.startswith("narwhals"):
        import narwhals as nw

        return nw.to_native(frame, pass_through=True)
    return frame


def separator(io: IOConfig) -> str:
    """The csv field separator: ``options.sep``, else ``options.delimiter`` (Spark's two names), else a comma.

    Example:
        >>> from ubunye.config import IOConfig
        >>> separator(IOConfig("i", format="csv", options={"delimiter": ";"}))
        ';'
    """
    return str(io.options.get("sep", io.options.get("delimiter", ",")))


def csv_parse_options(io: IOConfig) -> pcsv.ParseOptions:
    """How pyarrow splits ``io``'s csv files into rows and fields: the separator, and a quoted value may hold a line
    break, as Spark (``multiLine``) and polars read it. Without ``newlines_in_values`` pyarrow cuts a file into
    1 MB blocks at line breaks and fails on a value spanning a block's end ("got out of sync with chunker"): a
    valid file refused once it passes 1 MB.

    Example:
        >>> from ubunye.config import IOConfig
        >>> csv_parse_options(IOConfig("i", format="csv", options={"sep": ";"})).delimiter
        ';'
    """
    import pyarrow.csv as pcsv

    return pcsv.ParseOptions(delimiter=separator(io), newlines_in_values=True)


_BLOCK = 1 << 20  # pyarrow's csv and json block size
_MAX_BLOCK = 2**31 - 1


def larger_blocks(read: Callable[[int | None], T]) -> tuple[T, int | None]:
    """``read(None)`` (pyarrow's csv and json readers in their 1 MB blocks), and again with blocks 16 times larger
    while pyarrow says a row "straddles" two blocks: a row over 1 MB (a long text, a JSON blob) is valid input,
    which the default refused. Gives back the result and the block size that read it (None: the default).

    Example:
        >>> larger_blocks(lambda size: size or 0)
        (0, None)
    """
    size: int | None = None
    while True:
        try:
            return read(size), size
        except pa.ArrowInvalid as exc:
            if "straddl" not in str(exc) or size == _MAX_BLOCK:
                raise
            size = min(_MAX_BLOCK, (size or _BLOCK) * 16)


#: Formats written as text and read back through type inference: a write of one is read back before commit.
TEXT_FORMATS = ("csv", "json")

#: The reader options the in-process engines apply (csv: the separator, Spark's two names for it).
READER_OPTIONS = {"csv": ("sep", "delimiter"), "json": (), "parquet": (), "delta": ()}


#: Parquet's compression codecs by Spark's names (the ``compression`` writer option), as pyarrow names them; the
#: in-process engines write parquet with the codec asked (Spark's ``lzo`` has no pyarrow writer: refused).
PARQUET_CODECS = {
    "none": "none", "uncompressed": "none", "snappy": "snappy", "gzip": "gzip", "zstd": "zstd", "lz4": "lz4",
    "lz4_raw": "lz4", "brotli": "brotli",
}  # fmt: skip


def parquet_codec(io: IOConfig) -> str:
    """The codec a parquet output is written with: its ``compression`` option (Spark's names), else snappy.

    Example:
        >>> from ubunye.config import IOConfig
        >>> parquet_codec(IOConfig("o", format="parquet", options={"compression": "ZSTD"}))
        'zstd'
    """
    return PARQUET_CODECS[str(io.options.get("compression", "snappy")).strip().lower()]


def _refuse_codec(io: IOConfig, side: str) -> None:
    value = str(io.options["compression"]).strip().lower()
    if side == "output" and value in PARQUET_CODECS:
        return
    if side == "output":
        msg = f"output {io.name!r}: options.compression={io.options['compression']!r} is not a parquet codec this "
        msg += f"engine writes; it writes {', '.join(PARQUET_CODECS)}"
    else:  # Spark ignores it on a read too (a parquet file names its codec), but it is not ours to pass silently
        msg = f"input {io.name!r}: options.compression is a writer option; a parquet file names its own codec"
    raise EngineError(msg)


#: Options the in-process engines accept only with the value they follow anyway (Spark's names: a config written
#: for Spark often says ``header: true``); any other value would be ignored, so it is refused.
FIXED_OPTIONS = {"csv": {"header": "true", "inferSchema": "true", "encoding": "utf-8"}}


def refuse_options(io: IOConfig, side: str, engine: str) -> None:
    """Raise EngineError naming the option and the input or output (``side``) unless ``engine`` applies every
    one of ``io.options`` (csv, json, parquet or Delta): an option it would ignore (``header: false``,
    ``mergeSchema: true``) changes nothing and would pass silently, so the rows read or written are not the ones
    the config asks for. A parquet output's ``compression`` (:func:`parquet_codec`) is applied.

    Example:
        >>> from ubunye.config import IOConfig
        >>> refuse_options(IOConfig("i", format="csv", options={"sep": ";", "header": True}), "input", "pandas")
        >>> refuse_options(IOConfig("i", format="csv", options={"header": False}), "input", "pandas")
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'i': the pandas engine does not apply option header=False to csv, ...
    """
    fmt = io.format or ""
    # Every format: an option ignored on parquet or Delta (mergeSchema, versionAsOf, compression) changes what is
    # read or written on Spark and nothing here, so a config shared with Spark would pass it silently.
    applied = READER_OPTIONS.get(fmt, ())
    fixed = FIXED_OPTIONS.get(fmt, {})
    for key, value in io.options.items():
        if key in applied:
            continue
        if fmt == "parquet" and key == "compression":
            _refuse_codec(io, side)
            continue
        if key in fixed and str(value).strip().lower() == fixed[key]:
            continue
        takes = [*applied, *(f"{k}: {v}" for k, v in fixed.items())]
        shown = "'***'" if is_secret_name(str(key)) else repr(value)  # the message reaches terminals and logs
        msg = f"{side} {io.name!r}: the {engine} engine does not apply option {key}={shown} to {fmt}, so it would "
        msg += "be ignored; "
        msg += f"it takes {', '.join(takes)}" if takes else f"it takes no options for {fmt}"
        msg += " (other options need the spark engine)"
        raise EngineError(msg)


def reader_options(io: IOConfig) -> dict[str, Any]:
    """The options of ``io`` its reader applies (:data:`READER_OPTIONS`): a write is read back with these.

    Example:
        >>> from ubunye.config import IOConfig
        >>> reader_options(IOConfig("o", format="csv", options={"sep": ";"}))
        {'sep': ';'}
    """
    keep = READER_OPTIONS.get(io.format or "", ())
    return {k: v for k, v in io.options.items() if k in keep}


def _one_column(table: pa.Table, i: int) -> pa.Table:
    """Column ``i`` of ``table`` alone (by position: names may repeat)."""
    return pa.Table.from_arrays([table.column(i)], names=[table.schema.names[i]])


def empty_text(io: IOConfig) -> str:
    """Why a frame without rows is refused in csv or json, for a message (the types live in the values)."""
    msg = f"the frame has no rows, and {io.format} holds no column types without them (it reads back as "
    msg += "text columns or no table); nothing was committed, the previous data is as it was. Write parquet or "
    msg += "delta, or skip the write on an empty day (an append of no rows writes nothing)"
    return msg


def first_difference(written: pa.Table, read: pa.Table, expected: FrameHash, got: FrameHash) -> str:
    """Where ``read`` (a write read back) first differs from ``written``: a column's name or type, the row
    count, else the first column whose values differ (each column hashed alone), for an error message.

    Example:
        >>> a, b = pa.table({"code": ["007"]}), pa.table({"code": [7]})
        >>> first_difference(a, b, hash_frame(a), hash_frame(b))
        "column 'code' is string in the frame but reads back as int64"
    """
    if expected.schema != got.schema:
        names, back = written.schema.names, read.schema.names
        if names != back:
            missing = [n for n in names if n not in back]
            extra = [n for n in back if n not in names]
            if missing:
                return f"column {missing[0]!r} of the frame does not read back (read back: {', '.join(back)})"
            if extra:
                return f"column {extra[0]!r} reads back but is not in the frame"
            return f"the columns read back in another order ({', '.join(back)})"
        for i, name in enumerate(names):
            was, now = type_text(written.schema.field(i).type, name), type_text(read.schema.field(i).type, name)
            if was != now:
                return f"column {name!r} is {was} in the frame but reads back as {now}"
        return f"the schema differs ({expected.schema} written, {got.schema} read back)"
    if expected.row_count != got.row_count:
        return f"{expected.row_count} rows were written but {got.row_count} read back"
    for i, name in enumerate(written.schema.names):
        if hash_frame(_one_column(written, i)).data_hash != hash_frame(_one_column(read, i)).data_hash:
            return f"the values of column {name!r} differ"
    return "the values differ"


class LocalEngine(ABC, Generic[FrameT]):
    """An engine running in this process on frames of type ``FrameT``, writing through Arrow: outputs go to local
    folders of part files (``engines.transaction``) or to Delta through deltalake (``engines.delta``), catalog
    tables are refused, and a frame is held as it is.

    A subclass reads, runs SQL, and says how its frame becomes Arrow (:meth:`_arrow`) and how it writes one part
    file (:meth:`_write_part`), so either engine reads what the other (or Spark) wrote.
    """

    name: str

    @abstractmethod
    def _arrow(self, frame: FrameT, *, rows: bool) -> pa.Table:
        """``frame`` as Arrow: every row when ``rows``, else (when cheaper) its columns and types alone."""

    def _delta_arrow(self, frame: FrameT) -> pa.Table:
        """Every row of ``frame`` as the Arrow table written to Delta: by default ``_arrow(frame, rows=True)``; an
        engine whose types deltalake (or its own Delta reader) would not take back as they are overrides it with
        types that hash alike (docs/rows-v1.md section 7)."""
        return self._arrow(frame, rows=True)

    @abstractmethod
    def _write_part(self, frame: FrameT, table: pa.Table, io: IOConfig, part: Path) -> None:
        """Write one part file of ``io.format`` at ``part``; ``table`` is ``_arrow(frame, rows=False)``."""

    @abstractmethod
    def _file_schema(self, io: IOConfig, file: Path) -> pa.Schema:
        """The columns and types this engine's reader finds in one data file of ``io`` (its schema alone)."""

    def _input_path(self, io: IOConfig, base_dir: Path) -> str:
        """Where the input ``io`` is read, resolved; EngineError for a catalog table."""
        if io.table is not None:
            msg = f"input {io.name!r}: catalog tables (table: {io.table}) need the spark engine"
            raise EngineError(msg)
        assert io.path is not None
        refuse_options(io, "input", self.name)
        return resolve_path(io.path, base_dir)

    def write(
        self, frame: FrameT, io: IOConfig, base_dir: Path, *, before_commit: Callable[[], None] | None = None
    ) -> int | None:
        """Write one output, all of it or nothing (``engines.transaction``); ``before_commit`` runs just before
        the new data becomes visible, and what it raises propagates unchanged. Returns the Delta version the
        write committed (None for other formats, or when it could not be read back)."""
        self.check_output(io, base_dir)
        path = location(io, base_dir)
        hook = CommitHook(before_commit)
        try:
            table = self._converted(frame, io, path)
            refuse_columns(io, table.schema)  # before anything is written
            if not table.schema.names:
                self._refuse_rows_without_columns(frame, io)
            if io.format == "delta":
                with output_lock(path):  # a no-op for URLs; serialises local runs
                    return write_delta(table, io, path, hook)
            elif io.mode == "append" and self._arrow(frame, rows=True).num_rows == 0:
                hook()  # a day without rows adds nothing: no part (an empty csv or json part reads back as no table)
            else:
                # Text formats come back through a reader that guesses types ("007" as 7, a date string as a
                # date) and may drop a row (a one-column null is an empty line): what was written is read back
                # and compared before it becomes visible, so the record never claims a hash the data lacks.
                # Parquet keeps its types: no read-back cost there.
                expected = self._hash_or_none(frame) if io.format in TEXT_FORMATS else None

                def write_part(part: Path) -> None:
                    self._write_part(frame, table, io, part)
                    if expected is not None:
                        self._check_read_back(frame, expected, io, part)
                    if io.mode == "append":
                        self._refuse_drift(io, part)

                write_parts(io, path, self.name, write_part, hook)
        except Exception as exc:
            error = write_error(io, path, exc, hook)
            if error is exc:
                raise
            raise error from exc
        return None

    def _converted(self, frame: FrameT, io: IOConfig, path: str) -> pa.Table:
        """``frame`` as the Arrow table written to ``io`` at ``path``; a pandas frame pyarrow cannot convert (a
        column it refuses, two columns of one name) is refused naming the output too, before anything is written."""
        try:
            return self._delta_arrow(frame) if io.format == "delta" else self._arrow(frame, rows=False)
        except _Unwritable as exc:
            raise EngineError(f"output {io.name!r}: cannot write {io.format} to {path}: {exc}") from exc

    def _refuse_rows_without_columns(self, frame: FrameT, io: IOConfig) -> None:
        """rows-v1 counts rows that have no columns (section 11), but no file format keeps them: parquet, csv,
        json and Delta all read back as no rows, so the record would claim rows the data lacks."""
        rows = self._arrow(frame, rows=True).num_rows
        if rows:
            msg = f"output {io.name!r}: the frame has {rows} rows and no columns; {io.format} cannot hold rows "
            msg += "without columns (they read back as none), so nothing was written"
            raise EngineError(msg)

    @abstractmethod
    def read(self, io: IOConfig, base_dir: Path) -> FrameT:
        """Read one input (the engines' own readers)."""

    def _hash_or_none(self, frame: FrameT) -> FrameHash | None:
        """The frame's hash, or None when rows-v1 refuses the frame (then the record holds no hash either)."""
        try:
            return self.hash(frame)
        except HashError:
            return None

    def _check_read_back(self, frame: FrameT, expected: FrameHash, io: IOConfig, part: Path) -> None:
        """Raise EngineError naming the output, the format and the first difference unless the part file just
        written reads back, through :meth:`read` (what ``ubunye hash`` and the next run's read use), with the
        hash of ``frame``."""
        reader = replace(io, path=str(part), options=reader_options(io), partition_by=[], allow_empty=False)
        where = f"output {io.name!r}: {io.format} does not read back as the frame written"
        if expected.row_count == 0:
            raise EngineError(f"{where}: {empty_text(io)}")
        try:
            back = self.read(reader, part.parent)
            got = self.hash(back)
        except (EngineError, HashError) as exc:
            msg = f"{where} ({exc}); nothing was committed, the previous data is as it was"
            raise EngineError(msg) from exc
        if (got.data_hash, got.schema, got.row_count) == (expected.data_hash, expected.schema, expected.row_count):
            return
        written, read = self._arrow(frame, rows=True), self._arrow(back, rows=True)
        msg = f"{where}: {first_difference(written, read, expected, got)}, so the record's hash would not be the "
        msg += "data's; nothing was committed, the previous data is as it was. Write format: parquet or delta "
        msg += f"(they keep types and nulls), or change the column so {io.format} holds it as it is"
        raise EngineError(msg)

    def _refuse_drift(self, io: IOConfig, part: Path) -> None:
        """Raise EngineError naming the output and the first difference unless the new part of an append (written,
        not yet committed) has the partition folders, columns and rows-v1 types of the data already in its folder.

        A reader takes one file's columns and types for all (inputs.check_alike refuses files with other columns):
        a part with other ones would leave the whole output unreadable, or read old rows back as another type.
        The first existing file stands for the rest (the readers refuse a folder whose files differ); a new or
        empty folder takes any part. The part lies in the folder it is appended to (or in its staging copy)."""
        folder = part.parent
        try:
            existing = [f for f in listing(io, folder) if f != part]
        except EngineError as exc:  # the folder holds what no reader takes: appending would hide that
            msg = f"output {io.name!r}: cannot append to {folder}: a reader refuses its files ({exc}); nothing was "
            msg += "committed"
            raise EngineError(msg) from exc
        if not existing:
            return
        first = existing[0]
        why = partition_difference(folder, first, part, "the new part")
        if why is None:
            # csv readers match a file's columns by position (polars refuses another order, Spark reads it
            # swapped); parquet and json by name
            columns, new = self._types(io, first), self._types(io, part)
            why = column_difference(str(first), columns, "the new part", new, ordered=io.format == "csv")
        if why is None:
            return
        msg = f"output {io.name!r}: cannot append to {folder}: {why}; a reader takes one file's columns and types "
        msg += "for all, so the output would not read back as written. Nothing was committed, the previous data is "
        msg += "as it was: make the frame's columns and types those of the output, overwrite it, or write another"
        raise EngineError(msg)

    def _types(self, io: IOConfig, file: Path) -> dict[str, str]:
        """Column name -> rows-v1 type of one data file as this engine's reader finds it."""
        return {field.name: type_text(field.type, field.name) for field in self._file_schema(io, file)}

    def check_output(self, io: IOConfig, base_dir: Path) -> None:
        """Raise EngineError if this output cannot be written, judged from its config and location alone, so the
        runner can refuse before reading anything (``write`` checks again, and checks the columns)."""
        refuse_unwritable(io, location(io, base_dir), self.name)
        refuse_options(io, "output", self.name)

    def quote(self, column: str) -> str:
        """A double-quoted SQL identifier (DuckDB and polars SQL alike)."""
        return '"' + column.replace('"', '""') + '"'

    def hash(self, frame: FrameT) -> FrameHash:
        return hash_frame(frame)

    def profile(self, frame: FrameT, *, key: list[str] | None, buckets: int) -> FrameProfile:
        return profile_frame(frame, key=key, buckets=buckets)

    def delta_version(self, io: IOConfig, base_dir: Path) -> int | None:
        return dataset_version(io, base_dir)

    def hash_delta(self, io: IOConfig, base_dir: Path, *, version: int | None, cache: SumsCache) -> DeltaHash | None:
        """The Delta input's hash (and profile, when ``io.profile``) as deltalake's ``to_pyarrow_table()`` reads it
        (the pandas engine's read)."""
        if io.format != "delta" or io.path is None:
            return None
        from ubunye.hashing.delta_hash import hash_delta

        path = self._input_path(io, base_dir)
        return hash_delta(
            path, cache=cache, version=version, storage_options=io.storage_options or None,
            profile=io.profile, key=io.key or None, buckets=io.buckets,
        )  # fmt: skip

    def hold(self, frame: FrameT) -> FrameT:
        return frame

    def release(self, frame: FrameT) -> None:
        return None


__all__ = [
    "FIXED_OPTIONS",
    "READER_OPTIONS",
    "TEXT_FORMATS",
    "FrameT",
    "LocalEngine",
    "date32_table",
    "empty_text",
    "first_difference",
    "pandas_table",
    "parquet_codec",
    "reader_options",
    "refuse_options",
    "separator",
    "unwrap",
]
