"""rows-v1 type names (docs/rows-v1.md section 7): the only place where a type is named, for every engine.

- Arrow: :func:`type_name` and :func:`schema_string` name Arrow types (the encoders trust what they accepted;
  :func:`is_string`, :func:`is_binary` and :func:`is_list_view` tell them which Arrow types read alike).
- Spark: :func:`spark_type_name`, :func:`spark_columns` and :func:`spark_schema_string` name ``pyspark.sql.types``
  objects, and :func:`spark_type` builds one. No session or JVM is needed; pyspark is imported only then.
- Names as trees: :func:`parse_type` reads a name into a :data:`TypeTree` (:func:`parse_schema` a schema string),
  :func:`format_type` writes it back, :func:`arrow_type` and :func:`spark_type` build it, :func:`type_kinds`
  lists what it is made of.
- The port's ``(name, type name)`` columns: :func:`parse_columns`.
- :func:`check_unique` is the one check that column and struct field names are unique.

Example:
    >>> import pyarrow as pa
    >>> tree = parse_type('map<string,list<struct<"b":float32,"a":decimal(10,2)>>>')
    >>> tree
    ('map', 'string', ('list', ('struct', (('b', 'float32'), ('a', ('decimal', 10, 2))))))
    >>> format_type(tree)
    'map<string,list<struct<"a":decimal(10,2),"b":float32>>>'
    >>> spark_type(tree).simpleString()
    'map<string,array<struct<b:float,a:decimal(10,2)>>>'
    >>> spark_type_name(spark_type(tree), "m") == type_name(arrow_type(tree), "m") == format_type(tree)
    True
    >>> schema_string(pa.schema([("b", pa.string()), ("a", pa.int64())]))
    'struct<"a":int64,"b":string>'
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, TypeAlias

import pyarrow as pa

from ubunye.exceptions import HashError
from ubunye.hashing.text import json_string

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType

#: A parsed rows-v1 type name: a simple name (``"int64"``), or a tuple tagged with its kind.
TypeTree: TypeAlias = "str | ListTree | MapTree | StructTree | DecimalTree"
ListTree: TypeAlias = "tuple[Literal['list'], TypeTree]"
MapTree: TypeAlias = "tuple[Literal['map'], TypeTree, TypeTree]"
StructTree: TypeAlias = "tuple[Literal['struct'], tuple[tuple[str, TypeTree], ...]]"
DecimalTree: TypeAlias = "tuple[Literal['decimal'], int, int]"

# The rows-v1 types without parameters: the Arrow type each is built as, and the pyspark.sql.types classes it
# names (the first is the one it is built as; a class missing from an older pyspark cannot be in its schemas).
# Arrow types are named by kind in type_name, as Arrow has several of each (large_string, date64, units...).
_SIMPLE: dict[str, tuple[pa.DataType, tuple[str, ...]]] = {
    "int8": (pa.int8(), ("ByteType",)),
    "int16": (pa.int16(), ("ShortType",)),
    "int32": (pa.int32(), ("IntegerType",)),
    "int64": (pa.int64(), ("LongType",)),
    "float32": (pa.float32(), ("FloatType",)),
    "float64": (pa.float64(), ("DoubleType",)),
    "bool": (pa.bool_(), ("BooleanType",)),
    "string": (pa.string(), ("StringType", "CharType", "VarcharType")),  # any collation or length: the bytes count
    "binary": (pa.binary(), ("BinaryType",)),
    "date": (pa.date32(), ("DateType",)),
    "timestamp": (pa.timestamp("us", tz="UTC"), ("TimestampType",)),
    "timestamp_ntz": (pa.timestamp("us"), ("TimestampNTZType",)),
}
#: The rows-v1 float types: a profile counts the NaNs of their columns (section 12.1), and only theirs.
FLOAT_TYPES = ("float32", "float64")
_DECIMALS = "rows-v1 decimals have 1 <= precision <= 38 and 0 <= scale <= precision"


def _decimal_ok(precision: int, scale: int) -> bool:
    return 1 <= precision <= 38 and 0 <= scale <= precision


# --- unique names -------------------------------------------------------------------------------------------------


def check_unique(names: Iterable[str], column: str | None = None, path: str = "") -> None:
    """Raise HashError naming the first name given twice: the table's columns, or the fields of the struct at
    ``path`` in ``column`` (docs/rows-v1.md section 2).

    Example:
        >>> check_unique(["a", "b", "a"])
        Traceback (most recent call last):
        ubunye.exceptions.HashError: the table has two columns named 'a': rows-v1 needs unique names ...
        >>> check_unique(["x", "x"], "s", "s.t")
        Traceback (most recent call last):
        ubunye.exceptions.HashError: column 's' (field 's.t') is a struct with two fields named 'x': ...
    """
    seen: set[str] = set()
    for name in names:
        if name in seen:
            if column is None:
                where = f"the table has two columns named {name!r}"
            else:
                where = f"{_spark_where(column, path or column)} is a struct with two fields named {name!r}"
            raise HashError(f"{where}: rows-v1 needs unique names (docs/rows-v1.md section 2)")
        seen.add(name)


def _first(pair: tuple[str, object]) -> str:
    return pair[0]  # a name: str order is code point order, the order of columns and fields (section 7)


def _schema_text(columns: Iterable[tuple[str, str]]) -> str:
    """``struct<"name":type,...>`` of (name, type name) pairs already in code point order."""
    return "struct<" + ",".join(f"{json_string(n)}:{t}" for n, t in columns) + ">"


# --- Arrow types ----------------------------------------------------------------------------------------------------


def _never(_t: pa.DataType) -> bool:
    return False


# The view types came with pyarrow 16; an older pyarrow has no such type, so no value of one can reach it.
_is_string_view = getattr(pa.types, "is_string_view", _never)
_is_binary_view = getattr(pa.types, "is_binary_view", _never)
_is_list_view = getattr(pa.types, "is_list_view", _never)
_is_large_list_view = getattr(pa.types, "is_large_list_view", _never)


def is_string_view(t: pa.DataType) -> bool:
    """Whether ``t`` is Arrow's ``string_view`` (pyarrow 16 and later; always False before, which has no views).

    Example:
        >>> import pyarrow as pa
        >>> is_string_view(pa.string())
        False
    """
    return bool(_is_string_view(t))


def is_binary_view(t: pa.DataType) -> bool:
    """Whether ``t`` is Arrow's ``binary_view`` (pyarrow 16 and later; always False before, which has no views).

    Example:
        >>> import pyarrow as pa
        >>> is_binary_view(pa.binary())
        False
    """
    return bool(_is_binary_view(t))


def is_string(t: pa.DataType) -> bool:
    """Whether ``t`` is one of Arrow's string types (``string``, ``large_string``, ``string_view``): section 4.

    Example:
        >>> import pyarrow as pa
        >>> is_string(pa.large_string()), is_string(pa.binary())
        (True, False)
    """
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or _is_string_view(t))


def is_binary(t: pa.DataType) -> bool:
    """Whether ``t`` is one of Arrow's binary types (plain, large, view, fixed size): rows-v1 ``binary``.

    Example:
        >>> import pyarrow as pa
        >>> is_binary(pa.binary(4)), is_binary(pa.string())
        (True, False)
    """
    return bool(
        pa.types.is_binary(t) or pa.types.is_large_binary(t) or _is_binary_view(t) or pa.types.is_fixed_size_binary(t)
    )


def is_list_view(t: pa.DataType) -> bool:
    """Whether ``t`` is a ``list_view`` or ``large_list_view`` (pyarrow 16 and later), read slot by slot.

    Example:
        >>> import pyarrow as pa
        >>> is_list_view(pa.list_(pa.int64()))
        False
    """
    return bool(_is_list_view(t) or _is_large_list_view(t))


def _arrow_where(column: str, path: str) -> str:
    return f"column {column!r}" if path == column else f"field {path!r}"


def _unsupported(column: str, path: str, t: pa.DataType, why: str) -> HashError:
    where = _arrow_where(column, path)
    return HashError(f"rows-v1 cannot hash {where} of type {t}: {why} (docs/rows-v1.md section 11)")


def type_name(t: pa.DataType, column: str) -> str:
    """The rows-v1 name of the Arrow type of ``column``, e.g. ``int64``, ``list<string>``, ``decimal(38,18)``;
    a HashError names the column (or the nested field: ``a.b``, ``a[]``, ``a{key}``) and its type.

    Example:
        >>> import pyarrow as pa
        >>> type_name(pa.list_(pa.timestamp("us", tz="UTC")), "c")
        'list<timestamp>'
        >>> type_name(pa.struct([("u", pa.uint8())]), "c")
        Traceback (most recent call last):
        ubunye.exceptions.HashError: rows-v1 cannot hash field 'c.u' of type uint8: unsigned integers ...
    """
    return _arrow_name(t, column, column)


def _arrow_name(t: pa.DataType, column: str, path: str) -> str:
    if pa.types.is_dictionary(t):
        return _arrow_name(t.value_type, column, path)
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_signed_integer(t):
        return f"int{t.bit_width}"
    if pa.types.is_unsigned_integer(t):
        why = "unsigned integers have no rows-v1 type; cast to a signed type wide enough"
        raise _unsupported(column, path, t, why)
    if pa.types.is_float32(t):
        return "float32"
    if pa.types.is_float64(t):
        return "float64"
    if pa.types.is_floating(t):
        raise _unsupported(column, path, t, "half floats have no rows-v1 type; cast to float32")
    if is_string(t):
        return "string"
    if is_binary(t):
        return "binary"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    if pa.types.is_decimal(t):
        if not _decimal_ok(t.precision, t.scale):
            raise _unsupported(column, path, t, _DECIMALS)
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_map(t):
        key = _arrow_name(t.key_type, column, path + "{key}")
        return f"map<{key},{_arrow_name(t.item_type, column, path + '{value}')}>"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or is_list_view(t):
        return f"list<{_arrow_name(t.value_type, column, path + '[]')}>"
    if pa.types.is_struct(t) and _is_spark_variant(t):
        why = "a Spark variant (Arrow: its metadata and value bytes) is not a rows-v1 type; make it text (to_json)"
        raise _unsupported(column, path, t, why)
    if pa.types.is_struct(t):
        fields = [(t.field(i).name, t.field(i).type) for i in range(t.num_fields)]
        check_unique([n for n, _ in fields], column, path)
        return _schema_text((n, _arrow_name(ft, column, f"{path}.{n}")) for n, ft in sorted(fields, key=_first))
    if pa.types.is_null(t):
        raise _unsupported(column, path, t, "an all-null column has no type; give it one (e.g. cast to string)")
    if pa.types.is_duration(t) or pa.types.is_interval(t):
        raise _unsupported(column, path, t, "durations and intervals are not rows-v1 types")
    if pa.types.is_time(t):
        raise _unsupported(column, path, t, "time-of-day is not a rows-v1 type")
    raise _unsupported(column, path, t, "not a rows-v1 type")


def _is_spark_variant(t: pa.StructType) -> bool:
    """Spark's Arrow export of a ``variant`` (``df.toArrow()``): a struct whose binary fields carry the field
    metadata ``variant: true``. Section 11 refuses variant; as a struct of two binaries it would be hashed."""
    return any((t.field(i).metadata or {}).get(b"variant") == b"true" for i in range(t.num_fields))


def _spark_refused(node: object, path: str) -> tuple[str, str] | None:
    """The path inside a column (``""``, ``.f``, ``[]``, ``{key}``) and the name of the first refused type."""
    if isinstance(node, str):
        return (path, node) if node == "variant" or node.startswith("interval") else None
    if not isinstance(node, dict):
        return None
    kind = node.get("type")
    if kind == "struct" and isinstance(node.get("fields"), list):
        inner = (
            _spark_refused(f.get("type"), f"{path}.{f.get('name')}") for f in node["fields"] if isinstance(f, dict)
        )
        return next((found for found in inner if found), None)
    if kind == "array":
        return _spark_refused(node.get("elementType"), path + "[]")
    if kind == "map":
        return _spark_refused(node.get("keyType"), path + "{key}") or _spark_refused(
            node.get("valueType"), path + "{value}"
        )
    return None


def spark_declared_refusal(schema_json: str | bytes | None) -> str | None:
    """Words naming the first column a Spark schema declares as a type rows-v1 refuses (section 11) and that other
    readers take for another type, else None: a ``variant`` (pyarrow, pandas and polars read its binary encoding
    as a struct of two binaries) or an interval (read as an integer). ``schema_json`` is Spark's schema as JSON: a
    Spark parquet file's ``org.apache.spark.sql.parquet.row.metadata``, or a Delta log's schema.

    Spark refuses these columns when it hashes them; read by another engine they would be hashed as the struct
    or integer they are stored as, where the same table on Spark has no hash.

    Example:
        >>> spark_declared_refusal('{"type":"struct","fields":[{"name":"v","type":"variant"}]}')
        "column 'v' is a Spark variant"
        >>> spark_declared_refusal('{"type":"struct","fields":[{"name":"s","type":{"type":"array",'
        ...                        '"elementType":"interval day"}}]}')
        "column 's' holds a Spark interval day (at s[])"
        >>> spark_declared_refusal('{"type":"struct","fields":[{"name":"i","type":"long"}]}') is None
        True
    """
    import json

    if schema_json is None:
        return None
    try:
        schema = json.loads(schema_json)
    except (ValueError, RecursionError):  # not Spark's schema after all: nothing it declares
        return None
    fields = schema.get("fields") if isinstance(schema, dict) else None
    for f in fields if isinstance(fields, list) else []:
        found = _spark_refused(f.get("type"), "") if isinstance(f, dict) else None
        if found:
            name, (where, kind) = str(f.get("name")), found
            return (
                f"column {name!r} is a Spark {kind}"
                if not where
                else f"column {name!r} holds a Spark {kind} (at {name}{where})"
            )
    return None


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
    return _schema_text((n, type_name(types[n], n)) for n in sorted(names))


def arrow_type(tree: TypeTree) -> pa.DataType:
    """The Arrow type a rows-v1 type tree is built as (timestamps: microseconds, UTC for ``timestamp``).

    Example:
        >>> arrow_type(parse_type("map<string,decimal(10,2)>"))
        MapType(map<string, decimal128(10, 2)>)
    """
    if isinstance(tree, str):
        return _SIMPLE[tree][0]
    if tree[0] == "list":
        return pa.list_(arrow_type(tree[1]))
    if tree[0] == "map":
        return pa.map_(arrow_type(tree[1]), arrow_type(tree[2]))
    if tree[0] == "decimal":
        return pa.decimal128(tree[1], tree[2])
    return pa.struct([(n, arrow_type(t)) for n, t in tree[1]])


# --- Spark types ----------------------------------------------------------------------------------------------------


@functools.cache
def _spark_simple() -> dict[type[DataType], str]:
    from pyspark.sql import types as T

    return {getattr(T, c): name for name, (_, classes) in _SIMPLE.items() for c in classes if hasattr(T, c)}


def _spark_where(column: str, path: str) -> str:
    return f"column {column!r}" + (f" (field {path!r})" if path != column else "")


def spark_type_name(t: DataType, column: str) -> str:
    """The rows-v1 name of the Spark type of ``column``; a HashError names the column, the field and the type.

    Example:
        >>> from pyspark.sql import types as T
        >>> spark_type_name(T.ArrayType(T.VarcharType(8)), "c")
        'list<string>'
        >>> spark_type_name(T.StructType([T.StructField("i", T.DayTimeIntervalType())]), "c")
        Traceback (most recent call last):
        ubunye.exceptions.HashError: rows-v1 cannot hash column 'c' (field 'c.i') of Spark type interval day ...
    """
    return _spark_name(t, column, column)


def _spark_name(t: DataType, column: str, path: str) -> str:
    from pyspark.sql import types as T

    if isinstance(t, T.DecimalType) and _decimal_ok(t.precision, t.scale):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, T.ArrayType):
        return f"list<{_spark_name(t.elementType, column, path + '[]')}>"
    if isinstance(t, T.MapType):
        key = _spark_name(t.keyType, column, path + "{key}")
        return f"map<{key},{_spark_name(t.valueType, column, path + '{value}')}>"
    if isinstance(t, T.StructType):
        check_unique(t.names, column, path)
        fields = sorted(((f.name, f.dataType) for f in t.fields), key=_first)
        return _schema_text((n, _spark_name(ft, column, f"{path}.{n}")) for n, ft in fields)
    simple = _spark_simple()
    name = next((simple[c] for c in type(t).__mro__ if c in simple), None)
    if name is None:
        where = _spark_where(column, path)
        msg = f"rows-v1 cannot hash {where} of Spark type {t.simpleString()} (docs/rows-v1.md sections 7 and 11)"
        raise HashError(msg)
    return name


def spark_identifier(name: str) -> str:
    """A column name as a Spark SQL identifier: backticks, a backtick in it doubled (dots, unicode stay as they are).

    Example:
        >>> spark_identifier("a.b`c")
        '`a.b``c`'
    """
    return "`" + name.replace("`", "``") + "`"


def spark_columns(schema: StructType) -> tuple[tuple[str, str], ...]:
    """``(name, rows-v1 type name)`` of every column of a Spark schema, in code point order of the names.

    Example:
        >>> from pyspark.sql import types as T
        >>> spark_columns(T.StructType([T.StructField("b", T.FloatType()), T.StructField("a", T.DateType())]))
        (('a', 'date'), ('b', 'float32'))
    """
    check_unique(schema.names)
    return tuple((f.name, spark_type_name(f.dataType, f.name)) for f in sorted(schema.fields, key=lambda f: f.name))


def spark_schema_string(schema: StructType) -> str:
    """The rows-v1 schema string (section 7) of a Spark schema; HashError names a bad column and its type.

    Example:
        >>> from pyspark.sql import types as T
        >>> fields = [T.StructField("b", T.StringType()), T.StructField("a", T.IntegerType())]
        >>> spark_schema_string(T.StructType(fields))
        'struct<"a":int32,"b":string>'
    """
    return _schema_text(spark_columns(schema))


def spark_type(tree: TypeTree) -> DataType:
    """The Spark type a rows-v1 type tree is built as (every field and element nullable).

    Example:
        >>> spark_type(parse_type("list<timestamp_ntz>")).simpleString()
        'array<timestamp_ntz>'
    """
    from pyspark.sql import types as T

    if isinstance(tree, str):
        built: DataType = getattr(T, _SIMPLE[tree][1][0])()
        return built
    if tree[0] == "list":
        return T.ArrayType(spark_type(tree[1]))
    if tree[0] == "map":
        return T.MapType(spark_type(tree[1]), spark_type(tree[2]))
    if tree[0] == "decimal":
        return T.DecimalType(tree[1], tree[2])
    return T.StructType([T.StructField(n, spark_type(t)) for n, t in tree[1]])


# --- names as trees -------------------------------------------------------------------------------------------------


def parse_type(name: str) -> TypeTree:
    """Parse a rows-v1 type name into a tree; ValueError saying where the name stops making sense.

    Struct fields keep the order they are given in; :func:`format_type` writes them in code point order.

    Example:
        >>> parse_type('list<struct<"m":map<string,int64>>>')
        ('list', ('struct', (('m', ('map', 'string', 'int64')),)))
        >>> parse_type("decimal(39,2)")
        Traceback (most recent call last):
        ValueError: decimal(39,2) is not a rows-v1 type: rows-v1 decimals have 1 <= precision <= 38 and ...
    """
    tree, rest = _parse(name)
    if rest:
        raise ValueError(f"trailing text {rest!r} after type in {name!r}")
    return tree


def _parse(s: str) -> tuple[TypeTree, str]:
    if s.startswith("list<"):
        inner, rest = _parse(s[5:])
        return ("list", inner), _expect(rest, ">")
    if s.startswith("map<"):
        key, rest = _parse(s[4:])
        value, rest = _parse(_expect(rest, ","))
        return ("map", key, value), _expect(rest, ">")
    if s.startswith("struct<"):
        rest = s[7:]
        fields: list[tuple[str, TypeTree]] = []
        while not rest.startswith(">"):
            if fields:
                rest = _expect(rest, ",")
            try:
                fname, end = json.JSONDecoder().raw_decode(rest)
            except json.JSONDecodeError:
                fname, end = None, 0
            if not isinstance(fname, str):
                raise ValueError(f"expected a quoted field name at {rest!r}")
            ftype, rest = _parse(_expect(rest[end:], ":"))
            fields.append((fname, ftype))
        return ("struct", tuple(fields)), rest[1:]
    m = re.match(r"decimal\((\d+),(\d+)\)", s)
    if m:
        p, sc = int(m.group(1)), int(m.group(2))
        if not _decimal_ok(p, sc):
            raise ValueError(f"decimal({p},{sc}) is not a rows-v1 type: {_DECIMALS}")
        return ("decimal", p, sc), s[m.end() :]
    m = re.match(r"[a-z0-9_]+", s)
    if not m or m.group(0) not in _SIMPLE:
        raise ValueError(f"unknown rows-v1 type at {s!r}")
    return m.group(0), s[m.end() :]


def _expect(s: str, token: str) -> str:
    if not s.startswith(token):
        raise ValueError(f"expected {token!r} at {s!r}")
    return s[len(token) :]


def parse_schema(schema: str) -> tuple[tuple[str, TypeTree], ...]:
    """The columns of a rows-v1 schema string (section 7) as ``(name, tree)``; ValueError unless it is one.

    Example:
        >>> parse_schema('struct<"id":int64,"at":date>')
        (('id', 'int64'), ('at', 'date'))
    """
    tree = parse_type(schema)
    if isinstance(tree, str) or tree[0] != "struct":
        raise ValueError(f"a schema string is a struct<...>, not {schema!r}")
    return tree[1]


def format_type(tree: TypeTree) -> str:
    """The rows-v1 name of a type tree, as section 7 writes it (struct fields in code point order): the
    inverse of :func:`parse_type`.

    Example:
        >>> format_type(("struct", (("b", "int8"), ("a", ("list", "date")))))
        'struct<"a":list<date>,"b":int8>'
    """
    if isinstance(tree, str):
        return tree
    if tree[0] == "list":
        return f"list<{format_type(tree[1])}>"
    if tree[0] == "map":
        return f"map<{format_type(tree[1])},{format_type(tree[2])}>"
    if tree[0] == "decimal":
        return f"decimal({tree[1]},{tree[2]})"
    return _schema_text((n, format_type(t)) for n, t in sorted(tree[1], key=_first))


def type_kinds(tree: TypeTree) -> set[str]:
    """Every kind a type tree is made of: its simple names and ``list``, ``map``, ``struct``, ``decimal``.

    Example:
        >>> sorted(type_kinds(parse_type('list<struct<"a":decimal(5,2),"b":timestamp>>')))
        ['decimal', 'list', 'struct', 'timestamp']
    """
    if isinstance(tree, str):
        return {tree}
    if tree[0] == "decimal":
        return {"decimal"}
    if tree[0] == "struct":
        return {"struct"}.union(*(type_kinds(t) for _, t in tree[1]))
    return {tree[0]}.union(*(type_kinds(t) for t in tree[1:]))


# --- the port's names -----------------------------------------------------------------------------------------------


def parse_columns(columns: Iterable[tuple[str, str]]) -> list[tuple[str, str, TypeTree]]:
    """Columns given as ``(name, rows-v1 type name)`` (the port's schema) as ``(name, type name, tree)``; a
    HashError names a column given twice, or a column and its type name when that is not a rows-v1 type.

    Example:
        >>> parse_columns([("id", "int64"), ("tags", "list<string>")])
        [('id', 'int64', 'int64'), ('tags', 'list<string>', ('list', 'string'))]
        >>> parse_columns([("n", "integer")])
        Traceback (most recent call last):
        ubunye.exceptions.HashError: rows-v1 cannot hash column 'n' of type 'integer': not a rows-v1 type name ...
    """
    given = list(columns)
    check_unique(name for name, _ in given)
    out = []
    for name, tname in given:
        try:
            out.append((name, tname, parse_type(tname)))
        except ValueError as exc:
            msg = f"rows-v1 cannot hash column {name!r} of type {tname!r}: not a rows-v1 type name ({exc})"
            raise HashError(msg) from None
    return out


__all__ = [
    "FLOAT_TYPES",
    "DecimalTree",
    "ListTree",
    "MapTree",
    "StructTree",
    "TypeTree",
    "arrow_type",
    "check_unique",
    "format_type",
    "is_binary",
    "is_binary_view",
    "is_list_view",
    "is_string",
    "is_string_view",
    "parse_columns",
    "parse_schema",
    "parse_type",
    "schema_string",
    "spark_columns",
    "spark_identifier",
    "spark_schema_string",
    "spark_type",
    "spark_type_name",
    "type_kinds",
    "type_name",
]
