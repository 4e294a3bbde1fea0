"""Expectations: CONFIG.expectations rules checked on an engine's frame with SQL, each one recorded.

Rules: ``row_count {min, max}``, ``not_null [cols]``, ``unique [cols]`` (an item that is a list is a compound
key), ``accepted_values {col: [values]}`` (nulls are accepted; use not_null for them) and
``expression "<SQL boolean>"`` (a row fails unless the expression is true, so null fails).
NaN in a float column is a value, not null (as rows-v1 hashes it and as it is written).
``observed`` is the row count for row_count and the number of offending rows (or duplicated keys) otherwise.

Example:
    >>> import pandas as pd
    >>> from ubunye.config.model import Expectations
    >>> from ubunye.engines import get_engine
    >>> rules = Expectations("outputs.o", {"not_null": ["a"], "row_count": {"min": 3}})
    >>> frame = pd.DataFrame({"a": pd.array([1, None], dtype="Int64")})
    >>> [(r.rule, r.passed, r.observed) for r in check(rules, frame, get_engine("pandas"))]
    [('row_count', False, 2), ('not_null', False, 1)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ubunye.config.model import RULES, Expectations
from ubunye.lineage.record import ExpectationResult

if TYPE_CHECKING:
    from ubunye.engines import Engine

VIEW = "ubunye_target"


def _literal(value: object, engine: Engine[Any]) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if engine.name == "spark":
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return "'" + text.replace("'", "''") + "'"


def _count(engine: Engine[Any], frame: object, where: str) -> int:
    return int(engine.scalar(f"SELECT COUNT(*) FROM {VIEW} WHERE {where}", {VIEW: frame}))


def _run(result: ExpectationResult, func: Callable[..., tuple[int, bool]]) -> ExpectationResult:
    try:
        result.observed, result.passed = func()
    except Exception as exc:
        result.passed = False
        result.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return result


def check(expectations: Expectations, frame: object, engine: Engine[Any]) -> list[ExpectationResult]:
    """Check every rule of one target on ``frame``; a rule that cannot be evaluated fails with ``error``."""
    q = engine.quote
    out: list[ExpectationResult] = []
    sev = expectations.severity
    for rule in RULES:
        if rule not in expectations.rules:
            continue
        spec = expectations.rules[rule]

        def res(column: str | None = None, params: object = None, _rule: str = rule) -> ExpectationResult:
            return ExpectationResult(expectations.target, _rule, False, None, column, params, sev)

        if rule == "row_count":
            lo, hi = spec.get("min"), spec.get("max")

            def rows(lo: int | None = lo, hi: int | None = hi) -> tuple[int, bool]:
                n = int(engine.scalar(f"SELECT COUNT(*) FROM {VIEW}", {VIEW: frame}))
                return n, (lo is None or n >= lo) and (hi is None or n <= hi)

            out.append(_run(res(params=dict(spec)), rows))
        elif rule == "not_null":
            for col in spec:
                out.append(_run(res(col), lambda c=col: _zero(_count(engine, frame, f"{q(c)} IS NULL"))))
        elif rule == "unique":
            for key in spec:
                cols = [key] if isinstance(key, str) else list(key)
                keys = ", ".join(q(c) for c in cols)
                sql = f"SELECT COUNT(*) FROM (SELECT {keys} FROM {VIEW} GROUP BY {keys} HAVING COUNT(*) > 1) d"
                out.append(_run(res(",".join(cols)), lambda s=sql: _zero(int(engine.scalar(s, {VIEW: frame})))))
        elif rule == "accepted_values":
            for col, values in spec.items():
                allowed = ", ".join(_literal(v, engine) for v in values if v is not None) or "NULL"
                where = f"{q(col)} IS NOT NULL AND {q(col)} NOT IN ({allowed})"
                out.append(_run(res(col, list(values)), lambda w=where: _zero(_count(engine, frame, w))))
        elif rule == "expression":
            for expr in [spec] if isinstance(spec, str) else spec:
                where = f"NOT COALESCE(({expr}), FALSE)"
                out.append(_run(res(params=expr), lambda w=where: _zero(_count(engine, frame, w))))
    return out


def _zero(n: int) -> tuple[int, bool]:
    return n, n == 0


def failures(results: list[ExpectationResult], severity: str = "error") -> list[ExpectationResult]:
    """The results that failed with the given severity."""
    return [r for r in results if not r.passed and r.severity == severity]


def describe(result: ExpectationResult) -> str:
    """One line, e.g. ``outputs.daily not_null(amount): observed 3``."""
    col = f"({result.column})" if result.column else ""
    what = result.error or f"observed {result.observed}"
    return f"{result.target} {result.rule}{col}: {what}"
