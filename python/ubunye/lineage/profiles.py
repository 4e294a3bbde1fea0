"""A dataset's profile in its record, and what two profiles say changed (pure functions, no I/O).

The profile (docs/rows-v1.md section 12) is computed by ``ubunye.hashing.profile``; this module is the one place
that turns it into record fields (``columns``, ``buckets``, ``key``) and back. Buckets are stored as their packed
form (section 12.2: 24 bytes per bucket), zlib-compressed and written in base64: 256 buckets of a small table
take a few hundred bytes, and a record never holds more than 65,536 of them.

Example:
    >>> rec = buckets_record(bytes(24 * 4))
    >>> rec.n, packed_buckets(rec) == bytes(96)
    (4, True)
"""

from __future__ import annotations

import base64
import binascii
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ubunye.lineage.record import BucketsRecord, ColumnRecord, DatasetRecord, MalformedRecord

if TYPE_CHECKING:
    from ubunye.hashing.profile import FrameProfile

_BUCKET_BYTES = 24
_MAX_BUCKETS = 65_536


def buckets_record(packed: bytes) -> BucketsRecord:
    """The record form of packed buckets (section 12.2): ``n`` and base64 of zlib of the bytes."""
    n, rest = divmod(len(packed), _BUCKET_BYTES)
    if rest or not 1 <= n <= _MAX_BUCKETS or n & (n - 1):
        msg = f"packed buckets must be 24 bytes times a power of two up to {_MAX_BUCKETS}, got {len(packed)} bytes"
        raise ValueError(msg)
    return BucketsRecord(n=n, data=base64.b64encode(zlib.compress(packed, 6)).decode("ascii"))


def packed_buckets(record: BucketsRecord, where: str = "buckets", path: str | None = None,
                   rows: int | None = None) -> bytes:  # fmt: skip
    """The packed bytes of a record's buckets; a ``MalformedRecord`` naming ``path`` and the field ``where`` if they
    do not decode, or (given the dataset's ``rows``, its row_count) if their counts do not add up to it.

    Example:
        >>> packed_buckets(BucketsRecord(n=4, data="bm90IHpsaWI="), "buckets", "/a.json")
        Traceback (most recent call last):
        ubunye.lineage.record.MalformedRecord: /a.json: buckets: data is not base64 of zlib-compressed buckets
    """
    want = record.n * _BUCKET_BYTES
    try:
        raw = base64.b64decode(record.data.encode("ascii"), validate=True)
        inflate = zlib.decompressobj()
        packed = inflate.decompress(raw, want + 1)  # bounded: a crafted record cannot inflate to gigabytes
    except (binascii.Error, UnicodeEncodeError, zlib.error):
        raise MalformedRecord("data is not base64 of zlib-compressed buckets", path, where) from None
    if len(packed) != want or inflate.unconsumed_tail or not inflate.eof:
        if len(packed) <= want and not inflate.eof:
            raise MalformedRecord("data is cut short (its zlib stream does not end)", path, where)
        # Inflating stops one byte past what n needs: the real size is known only when the stream ended there.
        whole = inflate.eof and not inflate.unconsumed_tail
        size = f"{len(packed)}" if whole else f"more than {want}"
        msg = f"data holds {size} bytes of buckets, {want} expected for n={record.n}"
        raise MalformedRecord(msg, path, where)
    if rows is not None:  # every row is in one bucket (section 12.2): the counts add up to the row count
        counted = sum(int.from_bytes(packed[i : i + 8], "big") for i in range(0, want, _BUCKET_BYTES))
        if counted != rows:
            msg = f"the buckets hold {counted} rows, the dataset's row_count is {rows}"
            raise MalformedRecord(msg, path, where)
    return packed


def profile_fields(profile: FrameProfile) -> dict[str, Any]:
    """The DatasetRecord fields of a ``ubunye.hashing.profile.FrameProfile``."""
    columns = {
        name: ColumnRecord(type=c.type, nulls=c.nulls, fingerprint=c.fingerprint, nans=c.nans)
        for name, c in profile.columns.items()
    }
    out: dict[str, Any] = {"columns": columns, "profile_method": "profile-v1", "profile_error": None}
    b = profile.buckets
    out["buckets"] = None if b is None else buckets_record(b.packed)
    out["key"] = None if b is None or b.key is None else list(b.key)
    return out


@dataclass(frozen=True)
class ColumnChanges:
    """Top-level columns of one dataset in two runs, by their fingerprints (section 12.1)."""

    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: name -> (type in A, type in B), for changed columns whose type changed.
    types: dict[str, tuple[str, str]] = field(default_factory=dict)

    def describe(self) -> str:
        """``columns amount_cents, units`` (+ added / removed), the words compare prints; "" when none moved."""
        parts = []
        if self.changed:
            parts.append("columns " + _names(self.changed) if len(self.changed) > 1 else "column " + self.changed[0])
        if self.added:
            parts.append("added " + _names(self.added))
        if self.removed:
            parts.append("removed " + _names(self.removed))
        return "; ".join(parts)


def _names(names: list[str], most: int = 6) -> str:
    return ", ".join(names[:most]) + (f", ... ({len(names)} in all)" if len(names) > most else "")


def compare_columns(a: DatasetRecord, b: DatasetRecord) -> ColumnChanges | None:
    """Which columns changed between the two records of one dataset; None when either has no column profile.

    Example:
        >>> col = lambda f, t="int64": ColumnRecord(type=t, nulls=0, fingerprint=f)
        >>> a = DatasetRecord("o", columns={"id": col("sha256:1"), "n": col("sha256:2")})
        >>> b = DatasetRecord("o", columns={"id": col("sha256:1"), "n": col("sha256:3", "float64")})
        >>> c = compare_columns(a, b)
        >>> c.changed, c.unchanged, c.types, c.describe()
        (['n'], ['id'], {'n': ('int64', 'float64')}, 'column n')
    """
    if a.columns is None or b.columns is None:
        return None
    out = ColumnChanges()
    for name, x in a.columns.items():
        y = b.columns.get(name)
        if y is None:
            out.removed.append(name)
        elif x.fingerprint == y.fingerprint:
            out.unchanged.append(name)
        else:
            out.changed.append(name)
            if x.type != y.type:
                out.types[name] = (x.type, y.type)
    out.added.extend(n for n in b.columns if n not in a.columns)
    return out


def contradiction(d: DatasetRecord, packed: bytes | None) -> str | None:
    """Why a rows-v1 dataset record cannot be right (it contradicts itself), else None: its ``schema_hash`` is not
    the hash of its ``schema``, or its ``data_hash`` not the hash of its schema, row count and the sums its buckets
    add up to (``packed``, when it has buckets: docs/rows-v1.md sections 9 and 12.2). An edited hash, which would
    otherwise read as "changed" (or, diffed, as data overwritten since), is caught here.

    Example:
        >>> from dataclasses import replace
        >>> from ubunye.hashing.digest import finish
        >>> h = finish('struct<"a":int64>', 0, 0, 0)
        >>> d = DatasetRecord("o", data_hash=h.data_hash, hash_method="rows-v1", schema=h.schema, row_count=0)
        >>> contradiction(d, bytes(24)) is None, contradiction(replace(d, data_hash="sha256:" + "0" * 64), bytes(24))
        (True, 'its data_hash is not the hash of its schema, row count and buckets')
    """
    from ubunye.hashing.digest import finish, schema_hash

    if d.hash_method != "rows-v1" or d.schema is None:
        return None
    if d.schema_hash is not None and d.schema_hash != schema_hash(d.schema):
        return "its schema_hash is not the hash of its schema"
    if packed is None or d.data_hash is None or d.row_count is None:
        return None
    w = _BUCKET_BYTES
    sum1 = sum(int.from_bytes(packed[i + 8 : i + 16], "big") for i in range(0, len(packed), w))
    sum2 = sum(int.from_bytes(packed[i + 16 : i + 24], "big") for i in range(0, len(packed), w))
    if finish(d.schema, d.row_count, sum1, sum2).data_hash != d.data_hash:
        return "its data_hash is not the hash of its schema, row count and buckets"
    return None


@dataclass(frozen=True)
class BucketChanges:
    """The buckets whose numbers differ between two records of one dataset (same n, same key)."""

    n: int
    key: list[str] | None
    differing: list[int]

    def describe(self) -> str:
        """``3 of 256 key buckets`` (``row buckets`` when keyless)."""
        return f"{len(self.differing)} of {self.n} {'key' if self.key else 'row'} buckets"


def compare_buckets(a: DatasetRecord, b: DatasetRecord, fields: tuple[str, str] = ("buckets", "buckets"),
                    paths: tuple[str | None, str | None] = (None, None)) -> BucketChanges | None:  # fmt: skip
    """The differing buckets; None when either record has none, or their n or key differ (not comparable).

    Keys are compared as sets: a key line sorts its columns (section 12.2), so the keys ``[day, region]`` and
    ``[region, day]`` place every row in the same bucket. Bucket data that does not decode (or whose counts do not
    add up to the row count) is a ``MalformedRecord`` naming the record's ``paths`` and ``fields``.

    Example:
        >>> zero, one = bytes(24 * 2), bytes(24) + bytes([0] * 7 + [1]) + bytes(16)
        >>> a = DatasetRecord("o", buckets=buckets_record(zero), key=["id", "day"])
        >>> b = DatasetRecord("o", buckets=buckets_record(one), key=["day", "id"])
        >>> compare_buckets(a, b).describe()
        '1 of 2 key buckets'
    """
    if a.buckets is None or b.buckets is None or a.buckets.n != b.buckets.n or not same_key(a.key, b.key):
        return None
    pa = packed_buckets(a.buckets, fields[0], paths[0], a.row_count)
    pb = packed_buckets(b.buckets, fields[1], paths[1], b.row_count)
    w = _BUCKET_BYTES
    differing = [i for i in range(a.buckets.n) if pa[i * w : (i + 1) * w] != pb[i * w : (i + 1) * w]]
    return BucketChanges(a.buckets.n, list(a.key) if a.key else None, differing)


def same_key(a: list[str] | None, b: list[str] | None) -> bool:
    """Whether two recorded keys place rows alike: the same columns in any order (a key line sorts them), or no
    key on either side.

    Example:
        >>> same_key(["y", "x"], ["x", "y"]), same_key(None, []), same_key(["x"], None)
        (True, True, False)
    """
    return sorted(a or []) == sorted(b or [])
