"""``ubunye diff``: the rows two runs (or two tables) differ in, reading only the rows of differing buckets.

Two runs: their records say where each dataset was and, with profiles (docs/rows-v1.md section 12), which row
buckets differ. Each side is read as its run recorded it (a Delta table at the version the run read or wrote; a
file location as it is now), filtered to those buckets, and checked against its record: the rows read must give
the recorded bucket numbers (or, without buckets, the recorded data hash), else the data was overwritten since and
the diff would be wrong, which is an error, never a wrong diff. Two tables (``--a``/``--b``): both are profiled
in one pass each, then read the same way.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import typer
from rich.table import Table

from ubunye.cli import args
from ubunye.cli.errors import domain_errors
from ubunye.cli.hash import not_a_table, source_config
from ubunye.cli.render import console, dash, emit_json, flow_help, line
from ubunye.config import IOConfig
from ubunye.config.model import BACKENDS, DEFAULT_BUCKETS, FORMATS
from ubunye.engines import Engine, get_engine, is_url
from ubunye.exceptions import UbunyeError
from ubunye.lineage.compare import UNCHANGED, UNKNOWN, compare_datasets
from ubunye.lineage.diff import DiffError, TableDiff, diff_tables
from ubunye.lineage.profiles import contradiction, packed_buckets, same_key
from ubunye.lineage.record import DatasetRecord, MalformedRecord, RunRecord, check_datasets, printable
from ubunye.lineage.secrets import MASK

_BUCKET = 24
PROFILE = "profile-v1"  # the profile method whose buckets this module reads (docs/rows-v1.md section 12)
HASH = "rows-v1"  # the hash method whose data hash this module checks rows against (docs/rows-v1.md)


@dataclass
class _Side:
    """One side of a diff: what it is, the engine that reads it, and what its record (if any) vouches for."""

    label: str
    what: str
    io: IOConfig
    engine: str
    dataset: DatasetRecord | None = None
    rows_read: int = 0
    #: The dataset's field in its record (``outputs[0]``) and the record file, named when the record is at fault.
    field: str | None = None
    path: str | None = None
    #: Whether rows read in full are checked against the record's column profile too, not its data hash alone:
    #: when the two records contradict each other, which of their facts hold is what the rows must show.
    check_columns: bool = False
    #: The engine the run itself used (its record's backend, None when not one of ours) and the run's status:
    #: what else than an overwrite can make the rows read differ from the record.
    backend: str | None = None
    status: str | None = None
    #: Why the reader options the run used for a csv or json dataset are not known (no config in its record, a
    #: masked value), else None: rows read without them need not be the run's (a csv separator).
    options_unknown: str | None = None

    def other_engine(self) -> bool:
        """Whether the rows are read with another engine than the run's own (which may read a format otherwise:
        csv types are each reader's guess)."""
        return self.backend is not None and self.engine != self.backend


def _dataset(record: RunRecord, name: str | None, label: str) -> tuple[DatasetRecord, str]:
    """The dataset ``name`` of a run (an output, else an input; ``inputs.x`` / ``outputs.x`` to choose), and its
    field in the record (``outputs[0]``)."""
    side, _, bare = (name or "").rpartition(".")
    pools = {"outputs": record.outputs, "inputs": record.inputs}
    if side and side not in pools:
        raise DiffError(f"--dataset {name!r}: write outputs.<name> or inputs.<name>")
    for pool in [side] if side else ["outputs", "inputs"]:
        for i, d in enumerate(pools[pool]):
            if d.name == bare:
                return d, f"{pool}[{i}]"
    names = [f"outputs.{d.name}" for d in record.outputs] + [f"inputs.{d.name}" for d in record.inputs]
    raise DiffError(f"run {label} ({record.run_id}) has no dataset {name!r} (it has: {', '.join(names) or 'none'})")


def _changed_output(a: RunRecord, b: RunRecord) -> str:
    """The output to diff when none is named: the one whose data hash differs (one, else an error listing)."""
    by_b = {d.name: d for d in b.outputs}
    changed = [d.name for d in a.outputs if d.name in by_b and d.data_hash != by_b[d.name].data_hash]
    if len(changed) == 1:
        return f"outputs.{changed[0]}"
    if not changed:
        shared = [d.name for d in a.outputs if d.name in by_b]
        if not shared:  # two different tasks' runs: "no hash differs" would claim a comparison never made

            def names(r: RunRecord) -> str:
                return ", ".join(d.name for d in r.outputs) or "none"

            msg = f"runs A and B share no output (A {a.run_id}: {names(a)}; B {b.run_id}: {names(b)}): nothing to diff"
            raise DiffError(msg)
        if len(shared) == 1:
            return f"outputs.{shared[0]}"
        raise DiffError(f"no output's data hash differs; name one with --dataset ({', '.join(shared) or 'none'})")
    raise DiffError(f"outputs {', '.join(changed)} changed: name one with --dataset")


def _recorded_io(d: DatasetRecord, label: str, run_id: str) -> IOConfig:
    """How to read a dataset as its run recorded it: a table, or a path at the recorded Delta version."""
    if not d.location:
        raise DiffError(f"run {label} ({run_id}): {d.name} has no recorded location")
    if d.location.startswith("table:"):
        return IOConfig(name=d.name, table=d.location[len("table:") :], version=d.version, allow_empty=True)
    if d.format not in FORMATS:
        raise DiffError(f"run {label} ({run_id}): {d.name} has no readable format ({d.format!r})")
    version = d.version if d.format == "delta" else None
    return IOConfig(name=d.name, format=d.format, path=d.location, version=version, allow_empty=True)


#: Formats whose rows depend on reader options (a csv separator, Spark's json ``multiLine``).
_OPTION_FORMATS = ("csv", "json")


def recorded_options(record: RunRecord, pool: str, name: str) -> tuple[dict[str, Any], str | None]:
    """The options a run read or wrote its dataset ``name`` of ``pool`` (``inputs``, ``outputs``) with, from its
    record's config (``CONFIG.outputs.<name>.options``), and None; or no options and why they are not known: a
    record without a config (a v1 record, one written by hand), or an option whose value it masks as a secret.

    Example:
        >>> r = RunRecord(run_id="r", usecase="u", package="p", task="t",
        ...               config={"CONFIG": {"outputs": {"o": {"options": {"sep": ";"}}}}})
        >>> recorded_options(r, "outputs", "o")
        ({'sep': ';'}, None)
        >>> recorded_options(replace(r, config=None), "outputs", "o")
        ({}, 'its record holds no config')
    """
    where = f"CONFIG.{pool}.{name}"
    if record.config is None:
        return {}, "its record holds no config"
    node: object = record.config
    for part in ("CONFIG", pool, name):
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return {}, f"its record's config has no {printable(where)}"
    options = node.get("options", {})
    if not isinstance(options, dict):
        return {}, f"its record's config holds no mapping at {printable(where)}.options"
    masked = [str(k) for k, v in options.items() if isinstance(v, str) and MASK in v]
    if masked:
        return {}, f"its record's config masks {printable(where)}.options.{printable(masked[0])} as a secret"
    return dict(options), None


def with_read_options(io: IOConfig, options: dict[str, Any], engine: str) -> IOConfig:
    """``io`` with the recorded options the engine reads it with, for csv and json (parquet and Delta files hold
    their own types; their writer options, a codec or ``replaceWhere``, are nothing to a read): Spark takes them
    all, as it read the run's write back; pandas and polars the ones their readers apply (a csv separator).

    Example:
        >>> io = IOConfig("o", format="csv", path="/d/o")
        >>> with_read_options(io, {"sep": ";", "header": "false"}, "pandas").options
        {'sep': ';'}
        >>> with_read_options(io, {"sep": ";", "header": "false"}, "spark").options
        {'sep': ';', 'header': 'false'}
    """
    from ubunye.engines._io import reader_options  # the engines' own rule (loaded with an engine anyway)

    if io.table is not None or not options or io.format not in _OPTION_FORMATS:
        return io
    with_all = replace(io, options=options)
    return with_all if engine == "spark" else replace(io, options=reader_options(with_all))


def _reason(exc: BaseException) -> str:
    """One line saying why a read failed: a JVM error's innermost cause (py4j's own first line says nothing)."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            cause, text = java, ""
            for _ in range(20):  # the chain of causes, innermost last (bounded: a cycle must not hang the CLI)
                message = cause.getMessage()
                if message:
                    text = f"{cause.getClass().getSimpleName()}: {message}"
                nxt = cause.getCause()
                if nxt is None:
                    break
                cause = nxt
            if text:
                return text.strip().splitlines()[0]
        except Exception:  # the JVM is gone: fall back on Python's text
            pass
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


#: What the engines' errors say when the data a record names is not there (a file deleted, a vacuumed Delta file,
#: a dropped table): only then does the diff say the data is gone; any other failure keeps its own reason.
_NOT_FOUND = re.compile(
    r"FileNotFound|No such file|does not exist|TableNotFound|TABLE_OR_VIEW_NOT_FOUND|PATH_NOT_FOUND|not a Delta table",
    re.IGNORECASE,
)


def _cannot_read(side: _Side, exc: BaseException) -> DiffError:
    why = str(exc) if isinstance(exc, UbunyeError) else _reason(exc)
    missing = isinstance(exc, FileNotFoundError) or bool(_NOT_FOUND.search(f"{type(exc).__name__}: {why}"))
    gone = " (the data it recorded is gone)" if side.dataset is not None and missing else ""
    return DiffError(f"{side.label}: cannot read {side.what}{gone}: {why}")


def _read(side: _Side, engines: dict[str, Engine[Any]]) -> object:
    eng = engines.setdefault(side.engine, get_engine(side.engine))
    try:
        return eng.read(side.io, Path.cwd())
    except Exception as exc:  # an engine's own error (deltalake, polars, Spark) is a read error all the same
        raise _cannot_read(side, exc) from exc


def _to_arrow(frame: object) -> pa.Table:
    """A (small, already filtered) frame as Arrow: Spark through its own Arrow export."""
    from ubunye.hashing.frame import frame_kind, to_arrow

    if frame_kind(frame) == "pyspark":
        if hasattr(frame, "toArrow"):  # pyspark 4
            return frame.toArrow()
        if hasattr(frame, "_collect_as_arrow_table"):
            return frame._collect_as_arrow_table()
        return _spark35(frame)
    return to_arrow(frame)


def _spark35(frame: Any) -> pa.Table:  # noqa: ANN401  # a pyspark 3.5 DataFrame: the checker sees pyspark 4's only
    batches = frame._collect_as_arrow()  # the batches toPandas itself builds from
    if batches:
        return pa.Table.from_batches(batches)
    from ubunye.hashing.frame import to_arrow

    return to_arrow(frame.toPandas())


def _bucket_rows(packed: bytes, wanted: list[int]) -> dict[int, bytes]:
    return {i: packed[i * _BUCKET : (i + 1) * _BUCKET] for i in wanted}


def _stale(side: _Side) -> str:
    """The rows read are not what the run recorded: overwritten since, unless something else may explain it (the
    rows read with another engine than the run's, or an output the run may not have committed)."""
    d = side.dataset
    where = printable(d.location or "?") if d is not None else "?"
    if side.options_unknown is not None and d is not None and d.format in _OPTION_FORMATS:
        return (f"{side.label}: the data at {where} is not what the run recorded (it was overwritten since, or the "
                f"run read {printable(d.format)} with options not known here: {side.options_unknown})")  # fmt: skip
    if side.other_engine():
        fmt = printable(d.format or "it") if d is not None else "it"
        return (f"{side.label}: the rows read at {where} with engine {side.engine} are not what the run recorded "
                f"with {side.backend} (it was overwritten since, or {side.engine} reads {fmt} otherwise than "
                f"{side.backend}: diff with -e {side.backend} to tell)")  # fmt: skip
    if d is not None and d.written is None and side.status != "success" and (side.field or "").startswith("outputs"):
        return (f"{side.label}: the data at {where} is not what the run recorded (it was overwritten since, or the "
                "run stopped before committing it: its record says written: not known)")  # fmt: skip
    return f"{side.label}: the data at {where} is no longer what the run recorded (it was overwritten since)"


def _other_types(side: _Side, schema: str) -> str:
    """Rows read with another engine than the run's, of other column types than the record's: what the engine
    reads, not evidence of an overwrite (a csv date column is a string to polars, a date to pandas)."""
    d = side.dataset
    assert d is not None and d.schema is not None
    return (f"{side.label}: the rows read at {printable(d.location or '?')} with engine {side.engine} have other "
            f"column types than the run recorded with {side.backend} (their columns are {printable(schema)}, the run "
            f"recorded {printable(d.schema)}): {side.engine} may read {printable(d.format or 'it')} with other types "
            f"than {side.backend}; diff with -e {side.backend} to check them against the record; "
            "cannot diff it")  # fmt: skip


class _BucketDiffers(DiffError):
    """A bucket of the rows read is not the record's: overwritten data, or a damaged record (the whole data tells)."""

    def __init__(self, message: str, bucket: int) -> None:
        super().__init__(message)
        self.bucket = bucket


def _check_side(side: _Side, table: pa.Table, key: list[str] | None, n: int | None, wanted: list[int] | None) -> None:
    """The rows read are the rows the record vouches for: their bucket numbers, or the whole data hash."""
    d = side.dataset
    if d is None:
        return
    from ubunye.hashing import hash_frame
    from ubunye.hashing.digest import schema_hash
    from ubunye.hashing.profile import profile_frame
    from ubunye.hashing.types import schema_string

    stale = _stale(side)
    # Bucket numbers are sums of row lines, which do not hold the column types: an int32 column rewritten as int64
    # keeps them. The types the diff would report must be the recorded ones too (the data hash covers them).
    schema = schema_string(table.schema)
    # A side none of whose rows fall in the buckets read holds no evidence of types (Spark 3.5 gives an empty read
    # through pandas, whose types are not Spark's): only rows read are checked against the record, and the diff
    # takes such a side's columns from its record (_as_recorded), never from the read.
    if d.schema is not None and table.num_rows and schema != d.schema:
        if side.other_engine():
            raise DiffError(_other_types(side, schema))
        raise DiffError(f"{stale} (its columns are {printable(schema)}, the run recorded {printable(d.schema)}); "
                        "cannot diff it")  # fmt: skip
    if d.schema_hash is not None and d.hash_method == HASH and table.num_rows and schema_hash(schema) != d.schema_hash:
        # The schema string matched (or was not recorded): a schema_hash that is not its hash is a damaged record.
        where = f"{printable(side.path or side.label)}: {side.field or printable(d.name)}.schema_hash"
        raise DiffError(f"{side.label}: the rows read have the schema hash {schema_hash(schema)}, the record says "
                        f"{d.schema_hash} ({where}); cannot diff it")  # fmt: skip
    if wanted is None:
        _vouched(side)
        if side.check_columns and d.columns is not None and d.profile_method == PROFILE:
            prof = profile_frame(table, buckets=None)
            if prof.hash.data_hash != d.data_hash:
                raise DiffError(stale + "; cannot diff it")
            _check_columns(side, {n: (c.type, c.nulls, c.nans, c.fingerprint) for n, c in prof.columns.items()})
        elif hash_frame(table).data_hash != d.data_hash:
            raise DiffError(stale + "; cannot diff it")
        return
    assert d.buckets is not None and n is not None
    got = profile_frame(table, key=key, buckets=n).buckets
    assert got is not None
    want = _bucket_rows(_packed(side), wanted)
    mine = _bucket_rows(got.packed, wanted)
    bad = [i for i in wanted if want[i] != mine[i]]
    if bad:
        raise _BucketDiffers(stale + f" (bucket {bad[0]} of {n} differs from its record); cannot diff it", bad[0])


def _bucket_verdict(side: _Side, whole: object, exc: _BucketDiffers, n: int, engine: Engine[Any]) -> DiffError:
    """Why a bucket read is not the record's: when the whole data still gives the record's data hash (its rows,
    counted and summed as the run did), the record's bucket field is damaged (edited), named with its file and
    field; else the data is not what the run recorded (``exc``). The whole data is read only on this error path."""
    d = side.dataset
    assert d is not None
    if d.data_hash is None or d.hash_method != HASH:
        return exc
    try:
        whole_hash = engine.hash(whole).data_hash
    except Exception:  # the whole data cannot be hashed: no evidence the record is at fault
        return exc
    if whole_hash != d.data_hash:
        return exc
    where = f"{printable(side.path or side.label)}: {side.field or printable(d.name)}.buckets"
    return DiffError(f"{side.label}: the rows at {printable(d.location or '?')} give the record's data hash but not "
                     f"its bucket {exc.bucket} of {n} ({where}): the record is damaged; cannot diff it")  # fmt: skip


def _as_recorded(side: _Side, table: pa.Table) -> pa.Table:
    """The table to diff for a side: the rows read, or, when none was read (none falls in the buckets read) and
    their columns are not the record's, no rows of the record's columns. No row read is no evidence of the types
    (Spark 3.5 reads none through pandas, whose types are not Spark's), and columns not checked against the record
    must not be reported as columns of the run: its record's schema says what they are."""
    d = side.dataset
    if d is None or d.schema is None or table.num_rows:
        return table
    from ubunye.hashing.types import arrow_type, parse_schema, schema_string

    try:
        if schema_string(table.schema) == d.schema:
            return table
    except UbunyeError:  # an empty read's types rows-v1 cannot name (pandas' object columns): the record's stand
        pass
    try:
        columns = parse_schema(d.schema)
    except ValueError as exc:
        raise MalformedRecord(f"not a rows-v1 schema string: {exc}", side.path or side.label,
                              f"{side.field or d.name}.schema") from exc  # fmt: skip
    return pa.schema([(name, arrow_type(tree)) for name, tree in columns]).empty_table()


def _check_columns(side: _Side, read: dict[str, tuple[str, int, int | None, str]]) -> None:
    """The rows read (their data hash already the record's) against the record's column profile: a column whose
    type, null or NaN count or fingerprint is not what they give is a damaged record, named with its field."""
    d = side.dataset
    assert d is not None and d.columns is not None
    for name, c in d.columns.items():
        if read.get(name) != (c.type, c.nulls, c.nans, c.fingerprint):
            where = f"{printable(side.path or side.label)}: {side.field or printable(d.name)}.columns.{name}"
            raise DiffError(f"{side.label}: the rows read match the record's data hash but not its profile of column "
                            f"{name} ({where}): the record is damaged; cannot diff it")  # fmt: skip


def _check_key(side: _Side, key: list[str] | None) -> None:
    """``--key`` against the columns a run recorded for its dataset (its schema, else its column profile): a
    column named twice, or one the run's dataset does not have, is a DiffError naming the side, as ``--a``/``--b``
    refuse it from the table read. Without recorded columns only a repeat can be told (the read says the rest)."""
    d = side.dataset
    if key is None or d is None:
        return
    from ubunye.hashing.profile import ProfileOptionError, check_profile_options
    from ubunye.hashing.types import parse_schema

    columns: list[str] | None = list(d.columns) if d.columns is not None else None
    if d.schema is not None:
        try:
            columns = [name for name, _ in parse_schema(d.schema)]
        except ValueError:  # not a schema string: the checks against the rows read name it
            pass
    try:
        check_profile_options(key if columns is None else columns, key, 0)
    except ProfileOptionError as exc:
        raise DiffError(f"{side.label}: {side.what} (as its run recorded it): {exc}") from None


def _vouched(side: _Side) -> None:
    """Without buckets, the rows read are checked against the record's data hash: a DiffError when the record
    holds none, or one made by a method this ubunye does not compute (its rows could not be told from it)."""
    d = side.dataset
    if d is None:
        return
    if d.data_hash is None:
        raise DiffError(f"{side.label}: the run recorded no data hash for {d.name}: cannot tell its rows")
    if d.hash_method != HASH:
        method = f"hash method {printable(repr(d.hash_method))}" if d.hash_method else "no hash method (a v1 record?)"
        raise DiffError(f"{side.label}: the record of {d.name} names {method}, not one this ubunye reads ({HASH}), "
                        "and no row buckets to check its rows by: cannot tell its rows")  # fmt: skip


def _packed(side: _Side) -> bytes:
    """The packed buckets of a side's record: a MalformedRecord naming its file (else its run) and field when they
    do not decode or do not add up to its row count."""
    d = side.dataset
    assert d is not None and d.buckets is not None
    return packed_buckets(d.buckets, f"{side.field or d.name}.buckets", side.path or side.label, d.row_count)


def _filtered(frame: object, wanted: list[int] | None, key: list[str] | None, n: int | None) -> object:
    if wanted is None or n is None:
        return frame
    from ubunye.hashing.profile import rows_in_buckets

    return rows_in_buckets(frame, wanted, key=key, buckets=n)


@dataclass
class DiffReport:
    """What ``ubunye diff`` prints: the two sides, the buckets used, and the row differences."""

    dataset: str
    a: dict[str, Any]
    b: dict[str, Any]
    key: list[str] | None
    buckets: dict[str, Any] | None
    diff: TableDiff | None
    note: str | None = None

    @property
    def same(self) -> bool:
        return self.diff is None or self.diff.same

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["same"] = self.same
        out["exit_code"] = 0 if self.same else 1
        return out


def _describe(side: _Side) -> dict[str, Any]:
    out = {"what": side.what, "engine": side.engine, "rows_read": side.rows_read}
    out["location"] = side.io.path if side.io.table is None else f"table:{side.io.table}"
    out["version"] = side.io.version
    return out


def _plan(a: _Side, b: _Side, key: list[str] | None) -> tuple[list[str] | None, int | None, list[int] | None, str]:
    """Key, bucket count and the buckets to read, from the two records (None: read every row), and why."""
    da, db = a.dataset, b.dataset
    assert da is not None and db is not None
    key_a, key_b = da.key or None, db.key or None
    if da.buckets is not None and db.buckets is not None and not da.profile_method == db.profile_method == PROFILE:
        methods = f"{da.profile_method or 'none'} and {db.profile_method or 'none'}"
        return key or key_a, None, None, f"the records' profiles ({methods}) are not comparable: every row is read"
    # A key line sorts its columns (section 12.2): [region, day] and [day, region] place rows alike.
    if not same_key(key_a, key_b):
        return key or key_a, None, None, "the runs' buckets use different keys: every row is read"
    if key is not None and sorted(key) != sorted(key_a or []):
        return key, None, None, f"--key {', '.join(key)} is not the key the records' buckets use: every row is read"
    key = key_a
    if da.buckets is None or db.buckets is None or da.buckets.n != db.buckets.n:
        return key, None, None, "the records hold no comparable row buckets: every row is read"
    pa_, pb = _packed(a), _packed(b)
    n = da.buckets.n
    wanted = [i for i in range(n) if pa_[i * _BUCKET : (i + 1) * _BUCKET] != pb[i * _BUCKET : (i + 1) * _BUCKET]]
    return key, n, wanted, f"{len(wanted)} of {n} {'key' if key else 'row'} buckets differ"


def diff_runs(a: RunRecord, b: RunRecord, dataset: str | None = None, key: list[str] | None = None,
              limit: int = 20, engine: str | None = None,
              paths: tuple[str | None, str | None] = (None, None)) -> DiffReport:  # fmt: skip
    """The rows a dataset of run A and run B differ in, reading each as its run recorded it (``paths``: the
    record files, named in the error when a record's field cannot be read).

    Example:
        >>> diff_runs(RunRecord(run_id="a", usecase="u", package="p", task="t"),
        ...           RunRecord(run_id="b", usecase="u", package="p", task="t"))
        Traceback (most recent call last):
        ubunye.lineage.diff.DiffError: runs A and B share no output (A a: none; B b: none): nothing to diff
    """
    check_datasets(a)
    check_datasets(b)
    name = dataset or _changed_output(a, b)
    (da, fa), (db, fb) = _dataset(a, name, "A"), _dataset(b, name, "B")
    sides = []
    for label, r, d, at, path in (("run A", a, da, fa, paths[0]), ("run B", b, db, fb, paths[1])):
        io = _recorded_io(d, label[-1], r.run_id)
        eng = engine or (r.backend if r.backend in BACKENDS else "pandas")
        if io.table is not None and engine is None:
            eng = "spark"
        backend = r.backend if r.backend in BACKENDS else None
        # The options the run read or wrote it with (a csv separator): without them the rows read are others.
        options, unknown = recorded_options(r, at.partition("[")[0], d.name)
        sides.append(_Side(f"{label} ({r.run_id})", f"{d.name} of run {r.run_id}", with_read_options(io, options, eng),
                           eng, d, field=at, path=path, backend=backend, status=r.status,
                           options_unknown=unknown))  # fmt: skip
    sa, sb = sides
    for side in sides:  # an edited hash would be read as data overwritten since the run: named as what it is
        assert side.dataset is not None
        contradicts = contradiction(side.dataset, _packed(side) if side.dataset.buckets is not None else None)
        if contradicts:
            raise MalformedRecord(f"the record contradicts itself: {contradicts}", side.path or side.label, side.field)
    for side in sides:  # rows the run did not write are nowhere (its location holds other runs'):
        rec = side.dataset  # refused before any read, even of equal hashes: computed rows are not written ones
        if rec is not None and rec.written is False:
            where = f"{printable(side.path or side.label)}: {side.field or printable(rec.name)}.written"
            raise DiffError(f"{side.label}: the run did not write its output {printable(rec.name)} (its record says "
                            f"written: false, {where}; the run {printable(side.status or '?')}): no rows of it are "
                            f"at {printable(rec.location or '?')} to diff")  # fmt: skip
    for side in sides:  # refused as --a/--b refuse it, before equal hashes could answer "same data" without a read
        _check_key(side, key)
    why, disagree = None, False
    if da.data_hash is not None and da.data_hash == db.data_hash:
        verdict = compare_datasets("output", da, db, fields=(f"{fa}.buckets", f"{fb}.buckets"), paths=paths)
        if verdict.data == UNCHANGED:
            for side in sides:  # a damaged bucket field is an error here as wherever diff reads it (compare notes it)
                if side.dataset is not None and side.dataset.buckets is not None:
                    _packed(side)
            same = "same data hash: no row differs"
            return DiffReport(name, _describe(sa), _describe(sb), key or da.key or None, None, None, same)
        # Unknown: equal hashes, but the records' profiles say otherwise (a damaged record). Not comparable: equal
        # strings made by two hash methods, no evidence either way. The rows read are checked against each record.
        why, disagree = verdict.reason, verdict.data == UNKNOWN
    for label, r, d in (("A", a, da), ("B", b, db)):
        if d.mode == "append":  # its record hashes the rows it added; the location holds every run's rows
            msg = f"run {label} ({printable(r.run_id)}) wrote {printable(name)} with mode: append: its record hashes "
            msg += "the rows that run added, not the location, which holds other runs' rows too, so no row read "
            msg += "there can be checked against it. Diff two tables as they are instead: ubunye diff --a PATH --b PATH"
            raise DiffError(msg)
    key, n, wanted, note = _plan(sa, sb, key)
    differ = da.data_hash is not None and db.data_hash is not None and da.data_hash != db.data_hash
    if (disagree or differ) and wanted == []:
        # Equal buckets: records that contradict themselves, or data hashes that differ by the schema alone (a
        # column's type: buckets sum rows, not types). No bucket to read would show nothing and say "same".
        # Every row is read instead, each side checked against its own data hash (which covers schema and rows).
        n, wanted, note = None, None, "no bucket differs: every row is read and checked against its record"
        sa.check_columns = sb.check_columns = True
    return _run(name, sa, sb, key, n, wanted, f"{why}; {note}" if why else note, limit)


def diff_targets(target_a: str, target_b: str, *, fmt_a: str | None = None, fmt_b: str | None = None,
                 engine_a: str | None = None, engine_b: str | None = None, key: list[str] | None = None,
                 buckets: int = DEFAULT_BUCKETS, limit: int = 20) -> DiffReport:  # fmt: skip
    """The rows two tables differ in: each profiled in one pass, then only the differing buckets read.

    Example:
        >>> import tempfile, pandas as pd
        >>> d = Path(tempfile.mkdtemp())
        >>> pd.DataFrame({"id": [1, 2], "v": [1.0, 2.0]}).to_parquet(d / "a.parquet")
        >>> pd.DataFrame({"id": [1, 2], "v": [1.0, 2.5]}).to_parquet(d / "b.parquet")
        >>> r = diff_targets(str(d / "a.parquet"), str(d / "b.parquet"), key=["id"])
        >>> [(c.key, c.column, c.a, c.b) for c in r.diff.changed.cells], r.a["rows_read"]
        ([({'id': '2'}, 'v', '2.0', '2.5')], 1)
    """
    sides = []
    for label, target, fmt, eng in (("A", target_a, fmt_a, engine_a), ("B", target_b, fmt_b, engine_b)):
        table = _maybe_table(target, fmt, eng, label)  # a name that is neither a file nor a table: refused here
        eng = eng or ("spark" if table else "pandas")
        try:
            io = replace(source_config(target, fmt, eng), allow_empty=True)
        except UbunyeError as exc:
            raise DiffError(f"--{label.lower()}: {exc}") from exc
        sides.append(_Side(label, target, io, eng))
    sa, sb = sides
    engines: dict[str, Engine[Any]] = {}
    profiles = []
    for side in sides:
        if side.io.table is not None and _no_such_table(side, engines):
            raise DiffError(f"--{side.label.lower()}: no such file or table: {printable(side.what)} (no file or "
                            "folder of that name here, and the Spark catalog has no table of that name)")  # fmt: skip
        frame = _read(side, engines)
        try:
            profiles.append(engines[side.engine].profile(frame, key=key, buckets=buckets))
        except (UbunyeError, ValueError) as exc:
            raise DiffError(f"{side.label}: {side.what}: {exc}") from exc
        except Exception as exc:  # a lazy frame (Spark) reads its files here
            raise _cannot_read(side, exc) from exc
    pa_, pb = profiles
    if pa_.hash.data_hash == pb.hash.data_hash:
        return DiffReport(target_b, _describe(sa), _describe(sb), key, None, None, "same data hash: no row differs")
    ba, bb = pa_.buckets, pb.buckets  # both present when buckets > 0
    wanted = None if not buckets or ba is None or bb is None else ba.differing(bb)
    note = "no buckets: every row is read" if wanted is None else f"{len(wanted)} of {buckets} buckets differ"
    return _run(target_b, sa, sb, key, buckets or None, wanted, note, limit, engines)


def _maybe_table(target: str, fmt: str | None, engine: str | None, label: str) -> bool:
    """Whether ``--a``/``--b`` ``target`` may name a Spark catalog table: no file or folder of that name exists
    here, and it is spelled like a table (``sales``, ``db.sales``, ``cat.db.`my table```), not like a file.

    A name that exists nowhere and cannot be a table (``old.parquet``, ``day.csv.gz``, ``my-data``; or any name
    with ``--format``, or with an engine other than Spark) is a DiffError here, before any engine starts.

    Example:
        >>> _maybe_table("db.sales", None, None, "A"), _maybe_table("/no/such/dir", None, None, "A")
        (True, False)
        >>> _maybe_table("old.parquet", None, None, "A")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ubunye.lineage.diff.DiffError: --a: no such file or table: old.parquet (no file or folder of that name ...)
    """
    if is_url(target) or "/" in target or "\\" in target:
        return False  # a path: the reader says if it is missing
    try:
        if Path(target).exists():
            return False
    except OSError:
        return False  # a name too long for the filesystem...: source_config says so
    why = not_a_table(target)
    if why is None and engine is not None and engine != "spark":
        why = "a catalog table needs --engine spark"
    elif why is None and fmt is not None and engine is None:
        why = f"--format-{label.lower()} says it is a file (a catalog table needs --engine spark)"
    if why is None:
        return True
    raise DiffError(f"--{label.lower()}: no such file or table: {printable(target)} (no file or folder of that "
                    f"name here, and {why})")  # fmt: skip


def _no_such_table(side: _Side, engines: dict[str, Engine[Any]]) -> bool:
    """Whether Spark's catalog says it has no table ``side.io.table`` (False when it cannot tell: the read says)."""
    eng = engines.setdefault(side.engine, get_engine(side.engine))
    try:
        return not eng.spark.catalog.tableExists(side.io.table)  # type: ignore[attr-defined]
    except Exception:  # an engine without a catalog, a name the catalog cannot parse: the read names the problem
        return False


def _run(name: str, sa: _Side, sb: _Side, key: list[str] | None, n: int | None, wanted: list[int] | None,
         note: str, limit: int, engines: dict[str, Engine[Any]] | None = None) -> DiffReport:  # fmt: skip
    engines = {} if engines is None else engines
    tables = []
    if wanted is None:  # checked against the data hash: one this ubunye cannot compute is refused before any read
        _vouched(sa)
        _vouched(sb)
    for side in (sa, sb):
        whole = _read(side, engines)
        try:
            frame = _filtered(whole, wanted, key, n)
        except UbunyeError as exc:  # the key the record's buckets use is no column of what is there now
            if side.dataset is None:
                raise DiffError(f"{side.label}: {side.what}: {exc}") from exc
            raise DiffError(_stale(side) + f": {exc}; cannot diff it") from exc
        try:
            table = _to_arrow(frame)  # a lazy frame (Spark) reads its files here: a vacuumed Delta fails here
        except Exception as exc:
            raise _cannot_read(side, exc) from exc
        side.rows_read = table.num_rows
        try:
            _check_side(side, table, key, n, wanted)
        except _BucketDiffers as exc:
            assert n is not None
            raise _bucket_verdict(side, whole, exc, n, engines[side.engine]) from None
        recorded = _as_recorded(side, table)
        if recorded is not table:
            note += f"; {side.label} read no row: its columns are the ones its run recorded"
        tables.append(recorded)
    result = diff_tables(tables[0], tables[1], key=key, limit=limit)
    shown = None if n is None else {"n": n, "differing": wanted}
    return DiffReport(name, _describe(sa), _describe(sb), key, shown, result, note)


def _only_with(mode: str, given: dict[str, object]) -> None:
    """Refuse the first option of ``given`` that is set: it applies only when diffing ``mode``."""
    for option, value in given.items():
        if value is not None:
            raise typer.BadParameter(f"applies only to a diff of {mode}: leave it out", param_hint=option)


def _keys(text: str | None) -> list[str] | None:
    if text is None:
        return None
    keys = [k.strip() for k in text.split(",") if k.strip()]
    if not keys:
        raise typer.BadParameter("name at least one column", param_hint="--key")
    return keys


_RECORDS_HELP = "Read records from here: a folder or a URL (s3://bucket/records); default $UBUNYE_RECORDS."
_DATASET_HELP = "outputs.NAME or inputs.NAME (default: the changed output)."


@domain_errors
def diff_command(
    run_a: Annotated[str | None, typer.Argument(help="Run A (id, prefix, latest~N or a record .json).")] = None,
    run_b: Annotated[str | None, typer.Argument(help="Run B.")] = None,
    usecase_dir: Annotated[str | None, typer.Option("-d", "--usecase-dir", help="Folder holding the records.")] = None,
    usecase: Annotated[str | None, typer.Option("-u", "--usecase")] = None,
    package: Annotated[str | None, typer.Option("-p", "--package")] = None,
    task: Annotated[str | None, typer.Option("-t", "--task")] = None,
    records: Annotated[str | None, typer.Option("--records", help=_RECORDS_HELP)] = None,
    dataset: Annotated[str | None, typer.Option("--dataset", help=_DATASET_HELP)] = None,
    key: Annotated[str | None, typer.Option("--key", help="Key columns, comma separated.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=0, help="At most N rows / cells per list.")] = 20,
    a: Annotated[str | None, typer.Option("--a", help="Table A directly: a path, URL or Spark catalog table.")] = None,
    b: Annotated[str | None, typer.Option("--b", help="Table B directly.")] = None,
    format_a: Annotated[str | None, typer.Option("--format-a", help="parquet, csv, json or delta.")] = None,
    format_b: Annotated[str | None, typer.Option("--format-b")] = None,
    engine: Annotated[str | None, typer.Option("--engine", "-e", help="pandas, spark or polars, both sides.")] = None,
    engine_a: Annotated[str | None, typer.Option("--engine-a")] = None,
    engine_b: Annotated[str | None, typer.Option("--engine-b")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:  # fmt: skip
    """The rows two runs, or two tables, differ in: rows only in A, rows only in B and, for keys in both, the
    changed cells side by side. Only the rows of differing buckets are read (docs/rows-v1.md section 12), and
    each run's rows are checked against its record first: data overwritten since is an error, never a wrong diff.

    --a/--b: a file or folder that exists here is read as one; a name with a / or a URL is a path; a name that
    exists nowhere is a Spark catalog table (sales, db.sales, cat.db.`my table`) when it is spelled like one,
    else (old.parquet, old.delta, day.csv.gz, old-data, or any name with --format or a non-Spark engine) it is
    "no such file or table" at once, without starting Spark.

    A run's dataset is read with the options its record's config gives it (a csv sep); a csv or json whose
    options the record does not hold is said to be so when its rows are not the record's. --key names columns
    the runs recorded, each once (else an error, as with --a/--b, even when the data hashes are equal).

    A run's rows are checked against its record: the recorded schema, then the numbers of the buckets read or,
    without usable buckets, the recorded data hash (a hash method other than rows-v1 cannot be checked: an
    error saying so). Records of equal data hashes that disagree (as lineage compare finds them) are never "same
    data" from their hashes: the rows of differing buckets are read or, when no bucket differs, every row,
    checked against each record's data hash, schema and column profile; so are records whose data hashes differ
    when no bucket does (a column's type alone). An output written with mode: append is an error saying so: its
    record hashes the rows that run added, not the location (diff two tables with --a/--b instead). A record
    naming a dataset twice, or whose buckets do not decode, is an error naming the record file and field. An
    output its run did not write (written: false) is an error saying so, before any read; rows read with another
    engine than the run's that are not what it recorded are named as read by that engine; rows giving the
    record's data hash but not its bucket are a damaged record. A side that reads no row shows its record's
    columns. --limit cuts lists, not counts ("first 20 of 30 cells shown").

    Exit status: 0 same data; 1 rows differ; 2 usage or read errors (a run or dataset not found, data gone, a
    malformed record).

    Examples: ubunye diff latest~1 latest -d examples -u shop -p daily -t revenue;
    ubunye diff --a data/old.parquet --b data/new --key order_id
    """
    from ubunye.cli.lineage import resolve_runs  # the one way run references are read

    for name, value in (("--engine", engine), ("--engine-a", engine_a), ("--engine-b", engine_b)):
        if value is not None and value not in BACKENDS:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(BACKENDS)}", param_hint=name)
    for name, value in (("--format-a", format_a), ("--format-b", format_b)):
        if value is not None and value not in FORMATS:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(FORMATS)}", param_hint=name)
    keys = _keys(key)
    if (a is None) != (b is None):
        raise typer.BadParameter("give both --a and --b", param_hint="--a/--b")
    # An option of the other way of diffing would be ignored without a word: refused, naming it.
    if a is not None and b is not None:
        if run_a or run_b:
            raise typer.BadParameter("give two runs or --a/--b, not both", param_hint="RUN_A")
        _only_with("runs", {"-d": usecase_dir, "-u": usecase, "-p": package, "-t": task, "--records": records,
                            "--dataset": dataset})  # fmt: skip
        report = diff_targets(args.target(a, "--a"), args.target(b, "--b"), fmt_a=format_a, fmt_b=format_b,
                              engine_a=engine_a or engine, engine_b=engine_b or engine, key=keys,
                              limit=limit)  # fmt: skip
    else:
        if not (run_a and run_b):
            raise typer.BadParameter("give two runs (or --a and --b)", param_hint="RUN_A RUN_B")
        _only_with("--a/--b", {"--format-a": format_a, "--format-b": format_b, "--engine-a": engine_a,
                               "--engine-b": engine_b})  # fmt: skip
        where = "." if usecase_dir is None else usecase_dir
        found_a, found_b = resolve_runs([run_a, run_b], where, usecase, package, task, records)  # one listing
        ra, rb = found_a.record, found_b.record
        assert ra is not None and rb is not None
        report = diff_runs(ra, rb, dataset, keys, limit, engine, (str(found_a.path), str(found_b.path)))
    if as_json:
        emit_json(report.to_dict())
    else:
        render_diff(report)
    raise typer.Exit(0 if report.same else 1)


def render_diff(r: DiffReport) -> None:
    """The diff as rich tables: the verdict, what was read, then rows only in A / B and changed cells."""
    out = console(markup=False)
    d = r.diff
    verdict = "same data"
    if d is not None and not r.same:
        if d.only_a.count or d.only_b.count or d.changed.rows:
            verdict = (f"rows differ: {d.only_a.count} only in A, {d.only_b.count} only in B"
                       + (f", {d.changed.rows} changed" if d.key else ""))  # fmt: skip
        else:  # every row alike, in the columns both have: a column added, dropped or retyped
            verdict = "columns differ, rows alike"
    out.print(line(("diff ", "bold"), dash(r.dataset, "bold"), ": ", dash(verdict, "bold")))
    for label, side in (("A", r.a), ("B", r.b)):
        version = f" @ version {side['version']}" if side.get("version") is not None else ""
        out.print(line(f"  {label}: ", dash(side["what"]), f"  ({side['engine']}) ", dash(side["location"]),
                       version, f", {side['rows_read']:,} rows read"))  # fmt: skip
    if r.note:
        out.print(line("  ", dash(r.note)))
    if d is None:
        return
    if d.columns_only_a or d.columns_only_b or d.types:
        for c in d.columns_only_a:
            out.print(line("  column only in A: ", dash(c)))
        for c in d.columns_only_b:
            out.print(line("  column only in B: ", dash(c)))
        for c, (ta, tb) in d.types.items():
            out.print(line("  column ", dash(c), " type ", dash(ta), " -> ", dash(tb)))
    for title, rows in (("rows only in A", d.only_a), ("rows only in B", d.only_b)):
        if not rows.count:
            continue
        first = f", first {len(rows.rows)}" if len(rows.rows) < rows.count else ""
        out.print(f"{title} ({rows.count}{first})")  # above the table, not its title: a title wraps to its width
        t = Table()
        if not rows.rows:  # --limit 0: the count alone
            continue
        columns = list(rows.rows[0])
        for c in columns:
            t.add_column(dash(c), overflow="fold")  # a column's name is data: escaped like its cells
        for row in rows.rows:
            t.add_row(*[dash(row[c]) for c in columns])
        out.print(t)
    if d.changed.rows:
        shown, total = len(d.changed.cells), d.changed.cell_count
        cut = f"first {shown} of {total} cells shown" if shown < total else f"{shown} cells shown"
        out.print(f"changed cells ({d.changed.rows} rows; {cut})")
        if not shown:
            return
        t = Table()
        for c in ("key", "column", "A", "B"):
            t.add_column(c, overflow="fold")
        for cell in d.changed.cells:
            key = ", ".join(f"{k}={v}" for k, v in cell.key.items())
            t.add_row(dash(key), dash(cell.column), dash(cell.a), dash(cell.b))
        out.print(t)


def register(app: typer.Typer) -> None:
    """Add ``diff`` to the app."""
    app.command(name="diff", cls=args.OptionsOnce, help=flow_help(diff_command.__doc__))(diff_command)
