"""The run record (record_version 2, ADR 006) and loading of older (v1) records.

Example:
    >>> r = RunRecord(run_id="r1", usecase="u", package="p", task="t")
    >>> RunRecord.from_dict(r.to_dict()) == r
    True
    >>> RunRecord.from_dict({"run_id": "old", "outputs": [{"name": "o", "data_hash": "sha256:ab"}]}).record_version
    1
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ubunye.exceptions import RecordError

RECORD_VERSION = 2
STATUSES = ("running", "success", "failed")
STAGES = ("config", "setup", "read", "hash", "transform", "expectations", "write", "monitor")


@dataclass
class DatasetRecord:
    """One input or output: where it is and its rows-v1 fingerprint.

    ``data_hash`` is None whenever the rows were not hashed; ``hash_error`` then says why (it is also None when
    hashing was switched off for inputs, ``hash_inputs=False``, and then ``row_count`` is None too).
    """

    name: str
    format: str | None = None
    location: str | None = None
    row_count: int | None = None
    schema_hash: str | None = None
    data_hash: str | None = None
    hash_method: str | None = None
    hash_error: str | None = None
    schema: str | None = None
    mode: str | None = None
    version: int | None = None
    timestamp: str | None = None
    written: bool | None = None


@dataclass
class Timing:
    """Seconds one stage took: ``stage`` is read | hash | transform | expectations | write."""

    stage: str
    name: str | None
    seconds: float


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
class RunRecord:
    """Everything one run of a task left behind. ``to_dict`` is the JSON stored on disk."""

    run_id: str
    usecase: str
    package: str
    task: str
    record_version: int = RECORD_VERSION
    status: str = "running"
    started_at: str | None = None
    ended_at: str | None = None
    duration_seconds: float | None = None
    ubunye_version: str | None = None
    backend: str | None = None
    entry_point: str | None = None
    usecase_dir: str | None = None
    model: str | None = None
    task_version: str | None = None
    template_vars: dict[str, Any] = field(default_factory=dict)
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
    def from_dict(cls, data: dict[str, Any], path: str | None = None) -> RunRecord:
        """Load a stored record of version 1 or 2.

        A record without ``record_version`` is version 1: it loads with the v2 fields empty (no code_hash,
        no environment, no inputs, timings or expectations) and outputs without a hash_method.

        Raises:
            RecordError: the record is of a newer version than this ubunye reads, or not a record at all.
        """
        where = f"{path}: " if path else ""
        if not isinstance(data, dict):
            msg = f"{where}not a run record (expected a JSON object)"
            raise RecordError(msg)
        version = data.get("record_version", 1)
        if not isinstance(version, int) or version < 1:
            msg = f"{where}bad record_version {version!r}"
            raise RecordError(msg)
        if version > RECORD_VERSION:
            msg = f"{where}record_version {version} is newer than this ubunye reads ({RECORD_VERSION}); upgrade ubunye"
            raise RecordError(msg)
        if version == 1:
            data = _v1_names(data)
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {k: v for k, v in data.items() if k in known and k != "extra"}
        missing = [k for k in ("run_id", "usecase", "package", "task") if k not in kwargs]
        if "run_id" in missing:
            msg = f"{where}not a run record (no run_id)"
            raise RecordError(msg)
        for k in missing:
            kwargs[k] = ""
        kwargs["record_version"] = version
        kwargs["extra"] = {k: v for k, v in data.items() if k not in known}
        try:
            kwargs["inputs"] = [_dataset(d) for d in data.get("inputs") or []]
            kwargs["outputs"] = [_dataset(d) for d in data.get("outputs") or []]
            kwargs["timings"] = [Timing(**_only(Timing, d)) for d in data.get("timings") or []]
            kwargs["expectations"] = [
                ExpectationResult(**_only(ExpectationResult, d)) for d in data.get("expectations") or []
            ]
            err = data.get("error")
            if isinstance(err, str):  # v1 kept the message only
                err = {"type": "Error", "message": err, "stage": "unknown"}
            kwargs["error"] = None if err is None else ErrorInfo(**_only(ErrorInfo, err))
        except (TypeError, AttributeError) as exc:
            msg = f"{where}malformed run record: {exc}"
            raise RecordError(msg) from exc
        if version == 1:
            for k in ("environment", "template_vars"):
                kwargs[k] = kwargs.get(k) or {}
        return cls(**kwargs)


#: Pre-0.7 records (ubunye's RunContext) named some fields differently.
_V1_ALIASES = {"task_name": "task", "duration_sec": "duration_seconds", "version": "task_version"}


def _v1_names(data: dict[str, Any]) -> dict[str, Any]:
    out = {_V1_ALIASES.get(k, k): v for k, v in data.items() if not (k in _V1_ALIASES and _V1_ALIASES[k] in data)}
    if out.get("status") == "error":
        out["status"] = "failed"
    return out


def _only(kind: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(kind)}
    return {k: v for k, v in data.items() if k in names}


def _dataset(data: dict[str, Any]) -> DatasetRecord:
    data = dict(data)
    if "data_hash" not in data and "hash" in data:  # some v1 writers
        data["data_hash"] = data["hash"]
    return DatasetRecord(**_only(DatasetRecord, data))
