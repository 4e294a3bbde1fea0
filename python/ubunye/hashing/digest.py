"""Rows to sums to the recorded digest: sections 8 and 9 of docs/rows-v1.md."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

HASH_METHOD = "rows-v1"
#: The implementations that compute rows-v1, as ``FrameHash.engine`` and every ``engine=`` parameter name them.
ENGINES = ("arrow", "jvm")
_MASK = (1 << 64) - 1


@dataclass(frozen=True)
class FrameHash:
    """The rows-v1 fingerprint of one table.

    Attributes:
        row_count: number of rows hashed (every row).
        data_hash: ``"sha256:<64 hex>"`` over schema, row count and both sums (rows-v1 section 9).
        schema_hash: ``"sha256:<64 hex>"`` of the schema string alone.
        schema: the rows-v1 schema string, e.g. ``struct<"id":int64>``.
        hash_method: always ``"rows-v1"``.
        engine: which implementation ran: ``"arrow"`` (the Python twin, also on Spark executors) or ``"jvm"``.

    Example:
        >>> import pandas as pd
        >>> from ubunye.hashing import hash_frame
        >>> h = hash_frame(pd.DataFrame({"id": [1, 2]}))
        >>> (h.row_count, h.schema, h.hash_method)
        (2, 'struct<"id":int64>', 'rows-v1')
    """

    row_count: int
    data_hash: str
    schema_hash: str
    schema: str
    hash_method: str = HASH_METHOD
    engine: str = "arrow"


def check_engine(engine: str | None, none_too: bool = False) -> None:
    """A ``ValueError`` naming ``engine`` unless it is one of :data:`ENGINES` (or None, when ``none_too``)."""
    if engine in ENGINES or (none_too and engine is None):
        return
    allowed = ", ".join(repr(e) for e in ENGINES) + (" or None (choose)" if none_too else "")
    msg = f"engine={engine!r} is not one of {allowed}"
    raise ValueError(msg)


def schema_hash(schema: str) -> str:
    """``sha256:`` of the schema string, as rows-v1 section 9 defines it."""
    return "sha256:" + hashlib.sha256(("rows-v1-schema\n" + schema).encode("utf-8")).hexdigest()


def finish(schema: str, row_count: int, sum1: int, sum2: int, engine: str = "arrow") -> FrameHash:
    """Turn a schema string, a row count and the two sums into a FrameHash (rows-v1 section 9).

    Sums may be given signed (as a JVM long holds them): only their low 64 bits count. ``engine`` is one of
    :data:`ENGINES`; any other value is a ``ValueError`` naming it.

    Example:
        >>> finish('struct<>', 0, 0, 0).data_hash[:7]
        'sha256:'
        >>> finish('struct<>', 0, 0, 0, engine="jvn")
        Traceback (most recent call last):
        ValueError: engine='jvn' is not one of 'arrow', 'jvm'
    """
    check_engine(engine)
    text = f"rows-v1\n{schema}\n{int(row_count)}\n{sum1 & _MASK:016x}\n{sum2 & _MASK:016x}"
    data_hash = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    return FrameHash(int(row_count), data_hash, schema_hash(schema), schema, HASH_METHOD, engine)


def sum_lines(lines: Iterable[bytes]) -> tuple[int, int, int]:
    """SHA-256 each line and add the two halves modulo 2^64 (rows-v1 section 8).

    Returns ``(row_count, sum1, sum2)`` with the sums as unsigned Python ints.
    """
    sha = hashlib.sha256
    digests = b"".join([sha(line).digest() for line in lines])
    n = len(digests) // 32
    if n == 0:
        return 0, 0, 0
    # Big-endian u64 quarters of each digest; numpy's uint64 sum wraps modulo 2^64, which is the rule.
    words = np.frombuffer(digests, dtype=">u8").reshape(n, 4)
    with np.errstate(over="ignore"):
        s1 = int(words[:, 0].astype(np.uint64).sum(dtype=np.uint64))
        s2 = int(words[:, 1].astype(np.uint64).sum(dtype=np.uint64))
    return n, s1, s2


def add_sums(parts: Iterable[tuple[int, int, int]]) -> tuple[int, int, int]:
    """Combine ``(row_count, sum1, sum2)`` partials, e.g. one per partition or batch."""
    n = s1 = s2 = 0
    for pn, p1, p2 in parts:
        n += pn
        s1 = (s1 + p1) & _MASK
        s2 = (s2 + p2) & _MASK
    return n, s1, s2
