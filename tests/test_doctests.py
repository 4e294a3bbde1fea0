"""Every example in every docstring of the package runs (examples needing a SparkSession say ``+SKIP``)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ubunye

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(ubunye.__path__, "ubunye.")
    if m.name != "ubunye.demo" and not m.name.startswith("ubunye.testing.data")  # a script; data folders
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_the_public_modules_have_examples():
    # A public name without an example is easy to add and hard to notice: these modules must keep theirs.
    for name in ["ubunye.hashing.frame", "ubunye.hashing.digest", "ubunye.lineage.store", "ubunye.hashing.port"]:
        assert doctest.testmod(importlib.import_module(name)).attempted > 0, name
