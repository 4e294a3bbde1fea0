"""``ubunye.testing.backend_conformance``: does a backend hash exactly like the rows-v1 reference?

Subclass :class:`BackendConformance` in a test module and give it an ``engine`` fixture returning your
engine (the interface of :mod:`ubunye.engines`). pytest then runs, against the Python twin as reference:

- every conformance vector (docs/rows-v1.md section 10) and a few generated tables, built through the backend:
  same schema string, same canonical lines (as a multiset: row order is free), same row count and data_hash;
- profile-v1 of the same frames (section 12): every column's type, nulls, nans, sums and fingerprint, and the
  row buckets of every case a vector lists, exactly as the vector (or, for generated tables, the twin) gives them;
- a write/read round trip (parquet and delta) with an unchanged hash;
- whole example tasks (examples/shop/daily/...) leaving the same output hashes as the pandas engine.

A failure names the column, its type and the first differing canonical line (for a profile: the column or the
bucket index, and both values).

Example (a test module of the backend's own repository):

    from ubunye.testing.backend_conformance import BackendConformance
    import pytest

    class TestMyBackend(BackendConformance):
        unsupported_types = frozenset({"map"})   # skipped, and named in the skip reason

        @pytest.fixture
        def engine(self):
            return MyEngine()

:func:`check_frame` and :func:`check_profile` are the comparisons themselves, usable on their own.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa
import pytest

from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.types import TypeTree, format_type, parse_schema, parse_type, type_kinds, type_name
from ubunye.testing.generated import generated_tables
from ubunye.testing.vectors import Vector, load_vectors

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ubunye.engines import Engine
    from ubunye.hashing import FrameProfile

# A symlinked folder in a checkout (tests/vectors, examples), real copies in a built wheel.
_DATA = Path(__file__).resolve().parent / "data"


def vectors_dir() -> Path:
    """Where the conformance vectors are: ``$UBUNYE_VECTORS_DIR``, else the copy shipped in the package."""
    return Path(os.environ.get("UBUNYE_VECTORS_DIR", _DATA / "vectors"))


def examples_dir() -> Path:
    """Where the example usecase is: ``$UBUNYE_EXAMPLES_DIR``, else the copy shipped in the package."""
    return Path(os.environ.get("UBUNYE_EXAMPLES_DIR", _DATA / "examples"))


def _vectors() -> list[Vector]:
    folder = vectors_dir()
    if not folder.is_dir():
        msg = f"no rows-v1 conformance vectors at {folder}: set UBUNYE_VECTORS_DIR to a folder of vector files"
        raise FileNotFoundError(msg)
    return load_vectors(folder)


def _byte_vectors() -> list[Vector]:
    """The vectors whose strings hold bytes that are not UTF-8 (section 4.1), in ``<vectors>/bytes``."""
    folder = vectors_dir() / "bytes"
    return load_vectors(folder) if folder.is_dir() else []


# -- the comparison ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """What the backend must give for one table: schema string, canonical lines, row count, data hash."""

    schema: str
    lines: list[str]
    row_count: int
    data_hash: str

    @classmethod
    def of(cls, table: pa.Table) -> Reference:
        """The reference twin's answer for an Arrow table."""
        h = hash_frame(table)
        return cls(h.schema, canonical_lines(table), h.row_count, h.data_hash)

    @classmethod
    def of_vector(cls, vector: Vector) -> Reference:
        """A conformance vector's expected answer."""
        e = vector.expected
        return cls(e["schema"], list(e["lines"]), e["row_count"], e["data_hash"])


def _columns(schema: str) -> dict[str, str]:
    return {name: format_type(t) for name, t in parse_schema(schema)}


def _first_difference(got: list[str], want: list[str]) -> tuple[str | None, str | None]:
    """The first reference line the backend lacks, and the backend line most like it (the row it stands for)."""
    surplus_got = Counter(got) - Counter(want)
    surplus_want = Counter(want) - Counter(got)
    want_line = next((line for line in want if surplus_want[line]), None)
    candidates = [line for line in got if surplus_got[line]][:2000]
    if want_line is None or not candidates:
        return (candidates[0] if candidates else None), want_line
    want_items = _items(want_line)
    return max(candidates, key=lambda line: len(_items(line) & want_items)), want_line


def _items(line: str) -> set[tuple[str, str]]:
    try:
        return {(k, json.dumps(v, sort_keys=True)) for k, v in json.loads(line).items()}
    except (ValueError, AttributeError):
        return set()


def _differing_columns(got: str | None, want: str | None) -> list[str]:
    try:
        a, b = json.loads(got or "{}"), json.loads(want or "{}")
    except ValueError:
        return []
    return sorted(k for k in set(a) | set(b) if a.get(k, None) != b.get(k, None) or (k in a) != (k in b))


def check_frame(
    frame: object,
    reference: Reference,
    *,
    backend: str = "backend",
    what: str = "table",
    engine: Engine[Any] | None = None,
) -> None:
    """Raise AssertionError unless ``frame`` hashes exactly like ``reference``.

    The message names each differing column with its type and shows the first differing canonical line.
    ``engine`` (optional) hashes the frame (``engine.hash``); by default ``hash_frame``.

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"n": pa.array([1], pa.int32())})
        >>> check_frame(t.cast(pa.schema([("n", pa.int64())])), Reference.of(t), what="t")
        Traceback (most recent call last):
        ...
        AssertionError: backend differs from the rows-v1 reference on t:
          column 'n': type int64, reference int32
          canonical lines: all 1 equal
          data_hash: backend sha256:..., reference sha256:...
    """
    h = engine.hash(frame) if engine is not None else hash_frame(frame)
    lines = canonical_lines(frame)
    if (h.schema, h.row_count, h.data_hash) == (reference.schema, reference.row_count, reference.data_hash) and sorted(
        lines
    ) == sorted(reference.lines):
        return
    problems: list[str] = []
    got_types, want_types = _columns(h.schema), _columns(reference.schema)
    for name in sorted(set(got_types) | set(want_types)):
        if name not in got_types:
            problems.append(f"column {name!r} ({want_types[name]}): missing")
        elif name not in want_types:
            problems.append(f"column {name!r} ({got_types[name]}): not in the reference")
        elif got_types[name] != want_types[name]:
            problems.append(f"column {name!r}: type {got_types[name]}, reference {want_types[name]}")
    got_line, want_line = _first_difference(lines, reference.lines)
    if got_line is None and want_line is None:
        problems.append(f"canonical lines: all {len(lines)} equal")
    else:
        for name in _differing_columns(got_line, want_line):
            if not any(p.startswith(f"column {name!r}") for p in problems):
                problems.append(f"column {name!r} ({want_types.get(name, got_types.get(name))}): values differ")
        problems.append(f"first differing line:\n    backend:   {got_line}\n    reference: {want_line}")
    if h.row_count != reference.row_count:
        problems.append(f"rows: backend {h.row_count}, reference {reference.row_count}")
    problems.append(f"data_hash: backend {h.data_hash}, reference {reference.data_hash}")
    raise AssertionError(f"{backend} differs from the rows-v1 reference on {what}:\n  " + "\n  ".join(problems))


# -- the profile comparison (docs/rows-v1.md section 12) -------------------------------------------------------------

_PROFILE_FIELDS = ("type", "nulls", "nans", "sum1", "sum2", "fingerprint")
_SHOWN_BUCKETS = 5  # per case: enough to see the pattern, short enough to read


def _hex16(x: int) -> str:
    return f"{x:016x}"


def _key_text(key: Sequence[str] | None) -> str:
    return "none" if key is None else "[" + ",".join(json.dumps(k, ensure_ascii=False) for k in key) + "]"


def _profile_columns(profile: FrameProfile) -> dict[str, dict[str, Any]]:
    return {
        name: {
            "type": c.type,
            "nulls": c.nulls,
            "nans": c.nans,
            "sum1": _hex16(c.sum1),
            "sum2": _hex16(c.sum2),
            "fingerprint": c.fingerprint,
        }
        for name, c in profile.columns.items()
    }


def _profile_buckets(profile: FrameProfile) -> list[list[int | str]]:
    """The occupied buckets as a vector lists them: ``[index, count, sum1, sum2]`` (section 12.4)."""
    rows = [] if profile.buckets is None else profile.buckets.rows()
    return [[i, n, _hex16(a), _hex16(b)] for i, (n, a, b) in enumerate(rows) if n]


def profile_reference(table: pa.Table, cases: list[tuple[int, tuple[str, ...] | None]]) -> dict[str, Any]:
    """The reference twin's profile-v1 of an Arrow table, in the form of a vector's ``expected_profile``.

    ``cases`` are the bucket cases, ``(n_buckets, key or None)`` (docs/rows-v1.md section 12.2).

    Example:
        >>> import pyarrow as pa
        >>> p = profile_reference(pa.table({"n": pa.array([1, 2, None], pa.int64())}), [(1, None)])
        >>> p["columns"]["n"]["nulls"], p["buckets"][0]["buckets"][0][:2]
        (1, [0, 3])
    """
    from ubunye.hashing.profile import profile_frame

    columns: dict[str, dict[str, Any]] = {}
    buckets = []
    for n, key in cases:
        profile = profile_frame(table, key=key, buckets=n)
        columns = columns or _profile_columns(profile)
        buckets.append({"n": n, "key": None if key is None else list(key), "buckets": _profile_buckets(profile)})
    if not cases:
        columns = _profile_columns(profile_frame(table))
    return {"columns": columns, "buckets": buckets}


def check_profile(
    frame: object,
    expected: dict[str, Any],
    *,
    data_hash: str | None = None,
    backend: str = "backend",
    what: str = "table",
    profile_engine: str | None = None,
) -> None:
    """Raise AssertionError unless ``profile_frame`` of ``frame`` gives exactly ``expected`` (section 12).

    ``expected`` has the form of a vector's ``expected_profile``: ``columns`` (name to type, nulls, nans, sums as
    hex16, fingerprint) and ``buckets``, a list of cases ``{"n", "key", "buckets": [[index, count, sum1, sum2],
    ...]}`` listing the occupied buckets. ``data_hash``, when given, is checked against the profile's own hash.
    ``profile_engine`` is passed to ``profile_frame`` as ``engine`` (``"jvm"``, ``"arrow"``, None to choose).
    The message names each differing column and field, and each differing bucket with both values.

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"n": pa.array([1, 2, None], pa.int64())})
        >>> want = profile_reference(t, [(4, ("n",))])
        >>> check_profile(t, want, what="t")
        >>> check_profile(t.slice(0, 2), want, what="t")
        Traceback (most recent call last):
        ...
        AssertionError: backend differs from the profile-v1 reference on t:
          column 'n' (int64): nulls: backend 0, reference 1
          column 'n' (int64): sum1: backend ..., reference ...
          ...
    """
    from ubunye.hashing.profile import profile_frame

    problems: list[str] = []
    cases = list(expected["buckets"]) or [None]
    for i, case in enumerate(cases):
        n = 256 if case is None else case["n"]
        key = None if case is None or case["key"] is None else tuple(case["key"])
        where = "profile_frame" + ("" if case is None else f" (n={n}, key={_key_text(key)})")
        try:
            profile = profile_frame(frame, key=key, buckets=n, engine=profile_engine)
        except Exception as exc:
            # Any error is the backend failing this case: say which case, keep the traceback.
            raise AssertionError(f"{backend} on {what}: {where} raised {type(exc).__name__}: {exc}") from exc
        if i == 0:
            problems += _column_problems(_profile_columns(profile), expected["columns"])
            if data_hash is not None and profile.hash.data_hash != data_hash:
                problems.append(f"data_hash: backend {profile.hash.data_hash}, reference {data_hash}")
        if case is not None:
            problems += _bucket_problems(profile, case)
    if problems:
        raise AssertionError(f"{backend} differs from the profile-v1 reference on {what}:\n  " + "\n  ".join(problems))


def _column_problems(got: dict[str, dict[str, Any]], want: dict[str, dict[str, Any]]) -> list[str]:
    problems = []
    for name in sorted(set(got) | set(want), key=lambda n: n.encode("utf-8")):
        if name not in got:
            problems.append(f"column {name!r} ({want[name]['type']}): missing from the profile")
            continue
        if name not in want:
            problems.append(f"column {name!r} ({got[name]['type']}): not in the reference")
            continue
        for field in _PROFILE_FIELDS:
            if got[name][field] != want[name][field]:
                a, b = got[name][field], want[name][field]
                problems.append(f"column {name!r} ({want[name]['type']}): {field}: backend {a}, reference {b}")
    return problems


def _bucket_problems(profile: FrameProfile, case: dict[str, Any]) -> list[str]:
    label = f"buckets n={case['n']}, key={_key_text(case['key'])}"
    if profile.buckets is None:
        return [f"{label}: the profile has no buckets"]
    if profile.buckets.n != case["n"] or len(profile.buckets.rows()) != case["n"]:
        return [f"{label}: the profile has {profile.buckets.n} buckets ({len(profile.buckets.rows())} rows)"]
    # Every bucket the profile has, not only those it counts rows in: sums without a count are wrong too.
    got = {i: [c, _hex16(a), _hex16(b)] for i, (c, a, b) in enumerate(profile.buckets.rows()) if (c, a, b) != (0, 0, 0)}
    want = {b[0]: b[1:] for b in case["buckets"]}
    empty = [0, _hex16(0), _hex16(0)]
    differing = [i for i in sorted(set(got) | set(want)) if got.get(i, empty) != want.get(i, empty)]

    def text(b: list[Any]) -> str:
        return f"count {b[0]}, sum1 {b[1]}, sum2 {b[2]}"

    problems = [
        f"{label}: bucket {i}: backend {text(got.get(i, empty))}; reference {text(want.get(i, empty))}"
        for i in differing[:_SHOWN_BUCKETS]
    ]
    if len(differing) > _SHOWN_BUCKETS:
        problems.append(f"{label}: {len(differing) - _SHOWN_BUCKETS} more buckets differ")
    return problems


# -- the suite -----------------------------------------------------------------------------------------------------


def _run_example(engine: Engine[Any], task: str, root: Path) -> dict[str, str | None]:
    from ubunye.lineage.store import load_record
    from ubunye.runner import run_task

    # Never the copy's leftovers (data/ of earlier runs): the upstream task makes this run's inputs.
    shutil.copytree(examples_dir(), root, ignore=shutil.ignore_patterns(".ubunye", "__pycache__", "data"))
    if task != "orders":
        run_task(root / "shop" / "daily" / "orders", dt="2026-12-01", engine=engine, lineage=False)
    result = run_task(root / "shop" / "daily" / task, dt="2026-12-01", engine=engine, lineage=True)
    assert isinstance(result.record_path, Path)  # the usecase's own store, on disk
    record = load_record(result.record_path)  # the store's one loader, not a second reading of the file
    return {f"outputs.{o.name}": o.data_hash for o in record.outputs} | {
        f"inputs.{i.name}": i.data_hash for i in record.inputs
    }


_PANDAS_EXAMPLES: dict[str, dict[str, str | None]] = {}


class BackendConformance:
    """The conformance suite: subclass it (name the subclass ``Test...``) and provide an ``engine`` fixture.

    Class attributes a subclass may set:
        backend_name: how messages name the backend (default: ``engine.name``).
        unsupported_types: rows-v1 type kinds the backend cannot hold (``"map"``, ``"timestamp_ntz"``,
            ``"decimal"``...): vectors using them are skipped with the reason, generated columns dropped.
        round_trip_formats: formats written and read back (default parquet and delta).
        example_tasks: tasks of examples/shop/daily run against the pandas reference.
        invalid_utf8_strings: the backend's strings can hold bytes that are not UTF-8 (Spark, Arrow), so the
            vectors of ``<vectors>/bytes`` (section 4.1) are checked too; otherwise they are skipped.
        profile: True (default) checks profile-v1 (section 12) of every vector and generated table. To turn it
            off, set it to the reason, a string (``profile = "profiles are computed by the warehouse"``): the
            profile tests are skipped with it. ``False`` alone fails: a claim left out needs its reason.
        profile_engines: the ``engine=`` values ``profile_frame`` is checked with (default ``(None,)``, its own
            choice); Spark checks ``("jvm", "arrow")``, the jar and the jar-free path.
    """

    backend_name: ClassVar[str | None] = None
    unsupported_types: ClassVar[frozenset[str]] = frozenset()
    round_trip_formats: ClassVar[tuple[str, ...]] = ("parquet", "delta")
    example_tasks: ClassVar[tuple[str, ...]] = ("orders", "revenue", "customers")
    invalid_utf8_strings: ClassVar[bool] = False
    profile: ClassVar[bool | str] = True
    profile_engines: ClassVar[tuple[str | None, ...]] = (None,)

    @pytest.fixture
    def engine(self) -> Engine[Any]:
        """Override: return the engine under test."""
        pytest.fail("subclass BackendConformance and define an `engine` fixture returning your engine")

    def make_frame(self, engine: Engine[Any], table: pa.Table) -> object:
        """The backend's frame holding ``table``. Default: ``engine.from_pandas`` of an Arrow-backed pandas frame."""
        import pandas as pd

        return engine.from_pandas(table.to_pandas(types_mapper=pd.ArrowDtype))

    def _name(self, engine: Engine[Any]) -> str:
        return self.backend_name or f"backend {getattr(engine, 'name', type(engine).__name__)!r}"

    def _supported(self, table: pa.Table) -> pa.Table:
        keep = [f.name for f in table.schema if not self._blocked(parse_type(type_name(f.type, f.name)))]
        return table.select(keep)

    def _blocked(self, tree: TypeTree) -> set[str]:
        return type_kinds(tree) & set(self.unsupported_types)

    def _skip_unclaimed(self, engine: Engine[Any], vector: Vector) -> None:
        if vector.name in {v.name for v in _byte_vectors()} and not self.invalid_utf8_strings:
            pytest.skip(f"{self._name(engine)} does not claim strings holding bytes that are not UTF-8")
        blocked = set().union(*(self._blocked(parse_type(t)) for _, t in vector.columns))
        if blocked:
            pytest.skip(f"{self._name(engine)} does not hold {', '.join(sorted(blocked))}")

    def _skip_unclaimed_profile(self, engine: Engine[Any]) -> None:
        if self.profile is True:
            return
        if isinstance(self.profile, str) and self.profile.strip():
            pytest.skip(f"{self._name(engine)} does not claim profile-v1: {self.profile}")
        pytest.fail(
            f"{type(self).__name__}.profile = {self.profile!r}: to turn profile checks off, set it to the reason"
        )

    @pytest.mark.parametrize("vector", _vectors() + _byte_vectors(), ids=lambda v: v.name)
    def test_vector(self, engine: Engine[Any], vector: Vector) -> None:
        """A conformance vector built through the backend gives the vector's expected schema, lines and hash."""
        self._skip_unclaimed(engine, vector)
        frame = self.make_frame(engine, vector.arrow())
        check_frame(
            frame,
            Reference.of_vector(vector),
            backend=self._name(engine),
            what=f"vector {vector.name!r}",
            engine=engine,
        )

    @pytest.mark.parametrize("vector", _vectors() + _byte_vectors(), ids=lambda v: v.name)
    def test_vector_profile(self, engine: Engine[Any], vector: Vector) -> None:
        """profile-v1 of a vector built through the backend: its expected columns and every bucket case (12.4)."""
        self._skip_unclaimed_profile(engine)
        self._skip_unclaimed(engine, vector)
        if vector.expected_profile is None:
            pytest.skip(f"vector {vector.name!r} has no expected_profile (a file from before section 12.4)")
        frame = self.make_frame(engine, vector.arrow())
        for profile_engine in self.profile_engines:
            check_profile(
                frame,
                vector.expected_profile,
                data_hash=vector.expected["data_hash"],
                backend=self._name(engine) + ("" if profile_engine is None else f" (engine={profile_engine!r})"),
                what=f"vector {vector.name!r}",
                profile_engine=profile_engine,
            )

    @pytest.mark.parametrize("name", sorted(generated_tables()))
    def test_generated_profile(self, engine: Engine[Any], name: str) -> None:
        """profile-v1 of a generated table: as the twin gives it, with no key and with a two-column key."""
        self._skip_unclaimed_profile(engine)
        table = self._supported(generated_tables()[name])
        key = tuple(table.column_names[:2][::-1])  # the first two, reversed: given in no set order
        reference = profile_reference(table, [(256, None)] + ([(16, key)] if key else []))
        frame = self.make_frame(engine, table)
        for profile_engine in self.profile_engines:
            check_profile(
                frame,
                reference,
                data_hash=hash_frame(table).data_hash,
                backend=self._name(engine) + ("" if profile_engine is None else f" (engine={profile_engine!r})"),
                what=f"generated {name!r}",
                profile_engine=profile_engine,
            )

    @pytest.mark.parametrize("name", sorted(generated_tables()))
    def test_generated(self, engine: Engine[Any], name: str) -> None:
        """A generated table (every type, nulls, edge values) hashes as the twin hashes it."""
        table = self._supported(generated_tables()[name])
        frame = self.make_frame(engine, table)
        check_frame(frame, Reference.of(table), backend=self._name(engine), what=f"generated {name!r}", engine=engine)

    @pytest.mark.parametrize("fmt", ["parquet", "delta"])
    def test_round_trip(self, engine: Engine[Any], fmt: str, tmp_path: Path) -> None:
        """What the backend writes and reads back hashes as what it wrote."""
        if fmt not in self.round_trip_formats:
            pytest.skip(f"{self._name(engine)}: {fmt} round trip not claimed")
        from ubunye.config import IOConfig

        table = self._supported(generated_tables()["scalars"])
        io = IOConfig(name="round_trip", format=fmt, path=str(tmp_path / "round_trip"))
        engine.write(self.make_frame(engine, table), io, tmp_path)
        back = engine.read(IOConfig(name="round_trip", format=fmt, path=io.path), tmp_path)
        check_frame(back, Reference.of(table), backend=self._name(engine), what=f"{fmt} read back", engine=engine)

    @pytest.mark.parametrize("task", ["orders", "revenue", "customers"])
    def test_example_task(self, engine: Engine[Any], task: str, tmp_path: Path) -> None:
        """A whole example task records the same input and output hashes as on the pandas engine."""
        if task not in self.example_tasks:
            pytest.skip(f"{self._name(engine)}: example task {task!r} not claimed")
        if not (examples_dir() / "shop" / "daily" / task).is_dir():
            pytest.skip(f"no examples at {examples_dir()} (set UBUNYE_EXAMPLES_DIR)")
        if task not in _PANDAS_EXAMPLES:
            from ubunye.engines import get_engine

            _PANDAS_EXAMPLES[task] = _run_example(get_engine("pandas"), task, tmp_path / "pandas")
        got = _run_example(engine, task, tmp_path / "backend")
        want = _PANDAS_EXAMPLES[task]
        assert None not in want.values(), f"the pandas reference has no hash: {want}"
        assert got == want, f"{self._name(engine)}: example task {task!r} recorded {got}, pandas recorded {want}"


__all__ = [
    "BackendConformance",
    "Reference",
    "check_frame",
    "check_profile",
    "examples_dir",
    "profile_reference",
    "vectors_dir",
]
