"""The ubunye jar files: where they are, which one fits a Spark, and what a jar says it is built for.

Example:
    >>> from ubunye.spark.jars import jar_path
    >>> jar_path("3.5").name.startswith("ubunye-spark-3.5_2.12-")  # doctest: +SKIP
    True
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ubunye.exceptions import JarNotFoundError
from ubunye.spark.lines import Target, installed_target

ENV_JAR = "UBUNYE_JAR"

_PACKAGE_JARS = Path(__file__).resolve().parents[1] / "jars"
# A source checkout: python/ubunye/spark/jars.py -> <repo>/jvm/target (sbt writes <id>/scala-<x>/<jar> there).
_DEV_JARS = Path(__file__).resolve().parents[3] / "jvm" / "target"

HOW_TO_BUILD = (
    "build them with `make jar` in a source checkout, install a ubunye wheel (it ships every jar), "
    f"or point {ENV_JAR} at the jar"
)


@dataclass(frozen=True)
class JarInfo:
    """What a jar's manifest says it is built for (build.sbt writes these attributes).

    Example:
        >>> JarInfo("3.5", "2.12.18", "0.7.0").name
        'ubunye-spark-3.5_2.12-0.7.0.jar'
    """

    spark_line: str
    scala_version: str
    version: str

    @property
    def scala(self) -> str:
        """The Scala binary version, ``"2.12"``."""
        return ".".join(self.scala_version.split(".")[:2])

    @property
    def name(self) -> str:
        """The jar's file name as ``make jar`` writes it."""
        return f"ubunye-spark-{self.spark_line}_{self.scala}-{self.version}.jar"

    def fits(self, target: Target) -> bool:
        """True when this jar runs on ``target``'s Spark and Scala."""
        return (self.spark_line, self.scala) == (target.line, target.scala)


def jar_info(path: str | Path) -> JarInfo | None:
    """The Spark line, Scala version and ubunye version in a jar's manifest; None for a jar without them
    (not a ubunye jar, or one older than 0.7)."""
    try:
        with zipfile.ZipFile(path) as z:
            text = z.read("META-INF/MANIFEST.MF").decode("utf-8")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    attrs = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    if "Ubunye-Spark-Line" not in attrs:
        return None
    return JarInfo(attrs["Ubunye-Spark-Line"], attrs["Ubunye-Scala-Version"], attrs.get("Implementation-Version", ""))


def available_jars() -> list[Path]:
    """Every ubunye jar of the package (``ubunye/jars/``) and, in a source checkout, of the sbt build."""
    found = sorted(_PACKAGE_JARS.glob("ubunye-spark-*.jar")) if _PACKAGE_JARS.is_dir() else []
    if _DEV_JARS.is_dir():
        found += sorted(_DEV_JARS.glob("spark-*/scala-*/ubunye-spark-*.jar"))
    return found


def _candidates(name: str) -> list[Path]:
    return [_PACKAGE_JARS / name, *sorted(_DEV_JARS.glob(f"spark-*/scala-*/{name}"))]


def jar_path(spark_version: str | None = None, scala_version: str | None = None) -> Path:
    """The ubunye jar for a Spark version and Scala version; by default for the installed pyspark.

    ``spark_version`` may be a line (``"3.5"``, ``"4.0"``, ``"4.1"``) or a release (``"4.2.0"``); without
    ``scala_version`` the line's usual Scala (2.12 for 3.5, 2.13 for 4). With neither, both come from the
    pyspark installed here (``installed_target``): no JVM is started. Looked for in order: the file named by
    ``UBUNYE_JAR`` (refused when its manifest names another line); the jars packaged with the distribution
    (``ubunye/jars/``); the sbt build folders of a source checkout (``jvm/target/spark-*/``). Raises
    ``JarNotFoundError`` naming the jar and the folders looked in.

    Example:
        >>> jar_path("4.2").name.startswith("ubunye-spark-4.1_2.13-")  # doctest: +SKIP
        True
    """
    target = installed_target() if spark_version is None else Target(spark_version, scala_version)
    name = target.jar_name
    env = os.environ.get(ENV_JAR)
    if env:
        path = Path(env)
        if not path.is_file():
            msg = f"{ENV_JAR}={env} is not a file; unset it or point it at the ubunye jar ({name})"
            raise JarNotFoundError(msg)
        info = jar_info(path)
        if info is not None and not info.fits(target):
            msg = (
                f"{ENV_JAR}={env} is the ubunye jar for Spark {info.spark_line} / Scala {info.scala}; "
                f"{target.describe()} needs {name}"
            )
            raise JarNotFoundError(msg)
        return path
    for path in _candidates(name):
        if path.is_file():
            return path
    others = ", ".join(p.name for p in available_jars()) or "none"
    msg = (
        f"no ubunye jar {name} (for {target.describe()}) in {_PACKAGE_JARS} nor under {_DEV_JARS}, and "
        f"{ENV_JAR} is not set (ubunye jars found: {others}): {HOW_TO_BUILD}"
    )
    raise JarNotFoundError(msg)


__all__ = ["ENV_JAR", "JarInfo", "available_jars", "jar_info", "jar_path"]
