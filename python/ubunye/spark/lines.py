"""Spark lines and Scala versions: which ubunye jar a pyspark install or a running session needs.

One jar per line: ``ubunye-spark-3.5_2.12-<version>.jar`` (Spark 3.5, Scala 2.12: pip's pyspark 3.5 and the
Databricks LTS runtimes on Spark 3.5), ``ubunye-spark-3.5_2.13-<version>.jar`` (Spark 3.5 built for Scala
2.13), ``ubunye-spark-4.0_2.13-<version>.jar`` (Spark 4.0) and ``ubunye-spark-4.1_2.13-<version>.jar`` (Spark
4.1, 4.2 and 4.3: Spark 4.1 changed a Catalyst method the jar calls, so 4.0 needs its own). Nothing here starts
a JVM.

Example:
    >>> spark_line("3.5.2")
    '3.5'
    >>> [spark_line(v) for v in ("4.0.5", "4.1.0", "4.3.0")]
    ['4.0', '4.1', '4.1']
    >>> jar_name("3.5.0", "2.12.18", version="0.7.0")
    'ubunye-spark-3.5_2.12-0.7.0.jar'
    >>> Target("4.2.0", "2.13.18").jar_name.startswith("ubunye-spark-4.1_2.13-")
    True
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ubunye import __version__
from ubunye.exceptions import JarNotFoundError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The Scala versions each Spark line has a jar for; the first is the one pip's pyspark (and Databricks) runs.
SCALA_OF_LINE: dict[str, tuple[str, ...]] = {"3.5": ("2.12", "2.13"), "4.0": ("2.13",), "4.1": ("2.13",)}
#: The Spark versions the jars are tested on (README, "Spark lines").
TESTED = "3.5, 4.0, 4.1, 4.2, 4.3"


def spark_line(spark_version: str) -> str:
    """The jar line of a Spark version: ``"3.5"`` for 3.5.x, ``"4.0"`` for 4.0.x, ``"4.1"`` for 4.1 and later 4.x.

    A line is its own line (``"3.5"``, ``"4.0"``, ``"4.1"``); vendor suffixes are ignored
    (``"3.5.0-databricks"``). Raises ``JarNotFoundError`` for a version ubunye builds no jar for, saying that the
    jar-free path still works there.

    Example:
        >>> spark_line("3.5.0-databricks")
        '3.5'
        >>> try:
        ...     spark_line("3.4.1")
        ... except JarNotFoundError as e:
        ...     print(str(e).split(";")[0])
        ubunye has no jar for Spark 3.4.1 (jars for Spark 3.5, 4.0, 4.1, 4.2, 4.3)
    """
    m = re.match(r"\s*(\d+)\.(\d+)", spark_version)
    if m and m.group(1) == "4":
        return "4.0" if m.group(2) == "0" else "4.1"
    if m and (m.group(1), m.group(2)) == ("3", "5"):
        return "3.5"
    msg = (
        f"ubunye has no jar for Spark {spark_version} (jars for Spark {TESTED}); "
        'hash_frame still works there without one (engine="arrow")'
    )
    raise JarNotFoundError(msg)


def scala_binary(scala_version: str) -> str:
    """``"2.12"`` of ``"2.12.18"``.

    Example:
        >>> scala_binary("2.13.16")
        '2.13'
    """
    return ".".join(scala_version.strip().split(".")[:2])


def jar_name(spark_version: str, scala_version: str | None = None, version: str = __version__) -> str:
    """The file name of the ubunye jar for a Spark version (or line) and a Scala version (or binary version).

    Without a Scala version, the line's usual one: 2.12 for Spark 3.5, 2.13 for Spark 4.

    Example:
        >>> jar_name("3.5", version="0.7.0")
        'ubunye-spark-3.5_2.12-0.7.0.jar'
        >>> jar_name("4.3.0", "2.13", version="0.7.0")
        'ubunye-spark-4.1_2.13-0.7.0.jar'
    """
    line = spark_line(spark_version)
    scala = scala_binary(scala_version) if scala_version else SCALA_OF_LINE[line][0]
    if scala not in SCALA_OF_LINE[line]:
        known = " and ".join(SCALA_OF_LINE[line])
        msg = f"ubunye has no jar for Spark {spark_version} on Scala {scala} (Spark {line}: Scala {known})"
        raise JarNotFoundError(msg)
    return f"ubunye-spark-{line}_{scala}-{version}.jar"


@dataclass(frozen=True)
class Target:
    """A Spark version and the Scala version it runs on (None when not known: the line's usual one).

    Example:
        >>> t = Target("3.5.9", "2.12.18")
        >>> (t.line, t.scala, t.jar_name.split("-")[2])
        ('3.5', '2.12', '3.5_2.12')
    """

    spark_version: str
    scala_version: str | None = None

    @property
    def line(self) -> str:
        """``"3.5"``, ``"4.0"`` or ``"4.1"`` (JarNotFoundError for another Spark)."""
        return spark_line(self.spark_version)

    @property
    def scala(self) -> str:
        """The Scala binary version: from ``scala_version``, else the line's usual one."""
        return scala_binary(self.scala_version) if self.scala_version else SCALA_OF_LINE[self.line][0]

    @property
    def jar_name(self) -> str:
        """The file name of the jar this Spark needs."""
        return jar_name(self.spark_version, self.scala)

    def describe(self) -> str:
        """``"Spark 3.5.9 / Scala 2.12.18"``."""
        return f"Spark {self.spark_version} / Scala {self.scala_version or self.scala + ' (assumed)'}"


def _scala_in(folder: Path) -> str | None:
    found = sorted(folder.glob("scala-library-*.jar")) if folder.is_dir() else []
    return found[0].name[len("scala-library-") : -len(".jar")] if found else None


def installed_target() -> Target:
    """The Spark and Scala of the pyspark a new session here would run, without starting a JVM.

    Spark's version is ``pyspark.__version__``; Scala's is read from the ``scala-library-<version>.jar`` in
    ``$SPARK_HOME/jars`` when SPARK_HOME is set (pyspark then runs that Spark), else in ``pyspark/jars``.
    Raises ``JarNotFoundError`` when pyspark is not installed.
    """
    try:
        import pyspark
    except ImportError as exc:
        msg = "pyspark is not installed: pass the Spark version, e.g. jar_path('3.5'), or install ubunye[spark]"
        raise JarNotFoundError(msg) from exc
    folders = []
    if os.environ.get("SPARK_HOME"):
        folders.append(Path(os.environ["SPARK_HOME"]) / "jars")
    folders.append(Path(pyspark.__file__).resolve().parent / "jars")
    scala = next((s for s in map(_scala_in, folders) if s), None)
    return Target(pyspark.__version__, scala)


def session_target(spark: SparkSession) -> Target:
    """The Spark and Scala of a running session: ``spark.version`` and, on a classic session, the JVM's
    ``scala.util.Properties.versionNumberString`` (a Spark Connect session has no py4j: Scala stays None)."""
    jvm = getattr(spark, "_jvm", None)
    scala = None
    if jvm is not None:
        scala = str(jvm.scala.util.Properties.versionNumberString())
    return Target(str(spark.version), scala)


__all__ = ["SCALA_OF_LINE", "Target", "installed_target", "jar_name", "scala_binary", "session_target", "spark_line"]
