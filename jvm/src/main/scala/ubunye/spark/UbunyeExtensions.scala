package ubunye.spark

import org.apache.spark.sql.{SparkSessionExtensions, SparkSessionExtensionsProvider}

/** Adds the ubunye SQL functions to every session: `spark.sql.extensions=ubunye.spark.UbunyeExtensions`
  * (a static conf, set before the session starts; see conf/spark-defaults.conf). */
class UbunyeExtensions extends SparkSessionExtensionsProvider {
  override def apply(extensions: SparkSessionExtensions): Unit =
    UbunyeFunctions.functions.foreach(extensions.injectFunction)
}
