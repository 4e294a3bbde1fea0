"""profile-v1: column fingerprints and row buckets beside the rows-v1 hash (docs/rows-v1.md section 12).

One pass over a table gives its rows-v1 hash (the same ``FrameHash`` as ``hash_frame``), a fingerprint per column
(section 12.1: which columns changed) and ``N`` row buckets (section 12.2: where the changed rows are). Every
number is a count or a sum modulo 2^64, so partial profiles of batches or partitions add up (:func:`merge`).

The twin computes the column lines from the very texts the row line is joined from (``encode.encode_array``,
and the escaped text of string columns), so a column line is its row's member ``"name":value`` alone in its
object, byte for byte. Lines are hashed with ``hashlib`` (``digest.line_words``, as the rows-v1 lines are); a
column (or key) that takes few distinct values hashes each distinct line once and counts it, within a batch (an
Arrow dictionary encode) and across batches (the lines already met, kept while they keep being met). What stays
is one SHA-256 per row and per cell of a column whose values do not repeat: ~0.35 us each in CPython, which a
column of distinct values adds to a row's cost as its line does (``make bench`` measures it).

Example:
    >>> import pandas as pd
    >>> from ubunye.hashing import hash_frame
    >>> df = pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", None]})
    >>> p = profile_frame(df, key=["id"], buckets=4)
    >>> p.hash == hash_frame(df), p.columns["name"].nulls, sum(c for c, _, _ in p.buckets.rows())
    (True, 1, 3)
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ubunye.exceptions import HashError
from ubunye.hashing.digest import FrameHash, check_engine, finish, line_words
from ubunye.hashing.encode import encode_array, join_object
from ubunye.hashing.frame import BATCH_ROWS, frame_kind, to_arrow
from ubunye.hashing.pieces import pieces
from ubunye.hashing.text import as_text, escaped, json_string
from ubunye.hashing.types import FLOAT_TYPES, is_string, schema_string, type_name

PROFILE_METHOD = "profile-v1"
#: Buckets of a profile unless told otherwise (section 12.2).
DEFAULT_BUCKETS = 256
#: The most buckets a profile may have (section 12.2).
MAX_BUCKETS = 65_536

_MASK = (1 << 64) - 1
# Lines hashed once per distinct value when a sample of the batch holds fewer distinct values than this share.
_SAMPLE = 2048
_FEW = 0.5
# What the column lines of one profiler may keep across batches (_Column): lines per column (index_in builds
# its lookup over them once per batch, so at most about a batch), and bytes over all columns.
_KEPT_LINES = BATCH_ROWS
_KEPT_BYTES = 64 << 20
_BLOB_MAGIC = b"ubunye-profile-v1-sums\n"


class ProfileOptionError(HashError, ValueError):
    """A profile option (key, buckets, wanted bucket) that cannot be used; the message names the value.

    Both a ``HashError`` (like every refusal of the hashing API) and a ``ValueError`` (a bad argument).

    Example:
        >>> check_profile_options(["id"], ["idd"], 256)
        Traceback (most recent call last):
        ubunye.hashing.profile.ProfileOptionError: profile-v1: key column 'idd' is not a column of the table ...
    """


_NULL_WORDS = line_words(pa.array(["{}"]))[0]  # section 12.1: a null value's column line is {}


# --- the numbers and what they become ----------------------------------------------------------------------------


def _fingerprint(name: str, type_: str, row_count: int, sum1: int, sum2: int) -> str:
    text = (
        f"profile-v1-column\n{json_string(name)}\n{type_}\n{int(row_count)}\n{sum1 & _MASK:016x}\n{sum2 & _MASK:016x}"
    )
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ColumnProfile:
    """One column's numbers (docs/rows-v1.md section 12.1): sums of its column lines and the fingerprint.

    Attributes:
        name: the column name.
        type: its rows-v1 type name (section 7).
        nulls: rows whose value is null.
        nans: rows whose value is a NaN, for ``float32``/``float64`` columns; ``None`` for every other type.
        sum1, sum2: the column lines' SHA-256 halves summed modulo 2^64 (unsigned).
        fingerprint: ``sha256:`` of name, type, row count and both sums.

    Example:
        >>> import pandas as pd
        >>> c = profile_frame(pd.DataFrame({"x": [0.5, float("nan")]}), buckets=0).columns["x"]
        >>> (c.type, c.nulls, c.nans, c.fingerprint[:7])
        ('float64', 0, 1, 'sha256:')
    """

    name: str
    type: str
    nulls: int
    nans: int | None
    sum1: int
    sum2: int
    fingerprint: str


def _power_of_two(n: Any, what: str, zero_ok: bool) -> int:  # noqa: ANN401 (user input: operator.index checks it)
    """``n`` as an int when it is a power of two from 1 to MAX_BUCKETS (or 0 / None when ``zero_ok``)."""
    if n is None and zero_ok:
        return 0
    value = None
    if not isinstance(n, bool):
        try:
            value = operator.index(n)
        except TypeError:
            value = None
    if value is None or not ((zero_ok and value == 0) or (1 <= value <= MAX_BUCKETS and value & (value - 1) == 0)):
        off = " (0 or None: no buckets)" if zero_ok else ""
        msg = (
            f"profile-v1: {what}={n!r} is not a power of two from 1 to {MAX_BUCKETS}{off} "
            "(docs/rows-v1.md section 12.2)"
        )
        raise ProfileOptionError(msg)
    return value


def _key_tuple(key: object) -> tuple[str, ...] | None:
    """A key as the sorted tuple of its names (the key line sorts them: section 12.2), or None for no key."""
    if key is None:
        return None
    if isinstance(key, str | bytes) or not isinstance(key, Iterable):
        msg = f"profile-v1: the key {key!r} must be a list of column names (e.g. ['id']) or None (no key)"
        raise ProfileOptionError(msg)
    names = list(key)
    if not names:
        msg = "profile-v1: the key [] is empty: give at least one column name, or None for buckets of whole rows"
        raise ProfileOptionError(msg + " (docs/rows-v1.md section 12.2)")
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str):
            raise ProfileOptionError(f"profile-v1: key entry {name!r} is a {type(name).__name__}, not a column name")
        if name in seen:
            msg = f"profile-v1: key column {name!r} is repeated in the key {names!r} (docs/rows-v1.md section 12.2)"
            raise ProfileOptionError(msg)
        seen.add(name)
    return tuple(sorted(names))


@dataclass(frozen=True)
class Buckets:
    """A table's rows in ``n`` buckets (docs/rows-v1.md section 12.2): per bucket a count and two sums.

    Attributes:
        n: the number of buckets, a power of two from 1 to 65,536.
        key: the key column names, sorted by code point (the key line sorts them, so the order a key was given
            in does not matter); ``None`` when the buckets are of whole rows (the row's own line hash).
        packed: the packed form, ``24 * n`` bytes: per bucket ``count``, ``sum1``, ``sum2``, each an unsigned
            64-bit big-endian integer (what the JVM function returns).

    Example:
        >>> b = Buckets.from_rows([(2, 5, 7), (0, 0, 0)], key=["id"])
        >>> b.n, b.key, len(b.packed), b.rows()[0]
        (2, ('id',), 48, (2, 5, 7))
        >>> b.differing(Buckets.from_rows([(2, 5, 7), (1, 9, 9)], key=["id"]))
        [1]
    """

    n: int
    key: tuple[str, ...] | None
    packed: bytes = field(repr=False)

    def __post_init__(self) -> None:
        n = _power_of_two(self.n, "n", zero_ok=False)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "key", _key_tuple(self.key))
        packed = bytes(self.packed)
        if len(packed) != 24 * n:
            msg = f"profile-v1: packed buckets of n={n} are {24 * n} bytes, got {len(packed)}"
            raise ProfileOptionError(msg + " (docs/rows-v1.md section 12.2)")
        object.__setattr__(self, "packed", packed)

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[int]], key: Sequence[str] | None = None) -> Buckets:
        """Buckets from ``(count, sum1, sum2)`` per bucket index; sums may be signed (only 64 bits count).

        Example:
            >>> Buckets.from_rows([(1, -1, 0)]).rows()
            [(1, 18446744073709551615, 0)]
        """
        numbers = np.array([[int(v) & _MASK for v in row] for row in rows], dtype=np.uint64).reshape(-1, 3)
        return cls(len(numbers), _key_tuple(key), numbers.astype(">u8").tobytes())

    def _numbers(self) -> np.ndarray:
        return np.frombuffer(self.packed, dtype=">u8").reshape(self.n, 3)

    def rows(self) -> list[tuple[int, int, int]]:
        """``(count, sum1, sum2)`` per bucket index, unsigned.

        Example:
            >>> Buckets(1, None, bytes(24)).rows()
            [(0, 0, 0)]
        """
        return [(int(c), int(a), int(b)) for c, a, b in self._numbers().tolist()]

    def differing(self, other: Buckets) -> list[int]:
        """The bucket indices whose count or sums differ from ``other``'s; a ValueError when ``n`` or ``key``
        differ (such buckets hold different rows and cannot be compared).

        Example:
            >>> Buckets(1, None, bytes(24)).differing(Buckets(2, None, bytes(48)))
            Traceback (most recent call last):
            ubunye.hashing.profile.ProfileOptionError: profile-v1: buckets of n=1 with the key None and of n=2 with ...
        """
        if (self.n, self.key) != (other.n, other.key):
            msg = (
                f"profile-v1: buckets of n={self.n} with the key {self.key} and of n={other.n} with the key "
                f"{other.key} hold rows by different rules and cannot be compared (docs/rows-v1.md section 12.2)"
            )
            raise ProfileOptionError(msg)
        differing: list[int] = np.flatnonzero((self._numbers() != other._numbers()).any(axis=1)).tolist()
        return differing


@dataclass(frozen=True)
class FrameProfile:
    """The profile of one table (docs/rows-v1.md section 12).

    Attributes:
        hash: the table's rows-v1 ``FrameHash``, equal to ``hash_frame`` of it (``engine`` says which ran).
        columns: a ``ColumnProfile`` per column, in code point order of the names.
        buckets: the row buckets, or ``None`` when the profile was made with ``buckets=0`` (or None).

    Example:
        >>> import pandas as pd
        >>> p = profile_frame(pd.DataFrame({"b": [1], "a": ["x"]}), buckets=1)
        >>> list(p.columns), p.buckets.rows()[0][0], p.hash.row_count
        (['a', 'b'], 1, 1)
    """

    hash: FrameHash
    columns: dict[str, ColumnProfile]
    buckets: Buckets | None


@dataclass(frozen=True)
class ProfileSums:
    """The additive numbers of a profile of some of a table's rows (a batch, a partition): :func:`merge` adds
    them, :meth:`finish` turns them into a :class:`FrameProfile`.

    Attributes:
        schema: the rows-v1 schema string (section 7).
        columns: ``(name, type name)`` per column, in code point order of the names.
        key: the key names, sorted, or ``None``.
        n_buckets: the number of buckets, 0 for none.
        row_count, sum1, sum2: the rows-v1 numbers of the rows (section 8; sums unsigned).
        column_sums: ``(nulls, nans, sum1, sum2)`` per column, aligned with ``columns`` (``nans`` 0 where the
            type has none).
        buckets: the packed buckets (section 12.2), ``b""`` when ``n_buckets`` is 0.

    Example:
        >>> import pandas as pd
        >>> parts = [profile_sums(pd.DataFrame({"x": [i]}), buckets=2) for i in range(3)]
        >>> merge(parts).finish() == profile_frame(pd.DataFrame({"x": [0, 1, 2]}), buckets=2)
        True
    """

    schema: str
    columns: tuple[tuple[str, str], ...]
    key: tuple[str, ...] | None
    n_buckets: int
    row_count: int
    sum1: int
    sum2: int
    column_sums: tuple[tuple[int, int, int, int], ...]
    buckets: bytes = field(repr=False)

    def finish(self, engine: str = "arrow") -> FrameProfile:
        """The profile these numbers make: the data hash, the fingerprints, the buckets (section 12).

        Example:
            >>> import pandas as pd
            >>> profile_sums(pd.DataFrame({"x": [1]}), buckets=0).finish().buckets is None
            True
        """
        check_engine(engine)
        n = self.row_count
        columns = {}
        for (name, type_), (nulls, nans, s1, s2) in zip(self.columns, self.column_sums, strict=True):
            columns[name] = ColumnProfile(
                name, type_, nulls, nans if type_ in FLOAT_TYPES else None, s1, s2, _fingerprint(name, type_, n, s1, s2)
            )
        buckets = Buckets(self.n_buckets, self.key, self.buckets) if self.n_buckets else None
        return FrameProfile(finish(self.schema, n, self.sum1, self.sum2, engine=engine), columns, buckets)

    def to_bytes(self) -> bytes:
        """These numbers as one compact blob (what a Spark partition sends back); :meth:`from_bytes` reads it.

        Only the buckets that hold a row are written, so a small partition sends little whatever ``n_buckets``.

        Example:
            >>> import pandas as pd
            >>> s = profile_sums(pd.DataFrame({"x": [1, 2]}), key=["x"], buckets=65536)
            >>> ProfileSums.from_bytes(s.to_bytes()) == s, len(s.to_bytes()) < 400
            (True, True)
        """
        header = {"schema": self.schema, "columns": self.columns, "key": self.key, "n": self.n_buckets}
        head = [self.row_count, self.sum1, self.sum2, *[v for sums in self.column_sums for v in sums]]
        numbers = _bucket_array(self)
        used = np.flatnonzero(numbers[:, 0]) if len(numbers) else np.zeros(0, np.int64)
        body = np.concatenate(
            [np.array(head, dtype=np.uint64), np.column_stack([used.astype(np.uint64), numbers[used]]).ravel()]
        )
        text = json.dumps(header, separators=(",", ":")).encode("utf-8")
        return _BLOB_MAGIC + len(text).to_bytes(4, "big") + text + body.astype(">u8").tobytes()

    @classmethod
    def from_bytes(cls, blob: bytes) -> ProfileSums:
        """The numbers :meth:`to_bytes` wrote; a HashError when the blob is not one.

        Example:
            >>> ProfileSums.from_bytes(b"junk")
            Traceback (most recent call last):
            ubunye.exceptions.HashError: profile-v1: not a blob of profile sums (it starts b'junk')
        """
        blob = bytes(blob)
        if not blob.startswith(_BLOB_MAGIC):
            raise HashError(f"profile-v1: not a blob of profile sums (it starts {blob[:24]!r})")
        at = len(_BLOB_MAGIC)
        size = int.from_bytes(blob[at : at + 4], "big")
        header = json.loads(blob[at + 4 : at + 4 + size].decode("utf-8"))
        words = np.frombuffer(blob[at + 4 + size :], dtype=">u8").astype(np.uint64)
        columns = tuple((str(n), str(t)) for n, t in header["columns"])
        k, n_buckets = len(columns), int(header["n"])
        head = [int(v) for v in words[: 3 + 4 * k]]
        used = words[3 + 4 * k :].reshape(-1, 4)
        numbers = np.zeros((n_buckets, 3), dtype=np.uint64)
        numbers[used[:, 0].astype(np.intp)] = used[:, 1:]
        key = None if header["key"] is None else tuple(header["key"])
        sums = _quads(head[3:])
        return cls(
            header["schema"], columns, key, n_buckets, head[0], head[1], head[2], sums, numbers.astype(">u8").tobytes()
        )


def _bucket_array(sums: ProfileSums) -> np.ndarray:
    return np.frombuffer(sums.buckets, dtype=">u8").reshape(sums.n_buckets, 3).astype(np.uint64)


def merge(parts: Iterable[ProfileSums]) -> ProfileSums:
    """The sums of several parts of one table (batches, partitions) added (sections 8 and 12): counts add,
    sums add modulo 2^64. The parts must have one schema, key and bucket count; a HashError names what differs.

    Example:
        >>> import pandas as pd
        >>> a = profile_sums(pd.DataFrame({"x": [1]}), buckets=4)
        >>> merge([a, a]).row_count
        2
        >>> merge([a, profile_sums(pd.DataFrame({"x": [1.0]}), buckets=4)])
        Traceback (most recent call last):
        ubunye.exceptions.HashError: profile-v1: cannot merge the sums of struct<"x":int64> (key None, 4 buckets) ...
    """
    items = list(parts)
    if not items:
        raise HashError("profile-v1: merge needs at least one part (an empty table still has its schema)")
    first = items[0]
    shape = (first.schema, first.columns, first.key, first.n_buckets)
    head = np.zeros(3 + 4 * len(first.columns), dtype=np.uint64)
    buckets = np.zeros((first.n_buckets, 3), dtype=np.uint64)
    for part in items:
        if (part.schema, part.columns, part.key, part.n_buckets) != shape:
            msg = (
                f"profile-v1: cannot merge the sums of {first.schema} (key {first.key}, {first.n_buckets} buckets) "
                f"with those of {part.schema} (key {part.key}, {part.n_buckets} buckets): parts of one table "
                "share schema, key and bucket count"
            )
            raise HashError(msg)
        flat = [part.row_count, part.sum1, part.sum2, *[v for s in part.column_sums for v in s]]
        head += np.array([v & _MASK for v in flat], dtype=np.uint64)  # numpy's uint64 adds wrap modulo 2^64
        buckets += _bucket_array(part)
    return _sums(first.schema, first.columns, first.key, head, buckets)


def _sums(
    schema: str,
    columns: tuple[tuple[str, str], ...],
    key: tuple[str, ...] | None,
    head: np.ndarray,
    buckets: np.ndarray,
) -> ProfileSums:
    values = [int(v) for v in head]
    packed = buckets.astype(">u8").tobytes()
    return ProfileSums(schema, columns, key, len(buckets), values[0], values[1], values[2], _quads(values[3:]), packed)


def empty_sums(schema: str, columns: tuple[tuple[str, str], ...], key: tuple[str, ...] | None, n: int) -> ProfileSums:
    """The sums of no rows of a table (its schema string and ``(name, type)`` columns): where :func:`merge` of
    parts that may be none starts.

    Example:
        >>> empty = pa.table({"x": pa.array([], pa.int64())})
        >>> empty_sums('struct<"x":int64>', (("x", "int64"),), None, 2) == profile_sums(empty, buckets=2)
        True
    """
    return _sums(schema, columns, key, np.zeros(3 + 4 * len(columns), np.uint64), np.zeros((n, 3), np.uint64))


def _quads(values: list[int]) -> tuple[tuple[int, int, int, int], ...]:
    """``(nulls, nans, sum1, sum2)`` per column from the flat list of them."""
    return tuple((values[i], values[i + 1], values[i + 2], values[i + 3]) for i in range(0, len(values), 4))


# --- options ---------------------------------------------------------------------------------------------------


def check_profile_options(
    columns: Sequence[str], key: object, buckets: object, zero_ok: bool = True
) -> tuple[tuple[str, ...] | None, int]:
    """Refuse, naming the value, a key or bucket count profile-v1 cannot use (docs/rows-v1.md section 12.2);
    else the key as the sorted tuple of its names (None for none) and the bucket count.

    ``key``: None (buckets of whole rows) or a non-empty list of distinct names of ``columns``. ``buckets``: a
    power of two from 1 to 65,536, or 0 / None for none (unless ``zero_ok`` is false); a bool is refused, not
    read as 1 or 0.

    Example:
        >>> check_profile_options(["id", "day"], ["id", "day"], 256)
        (('day', 'id'), 256)
        >>> check_profile_options(["id"], ["id", "id"], 256)
        Traceback (most recent call last):
        ubunye.hashing.profile.ProfileOptionError: profile-v1: key column 'id' is repeated in the key ['id', 'id'] ...
        >>> check_profile_options(["id"], None, 100)
        Traceback (most recent call last):
        ubunye.hashing.profile.ProfileOptionError: profile-v1: buckets=100 is not a power of two from 1 to 65536 ...
    """
    n = _power_of_two(buckets, "buckets", zero_ok=zero_ok)
    names = _key_tuple(key)
    if names is not None:
        present = set(columns)
        for name in names:
            if name not in present:
                shown = ", ".join(repr(c) for c in list(columns)[:20]) + (", ..." if len(columns) > 20 else "")
                msg = f"profile-v1: key column {name!r} is not a column of the table (columns: {shown})"
                raise ProfileOptionError(msg + " (docs/rows-v1.md section 12.2)")
    return names, n


def wanted_buckets(wanted: Iterable[int], n: int) -> np.ndarray:
    """The bucket indices in ``wanted``, sorted and distinct, as int64; a ``ProfileOptionError`` naming any that is
    not an index from 0 to ``n - 1``.

    Example:
        >>> wanted_buckets([3, 1, 3], 4).tolist()
        [1, 3]
    """
    out = []
    for w in wanted:
        value = None if isinstance(w, bool) else _index_or_none(w)
        if value is None or not 0 <= value < n:
            raise ProfileOptionError(f"profile-v1: wanted bucket {w!r} is not an index from 0 to {n - 1} (n={n})")
        out.append(value)
    return np.array(sorted(set(out)), dtype=np.int64)


def _index_or_none(value: Any) -> int | None:  # noqa: ANN401 (anything: operator.index checks it)
    try:
        return operator.index(value)
    except TypeError:
        return None


# --- the twin --------------------------------------------------------------------------------------------------


def _batches(table: pa.Table) -> Iterator[pa.RecordBatch]:
    # As frame._lines: fixed-size contiguous slices bound memory and per-kernel overhead.
    for start in range(0, table.num_rows, BATCH_ROWS):
        piece = table.slice(start, min(BATCH_ROWS, table.num_rows - start))  # unclamped without columns
        batches = piece.to_batches()
        yield batches[0] if len(batches) == 1 else piece.combine_chunks().to_batches()[0]


def _encoded(batch: pa.RecordBatch, only: Sequence[int] | None = None) -> tuple[list[pa.Array], set[int]]:
    """Each column's value texts exactly as ``encode.encode_batch`` joins them into the row line: string
    columns escaped and still unquoted (listed in the returned set), the rest their canonical JSON."""
    values: list[pa.Array] = []
    quoted: set[int] = set()
    schema = batch.schema  # built anew on every access, its types and names too: once, not once per column
    types, names = schema.types, schema.names
    for i in range(batch.num_columns) if only is None else only:
        column, t = batch.column(i), types[i]
        if is_string(t):
            values.append(escaped(as_text(column), names[i], t))
            quoted.add(len(values) - 1)
        else:
            values.append(encode_array(column, names[i]))
    return values, quoted


def _few_distinct(texts: pa.Array) -> bool:
    """Whether ``texts`` likely holds fewer than ``_FEW * len`` distinct values, so that hashing each distinct
    text once (and counting it) costs less than hashing every slot.

    A spread sample of ``s`` slots decides: ``D`` values drawn evenly show about ``D * (1 - exp(-s / D))``
    distinct ones, which grows with ``D``, so fewer than that for ``D = _FEW * n`` means fewer than ``D``.
    """
    n = len(texts)
    if n < 64:
        return False
    if n <= _SAMPLE:
        return bool(pc.count_distinct(texts, mode="all").as_py() < _FEW * n)
    sample = texts.take(pa.array(np.linspace(0, n - 1, _SAMPLE).astype(np.int64)))
    limit = _FEW * n * -math.expm1(-_SAMPLE / (_FEW * n))
    return bool(pc.count_distinct(sample, mode="all").as_py() < limit)


def _distinct(texts: pa.Array) -> tuple[pa.Array, np.ndarray] | None:
    """The distinct texts and each slot's index into them (-1 for null), when that pays; else None."""
    if not _few_distinct(texts):
        return None
    encoded = pc.dictionary_encode(texts)
    return encoded.dictionary, encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.intp)


def _row_words(texts: pa.Array) -> np.ndarray:
    """The SHA-256 words of every text (none null), one row each, hashing repeated texts once."""
    found = _distinct(texts)
    if found is None:
        return line_words(texts)
    uniques, index = found
    return line_words(uniques).take(index, axis=0)


class _Column:
    """The column lines of one column (section 12.1) over the batches of a table.

    A column whose values repeat across batches (names, codes, dates: a dimension's columns) hashes each distinct
    line about once per table rather than once per batch: up to ``_KEPT_LINES`` distinct value texts are kept with
    their words while at least half of each batch's values are found among them, within the profiler's budget.
    """

    def __init__(self, name: str, quoted: bool, floats: bool, budget: list[int]) -> None:
        q = '"' if quoted else ""
        self.prefix, self.suffix = "{" + json_string(name) + ":" + q, q + "}"
        self.floats = floats
        self.budget = budget  # bytes all columns' kept texts and words may still take, shared by the profiler
        self.keep = True
        self.seen: pa.Array | None = None
        self.seen_words = np.zeros((0, 4), dtype=np.uint64)
        self.taken = 0

    def _forget(self) -> None:
        self.budget[0] += self.taken
        self.keep, self.seen, self.seen_words, self.taken = False, None, np.zeros((0, 4), dtype=np.uint64), 0

    def words(self, values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """The words of distinct column lines and, per slot of ``values``, the index of its line (-1: null)."""
        texts = values.drop_null() if values.null_count else values
        local = np.empty(len(texts), dtype=np.intp)
        miss = np.ones(len(texts), dtype=bool)
        if self.seen is not None and self.seen.type != texts.type:
            self._forget()  # index_in looks up values of one type
        known = self.seen_words
        if self.seen is not None and len(texts):
            found = pc.index_in(texts, value_set=self.seen)
            miss = found.is_null().to_numpy(zero_copy_only=False)
            local[~miss] = found.drop_null().to_numpy().astype(np.intp)
            if 2 * int(miss.sum()) > len(texts):
                self._forget()  # mostly new values: keeping them would cost more than it saves
        rest = texts if miss.all() else texts.filter(pa.array(miss))
        distinct = _distinct(rest)
        uniques, index = (rest, np.arange(len(rest), dtype=np.intp)) if distinct is None else distinct
        local[miss] = len(known) + index
        fresh = line_words(_wrapped(uniques, self.prefix, self.suffix))
        words = np.concatenate([known, fresh]) if len(known) else fresh
        cost = uniques.nbytes + fresh.nbytes
        fits = len(words) <= _KEPT_LINES and cost <= self.budget[0]
        if self.keep and len(uniques) and fits and (self.seen is None or self.seen.type == uniques.type):
            self.budget[0] -= cost
            self.taken += cost
            self.seen = uniques if self.seen is None else pa.concat_arrays([self.seen, uniques])
            self.seen_words = words
        if not values.null_count:
            return words, local
        slots = np.full(len(values), -1, dtype=np.intp)
        slots[values.is_valid().to_numpy(zero_copy_only=False)] = local
        return words, slots

    def numbers(self, values: pa.Array, words: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """``[nulls, nans, sum1, sum2]`` of the column in one batch, uint64, from :meth:`words`."""
        nulls = values.null_count
        nans = 0
        if self.floats and nulls < len(values):
            nans = int(pc.sum(pc.equal(values, '"NaN"')).as_py() or 0)  # only NaN is written "NaN" (section 5.1)
        counts = np.bincount(slots[slots >= 0] if nulls else slots, minlength=len(words)).astype(np.uint64)
        with np.errstate(over="ignore"):
            k = np.uint64(nulls)
            s1 = (words[:, 0] * counts).sum(dtype=np.uint64) + k * _NULL_WORDS[0]
            s2 = (words[:, 1] * counts).sum(dtype=np.uint64) + k * _NULL_WORDS[1]
        return np.array([nulls, nans, s1, s2], dtype=np.uint64)


def _wrapped(texts: pa.Array, prefix: str, suffix: str) -> pa.Array:
    """``prefix + text + suffix`` per slot: two slice replacements cost a third of an element-wise join."""
    end = 2**62  # past any slot's end: the suffix goes after the last byte
    return pc.binary_replace_slice(pc.binary_replace_slice(texts, 0, 0, prefix), end, end, suffix)


def _slot_words(words: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Per slot the words of its column line (:meth:`_Column.words`), a null slot's those of ``{}``."""
    out = words[np.maximum(slots, 0)] if len(words) else np.zeros((len(slots), 4), dtype=np.uint64)
    out[slots < 0] = _NULL_WORDS
    return out


def _bucket_index(words: np.ndarray, n: int) -> np.ndarray:
    """Section 12.2: ``k[28..31]`` as a big-endian u32 (the low half of the fourth word), modulo ``n``."""
    index: np.ndarray = ((words[:, 3] & np.uint64(0xFFFFFFFF)) & np.uint64(n - 1)).astype(np.intp)
    return index


def _key_words(batch: pa.RecordBatch, values: list[pa.Array], quoted: set[int], key_idx: list[int]) -> np.ndarray:
    every = batch.schema.names
    names = [every[i] for i in key_idx]
    key_quoted = {j for j, i in enumerate(key_idx) if i in quoted}
    return _row_words(join_object(names, [values[i] for i in key_idx], batch.num_rows, key_quoted))


class Profiler:
    """Adds batches of one table into the numbers of a profile (``add``), which ``sums`` gives as ProfileSums.

    Example:
        >>> b = pa.record_batch({"x": [1, 2]})
        >>> p = Profiler(b.schema, None, 2)
        >>> p.add(b)
        >>> p.sums() == profile_sums(b, buckets=2)
        True
    """

    def __init__(self, schema: pa.Schema, key: tuple[str, ...] | None, n: int) -> None:
        self.schema = schema_string(schema)  # the type checks and errors of hash_frame, before any row is read
        names = list(schema.names)
        self.order = sorted(range(len(names)), key=lambda i: names[i])
        types = schema.types  # a new list on every access: once, not once per column
        self.types = [type_name(types[i], names[i]) for i in range(len(names))]
        self.columns = tuple((names[i], self.types[i]) for i in self.order)
        self.key = key
        self.key_idx = [names.index(k) for k in key] if key else []
        self.n = n
        self.head = np.zeros(3 + 4 * len(names), dtype=np.uint64)
        self.buckets = np.zeros((n, 3), dtype=np.uint64)
        budget = [_KEPT_BYTES]
        self.lines = [
            _Column(names[i], is_string(types[i]), self.types[i] in FLOAT_TYPES, budget) for i in range(len(names))
        ]

    def add(self, batch: pa.RecordBatch) -> None:
        for piece in pieces(batch):  # each piece's texts within Arrow's 2 GiB string arrays
            self._add(piece)

    def _add(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        names = list(batch.schema.names)
        values, quoted = _encoded(batch)
        rows = _row_words(join_object(names, values, batch.num_rows, quoted))
        keys = rows
        with np.errstate(over="ignore"):
            self.head[0] += np.uint64(batch.num_rows)
            self.head[1] += rows[:, 0].sum(dtype=np.uint64)
            self.head[2] += rows[:, 1].sum(dtype=np.uint64)
            for slot, i in enumerate(self.order):
                words, slots = self.lines[i].words(values[i])
                self.head[3 + 4 * slot : 7 + 4 * slot] += self.lines[i].numbers(values[i], words, slots)
                if self.n and self.key_idx == [i]:
                    keys = _slot_words(words, slots)  # a one-column key line is that column's line (12.1, 12.2)
            if self.n:
                if len(self.key_idx) > 1:
                    keys = _key_words(batch, values, quoted, self.key_idx)
                index = _bucket_index(keys, self.n)
                self.buckets[:, 0] += np.bincount(index, minlength=self.n).astype(np.uint64)
                np.add.at(self.buckets[:, 1], index, rows[:, 0])
                np.add.at(self.buckets[:, 2], index, rows[:, 1])

    def sums(self) -> ProfileSums:
        return _sums(self.schema, self.columns, self.key, self.head, self.buckets)


def _arrow_sums(table: pa.Table, key: tuple[str, ...] | None, n: int) -> ProfileSums:
    profiler = Profiler(table.schema, key, n)
    for batch in _batches(table):
        profiler.add(batch)
    return profiler.sums()


def profile_sums(
    frame: object, *, key: Sequence[str] | None = None, buckets: int | None = DEFAULT_BUCKETS
) -> ProfileSums:
    """The additive numbers of the profile of a frame ``hash_frame`` accepts, other than Spark (the twin).

    For profiling a table in parts (batches read one at a time): :func:`merge` the parts, then ``finish()``.

    Example:
        >>> import pyarrow as pa
        >>> s = profile_sums(pa.table({"x": [1, None]}), buckets=2)
        >>> s.row_count, s.column_sums[0][0], s.n_buckets
        (2, 1, 2)
    """
    if frame_kind(frame) == "pyspark":
        raise HashError("profile_sums runs the twin: give a Spark DataFrame to profile_frame instead")
    table = to_arrow(frame)
    names, n = check_profile_options(table.schema.names, key, buckets)
    return _arrow_sums(table, names, n)


def profile_frame(
    frame: Any,  # noqa: ANN401 (any frame; a Spark one is passed on as such)
    *,
    key: Sequence[str] | None = None,
    buckets: int | None = DEFAULT_BUCKETS,
    engine: str | None = None,
) -> FrameProfile:
    """The profile-v1 of a table (docs/rows-v1.md section 12): its rows-v1 hash, a fingerprint per column and
    ``buckets`` row buckets (0 or None: none), by ``key`` (a list of column names) or of whole rows (None).

    Takes every frame ``hash_frame`` takes. A Spark DataFrame is profiled where it is, ``engine`` choosing as in
    ``hash_spark``: ``"jvm"`` (the jar's ``ubunye_profile_v1``), ``"arrow"`` (the twin on the executors), or
    None (the JVM when the session can run it). Any other frame is profiled by the twin (``engine`` None or
    ``"arrow"``). Bad options are a ``ProfileOptionError`` naming the value, before any row is read.

    Example:
        >>> import pandas as pd
        >>> a = profile_frame(pd.DataFrame({"id": [1, 2], "x": ["p", "q"]}), key=["id"], buckets=8)
        >>> b = profile_frame(pd.DataFrame({"id": [1, 2], "x": ["p", "Q"]}), key=["id"], buckets=8)
        >>> [c for c in a.columns if a.columns[c] != b.columns[c]], len(a.buckets.differing(b.buckets))
        (['x'], 1)
    """
    check_engine(engine, none_too=True)
    if frame_kind(frame) == "pyspark":
        from ubunye.hashing.spark import profile_spark

        return profile_spark(frame, key=key, buckets=buckets, engine=engine)
    if engine == "jvm":
        raise ValueError(
            f"engine='jvm' profiles Spark DataFrames only; a {type(frame).__name__} is profiled by the twin"
        )
    return profile_sums(frame, key=key, buckets=buckets).finish()


def batch_buckets(batch: pa.RecordBatch, key: tuple[str, ...] | None, n: int) -> np.ndarray:
    """The bucket of every row of one batch (section 12.2; ``key`` as :func:`check_profile_options` gives it);
    only the key columns are encoded when there is a key.

    Example:
        >>> b = batch_buckets(pa.record_batch({"id": [1, 2, 1], "x": [5, 6, 7]}), ("id",), 16)
        >>> bool(b[0] == b[2]), len(b)
        (True, 3)
    """
    if batch.num_rows == 0:
        return np.zeros(0, dtype=np.intp)
    names = list(batch.schema.names)
    if key:
        idx = [names.index(k) for k in key]
        values, quoted = _encoded(batch, idx)  # value j is key column key[j]
        words = _row_words(join_object(list(key), values, batch.num_rows, quoted))
    else:
        values, quoted = _encoded(batch)
        words = _row_words(join_object(names, values, batch.num_rows, quoted))
    return _bucket_index(words, n)


def _arrow_buckets(table: pa.Table, key: tuple[str, ...] | None, n: int) -> np.ndarray:
    schema_string(table.schema)  # the type checks and errors of hash_frame
    parts = [batch_buckets(batch, key, n) for batch in _batches(table)]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def bucket_of_rows(frame: object, *, key: Sequence[str] | None = None, buckets: int) -> np.ndarray:
    """The bucket (section 12.2) of every row, in the frame's row order, as int64 (the twin; not Spark, whose
    rows have no order: use :func:`rows_in_buckets` there).

    Example:
        >>> import pandas as pd
        >>> b = bucket_of_rows(pd.DataFrame({"id": [1, 2, 1], "x": [5, 6, 7]}), key=["id"], buckets=16)
        >>> bool(b[0] == b[2]), b.dtype
        (True, dtype('int64'))
    """
    if frame_kind(frame) == "pyspark":
        raise HashError("bucket_of_rows reads rows in order, which a Spark DataFrame has not: use rows_in_buckets")
    table = to_arrow(frame)
    names, n = check_profile_options(table.schema.names, key, buckets, zero_ok=False)
    return _arrow_buckets(table, names, n)


def rows_in_buckets(frame: Any, wanted: Iterable[int], *, key: Sequence[str] | None = None, buckets: int) -> Any:  # noqa: ANN401 (frame in, same kind out)
    """Only the rows of ``frame`` whose bucket (section 12.2, ``key`` and ``buckets`` as for the profile) is in
    ``wanted``, as the same kind of frame: pandas (index kept), pyarrow Table or RecordBatch, polars; a Spark
    DataFrame is filtered lazily, where it is. Other frames come back as a pyarrow Table.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"id": [1, 2, 3]})
        >>> a = profile_frame(df, key=["id"], buckets=4)
        >>> b = profile_frame(pd.DataFrame({"id": [1, 2, 4]}), key=["id"], buckets=4)
        >>> rows_in_buckets(df, a.buckets.differing(b.buckets), key=["id"], buckets=4)["id"].tolist()
        [3]
    """
    kind = frame_kind(frame)
    if kind == "pyspark":
        from ubunye.hashing.spark import spark_rows_in_buckets

        return spark_rows_in_buckets(frame, wanted, key=key, buckets=buckets)
    table = to_arrow(frame)
    names, n = check_profile_options(table.schema.names, key, buckets, zero_ok=False)
    chosen = wanted_buckets(wanted, n)
    mask = np.isin(_arrow_buckets(table, names, n), chosen)
    if kind == "pandas":
        return frame[mask]
    if kind == "polars":
        import polars as pl

        return frame.filter(pl.Series(mask))
    if isinstance(frame, pa.RecordBatch):
        return frame.filter(pa.array(mask))
    return table.filter(pa.array(mask))
