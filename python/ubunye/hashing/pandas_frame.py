"""A pandas DataFrame as the Arrow table rows-v1 hashes: the pandas rows of section 7 of docs/rows-v1.md.

Columns are converted one by one (not with ``Table.from_pandas``) because the rules differ from Arrow's
defaults: NaN in a numpy float column is NaN, not null; object columns must hold one kind of value.
"""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pandas as pd
import pyarrow as pa

from ubunye.exceptions import HashError
from ubunye.hashing.types import check_unique


def _fail(name: str, dtype: object, why: str) -> HashError:
    return HashError(f"rows-v1 cannot hash column {name!r} of dtype {dtype}: {why} (docs/rows-v1.md section 11)")


def _decimal_type(values: list[decimal.Decimal], name: str) -> pa.DataType:
    """Section 7: with n coefficient digits and exponent e, a value has max(-e, 0) fraction digits and
    max(n + e, 0) integer digits; s is the most fraction digits, p the most integer digits plus s (pyarrow's
    inference: Decimal("0.5") is decimal(1,1), Decimal("0E-18") decimal(18,18), Decimal("0") decimal(1,0))."""
    scale = 0
    int_digits = 0  # "0.5" has none; "0" has one (its coefficient digit), so p >= 1 always
    for v in values:
        if not v.is_finite():
            raise _fail(name, "object", f"Decimal {v} is not a finite number")
        _sign, digits, exponent = v.as_tuple()
        frac = max(0, -int(exponent))
        whole = max(len(digits) + int(exponent), 0)
        scale = max(scale, frac)
        int_digits = max(int_digits, whole)
    precision = int_digits + scale
    if precision > 38:
        msg = (
            f"its Decimals need decimal({precision},{scale}) ({int_digits} integer and {scale} fraction digits), "
            "above rows-v1's precision 38"
        )
        raise _fail(name, "object", msg)
    return pa.decimal128(max(precision, 1), scale)


def _object_column(series: pd.Series, name: str) -> pa.Array:
    kind = pd.api.types.infer_dtype(series, skipna=True)
    values = [None if _is_missing(v) else v for v in series.tolist()]
    present = [v for v in values if v is not None]
    if not present:
        raise _fail(
            name,
            series.dtype,
            "it holds no non-null value, so its type cannot be known; set its dtype",
        )
    kinds = {type(v) for v in present}
    if kind == "string":
        return pa.array(values, pa.string())
    if kind == "bytes":
        return pa.array(values, pa.binary())
    if kind == "date" and all(type(v) is dt.date for v in present):
        return pa.array(values, pa.date32())
    if kind == "datetime" and kinds <= {dt.datetime, pd.Timestamp}:
        zones = {v.tzinfo is not None for v in present}
        if len(zones) > 1:
            raise _fail(name, series.dtype, "it mixes datetimes with and without a time zone")
        return pa.array(values)
    if kind == "decimal":
        return pa.array(values, _decimal_type(present, name))
    if kinds <= {dict} or all(isinstance(v, (list, tuple, np.ndarray)) for v in present):
        try:
            return pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise _fail(name, series.dtype, f"its nested values have no single type ({exc})") from exc
    found = ", ".join(sorted(t.__name__ for t in kinds))
    raise _fail(
        name,
        series.dtype,
        f"an object column must hold one kind of value, found {found}",
    )


def _is_missing(v: object) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and np.isnan(v)


def _column(series: pd.Series, name: str) -> pa.Array:
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return _column(series.astype(dtype.categories.dtype), name)
    if isinstance(dtype, pd.ArrowDtype):
        return pa.array(series)
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        return _object_column(series, name)
    if isinstance(dtype, np.dtype):
        if dtype.kind in "iub":
            if dtype.kind == "u":
                raise _fail(
                    name,
                    dtype,
                    "unsigned integers have no rows-v1 type; cast to a signed type",
                )
            return pa.array(series.to_numpy())
        if dtype.kind == "f":
            # NaN in a numpy float column is the value NaN: numpy floats cannot hold a null.
            return pa.array(series.to_numpy(), from_pandas=False)
        if dtype.kind == "M":
            return pa.array(series.to_numpy(), from_pandas=True)
        if dtype.kind == "m":
            raise _fail(name, dtype, "durations (timedelta) are not rows-v1 types")
        raise _fail(name, dtype, "not a rows-v1 type")
    if isinstance(dtype, pd.DatetimeTZDtype):
        return pa.array(series)
    if isinstance(dtype, pd.PeriodDtype | pd.IntervalDtype | pd.SparseDtype):
        raise _fail(name, dtype, "not a rows-v1 type")
    # pandas extension dtypes: nullable Int*/Float*/boolean and the string dtypes carry their own mask.
    return pa.array(series)


def pandas_to_arrow(frame: pd.DataFrame) -> pa.Table:
    """The Arrow table that rows-v1 hashes for a pandas DataFrame (the index is not data and is left out).

    Example:
        >>> import pandas as pd
        >>> pandas_to_arrow(pd.DataFrame({"x": [1.5, float("nan")]})).column("x").null_count
        0
    """
    names = [str(c) for c in frame.columns]
    for c in frame.columns:
        if not isinstance(c, str):
            raise HashError(f"rows-v1 needs string column names; column {c!r} is a {type(c).__name__}")
    check_unique(names)
    arrays = [_column(frame.iloc[:, i], names[i]) for i in range(len(names))]
    return pa.Table.from_arrays(arrays, names=names)
