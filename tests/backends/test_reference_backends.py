"""Our three backends pass ubunye.testing.backend_conformance (pandas is also the reference of the example tasks)."""

from __future__ import annotations

import pytest

from ubunye.engines import get_engine
from ubunye.testing.backend_conformance import BackendConformance


class TestPandas(BackendConformance):
    invalid_utf8_strings = True

    @pytest.fixture
    def engine(self):
        return get_engine("pandas")


class TestPolars(BackendConformance):
    @pytest.fixture
    def engine(self):
        pytest.importorskip("polars")
        return get_engine("polars")

    def make_frame(self, engine, table):
        import polars as pl

        return pl.from_arrow(table)
