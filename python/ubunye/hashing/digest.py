"""Rows to sums to the recorded digest: sections 8 and 9 of docs/rows-v1.md."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

HASH_METHOD = "rows-v1"
#: The implementations that compute rows-v1, as ``FrameHash.engine`` and every ``engine=`` parameter name them.
ENGINES = ("arrow", "jvm")
_MASK = (1 << 64) - 1


def _builtin_sha256() -> Callable[[bytes], Any]:
    """CPython's own SHA-256, in software, the least cost per call (module _sha2 from Python 3.12, _sha256
    before); OpenSSL's in a build without it (FIPS)."""
    for module in ("_sha2", "_sha256"):
        try:
            return cast(Callable[[bytes], Any], importlib.import_module(module).sha256)
        except ImportError:
            continue
    return hashlib.sha256


_BUILTIN_SHA256 = _builtin_sha256()
# Lines up to 55 bytes are one SHA-256 block with their padding. There CPython's own SHA-256 costs least (~340 ns
# a line, measured on Python 3.11 to 3.13); past one block OpenSSL's, which uses the CPU's SHA instructions where
# it has them, costs less (~500 ns a line of 150 bytes against ~870 ns), so a longer average line goes there.
_ONE_BLOCK = 55
# Lines turned into Python bytes at a time (line_words).
_PIECE = 2048


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


def line_words(lines: pa.Array) -> np.ndarray:
    """The SHA-256 of every line of a string or binary array (none null) as its four big-endian 64-bit words:
    an ``(n, 4)`` uint64 array, one row per line (rows-v1 section 8 adds up columns 0 and 1).

    Example:
        >>> w = line_words(pa.array(['{"id":1}']))
        >>> bytes.fromhex("".join(f"{int(x):016x}" for x in w[0])) == hashlib.sha256(b'{"id":1}').digest()
        True
    """
    n = len(lines)
    if n == 0:
        return np.zeros((0, 4), dtype=np.uint64)
    large = pa.types.is_large_string(lines.type) or pa.types.is_large_binary(lines.type)
    data = lines.cast(pa.large_binary() if large else pa.binary())
    size = pc.sum(pc.binary_length(data)).as_py() or 0
    sha = _BUILTIN_SHA256 if size <= _ONE_BLOCK * n else hashlib.sha256
    digest = type(sha(b"")).digest
    # map over C callables: no bytecode runs per line. The lines become Python bytes a few thousand at a time:
    # then the same memory, still mapped and cached, holds each piece's; a whole batch's (~10 MB) would be fresh
    # pages every time, which cost a third as much as the hashing itself (measured).
    pieces = [b"".join(map(digest, map(sha, data.slice(start, _PIECE).to_pylist()))) for start in range(0, n, _PIECE)]
    digests = pieces[0] if len(pieces) == 1 else b"".join(pieces)
    return np.frombuffer(digests, dtype=">u8").reshape(n, 4).astype(np.uint64)


def sum_lines(lines: pa.Array) -> tuple[int, int, int]:
    """SHA-256 each line of a string or binary array and add the two halves modulo 2^64 (rows-v1 section 8).

    Returns ``(row_count, sum1, sum2)`` with the sums as unsigned Python ints.

    Example:
        >>> n, s1, _ = sum_lines(pa.array(['{"id":1}', '{"id":1}']))
        >>> n, s1 == (2 * int.from_bytes(hashlib.sha256(b'{"id":1}').digest()[:8], "big")) % 2**64
        (2, True)
    """
    words = line_words(lines)
    with np.errstate(over="ignore"):  # numpy's uint64 sum wraps modulo 2^64, which is the rule
        s1 = int(words[:, 0].sum(dtype=np.uint64))
        s2 = int(words[:, 1].sum(dtype=np.uint64))
    return len(words), s1, s2


def add_sums(parts: Iterable[tuple[int, int, int]]) -> tuple[int, int, int]:
    """Combine ``(row_count, sum1, sum2)`` partials, e.g. one per partition or batch."""
    n = s1 = s2 = 0
    for pn, p1, p2 in parts:
        n += pn
        s1 = (s1 + p1) & _MASK
        s2 = (s2 + p2) & _MASK
    return n, s1, s2


def to_halves(s: int) -> tuple[int, int]:
    """An unsigned 64-bit sum as its high and low 32-bit halves: sums of halves of many parts fit in a signed
    64-bit integer, so Spark's bigint additions of them never overflow (whatever ``spark.sql.ansi.enabled`` says).

    Example:
        >>> to_halves(2**64 - 1)
        (4294967295, 4294967295)
    """
    return s >> 32, s & 0xFFFFFFFF


def from_halves(high: int, low: int) -> int:
    """The sum (modulo 2^64, unsigned) of parts whose halves (:func:`to_halves`) were added up as ``high``, ``low``.

    Example:
        >>> from_halves(*to_halves(12345)), from_halves(2**32, 0)
        (12345, 0)
    """
    return ((high << 32) + low) & _MASK
