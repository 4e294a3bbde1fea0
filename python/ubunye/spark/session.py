"""Sessions and the ubunye SQL functions: configuring a builder, registering in a running session, checking.

Example:
    >>> from ubunye.spark.session import EXTENSIONS
    >>> EXTENSIONS
    'ubunye.spark.UbunyeExtensions'
    >>> from ubunye.spark.session import FUNCTIONS
    >>> FUNCTIONS[2:]
    ('ubunye_profile_v1', 'ubunye_bucket_v1')
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ubunye.exceptions import JarNotFoundError
from ubunye.spark.jars import HOW_TO_BUILD, jar_path
from ubunye.spark.lines import session_target

if TYPE_CHECKING:
    from py4j.java_gateway import JavaClass
    from pyspark.sql import SparkSession

_T = TypeVar("_T")

FUNCTION = "ubunye_rows_v1"
# Every SQL function of the jar (ubunye.spark.UbunyeFunctions). require() checks them all, so a jar older than
# profile-v1 (docs/rows-v1.md section 12.3) is refused by name at session start, not at its first profile query.
FUNCTIONS = (FUNCTION, "ubunye_canonical_line", "ubunye_profile_v1", "ubunye_bucket_v1")
EXTENSIONS = "ubunye.spark.UbunyeExtensions"


class JarWarning(UserWarning):
    """The session has a ubunye jar whose functions cannot run here; hash_frame uses the jar-free path."""


def configure(
    builder: SparkSession.Builder, spark_version: str | None = None, scala_version: str | None = None
) -> SparkSession.Builder:
    """Add the jar (``spark.jars``) and the extensions (``spark.sql.extensions``) to a session builder.

    The jar is the one for the pyspark installed here (``jar_path()``, read before the JVM starts), or for
    ``spark_version`` / ``scala_version`` when given. Keeps jars and extensions the builder already has.
    Call it before ``getOrCreate()``: both confs are read when the session starts (Spark 3.5 needs
    ``spark.sql.extensions``; Spark 4 would also find the extension from ``spark.jars`` alone).

    Example:
        >>> from pyspark.sql import SparkSession  # doctest: +SKIP
        >>> spark = configure(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
    """
    jar = str(jar_path(spark_version, scala_version))
    options = getattr(builder, "_options", {})  # what the builder was given so far (pyspark keeps it here)
    jars = [j for j in str(options.get("spark.jars", "")).split(",") if j]
    extensions = [e for e in str(options.get("spark.sql.extensions", "")).split(",") if e]
    if jar not in jars:
        jars.append(jar)
    if EXTENSIONS not in extensions:
        extensions.append(EXTENSIONS)
    return builder.config("spark.jars", ",".join(jars)).config("spark.sql.extensions", ",".join(extensions))


def is_registered(spark: SparkSession) -> bool:
    """True when the session knows ``ubunye_rows_v1`` (works on Spark Connect too)."""
    return bool(spark.catalog.functionExists(FUNCTION))


def _jvm_class(spark: SparkSession, name: str) -> JavaClass | None:
    """``ubunye.spark.<name>`` through py4j, or None when no such class is on the session's classpath."""
    from py4j.java_gateway import JavaClass

    jvm = spark._jvm
    if jvm is None:  # a session without py4j
        return None
    cls = getattr(jvm.ubunye.spark, name)  # py4j gives a JavaPackage for a class it cannot find
    return cls if isinstance(cls, JavaClass) else None


def diagnose(spark: SparkSession) -> str | None:
    """What keeps the ubunye jar of a classic session from working, or None when nothing does (or when it
    cannot be told: Spark Connect). Tells "no jar" from "the jar of another Spark line or Scala"."""
    if getattr(spark, "_jvm", None) is None:
        return None
    target = session_target(spark)
    info = _jvm_class(spark, "JarInfo")
    if info is None:
        try:
            wanted = target.jar_name
        except JarNotFoundError as exc:
            return str(exc)
        if _jvm_class(spark, "UbunyeFunctions") is not None:
            return (
                "the ubunye jar on this session's classpath predates the per-line jars (it has no "
                f"ubunye.spark.JarInfo) and may be for another Spark line or Scala; {target.describe()} needs {wanted}"
            )
        return f"no ubunye jar on this session's classpath: {target.describe()} needs {wanted}"
    wrong = info.mismatch(target.spark_version, target.scala_version or "")
    return None if wrong is None else str(wrong)


_HOW_TO_ATTACH = (
    "attach it (ubunye.spark.jar_path(); on Databricks a cluster library, an init script or spark.jars) and set "
    f"spark.sql.extensions={EXTENSIONS}, or call ubunye.spark.register(spark) once the jar is on the classpath"
)


def _wanted(spark: SparkSession) -> str:
    try:
        return session_target(spark).jar_name
    except Exception:  # no jar for this Spark, or py4j refusing the Scala version query
        return "the ubunye jar of its Spark line"


def register(spark: SparkSession) -> None:
    """Register the ubunye SQL functions in a session that is already running, its classpath holding the jar.

    For a Databricks notebook with the jar attached as a cluster library, or any session started without
    ``spark.sql.extensions``. Needs py4j (a classic session, not Spark Connect). Raises ``JarNotFoundError``
    saying which jar this session needs: when there is none, and when the one attached is for another Spark
    line or Scala version (its functions would fail on every call).

    Example:
        >>> register(spark)  # doctest: +SKIP
        >>> spark.sql("SELECT ubunye_rows_v1(*) FROM range(3)").first()[0].row_count  # doctest: +SKIP
        3
    """
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        msg = (
            "register() needs a classic SparkSession (py4j); on Spark Connect attach "
            f"{_wanted(spark)} to the cluster and set spark.sql.extensions={EXTENSIONS} there"
        )
        raise JarNotFoundError(msg)
    problem = diagnose(spark)
    if problem is not None:
        raise JarNotFoundError(f"{problem}: {_HOW_TO_ATTACH}")
    try:
        # The one py4j call site: ubunye.spark.UbunyeFunctions.registerAll(session).
        jvm.ubunye.spark.UbunyeFunctions.registerAll(spark._jsparkSession)
    except Exception as exc:  # a Py4JJavaError carries the JVM's own message
        msg = f"registering the ubunye functions failed ({exc.__class__.__name__}: {str(exc).strip()[:500]})"
        raise JarNotFoundError(msg) from exc
    _USABLE.pop(spark, None)
    require(spark)


def require(spark: SparkSession) -> None:
    """Raise ``JarNotFoundError``, saying which jar to attach and how, unless every function of ``FUNCTIONS``
    (``ubunye_rows_v1`` first) is there.

    Spark only logs a warning when a class in ``spark.sql.extensions`` cannot be loaded (and the ubunye
    extension of another Spark line only logs an error): call this right after starting a session to fail
    loudly instead.
    """
    if not is_registered(spark):
        why = diagnose(spark) or f"this session needs {_wanted(spark)}"
        msg = f"the Spark session has no {FUNCTION} function ({why}): {_HOW_TO_ATTACH}; no jar yet? {HOW_TO_BUILD}"
        raise JarNotFoundError(msg)
    missing = [name for name in FUNCTIONS[1:] if not spark.catalog.functionExists(name)]
    if missing:
        msg = (
            f"the Spark session has {FUNCTION} but not {', '.join(missing)} (a ubunye jar older than this "
            f"package?): {_HOW_TO_ATTACH}; {HOW_TO_BUILD}"
        )
        raise JarNotFoundError(msg)


# --- may hash_frame and profile_frame use the JVM functions? ----------------------------------------------------
# A function that is registered may still be unable to run: a ubunye jar from before the per-line jars (no line
# check) of another Spark line or Scala, on a classic session or behind Spark Connect, or a jar of another ubunye
# version. One tiny query per session runs every aggregate of the jar on three rows and must give, text for text,
# what the twin gives for them.

_PROBE_ROWS = (
    "VALUES (1, 'é', array(map('k', 1.5D)), 0.5D), (2, null, null, CAST('NaN' AS DOUBLE)), "
    "(3, 'a\"', array(map('z', CAST(null AS DOUBLE))), null) AS t(k, s, m, `x.y`)"
)
_PROBE_SQL = (
    "SELECT h.data_hash AS rows_v1, p.data_hash AS profile_v1, transform(p.columns, c -> c.fingerprint) AS "
    "fingerprints, hex(p.buckets) AS buckets, transform(array_sort(b), x -> x.b) AS bucket_v1 FROM ("
    f"SELECT {FUNCTION}(*) AS h, {FUNCTIONS[2]}(4, array('k'), k, s, m, `x.y`) AS p, "
    f"collect_list(named_struct('k', k, 'b', {FUNCTIONS[3]}(k, 4))) AS b FROM {_PROBE_ROWS})"
)
_USABLE: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def _probe_expected() -> dict[str, Any]:
    """What the probe query gives when the jar agrees with the twin: the twin's answers for the same rows."""
    import pyarrow as pa

    from ubunye.hashing import hash_frame
    from ubunye.hashing.profile import bucket_of_rows, profile_sums

    table = pa.table(
        {
            "k": pa.array([1, 2, 3], pa.int32()),
            "s": pa.array(["é", None, 'a"']),
            "m": pa.array([[[("k", 1.5)]], None, [[("z", None)]]], pa.list_(pa.map_(pa.string(), pa.float64()))),
            "x.y": pa.array([0.5, float("nan"), None], pa.float64()),  # a NaN and a null
        }
    )
    sums = profile_sums(table, key=["k"], buckets=4)
    profile = sums.finish()
    return {
        "rows_v1": hash_frame(table).data_hash,
        "profile_v1": profile.hash.data_hash,
        "fingerprints": [profile.columns[name].fingerprint for name in sorted(profile.columns)],
        "buckets": sums.buckets.hex().upper(),  # as Spark's hex() writes the packed buckets
        "bucket_v1": bucket_of_rows(table, key=["k"], buckets=4).tolist(),
    }


def _probe(spark: SparkSession) -> str | None:
    """None when the jar's aggregates run in this session and agree with the twin; else why not."""
    try:
        row = spark.sql(_PROBE_SQL).first()
        if row is None:  # an aggregate always gives one row: a session that does not is broken
            return "the ubunye probe query gave no row in this session"
        got = {name: row[name] for name in ("rows_v1", "profile_v1", "fingerprints", "buckets", "bucket_v1")}
    except Exception as exc:  # the JVM's error, whatever its class: a wrong jar fails in many ways
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        return f"the ubunye functions fail in this session ({exc.__class__.__name__}: {first})"
    want = _probe_expected()
    for name, value in want.items():
        if got[name] != value:
            return (
                f"the probe's {name} is {got[name]} where the Python twin gives {value} "
                "(a jar of another ubunye version?)"
            )
    return None


def jvm_usable(spark: SparkSession) -> bool:
    """True when ``hash_frame`` and ``profile_frame`` may use the jar's functions in this session: every one of
    ``FUNCTIONS`` is registered, and they run and agree with the twin on a three-row probe (run once per
    session). Otherwise False; when a ubunye jar is there but cannot be used, a ``JarWarning`` says why and
    which jar to attach.

    Example:
        >>> jvm_usable(spark)  # doctest: +SKIP
        True
    """
    try:
        return _USABLE[spark]
    except KeyError:
        pass
    except TypeError:  # a session object that cannot be weakly referenced: probe every time
        return _check(spark)
    usable = _check(spark)
    _USABLE[spark] = usable
    return usable


def _quietly(call: Callable[[SparkSession], _T], spark: SparkSession) -> _T | None:
    """``call(spark)``, or None when py4j refuses (e.g. clusters that block JVM access from Python)."""
    try:
        return call(spark)
    except Exception:
        return None


def _jar_present(spark: SparkSession) -> bool:
    return getattr(spark, "_jvm", None) is not None and _jvm_class(spark, "UbunyeFunctions") is not None


def _check(spark: SparkSession) -> bool:
    without = "hashing and profiling without the jar (engine='arrow')"
    if not is_registered(spark):
        # Quiet when there is no ubunye jar at all (the jar-free path is the plan); a warning when one is there
        # but its extension refused to register (another Spark line or Scala).
        if _quietly(_jar_present, spark):
            problem = _quietly(diagnose, spark) or f"{FUNCTION} is not registered (ubunye.spark.register(spark))"
            warnings.warn(f"{problem}; {without}", JarWarning, stacklevel=4)
        return False
    missing = [name for name in FUNCTIONS[1:] if not spark.catalog.functionExists(name)]
    if missing:
        problem = f"the ubunye jar has {FUNCTION} but not {', '.join(missing)} (a jar older than this package?)"
        warnings.warn(f"{problem}; {_HOW_TO_ATTACH}; {without}", JarWarning, stacklevel=4)
        return False
    failed = _probe(spark)
    if failed is None:
        return True
    advice = _quietly(diagnose, spark) or f"this session needs {_wanted(spark)}"
    warnings.warn(f"{failed}; {advice}; {without}", JarWarning, stacklevel=4)
    return False


__all__ = [
    "EXTENSIONS",
    "FUNCTION",
    "FUNCTIONS",
    "JarWarning",
    "configure",
    "diagnose",
    "is_registered",
    "jvm_usable",
    "register",
    "require",
]
