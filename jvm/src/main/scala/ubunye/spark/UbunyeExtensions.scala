package ubunye.spark

import org.apache.spark.sql.{SparkSessionExtensions, SparkSessionExtensionsProvider}

/** Adds the ubunye SQL functions to every session: `spark.sql.extensions=ubunye.spark.UbunyeExtensions`
  * (a static conf, set before the session starts; see conf/spark-defaults.conf).
  *
  * A jar built for another Spark line or Scala version adds nothing and logs an error naming the jar to
  * attach instead (its functions would fail on every call); `ubunye.spark.require(spark)` raises that message.
  * The check is plain Java (JarInfo) and runs before any Scala collection of this jar is touched. */
class UbunyeExtensions extends SparkSessionExtensionsProvider {
  override def apply(extensions: SparkSessionExtensions): Unit =
    if (JarInfo.fitsOrLog()) UbunyeFunctions.functions.foreach(extensions.injectFunction)
}
