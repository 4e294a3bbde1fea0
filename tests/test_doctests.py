"""Every example in every docstring of the package runs (examples needing a SparkSession say ``+SKIP``)."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import ubunye
from tests.optional import HAVE_POLARS


def _checked(name: str) -> bool:
    """Every module but the demo (a script) and the data folders (example tasks, vectors)."""
    return name != "ubunye.demo" and not name.startswith("ubunye.testing.data")


def _takes(make: Callable[[], object]) -> bool:
    try:
        make()
    except (TypeError, pa.ArrowTypeError):
        return False
    return True


#: pyarrow calls some examples make, with whether this pyarrow does them: the package's floor is pyarrow 14.0.1
#: (Databricks 14.3 and 15.4 LTS), which has no view types and no uuid type and takes no dict in ``record_batch``;
#: pyarrow 19 (17.3 LTS) makes a float16 array of np.float16 values only, not of Python floats.
NEWER_PYARROW = {
    "pa.string_view()": ("pa.string_view() (a view type)", hasattr(pa, "string_view")),
    "pa.record_batch({": ("pa.record_batch of a dict", _takes(lambda: pa.record_batch({"a": [1]}))),
    "pa.float16())": ("pa.array of Python floats as float16", _takes(lambda: pa.array([1.5], pa.float16()))),
    "pa.uuid()": ("pa.uuid() (an extension type)", hasattr(pa, "uuid")),
}


MODULES = sorted(["ubunye", *(m.name for m in pkgutil.walk_packages(ubunye.__path__, "ubunye.") if _checked(m.name))])


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    spec = importlib.util.find_spec(name)
    source = Path(spec.origin).read_text() if spec and spec.origin else ""
    if not HAVE_POLARS and "import polars" in source:
        pytest.skip("it uses polars, which is not installed here (polars >= 2.1 needs Python 3.11)")
    module = importlib.import_module(name)
    examples = "".join(e.source for t in doctest.DocTestFinder().find(module) for e in t.examples)
    for what in [what for call, (what, here) in NEWER_PYARROW.items() if not here and call in examples]:
        pytest.skip(f"an example needs {what}, which pyarrow {pa.__version__} lacks")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_every_module_of_the_package_is_run():
    # walk_packages does not enter a folder without __init__.py: a module there would silently go unchecked.
    root = Path(ubunye.__file__).parent
    on_disk = {
        ".".join(("ubunye", *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
        for p in root.rglob("*.py")
    }
    assert {m for m in on_disk if _checked(m)} == set(MODULES)


def test_the_public_modules_have_examples():
    # A public name without an example is easy to add and hard to notice: these modules must keep theirs.
    for name in [
        "ubunye",
        "ubunye.hashing.frame",
        "ubunye.hashing.digest",
        "ubunye.lineage.store",
        "ubunye.hashing.port",
    ]:
        assert doctest.testmod(importlib.import_module(name)).attempted > 0, name
