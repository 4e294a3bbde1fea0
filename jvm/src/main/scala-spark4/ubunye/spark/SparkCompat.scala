package ubunye.spark

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry
import org.apache.spark.unsafe.types.UTF8String

/** What differs between Spark lines, Spark 4.x side (compiled into the ubunye-spark-4.0_* and 4.1_* jars only).
  * The Spark 3.5 side is jvm/src/main/scala-spark3/ubunye/spark/SparkCompat.scala: the two files have the same
  * members, and nothing else in the sources depends on the Spark line (build.sbt picks the folder per jar).
  */
private[spark] object SparkCompat {

  /** The session's function registry. Spark 4 split SparkSession into an API class and the classic
    * (non-Connect) implementation; sessionState lives on the latter. */
  def functionRegistry(spark: SparkSession): FunctionRegistry =
    spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession].sessionState.functionRegistry

  /** True when the bytes of `s` are well-formed UTF-8 (Spark 4 has UTF8String.isValid). */
  def isValidUtf8(s: UTF8String): Boolean = s.isValid

  /** The high 64 bits of the 128-bit product of two signed longs (the Spark 3.5 side computes it by hand). */
  def multiplyHigh(x: Long, y: Long): Long = Math.multiplyHigh(x, y)
}
