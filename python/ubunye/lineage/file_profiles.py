"""The document of per-file profile-v1 partials of a Delta table, kept by ``FileSumsCache`` next to the per-file
sums (``ubunye.lineage.file_sums``), in the same write-once layout, one folder per key and bucket count::

    <records root>/.cache/delta-file-profiles/<reader>/<sha256 of the table URI, 32 hex>-<tag>/<sequence>.json.gz

(``<tag>``: :func:`profile_tag` of the key and bucket count). A table whose partials take more than
:data:`PART_BYTES` keeps them in parts beside the document, each named by the SHA-256 of its bytes::

    .../<sha256 of the table URI, 32 hex>-<tag>/parts/<sha256 of the part>.json.gz

The document lists its parts; they are written before it, and those no document names are deleted after it.
A part is read only through a document that names it, and must be those very bytes, of that table, reader,
schema, key and bucket count, and the part number the document gives it.

A file's partial (``ProfileSums``: docs/rows-v1.md section 12) is written as base64 of big-endian 64-bit words:
``row_count, sum1, sum2``, then ``nulls, nans, sum1, sum2`` per column (in the document's column order), then
``index, count, sum1, sum2`` per bucket holding a row, by increasing index (a file of a few rows costs a few
buckets whatever the bucket count).

Nothing read is trusted: beside what every cache document is checked for (gzip, JSON, format, ubunye version,
table, reader, checksum: ``checked_body``), the key and bucket count must be the ones asked for, and every
partial must be consistent in itself: bucket indices in range and increasing, bucket counts adding up to the
file's rows and bucket sums to its sums (section 12.2), null and NaN counts within the rows, NaNs only in float
columns. A partial wrongly reused would be a wrong profile; one not reused only costs a read.

Example:
    >>> import pyarrow as pa
    >>> from ubunye.hashing.delta_files import FileProfiles
    >>> from ubunye.hashing.profile import profile_sums
    >>> part = profile_sums(pa.table({"x": [1.5, float("nan"), None]}), key=["x"], buckets=8)
    >>> p = FileProfiles("/data/t", "id-1", "deltalake", part.schema, 3, ("x",), 8, {"a.parquet": ((9, 2, None), part)})
    >>> back = parse_profiles(profiles_document(p), "doc", "/data/t", "deltalake", ("x",), 8)
    >>> back == p
    True
    >>> parse_profiles(profiles_document(p), "doc", "/data/t", "deltalake", None, 8)
    Traceback (most recent call last):
    ubunye.exceptions.RecordError: doc: cached profiles of key ['x'] and 8 buckets, not of key None and 8 buckets...
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import json
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

import ubunye
from ubunye.exceptions import RecordError
from ubunye.hashing.delta_files import FileProfiles
from ubunye.hashing.profile import MAX_BUCKETS, ProfileSums
from ubunye.hashing.types import FLOAT_TYPES
from ubunye.lineage.file_sums import checked_body, checksum

#: This cache's folder under the record store's ``.cache``.
PROFILES_DIR = "delta-file-profiles"
#: The folder, in a table's, of the parts of its documents (:func:`profiles_objects`).
PARTS_DIR = "parts"
#: Most bytes of packed partials a document holds itself (200 files of 256 filled buckets take 2 MB); a table with
#: more keeps them in parts of about half this each, so no table is too big to keep (one document of it would be
#: more than ``MAX_CACHE_BYTES`` from about 100,000 such files) and a new file rewrites one part, not all.
PART_BYTES = 64 * 2**20
_FORMAT = "ubunye-delta-file-profiles"
_PART_FORMAT = "ubunye-delta-file-profiles-part"
_PART_SUFFIX = ".json.gz"
_PART_NAME = re.compile(r"[0-9a-f]{64}\.json\.gz")
_FORMAT_VERSION = 1
_METHOD = "profile-v1"
_MASK = (1 << 64) - 1
Identity = tuple[int, int, str | None]


def profile_tag(key: tuple[str, ...] | None, buckets: int) -> str:
    """16 hex of the SHA-256 of a key (sorted, or None) and bucket count: the tail of their folder's name.

    Example:
        >>> profile_tag(("id",), 256) == profile_tag(("id",), 256) != profile_tag(None, 256)
        True
    """
    text = json.dumps([list(key) if key is not None else None, buckets], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def pack_partial(part: ProfileSums) -> str:
    """One file's partial as base64 of its words (see the module docstring)."""
    head = [part.row_count, part.sum1, part.sum2, *[v for quad in part.column_sums for v in quad]]
    numbers = np.frombuffer(part.buckets, dtype=">u8").reshape(part.n_buckets, 3).astype(np.uint64)
    used = np.flatnonzero(numbers[:, 0]).astype(np.uint64)
    words = np.concatenate(
        [np.array([v & _MASK for v in head], dtype=np.uint64), np.column_stack([used, numbers[used]]).ravel()]
    )
    return base64.b64encode(words.astype(">u8").tobytes()).decode("ascii")


def unpack_partial(
    text: object, schema: str, columns: tuple[tuple[str, str], ...], key: tuple[str, ...] | None, n: int
) -> ProfileSums | None:
    """The partial :func:`pack_partial` wrote, or None when ``text`` is not one consistent with itself."""
    if not isinstance(text, str):
        return None
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        return None
    k = 3 + 4 * len(columns)
    if len(raw) % 8 or len(raw) < 8 * k or (len(raw) // 8 - k) % 4:
        return None
    words = np.frombuffer(raw, dtype=">u8").astype(np.uint64)
    head = [int(v) for v in words[:k]]
    used = words[k:].reshape(-1, 4)
    rows, quads = head[0], [tuple(head[i : i + 4]) for i in range(3, k, 4)]
    for (nulls, nans, _, _), (_, type_) in zip(quads, columns, strict=True):
        if nulls > rows or nans > rows - nulls or (nans and type_ not in FLOAT_TYPES):
            return None
    numbers = np.zeros((n, 3), dtype=np.uint64)
    if n == 0:
        if len(used):
            return None
    else:
        index = used[:, 0]
        if len(index) and (int(index[-1]) >= n or (len(index) > 1 and not (np.diff(index.astype(np.int64)) > 0).all())):
            return None
        if len(index) and not (used[:, 1] > 0).all():
            return None
        with np.errstate(over="ignore"):
            totals = [int(used[:, j].sum(dtype=np.uint64)) for j in (1, 2, 3)]
        # section 12.2: the bucket counts add up to the rows and the bucket sums to the rows' sums
        if totals != [rows & _MASK, head[1], head[2]] or sum(used[:, 1].tolist()) != rows:
            return None
        numbers[index.astype(np.intp)] = used[:, 1:]
    typed = tuple((int(a), int(b), int(c), int(d)) for a, b, c, d in quads)
    packed = numbers.astype(">u8").tobytes()
    return ProfileSums(schema, columns, key, n, rows, head[1], head[2], typed, packed)


def _packed(profiles: FileProfiles) -> tuple[tuple[tuple[str, str], ...] | None, list[list[Any]]]:
    """The columns of the partials and one ``[path, size, modified, dv, packed]`` entry per file, in path order."""
    columns: tuple[tuple[str, str], ...] | None = None
    files = []
    for path, ((size, modified, dv), part) in sorted(profiles.files.items()):
        shape = (part.schema, part.key, part.n_buckets)
        if shape != (profiles.schema, profiles.key, profiles.buckets) or (columns or part.columns) != part.columns:
            msg = f"the profile partial of {path} is of {shape}, not of the table's ({profiles.schema}, key "
            raise ValueError(msg + f"{profiles.key}, {profiles.buckets} buckets)")
        columns = part.columns
        files.append([path, size, modified, dv, pack_partial(part)])
    return columns, files


def _gzipped(
    profiles: FileProfiles, fmt: str, columns: tuple[tuple[str, str], ...] | None, rest: dict[str, Any]
) -> bytes:
    body: dict[str, Any] = {
        "format": fmt,
        "format_version": _FORMAT_VERSION,
        "method": _METHOD,
        # Partials from another ubunye are not trusted: a fix to an encoder would otherwise live on in the cache.
        "ubunye_version": ubunye.__version__,
        "table": profiles.table,
        "table_id": profiles.table_id,
        "reader": profiles.reader,
        "schema": profiles.schema,
        "columns": [list(c) for c in columns or ()],
        "key": None if profiles.key is None else list(profiles.key),
        "buckets": profiles.buckets,
        **rest,
    }
    if profiles.read:  # as in the sums' document: only when something beside the schema decides the values
        body["read"] = profiles.read
    body["checksum"] = checksum(body)
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    # Sums are random bits: harder compression gains nothing on them and costs a second per few MB.
    return gzip.compress(text, compresslevel=1, mtime=0)


def profiles_document(profiles: FileProfiles) -> bytes:
    """The gzip-compressed JSON document of ``profiles``, every partial in it (what ``FileSumsCache.save_profiles``
    writes for a table whose partials take at most :data:`PART_BYTES`)."""
    columns, files = _packed(profiles)
    return _gzipped(profiles, _FORMAT, columns, {"version": profiles.version, "files": files})


def profiles_objects(profiles: FileProfiles) -> tuple[bytes, dict[str, bytes]]:
    """What ``FileSumsCache.save_profiles`` writes: the document, and the parts it names (name -> bytes).

    Up to :data:`PART_BYTES` of packed partials the document holds them all and there are no parts. Beyond, the
    files are spread over a power of two of parts by a hash of their paths (so one new file changes one part, and
    a part's name, the SHA-256 of its bytes, stays the same while its files do: an unchanged part is not written
    again), and the document lists the parts with their digests and file counts.
    """
    columns, files = _packed(profiles)
    size = sum(len(e[0]) + len(e[4]) + 64 for e in files)
    if size <= PART_BYTES:
        return _gzipped(profiles, _FORMAT, columns, {"version": profiles.version, "files": files}), {}
    count = 1 << math.ceil(math.log2(2 * size / PART_BYTES))  # half full: room to grow before the count doubles
    shards: list[list[list[Any]]] = [[] for _ in range(count)]
    for entry in files:
        shards[_shard(entry[0], count)].append(entry)
    parts: dict[str, bytes] = {}
    refs = []
    for i, shard in enumerate(shards):
        data = _gzipped(profiles, _PART_FORMAT, columns, {"part": i, "parts": count, "files": shard})
        digest = hashlib.sha256(data).hexdigest()
        parts[digest + _PART_SUFFIX] = data
        refs.append({"name": digest + _PART_SUFFIX, "files": len(shard)})
    return _gzipped(profiles, _FORMAT, columns, {"version": profiles.version, "files": [], "parts": refs}), parts


def _shard(path: str, count: int) -> int:
    return int.from_bytes(hashlib.sha256(path.encode("utf-8")).digest()[:8], "big") % count


def _shown_key(key: object) -> str:
    return str(list(key)) if isinstance(key, list | tuple) else str(key)


def parse_profiles(
    data: bytes,
    shown: str,
    table: str,
    reader: str,
    key: tuple[str, ...] | None,
    buckets: int,
    read_part: Callable[[str], tuple[bytes, str]] | None = None,
) -> FileProfiles:
    """The per-file profiles a document holds, checked field by field (see the module docstring), with those of
    the parts it names (``read_part(name)`` gives a part's bytes and its name as shown); a RecordError naming
    ``shown`` (or the part) and the fault."""
    body = _checked(data, shown, _FORMAT, table, reader, key, buckets)
    version, files = body.get("version"), body.get("files")
    if not isinstance(version, int) or isinstance(version, bool) or not isinstance(files, list):
        raise RecordError(f"{shown}: corrupt cached profiles (columns: name and type pairs, version, files)")
    entries: dict[str, tuple[Identity, ProfileSums]] = {}
    _add_entries(entries, files, shown, body, key, buckets)
    refs = body.get("parts")
    if refs is not None:
        if not isinstance(refs, list) or files or read_part is None:
            raise RecordError(f"{shown}: corrupt cached profiles (parts: a list, with no files beside)")
        for i, ref in enumerate(refs):
            name, count = (ref.get("name"), ref.get("files")) if isinstance(ref, dict) else (None, None)
            if not (isinstance(name, str) and _PART_NAME.fullmatch(name) and isinstance(count, int)):
                raise RecordError(f"{shown}: corrupt cached profiles (parts[{i}] is malformed)")
            part, part_shown = read_part(name)
            if hashlib.sha256(part).hexdigest() + _PART_SUFFIX != name:  # named by its digest: any change shows
                raise RecordError(f"{part_shown}: corrupt cached profiles (its bytes are not the ones named)")
            inner = _checked(part, part_shown, _PART_FORMAT, table, reader, key, buckets)
            same = all(inner.get(f) == body.get(f) for f in ("table_id", "schema", "columns", "read"))
            held = inner.get("files")
            if not same or inner.get("part") != i or inner.get("parts") != len(refs) or not isinstance(held, list):
                raise RecordError(f"{part_shown}: corrupt cached profiles (not part {i} of {len(refs)} of {shown})")
            if len(held) != count:
                raise RecordError(f"{part_shown}: corrupt cached profiles ({len(held)} files, {count} listed)")
            _add_entries(entries, held, part_shown, body, key, buckets)
    return FileProfiles(
        table, body["table_id"], reader, body["schema"], version, key, buckets, entries, body.get("read", "")
    )


def _checked(
    data: bytes, shown: str, fmt: str, table: str, reader: str, key: tuple[str, ...] | None, buckets: int
) -> dict[str, Any]:
    """The body of a document or part of ``fmt``, its key, bucket count, table id, schema and columns checked."""
    body = checked_body(data, shown, (fmt, _FORMAT_VERSION, _METHOD), table, reader, "profiles")
    kept_key, kept_n = body.get("key"), body.get("buckets")
    if kept_key != (None if key is None else list(key)) or kept_n != buckets:
        msg = (
            f"{shown}: cached profiles of key {_shown_key(kept_key)} and {kept_n} buckets, not of key "
            f"{_shown_key(key)} and {buckets} buckets: made for another profile"
        )
        raise RecordError(msg)
    if not (buckets == 0 or (1 <= buckets <= MAX_BUCKETS and buckets & (buckets - 1) == 0)):
        raise RecordError(f"{shown}: corrupt cached profiles (buckets: {buckets!r})")
    for name in ("table_id", "schema"):
        if not isinstance(body.get(name), str):
            raise RecordError(f"{shown}: corrupt cached profiles ({name}: expected a string)")
    if not isinstance(body.get("read", ""), str):
        raise RecordError(f"{shown}: corrupt cached profiles (read: expected a string)")
    if _columns(body.get("columns")) is None:
        raise RecordError(f"{shown}: corrupt cached profiles (columns: name and type pairs, version, files)")
    return body


def _add_entries(
    entries: dict[str, tuple[Identity, ProfileSums]],
    files: list[Any],
    shown: str,
    body: dict[str, Any],
    key: tuple[str, ...] | None,
    buckets: int,
) -> None:
    columns = _columns(body.get("columns"))
    assert columns is not None  # _checked refused the body otherwise
    for i, entry in enumerate(files):
        parsed = _entry(entry, body["schema"], columns, key, buckets)
        if parsed is None or parsed[0] in entries:
            raise RecordError(f"{shown}: corrupt cached profiles (files[{i}] is malformed or repeated)")
        entries[parsed[0]] = parsed[1]


def _columns(raw: object) -> tuple[tuple[str, str], ...] | None:
    if not isinstance(raw, list):
        return None
    pairs = []
    for c in raw:
        if not (isinstance(c, list) and len(c) == 2 and all(isinstance(v, str) for v in c)):
            return None
        pairs.append((c[0], c[1]))
    names = [n for n, _ in pairs]
    return tuple(pairs) if names == sorted(set(names)) else None


def _entry(
    entry: object, schema: str, columns: tuple[tuple[str, str], ...], key: tuple[str, ...] | None, n: int
) -> tuple[str, tuple[Identity, ProfileSums]] | None:
    if not isinstance(entry, list) or len(entry) != 5:
        return None
    path, size, modified, dv, text = entry
    counts = (size, modified)
    if not isinstance(path, str) or not path or not all(isinstance(c, int) and not isinstance(c, bool) for c in counts):
        return None
    if min(counts) < 0 or not (dv is None or isinstance(dv, str)):
        return None
    part = unpack_partial(text, schema, columns, key, n)
    return None if part is None else (path, ((size, modified, dv), part))


__all__ = [
    "PARTS_DIR",
    "PROFILES_DIR",
    "pack_partial",
    "parse_profiles",
    "profile_tag",
    "profiles_document",
    "profiles_objects",
    "unpack_partial",
]
