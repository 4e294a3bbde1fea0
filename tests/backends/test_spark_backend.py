"""The Spark engine passes ubunye.testing.backend_conformance (the shared session of tests/conftest.py)."""

from __future__ import annotations

import pytest

from ubunye.testing.backend_conformance import BackendConformance


class TestSpark(BackendConformance):
    invalid_utf8_strings = True
    profile_engines = ("jvm", "arrow")  # the jar's ubunye_profile_v1 and the twin on the executors (section 12.3)

    @pytest.fixture
    def engine(self, spark):
        from ubunye.engines.spark_engine import SparkEngine

        return SparkEngine(spark=spark)
