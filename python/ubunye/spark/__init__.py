"""The ubunye Spark jars: which one a session needs, where it is, and how a session gets ``ubunye_rows_v1``.

One jar per Spark line, all shipped in the package: ``ubunye-spark-3.5_2.12-<v>.jar`` (Spark 3.5 / Scala 2.12:
pip's pyspark 3.5, Databricks 14.3 to 16.4 LTS), ``ubunye-spark-3.5_2.13-<v>.jar`` (Spark 3.5 / Scala 2.13),
``ubunye-spark-4.0_2.13-<v>.jar`` (Spark 4.0, Databricks 17) and ``ubunye-spark-4.1_2.13-<v>.jar`` (Spark 4.1
to 4.3). Ways in:

- a new session: ``configure(SparkSession.builder)`` adds the jar for the installed pyspark (``spark.jars``)
  and ``spark.sql.extensions``;
- a running session with the jar already on its classpath (e.g. a Databricks cluster library):
  ``register(spark)``.

``require(spark)`` checks that the function is there and says which jar to attach when it is not, telling a
missing jar from the jar of another Spark line. ``hash_frame`` uses the function only when ``jvm_usable``.

Example:
    >>> import ubunye.spark as us
    >>> us.EXTENSIONS
    'ubunye.spark.UbunyeExtensions'
    >>> us.jar_name("3.5.2", "2.12.18").startswith("ubunye-spark-3.5_2.12-")
    True
"""

from __future__ import annotations

from ubunye.spark.jars import ENV_JAR, HOW_TO_BUILD, JarInfo, available_jars, jar_info, jar_path
from ubunye.spark.lines import SCALA_OF_LINE, Target, installed_target, jar_name, session_target, spark_line
from ubunye.spark.session import (
    EXTENSIONS,
    FUNCTION,
    JarWarning,
    configure,
    diagnose,
    is_registered,
    jvm_usable,
    register,
    require,
)

__all__ = [
    "ENV_JAR",
    "EXTENSIONS",
    "FUNCTION",
    "HOW_TO_BUILD",
    "SCALA_OF_LINE",
    "JarInfo",
    "JarWarning",
    "Target",
    "available_jars",
    "configure",
    "diagnose",
    "installed_target",
    "is_registered",
    "jar_info",
    "jar_name",
    "jar_path",
    "jvm_usable",
    "register",
    "require",
    "session_target",
    "spark_line",
]
