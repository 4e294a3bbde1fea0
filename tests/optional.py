"""What the tests' optional libraries are here: polars (the ``ubunye[polars]`` extra) is absent on Python 3.10,
where the package runs but polars >= 2.1, the extra's floor, does not install."""

from __future__ import annotations

import importlib.util

import pytest

HAVE_POLARS = importlib.util.find_spec("polars") is not None
NO_POLARS = "polars is not installed here (polars >= 2.1, the extra's floor, needs Python 3.11)"
#: The local engines this Python can run.
LOCAL_ENGINES = ["pandas", "polars"] if HAVE_POLARS else ["pandas"]
#: For tests of the polars engine itself.
needs_polars = pytest.mark.skipif(not HAVE_POLARS, reason=NO_POLARS)
