"""Keep secrets out of records, errors and logs: masked by key name, by shape, and by value, everywhere.

The process remembers the secret values of every config it runs (:func:`remember_secrets`, called by the
runner with :func:`~ubunye.lineage.secrets.secret_values`), and :func:`mask_text` replaces them wherever they
appear, as well as every secret recognised by its shape. Importing this module installs :class:`SecretFilter`
on the ``ubunye`` logger (and ``py.warnings``), so log lines are masked the same way.

Example:
    >>> redact_url("s3://AKIA:s3cr3t@bucket/x?sig=abc&part=1")
    's3://AKIA:***@bucket/x?sig=***&part=1'
    >>> redact_config({"path": "x", "options": {"password": "p", "user": "u"}})
    {'path': 'x', 'options': {'password': '***', 'user': 'u'}}
    >>> remember_secrets({"hunter2-long"})
    >>> mask_text("login failed for hunter2-long")
    'login failed for ***'
    >>> forget_secrets()
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import fields, is_dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from ubunye.lineage.secrets import (
    DATASET_MAPS,
    MASK,
    MIN_SECRET_LENGTH,
    NAME_MAPS,
    is_secret_name,
    mask_shapes,
    secret_key,
    secret_pair,
    secret_values,
    worth_masking,
)

__all__ = [
    "MASK",
    "MIN_SECRET_LENGTH",
    "SecretFilter",
    "forget_secrets",
    "install_log_filter",
    "is_secret_name",
    "mask_text",
    "redact_config",
    "redact_record",
    "redact_url",
    "remember_secrets",
    "remembered_secrets",
    "secret_values",
]

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_D = TypeVar("_D", bound="DataclassInstance")

# --- the registry of secret values ----------------------------------------------------------------------------------
# Process-wide on purpose: an error raised deep in an engine, a log line, the CLI's "error:" line all come from
# the same process as the config that held the secret, and none of them gets passed the config.
_LOCK = threading.Lock()
_REMEMBERED: set[str] = set()


def remember_secrets(values: Iterable[str]) -> None:
    """Add secret values to mask from now on, wherever they appear (values too short to mask are ignored).

    Example:
        >>> remember_secrets(["tok-1234", "ab"])
        >>> sorted(remembered_secrets())
        ['tok-1234']
        >>> forget_secrets()
    """
    new = {v for v in values if isinstance(v, str) and worth_masking(v)}
    with _LOCK:
        _REMEMBERED.update(new)


def forget_secrets() -> None:
    """Forget every remembered value (for tests, and a long-lived process that wants a clean slate).

    Example:
        >>> forget_secrets(); remembered_secrets()
        frozenset()
    """
    with _LOCK:
        _REMEMBERED.clear()


def remembered_secrets() -> frozenset[str]:
    """The values :func:`mask_text` masks by value."""
    with _LOCK:
        return frozenset(_REMEMBERED)


@functools.lru_cache(maxsize=64)
def _alternation(values: frozenset[str]) -> re.Pattern[str] | None:
    # Longest first: a regex alternation takes the first alternative that matches, so "secret-long" must come
    # before "secret", or "-long" would be left behind.
    ordered = sorted(values, key=lambda v: (-len(v), v))
    return re.compile("|".join(map(re.escape, ordered))) if ordered else None


def mask_values(text: str, values: Iterable[str] = ()) -> str:
    """Replace every remembered value, and every one of ``values``, in ``text`` by ``***`` (longest first).

    Example:
        >>> mask_values("a secret-long and a secret", ["secret", "secret-long"])
        'a *** and a ***'
    """
    if not text:
        return text
    pattern = _alternation(remembered_secrets() | {v for v in values if worth_masking(v)})
    return pattern.sub(MASK, text) if pattern is not None else text


def mask_text(text: str, values: Iterable[str] = ()) -> str:
    """Mask secrets in any text: remembered values (and ``values``) first, then every secret shape.

    Values first: a remembered password is masked exactly even where no shape rule would recognise it, and
    the shape rules then catch secrets this process was never told about.

    Example:
        >>> mask_text("connect postgresql://app:pa@ss/w0rd@db:5432/x failed: Authorization: Bearer eyXyz")
        'connect postgresql://app:***@db:5432/x failed: Authorization: Bearer ***'
    """
    if not isinstance(text, str) or not text:
        return text
    return mask_shapes(mask_values(text, values))


def redact_url(text: str) -> str:
    """The same as :func:`mask_text` (the name callers of 0.7 know): URLs, shapes and remembered values.

    Example:
        >>> redact_url("https://ghp_tok3n@github.com/o/r")
        'https://***@github.com/o/r'
    """
    return mask_text(text)


# --- trees and records ----------------------------------------------------------------------------------------------


def redact_config(config: Mapping[str, object], values: Iterable[str] = ()) -> dict[str, object]:
    """A copy of a config tree: values of secret-named keys are ``***`` (whole subtrees: ``creds: ***``), as are
    the values of ``{name: Authorization, value: ...}`` pairs; every other string, and every key, goes
    through :func:`mask_text`. Keys of ``inputs``, ``outputs``, ``expectations``, ``profiles`` and
    ``accepted_values`` are names chosen by the user (an output may be called ``credentials``), not secret keys.

    Example:
        >>> redact_config({"creds": {"user": "u", "pass": "p"}, "headers": {"Authorization": "Bearer abc"}})
        {'creds': '***', 'headers': {'Authorization': '***'}}
        >>> redact_config({"outputs": {"credentials": {"path": "data/c"}}})
        {'outputs': {'credentials': {'path': 'data/c'}}}
        >>> redact_config({"outputs": {"o": {"key": ["id"], "storage_options": {"key": "AKIA0EXAMPLE"}}}})
        {'outputs': {'o': {'key': ['id'], 'storage_options': {'key': '***'}}}}
    """
    return _redact_mapping(config, list(values), names=False, datasets=False, dataset=False)


def _redact_mapping(
    node: Mapping[str, object], values: list[str], *, names: bool, datasets: bool, dataset: bool
) -> dict[str, object]:
    pair = secret_pair(node)
    out: dict[str, object] = {}
    for k, v in node.items():
        key = mask_text(k, values) if isinstance(k, str) else k
        if v is not None and ((pair and k == "value") or secret_key(str(k), names, dataset)):
            out[key] = MASK
        elif isinstance(v, dict):
            out[key] = _redact_mapping(v, values, names=k in NAME_MAPS, datasets=k in DATASET_MAPS, dataset=datasets)
        else:
            out[key] = _redact(v, values)
    return out


def _redact(node: object, values: list[str]) -> object:
    if isinstance(node, dict):
        return _redact_mapping(node, values, names=False, datasets=False, dataset=False)
    if isinstance(node, list | tuple):
        return type(node)(_redact(v, values) for v in node)
    if isinstance(node, str):
        return mask_text(node, values)
    return node


#: Fields ubunye itself produces (identity, times, hashes, counts, the environment, the process, a dataset's
#: profile): never rewritten, so masking cannot move a record to another path, corrupt a hash or fingerprint that
#: happens to contain a 4-character secret, or make ``environment_hash`` disagree with ``environment``. A dataset's
#: ``columns`` (their names, types and fingerprints), its ``key`` (names of those columns) and ``buckets`` are kept
#: whole, like its ``schema``: they are what the data holds, and masking a column name in one place but not in
#: another made the record contradict itself. A secret equal to a column's name is not leaked by naming the column.
PROTECTED_FIELDS = frozenset(
    {
        "record_version", "run_id", "usecase", "package", "task", "status", "started_at", "ended_at", "checkpoint_at",
        "duration_seconds", "ubunye_version", "backend", "entry_point", "process", "config_hash", "code_hash",
        "environment", "environment_hash", "hash_inputs", "row_count", "schema_hash", "data_hash", "hash_method",
        "schema", "columns", "buckets", "key", "profile_method", "hash_mode", "timestamp", "written", "seconds",
        "passed", "stage", "severity", "version",
    }
)  # fmt: skip
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _masked(node: _D, values: list[str]) -> _D:
    """A copy of the dataclass instance ``node`` with every field not protected masked."""
    changes: dict[str, object] = {}
    for f in fields(node):
        if f.name in PROTECTED_FIELDS:
            continue
        value = getattr(node, f.name)
        is_config = f.name == "config" and isinstance(value, dict)
        changes[f.name] = redact_config(value, values) if is_config else _mask_tree(value, values)
    return replace(node, **changes)


def _mask_tree(node: object, values: list[str]) -> object:
    if is_dataclass(node) and not isinstance(node, type):
        return _masked(node, values)
    if isinstance(node, dict):  # keys too: a free-form mapping (observed, extra) may be keyed by any text
        return {(mask_text(k, values) if isinstance(k, str) else k): _mask_tree(v, values) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return type(node)(_mask_tree(v, values) for v in node)
    if isinstance(node, str):
        return mask_text(node, values)
    return node


def _keep_openlineage_ids(record: object, clean: object) -> None:
    """Put back in ``clean`` the OpenLineage ids ubunye computed (``extra.openlineage``): the run UUID, derived
    from the run id, and the job name, made of usecase, package and task (themselves never masked)."""
    extra, masked = getattr(record, "extra", None), getattr(clean, "extra", None)
    note = extra.get("openlineage") if isinstance(extra, dict) else None
    into = masked.get("openlineage") if isinstance(masked, dict) else None
    if not isinstance(note, dict) or not isinstance(into, dict):
        return
    run_id, job = note.get("run_id"), note.get("job")
    if isinstance(run_id, str) and _UUID.fullmatch(run_id) and "run_id" in into:
        into["run_id"] = run_id
    names = (getattr(record, n, None) for n in ("usecase", "package", "task"))
    if isinstance(job, str) and job == ".".join(map(str, names)) and "job" in into:
        into["job"] = job


def redact_record(record: _D, values: Iterable[str] = ()) -> _D:
    """A copy of a run record (or any dataclass) with every string masked: the config with
    :func:`redact_config`, every other string (locations, error type and message, hash errors, timing names,
    expectation errors and observations, extra fields, and the keys of free-form mappings) with
    :func:`mask_text`. :data:`PROTECTED_FIELDS` are kept as they are, as are the OpenLineage run UUID and job
    name in ``extra``.

    Besides the remembered values, ``values`` (the recorder passes its config's :func:`secret_values`) and the
    secret values of the record's own config are masked too, so a record written by an older version, with its
    config unmasked, is masked as a whole when read.

    Example:
        >>> from ubunye.lineage.record import ErrorInfo, RunRecord
        >>> r = RunRecord(run_id="r", usecase="u", package="p", task="t", config={"token": "tok-9876"},
        ...               error=ErrorInfo("ValueError", "bad token tok-9876", "read"))
        >>> clean = redact_record(r)
        >>> clean.config, clean.error.message, clean.run_id
        ({'token': '***'}, 'bad token ***', 'r')
    """
    own = getattr(record, "config", None)
    found = set(values) | (secret_values(own) if isinstance(own, dict) else set())
    clean = _masked(record, sorted(found))
    _keep_openlineage_ids(record, clean)
    return clean


# --- logging --------------------------------------------------------------------------------------------------------


class SecretFilter(logging.Filter):
    """Masks a log record's message (formatted with its args), exception text and stack with :func:`mask_text`.

    Example:
        >>> rec = logging.LogRecord("ubunye", logging.WARNING, "f", 1, "reading %s", ("s3://k:pw@b/x",), None)
        >>> SecretFilter().filter(rec), rec.getMessage()
        (True, 'reading s3://k:***@b/x')
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: leave it to logging to report
            return True
        record.msg, record.args = mask_text(message), ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask_text(record.exc_text)
        if record.stack_info:
            record.stack_info = mask_text(record.stack_info)
        return True


def install_log_filter(names: Iterable[str] = ("ubunye", "py.warnings")) -> None:
    """Put a :class:`SecretFilter` on each named logger, once (done when this module is imported).

    ``py.warnings`` is where ``logging.captureWarnings(True)`` sends warnings.

    Example:
        >>> install_log_filter(); sum(isinstance(f, SecretFilter) for f in logging.getLogger("ubunye").filters)
        1
    """
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, SecretFilter) for f in logger.filters):
            logger.addFilter(SecretFilter())


install_log_filter()
