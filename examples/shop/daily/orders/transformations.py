"""Generate a day of orders: the same rows on every engine for the same dt."""

from __future__ import annotations

from generator import orders_frame

from ubunye import Task


class GenerateOrders(Task):
    """One output, ``orders``, made from pandas and handed to the task's engine."""

    def transform(self, sources: dict) -> dict:
        frame = orders_frame(int(self.params["rows"]), str(self.params["day"]))
        return {"orders": self.engine.from_pandas(frame)}
