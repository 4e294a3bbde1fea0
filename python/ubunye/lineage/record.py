"""The run record (record_version 2, ADR 006), loading of older (v1) records, and the check of every field.

A record read back is data from a file, not an object ubunye made: :meth:`RunRecord.from_dict` checks the type
of every field (``bool`` is not ``int``, a number is finite), that the identity fields are plain names, and
refuses anything else with a :class:`MalformedRecord` naming the file and the field.

Example:
    >>> r = RunRecord(run_id="r1", usecase="u", package="p", task="t")
    >>> RunRecord.from_dict(r.to_dict()) == r
    True
    >>> old = {"run_id": "old", "usecase": "u", "package": "p", "task_name": "t", "status": "error"}
    >>> RunRecord.from_dict(old).record_version
    1
    >>> RunRecord.from_dict({**r.to_dict(), "outputs": [{"name": "o", "row_count": "4"}]}, "/x/r1.json")
    Traceback (most recent call last):
    ubunye.lineage.record.MalformedRecord: /x/r1.json: outputs[0].row_count: expected int or null, got str
"""

from __future__ import annotations

import functools
import math
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ubunye.exceptions import RecordError
from ubunye.hashing.types import FLOAT_TYPES
from ubunye.isotime import parse_time
from ubunye.visible import invisible, shows_nothing

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

RECORD_VERSION = 2
STATUSES = ("running", "success", "failed")
#: Longest usecase, package, task or run id: a file name (``<run_id>.json``) may have at most 255 bytes.
MAX_NAME_BYTES = 250

# Bounds a field's number (or the shape of its time) must respect, in the dataclass field's metadata.
_NON_NEGATIVE = {"min": 0}
_PID = {"min": 1, "max": 2**31 - 1}  # 0 and -1 mean "the process group" / "every process" to kill(2)
_TIME = {"time": True}  # an ISO 8601 time with its offset, as utc_now() writes
_DIGEST = {"digest": True}  # "sha256:" and 64 lowercase hex digits, as every hash of rows-v1 is written
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")


class MalformedRecord(RecordError):
    """A record file whose content is not a valid run record; ``path`` and ``field`` say where.

    Example:
        >>> str(MalformedRecord("expected int, got str", "/x/r.json", "outputs[1].row_count"))
        '/x/r.json: outputs[1].row_count: expected int, got str'
    """

    def __init__(self, reason: str, path: str | None = None, field: str | None = None) -> None:
        self.reason, self.path, self.field = reason, path, field
        parts = (printable(path) if path else None, printable(field) if field else None, reason)
        super().__init__(": ".join(x for x in parts if x))


@dataclass
class ColumnRecord:
    """One top-level column's profile (docs/rows-v1.md section 12.1): its rows-v1 type, null count, NaN count
    (float columns only, else None) and fingerprint (``sha256:``; equal when name, type and values are)."""

    type: str
    nulls: int = field(metadata=_NON_NEGATIVE)
    fingerprint: str = field(metadata=_DIGEST)
    nans: int | None = field(default=None, metadata=_NON_NEGATIVE)


@dataclass
class BucketsRecord:
    """The row buckets of a dataset (docs/rows-v1.md section 12.2): ``n`` buckets, their packed numbers
    (``24 * n`` bytes) compressed with zlib and written in base64 (``data``); see ubunye.lineage.profiles."""

    n: int = field(metadata={"min": 1, "max": 65_536, "power_of_two": True})
    data: str


@dataclass
class DatasetRecord:
    """One input or output: where it is and its rows-v1 fingerprint.

    ``data_hash`` is None whenever the rows were not hashed; ``hash_error`` then says why (it is also None when
    hashing was switched off for inputs, ``hash_inputs=False``, and then ``row_count`` is None too).
    ``columns``, ``buckets`` and ``key`` are its profile (docs/rows-v1.md section 12; None when off, or in records
    written before it; ``profile_error`` says why one is missing). ``version`` is the Delta table version read
    (inputs) or written (outputs). ``hash_mode`` says how a Delta input's hash was made: ``incremental`` (from
    per-file sums cached in the record store, reading only the files not cached) or ``full`` (``hash_reason``
    says why); None for other datasets and in records written before it. It never changes the hash.
    """

    name: str
    format: str | None = None
    location: str | None = None
    row_count: int | None = field(default=None, metadata=_NON_NEGATIVE)
    schema_hash: str | None = field(default=None, metadata=_DIGEST)
    data_hash: str | None = field(default=None, metadata=_DIGEST)
    hash_method: str | None = None
    hash_error: str | None = None
    schema: str | None = None
    mode: str | None = None
    version: int | None = field(default=None, metadata=_NON_NEGATIVE)
    timestamp: str | None = None
    written: bool | None = None
    columns: dict[str, ColumnRecord] | None = None
    buckets: BucketsRecord | None = None
    key: list[str] | None = None
    profile_method: str | None = None
    profile_error: str | None = None
    hash_mode: str | None = field(default=None, metadata={"choices": ("incremental", "full")})
    hash_reason: str | None = None


@dataclass
class Timing:
    """Seconds one stage took: ``stage`` is read | hash | transform | expectations | write."""

    stage: str
    name: str | None
    seconds: float = field(metadata=_NON_NEGATIVE)


@dataclass
class ExpectationResult:
    """One checked rule: its target (``outputs.<name>``), passed or not, and what was observed."""

    target: str
    rule: str
    passed: bool
    observed: Any = None
    column: str | None = None
    params: Any = None
    severity: str = "error"
    error: str | None = None


@dataclass
class ErrorInfo:
    """Why a run failed, and in which stage (read, transform, write, expectations, ...)."""

    type: str
    message: str
    stage: str
    name: str | None = None


@dataclass
class ProcessInfo:
    """The process that ran the task, so a reader can tell a run still going from one whose process died.

    ``started`` is ``<start time in clock ticks since boot>@<boot id>`` (Linux ``/proc``; the boot id is left
    out when unreadable, the whole of it is None where there is no ``/proc``): a pid reused by another process,
    or the same pid after a reboot, has another one. See :mod:`ubunye.lineage.liveness`.
    """

    host: str
    pid: int = field(metadata=_PID)
    started: str | None = None


@dataclass
class RunRecord:
    """Everything one run of a task left behind. ``to_dict`` is the JSON stored on disk."""

    run_id: str
    usecase: str
    package: str
    task: str
    record_version: int = RECORD_VERSION
    status: str = "running"
    started_at: str | None = field(default=None, metadata=_TIME)
    ended_at: str | None = field(default=None, metadata=_TIME)
    # When the last checkpoint record was written, under the lock of the output committed next: a run killed after
    # its commit has no ended_at, and is ordered by this (store._order_key). None before any (and in older records).
    checkpoint_at: str | None = field(default=None, metadata=_TIME)
    duration_seconds: float | None = field(default=None, metadata=_NON_NEGATIVE)
    ubunye_version: str | None = None
    backend: str | None = None
    entry_point: str | None = None
    process: ProcessInfo | None = None
    usecase_dir: str | None = None
    model: str | None = None
    task_version: str | None = None
    template_vars: dict[str, str | None] = field(default_factory=dict)
    config_hash: str | None = None
    config: dict[str, Any] | None = None
    code_hash: str | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    environment_hash: str | None = None
    hash_inputs: bool | None = None
    inputs: list[DatasetRecord] = field(default_factory=list)
    outputs: list[DatasetRecord] = field(default_factory=list)
    timings: list[Timing] = field(default_factory=list)
    expectations: list[ExpectationResult] = field(default_factory=list)
    error: ErrorInfo | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def identity(self) -> tuple[str, str, str]:
        """``(usecase, package, task)``."""
        return self.usecase, self.package, self.task

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict (``extra``, keys this version does not know, is kept at the top level)."""
        out = asdict(self)
        extra = out.pop("extra")
        return {"record_version": out.pop("record_version"), **out, **extra}

    @classmethod
    def from_dict(cls, data: object, path: str | None = None) -> RunRecord:
        """Load a stored record of version 1 or 2, checking every field.

        A record without ``record_version`` is version 1: it loads with the v2 fields empty (no code_hash,
        no environment, no inputs, timings or expectations) and outputs without a hash_method. Keys this
        version does not know are kept in ``extra`` (top level) or ignored (inside a dataset, timing, ...).

        Raises:
            MalformedRecord: not a JSON object; a record_version this ubunye does not read; a field missing or
                of the wrong type (``outputs[1].row_count: expected int or null, got str``), a number that is
                not finite or out of range (in ``environment`` too, whose facts are text), a status that is not
                running, success or failed, or an identity field (run_id, usecase, package, task) that is not a
                plain name (see :func:`unsafe_name`).

        Example:
            >>> RunRecord.from_dict({"run_id": "r", "usecase": "u", "package": "p", "task": "t", "status": 1})
            Traceback (most recent call last):
            ubunye.lineage.record.MalformedRecord: status: expected str, got int
        """
        if not isinstance(data, dict):
            msg = f"not a run record (expected a JSON object, got {_kind(data)})"
            raise MalformedRecord(msg, path)
        version = _record_version(data, path)
        original = data
        if version == 1:
            data = _v1(data)
        for name in ("run_id", "status"):  # defaults for code that builds a record, never for a file
            if name not in data:
                raise MalformedRecord("missing" + (": not a run record" if name == "run_id" else ""), path, name)
        try:
            record = _load(cls, data, "", path)
        except MalformedRecord as exc:
            raise _as_written(exc, original) from None
        record.record_version = version
        record.extra = _unknown(cls, data)
        for name in ("run_id", "usecase", "package", "task"):
            why = unsafe_name(getattr(record, name))
            if why:
                raise MalformedRecord(f"not a plain name ({why}): {_quote(getattr(record, name))}", path, name)
        if record.status not in STATUSES:
            msg = f"expected one of {', '.join(STATUSES)}, got {_quote(record.status)}"
            raise MalformedRecord(msg, path, "status")
        if "packages" in record.environment:  # name -> version or null (absent), as capture_environment makes it
            _value(record.environment["packages"], dict[str, str | None], "environment.packages", path)
        _check_finite(record.environment, "environment", path)
        for side in ("inputs", "outputs"):
            for i, d in enumerate(getattr(record, side)):
                _check_profile(d, f"{side}[{i}]", path)
        check_datasets(record, path)
        return record


def check_datasets(record: RunRecord, path: str | None = None) -> None:
    """A record naming one input (or one output) twice is malformed: which of the two would be compared? So is a
    successful run with an output it did not write.

    :meth:`RunRecord.from_dict` calls it on every record it loads; ``compare_records`` and ``diff_runs`` call it
    on records built in code.

    Example:
        >>> o = DatasetRecord("o", data_hash="sha256:1")
        >>> check_datasets(RunRecord(run_id="a", usecase="u", package="p", task="t", outputs=[o, o]), "/r.json")
        Traceback (most recent call last):
        ubunye.lineage.record.MalformedRecord: /r.json: outputs[1].name: 'o' is repeated (outputs[0] has it too)
    """
    if record.status == "success":  # a run succeeds once every output is committed (runner: written true)
        for i, d in enumerate(record.outputs):
            if d.written is False:
                msg = "false in a run whose status is success (a run succeeds only once every output is written)"
                raise MalformedRecord(msg, path, f"outputs[{i}].written")
    for side, items in (("outputs", record.outputs), ("inputs", record.inputs)):
        seen: dict[str, int] = {}
        for i, d in enumerate(items):
            if d.name in seen:
                msg = f"{_quote(d.name)} is repeated ({side}[{seen[d.name]}] has it too)"
                raise MalformedRecord(msg, path, f"{side}[{i}].name")
            seen[d.name] = i


def _check_profile(d: DatasetRecord, at: str, path: str | None) -> None:
    """What the types alone do not say of a dataset's profile (docs/rows-v1.md section 12): the key is a non-empty
    list of distinct names of its columns; no column counts more nulls or NaNs than the dataset has rows, and only
    float columns count NaNs. (``buckets.n``, a power of two, is checked with its type; ``buckets.data`` is decoded
    by :func:`ubunye.lineage.profiles.packed_buckets` when read.)"""
    if d.key is not None:
        if not d.key:
            raise MalformedRecord("expected a non-empty list of column names or null, got []", path, f"{at}.key")
        first: dict[str, int] = {}  # name -> its first place: a key of 60,000 names is checked in one pass
        for i, name in enumerate(d.key):
            if name in first:
                msg = f"{_quote(name)} is repeated ({at}.key[{first[name]}] has it too)"
                raise MalformedRecord(msg, path, f"{at}.key[{i}]")
            first[name] = i
            if d.columns is not None and name not in d.columns:
                msg = f"{_quote(name)} is not a column of the dataset (its columns: {_quote(sorted(d.columns))})"
                raise MalformedRecord(msg, path, f"{at}.key[{i}]")
    for name, c in (d.columns or {}).items():
        where = f"{at}.columns.{name}"
        if c.nans is not None and c.type not in FLOAT_TYPES:
            raise MalformedRecord(f"expected null for a {_quote(c.type)} column (NaNs are counted for floats only), "
                                  f"got {c.nans}", path, f"{where}.nans")  # fmt: skip
        if d.row_count is None:
            continue
        if c.nulls > d.row_count:
            msg = f"expected at most the dataset's row_count ({d.row_count}), got {c.nulls}"
            raise MalformedRecord(msg, path, f"{where}.nulls")
        if c.nans is not None and c.nulls + c.nans > d.row_count:  # a NaN is not a null: both fit in the rows
            msg = f"expected at most row_count - nulls ({d.row_count} - {c.nulls}), got {c.nans}"
            raise MalformedRecord(msg, path, f"{where}.nans")


def _check_finite(value: object, at: str, path: str | None) -> None:
    """No NaN or infinity anywhere in ``value`` (a free-form field such as ``environment``, whose facts are text).

    compare calls two facts changed unless they are equal, and NaN is not equal to itself: ``python_version NaN
    -> NaN`` would be called a move. No run writes a number there, let alone one that is not finite.

    Example:
        >>> _check_finite({"machine": float("nan")}, "environment", "/r.json")
        Traceback (most recent call last):
        ubunye.lineage.record.MalformedRecord: /r.json: environment.machine: expected text or a finite number, got NaN
    """
    stack = [(value, at)]  # iterative: the depth was bounded by the reader, but no recursion is needed either
    while stack:
        node, where = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            raise MalformedRecord(f"expected text or a finite number, got {_kind(node)}", path, where)
        if isinstance(node, dict):
            stack.extend((v, _join(where, str(k))) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(node))


def unsafe_name(value: str) -> str | None:
    """Why ``value`` cannot be a usecase, package, task or run id (a folder or file name of the store), or None.

    Refused: empty, longer than 250 bytes, ``.``-first (``.`` and ``..``, and hidden files, which the store
    skips as writes in progress), a ``/`` or ``\\``, a control or invisible formatting character (which could
    move the terminal's cursor or reorder what is shown). Anything else is a name: spaces, brackets, letters of
    any script.

    Example:
        >>> unsafe_name("revenue"), unsafe_name("[bold]x"), unsafe_name("../x"), unsafe_name("a\\x1b[2J")
        (None, None, "starts with '.'", 'contains U+001B')
    """
    if not isinstance(value, str) or not value:
        return "empty"
    if value.startswith("."):
        return "starts with '.'"
    for ch in value:
        if ch in "/\\":
            return f"contains {ch!r}"
        if shows_nothing(ch):  # the one rule of names (ubunye.visible): U+3164 would name a folder shown as blank
            return f"contains U+{ord(ch):04X}"
    if len(value.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        return f"longer than {MAX_NAME_BYTES} bytes"
    return None


def printable(text: str) -> str:
    r"""``text`` with every character a terminal would act on (control, invisible formatting, line breaks)
    shown as an escape, so a name, path or message from a file prints as what it is, on one line.

    Example:
        >>> printable("data/x\x1b[2J\nend"), printable("plain text [bold]")
        ('data/x\\x1b[2J\\nend', 'plain text [bold]')
    """
    if invisible(text) is None:
        return text
    return "".join(_escape(ch) if shows_nothing(ch) else ch for ch in text)


def _escape(ch: str) -> str:
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if ch in named:
        return named[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _quote(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- versions ------------------------------------------------------------------------------------------------------


def _record_version(data: dict[str, Any], path: str | None) -> int:
    version = data.get("record_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        shown = _quote(version) if isinstance(version, int | str) and not isinstance(version, bool) else _kind(version)
        msg = f"expected an int >= 1 (a record version), got {shown}"
        raise MalformedRecord(msg, path, "record_version")
    if version > RECORD_VERSION:
        msg = f"record_version {version} is newer than this ubunye reads ({RECORD_VERSION}); upgrade ubunye"
        raise MalformedRecord(msg, path)
    return version


#: Pre-0.7 records (ubunye's RunContext) named some fields differently.
_V1_ALIASES = {"task_name": "task", "duration_sec": "duration_seconds", "version": "task_version"}


def _v1(data: dict[str, Any]) -> dict[str, Any]:
    """A v1 record in v2 names and shapes (the values are checked afterwards like any other record's)."""
    out = {_V1_ALIASES.get(k, k): v for k, v in data.items() if not (k in _V1_ALIASES and _V1_ALIASES[k] in data)}
    if out.get("status") == "error":
        out["status"] = "failed"
    for k in ("environment", "template_vars"):
        if out.get(k) is None:
            out[k] = {}
    if isinstance(out.get("error"), str):  # v1 kept the message only
        out["error"] = {"type": "Error", "message": out["error"], "stage": "unknown"}
    for side in ("inputs", "outputs"):
        if isinstance(out.get(side), list):
            out[side] = [_v1_dataset(d) for d in out[side]]
    return out


def _as_written(exc: MalformedRecord, original: dict[str, Any]) -> MalformedRecord:
    """The error naming the field as the file spells it (a v1 ``duration_sec``, not ``duration_seconds``)."""
    head, sep, rest = (exc.field or "").partition(".")
    alias = next((old for old, new in _V1_ALIASES.items() if new == head and old in original), None)
    if alias is None or head in original:
        return exc
    return MalformedRecord(exc.reason, exc.path, alias + sep + rest)


def _v1_dataset(data: object) -> object:
    if isinstance(data, dict) and "data_hash" not in data and "hash" in data:  # some v1 writers
        return {**data, "data_hash": data["hash"]}
    return data


# --- the check of every field --------------------------------------------------------------------------------------


_D = TypeVar("_D", bound="DataclassInstance")


@functools.cache
def _hints(cls: type[DataclassInstance]) -> dict[str, object]:
    return typing.get_type_hints(cls)


@functools.cache
def _field_names(cls: type[DataclassInstance]) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls) if f.name != "extra")


def _unknown(cls: type[DataclassInstance], data: dict[str, object]) -> dict[str, object]:
    """The keys of ``data`` that are no field of ``cls``, with their values."""
    names = _field_names(cls)
    return {k: v for k, v in data.items() if k not in names}


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _kind(value: object) -> str:
    """How a JSON value is named in a message: its Python type, ``null``, or ``NaN`` / ``Infinity``."""
    if value is None:
        return "null"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return type(value).__name__


def _describe(hint: object) -> str:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        named = [_describe(a) for a in typing.get_args(hint) if a is not type(None)]
        return " or ".join(named) + (" or null" if type(None) in typing.get_args(hint) else "")
    if is_dataclass(hint) or origin is dict:
        return "dict"
    if origin is list:
        return "list"
    return getattr(hint, "__name__", str(hint))


def _load(cls: type[_D], data: dict[str, object], where: str, path: str | None) -> _D:
    """An instance of the dataclass ``cls`` from ``data`` (a dict), every field checked against its hint."""
    hints, kwargs = _hints(cls), {}
    for f in fields(cls):
        if f.name == "extra":
            continue
        at = _join(where, f.name)
        if f.name not in data:
            if f.default is MISSING and f.default_factory is MISSING:
                raise MalformedRecord("missing", path, at)
            continue
        value = _value(data[f.name], hints[f.name], at, path)
        _bounds(value, f.metadata, at, path)
        kwargs[f.name] = value
    return cls(**kwargs)


def _bounds(value: object, bounds: Mapping[str, Any], at: str, path: str | None) -> None:
    """The bounds of a field's metadata (``_TIME`` or ``choices`` on text, ``min``/``max`` on numbers) on its
    checked value."""
    choices = bounds.get("choices")
    if isinstance(value, str) and choices is not None and value not in choices:
        raise MalformedRecord(f"expected one of {', '.join(choices)}, got {_quote(value)}", path, at)
    if isinstance(value, str) and bounds.get("time"):
        # `list` sorts by these and compare reports them: a hand-edited "yesterday" must not pass as a time.
        try:
            ok = parse_time(value).tzinfo is not None
        except ValueError:
            ok = False
        if not ok:
            raise MalformedRecord(f"expected an ISO 8601 UTC time, got {_quote(value)}", path, at)
        return
    if isinstance(value, str) and bounds.get("digest") and not _SHA256.fullmatch(value):
        # compare takes unequal hashes for changed data: a hand-edited "not-a-hash" must not pass as one
        raise MalformedRecord(f"expected 'sha256:' and 64 lowercase hex digits, got {_quote(value)}", path, at)
    if not isinstance(value, int | float):
        return
    low, high = bounds.get("min"), bounds.get("max")
    if low is not None and value < low:
        raise MalformedRecord(f"expected a number >= {low}, got {_quote(value)}", path, at)
    if high is not None and value > high:
        raise MalformedRecord(f"expected a number <= {high}, got {_quote(value)}", path, at)
    if bounds.get("power_of_two") and isinstance(value, int) and value & (value - 1):
        msg = f"expected a power of two from {low} to {high}, got {_quote(value)}"
        raise MalformedRecord(msg, path, at)


def _value(value: object, hint: object, at: str, path: str | None) -> object:
    """``value`` checked against the type hint of its field (the hints the dataclasses above use)."""
    declared, nullable = hint, False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        nullable = type(None) in args
        (hint,) = (a for a in args if a is not type(None))  # the record's fields are "X" or "X | None" only
    if hint is Any:
        return value
    if value is None:
        if nullable:
            return None
        raise _wrong(value, declared, at, path)
    origin = typing.get_origin(hint) or hint
    if is_dataclass(hint) or origin is dict:
        if not isinstance(value, dict):
            raise _wrong(value, declared, at, path)
        if isinstance(hint, type) and is_dataclass(hint):
            return _load(hint, value, at, path)
        (_, item) = typing.get_args(hint)
        return dict(value) if item is Any else {k: _value(v, item, _join(at, k), path) for k, v in value.items()}
    if origin is list:
        if not isinstance(value, list):
            raise _wrong(value, declared, at, path)
        (item,) = typing.get_args(hint)
        return [_value(v, item, f"{at}[{i}]", path) for i, v in enumerate(value)]
    if hint is bool:
        ok = isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and _finite(value)
    elif hint is str:
        ok = isinstance(value, str)
    else:  # a field declared with a type this loader does not check: a bug here, not in the file
        msg = f"RunRecord loader has no check for {hint!r} ({at})"
        raise TypeError(msg)
    if not ok:
        raise _wrong(value, declared, at, path)
    return value


def _finite(value: int | float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large to be a float: no duration, no seconds
        return False


def _wrong(value: object, hint: object, at: str, path: str | None) -> MalformedRecord:
    got = _kind(value)
    if isinstance(value, int) and not isinstance(value, bool) and not _finite(value):
        got = "an int too large for a float"
    return MalformedRecord(f"expected {_describe(hint)}, got {got}", path, at)
