"""What the Spark engine checks before it writes into an existing table (a catalog table, or Delta at a path).

Spark's own writers take what the record would not describe: an overwrite of a parquet catalog table drops it
before the new data is written (a failed job leaves no table), an append casts a double into an int column or
pads text into a CHAR(5) one, and stores a column named in another case under the table's name. The record
hashes the frame: each of these is refused before anything is written, naming the output, the table and the
column. (A Delta table's column the frame lacks is left to Delta, which fills it: see check_same_columns.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ubunye.config import IOConfig
from ubunye.exceptions import EngineError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

#: Where Spark keeps a CHAR or VARCHAR column's declared type (the column itself reads as a string).
_CHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"


#: Providers whose overwrite replaces the table in one commit (a failed write leaves the previous version).
_ATOMIC = ("delta", "iceberg")


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


def check_catalog_write(spark: SparkSession, frame: DataFrame, io: IOConfig) -> str | None:
    """Raise EngineError when writing ``frame`` to the catalog table of ``io`` would lose the table's data or
    store other rows than the frame's; else the format to write it in (the existing table's, so that a write
    without ``format`` does not replace a Delta table by the session's default source), None for a new table."""
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
    if io.mode == "append":
        delta = provider == "delta"  # a generated or identity column of a Delta table is Delta's to fill
        merge = delta and _merge_schema(spark, io)
        table = spark.table(io.table).schema
        check_same_columns(io, f"the catalog table {io.table}", table, frame.schema, new_columns=merge, delta=delta)
    return provider or None


def check_delta_append(spark: SparkSession, frame: DataFrame, io: IOConfig, where: str) -> None:
    """Raise EngineError when a Delta append to ``where`` would store other rows than the frame's (see
    :func:`check_same_columns`); a path that holds no Delta table yet takes any frame. With ``mergeSchema``, new
    columns of the frame are the table's next ones (the frame's rows are stored as they are)."""
    try:
        existing = spark.read.format("delta").load(where).schema
    except Exception:  # no table there yet (or none Spark can read, which the write itself then says)
        return
    merge = _merge_schema(spark, io)
    check_same_columns(io, f"the Delta table at {where}", existing, frame.schema, new_columns=merge, delta=True)


def check_same_columns(
    io: IOConfig, what: str, table: StructType, frame: StructType, *, new_columns: bool = False, delta: bool = False
) -> None:
    """Raise EngineError naming the first column the table and the frame do not share exactly: a name only one
    has (or has in another case), a type that differs (Spark would cast the value), a CHAR column (Spark pads
    the text). ``new_columns``: the frame may have columns the table lacks (they are added to it). ``delta``: a
    column of the table the frame lacks is Delta's to fill (a generated or identity column, a default, else
    null; Spark's read of the table does not say which), unless the frame names it in another case."""
    theirs = {f.name: f for f in table.fields}
    ours = {f.name: f for f in frame.fields}
    why = None
    extra = [n for n in ours if n not in theirs]
    missing = [n for n in theirs if n not in ours]
    if delta:
        missing = [n for n in missing if any(e.lower() == n.lower() for e in extra)]
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
