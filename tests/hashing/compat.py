"""What the floors venvs (make floors: pyarrow 14 and 15, no polars or DuckDB) lack, as skips that say so."""

from __future__ import annotations

from types import ModuleType

import pyarrow as pa
import pytest

# string_view, binary_view, list_view and large_list_view came with pyarrow 16: an older pyarrow has no such
# type, so no value of one can reach the twin there (hashing.types checks for them with getattr).
VIEWS = hasattr(pa, "string_view")
needs_views = pytest.mark.skipif(
    not VIEWS, reason=f"pyarrow {pa.__version__} has no view types (pyarrow 16 added them): none can reach the twin"
)


def view_type(name: str) -> object:
    """A pytest parameter of the view type ``pa.<name>()``, skipped on a pyarrow without view types."""
    return pytest.param(getattr(pa, name)() if VIEWS else None, id=name, marks=needs_views)


def import_or_skip(name: str) -> ModuleType:
    """``pytest.importorskip`` whose reason says where the module is missing on purpose."""
    reason = f"{name} is not installed here (the floors venvs of `make floors` hold numpy, pandas, pyarrow, pytest,"
    reason += " hypothesis and deltalake only)"
    return pytest.importorskip(name, reason=reason)
