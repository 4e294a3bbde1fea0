"""A helper module beside transformations.py: it counts in the task's code_hash too."""

from __future__ import annotations

import numpy as np
import pandas as pd

REGIONS = ["north", "south", "east", "west"]
STATUSES = ["paid", "paid", "paid", "shipped", "cancelled"]


def orders_frame(rows: int, day: str) -> pd.DataFrame:
    """``rows`` orders for ``day``, seeded by the day so a re-run gives the same rows."""
    rng = np.random.default_rng(int(day.replace("-", "")))
    return pd.DataFrame(
        {
            "order_id": np.arange(1, rows + 1, dtype="int64"),
            "day": [day] * rows,
            "customer": [f"c{n:03d}" for n in rng.integers(1, 60, rows)],
            "region": rng.choice(REGIONS, rows).astype(object),
            "status": rng.choice(STATUSES, rows).astype(object),
            "quantity": rng.integers(1, 6, rows).astype("int64"),
            "amount_cents": rng.integers(199, 25_000, rows).astype("int64"),
        }
    )
