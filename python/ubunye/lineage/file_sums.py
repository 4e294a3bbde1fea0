"""Per-file rows-v1 sums (and profile-v1 partials) of Delta tables, kept next to the run records (the same store: a
local folder or any URL fsspec opens), so that the next hash of a table reads only the files added since
(``ubunye.hashing.delta_hash``).

One table, read by one reader (``deltalake`` or ``spark``), has one small gzip-compressed JSON document::

    <records root>/.cache/delta-file-sums/<reader>/<sha256 of the table URI, 32 hex>/<sequence>.json.gz

and, when it is profiled, one per key and bucket count of its per-file profile partials, in the same way
(:meth:`FileSumsCache.load_profiles`; the document is ``ubunye.lineage.file_profiles``')::

    <records root>/.cache/delta-file-profiles/<reader>/<sha256 of the table URI, 32 hex>-<tag>/<sequence>.json.gz

Every save is a new object, written whole and never replaced (create-only on an object store; in a local folder a
temporary file renamed into place), and the older ones of that table are then deleted: a reader takes the newest
that it can trust. The record store's readers never see these files (its layout is ``usecase/package/task/*.json``
and names starting with ``.`` are never run records). A local save killed before its rename (SIGKILL, out of
memory) leaves its hidden temporary file ``.<32 hex digits>.tmp``, never read; a later save into that folder
removes those a day old or more (``ubunye.lineage.store.remove_stale_temps``), as a record's final write does those
of killed record writes.

Nothing read is trusted: a document that is not gzip, not JSON, of another format version, of another table or
reader, whose checksum does not match its content, or with one malformed entry is not used (:meth:`load` raises,
naming the object and why, when no document of the table can be used). Sums wrongly reused would be a wrong hash;
sums not reused only cost a full read.

Example:
    >>> import tempfile
    >>> from ubunye.hashing.delta_files import FileSums
    >>> cache = FileSumsCache(tempfile.mkdtemp())
    >>> files = {"p.parquet": ((10, 5, None), (2, 7, 9))}
    >>> sums = FileSums("/data/t", "id-1", "deltalake", 'struct<"a":int64>', 3, files)
    >>> cache.save(sums)
    >>> cache.load("/data/t", "deltalake") == sums, cache.load("/data/other", "deltalake")
    (True, None)

The same on an object store (fsspec's in-memory filesystem here; ``s3://bucket/records`` alike):

    >>> remote = FileSumsCache("memory://doc-file-sums/records")
    >>> remote.save(sums)
    >>> remote.load("/data/t", "deltalake").files["p.parquet"]
    ((10, 5, None), (2, 7, 9))
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import re
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlsplit

import ubunye
from ubunye.exceptions import RecordError
from ubunye.hashing.delta_files import FileProfiles, FileSums
from ubunye.lineage.store import create_temp, remove_stale_temps

if TYPE_CHECKING:
    from ubunye.lineage.remote import RemoteFiles

log = logging.getLogger("ubunye")
T = TypeVar("T")

#: The folder, under a record store's root, of every cache ubunye keeps there.
CACHE_DIR = ".cache"
#: This cache's folder in it.
SUMS_DIR = "delta-file-sums"
_FORMAT = "ubunye-delta-file-sums"
_FORMAT_VERSION = 1
_METHOD = "rows-v1"
_SUFFIX = ".json.gz"
#: The largest document read, compressed or not (100,000 files take about 15 MB of JSON).
MAX_CACHE_BYTES = 512 * 1024 * 1024
#: Seconds a profile part no document names is kept after it was last written or reused (_idle).
_PART_GRACE = 600.0
_MASK = (1 << 64) - 1
_SEQUENCE_LOCK = threading.Lock()
_last_sequence = 0
#: The name ``create_temp(folder, ".")`` gives the temporary file of a document or part being written.
_CACHE_TEMP = re.compile(r"^\.[0-9a-f]{32}\.tmp$")


class FileSumsCache:
    """Per-file sums of Delta tables in a record store's root (``ubunye.hashing.delta_files.SumsCache``).

    Args:
        root: the record store's root: the folder records go to (``<usecase_dir>/.ubunye/lineage``, or the
            ``records=`` / ``--records`` / ``UBUNYE_RECORDS`` location), a ``file://`` URL, or any URL fsspec
            opens (``s3://bucket/records``).
        storage_options: for an fsspec URL, passed to its filesystem (as for ``RecordStore``).

    Raises:
        RecordError: the URL's scheme is unknown or its filesystem is not installed.
    """

    def __init__(self, root: str | Path, storage_options: dict[str, Any] | None = None) -> None:
        from ubunye.lineage.remote import scheme_of

        text = str(root)
        scheme = scheme_of(text)
        self._remote: RemoteFiles | None = None
        self._local: Path | None = None
        if scheme is None:
            from ubunye.engines.paths import home_expanded

            try:
                self._local = home_expanded(text).resolve()
            except ValueError as exc:
                raise RecordError(f"cached sums location: {exc}") from None
        elif scheme == "file":
            self._local = Path(unquote(urlsplit(text).path)).resolve()
        else:
            from ubunye.lineage.remote import RemoteFiles

            self._remote = RemoteFiles(text, storage_options)

    def _folder(self, table: str, reader: str, kind: str = SUMS_DIR, tail: str = "") -> str:
        key = hashlib.sha256(table.encode("utf-8")).hexdigest()[:32]
        if not reader.isidentifier():  # a reader name becomes a folder name
            raise ValueError(f"reader {reader!r} is not a plain name")
        return f"{CACHE_DIR}/{kind}/{reader}/{key}{tail}"

    def _profiles_folder(self, table: str, reader: str, key: tuple[str, ...] | None, buckets: int) -> str:
        from ubunye.lineage.file_profiles import PROFILES_DIR, profile_tag

        # One folder per key and bucket count: datasets profiling one table differently each keep their own.
        return self._folder(table, reader, PROFILES_DIR, "-" + profile_tag(key, buckets))

    def _shown(self, folder: str) -> str:
        if self._remote is not None:
            return self._remote.url_of(folder)
        assert self._local is not None
        return str(self._local / folder)

    def where(self, table: str, reader: str) -> str:
        """The folder (or URL prefix) holding the documents of one table and reader, as printed."""
        return self._shown(self._folder(table, reader))

    def where_profiles(self, table: str, reader: str, key: tuple[str, ...] | None, buckets: int) -> str:
        """The folder (or URL prefix) holding the per-file profiles of one table and reader for one key (sorted,
        or None) and bucket count, as printed."""
        return self._shown(self._profiles_folder(table, reader, key, buckets))

    # --- reading --------------------------------------------------------------------------------------------

    def load(self, table: str, reader: str) -> FileSums | None:
        """The newest trustworthy sums kept for ``table`` (its URI, as ``hash_delta`` normalizes it) and reader.

        Returns None when none are kept. A document that cannot be trusted is skipped with a logged warning when an
        older one can be used.

        Raises:
            RecordError: documents are kept but none can be used; the message names the newest and why.
        """
        return self._newest(self._folder(table, reader), lambda data, shown: _parse(data, shown, table, reader))

    def load_profiles(self, table: str, reader: str, key: tuple[str, ...] | None, buckets: int) -> FileProfiles | None:
        """The newest trustworthy per-file profiles kept for ``table`` and reader, made for ``key`` (sorted, or
        None) and ``buckets`` (0: none); as :meth:`load`.

        Raises:
            RecordError: documents are kept but none can be used; the message names the newest and why.
        """
        from ubunye.lineage.file_profiles import PARTS_DIR, parse_profiles

        folder = self._profiles_folder(table, reader, key, buckets)
        parts = f"{folder}/{PARTS_DIR}"

        def read_part(name: str) -> tuple[bytes, str]:
            return self._read(parts, name), f"{self._shown(parts)}/{name}"

        return self._newest(
            folder, lambda data, shown: parse_profiles(data, shown, table, reader, key, buckets, read_part)
        )

    def _newest(self, folder: str, parse: Callable[[bytes, str], T]) -> T | None:
        problems: list[str] = []
        for name in self._names(folder):
            shown = f"{self._shown(folder)}/{name}"
            try:
                found = parse(self._read(folder, name), shown)
            except RecordError as exc:
                problems.append(str(exc))
                continue
            for problem in problems:
                log.warning("ignored (an older one is used): %s", problem)
            return found
        if problems:
            more = f" (and {len(problems) - 1} older)" if len(problems) > 1 else ""
            raise RecordError(problems[0] + more)
        return None

    def _names(self, folder: str) -> list[str]:
        """The documents in one folder, newest first (their names sort by the time they were written)."""
        if self._remote is not None:
            keys = self._remote.find(folder)
            names = [k[len(folder) + 1 :] for k in keys if k.startswith(folder + "/")]
        else:
            assert self._local is not None
            try:
                names = [p.name for p in (self._local / folder).iterdir()]
            except FileNotFoundError:
                return []
            except OSError as exc:
                raise RecordError(f"{self._shown(folder)}: cannot list cached sums: {exc}") from None
        return sorted(
            (n for n in names if n.endswith(_SUFFIX) and not n.startswith(".") and "/" not in n), reverse=True
        )

    def _read(self, folder: str, name: str) -> bytes:
        rel = f"{folder}/{name}"
        if self._remote is not None:
            data = self._remote.read(rel, MAX_CACHE_BYTES)
        else:
            assert self._local is not None
            try:
                with open(self._local / rel, "rb") as fh:
                    data = fh.read(MAX_CACHE_BYTES + 1)
            except OSError as exc:
                raise RecordError(f"{self._local / rel}: cannot read cached sums: {exc}") from None
        if len(data) > MAX_CACHE_BYTES:
            raise RecordError(f"{self._shown(folder)}/{name}: more than {MAX_CACHE_BYTES // 2**20} MiB")
        return data

    # --- writing --------------------------------------------------------------------------------------------

    def save(self, sums: FileSums) -> None:
        """Keep ``sums`` as the newest document of its table and reader, then delete the older ones.

        Raises:
            RecordError: the store refused the write (the previous documents are left as they were).
        """
        self._write(self._folder(sums.table, sums.reader), _document(sums))

    def save_profiles(self, profiles: FileProfiles) -> None:
        """Keep ``profiles`` as the newest document of its table, reader, key and bucket count, then delete the
        older ones of those.

        Raises:
            RecordError: the store refused the write (the previous documents are left as they were).
        """
        from ubunye.lineage.file_profiles import PARTS_DIR, profiles_objects

        folder = self._profiles_folder(profiles.table, profiles.reader, profiles.key, profiles.buckets)
        document, parts = profiles_objects(profiles)
        parts_folder = f"{folder}/{PARTS_DIR}"
        kept = set(self._names(parts_folder))
        for name, data in parts.items():  # the parts first: the document that names them is the last written
            if name not in kept:  # named by their digest: one already there holds these very bytes
                self._check_size(parts_folder, data)
                self._put(parts_folder, name, data)
            else:  # reused: marked as in use, so a save running now does not take it for unused (_idle)
                self._touch(parts_folder, name)
        self._write(folder, document)
        # Another run may have saved meanwhile, naming parts that were there before (so not written again by it):
        # its own are put back if this run's listing made them look unused, and no part a document still in the
        # folder names is deleted (only older documents named the others, and they are gone).
        there = set(self._names(parts_folder))
        for name, data in parts.items():
            if name not in there:
                self._put(parts_folder, name, data)
        self._remove_stale_temps(parts_folder)
        named = self._named_parts(folder)
        if named is None:  # a document that could not be read may name any part: none is deleted this time
            return
        for name in kept - set(parts) - named:
            if self._idle(parts_folder, name):
                self._delete(parts_folder, name)

    def _touch(self, folder: str, name: str) -> None:
        if self._local is not None:
            try:
                os.utime(self._local / folder / name)
            except OSError:  # deleted meanwhile: the check after the document is written puts it back
                pass

    def _idle(self, folder: str, name: str) -> bool:
        """Whether a part no document names may be deleted. Another save may have found it a moment ago, reused it
        and not yet written the document naming it (which this save's listing then missed): a part used or written
        within :data:`_PART_GRACE` is left for a later save. An object store's parts are not dated here: deleted
        as before (a reader that then misses one hashes the table in full, and says why)."""
        if self._local is None:
            return True
        try:
            return time.time() - (self._local / folder / name).stat().st_mtime > _PART_GRACE
        except OSError:
            return False

    def _named_parts(self, folder: str) -> set[str] | None:
        """The parts the documents now in ``folder`` name; None when one of them could not be read."""
        named: set[str] = set()
        for doc in self._names(folder):
            try:
                body = json.loads(gunzip(self._read(folder, doc), doc, "profiles").decode("utf-8"))
            except RecordError:  # deleted meanwhile by a newer save, or unreadable
                if doc in self._names(folder):
                    return None
                continue
            except (ValueError, RecursionError):  # not JSON: names no part a reader would take
                continue
            refs = body.get("parts") if isinstance(body, dict) else None
            for ref in refs if isinstance(refs, list) else ():
                if isinstance(ref, dict) and isinstance(ref.get("name"), str):
                    named.add(ref["name"])
        return named

    def _check_size(self, folder: str, data: bytes) -> None:
        # A document no reader would take is not worth writing every run. The reader bounds the unzipped
        # document (gunzip), which compresses about 2:1, so the same bound is checked here on the same bytes.
        if len(data) > MAX_CACHE_BYTES:
            msg = f"{self._shown(folder)}: {len(data)} bytes, more than the {MAX_CACHE_BYTES // 2**20} MiB read back"
            raise RecordError(msg + ": not kept")
        try:
            gunzip(data, self._shown(folder))
        except RecordError as exc:
            raise RecordError(f"{exc}: not kept") from None

    def _write(self, folder: str, data: bytes) -> None:
        self._check_size(folder, data)
        older = self._names(folder)
        self._put(folder, _next_name(), data)
        for old in older:  # only once the new one is there: a reader takes the newest it can trust
            self._delete(folder, old)
        self._remove_stale_temps(folder)

    def _remove_stale_temps(self, folder: str) -> None:
        """Remove from ``folder`` the temporary files of saves killed before their rename, a day old or more (only
        regular files of our temporary names; what cannot be removed stays: see ``remove_stale_temps``). A save in
        progress has just written its own. An object store has none: a PUT creates its object whole."""
        if self._local is not None:
            remove_stale_temps(self._local / folder, named=_is_cache_temp)

    def _put(self, folder: str, name: str, data: bytes) -> None:
        """Write one object whole: create-only on an object store, a temporary file renamed into place here."""
        if self._remote is not None:
            self._remote.put(f"{folder}/{name}", data)
            return
        assert self._local is not None
        target = self._local / folder
        try:
            target.mkdir(parents=True, exist_ok=True)
            fd, tmp = create_temp(target, ".")  # the umask's mode, as a record's: readable by the team sharing it
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, target / name)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise RecordError(f"{target}: cannot write cached sums: {exc}") from None

    def _delete(self, folder: str, name: str) -> None:
        if self._remote is not None:
            self._remote.remove(f"{folder}/{name}")
            return
        assert self._local is not None
        try:
            (self._local / folder / name).unlink(missing_ok=True)
        except OSError as exc:  # an old document left behind costs space only: the newest is read first
            log.warning("%s: could not delete old cached sums: %s", self._local / folder / name, exc)


def _is_cache_temp(name: str) -> bool:
    """Whether ``name`` is one ``create_temp`` gives a document's or part's temporary file (``.<32 hex>.tmp``)."""
    return _CACHE_TEMP.match(name) is not None


def _next_name() -> str:
    """A name sorting after every earlier one of this process (nanoseconds, never repeated), and unique across
    processes (a random tail), so two runs saving at once both keep their document."""
    global _last_sequence
    with _SEQUENCE_LOCK:
        _last_sequence = max(time.time_ns(), _last_sequence + 1)
        return f"{_last_sequence:020d}-{uuid.uuid4().hex[:12]}{_SUFFIX}"


def checksum(body: dict[str, Any]) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def _document(sums: FileSums) -> bytes:
    files = [
        [path, size, modified, dv, n, f"{s1 & _MASK:016x}", f"{s2 & _MASK:016x}"]
        for path, ((size, modified, dv), (n, s1, s2)) in sorted(sums.files.items())
    ]
    body: dict[str, Any] = {
        "format": _FORMAT,
        "format_version": _FORMAT_VERSION,
        "method": _METHOD,
        # Sums from another ubunye are not trusted: a fix to an encoder would otherwise live on in the cache.
        "ubunye_version": ubunye.__version__,
        "table": sums.table,
        "table_id": sums.table_id,
        "reader": sums.reader,
        "schema": sums.schema,
        "version": sums.version,
        "files": files,
    }
    if sums.read:  # kept only when something beside the schema decides the reader's values (older documents: "")
        body["read"] = sums.read
    body["checksum"] = checksum(body)
    return gzip.compress(json.dumps(body, separators=(",", ":"), ensure_ascii=True).encode("ascii"), mtime=0)


def gunzip(data: bytes, shown: str, noun: str = "sums") -> bytes:
    try:
        inflate = zlib.decompressobj(wbits=31)  # gzip framing, its CRC checked at the end
        out = inflate.decompress(data, MAX_CACHE_BYTES + 1)
        if len(out) > MAX_CACHE_BYTES or inflate.unconsumed_tail:
            raise RecordError(f"{shown}: more than {MAX_CACHE_BYTES // 2**20} MiB of cached {noun}")
        if not inflate.eof:
            raise RecordError(f"{shown}: corrupt cached {noun} (the gzip stream is cut short)")
        return out
    except zlib.error as exc:
        raise RecordError(f"{shown}: corrupt cached {noun} (not gzip: {exc})") from None


def checked_body(
    data: bytes, shown: str, kind: tuple[str, int, str], table: str, reader: str, noun: str = "sums"
) -> dict[str, Any]:
    """The JSON body of a cache document whose ``kind`` (format, format version, method), ubunye version, table,
    reader and checksum are the expected ones (the checksum removed), else a RecordError naming ``shown``."""
    try:
        body = json.loads(gunzip(data, shown, noun).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # RecursionError: arrays nested too deep
        raise RecordError(f"{shown}: corrupt cached {noun} (not JSON: {type(exc).__name__}: {exc})") from None
    fmt, fmt_version, method = kind
    if not isinstance(body, dict) or body.get("format") != fmt:
        raise RecordError(f"{shown}: not a document of cached Delta file {noun} (format {fmt!r})")
    for name, expected in (
        ("format_version", fmt_version),
        ("method", method),
        ("ubunye_version", ubunye.__version__),
    ):
        if body.get(name) != expected:
            msg = f"{shown}: cached {noun} of {name} {body.get(name)!r}, not {expected!r} (another ubunye version's)"
            raise RecordError(msg)
    for name, expected in (("table", table), ("reader", reader)):
        if body.get(name) != expected:
            msg = f"{shown}: cached {noun} of {name} {body.get(name)!r}, not {expected!r}: not this table's"
            raise RecordError(msg)
    stored = body.pop("checksum", None)
    if stored != checksum(body):
        raise RecordError(f"{shown}: corrupt cached {noun} (the checksum does not match the content)")
    return body


def _parse(data: bytes, shown: str, table: str, reader: str) -> FileSums:
    """The sums a document holds, checked field by field; RecordError naming ``shown`` and the fault."""
    body = checked_body(data, shown, (_FORMAT, _FORMAT_VERSION, _METHOD), table, reader)
    for name in ("table_id", "schema"):
        if not isinstance(body.get(name), str):
            raise RecordError(f"{shown}: corrupt cached sums ({name}: expected a string)")
    read = body.get("read", "")
    if not isinstance(read, str):
        raise RecordError(f"{shown}: corrupt cached sums (read: expected a string)")
    version = body.get("version")
    files = body.get("files")
    if not isinstance(version, int) or isinstance(version, bool) or not isinstance(files, list):
        raise RecordError(f"{shown}: corrupt cached sums (version: an integer, files: a list)")
    entries: dict[str, tuple[tuple[int, int, str | None], tuple[int, int, int]]] = {}
    for i, entry in enumerate(files):
        parsed = _entry(entry)
        if parsed is None or parsed[0] in entries:
            raise RecordError(f"{shown}: corrupt cached sums (files[{i}] is malformed or repeated)")
        entries[parsed[0]] = parsed[1]
    return FileSums(table, body["table_id"], reader, body["schema"], version, entries, read)


def _entry(entry: object) -> tuple[str, tuple[tuple[int, int, str | None], tuple[int, int, int]]] | None:
    if not isinstance(entry, list) or len(entry) != 7:
        return None
    path, size, modified, dv, n, s1, s2 = entry
    counts = (size, modified, n)
    if not isinstance(path, str) or not path or not all(isinstance(c, int) and not isinstance(c, bool) for c in counts):
        return None
    if min(counts) < 0 or not (dv is None or isinstance(dv, str)):
        return None
    if not all(isinstance(s, str) and len(s) == 16 and all(c in "0123456789abcdef" for c in s) for s in (s1, s2)):
        return None
    return path, ((size, modified, dv), (n, int(s1, 16), int(s2, 16)))


__all__ = ["FileSumsCache"]
