"""The ubunye Spark jar: where it is, and how a session gets the ``ubunye_rows_v1`` SQL function.

Two ways in:

- a new session: ``configure(SparkSession.builder)`` adds ``spark.jars`` and ``spark.sql.extensions``;
- a running session with the jar already on its classpath (e.g. a Databricks cluster library):
  ``register(spark)``.

``require(spark)`` checks that the function is there and says what to do when it is not.

Example:
    >>> import ubunye.spark as us
    >>> us.EXTENSIONS
    'ubunye.spark.UbunyeExtensions'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ubunye import __version__
from ubunye.exceptions import JarNotFoundError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FUNCTION = "ubunye_rows_v1"
LINE_FUNCTION = "ubunye_canonical_line"
EXTENSIONS = "ubunye.spark.UbunyeExtensions"
SCALA_BINARY = "2.13"
JAR_NAME = f"ubunye-spark_{SCALA_BINARY}-{__version__}.jar"
ENV_JAR = "UBUNYE_JAR"

_PACKAGE_JARS = Path(__file__).resolve().parent / "jars"
# A source checkout: python/ubunye/spark.py -> <repo>/jvm/target/scala-2.13 (sbt's output folder).
_DEV_JARS = Path(__file__).resolve().parents[2] / "jvm" / "target" / f"scala-{SCALA_BINARY}"

_HOW_TO_BUILD = (
    "build it with `make jar` in a source checkout, install a ubunye wheel that contains it, "
    f"or point {ENV_JAR} at the jar"
)


def jar_path() -> Path:
    """The ubunye Spark jar for this version of the package.

    Looked for in order: the file named by the ``UBUNYE_JAR`` environment variable; the jar packaged with
    the distribution (``ubunye/jars/``); the sbt build folder of a source checkout (``jvm/target/scala-2.13``).
    Raises ``JarNotFoundError`` naming the folders looked in when there is none, or when one folder holds
    several ubunye jars.

    Example:
        >>> jar_path().name.startswith("ubunye-spark_2.13-")  # doctest: +SKIP
        True
    """
    env = os.environ.get(ENV_JAR)
    if env:
        path = Path(env)
        if not path.is_file():
            msg = f"{ENV_JAR}={env} is not a file; unset it or point it at the ubunye jar ({JAR_NAME})"
            raise JarNotFoundError(msg)
        return path
    for folder in (_PACKAGE_JARS, _DEV_JARS):
        found = sorted(folder.glob(f"ubunye-spark_{SCALA_BINARY}-*.jar")) if folder.is_dir() else []
        if len(found) > 1:
            names = ", ".join(p.name for p in found)
            msg = f"several ubunye jars in {folder} ({names}): keep only {JAR_NAME}"
            raise JarNotFoundError(msg)
        if found:
            return found[0]
    msg = f"no ubunye jar ({JAR_NAME}) in {_PACKAGE_JARS} nor in {_DEV_JARS}, and {ENV_JAR} is not set: {_HOW_TO_BUILD}"
    raise JarNotFoundError(msg)


def configure(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the jar (``spark.jars``) and the extensions (``spark.sql.extensions``) to a session builder.

    Keeps jars and extensions the builder already has. Call it before ``getOrCreate()``: both confs are
    read when the session starts.

    Example:
        >>> from pyspark.sql import SparkSession  # doctest: +SKIP
        >>> spark = configure(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
    """
    jar = str(jar_path())
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


def register(spark: SparkSession) -> None:
    """Register the ubunye SQL functions in a session that is already running, its classpath holding the jar.

    For a Databricks notebook with the jar attached as a cluster library, or any session started without
    ``spark.sql.extensions``. Needs py4j (a classic session, not Spark Connect).

    Example:
        >>> register(spark)  # doctest: +SKIP
        >>> spark.sql("SELECT ubunye_rows_v1(*) FROM range(3)").first()[0].row_count  # doctest: +SKIP
        3
    """
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        msg = (
            "register() needs a classic SparkSession (py4j); on Spark Connect set "
            f"spark.sql.extensions={EXTENSIONS} on the cluster with the jar attached"
        )
        raise JarNotFoundError(msg)
    try:
        # The one py4j call site: ubunye.spark.UbunyeFunctions.registerAll(session).
        jvm.ubunye.spark.UbunyeFunctions.registerAll(spark._jsparkSession)
    except Exception as exc:  # py4j raises a plain error when the class is not on the classpath
        msg = f"the ubunye jar is not on this session's classpath ({exc.__class__.__name__}): {_HOW_TO_ATTACH}"
        raise JarNotFoundError(msg) from exc
    require(spark)


_HOW_TO_ATTACH = (
    "attach the jar (ubunye.spark.jar_path(); on Databricks a cluster library or spark.jars) and set "
    f"spark.sql.extensions={EXTENSIONS}, or call ubunye.spark.register(spark) once the jar is on the classpath"
)


def require(spark: SparkSession) -> None:
    """Raise ``JarNotFoundError``, saying how to build and attach the jar, unless ``ubunye_rows_v1`` is there.

    Spark only logs a warning when a class in ``spark.sql.extensions`` cannot be loaded: call this right after
    starting a session to fail loudly instead.
    """
    if not is_registered(spark):
        msg = f"the Spark session has no {FUNCTION} function: {_HOW_TO_ATTACH}; no jar yet? {_HOW_TO_BUILD}"
        raise JarNotFoundError(msg)


__all__ = ["EXTENSIONS", "FUNCTION", "configure", "is_registered", "jar_path", "register", "require"]
