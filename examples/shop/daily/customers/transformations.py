"""Spend per customer, written with narwhals: unchanged on the pandas and the Spark engine."""

from __future__ import annotations

import narwhals as nw

from ubunye import Task


class CustomerSpend(Task):
    """Orders that were not cancelled, summed per customer."""

    def transform(self, sources: dict) -> dict:
        orders = nw.from_native(sources["orders"])
        spend = (
            orders.filter(nw.col("status") != "cancelled")
            .group_by("customer")
            .agg(nw.len().alias("orders"), nw.col("amount_cents").sum().alias("spent_cents"))
            .with_columns(nw.col("orders", "spent_cents").cast(nw.Int64))
        )
        return {"customers": spend}
