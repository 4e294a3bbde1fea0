"""The Spark engine passes ubunye.testing.backend_conformance (the shared session of tests/conftest.py)."""

from __future__ import annotations

import pytest

from ubunye.testing.backend_conformance import BackendConformance

pytestmark = pytest.mark.spark


class TestSpark(BackendConformance):
    invalid_utf8_strings = True

    @pytest.fixture
    def engine(self, spark):
        from ubunye.engines.spark_engine import SparkEngine

        return SparkEngine(spark=spark)
