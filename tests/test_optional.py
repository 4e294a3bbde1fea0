"""Which failures tests/conftest.py reports as skips: ubunye's refusal when deltalake's Arrow side fails on a pyarrow
older than deltalake declares (tests.optional.deltalake_arrow_refusal), and nothing else."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.optional import deltalake_arrow_refusal

try:
    group = BaseExceptionGroup  # Python 3.11+
except NameError:  # 3.10: hypothesis's own backport
    group = pytest.importorskip("exceptiongroup", reason="no exception groups on this Python").BaseExceptionGroup

REFUSAL = (
    "input 'o' (Delta at /d/o): deltalake failed (TypeError: field() takes at least 2 positional arguments (1 given)); "
    "deltalake's Arrow side needs pyarrow >= 21.0 (its own requirement) and this Python has pyarrow 14.0.1: pip "
    "install 'pyarrow>=21.0', or use the Spark engine (it reads Delta with delta-spark)"
)


def test_the_refusal_is_a_skip_saying_why() -> None:
    from ubunye.exceptions import EngineError

    why = deltalake_arrow_refusal(EngineError(REFUSAL))
    assert why is not None
    assert why.startswith("deltalake's Arrow side needs pyarrow >= 21.0 (deltalake's own requirement)"), why
    assert f"this venv has pyarrow {pa.__version__}" in why and why.endswith("(1 given)"), why


def test_any_other_failure_stays_a_failure() -> None:
    from ubunye.exceptions import EngineError

    assert deltalake_arrow_refusal(EngineError("input 'o' (Delta at /d/o): no Delta log")) is None
    assert deltalake_arrow_refusal(AssertionError(REFUSAL)) is None  # a test's own assertion, whatever it says
    try:
        pa.field("x")  # a TypeError on pyarrow 14, but raised here, not inside deltalake
    except TypeError as exc:
        assert deltalake_arrow_refusal(exc) is None
    failures = [EngineError(REFUSAL), ValueError("a wrong hash")]
    assert deltalake_arrow_refusal(group("two failures", failures)) is None
    assert deltalake_arrow_refusal(group("two refusals", [EngineError(REFUSAL)] * 2)) is not None
