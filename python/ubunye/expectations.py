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

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ubunye.config.model import RULES, Expectations
from ubunye.lineage.record import ExpectationResult

if TYPE_CHECKING:
    from ubunye.engines import Engine

VIEW = "ubunye_target"


def _literal(value: object, engine: Engine[Any]) -> str:
    if hasattr(value, "item") and type(value).__module__ == "numpy":  # np.float64(1.5): repr is no SQL literal
        value = value.item()
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and not math.isfinite(value):
        # repr gives inf / nan, which SQL reads as a column name (the rule passed, or failed to bind)
        raise TypeError(f"value {value!r} is not a finite number: SQL has no literal for it; use an expression rule")
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if engine.name == "spark":
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return "'" + text.replace("'", "''") + "'"


#: What a column's type is, as far as a rule's values are concerned; an engine type not listed is not checked.
_SPARK_KINDS = {"byte": "integer", "short": "integer", "integer": "integer", "long": "integer"}
_SPARK_KINDS |= {"float": "number", "double": "number", "decimal": "number", "boolean": "boolean"}
_SPARK_KINDS |= {"string": "string", "varchar": "string", "char": "string"}


def _kind(frame: object, column: str) -> str | None:
    """``integer``, ``number``, ``boolean`` or ``string``: the type of ``column`` of an engine's frame, or None
    (another type, such as a date, or one not known here)."""
    module = type(frame).__module__
    if module.startswith("pyspark"):
        name = frame.schema[column].dataType.typeName()  # type: ignore[attr-defined]
        return _SPARK_KINDS.get(str(name).split("(")[0])
    if module.startswith("polars"):
        dtype = frame.schema[column]  # type: ignore[attr-defined]
        if dtype.is_integer():
            return "integer"
        if dtype.is_float() or dtype.is_decimal():
            return "number"
        return {"Boolean": "boolean", "String": "string", "Utf8": "string"}.get(str(dtype))
    if module.startswith("pandas"):
        import pandas as pd
        from pandas.api import types

        dtype = frame[column].dtype  # type: ignore[index]
        if isinstance(dtype, pd.ArrowDtype):  # pandas 1.5's is_*_dtype do not know Arrow dtypes: ask Arrow
            return _arrow_kind(dtype.pyarrow_dtype)
        if types.is_bool_dtype(dtype):
            return "boolean"
        if types.is_integer_dtype(dtype):
            return "integer"
        if types.is_float_dtype(dtype):
            return "number"
        if not types.is_object_dtype(dtype) and types.is_string_dtype(dtype):  # an object column may hold anything
            return "string"
    return None


def _arrow_kind(dtype: object) -> str | None:
    """The kind of an Arrow type (a pandas ArrowDtype's), as ``_kind`` names kinds."""
    import pyarrow as pa

    t = pa.types
    if t.is_boolean(dtype):
        return "boolean"
    if t.is_integer(dtype):
        return "integer"
    if t.is_floating(dtype) or t.is_decimal(dtype):
        return "number"
    if t.is_string(dtype) or t.is_large_string(dtype) or getattr(t, "is_string_view", lambda _: False)(dtype):
        return "string"
    return None


def _fits(value: object, kind: str) -> bool:
    if value is None or isinstance(value, bool):  # None: nulls are accepted; bool is an int, checked apart
        return value is None or kind == "boolean"
    return {
        "integer": isinstance(value, int),
        "number": isinstance(value, int | float),
        "string": isinstance(value, str),
        "boolean": False,
    }[kind]


def _typed(engine: Engine[Any], frame: object, sql: str) -> str | None:
    """The kind (:func:`_kind`) of the one column ``sql`` selects from the target, from its schema alone."""
    return _kind(engine.sql(f"SELECT {sql} AS ubunye_value FROM {VIEW} LIMIT 0", {VIEW: frame}), "ubunye_value")


def _accepted(engine: Engine[Any], frame: object, column: str, values: list[object]) -> str:
    """The WHERE clause of the rows an accepted_values rule refuses; raises TypeError for a value whose type is
    not the column's: SQL would convert it (``'1'`` or ``true`` for an integer 1) and the rule pass on a guess."""
    kind = _typed(engine, frame, engine.quote(column))
    for value in values:
        if kind is not None and not _fits(value, kind):
            shown = {bool: "boolean", int: "integer", float: "number", str: "string"}.get(type(value), "value")
            msg = f"value {value!r} ({shown}) is not of the column's type ({kind}): write the values as {kind}s"
            raise TypeError(msg)
    allowed = ", ".join(_literal(v, engine) for v in values if v is not None)
    q = engine.quote
    if not allowed:  # only null accepted: every value fails (``NOT IN (NULL)`` is never true, so would pass all)
        return f"{q(column)} IS NOT NULL"
    return f"{q(column)} IS NOT NULL AND {q(column)} NOT IN ({allowed})"


def _expression(engine: Engine[Any], frame: object, expr: str) -> str:
    """The WHERE clause of the rows an expression refuses; raises TypeError when it is not a boolean (SQL would
    take ``id + 1`` as true for every row but -1)."""
    kind = _typed(engine, frame, f"({expr})")
    if kind is not None and kind != "boolean":
        msg = f"the expression is not a boolean (its type is {kind}): write a condition such as id > 0"
        raise TypeError(msg)
    return f"NOT COALESCE(({expr}), FALSE)"


def _count(engine: Engine[Any], frame: object, where: str) -> int:
    return int(engine.scalar(f"SELECT COUNT(*) FROM {VIEW} WHERE {where}", {VIEW: frame}))


def _run(result: ExpectationResult, func: Callable[..., tuple[int, bool]]) -> ExpectationResult:
    try:
        result.observed, result.passed = func()
    except Exception as exc:
        result.passed = False
        result.error = _reason(exc)
    return result


def _reason(exc: Exception) -> str:
    r"""One line for why a rule could not be evaluated: its type and first line, or, for a py4j error (pyspark 3.5's
    ``Py4JJavaError``, whose first line is "An error occurred while calling o98.collectToPython."), the JVM
    error's innermost cause, which says what failed.

    A message whose first line is blank (Spark's ParseException: ``\n[PARSE_SYNTAX_ERROR] ...\n\n== SQL ==``)
    gives its first line that says something.

    Example:
        >>> _reason(TypeError("bad value\nmore"))
        'TypeError: bad value'
        >>> _reason(ValueError("\n[PARSE_SYNTAX_ERROR] Syntax error at or near '>'.\n\n== SQL ==\na >> 1"))
        "ValueError: [PARSE_SYNTAX_ERROR] Syntax error at or near '>'."
    """
    said = _first_line(str(exc))
    if getattr(exc, "java_exception", None) is not None:
        from ubunye.spark.errors import spark_reason

        reason = _first_line(spark_reason(exc))
        kind, _, text = reason.partition(": ")
        return reason if text.strip() or not said else f"{kind}: {said}"
    return f"{type(exc).__name__}: {said}"


def _first_line(text: str) -> str:
    """The first line of ``text`` that is not blank, stripped ("" when there is none)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


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
                out.append(
                    _run(
                        res(col, list(values)),
                        lambda c=col, v=values: _zero(_count(engine, frame, _accepted(engine, frame, c, v))),
                    )
                )
        elif rule == "expression":
            for expr in [spec] if isinstance(spec, str) else spec:
                out.append(
                    _run(res(params=expr), lambda e=expr: _zero(_count(engine, frame, _expression(engine, frame, e))))
                )
    return out


def _zero(n: int) -> tuple[int, bool]:
    return n, n == 0


def failures(results: list[ExpectationResult], severity: str = "error") -> list[ExpectationResult]:
    """The results that failed with the given severity."""
    return [r for r in results if not r.passed and r.severity == severity]


def describe(result: ExpectationResult) -> str:
    """One line, e.g. ``outputs.daily not_null(amount): observed 3``; an expression rule names its expression
    (``expression(b > 0): observed 2``: a target may have several).

    Example:
        >>> describe(ExpectationResult("outputs.o", "expression", False, 2, None, "b > 0\\n AND c > 0", "error"))
        'outputs.o expression(b > 0 AND c > 0): observed 2'
    """
    named = result.column or (result.params if result.rule == "expression" and result.params else None)
    col = f"({_one_line(str(named))})" if named else ""
    what = _one_line(result.error) if result.error else f"observed {result.observed}"
    return f"{result.target} {result.rule}{col}: {what}"


def _one_line(text: str) -> str:
    """``text`` with its line breaks (and the spaces around them) as one space: a description is one line."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())
