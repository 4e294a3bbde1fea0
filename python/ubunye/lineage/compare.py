"""Compare two run records: did they produce the same data, and if not, what moved (pure functions, no I/O).

Data verdicts per input and output:

- ``unchanged`` / ``changed``: both sides hashed with the same ``hash_method``.
- ``not comparable``: a ``hash_method`` missing or different (a v1 record against a v2 one).
- ``unknown``: a data hash missing on either side (``hash_error`` says why); never ``unchanged``. Also when the
  data hashes are equal but the records' row counts, schemas (or schema hashes), column fingerprints (or the
  type, null or NaN count of a column of equal fingerprints) or buckets say otherwise (a damaged or edited
  record): equal hashes are then no evidence of the same data.
- ``added`` / ``removed``: the dataset is in one run only.

Example:
    >>> from ubunye.lineage.record import DatasetRecord, RunRecord
    >>> out = DatasetRecord("scored", data_hash="sha256:1", hash_method="rows-v1")
    >>> a = RunRecord(run_id="a", usecase="u", package="p", task="t", status="success", outputs=[out])
    >>> b = RunRecord(run_id="b", usecase="u", package="p", task="t", status="success", outputs=[out])
    >>> compare_records(a, b).summary, compare_records(a, b).exit_code
    ('same data', 0)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ubunye.lineage.profiles import (
    BucketChanges,
    ColumnChanges,
    compare_buckets,
    compare_columns,
    contradiction,
    packed_buckets,
)
from ubunye.lineage.record import DatasetRecord, ExpectationResult, MalformedRecord, RunRecord, check_datasets

UNCHANGED, CHANGED, NOT_COMPARABLE, UNKNOWN = "unchanged", "changed", "not comparable", "unknown"
ADDED, REMOVED = "added", "removed"
#: Environment facts compared one by one (packages are compared by name, see ``PackageMove``).
ENV_FACTS = ("python_version", "python_implementation", "platform", "machine", "engine")


@dataclass(frozen=True)
class DatasetDiff:
    """One input or output of both runs: the data verdict (and why), row counts and schema; with profiles
    (docs/rows-v1.md section 12) on both sides, which columns and how many buckets differ; Delta versions."""

    side: str
    name: str
    data: str
    reason: str | None
    rows_a: int | None
    rows_b: int | None
    schema: str
    schema_a: str | None
    schema_b: str | None
    hash_a: str | None
    hash_b: str | None
    method_a: str | None
    method_b: str | None
    location_a: str | None
    location_b: str | None
    columns: ColumnChanges | None = None
    buckets: BucketChanges | None = None
    version_a: int | None = None
    version_b: int | None = None
    profile_note: str | None = None
    #: Why a side's bucket field could not be read (``run B: <path>: outputs[0].buckets: ...``), else None.
    buckets_error: str | None = None

    def detail(self) -> str:
        """What moved inside a changed dataset: ``columns a, b; 3 of 256 key buckets`` ("" when not known)."""
        parts = []
        if self.columns is not None:
            parts.append(self.columns.describe())
        if self.buckets is not None and self.buckets.differing:
            parts.append(self.buckets.describe())
        return "; ".join(p for p in parts if p)

    def versions(self) -> str:
        """``Delta version 41 -> 42`` when both runs recorded a version and they differ, else ""."""
        if self.version_a is None or self.version_b is None or self.version_a == self.version_b:
            return ""
        return f"Delta version {self.version_a} -> {self.version_b}"


@dataclass(frozen=True)
class FieldDiff:
    """One fact of both runs: ``unchanged``, ``changed`` or ``unknown`` (missing on a side)."""

    name: str
    status: str
    a: object
    b: object


@dataclass(frozen=True)
class PackageMove:
    """A package whose version differs (None: not installed)."""

    name: str
    old: str | None
    new: str | None

    def __str__(self) -> str:
        return f"{self.name} {self.old or 'absent'} -> {self.new or 'absent'}"


@dataclass(frozen=True)
class ExpectationDiff:
    """A rule whose outcome differs (``passed_*`` is None when the rule was not checked in that run)."""

    target: str
    rule: str
    column: str | None
    passed_a: bool | None
    passed_b: bool | None
    observed_a: object
    observed_b: object
    #: The rule's params (run B's, else A's): which expression, which bounds; tells apart rules of one name.
    params: object = None


@dataclass(frozen=True)
class TimingPair:
    """Seconds of one stage in both runs (informative only, never a change)."""

    stage: str
    name: str | None
    a: float | None
    b: float | None


@dataclass(frozen=True)
class Comparison:
    """What ``ubunye lineage compare`` reports; ``summary`` first, ``exit_code`` for CI."""

    run_a: str
    run_b: str
    outputs: list[DatasetDiff]
    inputs: list[DatasetDiff]
    status: FieldDiff
    code: FieldDiff
    config: FieldDiff
    config_keys: list[str]
    template_vars: list[FieldDiff]
    environment: FieldDiff
    environment_facts: list[FieldDiff]
    packages: list[PackageMove]
    backend: FieldDiff
    ubunye_version: FieldDiff
    expectations: list[ExpectationDiff]
    timings: list[TimingPair]
    duration: TimingPair
    record_versions: tuple[int, int] = (2, 2)
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``same``, ``changed``, ``not comparable`` or ``unknown``: the outputs' data, worst first."""
        states = {d.data for d in self.outputs}
        if states & {CHANGED, ADDED, REMOVED}:
            return CHANGED
        if NOT_COMPARABLE in states:
            return NOT_COMPARABLE
        if UNKNOWN in states or not self.outputs:
            return UNKNOWN
        return "same"

    @property
    def unfinished(self) -> list[str]:
        """The runs that did not succeed, as ``run B failed``: the rows such a run computed (and its record
        hashed) need not be what its outputs hold."""
        pairs = (("A", self.status.a), ("B", self.status.b))
        return [f"run {label} {state}" for label, state in pairs if state is not None and state != "success"]

    @property
    def exit_code(self) -> int:
        """0 same data from two successful runs; 1 changed, not comparable or unknown (the same data cannot be
        shown), or a run that did not succeed (the same rows computed are not the same data written)."""
        return 0 if self.verdict == "same" and not self.unfinished else 1

    @property
    def moved(self) -> list[str]:
        """What differs between the runs that can explain a change, e.g. ``code``, ``input orders``."""
        out = []
        if self.code.status == CHANGED:
            out.append("code")
        if self.config.status == CHANGED:
            keys = ", ".join(self.config_keys[:3]) + (", ..." if len(self.config_keys) > 3 else "")
            out.append(f"config ({keys})" if keys else "config")
        tv = [f"{t.name} {t.a} -> {t.b}" for t in self.template_vars if t.status == CHANGED]
        if tv:
            out.append(f"template variables ({', '.join(tv)})")
        for d in self.inputs:
            if d.data in (CHANGED, ADDED, REMOVED):
                why = "; ".join(x for x in (d.versions(), d.detail()) if x) if d.data == CHANGED else d.data
                out.append(f"input {d.name}" + (f" ({why})" if why else ""))
        env = [f"{f.name} {f.a} -> {f.b}" for f in self.environment_facts if f.status == CHANGED]
        env += [str(p) for p in self.packages]
        if env:
            out.append(f"environment ({', '.join(env)})")
        elif self.environment.status == CHANGED:
            out.append("environment")
        for f in (self.backend, self.ubunye_version):
            if f.status == CHANGED:
                out.append(f"{f.name} ({f.a} -> {f.b})")
        return out

    @property
    def summary(self) -> str:
        """One line: the verdict on the data, then what moved."""
        parts = []
        named = {
            CHANGED: [d for d in self.outputs if d.data in (CHANGED, ADDED, REMOVED)],
            NOT_COMPARABLE: [d for d in self.outputs if d.data == NOT_COMPARABLE],
            UNKNOWN: [d for d in self.outputs if d.data == UNKNOWN],
        }
        if self.verdict == "same" and self.unfinished:  # said first: "same data" alone read as a good night
            parts.append(f"same rows computed, but {' and '.join(self.unfinished)}: its outputs may not hold them")
        elif self.verdict == "same":
            parts.append("same data")
        elif not self.outputs:
            parts.append("data unknown: no outputs recorded")
        for state, items in named.items():
            if items:
                names = ", ".join(f"output {d.name}{_why(d)}" for d in items)
                parts.append(f"data {state}: {names}" if not parts else f"{state}: {names}")
        damaged = [d for d in self.inputs if d.data == UNKNOWN and d.hash_a and d.hash_b]
        if damaged and self.verdict == "same":  # the outputs' data decide; a record damaged is said all the same
            parts.append("input records damaged: " + ", ".join(f"input {d.name} ({d.reason})" for d in damaged))
        unreadable = [f"{d.side} {d.name} ({d.buckets_error})" for d in self.outputs + self.inputs if d.buckets_error]
        if unreadable:  # the verdict stands on the data hashes; what the buckets would have said is not known
            parts.append("buckets could not be read: " + ", ".join(unreadable))
        moved = self.moved
        if moved:
            parts.append("what moved: " + ", ".join(moved))
        unknown = [d for d in self.inputs if d.data in (UNKNOWN, NOT_COMPARABLE)]
        if unknown and self.verdict != "same":  # an input whose data cannot be compared may be what moved
            parts.append("inputs not compared: " + ", ".join(f"input {d.name} ({d.reason})" for d in unknown))
        elif not moved and self.verdict != "same":
            parts.append("nothing recorded moved")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with the verdict, summary and exit code on top."""
        return {
            "verdict": self.verdict,
            "summary": self.summary,
            "exit_code": self.exit_code,
            "moved": self.moved,
            **asdict(self),
        }


#: The reason of a dataset missing from a run that did not finish (it may have ended before recording it).
_UNRECORDED = "not in run "


def _why(d: DatasetDiff) -> str:
    if d.data == CHANGED:
        detail = d.detail()
        return f" ({detail})" if detail else ""
    if d.data in (ADDED, REMOVED):
        return f" ({d.data})"
    if d.data == NOT_COMPARABLE:
        return f" ({d.reason})"
    if d.data == UNKNOWN:
        unrecorded = d.reason is not None and d.reason.startswith(_UNRECORDED)
        return f" ({d.reason})" if d.reason and (unrecorded or (d.hash_a and d.hash_b)) else " (no data hash)"
    return ""


def compare_datasets(side: str, a: DatasetRecord | None, b: DatasetRecord | None, *,
                     fields: tuple[str, str] = ("buckets", "buckets"),
                     paths: tuple[str | None, str | None] = (None, None)) -> DatasetDiff:  # fmt: skip
    """The verdict on one dataset present in run A, run B or both.

    ``fields`` and ``paths`` name each side's bucket field and record file (``outputs[0].buckets``,
    ``/r/b.json``) in the note when a side's buckets cannot be read.

    Example:
        >>> old = DatasetRecord("o", data_hash="sha256:1")  # a v1 record: no hash_method
        >>> new = DatasetRecord("o", data_hash="sha256:1", hash_method="rows-v1")
        >>> compare_datasets("output", old, new).data
        'not comparable'
        >>> compare_datasets("output", DatasetRecord("o"), DatasetRecord("o")).data
        'unknown'
    """
    x, y = a or DatasetRecord(""), b or DatasetRecord("")
    reason: str | None
    if a is None or b is None:
        data, reason = (ADDED, "only in run B") if a is None else (REMOVED, "only in run A")
    elif x.data_hash is None or y.data_hash is None:
        data, reason = UNKNOWN, _missing_reason(x, y)
    elif not x.hash_method or not y.hash_method or x.hash_method != y.hash_method:
        data = NOT_COMPARABLE
        reason = f"hash_method {x.hash_method or 'none'} -> {y.hash_method or 'none'}"
    else:
        data, reason = (UNCHANGED, None) if x.data_hash == y.data_hash else (CHANGED, None)
    if x.schema_hash and y.schema_hash:
        schema = UNCHANGED if x.schema_hash == y.schema_hash else CHANGED
    elif x.schema and y.schema:
        schema = UNCHANGED if x.schema == y.schema else CHANGED
    else:
        schema = UNKNOWN
    columns, buckets, note, unreadable = (
        _profiles(x, y, fields, paths) if a is not None and b is not None else (None, None, None, None)
    )
    if data == UNCHANGED:
        disagree = _disagreement(x, y, columns, buckets)
        if disagree:  # one data hash, two different datasets: the records cannot both be right
            data, reason = UNKNOWN, f"the records disagree: equal data hashes, but {disagree}"
    if data in (UNCHANGED, CHANGED):
        for label, d, where, path in (("A", x, fields[0], paths[0]), ("B", y, fields[1], paths[1])):
            why = contradiction(d, _decoded(d, where, path))
            if why:  # its hash cannot be taken as evidence either way (an edited data_hash read as "changed")
                data, reason = UNKNOWN, f"the record of run {label} contradicts itself: {why}"
                break
    return DatasetDiff(
        side, (a or y).name, data, reason, x.row_count, y.row_count, schema, x.schema, y.schema,
        x.data_hash, y.data_hash, x.hash_method, y.hash_method, x.location, y.location,
        columns, buckets, x.version, y.version, note, unreadable,
    )  # fmt: skip


def _decoded(d: DatasetRecord, where: str, path: str | None) -> bytes | None:
    """A record's packed buckets, None when it has none or they do not decode (said elsewhere: ``buckets_error``)."""
    if d.buckets is None:
        return None
    try:
        return packed_buckets(d.buckets, where, path, d.row_count)
    except MalformedRecord:
        return None


def _profiles(
    a: DatasetRecord, b: DatasetRecord, fields: tuple[str, str], paths: tuple[str | None, str | None]
) -> tuple[ColumnChanges | None, BucketChanges | None, str | None, str | None]:
    """Column and bucket changes when both records carry comparable profiles, a note on why not otherwise, and
    why a side's buckets could not be read (None when they could)."""
    if a.profile_method != b.profile_method:
        return None, None, "profiles not comparable" if a.profile_method and b.profile_method else None, None
    columns = compare_columns(a, b)
    for d, label, where, path in ((a, "A", fields[0], paths[0]), (b, "B", fields[1], paths[1])):
        if d.buckets is None:
            continue
        try:
            packed_buckets(d.buckets, where, path, d.row_count)
        except MalformedRecord as exc:  # a damaged bucket field: the data verdict stands, the summary says so
            why = f"run {label}: {exc}"
            return columns, None, why, why
    buckets = compare_buckets(a, b, fields, paths)
    note = None
    if buckets is None and a.buckets is not None and b.buckets is not None:
        note = f"buckets not comparable (n {a.buckets.n} -> {b.buckets.n}, key {a.key} -> {b.key})"
    return columns, buckets, note, None


def _disagreement(
    a: DatasetRecord, b: DatasetRecord, columns: ColumnChanges | None, buckets: BucketChanges | None
) -> str:
    """What, besides the data hash, says two records of equal data hashes hold different data ("" if nothing).

    The data hash covers the schema, the row count and every row (docs/rows-v1.md section 9), and the profile is
    made from the same rows in the same pass: equal hashes with different row counts, schema strings or schema
    hashes, column fingerprints (or facts a fingerprint covers: a column's type, nulls, NaNs) or bucket numbers
    mean a damaged (or edited) record, which must not be read as "same data".
    """
    parts = []
    if a.row_count is not None and b.row_count is not None and a.row_count != b.row_count:
        parts.append(f"row counts {a.row_count} and {b.row_count}")
    # The data hash is made from the schema string, and the schema hash from the same string (section 9).
    if a.schema_hash and b.schema_hash and a.schema_hash != b.schema_hash:
        parts.append("schema hashes differ")
    if a.schema is not None and b.schema is not None and a.schema != b.schema:
        parts.append("schemas differ")
    if columns is not None and (columns.changed or columns.added or columns.removed):
        parts.append(columns.describe())
    if columns is not None:
        parts += _same_fingerprint_facts(a, b, columns.unchanged)
    if buckets is not None and buckets.differing:
        parts.append(buckets.describe() + " differ")
    return "; ".join(parts)


def _same_fingerprint_facts(a: DatasetRecord, b: DatasetRecord, names: list[str]) -> list[str]:
    """The columns of equal fingerprints whose recorded type, null or NaN counts differ, each a contradiction.

    A fingerprint covers the column's name, type and multiset of values (docs/rows-v1.md section 12.1), so
    its type and its counts of nulls and NaNs, which the values decide, cannot differ under one fingerprint.

    Example:
        >>> from ubunye.lineage.record import ColumnRecord
        >>> col = ColumnRecord(type="int64", nulls=0, fingerprint="sha256:1")
        >>> a = DatasetRecord("o", columns={"v": col})
        >>> b = DatasetRecord("o", columns={"v": replace(col, type="string", nulls=1)})
        >>> _same_fingerprint_facts(a, b, ["v"])
        ['column v: types int64 and string under one fingerprint', 'column v: nulls 0 and 1 under one fingerprint']
    """
    assert a.columns is not None and b.columns is not None  # names come from compare_columns of both
    out = []
    for name in names:
        x, y = a.columns[name], b.columns[name]
        for what, left, right in (("types", x.type, y.type), ("nulls", x.nulls, y.nulls), ("NaNs", x.nans, y.nans)):
            if left != right:
                out.append(f"column {name}: {what} {left} and {right} under one fingerprint")
    return out


def _missing_reason(a: DatasetRecord, b: DatasetRecord) -> str:
    def why(d: DatasetRecord, run: str) -> str | None:
        if d.data_hash is not None:
            return None
        return f"no data hash in run {run}: " + (d.hash_error or "not hashed")

    if a.data_hash is None and b.data_hash is None and a.hash_error == b.hash_error:
        return "no data hash in either run: " + (a.hash_error or "not hashed")
    return "; ".join(r for r in (why(a, "A"), why(b, "B")) if r)


def same_value(a: object, b: object) -> bool:
    """Whether two values of a record's free-form fields (config, template variables, environment, expectations)
    are the same: equal, or equal as JSON, so a NaN (a config read from YAML ``.nan``) is the same as a NaN.

    Example:
        >>> same_value(float("nan"), float("nan")), same_value({"x": [float("nan")]}, {"x": [float("nan")]})
        (True, True)
        >>> same_value(1, 2), same_value("1", 1)
        (False, False)
    """
    if a == b:
        return True
    try:
        return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)
    except (TypeError, ValueError):  # keys of mixed types, which JSON cannot sort: not equal to begin with
        return False


def _field(name: str, a: object, b: object) -> FieldDiff:
    if a in (None, {}, "") or b in (None, {}, ""):
        return FieldDiff(name, UNKNOWN, a, b)
    return FieldDiff(name, UNCHANGED if same_value(a, b) else CHANGED, a, b)


def _flatten(value: object, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict) and value:
        out: dict[str, object] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pairs(
    side: str,
    a: list[DatasetRecord],
    b: list[DatasetRecord],
    paths: tuple[str | None, str | None],
    states: tuple[str, str] = ("success", "success"),
) -> list[DatasetDiff]:
    at_a, at_b = {d.name: i for i, d in enumerate(a)}, {d.name: i for i, d in enumerate(b)}
    names = list(at_a) + [n for n in at_b if n not in at_a]

    def pair(n: str) -> DatasetDiff:
        i, j = at_a.get(n), at_b.get(n)
        fields = (f"{side}s[{i}].buckets", f"{side}s[{j}].buckets")
        diff = compare_datasets(side, None if i is None else a[i], None if j is None else b[j], fields=fields,
                                paths=paths)  # fmt: skip
        # A run that did not finish may end before it records a dataset (killed before its first checkpoint, failed
        # while reading): its absence says nothing of the data, so not "added" or "removed", which count as change.
        for label, missing, state in (("A", i is None, states[0]), ("B", j is None, states[1])):
            if missing and state != "success":
                why = f"{_UNRECORDED}{label}'s record: the run {state} before it was recorded"
                return replace(diff, data=UNKNOWN, reason=why)
        return diff

    return [pair(n) for n in names]


def _expectations(a: RunRecord, b: RunRecord) -> list[ExpectationDiff]:
    """The rules whose outcome differs, every checked rule counted: one rule may be recorded more than once.

    A run records one result per rule and column, and several ``expression`` rules of a target (each with its own
    ``params``, the expression) share a target, rule and column; so may two checks of one column. Results of one
    target, rule and column are paired off: same params and outcome first (unchanged), then same params, then in
    order; a result left without a partner was not checked in the other run.
    """

    def key(e: ExpectationResult) -> tuple[str, str, str | None]:
        return e.target, e.rule, e.column

    groups: dict[tuple[str, str, str | None], tuple[list[ExpectationResult], list[ExpectationResult]]] = {}
    for side, record in ((0, a), (1, b)):
        for e in record.expectations:
            groups.setdefault(key(e), ([], []))[side].append(e)
    out = []
    for k, (xs, ys) in groups.items():
        for x, y in _paired(xs, ys):
            pa, pb = (x.passed if x else None), (y.passed if y else None)
            if pa != pb:
                params = y.params if y is not None else x.params if x is not None else None
                out.append(ExpectationDiff(*k, pa, pb, x.observed if x else None, y.observed if y else None, params))
    return out


def _paired(
    xs: list[ExpectationResult], ys: list[ExpectationResult]
) -> list[tuple[ExpectationResult | None, ExpectationResult | None]]:
    """Results of one rule in run A and run B paired off, best matches first (see :func:`_expectations`).

    Example:
        >>> ok = ExpectationResult("outputs.o", "expression", True)
        >>> bad = replace(ok, passed=False)
        >>> [(x.passed if x else None, y.passed if y else None) for x, y in _paired([ok], [bad, ok])]
        [(True, True), (None, False)]
    """
    left, right = list(range(len(xs))), list(range(len(ys)))
    pairs: list[tuple[ExpectationResult | None, ExpectationResult | None]] = []
    tests = (
        lambda x, y: same_value(x.params, y.params) and x.passed == y.passed,
        lambda x, y: same_value(x.params, y.params),
        lambda x, y: True,
    )
    for matches in tests:
        for i in list(left):
            j = next((j for j in right if matches(xs[i], ys[j])), None)
            if j is not None:
                pairs.append((xs[i], ys[j]))
                left.remove(i)
                right.remove(j)
    return pairs + [(xs[i], None) for i in left] + [(None, ys[j]) for j in right]


def _timings(a: RunRecord, b: RunRecord) -> list[TimingPair]:
    by_a = {(t.stage, t.name): t.seconds for t in a.timings}
    by_b = {(t.stage, t.name): t.seconds for t in b.timings}
    keys = list(by_a) + [k for k in by_b if k not in by_a]
    return [TimingPair(s, n, by_a.get((s, n)), by_b.get((s, n))) for s, n in keys]


def compare_records(a: RunRecord, b: RunRecord, states: tuple[str, str] | None = None,
                    paths: tuple[str | None, str | None] = (None, None)) -> Comparison:  # fmt: skip
    """Compare run A (usually the older) with run B (``paths``: their record files, named when a field of one
    cannot be read).

    ``states`` are the runs' states as readers show them (:func:`ubunye.lineage.liveness.run_state`, which
    looks at processes, so it is worked out by the caller: this module does no I/O); by default their statuses.
    An ``interrupted`` run is treated like a failed one: its state is what ``status`` compares, a note says it
    did not finish, and its outputs are compared by the hashes its record holds (an output its last checkpoint
    reached carries the hash of the data being committed), never assumed to be the other run's.

    A record naming one input or output twice raises ``MalformedRecord``
    (:func:`ubunye.lineage.record.check_datasets`, which loading a record file runs too).

    Example:
        >>> from ubunye.lineage.record import RunRecord
        >>> env = lambda v: {"packages": {"pyarrow": v}}
        >>> a = RunRecord(run_id="a", usecase="u", package="p", task="t", environment=env("17.0.0"))
        >>> b = RunRecord(run_id="b", usecase="u", package="p", task="t", environment=env("18.1.0"))
        >>> compare_records(a, b).summary
        'data unknown: no outputs recorded; what moved: environment (pyarrow 17.0.0 -> 18.1.0)'
    """
    check_datasets(a)
    check_datasets(b)
    env_a, env_b = a.environment or {}, b.environment or {}
    facts = [_field(k, env_a.get(k), env_b.get(k)) for k in ENV_FACTS if k in env_a or k in env_b]
    engine_key = a.backend if a.backend == b.backend else None
    if engine_key and isinstance(env_a.get(engine_key), dict) and isinstance(env_b.get(engine_key), dict):
        for k in sorted(set(env_a[engine_key]) | set(env_b[engine_key])):
            facts.append(_field(f"{engine_key}.{k}", env_a[engine_key].get(k), env_b[engine_key].get(k)))
    packages: list[PackageMove] = []
    pk_a, pk_b = _mapping(env_a.get("packages")), _mapping(env_b.get("packages"))
    if pk_a and pk_b:
        for name in list(pk_a) + [n for n in pk_b if n not in pk_a]:
            if pk_a.get(name) != pk_b.get(name):
                packages.append(PackageMove(name, pk_a.get(name), pk_b.get(name)))
    config_keys: list[str] = []
    if a.config and b.config:
        flat_a, flat_b = _flatten(a.config), _flatten(b.config)
        keys = list(flat_a) + [k for k in flat_b if k not in flat_a]
        config_keys = [k for k in keys if not same_value(flat_a.get(k), flat_b.get(k))]
    tv_a, tv_b = a.template_vars or {}, b.template_vars or {}
    template_vars = [
        FieldDiff(k, UNCHANGED if tv_a.get(k) == tv_b.get(k) else (CHANGED if tv_a and tv_b else UNKNOWN),
                  tv_a.get(k), tv_b.get(k))
        for k in list(tv_a) + [k for k in tv_b if k not in tv_a]
    ]  # fmt: skip
    notes = []
    config = _field("config_hash", a.config_hash, b.config_hash)
    if a.record_version != b.record_version:  # config_hash was not computed the same way before v2
        config = FieldDiff("config_hash", UNKNOWN, a.config_hash, b.config_hash)
        notes.append(f"record versions differ ({a.record_version} and {b.record_version}): hashes other than rows-v1 "
                     "are not compared")  # fmt: skip
    if a.identity != b.identity:
        notes.append(f"different tasks: {'/'.join(a.identity)} and {'/'.join(b.identity)}")
    state_a, state_b = states or (a.status, b.status)
    for r, label, state in ((a, "A", state_a), (b, "B", state_b)):
        if state == "interrupted":
            notes.append(f"run {label} interrupted: its process is gone, the record holds the evidence of its last "
                         "checkpoint")  # fmt: skip
        elif state != "success":
            notes.append(f"run {label} {state}" + (f" in {r.error.stage}: {r.error.message}" if r.error else ""))
    return Comparison(
        run_a=a.run_id,
        run_b=b.run_id,
        outputs=_pairs("output", a.outputs, b.outputs, paths, (state_a, state_b)),
        inputs=_pairs("input", a.inputs, b.inputs, paths, (state_a, state_b)),
        status=_field("status", state_a, state_b),
        code=_field("code_hash", a.code_hash, b.code_hash),
        config=config,
        config_keys=config_keys,
        template_vars=template_vars,
        environment=_field("environment_hash", a.environment_hash, b.environment_hash),
        environment_facts=facts,
        packages=packages,
        backend=_field("backend", a.backend, b.backend),
        ubunye_version=_field("ubunye", a.ubunye_version, b.ubunye_version),
        expectations=_expectations(a, b),
        timings=_timings(a, b),
        duration=TimingPair("run", None, a.duration_seconds, b.duration_seconds),
        record_versions=(a.record_version, b.record_version),
        notes=notes,
    )
