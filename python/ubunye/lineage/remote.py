"""The filesystem under a record store that is not a local folder: anything fsspec opens (``s3://``, ``gs://``,
``abfs://``, ``memory://``...). Bytes in and out, whole objects only; the layout is :mod:`ubunye.lineage.store`'s.

Every error is one :class:`~ubunye.exceptions.RecordError` line naming the store's URL (credentials masked), and
for a filesystem that is not installed, the extra that brings it.

Example:
    >>> files = RemoteFiles("memory://doc-remote/records")
    >>> files.put("u/p/t/r1.json", b"{}")
    >>> files.find("u"), files.read("u/p/t/r1.json", 100), files.url_of("u/p/t/r1.json")
    (['u/p/t/r1.json'], b'{}', 'memory://doc-remote/records/u/p/t/r1.json')
    >>> RemoteFiles("nosuchscheme://b/records")
    Traceback (most recent call last):
    ubunye.exceptions.RecordError: records nosuchscheme://b/records: unknown scheme 'nosuchscheme://' (no fsspec ...
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from ubunye.exceptions import RecordError
from ubunye.lineage.redact import mask_text, remember_secrets
from ubunye.lineage.secrets import is_secret_name, secret_values

log = logging.getLogger("ubunye")

#: The ubunye extra that installs the fsspec implementation of a scheme.
EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "abfs": "azure", "abfss": "azure", "az": "azure"}
#: Environment variables holding credentials the fsspec implementations read: their values are masked everywhere.
CREDENTIAL_ENV = (
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_STORAGE_KEY",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_CLIENT_SECRET",
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
#: Schemes whose ``name@account`` names a container, not a user.
_CONTAINER_SCHEMES = frozenset({"abfs", "abfss", "wasb", "wasbs"})
#: Storage option names that hold a credential although their name alone does not say so (s3fs's ``key`` is the
#: access key id, a name rather than a secret, like a user name).
_CREDENTIAL_OPTIONS = {"secret", "token", "account_key", "sas_token", "connection_string", "client_secret"}


def scheme_of(url: str) -> str | None:
    """The scheme of a URL (lower case), None for a plain path.

    Example:
        >>> scheme_of("S3://bucket/x"), scheme_of("/Volumes/main/records")
        ('s3', None)
    """
    m = _SCHEME.match(url)
    return m.group(1).lower() if m else None


def shown_url(url: str) -> str:
    """The URL as printed: a user or password in it (``sftp://u:pw@host/x``) never shown. The container of an
    Azure URL (``abfss://container@account...``) is no user: it is kept, so the URL shown is still the address.

    Example:
        >>> shown_url("sftp://ops:hunter22@host/records"), shown_url("s3://bucket/records")
        ('sftp://***@host/records', 's3://bucket/records')
        >>> shown_url("abfss://raw@acct.dfs.core.windows.net/records")
        'abfss://raw@acct.dfs.core.windows.net/records'
    """
    parts = urlsplit(url)
    if parts.scheme and "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        if parts.scheme.lower() in _CONTAINER_SCHEMES and ":" not in userinfo:
            return mask_text(url)  # which keeps the container too (docs/tasks-and-records.md, "Secrets")
        return mask_text(url.replace(parts.netloc, "***@" + parts.netloc.rpartition("@")[2], 1))
    return mask_text(url)


#: Text in an object's path that a filesystem's path syntax reads as something other than the key, and what it
#: reads it as: s3fs cuts a path at ``?versionId=`` (always), adlfs at ``?versionid=``, gcsfs (when version aware)
#: at ``#`` and ``?``. Only used to say why :meth:`RemoteFiles.misread` found a path misread.
_PATH_SYNTAX = (
    ("?versionId=", "an S3 object version id"),
    ("?versionid=", "an Azure blob version id"),
    ("#", "a GCS object generation"),
    ("?", "a query"),
)
#: Error codes of a conditional write that collided with another one in progress on the same key (S3 answers 409
#: and says to try again): the write is retried.
_CONFLICT_CODES = frozenset({"ConditionalRequestConflict", "OperationAborted"})
#: How often such a write is tried, and the first pause between tries (doubled each time).
CONFLICT_TRIES = 5
_CONFLICT_PAUSE = 0.2

#: Schemes whose URL names a bucket or container first: ``s3:///x`` names none.
_BUCKETED = frozenset({"s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "az", "wasb", "wasbs"})


def checked_url(url: str) -> str:
    """A records URL as it is used (its scheme in lower case, as schemes are case-insensitive), or a RecordError
    naming what is wrong with it: nothing after ``://``; no bucket where the scheme needs one; a query or a
    fragment; an empty (``//``), ``.`` or ``..`` segment in its path.

    An object store keeps such segments as they are (``s3://b/a/../r`` writes under the key ``a/../r``, which
    another tool would read as ``r``; ``s3://b//r`` writes records that listing ``b/r`` never finds): a records
    location means one place to every reader, so they are refused.

    Example:
        >>> checked_url("S3://bucket/records/")
        's3://bucket/records/'
        >>> checked_url("s3://bucket/a/../records")
        Traceback (most recent call last):
        ubunye.exceptions.RecordError: records s3://bucket/a/../records: the segment '..' in its path is ...
    """
    scheme = scheme_of(url)
    if scheme is None:
        return url
    rest = url[len(scheme) + 3 :]
    url = f"{scheme}://{rest}"
    shown = shown_url(url)
    if "?" in rest or "#" in rest:
        msg = f"records {shown}: a records URL takes no query or fragment (give storage options in Python instead)"
        raise RecordError(msg)
    authority, _, path = rest.rstrip("/").partition("/")
    if not authority and not path:
        what = "bucket or container" if scheme in _BUCKETED else "location"
        msg = f"records {shown}: names no {what} (e.g. {scheme}://bucket/records)"
        raise RecordError(msg)
    if not authority and scheme in _BUCKETED:
        msg = f"records {shown}: names no bucket or container ({scheme}:// is followed by '/')"
        raise RecordError(msg)
    for segment in path.split("/") if path else ():
        if segment in ("", ".", ".."):
            shown_segment = "an empty segment ('//')" if not segment else f"the segment {segment!r}"
            msg = (
                f"records {shown}: {shown_segment} in its path is kept as it is by an object store, so readers "
                "and writers would not agree where the records are; write the path without it"
            )
            raise RecordError(msg)
    return url


class ObjectGone(RecordError):
    """The object read is not there (any more)."""


class RemoteFiles:
    """Whole objects under one root URL, through fsspec.

    Args:
        url: the root, e.g. ``s3://bucket/ubunye/records``.
        storage_options: passed to the fsspec filesystem (``endpoint_url``, ``key``/``secret``, ``profile``,
            ``anon``...); by default the implementation's own credential chain (environment, profile, instance
            role). Values under credential names are masked in every message and record.
    """

    def __init__(self, url: str, storage_options: dict[str, Any] | None = None) -> None:
        # The URL's own password first: the filesystem's client may quote the URL's authority whole in any error
        # (botocore: 'Invalid bucket name "AKIA...:<password>@bucket"'), even one raised by checked_url's callers.
        remember_secrets(secret_values(url))
        url = checked_url(url)
        self.url = url.rstrip("/")
        self.shown = shown_url(self.url)
        self.scheme = scheme_of(url) or "file"
        options = dict(storage_options or {})
        _remember(options)
        try:
            from fsspec.core import url_to_fs
        except ImportError:
            msg = f"records {self.shown}: needs fsspec; " + _install(self.scheme, "install it: pip install fsspec")
            raise RecordError(msg) from None
        # A filesystem of its own: fsspec's shared instances keep the endpoint and credentials they started with,
        # which would outlive a change of environment in a long-lived process (a notebook).
        options.setdefault("skip_instance_cache", True)
        try:
            self.fs, self.root = url_to_fs(self.url, **options)
        except ImportError as exc:
            msg = (
                f"records {self.shown}: no filesystem for {self.scheme}:// is installed ({mask_text(str(exc))}); "
                + _install(self.scheme, "install the package it names")
            )
            raise RecordError(msg) from None
        except ValueError as exc:
            if "protocol not known" not in str(exc).lower():
                raise RecordError(f"records {self.shown}: cannot open: {mask_text(str(exc))}") from None
            if self.scheme in EXTRAS:  # a scheme only its package registers (adlfs adds abfss://): not installed
                msg = f"records {self.shown}: no filesystem for {self.scheme}:// is installed; "
                raise RecordError(msg + _install(self.scheme, "")) from None
            msg = (
                f"records {self.shown}: unknown scheme {self.scheme + '://'!r} (no fsspec filesystem has it); give "
                "a local path or a URL fsspec opens (s3://, gs://, abfs://, file://)"
            )
            raise RecordError(msg) from None
        except Exception as exc:  # bad storage_options (a TypeError), a malformed URL...
            raise RecordError(
                f"records {self.shown}: cannot open: {type(exc).__name__}: {mask_text(str(exc))}"
            ) from None
        self.root = self.root.rstrip("/")

    def _path(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def url_of(self, rel: str) -> str:
        """The URL of the object at ``rel`` under the root, as printed."""
        return f"{self.shown}/{rel}" if rel else self.shown

    def find(self, prefix: str) -> list[str]:
        """Every object under ``<root>/<prefix>``, as paths relative to the root (one listing, no reads)."""
        base = self._path(prefix)
        try:
            self.fs.invalidate_cache()  # another process may have written since this filesystem last listed
            found = self.fs.find(base, detail=False)
        except FileNotFoundError:
            return []
        except Exception as exc:
            raise self._error("cannot list", prefix, exc) from None
        root = self.root + "/"
        return sorted(p[len(root) :] for p in found if p.startswith(root))

    def read(self, rel: str, limit: int) -> bytes:
        """The bytes of one object; at most ``limit + 1`` are read, so the caller can tell one that is too large.

        Raises:
            ObjectGone: there is no such object (any more: a running state is deleted once its final record is
                written, maybe between a reader's listing and its read).
            RecordError: it could not be read.
        """
        path = self._path(rel)
        for fresh in (False, True):
            try:
                with self.fs.open(path, "rb") as fh:
                    data: bytes = fh.read(limit + 1)  # fsspec is untyped; a file opened "rb" reads bytes
                    return data
            except FileNotFoundError as exc:
                if not fresh:
                    # Maybe only the listing cached by find() does not have it (an object written since, by another
                    # process: a run's final record): ask the store itself.
                    self.fs.invalidate_cache(path)
                    continue
                raise ObjectGone(str(self._error("cannot read run record", rel, exc))) from None
            except Exception as exc:
                raise self._error("cannot read run record", rel, exc) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def put(self, rel: str, data: bytes) -> None:
        """Write one object whole, create-only where the store supports it (S3: ``If-None-Match: *``).

        Object stores make a PUT visible whole or not at all; create-only also means no writer ever replaces an
        object another wrote. An object already there holding exactly ``data`` is this write, done: a PUT the
        store applied but whose reply was lost is retried by the client, and the retry finds the object there.
        A write colliding with another conditional write in progress on the key (S3: 409) is tried again.

        Raises:
            RecordError: an object with other bytes is there already, the filesystem would not write ``rel`` as
                that key (:meth:`misread`), or the store refused or could not be reached.
        """
        path = self._path(rel)
        why = self.misread(rel)
        if why:
            raise RecordError(f"{self.url_of(rel)}: cannot write run record: {why}")
        pause = _CONFLICT_PAUSE
        for attempt in range(1, CONFLICT_TRIES + 1):
            try:
                try:
                    self.fs.pipe_file(path, data, mode="create")
                except (TypeError, NotImplementedError):  # a filesystem without create-only writes: plain put
                    self.fs.pipe_file(path, data)
                return
            except Exception as exc:
                codes = set(_error_codes(exc))
                if isinstance(exc, FileExistsError) or "PreconditionFailed" in codes:
                    # (a 412 without its Condition, from some S3-compatible servers, is an OSError in s3fs)
                    self._same_bytes_there(rel, path, data)
                    return
                if codes & _CONFLICT_CODES and attempt < CONFLICT_TRIES:
                    log.debug("%s: conflicting write in progress (%s); trying again", self.url_of(rel), codes)
                    time.sleep(pause)
                    pause *= 2
                    continue
                raise self._error("cannot write run record", rel, exc) from None

    def _same_bytes_there(self, rel: str, path: str, data: bytes) -> None:
        """A create-only write found an object at ``path``: success if it holds exactly ``data``, else an error."""
        there = f"{self.url_of(rel)}: a run record is already there (records are written once)"
        try:
            self.fs.invalidate_cache(path)
            with self.fs.open(path, "rb") as fh:
                found: bytes = fh.read(len(data) + 1)
        except Exception as exc:
            why = mask_text(" ".join(str(exc).split()) or type(exc).__name__)
            msg = f"{there}, and reading it back to compare failed: {type(exc).__name__}: {why}"
            raise RecordError(msg) from None
        if found != data:
            raise RecordError(there)
        log.info("%s: already there with the same bytes (a retried write whose first reply was lost)", self.url_of(rel))

    def misread(self, rel: str) -> str | None:
        """Why the filesystem would not address the object at ``rel`` (under the root) by that key, or None.

        fsspec filesystems read a syntax of their own in paths: s3fs takes ``?versionId=`` and all after it as a
        version id (always), adlfs ``?versionid=``, gcsfs (version aware) ``#`` and a query. A write of such a key
        would go to another object (``.../a?versionId=1/r.json`` is written as ``.../a``), a read would read one.

        Example:
            >>> RemoteFiles("memory://doc-misread/records").misread("u/p/a?versionId=1/r.json") is None
            True
        """
        split = getattr(self.fs, "split_path", None)
        if not callable(split):  # a filesystem without a path syntax of its own (memory://, file://...)
            return None
        path = self._path(rel)
        try:
            parts = split(path)
            key, version = str(parts[1]), (parts[2] if len(parts) > 2 else None)
        except Exception:  # a split_path of another shape: nothing to compare
            return None
        if version is None and (key == rel or key.endswith("/" + rel)):
            return None
        lib = type(self.fs).__module__.split(".")[0]
        means = next((f" ({lib} reads {m!r} in a path as {what})" for m, what in _PATH_SYNTAX if m in rel), "")
        addressed = f"{key}?version={version}" if version is not None else key
        return f"{lib} would address another object ({addressed!r}){means}"

    def misread_name(self, name: str) -> str | None:
        """Why a usecase, package, task or run id cannot be a name in this store's keys (see :meth:`misread`), or
        None: it is checked as a folder (``<name>/...``) and as a file name (``<name>.json``)."""
        for rel in (f"{name}/0.json", f"{name}.json"):
            why = self.misread(rel)
            if why:
                return f"cannot be a name in {self.shown}: {why}; rename it (a local records folder takes it)"
        return None

    def remove(self, rel: str) -> None:
        """Delete every object under ``rel``; failures are logged only (a reader prefers the final record anyway).

        Object by object, each named as listed: fsspec's ``rm`` reads ``[``, ``*`` and ``?`` in a path as a glob, so
        the running states of a task named ``[bold]x`` would match nothing and stay.
        """
        try:
            self.fs.invalidate_cache()
            found = self.fs.find(self._path(rel), detail=False)
            root = self.root + "/"
            for path in found:
                # a key the filesystem would misread names another object: deleting "it" would delete that one
                why = self.misread(path[len(root) :]) if path.startswith(root) else None
                if why:
                    log.warning("%s: not deleted: %s", self.url_of(path[len(root) :]), why)
                    continue
                self.fs.rm_file(path)
        except FileNotFoundError:
            return
        except Exception as exc:
            log.warning("%s", self._error("could not delete", rel, exc))

    def check(self) -> None:
        """Can the store be reached? The root, or the nearest folder (bucket, container) above it, is listed.

        Raises:
            RecordError: the store cannot be reached (network, credentials) or its bucket does not exist.
        """
        path = self.root
        while True:
            try:
                self.fs.invalidate_cache()
                self.fs.ls(path, detail=False)
                return
            except FileNotFoundError:
                parent = path.rpartition("/")[0]
                if not parent or parent == path:
                    msg = f"records {self.shown}: {path} does not exist (create the bucket or container first)"
                    raise RecordError(msg) from None
                path = parent
            except Exception as exc:
                raise self._error("cannot reach the record store", "", exc) from None

    def _error(self, what: str, rel: str, exc: BaseException) -> RecordError:
        why = mask_text(" ".join(str(exc).split()) or type(exc).__name__)
        return RecordError(f"{self.url_of(rel)}: {what}: {type(exc).__name__}: {why}")


def _error_codes(exc: BaseException) -> Iterator[str]:
    """The error codes of the service's replies (botocore's ``response["Error"]["Code"]``) in ``exc`` and the
    exceptions it was raised from (s3fs raises its own, from botocore's)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        response = getattr(current, "response", None)
        error = response.get("Error") if isinstance(response, dict) else None
        if isinstance(error, dict) and isinstance(error.get("Code"), str):
            yield error["Code"]
        current = current.__cause__ or current.__context__


def _install(scheme: str, otherwise: str) -> str:
    extra = EXTRAS.get(scheme)
    return f"install it: pip install 'ubunye[{extra}]'" if extra else otherwise


def _remember(options: dict[str, Any]) -> None:
    """Credentials in storage_options or the environment are masked wherever they might later appear."""
    values = {
        str(v) for k, v in options.items() if isinstance(v, str) and (k in _CREDENTIAL_OPTIONS or is_secret_name(k))
    }
    values |= {os.environ[name] for name in CREDENTIAL_ENV if os.environ.get(name)}
    remember_secrets(values)
