"""The shape of a task's config.yaml, validated key by key and strictly: a wrong type is an error, never coerced.

Example:
    >>> build(Path("c.yaml"), {"CONFIG": {"outputs": {"o": {"format": "csv", "path": 3}}}})
    Traceback (most recent call last):
    ubunye.exceptions.ConfigError: c.yaml: CONFIG.outputs.o.path: expected a string, got integer
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ubunye.config import checks as check
from ubunye.visible import invisible

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
_IO |= {"allow_empty", "key", "buckets", "profile"}
#: Row buckets of a profile (docs/rows-v1.md section 12.2): a power of two from 1 to 65,536.
DEFAULT_BUCKETS, MAX_BUCKETS = 256, 65_536
#: The largest Delta version (a signed 64-bit integer).
MAX_VERSION = 2**63 - 1
_TRANSFORM = {"type", "query", "params"}
_LINEAGE = {"hash_inputs", "sample_fraction"}
# A dataset name becomes a SQL view name and a record name: nothing that needs quoting.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


@dataclass(frozen=True)
class IOConfig:
    """One input or output: a ``path`` (relative to the usecase_dir, or a URL) or a catalog ``table``.

    ``allow_empty`` (inputs only): a folder with no data files reads as an empty table instead of failing.
    ``mode`` and ``partition_by`` (outputs only): how the output is written.
    ``profile``, ``key``, ``buckets``: the record's column fingerprints and row buckets (docs/rows-v1.md section
    12); ``profile: false`` records the rows-v1 hash alone, ``buckets: 0`` the column fingerprints without buckets.
    """

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
    allow_empty: bool = False
    profile: bool = True
    key: list[str] = field(default_factory=list)
    buckets: int = DEFAULT_BUCKETS


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
    """A loaded, rendered and validated config.yaml; ``env_used``: the environment variables its templates read."""

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
    env_used: dict[str, str] = field(default_factory=dict)


def _io(path: Path, key: str, name: str, raw: object, output: bool) -> IOConfig:
    if not (isinstance(name, str) and _NAME.fullmatch(name)):
        raise check.fail(path, key, "a dataset name is letters, digits and _, not starting with a digit, at most 128")
    value = check.mapping(path, key, raw)
    if output and "allow_empty" in value:
        raise check.fail(path, f"{key}.allow_empty", "only inputs may be allowed to be empty")
    check.known(path, key, value, _IO)
    if ("path" in value) == ("table" in value):
        raise check.fail(path, key, "give exactly one of 'path' or 'table'")
    fmt = None if "format" not in value else check.string(path, f"{key}.format", value["format"], FORMATS)
    location = None
    if "path" in value:
        location = check.string(path, f"{key}.path", value["path"])
        if fmt is None:
            raise check.fail(path, f"{key}.format", f"required with a path (one of {', '.join(FORMATS)})")
        check.location(path, f"{key}.path", location)
    table = None if "table" not in value else check.string(path, f"{key}.table", value["table"])
    if table is not None and fmt is not None and not output:
        # Read as the catalog stores it: the format would be recorded, never used.
        msg = "an input table is read as the catalog stores it: leave format out (it would be ignored)"
        raise check.fail(path, f"{key}.format", msg)
    odd = invisible(table or "")
    if odd:  # a table name is shown and recorded: nothing in it may hide or reorder what is shown
        raise check.fail(path, f"{key}.table", f"contains {odd}")
    if not output and "mode" in value:
        raise check.fail(path, f"{key}.mode", "only outputs have a write mode")
    if not output and "partition_by" in value:  # every engine reads an input whole: it would be ignored
        msg = "only outputs are written partitioned (an input is read whole): leave it out"
        raise check.fail(path, f"{key}.partition_by", msg)
    mode = check.string(path, f"{key}.mode", value.get("mode", "overwrite"), WRITE_MODES)
    if ("version" in value or "timestamp" in value) and (output or (fmt != "delta" and table is None)):
        raise check.fail(path, key, "version/timestamp (time travel) apply to delta inputs only")
    if "version" in value and "timestamp" in value:
        raise check.fail(path, key, "give version or timestamp, not both")
    version = None if "version" not in value else check.integer(path, f"{key}.version", value["version"])
    if version is not None and version > MAX_VERSION:  # Delta versions are int64: deltalake cannot take more
        raise check.fail(path, f"{key}.version", f"expected an integer from 0 to {MAX_VERSION}, got {version}")
    timestamp = None if "timestamp" not in value else check.timestamp(path, f"{key}.timestamp", value["timestamp"])
    parts = value.get("partition_by", [])
    parts = [check.string(path, f"{key}.partition_by", parts)] if isinstance(parts, str) else parts
    partition_by = check.strings(path, f"{key}.partition_by", parts)
    twice = sorted({p for p in partition_by if partition_by.count(p) > 1})
    if twice:
        raise check.fail(path, f"{key}.partition_by", f"names {twice[0]!r} twice")
    profile, keys, buckets = _profile(path, key, value)
    options = check.scalars(path, f"{key}.options", value.get("options"))
    # Spark reads option names in any case
    seps = {str(k).lower(): v for k, v in options.items() if str(k).lower() in ("sep", "delimiter")}
    if len(seps) == 2 and str(seps["sep"]) != str(seps["delimiter"]):
        msg = f"gives sep={seps['sep']!r} and delimiter={seps['delimiter']!r}, Spark's two names for one "
        msg += "option (one would be ignored): give one"
        raise check.fail(path, f"{key}.options", msg)
    storage = check.mapping(path, f"{key}.storage_options", value.get("storage_options"))
    return IOConfig(
        name=name,
        format=fmt,
        path=location,
        table=table,
        mode=mode,
        options=options,
        # A mapping whose values are left as written: fsspec takes nested ones (client_kwargs, headers).
        storage_options=storage,
        version=version,
        timestamp=timestamp,
        partition_by=partition_by,
        allow_empty=check.boolean(path, f"{key}.allow_empty", value.get("allow_empty", False)),
        profile=profile,
        key=keys,
        buckets=buckets,
    )


def _profile(path: Path, key: str, value: dict[str, object]) -> tuple[bool, list[str], int]:
    """``profile``, ``key`` and ``buckets`` of one dataset, checked (whether the key columns exist is known only
    once the frame is there: the run records that as the dataset's profile_error)."""
    profile = check.boolean(path, f"{key}.profile", value.get("profile", True))
    raw = value.get("key", [])
    keys = check.strings(path, f"{key}.key", [raw] if isinstance(raw, str) else raw)
    if "key" in value and not keys:
        raise check.fail(path, f"{key}.key", "an empty key: name at least one column, or leave key out")
    seen = {k for k in keys if keys.count(k) > 1}
    if seen:
        raise check.fail(path, f"{key}.key", f"names {sorted(seen)[0]!r} twice")
    buckets = check.integer(path, f"{key}.buckets", value.get("buckets", DEFAULT_BUCKETS))
    if buckets and (buckets < 0 or buckets > MAX_BUCKETS or buckets & (buckets - 1)):
        raise check.fail(
            path, f"{key}.buckets", f"expected 0 (none) or a power of two from 1 to {MAX_BUCKETS}, got {buckets}"
        )
    if not profile and ("key" in value or "buckets" in value):
        raise check.fail(path, key, "key/buckets are part of the profile: drop them or profile: false")
    if keys and not buckets:
        raise check.fail(path, f"{key}.key", "a key places rows in buckets: give buckets > 0 or leave key out")
    return profile, keys, buckets


def _expectations(
    path: Path, raw: object, inputs: dict[str, IOConfig], outputs: dict[str, IOConfig]
) -> list[Expectations]:
    out = []
    for name, rules in check.mapping(path, "CONFIG.expectations", raw).items():
        key = f"CONFIG.expectations.{name}"
        if name.startswith(("inputs.", "outputs.")):
            target = name
        elif name in outputs and name in inputs:
            raise check.fail(
                path, key, f"{name!r} is both an input and an output: write 'inputs.{name}' or 'outputs.{name}'"
            )
        elif name in outputs:
            target = f"outputs.{name}"
        elif name in inputs:
            target = f"inputs.{name}"
        else:
            raise check.fail(path, key, "names no configured input or output")
        side, _, short = target.partition(".")
        if short not in (inputs if side == "inputs" else outputs):
            raise check.fail(path, key, f"no {side[:-1]} named {short!r}")
        rules = dict(check.mapping(path, key, rules))
        severity = check.string(path, f"{key}.severity", rules.pop("severity", "error"), SEVERITIES)
        check.known(path, key, rules, set(RULES))
        if not rules:  # a target with no rule would check nothing and report a pass
            raise check.fail(path, key, f"no rules (give at least one of {', '.join(RULES)})")
        _check_rules(path, key, rules)
        out.append(Expectations(target, rules, severity))
    return out


def _check_rules(path: Path, key: str, rules: dict[str, object]) -> None:
    # A rule that names nothing (`unique: []`, `row_count: {}`) checks nothing: refused, not reported as a pass.
    for rule in ("row_count", "not_null", "unique", "accepted_values"):
        if rule in rules and rules[rule] in ([], {}, None):
            what = "min and/or max" if rule == "row_count" else "at least one column"
            raise check.fail(path, f"{key}.{rule}", f"is empty: give {what}, or leave the rule out")
    if "row_count" in rules:
        rc = check.mapping(path, f"{key}.row_count", rules["row_count"])
        check.known(path, f"{key}.row_count", rc, {"min", "max"})
        bounds = {k: check.integer(path, f"{key}.row_count.{k}", v) for k, v in rc.items()}
        if bounds.get("min", 0) > bounds.get("max", bounds.get("min", 0)):
            raise check.fail(path, f"{key}.row_count", f"min {bounds['min']} is above max {bounds['max']}")
    if "not_null" in rules:
        check.strings(path, f"{key}.not_null", rules["not_null"])
    if "unique" in rules:
        if not isinstance(rules["unique"], list):
            raise check.expected(path, f"{key}.unique", "a list of column names (or lists of them)", rules["unique"])
        for i, item in enumerate(rules["unique"]):
            if isinstance(item, list) and not item:
                raise check.fail(path, f"{key}.unique[{i}]", "an empty compound key")
            if isinstance(item, list):
                check.strings(path, f"{key}.unique[{i}]", item)
            else:
                check.string(path, f"{key}.unique[{i}]", item)
    if "accepted_values" in rules:
        for col, values in check.mapping(path, f"{key}.accepted_values", rules["accepted_values"]).items():
            if not isinstance(values, list):
                raise check.expected(path, f"{key}.accepted_values.{col}", "a list of values", values)
            if not values:  # no value accepted would refuse every row; an empty list is a slip, not a rule
                msg = "is empty: give the values the column may hold, or leave the column out"
                raise check.fail(path, f"{key}.accepted_values.{col}", msg)
            for i, v in enumerate(values):
                check.scalar(path, f"{key}.accepted_values.{col}[{i}]", v, null=True)
                if isinstance(v, float) and not math.isfinite(v):  # YAML's .inf / .nan: SQL has no literal for it
                    msg = f"is {v}, which SQL has no literal for (it would be read as a column named {str(v)!r}); "
                    msg += "check it with an expression rule instead, e.g. NOT isnan(col)"
                    raise check.fail(path, f"{key}.accepted_values.{col}[{i}]", msg)
    if "expression" in rules:
        exprs = rules["expression"]
        if exprs == []:
            raise check.fail(path, f"{key}.expression", "an empty list")
        if not isinstance(exprs, str | list):
            raise check.expected(path, f"{key}.expression", "a SQL boolean expression or a list of them", exprs)
        for i, expr in enumerate([exprs] if isinstance(exprs, str) else exprs):
            check.string(path, f"{key}.expression" + ("" if isinstance(exprs, str) else f"[{i}]"), expr)


def _monitors(path: Path, raw: object) -> list[MonitorConfig]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise check.fail(path, "CONFIG.monitors", "expected a list, e.g. [lineage]")
    out = []
    lineage_at: str | None = None
    for i, item in enumerate(raw):
        key = f"CONFIG.monitors[{i}]"
        if isinstance(item, str):
            kind, params, pkey = item, {}, key
        elif isinstance(item, dict) and "type" in item:
            check.known(path, key, item, {"type", "params"})
            kind, pkey = check.string(path, f"{key}.type", item["type"]), f"{key}.params"
            params = check.mapping(path, pkey, item.get("params"))
        elif isinstance(item, dict) and len(item) == 1:
            ((kind, params),) = item.items()
            pkey = f"{key}.{kind}"
            params = check.mapping(path, pkey, params)
        else:
            raise check.fail(path, key, "expected a name or {type: ..., params: {...}}")
        if kind == "lineage":
            # One run has one record: a second entry could only contradict the first (hash_inputs true and false).
            if lineage_at is not None:
                raise check.fail(path, key, f"lineage is listed twice (first at {lineage_at}): keep one entry")
            lineage_at = key
            check.known(path, pkey, params, _LINEAGE)
            if "hash_inputs" in params:
                check.boolean(path, f"{pkey}.hash_inputs", params["hash_inputs"])
            if "sample_fraction" in params:
                check.number(path, f"{pkey}.sample_fraction", params["sample_fraction"])
                log.warning("%s: %s.sample_fraction is deprecated and ignored: every row is hashed", path, pkey)
        elif kind == "openlineage":  # ubunye.lineage.openlineage.OpenLineageMonitor
            check.known(path, pkey, params, {"namespace", "transport", "table_namespace"})
            for name in ("namespace", "table_namespace"):
                if name in params:
                    check.string(path, f"{pkey}.{name}", params[name])
            if "transport" in params:
                check.mapping(path, f"{pkey}.transport", params["transport"])
        elif not re.fullmatch(r"[\w.]+:[\w.]+", kind):  # module:Class monitors get their params untouched
            raise check.fail(path, key, f"unknown monitor {kind[:60]!r} (use lineage, openlineage or module:Class)")
        out.append(MonitorConfig(kind, dict(params)))
    return out


def _engine(path: Path, doc: dict[str, Any], mode: str | None) -> tuple[str, dict[str, str]]:
    engine = check.mapping(path, "ENGINE", doc.get("ENGINE"))
    check.known(path, "ENGINE", engine, _ENGINE)
    backend = check.string(path, "ENGINE.backend", engine.get("backend", "pandas"), BACKENDS)
    spark_conf = check.spark_conf(path, "ENGINE.spark_conf", engine.get("spark_conf"))
    # Every profile is checked, not only the one chosen: a typo in `prod` must fail on the dev run too.
    profiles = check.mapping(path, "ENGINE.profiles", engine.get("profiles"))
    # With profiles declared, a mode naming none of them is a typo (`prd`), not a request for the default
    # backend; without any, mode is only a template variable. An empty mode is no mode.
    if profiles and mode and mode not in profiles:
        names = ", ".join(sorted(map(str, profiles)))
        raise check.fail(path, "ENGINE.profiles", f"no profile for mode {mode[:60]!r} (profiles: {names})")
    for name, profile in profiles.items():
        key = f"ENGINE.profiles.{name}"
        profile = check.mapping(path, key, profile)
        check.known(path, key, profile, _PROFILE)
        chosen = check.string(path, f"{key}.backend", profile.get("backend", backend), BACKENDS)
        extra = check.spark_conf(path, f"{key}.spark_conf", profile.get("spark_conf"))
        if name == mode:
            backend = chosen
            spark_conf.update(extra)
    return backend, spark_conf


def _version(path: Path, value: object) -> str:
    if isinstance(value, float):
        # YAML reads 1.10 as the number 1.1 and .nan as NaN: the text written is lost before it gets here.
        raise check.fail(path, "VERSION", f'a number ({value!r}) is not a version: quote it (VERSION: "1.10")')
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise check.expected(path, "VERSION", "a string or a number", value)
    text = str(value)
    # recorded as the task's version and shown by compare: not empty, nothing a terminal acts on or hides
    if not text.strip():
        raise check.fail(path, "VERSION", "is empty: give the task's version, or leave VERSION out")
    odd = invisible(text)
    if odd:
        raise check.fail(path, "VERSION", f"contains {odd}")
    return text


def build(
    path: Path, doc: dict[str, Any], mode: str | None = None, env_used: Mapping[str, str] | None = None
) -> TaskConfig:
    """Validate a rendered config document into a TaskConfig (errors name the file and the key).

    ``ENGINE.profiles.<mode>`` (backend, spark_conf) is laid over ENGINE when ``mode`` names a profile.
    """
    check.known(path, "", doc, _TOP)
    model = check.string(path, "MODEL", doc.get("MODEL", "etl"), ("etl", "ml"))
    backend, spark_conf = _engine(path, doc, mode)
    cfg = check.mapping(path, "CONFIG", doc.get("CONFIG"))
    check.known(path, "CONFIG", cfg, _CONFIG)
    inputs = {
        n: _io(path, f"CONFIG.inputs.{n}", n, v, False)
        for n, v in check.mapping(path, "CONFIG.inputs", cfg.get("inputs")).items()
    }
    # Each input becomes a SQL view, and SQL (DuckDB, Spark) does not tell `orders` from `Orders`: one would be
    # read in place of the other without a word.
    views: dict[str, str] = {}
    for name in inputs:
        first = views.setdefault(name.lower(), name)
        if first != name:
            msg = f"differs from input {first!r} only in case, and SQL reads the two as one view: rename one"
            raise check.fail(path, f"CONFIG.inputs.{name}", msg)
    outputs = {
        n: _io(path, f"CONFIG.outputs.{n}", n, v, True)
        for n, v in check.mapping(path, "CONFIG.outputs", cfg.get("outputs")).items()
    }
    if not outputs:
        raise check.fail(path, "CONFIG.outputs", "a task needs at least one output")
    transform = dict(check.mapping(path, "CONFIG.transform", cfg.get("transform")))
    check.known(path, "CONFIG.transform", transform, _TRANSFORM)
    transform["type"] = check.string(path, "CONFIG.transform.type", transform.get("type", "task"), ("task", "sql"))
    if "params" in transform:
        transform["params"] = check.mapping(path, "CONFIG.transform.params", transform["params"])
    if transform["type"] == "sql" and "query" not in transform:
        raise check.fail(path, "CONFIG.transform.query", "a sql transform needs a query")
    # A key the chosen type never reads would be silently ignored: a query beside the Task that runs instead, or
    # params nothing passes to a query.
    if transform["type"] == "task" and "query" in transform:
        msg = "only a sql transform has a query (this one is type task: transformations.py runs and the query is "
        raise check.fail(path, "CONFIG.transform.query", msg + "ignored): add type: sql, or remove the query")
    if transform["type"] == "sql" and "params" in transform:
        msg = "a sql transform takes no params (nothing passes them to the query): write the values into the query"
        raise check.fail(path, "CONFIG.transform.params", msg)
    if "query" in transform:
        check.string(path, "CONFIG.transform.query", transform["query"])
    if transform["type"] == "sql" and len(outputs) != 1:
        raise check.fail(path, "CONFIG.outputs", "a sql transform has exactly one output")
    return TaskConfig(
        path=path,
        model=model,
        version=_version(path, doc.get("VERSION", "0.0.0-dev")),
        backend=backend,
        spark_conf=spark_conf,
        inputs=inputs,
        outputs=outputs,
        transform=transform,
        expectations=_expectations(path, cfg.get("expectations"), inputs, outputs),
        monitors=_monitors(path, cfg.get("monitors")),
        rendered=doc,
        env_used=dict(env_used or {}),
    )
