"""The examples in the docstrings of the port, the type names, the polars engine and the conformance suite run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "ubunye.hashing.port",
    "ubunye.hashing.typenames",
    "ubunye.engines.polars_engine",
    "ubunye.testing.backend_conformance",
    "ubunye.testing.generated",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
