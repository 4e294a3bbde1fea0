"""What ``hash_delta`` keeps per data file of a Delta table, and how it is made, added, finished and cached:
rows-v1 sums (:class:`RowSums`) or, for a profiled input, profile-v1 partials (:class:`ProfileParts`).

Both are counts and sums modulo 2^64 (docs/rows-v1.md sections 8 and 12), so a table's numbers are the sum of its
files' numbers whatever the order: the one fact incremental hashing rests on. Each kind says how one file's
numbers are made from Arrow batches (the twin) and, grouped by file, on Spark (the jar or the twin on the
executors), how numbers add (from none: an empty table still has its schema), how many rows they count (checked
against the log's ``numRecords``), what a table's total becomes (a ``FrameHash``, and a ``FrameProfile``), and
where the cache keeps them (``SumsCache``: sums, or profiles filed under their key and bucket count).

Example:
    >>> import pyarrow as pa
    >>> from ubunye.hashing import hash_frame
    >>> t = pa.table({"x": [1, 2, 3]})
    >>> kind = ProfileParts('struct<"x":int64>', (("x", "int64"),), None, 4)
    >>> parts = [kind.of_batches(t.slice(i, 1).to_batches()) for i in range(3)]
    >>> h, profile = kind.finish(kind.add(parts), "arrow")
    >>> h == hash_frame(t), profile.buckets.n
    (True, 4)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol, TypeVar

import pyarrow as pa

from ubunye.hashing.delta_files import DeltaFile, FileProfiles, FileSums, Sums, SumsCache, batch_sums
from ubunye.hashing.digest import FrameHash, add_sums, finish
from ubunye.hashing.profile import FrameProfile, Profiler, ProfileSums, empty_sums, merge

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

P = TypeVar("P")
P_co = TypeVar("P_co", covariant=True)
Identity = tuple[int, int, str | None]


class Cached(Protocol[P_co]):
    """Numbers a cache kept for one table (:class:`FileSums`, :class:`FileProfiles`)."""

    @property
    def table_id(self) -> str: ...

    @property
    def schema(self) -> str: ...

    @property
    def read(self) -> str: ...

    @property
    def files(self) -> Mapping[str, tuple[Identity, P_co]]: ...

    def reusable(self, file: DeltaFile) -> P_co | None: ...


class FileNumbers(Protocol[P]):
    """One kind of per-file numbers (see the module docstring)."""

    #: What the numbers are called in a reason: ``"sums"`` or ``"profiles"``.
    noun: str

    def of_batches(self, batches: Iterable[pa.RecordBatch]) -> P:
        """The numbers of some rows, from their Arrow batches (the twin)."""

    def add(self, parts: Iterable[P]) -> P:
        """The numbers of several parts of the table added (none: those of no rows)."""

    def rows(self, part: P) -> int:
        """The rows ``part`` counts."""

    def spark(self, frame: DataFrame, file: str, columns: list[str], schema: str, engine: str) -> dict[str, P]:
        """The numbers per file of ``frame`` (the column ``file``, then ``columns``), by ``engine``."""

    def finish(self, total: P, engine: str) -> tuple[FrameHash, FrameProfile | None]:
        """The table's hash, and its profile when these are profiles."""

    def load(self, cache: SumsCache, table: str, reader: str) -> Cached[P] | None:
        """What ``cache`` keeps of this kind for the table and reader (raises for what it cannot trust)."""

    def save(
        self, cache: SumsCache, table: str, table_id: str, reader: str, schema: str, version: int,
        files: dict[str, tuple[Identity, P]], read: str,
    ) -> None:  # fmt: skip
        """Keep ``files`` in ``cache`` as this kind's numbers of the table (``read``: as ``FileSums.read``)."""

    def missing(self) -> str:
        """Why nothing is reused when the cache holds nothing of this kind for the table."""


class RowSums:
    """rows-v1 ``(row_count, sum1, sum2)`` per file (section 8) of a table of the schema string ``schema``."""

    noun = "sums"

    def __init__(self, schema: str) -> None:
        self.schema = schema

    def of_batches(self, batches: Iterable[pa.RecordBatch]) -> Sums:
        return batch_sums(batches)

    def add(self, parts: Iterable[Sums]) -> Sums:
        return add_sums(parts)

    def rows(self, part: Sums) -> int:
        return part[0]

    def spark(self, frame: DataFrame, file: str, columns: list[str], schema: str, engine: str) -> dict[str, Sums]:
        from ubunye.hashing.delta_spark import jvm_file_sums, twin_file_sums

        return jvm_file_sums(frame, file, columns, schema) if engine == "jvm" else twin_file_sums(frame, columns)

    def finish(self, total: Sums, engine: str) -> tuple[FrameHash, FrameProfile | None]:
        return finish(self.schema, *total, engine=engine), None

    def load(self, cache: SumsCache, table: str, reader: str) -> FileSums | None:
        return cache.load(table, reader)

    def save(
        self, cache: SumsCache, table: str, table_id: str, reader: str, schema: str, version: int,
        files: dict[str, tuple[Identity, Sums]], read: str,
    ) -> None:  # fmt: skip
        cache.save(FileSums(table, table_id, reader, schema, version, files, read))

    def missing(self) -> str:
        return "no sums of this table are cached yet"


class ProfileParts:
    """profile-v1 partials per file (section 12) for one schema, key and bucket count.

    Args:
        schema: the table's rows-v1 schema string.
        columns: its ``(name, type name)`` pairs in code point order of the names.
        key: the key names, sorted (as ``check_profile_options`` gives them), or None.
        buckets: the bucket count, 0 for none.
    """

    noun = "profiles"

    def __init__(
        self, schema: str, columns: tuple[tuple[str, str], ...], key: tuple[str, ...] | None, buckets: int
    ) -> None:
        self.schema, self.columns, self.key, self.buckets = schema, columns, key, buckets
        self._zero = empty_sums(schema, columns, key, buckets)

    def of_batches(self, batches: Iterable[pa.RecordBatch]) -> ProfileSums:
        profiler: Profiler | None = None
        for batch in batches:
            if batch.num_rows:
                profiler = profiler or Profiler(batch.schema, self.key, self.buckets)
                profiler.add(batch)
        # merge refuses, naming both, numbers of another schema than the table's: never a silent mix
        return self._zero if profiler is None else merge([self._zero, profiler.sums()])

    def add(self, parts: Iterable[ProfileSums]) -> ProfileSums:
        return merge([self._zero, *parts])

    def rows(self, part: ProfileSums) -> int:
        return part.row_count

    def spark(
        self, frame: DataFrame, file: str, columns: list[str], schema: str, engine: str
    ) -> dict[str, ProfileSums]:
        from ubunye.hashing.delta_spark_profiles import jvm_file_profiles, twin_file_profiles

        if engine == "jvm":
            return jvm_file_profiles(frame, file, columns, schema, self.columns, self.key, self.buckets)
        return twin_file_profiles(frame, columns, self.key, self.buckets)

    def finish(self, total: ProfileSums, engine: str) -> tuple[FrameHash, FrameProfile | None]:
        profile = total.finish(engine)
        return profile.hash, profile

    def load(self, cache: SumsCache, table: str, reader: str) -> FileProfiles | None:
        found = cache.load_profiles(table, reader, self.key, self.buckets)
        if found is None:
            return None
        # The cache checks these too; a partial of other buckets or columns must never reach merge.
        if (found.key, found.buckets) != (self.key, self.buckets):
            shown = f"key {list(found.key) if found.key else None}, {found.buckets} buckets"
            raise ValueError(f"the cached profiles were made for {shown}, not for {self.describe()}")
        if found.schema == self.schema:  # else the schema change is the reason given
            for path, (_, part) in found.files.items():
                if (part.columns, part.key, part.n_buckets) != (self.columns, self.key, self.buckets):
                    raise ValueError(f"the cached profile of {path} has the columns {part.columns}, not {self.columns}")
        return found

    def save(
        self, cache: SumsCache, table: str, table_id: str, reader: str, schema: str, version: int,
        files: dict[str, tuple[Identity, ProfileSums]], read: str,
    ) -> None:  # fmt: skip
        cache.save_profiles(FileProfiles(table, table_id, reader, schema, version, self.key, self.buckets, files, read))

    def describe(self) -> str:
        """The key and bucket count, as reasons show them."""
        return f"key {list(self.key) if self.key else None}, {self.buckets} buckets"

    def missing(self) -> str:
        return f"no per-file profiles of this table ({self.describe()}) are cached yet"


__all__ = ["Cached", "FileNumbers", "Identity", "ProfileParts", "RowSums"]
