"""The examples in the docstrings of the run-record modules run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "ubunye.task",
    "ubunye.context",
    "ubunye.monitors",
    "ubunye.expectations",
    "ubunye.config",
    "ubunye.config.template",
    "ubunye.engines",
    "ubunye.engines.pandas_engine",
    "ubunye.lineage.record",
    "ubunye.lineage.store",
    "ubunye.lineage.environment",
    "ubunye.lineage.redact",
    "ubunye.lineage.recorder",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
