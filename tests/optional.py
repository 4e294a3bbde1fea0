"""What the tests' optional libraries are here: polars (the ``ubunye[polars]`` extra) is absent on Python 3.10,
where the package runs but polars >= 2.1, the extra's floor, does not install; and deltalake's Arrow side, which
deltalake declares for pyarrow >= 21 and which fails in part on an older pyarrow (Databricks 14.3 to 16.4 LTS run
pyarrow 14 or 15)."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback

import pyarrow as pa
import pytest

from ubunye.exceptions import EngineError
from ubunye.hashing.delta_files import DELTALAKE_PYARROW, pyarrow_version_failure

HAVE_POLARS = importlib.util.find_spec("polars") is not None
NO_POLARS = "polars is not installed here (polars >= 2.1, the extra's floor, needs Python 3.11)"
#: The local engines this Python can run.
LOCAL_ENGINES = ["pandas", "polars"] if HAVE_POLARS else ["pandas"]
#: For tests of the polars engine itself.
needs_polars = pytest.mark.skipif(not HAVE_POLARS, reason=NO_POLARS)
#: What ``--engine polars`` says where polars is not installed: on Python 3.10 no polars the extra names installs.
POLARS_MISSING = (
    "the polars engine needs polars: pip install 'ubunye[polars]'"
    if sys.version_info >= (3, 11)
    else f"the polars engine needs polars >= 2.1, which is built for Python 3.11 and later (this is Python "
    f"{sys.version_info[0]}.{sys.version_info[1]}): run it on Python 3.11+, or use the pandas or spark engine"
)

#: Whether this pyarrow is older than deltalake's Arrow side declares (its ``pyarrow`` extra).
OLD_PYARROW = tuple(int(p) for p in pa.__version__.split(".")[:2] if p.isdigit()) < DELTALAKE_PYARROW
#: The product's refusal when deltalake's Arrow side fails on such a pyarrow (ubunye.hashing.delta_files).
_REFUSED = re.compile(r"deltalake failed \((?P<failure>.*)\); deltalake's Arrow side needs pyarrow >= [\d.]+ ")
_DELTALAKE = f"{os.sep}deltalake{os.sep}"


def deltalake_arrow_refusal(exc: BaseException) -> str | None:
    """Why a test that raised ``exc`` cannot run on this pyarrow, or None: ``exc`` is ubunye's refusal of a Delta
    table deltalake failed to read or write on a pyarrow older than it declares (an EngineError saying so), or,
    in a test that calls deltalake itself, such a failure raised inside deltalake. A group of failures (hypothesis)
    is one only when each of them is. Any other failure is the test's to report, on every pyarrow.

    Example:
        >>> deltalake_arrow_refusal(EngineError("input 'o' (Delta at d): deltalake failed (TypeError: field() "
        ...     "takes at least 2 positional arguments (1 given)); deltalake's Arrow side needs pyarrow >= 21.0 "
        ...     "(its own requirement) and this Python has pyarrow 14.0.1: pip install 'pyarrow>=21.0'"))[:40]
        "deltalake's Arrow side needs pyarrow >= "
        >>> deltalake_arrow_refusal(EngineError("input 'o' (Delta at d): no such table")) is None
        True
    """
    group = getattr(exc, "exceptions", None)  # BaseExceptionGroup, or the exceptiongroup backport on 3.10
    if isinstance(group, (list, tuple)):
        reasons = [deltalake_arrow_refusal(e) for e in group]
        return reasons[0] if reasons and None not in reasons else None
    need = ".".join(map(str, DELTALAKE_PYARROW))
    here = f"deltalake's Arrow side needs pyarrow >= {need} (deltalake's own requirement); this venv has pyarrow"
    if isinstance(exc, EngineError):
        found = _REFUSED.search(str(exc))
        return f"{here} {pa.__version__}, and ubunye refused as it should: {found['failure']}" if found else None
    frames = traceback.extract_tb(exc.__traceback__)
    if OLD_PYARROW and pyarrow_version_failure(exc) and any(_DELTALAKE in f.filename for f in frames):
        first = (str(exc).strip().splitlines() or [""])[0]
        return f"{here} {pa.__version__}: deltalake failed in the test's own call ({type(exc).__name__}: {first})"
    return None
