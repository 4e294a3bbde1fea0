package ubunye.spark

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/** What differs between Spark lines, Spark 3.5 side (compiled into the ubunye-spark-3.5_* jars only). The
  * Spark 4.x side is jvm/src/main/scala-spark4/ubunye/spark/SparkCompat.scala: the two files have the same
  * members, and nothing else in the sources depends on the Spark line (build.sbt picks the folder per jar).
  */
private[spark] object SparkCompat {

  /** The session's function registry: in Spark 3.5 sessionState is on SparkSession itself. */
  def functionRegistry(spark: SparkSession): FunctionRegistry = spark.sessionState.functionRegistry

  /** True when the bytes of `s` are well-formed UTF-8 (Unicode 15, table 3-7: no overlong forms, no
    * surrogates, nothing above U+10FFFF), which is what Java's UTF-8 decoder keeps unchanged. Spark 3.5 has
    * no UTF8String.isValid. */
  def isValidUtf8(s: UTF8String): Boolean = {
    val base = s.getBaseObject
    val offset = s.getBaseOffset
    val n = s.numBytes
    def at(i: Int): Int = Platform.getByte(base, offset + i) & 0xff
    def cont(i: Int, lo: Int = 0x80, hi: Int = 0xbf): Boolean = i < n && { val b = at(i); b >= lo && b <= hi }
    var i = 0
    while (i < n) {
      val b = at(i)
      val width =
        if (b < 0x80) 1
        else if (b >= 0xc2 && b <= 0xdf) { if (cont(i + 1)) 2 else 0 }
        else if (b == 0xe0) { if (cont(i + 1, 0xa0) && cont(i + 2)) 3 else 0 }
        else if (b == 0xed) { if (cont(i + 1, 0x80, 0x9f) && cont(i + 2)) 3 else 0 }
        else if (b >= 0xe1 && b <= 0xef) { if (cont(i + 1) && cont(i + 2)) 3 else 0 }
        else if (b == 0xf0) { if (cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3)) 4 else 0 }
        else if (b >= 0xf1 && b <= 0xf3) { if (cont(i + 1) && cont(i + 2) && cont(i + 3)) 4 else 0 }
        else if (b == 0xf4) { if (cont(i + 1, 0x80, 0x8f) && cont(i + 2) && cont(i + 3)) 4 else 0 }
        else 0
      if (width == 0) return false
      i += width
    }
    true
  }

  /** The high 64 bits of the 128-bit product of two signed longs. Math.multiplyHigh (an intrinsic) is Java 9+,
    * and the Spark 3.5 jars are built for Java 8: four 32-bit products (Hacker's Delight, 8-2). */
  def multiplyHigh(x: Long, y: Long): Long = {
    val x1 = x >> 32
    val x0 = x & 0xffffffffL
    val y1 = y >> 32
    val y0 = y & 0xffffffffL
    // The middle products are added one at a time, each after the carry of the one before is split off: their
    // sum could overflow 64 bits.
    val t = x1 * y0 + ((x0 * y0) >>> 32)
    val middle = (t & 0xffffffffL) + x0 * y1
    x1 * y1 + (t >> 32) + (middle >> 32)
  }
}
