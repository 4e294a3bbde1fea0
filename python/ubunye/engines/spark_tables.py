"""What the Spark engine checks before it writes into an existing table (a catalog table, or Delta at a path).

Spark's own writers take what the record would not describe: an overwrite of a parquet catalog table drops it
before the new data is written (a failed job leaves no table), an append casts a double into an int column or
pads text into a CHAR(5) one, and stores a column named in another case under the table's name. The record
hashes the frame: each of these is refused before anything is written, naming the output, the table and the
column. A Delta table's column the frame lacks is Delta's to fill only when its log says so (generated, identity
or default); else it would be stored as null, and is refused like any other (see check_same_columns).

What needs no frame (a view, another provider than the config's format, a non-atomic overwrite) is
:func:`check_catalog_target`, which the engine's ``check_output`` runs before the task reads anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ubunye.config import IOConfig
from ubunye.exceptions import EngineError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

#: Where Spark keeps a CHAR or VARCHAR column's declared type (the column itself reads as a string).
_CHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"


#: Providers whose overwrite replaces the table in one commit (a failed write leaves the previous version).
_ATOMIC = ("delta", "iceberg")

#: Field metadata by which a Delta log marks a column Delta fills when a write leaves it out: a generated
#: column, an identity column, a column default (the protocol's and Spark's own keys).
_FILLED_KEYS = ("delta.generationExpression", "delta.identity.", "CURRENT_DEFAULT")


def catalog_provider(spark: SparkSession, table: str) -> str | None:
    """The provider of the catalog table ``table`` (``delta``, ``parquet``, ``hive``...), ``view`` for a view,
    "" when the catalog does not say, None when there is no such table."""
    if not spark.catalog.tableExists(table):
        return None
    try:
        found = spark.catalog.getTable(table)
        if found.isTemporary or str(found.tableType).upper() in ("VIEW", "TEMPORARY"):
            return "view"
    except Exception:  # a name getTable does not parse (delta.`/path`): DESCRIBE says the rest
        pass
    details = False  # the columns come first, and one may be named Provider or Type: read the details only
    facts: dict[str, str] = {}
    for row in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect():
        name = str(row[0]).strip()
        if name == "# Detailed Table Information":
            details = True
        elif details and name in ("Provider", "Type"):
            facts.setdefault(name, str(row[1]).strip().lower())
    if "view" in facts.get("Type", ""):
        return "view"
    provider = facts.get("Provider", "")
    if not provider:  # a catalog that does not say: Delta says so itself
        try:
            fmt = spark.sql(f"DESCRIBE DETAIL {table}").select("format").first()
            provider = str(fmt[0]).strip().lower() if fmt is not None and fmt[0] else ""
        except Exception:  # not a Delta table
            provider = ""
    return provider


def _merge_schema(spark: SparkSession, io: IOConfig) -> bool:
    """Whether a Delta append adds the frame's new columns: the option (any case, as Spark reads option names) or
    the session's automatic schema merge."""
    option = next((v for k, v in io.options.items() if str(k).lower() == "mergeschema"), None)
    if option is not None:
        return str(option).strip().lower() == "true"
    try:
        auto = spark.conf.get("spark.databricks.delta.schema.autoMerge.enabled", "false")
    except Exception:
        auto = "false"
    return str(auto).strip().lower() == "true"


def check_catalog_target(spark: SparkSession, io: IOConfig) -> str | None:
    """Raise EngineError when the catalog table of ``io`` cannot be written as the config asks, whatever the
    frame: a view, a table of another provider than ``format``, an overwrite of a table whose provider does not
    replace it in one commit. Else its provider ("" when the catalog does not say), None for a new table."""
    assert io.table is not None
    provider = catalog_provider(spark, io.table)
    if provider is None:
        return None
    if provider == "view":
        raise EngineError(f"output {io.name!r}: {io.table} is a view, not a table: a view cannot be written")
    if io.format is not None and provider and io.format.lower() != provider:
        msg = f"output {io.name!r}: the catalog table {io.table} is {provider}, but the config says format "
        msg += f"{io.format}: Spark would replace the table or refuse mid-write; give format: {provider}, or none"
        raise EngineError(msg)
    if io.mode == "overwrite" and provider not in _ATOMIC:
        msg = f"output {io.name!r}: cannot overwrite the {provider or 'non-Delta'} catalog table {io.table} safely: "
        msg += "Spark drops or empties it before the new data is written, so a failed write leaves no data. Make "
        msg += "it a Delta table (its log commits each version atomically), or write to a path"
        raise EngineError(msg)
    return provider


def check_catalog_write(spark: SparkSession, frame: DataFrame, io: IOConfig) -> str | None:
    """Raise EngineError when writing ``frame`` to the catalog table of ``io`` would lose the table's data or
    store other rows than the frame's; else the format to write it in (the existing table's, so that a write
    without ``format`` does not replace a Delta table by the session's default source), None for a new table."""
    assert io.table is not None
    provider = check_catalog_target(spark, io)
    if provider is None:
        return None
    delta = provider == "delta"
    if io.mode == "append" or (delta and not _overwrite_schema(io)):  # a Delta overwrite keeps the schema too
        merge = delta and _merge_schema(spark, io)
        filled = _delta_filled(_catalog_location(spark, io.table), io.storage_options) if delta else frozenset()
        table = spark.table(io.table).schema
        what = f"the catalog table {io.table}"
        check_same_columns(io, what, table, frame.schema, new_columns=merge, filled=filled)
    return provider or None


def _catalog_location(spark: SparkSession, table: str) -> str | None:
    """Where a Delta catalog table's files are (``DESCRIBE DETAIL``), None when Delta does not say."""
    try:
        found = spark.sql(f"DESCRIBE DETAIL {table}").select("location").first()
    except Exception:  # a catalog Delta cannot describe: the caller then cannot read the log
        return None
    return str(found[0]) if found is not None and found[0] else None


def _delta_filled(where: str | None, storage_options: Mapping[str, Any]) -> frozenset[str] | None:
    """The columns of the Delta table at ``where`` that Delta fills when a write leaves them out, as its log
    says (:data:`_FILLED_KEYS`); None when the log cannot be read here (deltalake cannot open every location
    Spark can, ``dbfs:`` for one). Spark's read of the table drops this metadata, so the log is read."""
    if where is None:
        return None
    try:
        from deltalake import DeltaTable

        from ubunye.hashing.delta_hash import table_location

        options = {str(k): str(v) for k, v in storage_options.items()} or None
        fields = DeltaTable(table_location(where), storage_options=options).schema().fields
    except Exception:  # no deltalake, a location or table feature it cannot read: unknown, as Spark's read is
        return None
    marked = (f.name for f in fields if any(str(k).startswith(_FILLED_KEYS) for k in (f.metadata or {})))
    return frozenset(marked)


def _overwrite_schema(io: IOConfig) -> bool:
    """Whether a Delta overwrite replaces the table's schema by the frame's (``overwriteSchema``, any case): not
    with ``replaceWhere``, which Delta then ignores it for (WriteIntoDelta's canOverwriteSchema)."""
    names = {str(k).lower(): v for k, v in io.options.items()}
    option = names.get("overwriteschema")
    return option is not None and str(option).strip().lower() == "true" and "replacewhere" not in names


def check_delta_append(spark: SparkSession, frame: DataFrame, io: IOConfig, where: str) -> None:
    """Raise EngineError when a Delta write to ``where`` would store other rows than the frame's (see
    :func:`check_same_columns`); a path that holds no Delta table yet takes any frame. With ``mergeSchema``, new
    columns of the frame are the table's next ones (the frame's rows are stored as they are). An overwrite keeps
    the table's schema as an append does (a column the frame lacks stays, as nulls), unless ``overwriteSchema``
    replaces it by the frame's."""
    if io.mode != "append" and _overwrite_schema(io):
        return
    try:
        existing = spark.read.format("delta").load(where).schema
    except Exception:  # no table there yet (or none Spark can read, which the write itself then says)
        return
    merge = _merge_schema(spark, io)
    filled = _delta_filled(where, io.storage_options)
    what = f"the Delta table at {where}"
    check_same_columns(io, what, existing, frame.schema, new_columns=merge, filled=filled)


def check_same_columns(
    io: IOConfig,
    what: str,
    table: StructType,
    frame: StructType,
    *,
    new_columns: bool = False,
    filled: frozenset[str] | None = frozenset(),
) -> None:
    """Raise EngineError naming the first column the table and the frame do not share exactly: a name only one
    has (or has in another case), a type that differs (Spark would cast the value), a CHAR column (Spark pads
    the text). ``new_columns``: the frame may have columns the table lacks (they are added to it). ``filled``:
    the table's columns the frame may lack because Delta fills them (generated, identity, default); None when
    that is not known (a Delta log that could not be read): then any, unless the frame names it in another case.

    Example:
        >>> from pyspark.sql.types import LongType, StructField, StructType
        >>> t = StructType([StructField("a", LongType()), StructField("g", LongType())])
        >>> check_same_columns(IOConfig("o"), "t", t, StructType(t.fields[:1]), filled=frozenset({"g"}))
        >>> check_same_columns(IOConfig("o"), "t", t, StructType(t.fields[:1]))
        Traceback (most recent call last):
        ubunye.exceptions.EngineError: output 'o': cannot write to t: its column 'g' is not in the ...
    """
    theirs = {f.name: f for f in table.fields}
    ours = {f.name: f for f in frame.fields}
    why = None
    extra = [n for n in ours if n not in theirs]
    missing = [n for n in theirs if n not in ours]
    renamed = {n for n in missing if any(e.lower() == n.lower() for e in extra)}
    missing = [n for n in missing if n in renamed or (filled is not None and n not in filled)]
    if missing:
        cased = [n for n in extra if n.lower() == missing[0].lower()]
        why = f"its column {missing[0]!r} is not in the frame"
        why += f" (the frame names it {cased[0]!r})" if cased else " (it would be stored as null)"
    elif extra and not new_columns:
        why = f"the frame's column {extra[0]!r} is not one of its columns"
    else:
        for name, field in ((n, f) for n, f in theirs.items() if n in ours):
            declared = str(field.metadata.get(_CHAR_KEY, ""))
            if declared.lower().startswith("char"):
                why = f"its column {name!r} is {declared}, which Spark pads with spaces"
            elif not _takes(field.dataType, ours[name].dataType, new_columns):
                why = f"its column {name!r} is {field.dataType.simpleString()} but the frame's is "
                why += f"{ours[name].dataType.simpleString()} (Spark would cast the values)"
            if why:
                break
    if why is None:
        return
    msg = f"output {io.name!r}: cannot write to {what}: {why}, so the rows stored would not be the frame the "
    msg += "record hashes. Nothing was written: make the frame's columns and types the table's"
    if io.mode != "append":
        msg += " (or, on a Delta table, give the option overwriteSchema: true to replace its schema by the frame's)"
    raise EngineError(msg)


def _takes(table: DataType, frame: DataType, new_fields: bool) -> bool:
    """Whether values of the frame's type are stored as they are in a column of the table's type: the same type,
    nullability aside; with a schema merge (``new_fields``), structs may gain fields at any depth."""
    from pyspark.sql import types as T

    if new_fields and isinstance(table, T.StructType) and isinstance(frame, T.StructType):
        mine = {f.name: f.dataType for f in frame.fields}
        return all(f.name in mine and _takes(f.dataType, mine[f.name], True) for f in table.fields)
    if new_fields and isinstance(table, T.ArrayType) and isinstance(frame, T.ArrayType):
        return _takes(table.elementType, frame.elementType, True)
    if new_fields and isinstance(table, T.MapType) and isinstance(frame, T.MapType):
        return _takes(table.keyType, frame.keyType, True) and _takes(table.valueType, frame.valueType, True)
    return table.simpleString() == frame.simpleString()
