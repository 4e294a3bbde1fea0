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
    try:
        return _object_array(series, name)
    except UnicodeEncodeError as exc:
        # A Python str may hold a lone surrogate (e.g. from surrogateescape decoding): it is no Unicode text, so it
        # has no UTF-8 bytes to hash (section 4); Arrow's bare error would name no column.
        msg = f"it holds a str that is not valid Unicode ({exc}); decode its bytes without surrogateescape"
        raise _fail(name, series.dtype, msg) from None


def _object_array(series: pd.Series, name: str) -> pa.Array:
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
        _check_datetimes(present, name, series.dtype)
        try:
            return pa.array(values)
        except pa.ArrowInvalid:
            if not all(v.tzinfo is not None for v in present):
                raise
            # as for a datetime64[ns, tz] column: a zone Arrow refuses (seconds in its offset), the instant in UTC
            return pa.array([None if v is None else v.astimezone(dt.timezone.utc) for v in values])
    if kind == "decimal":
        return pa.array(values, _decimal_type(present, name))
    if kinds <= {dict} or all(isinstance(v, (list, tuple, np.ndarray)) for v in present):
        if _check_nested(present, name, series.dtype):
            values = [_none_for_missing(v) for v in values]
        try:
            nested = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            msg = (
                f"its nested values ({_found(present)}) have no single Arrow type ({exc}); a list's items and a "
                f"dict key's values must be of one kind in every row. {_MAP_HINT}"
            )
            raise _fail(name, series.dtype, msg) from exc
        if _has_timestamps(nested.type):  # only then can a value have been truncated or its zone guessed
            _check_datetimes(present, name, series.dtype)
        return nested
    if all(isinstance(v, bool | np.bool_) for v in present):
        msg = "an object column of booleans is not hashed as such (section 7); convert it: .astype('boolean')"
        raise _fail(name, series.dtype, msg)
    if all(isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool) for v in present):
        msg = (
            f"an object column of numbers ({_found(present)}) has no rows-v1 type: which width and kind is not "
            "known from its values (section 7); convert it to a numeric dtype, e.g. .astype('Int64') or "
            ".astype('Float64')"
        )
        raise _fail(name, series.dtype, msg)
    found = _found(present)
    if any(v is pd.NaT for v in series.tolist()) and kind != "datetime":
        # NaT is a missing datetime, not a missing value of any kind: infer_dtype counts it as a datetime.
        found += ", NaT (a missing datetime; use None for a missing value of another kind)"
    raise _fail(
        name,
        series.dtype,
        "an object column must hold one kind of supported value (str, bytes, datetime.date, datetime.datetime, "
        f"Decimal, list or dict), found {found}",
    )


_MAP_HINT = (
    "A map read with Arrow's to_pandas() becomes lists of (key, value) tuples, which are not maps: hash the Arrow "
    "table, or use to_pandas(types_mapper=pd.ArrowDtype)"
)


def _found(present: list[object]) -> str:
    """The Python types of ``present``, sorted, for an error message."""
    return ", ".join(sorted({type(v).__name__ for v in present}))


def _has_timestamps(t: pa.DataType) -> bool:
    """Whether an Arrow type is or holds a timestamp (lists, structs, maps: their fields are its children)."""
    if pa.types.is_timestamp(t):
        return True
    return any(_has_timestamps(t.field(i).type) for i in range(t.num_fields))


def _check_datetimes(present: list[object], name: str, dtype: object) -> None:
    """Section 5.3 for datetimes in an object column, at any depth: a non-zero sub-microsecond part (only a
    ``pd.Timestamp`` has one) would be truncated by Arrow, and naive and aware datetimes at one place would be made
    one kind by Arrow's inference (a guess: a naive value names no instant). Either is a HashError naming the place."""
    aware: dict[str, set[bool]] = {}
    stack: list[tuple[object, str]] = [(v, name) for v in present]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dt.datetime):
            if isinstance(value, pd.Timestamp) and value.nanosecond:
                msg = (
                    f"{path!r} holds {value}, whose sub-microsecond part is not zero; rows-v1 times are "
                    "microseconds and truncating would make two values hash alike (section 5.3): round it first"
                )
                raise _fail(name, dtype, msg)
            aware.setdefault(path, set()).add(value.tzinfo is not None)
            if len(aware[path]) > 1:
                msg = f"{path!r} mixes datetimes with and without a time zone (section 5.3)"
                raise _fail(name, dtype, msg)
        elif isinstance(value, dict):
            stack.extend((v, f"{path}.{k}") for k, v in value.items())
        elif isinstance(value, list | tuple) or (isinstance(value, np.ndarray) and value.dtype.kind == "O"):
            # numeric numpy arrays hold no datetime objects; datetime64 arrays are checked where Arrow reads them
            stack.extend((v, path + "[]") for v in value)


def _is_missing(v: object) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float | np.floating) and bool(np.isnan(v))


#: The kind of a scalar inside a list or dict, for :func:`_check_nested` (datetime before date: it is one).
_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    ((bool, np.bool_), "bool"),
    ((int, np.integer), "int"),
    ((float, np.floating), "float"),
    ((str,), "str"),
    ((bytes,), "bytes"),
    ((decimal.Decimal,), "Decimal"),
    ((dt.datetime,), "datetime"),
    ((dt.date,), "date"),
)
#: A numpy array's items by its dtype's kind, without reading them.
_ARRAY_KINDS = {"b": "bool", "i": "int", "u": "int", "f": "float", "U": "str", "S": "bytes", "M": "datetime64"}


def _kind(value: object) -> str:
    for types, kind in _KINDS:
        if isinstance(value, types):
            return kind
    return type(value).__name__


def _check_nested(present: list[object], name: str, dtype: object) -> bool:
    """Section 7 for the lists and dicts of an object column, at any depth: every place (a dict key, a list's
    items) holds one kind of value, and a dict's keys are str. Arrow's inference would otherwise make them one,
    losing what told them apart: a datetime and a date at one place both a date (the time of day dropped), str
    and bytes both bytes, the keys b"a" and "a" one key (one value dropped). Integers and floats at one place are
    all doubles, as Arrow reads them (JSON's 10 and 10.5), unless an integer there is beyond 2**53, which a
    double would round. A set has no order, so as a list it would hash in the order of this process's string
    hashing: refused, as at the top. Missing values (None, NaN, NA, NaT) take any place. True when pandas' NA or
    NaT is among them (Arrow takes only None as a null inside a list or dict: :func:`_none_for_missing`)."""
    pandas_missing = False
    seen: dict[tuple[str, ...], tuple[str, object]] = {}
    floats: set[tuple[str, ...]] = set()
    big: dict[tuple[str, ...], object] = {}  # an integer beyond 2**53 at each place that has one
    hint = ""  # a tuple is seen before its items are: a (key, value) pair's mixed kinds get the map hint
    stack: list[tuple[object, tuple[str, ...]]] = [(v, ()) for v in present]
    while stack:
        value, place = stack.pop()
        if value is pd.NA or value is pd.NaT:
            pandas_missing = True
            continue
        if value is None:
            continue
        if isinstance(value, set | frozenset):
            msg = f"{_shown(name, place)!r} holds a {type(value).__name__}, which has no order; use a sorted list"
            raise _fail(name, dtype, msg)
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    msg = f"{_shown(name, place)!r} holds a dict whose key {key!r} is a {type(key).__name__}; dict "
                    raise _fail(name, dtype, msg + "keys must be str")
                stack.append((item, (*place, "." + key)))
            kind: str = "dict"
        elif isinstance(value, np.ndarray) and value.dtype.kind != "O":
            kind, items = "list", (*place, "[]")
            item = _ARRAY_KINDS.get(value.dtype.kind, str(value.dtype))
            if item in ("int", "float"):
                _number(value, item, items, floats, big)
            _same(seen, items, item, f"a numpy array of {value.dtype}", (name, dtype, hint))
        elif isinstance(value, list | tuple | np.ndarray):
            kind = "list"
            hint = hint or (_MAP_HINT if isinstance(value, tuple) else "")
            stack.extend((v, (*place, "[]")) for v in value)
        elif isinstance(value, float | np.floating) and np.isnan(value):
            kind = "float"  # NaN is a float's value here (the section 7 rules of a list's items), not a null
        else:
            kind = _kind(value)
        if kind in ("int", "float"):
            _number(value, kind, place, floats, big)
        _same(seen, place, kind, value, (name, dtype, hint))
    for place in floats & big.keys():
        msg = (
            f"{_shown(name, place)!r} holds floats and the integer {big[place]!r}, beyond 2**53: as the doubles Arrow "
            "makes of them all it would be rounded (section 7); make them one kind"
        )
        raise _fail(name, dtype, msg)
    return pandas_missing


def _none_for_missing(value: object) -> object:
    """``value`` with pandas' NA and NaT inside its lists and dicts made None, the null Arrow takes there."""
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, dict):
        return {k: _none_for_missing(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_none_for_missing(v) for v in value)
    if isinstance(value, list) or (isinstance(value, np.ndarray) and value.dtype.kind == "O"):
        return [_none_for_missing(v) for v in value]
    return value


def _number(
    value: object, kind: str, place: tuple[str, ...], floats: set[tuple[str, ...]], big: dict[tuple[str, ...], object]
) -> None:
    """Notes a float at ``place``, or an integer (a numpy array's: its extremes) beyond 2**53 in magnitude."""
    if kind == "float":
        floats.add(place)
        return
    if isinstance(value, np.ndarray):
        if value.size and (int(value.max()) > _EXACT or int(value.min()) < -_EXACT):
            big.setdefault(place, int(value.max()) if int(value.max()) > _EXACT else int(value.min()))
    elif abs(int(value)) > _EXACT:  # type: ignore[call-overload]
        big.setdefault(place, value)


#: The largest integer every smaller one of which a double holds exactly.
_EXACT = 2**53


def _shown(name: str, place: tuple[str, ...]) -> str:
    """A place as the error names it: ``c.k[]`` (a dict key's values, a list's items)."""
    return name + "".join(place)


def _same(
    seen: dict[tuple[str, ...], tuple[str, object]],
    place: tuple[str, ...],
    kind: str,
    value: object,
    where: tuple[str, object, str],
) -> None:
    """Records that ``place`` holds a ``kind`` (integers and floats alike are numbers); a second kind there is a
    HashError naming both (``where``: the column's name, its dtype, a hint to add)."""
    first = seen.setdefault(place, (kind, value))
    if first[0] != kind and {first[0], kind} != {"int", "float"}:
        name, dtype, hint = where
        msg = (
            f"{_shown(name, place)!r} holds values of more than one kind ({first[0]} {first[1]!r} and {kind} "
            f"{value!r}); a list's items and a dict key's values must be of one kind in every row, or Arrow would "
            "make them one"
        )
        raise _fail(name, dtype, f"{msg}. {hint}" if hint else msg)


def _column(series: pd.Series, name: str) -> pa.Array:
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        # A category is its values (section 7): the categories converted by the rules of their own dtype, then
        # taken by code; code -1 is a missing value, a null (astype to the categories' dtype would make it NaN in a
        # float column and fail in an integer one).
        codes = np.asarray(series.cat.codes)
        values = dtype.categories
        if values.dtype.kind == "O":
            # Categories of Python objects have no type but the one found from them (section 7: a Decimal's
            # precision, a dict's keys, a datetime's zone): found, as for an object column, from the categories
            # the rows use, since values a dictionary holds but no row uses play no part. Only when no row uses
            # any is the type that of all the categories (there is no other to take).
            present = codes >= 0
            used = np.flatnonzero(np.bincount(codes[present], minlength=len(values)))
            if 0 < len(used) < len(values):
                position = np.full(len(values), -1, dtype=np.int64)
                position[used] = np.arange(len(used))
                codes = np.where(present, position[np.where(present, codes, 0)], -1)
                values = values[used]
        categories = _column(pd.Series(values, dtype=values.dtype), name)
        return categories.take(pa.array(codes, mask=codes < 0))
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
        try:
            return pa.array(series)
        except pa.ArrowInvalid:
            # A fixed offset with seconds (UTC+00:00:30) Arrow refuses as a zone; section 5.3 hashes the instant,
            # which pandas holds as UTC: the same line in UTC.
            return pa.array(series.dt.tz_convert("UTC"))
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
        try:
            c.encode("utf-8")
        except UnicodeEncodeError:
            raise HashError(f"rows-v1 needs column names of valid Unicode; column {c!r} is not (section 4)") from None
    check_unique(names)
    if not names:
        # A table of no columns still has its rows, each the line {} (sections 3 and 9); from_arrays([]) would
        # have none, so the rows come from a column dropped again.
        return pa.table({"_": pa.nulls(len(frame))}).drop_columns(["_"])
    arrays = [_converted(frame.iloc[:, i], names[i]) for i in range(len(names))]
    return pa.Table.from_arrays(arrays, names=names)


def _converted(series: pd.Series, name: str) -> pa.Array:
    """:func:`_column`, any error of pandas, numpy or Arrow on the way a HashError naming the column and dtype."""
    try:
        return _column(series, name)
    except HashError:
        raise
    except UnicodeError as exc:
        msg = f"it holds a str that is not valid Unicode ({exc}); decode its bytes without surrogateescape"
        raise _fail(name, series.dtype, msg) from None
    except (pa.ArrowException, TypeError, ValueError, OverflowError, AttributeError) as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        raise _fail(name, series.dtype, f"its values have no rows-v1 type ({type(exc).__name__}: {first})") from exc
