"""Inputs are not guessed: the data files of a local parquet/csv/json input, listed and checked before reading.

- A name starting with ``.`` or ``_`` (``_SUCCESS``, ``.part-0.crc``, ubunye's staging, old and lock siblings)
  is skipped, as Spark skips it; a ``_k=v`` folder is a partition, not hidden.
- Every other file must carry the format's extension (``.parquet``; ``.csv``; ``.json``, ``.jsonl``,
  ``.ndjson``; text may add ``.gz``, ``.bz2`` or ``.zst``), else an error names the file: a README or a ``.csv``
  in a parquet folder is not read as data, nor silently left out.
- A folder inside must be a partition (``name=value``) or hidden, else an error names it.
- An empty csv or json file, a csv of a header alone (Spark writes one per task without rows) or of line breaks
  alone, or a json file of whitespace alone (Spark reads no rows from blank lines) holds no rows and is left out; a
  compressed one is judged by its text (a bounded prefix of it decompressed).
- A folder with no data files is an error naming the input and the folder, unless the input says
  ``allow_empty: true`` (then the engine returns an empty table: no columns, as no schema is declared). So is a
  single file holding nothing (empty, line breaks or whitespace alone: no header either); a csv file of a header
  alone is read, as a table of its columns (text, as Spark and polars type them) without rows.
- csv and json text must be UTF-8: an error names the file, the byte offset and the line of the first bad byte.
- The files of one input must be alike (:func:`check_alike`, called by the pandas and polars readers): the same
  partition folders above each, the same column names in each (nested fields too: :func:`column_paths`).

URL inputs other than ``file://`` are listed by :func:`remote_files` (pandas and polars: the same rules, UTF-8
checked once the read shows bad text).

Example:
    >>> import tempfile
    >>> from ubunye.config import IOConfig
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "part-0.csv").write_text("a\\n1\\n"); _ = (folder / "_SUCCESS").write_text("")
    >>> [p.name for p in data_files(IOConfig("i", format="csv", path=str(folder)), str(folder))]
    ['part-0.csv']
"""

from __future__ import annotations

import codecs
import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ubunye.engines.locks import lock_timeout, output_lock
from ubunye.engines.paths import is_hidden, local_path, siblings
from ubunye.engines.swap import recover
from ubunye.exceptions import EngineError

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs

    from ubunye.config import IOConfig

EXTENSIONS = {"parquet": (".parquet",), "csv": (".csv",), "json": (".json", ".jsonl", ".ndjson")}
#: Compression a text input may add, as pyarrow and polars read it (and as Spark's codecs name it).
COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd"}
_CHUNK = 1 << 20


def data_files(io: IOConfig, path: str) -> list[Path] | None:
    """The checked data files of the input at ``path`` (sorted), or None for a URL the reader must list itself.

    Raises EngineError (naming the input and the file or folder) for each rule in the module's docstring.

    Example:
        >>> from ubunye.config import IOConfig
        >>> data_files(IOConfig("i", format="parquet"), "s3://bucket/i") is None
        True
    """
    root = local_path(path)
    if root is None:
        return None
    if not os.path.lexists(root):
        restore_cut_swap(root)
    if not root.exists():
        msg = f"input {io.name!r}: no such file or folder: {root}"
        raise EngineError(msg)
    if not root.is_file() and not root.is_dir():  # a fifo would block the reader, a device is no data file
        raise EngineError(f"input {io.name!r}: {root} is not a regular file or a folder")
    if root.is_file():
        rowless = io.format in ("csv", "json")
        if rowless and _holds_nothing(io, root.name, root.stat().st_size, root.read_bytes, str(root)):
            if not io.allow_empty:
                raise EngineError(_nothing_in_file(io, str(root)))
            return []
        files = [root]
    else:
        left_out: list[Path] = []
        files = _listing(io, root, root, left_out)
        if not files and not io.allow_empty:
            raise EngineError(_no_data_files(io, str(root), len(left_out)))
    if io.format in ("csv", "json"):
        for file in files:
            check_utf8(io, file)
    return files


def has_partitions(files: list[Path], root: Path) -> bool:
    """Whether any file sits in a ``name=value`` folder under ``root``.

    Example:
        >>> has_partitions([Path("/d/k=1/p.parquet")], Path("/d")), has_partitions([Path("/d/p.parquet")], Path("/d"))
        (True, False)
    """
    return any(len(f.relative_to(root).parts) > 1 for f in files)


#: What a reader finds in one file: its column names, or its column names -> type names (then types count too).
FileSchema = Sequence[str] | Mapping[str, str]


def check_alike(
    io: IOConfig,
    files: list[Path],
    root: Path,
    schema_of: Callable[[Path], FileSchema],
    *,
    ordered: bool = False,
    shown: Callable[[Path], str] = str,
) -> None:
    """Raise EngineError naming two files (as ``shown`` names them: a URL's) and what differs unless every file of
    the input has the same partition columns (the ``name=`` folders above it) and the same columns
    (``schema_of(file)``, the names a reader finds in it; with their types, when it gives them; in the same order
    when ``ordered``: Spark pairs a csv file's values with the first file's header by position).

    The readers take the first file's columns as the input's: a file with other columns would be read with
    them silently (its own dropped, the missing ones null), and files beside partition folders would be read
    without the partition's column.

    Example:
        >>> from ubunye.config import IOConfig
        >>> files = [Path("/d/k=1/a.csv"), Path("/d/b.csv")]
        >>> check_alike(IOConfig("i", format="csv"), files, Path("/d"), lambda f: ["x"])
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'i': /d/k=1/a.csv sits in partition folders (k) but /d/b.csv in ...
    """
    if len(files) < 2:
        return
    first = files[0]
    for file in files[1:]:
        why = partition_difference(root, first, file, shown(file), first_label=shown(first))
        if why is not None:
            msg = (
                f"input {io.name!r}: {why}; every file of an input must sit in the same partition folders "
                "(name=value, the same names in the same order)"
            )
            raise EngineError(msg)
    columns = schema_of(first)
    for file in files[1:]:
        why = column_difference(shown(first), columns, shown(file), schema_of(file), ordered=ordered)
        if why is not None:
            msg = (
                f"input {io.name!r}: its files have {why}; a reader would read every file with the "
                "first file's columns: make them alike, or read them as separate inputs"
            )
            raise EngineError(msg)


def partition_difference(
    root: Path, first: Path, file: Path, label: str | None = None, *, first_label: str | None = None
) -> str | None:
    """How the partition folders (``name=`` folders under ``root``) above ``first`` and ``file`` differ, for a
    message (``label`` names ``file`` there, ``first_label`` ``first``, else their paths), or None when they are
    the same.

    Example:
        >>> partition_difference(Path("/d"), Path("/d/k=1/a.csv"), Path("/d/b.csv"), "the new part")
        '/d/k=1/a.csv sits in partition folders (k) but the new part in no partition folder'
    """
    keys, other = _partition_keys(first, root), _partition_keys(file, root)
    if other == keys:
        return None
    return f"{first_label or first} sits in {_folders(keys)} but {label or file} in {_folders(other)}"


def column_difference(
    first: str, columns: FileSchema, file: str, other: FileSchema, *, ordered: bool = False
) -> str | None:
    """The first difference between the columns of two files (named ``first`` and ``file`` in the message), or
    None: names in any order, then (``ordered``) their order, then (when both schemas give them) each column's
    type.

    Example:
        >>> column_difference("a.csv", ["x", "y"], "b.csv", ["y", "z"])
        'different columns: a.csv has x that b.csv lacks, and b.csv has z that a.csv lacks'
        >>> column_difference("a.csv", {"x": "int64"}, "b.csv", {"x": "string"})
        "different column types: column 'x' is int64 in a.csv but string in b.csv"
    """
    if sorted(other) != sorted(columns):
        only_first = [c for c in columns if c not in other] or ["none"]
        only_other = [c for c in other if c not in columns] or ["none"]
        return (
            f"different columns: {first} has {', '.join(only_first)} that {file} lacks, and {file} has "
            f"{', '.join(only_other)} that {first} lacks"
        )
    if ordered and list(other) != list(columns):
        return f"columns in another order: {first} has {', '.join(columns)} but {file} {', '.join(other)}"
    if isinstance(columns, Mapping) and isinstance(other, Mapping):
        for name, kind in columns.items():
            if other[name] != kind:
                return f"different column types: column {name!r} is {kind} in {first} but {other[name]} in {file}"
    return None


def _partition_keys(file: Path, root: Path) -> list[str]:
    return [part.split("=", 1)[0] for part in file.relative_to(root).parts[:-1]]


def _folders(keys: list[str]) -> str:
    return f"partition folders ({', '.join(keys)})" if keys else "no partition folder"


def listing(io: IOConfig, root: Path) -> list[Path]:
    """The data files under the local folder ``root`` (sorted), checked as :func:`data_files` checks them but for
    their text (an append looks at one file's columns; it need not read every file).

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> folder = Path(tempfile.mkdtemp()); _ = (folder / ".part-0.csv.ubunye.tmp").write_text("a\\n1\\n")
        >>> listing(IOConfig("o", format="csv"), folder)
        []
    """
    return _listing(io, root, root)


def _listing(io: IOConfig, root: Path, folder: Path, left_out: list[Path] | None = None) -> list[Path]:
    """The data files under ``folder``; those holding no rows are left out (and added to ``left_out``)."""
    found: list[Path] = []
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if is_hidden(entry.name):
                continue
            here = folder / entry.name
            if entry.is_dir():
                if "=" not in entry.name:
                    msg = (
                        f"input {io.name!r}: {here} is a folder inside the {io.format} data folder {root} but not "
                        "a partition (name=value): move it out, or hide it with a leading _ or ."
                    )
                    raise EngineError(msg)
                found.extend(_listing(io, root, here, left_out))
            elif _is_data_file(io.format or "", entry.name):
                if not entry.is_file():  # a fifo hangs a reader, and its size of 0 read as an empty file
                    msg = f"input {io.name!r}: {here} is not a regular file: move it out of {root}"
                    raise EngineError(msg)
                # An empty csv or json file, or a csv of a header alone, holds no rows (Spark writes one per empty
                # task); readers fail on it, or take its columns as typeless
                size = entry.stat().st_size
                if io.format in ("csv", "json") and _holds_no_rows(io, entry.name, size, here.read_bytes, str(here)):
                    if left_out is not None:
                        left_out.append(here)
                    continue
                found.append(here)
            else:
                msg = (
                    f"input {io.name!r}: {here} is not a {io.format} file (a {io.format} input reads files ending "
                    f"in {', '.join(_suffixes(io.format or ''))}): move it out of {root}, or hide it with a "
                    "leading _ or ."
                )
                raise EngineError(msg)
    return found


#: The longest csv or json file looked at for a header or whitespace alone (its text, decompressed when compressed):
#: a longer one is read.
_HEADER_LIMIT = 65_536
#: The largest compressed file decompressed to see whether it holds rows. A text of _HEADER_LIMIT bytes compresses
#: to less on every codec (stored blocks add a few bytes a block); a larger file is read as data, as a longer text.
_COMPRESSED_LIMIT = 2 * _HEADER_LIMIT
#: What JSON takes for whitespace (RFC 8259): a file of these alone is blank lines, which Spark reads as no rows.
#: Other bytes (a form feed) are no JSON: Spark refuses them, and so do pyarrow and polars.
_JSON_BLANK = b" \t\r\n"


def _holds_no_rows(io: IOConfig, name: str, size: int, read: Callable[[], bytes], shown: str) -> bool:
    """Whether the csv or json file ``name`` of ``size`` bytes holds no rows: empty; (csv) one line alone, the
    header Spark writes for a task without rows, or line breaks alone; (json) whitespace alone, blank lines Spark
    reads as no rows (pandas read such a file as one without columns, polars failed to infer a type, naming the
    folder). ``read()``: the file's bytes, read only for a small file.

    A compressed file (:data:`COMPRESSION`) is judged by its text, as the same file uncompressed: a header alone
    in ``b.csv.gz`` was read as a file, its column typeless (polars read it as text, pyarrow took the other files'
    type), so engines hashed the folder differently. At most ``_HEADER_LIMIT + 1`` bytes of it are decompressed,
    which decide (a small file may decompress to gigabytes); one that does not decompress is refused, naming
    ``shown``.
    """
    text = _rowless_text(io, name, size, read, shown)
    return text is not None and _no_rows_in(io, text)


def _holds_nothing(io: IOConfig, name: str, size: int, read: Callable[[], bytes], shown: str) -> bool:
    """Whether the csv or json file ``name`` holds no rows and no header either: empty, line breaks or (json)
    whitespace alone. Read alone, such a file is an input without data, as a folder without data files is: Spark
    read it as a table of no columns, pandas and polars failed on it."""
    text = _rowless_text(io, name, size, read, shown)
    return text is not None and _nothing_in(io, text)


def _no_rows_in(io: IOConfig, text: bytes) -> bool:
    """Whether the whole text of a csv or json file holds no rows (:func:`_holds_no_rows`)."""
    if io.format == "json":
        return not text.strip(_JSON_BLANK)
    text = text.rstrip(b"\r\n")
    return b"\n" not in text and b"\r" not in text


def _nothing_in(io: IOConfig, text: bytes) -> bool:
    """Whether the whole text of a csv or json file holds no rows and no header (:func:`_holds_nothing`)."""
    return not text.strip(_JSON_BLANK if io.format == "json" else b"\r\n")


def _rowless_text(io: IOConfig, name: str, size: int, read: Callable[[], bytes], shown: str) -> bytes | None:
    """The whole text of the csv or json file ``name`` (decompressed when compressed) when it is short enough to
    hold no rows (at most ``_HEADER_LIMIT`` bytes), else None: a longer file is read as data."""
    if size == 0:
        return b""
    codec = COMPRESSION.get(Path(name).suffix.lower())
    if codec is not None:
        if size > _COMPRESSED_LIMIT:
            return None
        text = _decompressed(io, read(), codec, _HEADER_LIMIT + 1, shown)
    elif size <= _HEADER_LIMIT:
        text = read()
    else:
        return None
    return text if len(text) <= _HEADER_LIMIT else None


def header_alone(
    io: IOConfig, file: Path | str, *, filesystem: pafs.FileSystem | None = None, shown: str | None = None
) -> bytes | None:
    """The text (decompressed when compressed) of the csv ``file`` (on ``filesystem``, else local; named in errors
    as ``shown``) when it is a header alone, the file Spark writes for a task without rows; else None.

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> f = Path(tempfile.mkdtemp()) / "p.csv"
        >>> _ = f.write_bytes(b"a,b\\n")
        >>> header_alone(IOConfig("i", format="csv"), f)
        b'a,b\\n'
    """
    if io.format != "csv":
        return None
    if filesystem is None:
        local = Path(file)
        size, read = local.stat().st_size, local.read_bytes
    else:
        size = filesystem.get_file_info(str(file)).size or 0
        read = functools.partial(_remote_bytes, filesystem, str(file))
    text = _rowless_text(io, str(file), size, read, shown or str(file))
    if text is None or not _no_rows_in(io, text) or _nothing_in(io, text):
        return None
    return text


def _nothing_in_file(io: IOConfig, shown: str) -> str:
    what = "whitespace" if io.format == "json" else "line breaks"
    return (
        f"input {io.name!r}: the {io.format} file {shown} holds no rows and no columns (it is empty, or {what} "
        "alone); set allow_empty: true to read it as an empty table"
    )


def _no_data_files(io: IOConfig, shown: str, left_out: int) -> str:
    rowless = ""
    if left_out:
        what = "a header alone" if io.format == "csv" else "whitespace alone"
        rowless = f"; {left_out} {io.format} file{'s' if left_out > 1 else ''} holding no rows (empty, or {what}) "
        rowless += "left out"
    return (
        f"input {io.name!r}: the folder {shown} holds no {io.format} data files (hidden files such as "
        f"_SUCCESS and .crc do not count{rowless}); set allow_empty: true to read it as an empty table"
    )


def _decompressed(io: IOConfig, data: bytes, codec: str, limit: int, shown: str) -> bytes:
    """The first ``limit`` bytes (at most) of ``data`` decompressed with ``codec``, as the readers decompress it;
    EngineError naming the file ``shown`` when it does not decompress."""
    import pyarrow as pa

    try:
        with pa.CompressedInputStream(pa.BufferReader(data), codec) as stream:
            text: bytes = stream.read(limit)
    except (OSError, pa.ArrowException) as exc:
        raise EngineError(_corrupt(io, shown, codec, exc)) from exc
    return text


def _corrupt(io: IOConfig, shown: str, codec: str, exc: Exception) -> str:
    return f"input {io.name!r}: cannot decompress {shown} ({codec}, as its name says): {exc}; replace the file"


def remote_files(io: IOConfig, filesystem: pafs.FileSystem, root: str, url: str) -> list[str]:
    """The data files of the input at the URL ``url`` (``root`` on the pyarrow ``filesystem``), as paths on it,
    checked by :func:`data_files`' rules but for the text's encoding (a second read of every byte: the reader
    calls :func:`check_utf8` once what it read shows bad text) and in the order a local folder's are: so a folder
    is read alike wherever it is stored. Without this, pyarrow
    listed a URL itself: every file but hidden ones read as data, partition folders read as no column.

    Raises:
        FileNotFoundError: nothing at ``url`` (the reader says what is missing: a bucket, a key).
        EngineError: naming the input and ``url``'s file or folder, for each rule of :func:`data_files`.
    """
    from pyarrow.fs import FileSelector, FileType

    info = filesystem.get_file_info(root)
    if info.type == FileType.NotFound:
        raise FileNotFoundError(url)
    if info.type != FileType.Directory:
        read = functools.partial(_remote_bytes, filesystem, root)
        if io.format in ("csv", "json") and _holds_nothing(io, root, info.size or 0, read, url):
            if not io.allow_empty:
                raise EngineError(_nothing_in_file(io, url))
            return []
        return [root]
    base, shown = root.rstrip("/"), url.rstrip("/")
    entries = filesystem.get_file_info(FileSelector(base, recursive=True))
    found: list[str] = []
    left_out = 0
    skip = len(base) + 1 if base else 0  # a filesystem rooted at the bucket: its root folder is ""
    # sorted as _listing walks a folder: by each level's name, so the first file is the same file
    for entry in sorted(entries, key=lambda e: e.path[skip:].split("/")):
        parts = entry.path[skip:].split("/")
        if any(is_hidden(part) for part in parts):
            continue
        here = f"{shown}/{'/'.join(parts)}"
        if entry.type == FileType.Directory:
            if "=" not in parts[-1]:
                msg = (
                    f"input {io.name!r}: {here} is a folder inside the {io.format} data folder {url} but not a "
                    "partition (name=value): move it out, or hide it with a leading _ or ."
                )
                raise EngineError(msg)
        elif _is_data_file(io.format or "", parts[-1]):
            read = functools.partial(_remote_bytes, filesystem, entry.path)
            if io.format in ("csv", "json") and _holds_no_rows(io, parts[-1], entry.size or 0, read, here):
                left_out += 1
                continue
            found.append(entry.path)
        else:
            msg = (
                f"input {io.name!r}: {here} is not a {io.format} file (a {io.format} input reads files ending in "
                f"{', '.join(_suffixes(io.format or ''))}): move it out of {url}, or hide it with a leading _ or ."
            )
            raise EngineError(msg)
    if not found and not io.allow_empty:
        raise EngineError(_no_data_files(io, url, left_out))
    return found


def _remote_bytes(filesystem: pafs.FileSystem, path: str) -> bytes:
    with filesystem.open_input_stream(path, compression=None) as stream:
        data: bytes = stream.read()
    return data


def _suffixes(fmt: str) -> list[str]:
    plain = list(EXTENSIONS.get(fmt, ()))
    if fmt == "parquet":
        return plain
    return plain + [p + c for p in plain for c in COMPRESSION]


def _is_data_file(fmt: str, name: str) -> bool:
    return name.lower().endswith(tuple(_suffixes(fmt)))


def check_utf8(
    io: IOConfig, file: Path, *, filesystem: pafs.FileSystem | None = None, shown: str | None = None
) -> None:
    """Raise EngineError naming ``file`` (as ``shown``, else its path; offset and line of the first bad byte)
    unless it is UTF-8 text; ``file`` is a path on ``filesystem`` (pyarrow's: a URL's), else local.

    Example:
        >>> import tempfile
        >>> from ubunye.config import IOConfig
        >>> bad = Path(tempfile.mkdtemp()) / "x.csv"
        >>> _ = bad.write_bytes(b"a\\n\\xff\\n")
        >>> check_utf8(IOConfig("i", format="csv"), bad)
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'i': .../x.csv is not UTF-8 text (byte 0xff at offset 2, line 2); ...
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, lines = 0, 0
    # a URL's file decompressed as named (.gz, .bz2, .zst), as open_text does
    opened = open_text(file) if filesystem is None else filesystem.open_input_stream(str(file))
    codec = COMPRESSION.get(Path(str(file)).suffix.lower())
    with opened as fh:
        while True:
            try:
                chunk = fh.read(_CHUNK)
            except OSError as exc:  # pyarrow's decompression fails so, naming neither the file nor the input
                if codec is None:
                    raise
                raise EngineError(_corrupt(io, shown or str(file), codec, exc)) from exc
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                data = bytes(exc.object)
                at = offset - pending + exc.start
                line = lines + data[pending : max(exc.start, pending)].count(b"\n") + 1
                msg = (
                    f"input {io.name!r}: {shown or file} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                    f"{at}, line {line}); {io.format} inputs are read as UTF-8: re-encode the file"
                )
                raise EngineError(msg) from None
            if not chunk:
                return
            offset += len(chunk)
            lines += chunk.count(b"\n")


def column_paths(schema: pa.Schema) -> list[str]:
    """Every column of ``schema`` and every field nested in it (``s.x``; a list's items ``l[]``; a map's ``m{}``),
    in order: what :func:`check_alike` compares for files whose columns nest (json, parquet). A reader takes one
    file's nested fields for all: a struct field only another file has was read as missing.

    Example:
        >>> import pyarrow as pa
        >>> column_paths(pa.schema({"s": pa.struct({"x": pa.int64()}), "l": pa.list_(pa.struct({"y": pa.int8()}))}))
        ['s', 's.x', 'l', 'l[].y']
    """
    import pyarrow as pa

    def walk(name: str, kind: pa.DataType) -> list[str]:
        if pa.types.is_struct(kind):
            return [p for i in range(kind.num_fields) for p in _nested(name, kind.field(i), walk)]
        if pa.types.is_map(kind):
            return walk(f"{name}{{}}", kind.key_type) + walk(f"{name}{{}}", kind.item_type)
        if isinstance(kind, pa.ListType | pa.LargeListType | pa.FixedSizeListType):
            return walk(f"{name}[]", kind.value_type)
        return []

    return [p for field in schema for p in [field.name, *walk(field.name, field.type)]]


def _nested(parent: str, field: pa.Field, walk: Callable[[str, pa.DataType], list[str]]) -> list[str]:
    path = f"{parent}.{field.name}"
    return [path, *walk(path, field.type)]


#: Where Spark keeps a parquet file's schema as Spark declared it (its types beyond parquet's: variant, intervals).
SPARK_ROW_METADATA = b"org.apache.spark.sql.parquet.row.metadata"


def refuse_spark_only_types(io: IOConfig, declared: str | bytes | None, where: str) -> None:
    """Raise EngineError naming the input, ``where`` (a file, a Delta table) and the column when the Spark schema
    ``declared`` there holds a type rows-v1 refuses that pyarrow, pandas and polars read as another type (a
    variant as a struct of two binaries, an interval as an integer): Spark refuses to hash it, so hashing what
    they read would give that table a hash on one engine and none on another (docs/rows-v1.md section 11)."""
    from ubunye.hashing.types import spark_declared_refusal

    why = spark_declared_refusal(declared)
    if why is not None:
        msg = f"input {io.name!r}: {why} (so {where} says), which rows-v1 does not hash and this engine would read "
        msg += "as the type it is stored as (a variant's binary encoding, an interval's integer); read it with the "
        msg += "Spark engine, or store it as text first (to_json, CAST AS STRING)"
        raise EngineError(msg)


def refuse_compression(io: IOConfig, files: list[Path], reader: str, codecs: tuple[str, ...]) -> None:
    """Raise EngineError naming the input and file if one of ``files`` is compressed with one of ``codecs`` (the
    :data:`COMPRESSION` suffixes), which ``reader`` does not decompress: it would read the compressed bytes as
    text and fail on them as not UTF-8, naming neither the file nor the reason.

    Example:
        >>> from ubunye.config import IOConfig
        >>> refuse_compression(IOConfig("i", format="csv"), [Path("/d/a.csv.zst")], "pyarrow", (".zst",))
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: input 'i': /d/a.csv.zst is zstd-compressed, which pyarrow does not ...
    """
    for file in files:
        suffix = file.suffix.lower()
        if suffix in codecs:
            msg = f"input {io.name!r}: {file} is {COMPRESSION[suffix]}-compressed, which {reader} does not "
            msg += "decompress: decompress it (or gzip it), or read it with another engine"
            raise EngineError(msg)


def csv_header(file: Path, sep: str) -> list[str]:
    """The column names in the first record of the csv ``file`` (quotes doubled inside quotes, a byte order mark
    dropped), as the readers take them; [] for an empty file.

    Example:
        >>> import tempfile
        >>> f = Path(tempfile.mkdtemp()) / "p.csv"
        >>> _ = f.write_text('b,"a, x"\\n1,2\\n')
        >>> csv_header(f, ",")
        ['b', 'a, x']
    """
    import csv
    import io

    with open_text(file) as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
        return next(csv.reader(text, delimiter=sep, quotechar='"', doublequote=True), [])


def open_text(file: Path) -> BinaryIO:
    """``file``'s bytes, decompressed when its name ends in one of :data:`COMPRESSION`'s suffixes."""
    codec = COMPRESSION.get(file.suffix.lower())
    if codec is None:
        return file.open("rb")
    import pyarrow as pa

    stream: BinaryIO = pa.CompressedInputStream(pa.OSFile(str(file)), codec)
    return stream


def restore_cut_swap(root: Path) -> None:
    """No folder at ``root``, but an ``-old-`` sibling: a fallback swap was cut short. Restore it, under the
    output's lock (every reader of a location does this first: a run's input read, ``ubunye hash``).

    A writer mid-swap holds the lock and finishes within moments, so the folder is re-checked while waiting.

    Example:
        >>> import tempfile
        >>> restore_cut_swap(Path(tempfile.mkdtemp()) / "nothing")  # no -old- sibling: nothing to do
    """
    deadline = time.monotonic() + lock_timeout()
    while not os.path.lexists(root) and siblings(root, "old"):
        try:
            with output_lock(str(root), timeout=0):
                recover(root)
            return
        except EngineError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


__all__ = [
    "COMPRESSION",
    "EXTENSIONS",
    "FileSchema",
    "check_alike",
    "check_utf8",
    "column_difference",
    "column_paths",
    "csv_header",
    "data_files",
    "has_partitions",
    "header_alone",
    "listing",
    "open_text",
    "partition_difference",
    "refuse_compression",
    "remote_files",
    "restore_cut_swap",
]
