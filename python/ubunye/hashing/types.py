"""rows-v1 type names of Arrow types and the schema string: section 7 of docs/rows-v1.md.

Every Arrow type is named here and only here; the encoders trust what this module accepted.
"""

from __future__ import annotations

import pyarrow as pa

from ubunye.exceptions import HashError
from ubunye.hashing.text import json_string


def _never(_t: pa.DataType) -> bool:
    return False


# The view types came with pyarrow 16; an older pyarrow has no such type, so no value of one can reach it.
_is_string_view = getattr(pa.types, "is_string_view", _never)
_is_binary_view = getattr(pa.types, "is_binary_view", _never)
_is_list_view = getattr(pa.types, "is_list_view", _never)
_is_large_list_view = getattr(pa.types, "is_large_list_view", _never)


def is_string(t: pa.DataType) -> bool:
    """Whether ``t`` is one of Arrow's string types (``string``, ``large_string``, ``string_view``): section 4.

    Example:
        >>> import pyarrow as pa
        >>> is_string(pa.large_string()), is_string(pa.binary())
        (True, False)
    """
    return pa.types.is_string(t) or pa.types.is_large_string(t) or _is_string_view(t)


def is_binary(t: pa.DataType) -> bool:
    """Whether ``t`` is one of Arrow's binary types (plain, large, view, fixed size): rows-v1 ``binary``.

    Example:
        >>> import pyarrow as pa
        >>> is_binary(pa.binary(4)), is_binary(pa.string())
        (True, False)
    """
    return (
        pa.types.is_binary(t) or pa.types.is_large_binary(t) or _is_binary_view(t) or pa.types.is_fixed_size_binary(t)
    )


def is_list_view(t: pa.DataType) -> bool:
    """Whether ``t`` is a ``list_view`` or ``large_list_view`` (pyarrow 16 and later), read slot by slot.

    Example:
        >>> import pyarrow as pa
        >>> is_list_view(pa.list_(pa.int64()))
        False
    """
    return _is_list_view(t) or _is_large_list_view(t)


def _where(path: str) -> str:
    return f"column {path!r}" if "." not in path and "[" not in path else f"field {path!r}"


def _unsupported(path: str, t: pa.DataType, why: str) -> HashError:
    return HashError(f"rows-v1 cannot hash {_where(path)} of type {t}: {why} (docs/rows-v1.md section 11)")


def check_unique(names: list[str], path: str = "") -> None:
    """Raise HashError naming the first duplicated column (or struct field) name."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            where = f"struct {path!r} has" if path else "the table has"
            msg = f"{where} two columns named {name!r}: rows-v1 needs unique names (docs/rows-v1.md section 2)"
            raise HashError(msg)
        seen.add(name)


def type_name(t: pa.DataType, path: str) -> str:
    """The rows-v1 name of an Arrow type, e.g. ``int64``, ``list<string>``, ``decimal(38,18)``.

    ``path`` names the column (``a``) or nested field (``a.b``, ``a[]``) for error messages.

    Example:
        >>> import pyarrow as pa
        >>> type_name(pa.list_(pa.timestamp("us", tz="UTC")), "c")
        'list<timestamp>'
    """
    if pa.types.is_dictionary(t):
        return type_name(t.value_type, path)
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_signed_integer(t):
        return f"int{t.bit_width}"
    if pa.types.is_unsigned_integer(t):
        raise _unsupported(
            path,
            t,
            "unsigned integers have no rows-v1 type; cast to a signed type wide enough",
        )
    if pa.types.is_float32(t):
        return "float32"
    if pa.types.is_float64(t):
        return "float64"
    if pa.types.is_floating(t):
        raise _unsupported(path, t, "half floats have no rows-v1 type; cast to float32")
    if is_string(t):
        return "string"
    if is_binary(t):
        return "binary"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    if pa.types.is_decimal(t):
        if t.precision > 38 or t.scale < 0 or t.scale > t.precision:
            raise _unsupported(
                path,
                t,
                "rows-v1 decimals have 1 <= precision <= 38 and 0 <= scale <= precision",
            )
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_map(t):
        key = type_name(t.key_type, path + "{key}")
        value = type_name(t.item_type, path + "{value}")
        return f"map<{key},{value}>"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or is_list_view(t):
        return f"list<{type_name(t.value_type, path + '[]')}>"
    if pa.types.is_struct(t):
        names = [t.field(i).name for i in range(t.num_fields)]
        check_unique(names, path)
        fields = {t.field(i).name: t.field(i).type for i in range(t.num_fields)}
        inner = ",".join(f"{json_string(n)}:{type_name(fields[n], f'{path}.{n}')}" for n in sorted(fields))
        return f"struct<{inner}>"
    if pa.types.is_null(t):
        raise _unsupported(path, t, "an all-null column has no type; give it one (e.g. cast to string)")
    if pa.types.is_duration(t) or pa.types.is_interval(t):
        raise _unsupported(path, t, "durations and intervals are not rows-v1 types")
    if pa.types.is_time(t):
        raise _unsupported(path, t, "time-of-day is not a rows-v1 type")
    raise _unsupported(path, t, "not a rows-v1 type")


def schema_string(schema: pa.Schema) -> str:
    """The rows-v1 schema string of an Arrow schema: ``struct<"name":type,...>`` sorted by code point.

    Example:
        >>> import pyarrow as pa
        >>> schema_string(pa.schema([("b", pa.string()), ("a", pa.int64())]))
        'struct<"a":int64,"b":string>'
    """
    names = list(schema.names)
    check_unique(names)
    types = {f.name: f.type for f in schema}
    return "struct<" + ",".join(f"{json_string(n)}:{type_name(types[n], n)}" for n in sorted(names)) + ">"
