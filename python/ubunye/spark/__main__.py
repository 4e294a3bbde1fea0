"""``python -m ubunye.spark``: the ubunye jars this package ships, and which one a Spark needs.

- ``python -m ubunye.spark``: every jar with its Spark line and Scala version, and the one for the pyspark here;
- ``python -m ubunye.spark 3.5`` (or ``3.5.2 2.13``, ``4.0``, ``4.2.0``): the path of the jar for that Spark
  (and Scala), to copy to a Databricks volume or an init script.

Example (the first needs the jars built, ``make jar``; a Spark without a jar is 1, the reason on stderr):
    >>> main(["3.5"]) == 0  # doctest: +SKIP
    /.../ubunye/jars/ubunye-spark-3.5_2.12-0.7.0.jar
    True
    >>> main(["3.3"])
    1
    >>> main(["3.5.x"])
    2
"""

from __future__ import annotations

import re
import sys

from ubunye.exceptions import JarNotFoundError
from ubunye.spark.jars import available_jars, jar_info, jar_path
from ubunye.spark.lines import installed_target

_USAGE = "usage: python -m ubunye.spark [SPARK_VERSION [SCALA_VERSION]]   (e.g. 3.5, 3.5.2 2.13, 4.2.0)"
# A release or line, with a vendor suffix (3.5.0-databricks); a Scala binary or full version.
_SPARK = re.compile(r"\d+\.\d+(\.\d+)?([-+][\w.+-]*)?")
_SCALA = re.compile(r"2\.\d+(\.\d+)?")


def _versions(argv: list[str]) -> tuple[str, str | None]:
    """Spark and Scala version from the arguments; ``"3.5 2.13"`` given as one (a quoted shell variable) is the
    two. Anything else that is not a version is refused: it would otherwise print the jar of a guessed line."""
    words = argv[0].split() if len(argv) == 1 else argv
    if not 1 <= len(words) <= 2:
        raise ValueError(f"expected a Spark version and, optionally, a Scala version; got {argv!r}")
    if not _SPARK.fullmatch(words[0]):
        raise ValueError(f"{words[0]!r} is not a Spark version (3.5, 3.5.2, 4.2.0, 3.5.0-databricks)")
    if len(words) == 2 and not _SCALA.fullmatch(words[1]):
        raise ValueError(f"{words[1]!r} is not a Scala version (2.12, 2.13, 2.13.16)")
    return words[0], words[1] if len(words) == 2 else None


def main(argv: list[str]) -> int:
    """Print a jar's path (``argv`` = Spark version [Scala version]) or the table of jars; 1 when there is no such
    jar, 2 for arguments that are not versions."""
    if argv and argv[0] in ("-h", "--help"):
        print(f"{_USAGE}\n\n{(__doc__ or '').split(chr(10) + chr(10) + 'Example')[0]}")
        return 0
    try:
        if argv:
            print(jar_path(*_versions(argv)))
            return 0
        for path in available_jars():
            info = jar_info(path)
            what = f"Spark {info.spark_line} / Scala {info.scala_version}" if info else "(no ubunye manifest)"
            print(f"{what:28} {path}")
        try:
            target = installed_target()
            print(f"this pyspark ({target.describe()}) needs: {jar_path()}")
        except JarNotFoundError as exc:
            print(f"this Python: {exc}")
    except JarNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"{exc}\n{_USAGE}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
