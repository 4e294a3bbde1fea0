"""The shape of a task's config.yaml, validated key by key."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ubunye.exceptions import ConfigError

log = logging.getLogger("ubunye")

FORMATS = ("parquet", "csv", "json", "delta")
BACKENDS = ("spark", "pandas", "polars")
WRITE_MODES = ("overwrite", "append")
RULES = ("row_count", "not_null", "unique", "accepted_values", "expression")
SEVERITIES = ("error", "warn")

_TOP = {"MODEL", "VERSION", "ENGINE", "CONFIG"}
_ENGINE = {"backend", "spark_conf", "profiles"}
_PROFILE = {"backend", "spark_conf"}
_CONFIG = {"inputs", "outputs", "transform", "expectations", "monitors"}
_IO = {"format", "path", "table", "mode", "options", "storage_options", "version", "timestamp", "partition_by"}
_TRANSFORM = {"type", "query", "params"}
_LINEAGE = {"hash_inputs", "sample_fraction"}


@dataclass(frozen=True)
class IOConfig:
    """One input or output: a ``path`` (relative to the usecase_dir, or a URL) or a catalog ``table``."""

    name: str
    format: str | None = None
    path: str | None = None
    table: str | None = None
    mode: str = "overwrite"
    options: dict[str, Any] = field(default_factory=dict)
    storage_options: dict[str, Any] = field(default_factory=dict)
    version: int | None = None
    timestamp: str | None = None
    partition_by: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Expectations:
    """The rules for one input or output (``target`` is ``"inputs.<name>"`` or ``"outputs.<name>"``)."""

    target: str
    rules: dict[str, Any]
    severity: str = "error"


@dataclass(frozen=True)
class MonitorConfig:
    """One entry of CONFIG.monitors, e.g. ``lineage`` with its params."""

    type: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskConfig:
    """A loaded, rendered and validated config.yaml."""

    path: Path
    model: str
    version: str
    backend: str
    spark_conf: dict[str, str]
    inputs: dict[str, IOConfig]
    outputs: dict[str, IOConfig]
    transform: dict[str, Any]
    expectations: list[Expectations]
    monitors: list[MonitorConfig]
    rendered: dict[str, Any]


def _fail(path: Path, key: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}: {key}: {problem}")


def _mapping(path: Path, key: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(path, key, f"expected a mapping, got {type(value).__name__}")
    return value


def _known(path: Path, key: str, value: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise _fail(
            path, f"{key}.{unknown[0]}" if key else unknown[0], f"unknown key (allowed: {', '.join(sorted(allowed))})"
        )


def _io(path: Path, key: str, name: str, raw: Any, output: bool) -> IOConfig:
    value = _mapping(path, key, raw)
    _known(path, key, value, _IO)
    if ("path" in value) == ("table" in value):
        raise _fail(path, key, "give exactly one of 'path' or 'table'")
    fmt = value.get("format")
    if fmt is None and "path" in value:
        raise _fail(path, f"{key}.format", f"required with a path (one of {', '.join(FORMATS)})")
    if fmt is not None and fmt not in FORMATS:
        raise _fail(path, f"{key}.format", f"{fmt!r} is not one of {', '.join(FORMATS)}")
    mode = value.get("mode", "overwrite")
    if mode not in WRITE_MODES:
        raise _fail(path, f"{key}.mode", f"{mode!r} is not one of {', '.join(WRITE_MODES)}")
    if not output and "mode" in value:
        raise _fail(path, f"{key}.mode", "only outputs have a write mode")
    if ("version" in value or "timestamp" in value) and (output or (fmt != "delta" and "table" not in value)):
        raise _fail(path, key, "version/timestamp (time travel) apply to delta inputs only")
    if "version" in value and "timestamp" in value:
        raise _fail(path, key, "give version or timestamp, not both")
    version = value.get("version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise _fail(path, f"{key}.version", f"expected an integer, got {version!r}")
    parts = value.get("partition_by", [])
    if isinstance(parts, str):
        parts = [parts]
    return IOConfig(
        name=name,
        format=fmt,
        path=None if value.get("path") is None else str(value["path"]),
        table=value.get("table"),
        mode=mode,
        options=_mapping(path, f"{key}.options", value.get("options")),
        storage_options=_mapping(path, f"{key}.storage_options", value.get("storage_options")),
        version=version,
        timestamp=None if value.get("timestamp") is None else str(value["timestamp"]),
        partition_by=list(parts),
    )


def _expectations(path: Path, raw: Any, inputs: dict, outputs: dict) -> list[Expectations]:
    out = []
    for name, rules in _mapping(path, "CONFIG.expectations", raw).items():
        key = f"CONFIG.expectations.{name}"
        if name.startswith(("inputs.", "outputs.")):
            target = name
        elif name in outputs and name in inputs:
            raise _fail(
                path, key, f"{name!r} is both an input and an output: write 'inputs.{name}' or 'outputs.{name}'"
            )
        elif name in outputs:
            target = f"outputs.{name}"
        elif name in inputs:
            target = f"inputs.{name}"
        else:
            raise _fail(path, key, "names no configured input or output")
        side, _, short = target.partition(".")
        if short not in (inputs if side == "inputs" else outputs):
            raise _fail(path, key, f"no {side[:-1]} named {short!r}")
        rules = dict(_mapping(path, key, rules))
        severity = rules.pop("severity", "error")
        if severity not in SEVERITIES:
            raise _fail(path, f"{key}.severity", f"{severity!r} is not one of {', '.join(SEVERITIES)}")
        _known(path, key, rules, set(RULES))
        _check_rules(path, key, rules)
        out.append(Expectations(target, rules, severity))
    return out


def _check_rules(path: Path, key: str, rules: dict[str, Any]) -> None:
    if "row_count" in rules:
        rc = _mapping(path, f"{key}.row_count", rules["row_count"])
        _known(path, f"{key}.row_count", rc, {"min", "max"})
    for rule in ("not_null", "unique"):
        if rule in rules and not isinstance(rules[rule], list):
            raise _fail(path, f"{key}.{rule}", "expected a list of column names")
    if "accepted_values" in rules:
        for col, values in _mapping(path, f"{key}.accepted_values", rules["accepted_values"]).items():
            if not isinstance(values, list):
                raise _fail(path, f"{key}.accepted_values.{col}", "expected a list of values")
    if "expression" in rules:
        exprs = rules["expression"]
        if not isinstance(exprs, str | list):
            raise _fail(path, f"{key}.expression", "expected a SQL boolean expression or a list of them")


def _monitors(path: Path, raw: Any) -> list[MonitorConfig]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _fail(path, "CONFIG.monitors", "expected a list, e.g. [lineage]")
    out = []
    for i, item in enumerate(raw):
        key = f"CONFIG.monitors[{i}]"
        if isinstance(item, str):
            kind, params = item, {}
        elif isinstance(item, dict) and "type" in item:
            _known(path, key, item, {"type", "params"})
            kind, params = item["type"], _mapping(path, f"{key}.params", item.get("params"))
        elif isinstance(item, dict) and len(item) == 1:
            ((kind, params),) = item.items()
            params = _mapping(path, f"{key}.{kind}", params)
        else:
            raise _fail(path, key, "expected a name or {type: ..., params: {...}}")
        if kind == "lineage":
            _known(path, f"{key}.params", params, _LINEAGE)
            if "sample_fraction" in params:
                log.warning("%s: %s.params.sample_fraction is deprecated and ignored: every row is hashed", path, key)
        out.append(MonitorConfig(kind, dict(params)))
    return out


def build(path: Path, doc: dict[str, Any], mode: str | None = None) -> TaskConfig:
    """Validate a rendered config document into a TaskConfig (errors name the file and the key).

    ``ENGINE.profiles.<mode>`` (backend, spark_conf) is laid over ENGINE when ``mode`` names a profile.
    """
    _known(path, "", doc, _TOP)
    model = doc.get("MODEL", "etl")
    if model not in ("etl", "ml"):
        raise _fail(path, "MODEL", f"{model!r} is not one of etl, ml")
    engine = _mapping(path, "ENGINE", doc.get("ENGINE"))
    _known(path, "ENGINE", engine, _ENGINE)
    backend = engine.get("backend", "pandas")
    spark_conf = {str(k): str(v) for k, v in _mapping(path, "ENGINE.spark_conf", engine.get("spark_conf")).items()}
    for name, profile in _mapping(path, "ENGINE.profiles", engine.get("profiles")).items():
        profile = _mapping(path, f"ENGINE.profiles.{name}", profile)
        _known(path, f"ENGINE.profiles.{name}", profile, _PROFILE)
        if name == mode:
            backend = profile.get("backend", backend)
            extra = _mapping(path, f"ENGINE.profiles.{name}.spark_conf", profile.get("spark_conf"))
            spark_conf.update({str(k): str(v) for k, v in extra.items()})
    if backend not in BACKENDS:
        raise _fail(path, "ENGINE.backend", f"{backend!r} is not one of {', '.join(BACKENDS)}")
    cfg = _mapping(path, "CONFIG", doc.get("CONFIG"))
    _known(path, "CONFIG", cfg, _CONFIG)
    inputs = {
        n: _io(path, f"CONFIG.inputs.{n}", n, v, False)
        for n, v in _mapping(path, "CONFIG.inputs", cfg.get("inputs")).items()
    }
    outputs = {
        n: _io(path, f"CONFIG.outputs.{n}", n, v, True)
        for n, v in _mapping(path, "CONFIG.outputs", cfg.get("outputs")).items()
    }
    if not outputs:
        raise _fail(path, "CONFIG.outputs", "a task needs at least one output")
    transform = dict(_mapping(path, "CONFIG.transform", cfg.get("transform")))
    _known(path, "CONFIG.transform", transform, _TRANSFORM)
    transform.setdefault("type", "task")
    if transform["type"] not in ("task", "sql"):
        raise _fail(path, "CONFIG.transform.type", f"{transform['type']!r} is not one of task, sql")
    if transform["type"] == "sql":
        if not isinstance(transform.get("query"), str):
            raise _fail(path, "CONFIG.transform.query", "a sql transform needs a query")
        if len(outputs) != 1:
            raise _fail(path, "CONFIG.outputs", "a sql transform has exactly one output")
    return TaskConfig(
        path=path,
        model=model,
        version=str(doc.get("VERSION", "0.0.0-dev")),
        backend=backend,
        spark_conf=spark_conf,
        inputs=inputs,
        outputs=outputs,
        transform=transform,
        expectations=_expectations(path, cfg.get("expectations"), inputs, outputs),
        monitors=_monitors(path, cfg.get("monitors")),
        rendered=doc,
    )
