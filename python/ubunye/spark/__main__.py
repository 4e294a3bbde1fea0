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
"""

from __future__ import annotations

import sys

from ubunye.exceptions import JarNotFoundError
from ubunye.spark.jars import available_jars, jar_info, jar_path
from ubunye.spark.lines import installed_target


def main(argv: list[str]) -> int:
    """Print a jar's path (``argv`` = Spark version [Scala version]) or the table of jars; 1 on error."""
    try:
        if argv:
            print(jar_path(argv[0], argv[1] if len(argv) > 1 else None))
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
