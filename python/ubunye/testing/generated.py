"""Generated tables for the backend conformance suite: every rows-v1 type, nulls and edge values, seeded.

Example:
    >>> sorted(generated_tables())
    ['nested', 'scalars']
    >>> generated_tables()["scalars"].num_rows
    200
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import random
from typing import TypeVar

import pyarrow as pa

T = TypeVar("T")

_TEXT = ["", "Ana", 'quote " and \\ back', "tab\tnew\nline", "\x01\x1f", "é ü ß", "日本語", "😀", "\u2028", "/"]
_FLOATS = [0.0, -0.0, 1.0, 0.1, -2.5, 1e23, 5e-324, 1e-7, 1234567.0, 1e7, float("nan"), float("inf"), float("-inf")]


def _maybe(rng: random.Random, value: T, null_rate: float = 0.15) -> T | None:
    return None if rng.random() < null_rate else value


def _timestamp(rng: random.Random) -> dt.datetime:
    return dt.datetime(1900, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(
        microseconds=rng.randrange(0, 200 * 365 * 86400 * 10**6)
    )


@functools.cache
def generated_tables(rows: int = 200, seed: int = 6) -> dict[str, pa.Table]:
    """Two seeded tables: ``scalars`` (every scalar type) and ``nested`` (lists, structs, maps)."""
    rng = random.Random(seed)
    n = range(rows)
    ints = {
        bits: [_maybe(rng, rng.randrange(-(2 ** (bits - 1)), 2 ** (bits - 1))) for _ in n] for bits in (8, 16, 32, 64)
    }
    scalars = pa.table(
        {
            "i8": pa.array(ints[8], pa.int8()),
            "i16": pa.array(ints[16], pa.int16()),
            "i32": pa.array(ints[32], pa.int32()),
            "i64": pa.array(ints[64], pa.int64()),
            "f64": pa.array([_maybe(rng, rng.choice([*_FLOATS, rng.uniform(-1e6, 1e6)])) for _ in n], pa.float64()),
            "f32": pa.array(
                [_maybe(rng, rng.choice([0.1, -0.0, 3.4e38, 1e-45, rng.uniform(-1, 1)])) for _ in n], pa.float32()
            ),
            "flag": pa.array([_maybe(rng, rng.random() < 0.5) for _ in n], pa.bool_()),
            "text": pa.array([_maybe(rng, rng.choice(_TEXT) + str(rng.randrange(100))) for _ in n], pa.string()),
            "blob": pa.array([_maybe(rng, rng.randbytes(rng.randrange(5))) for _ in n], pa.binary()),
            "day": pa.array(
                [_maybe(rng, dt.date(1, 1, 1) + dt.timedelta(days=rng.randrange(0, 3_652_058))) for _ in n], pa.date32()
            ),
            "at": pa.array([_maybe(rng, _timestamp(rng)) for _ in n], pa.timestamp("us", tz="UTC")),
            "wall": pa.array([_maybe(rng, _timestamp(rng).replace(tzinfo=None)) for _ in n], pa.timestamp("us")),
            "amount": pa.array(
                [_maybe(rng, decimal.Decimal(rng.randrange(-(10**12), 10**12)).scaleb(-3)) for _ in n],
                pa.decimal128(15, 3),
            ),
        }
    )
    nested = pa.table(
        {
            "id": pa.array(list(n), pa.int64()),
            "tags": pa.array(
                [_maybe(rng, [_maybe(rng, rng.choice(_TEXT)) for _ in range(rng.randrange(4))]) for _ in n],
                pa.list_(pa.string()),
            ),
            "point": pa.array(
                [
                    _maybe(rng, {"x": _maybe(rng, rng.uniform(-1, 1)), "label": _maybe(rng, rng.choice(_TEXT))})
                    for _ in n
                ],
                pa.struct([("x", pa.float64()), ("label", pa.string())]),
            ),
            "counts": pa.array(
                [
                    _maybe(rng, [(k, _maybe(rng, rng.randrange(100))) for k in rng.sample(_TEXT, rng.randrange(4))])
                    for _ in n
                ],
                pa.map_(pa.string(), pa.int32()),
            ),
        }
    )
    return {"scalars": scalars, "nested": nested}
