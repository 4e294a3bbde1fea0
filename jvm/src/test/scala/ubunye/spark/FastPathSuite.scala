package ubunye.spark

import java.time.{LocalDate, LocalDateTime, ZoneOffset}
import java.time.format.DateTimeFormatter

import scala.util.Random

import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/** The writer's fast paths (Int date arithmetic, two digits per step, wide decimals read from Unsafe bytes)
  * against independent derivations: java.time's own text, BigDecimal.toString, and the generic-row path. */
class FastPathSuite extends AnyFunSuite {

  private def text(f: LineBuffer => Unit): String = { val out = new LineBuffer(4); f(out); out.toString }

  /** Section 5.3: java.time's ISO text, which is what LocalDate.toString gives in every year. */
  private def isoDate(day: Long): String = LocalDate.ofEpochDay(day).toString

  test("dates: every day from year -2000 to 12000, and the ends of the Int range, as LocalDate.toString") {
    val from = LocalDate.of(-2000, 1, 1).toEpochDay
    val to = LocalDate.of(12000, 12, 31).toEpochDay
    var day = from
    while (day <= to) {
      val got = text(CanonicalLine.appendDate(day, _))
      if (got != isoDate(day)) fail(s"day $day: $got, java.time says ${isoDate(day)}")
      day += 1
    }
    for (d <- Seq(Int.MinValue.toLong, Int.MaxValue.toLong, -719469L, -719468L, 2932896L, 2932897L))
      assert(text(CanonicalLine.appendDate(d, _)) == isoDate(d), s"day $d")
  }

  test("timestamps: random instants in years 1 to 9999 and around the epoch, as java.time formats them") {
    val fmt = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS")
    val lo = LocalDateTime.of(1, 1, 1, 0, 0).toEpochSecond(ZoneOffset.UTC) * 1000000L
    val hi = LocalDateTime.of(9999, 12, 31, 23, 59, 59).toEpochSecond(ZoneOffset.UTC) * 1000000L
    val rnd = new Random(17)
    val micros = Seq(0L, -1L, 1L, 86399999999L, 86400000000L, -86400000000L, lo, hi + 999999L) ++
      Seq.fill(200000)(lo + (rnd.nextDouble() * (hi - lo)).toLong)
    val writer = CanonicalLine.TimestampWriter(zulu = true)
    micros.foreach { m =>
      val t = LocalDateTime.ofEpochSecond(Math.floorDiv(m, 1000000L), (Math.floorMod(m, 1000000L) * 1000).toInt,
        ZoneOffset.UTC)
      val got = text(out => writer.writeKeyText(new GenericInternalRow(Array[Any](m)), 0, out))
      assert(got == fmt.format(t) + "Z", s"micros $m")
    }
  }

  test("padded digits: every width 1 to 18 of random values, low digits kept, as String.format gives") {
    val rnd = new Random(5)
    for (width <- 1 to 18; _ <- 1 to 2000) {
      val v = math.abs(rnd.nextLong() % 1000000000000000000L)
      val expected = f"$v%018d".takeRight(width)
      assert(text(_.appendPadded(v, width)) == expected, s"$v width $width")
    }
    assert(text(_.appendPadded(Long.MaxValue, 19)) == Long.MaxValue.toString)
    assert(text(_.appendLong(Long.MinValue)) == Long.MinValue.toString)
    val decades = (1 to 18).flatMap { k => val p = math.pow(10, k).toLong; Seq(p - 1, p, p + 1, -p, 1 - p) }
    (Seq(0L, 9L, 10L, 99L, 100L, 2147483647L, 2147483648L, -2147483649L, Long.MaxValue) ++ decades).foreach { v =>
      assert(text(_.appendLong(v)) == v.toString)
    }
  }

  test("wide decimals read from UnsafeRow and UnsafeArrayData bytes equal BigDecimal.toString") {
    val rnd = new Random(11)
    val bounds = Seq(0L, 1L, -1L, (1L << 62) - 1, 1L << 62, -(1L << 62), -(1L << 62) - 1, Long.MaxValue, Long.MinValue,
      255L, 256L, -256L, -257L, 127L, 128L, -128L, -129L)
    for ((p, sc) <- Seq((19, 0), (20, 2), (38, 10), (38, 0), (38, 38), (25, 20))) {
      val dt = DecimalType(p, sc)
      val limit = BigInt(10).pow(p)
      val unscaled = (bounds.map(BigInt(_)) ++ Seq.fill(3000)(BigInt(rnd.nextLong()) >> rnd.nextInt(63)) ++
        Seq(limit - 1, -(limit - 1), BigInt(rnd.nextLong()) * BigInt(rnd.nextLong()))).filter(_.abs < limit)
      val values = unscaled.map(u => Decimal(BigDecimal(u, sc), p, sc))
      val rowType = new StructType().add("d", dt).add("a", ArrayType(dt))
      val toUnsafe = UnsafeProjection.create(rowType)
      val writer = CanonicalLine.rowWriter(Seq("d", "a"), Seq(dt, ArrayType(dt)))
      values.foreach { d =>
        val generic = new GenericInternalRow(Array[Any](d, new GenericArrayData(Array[Any](d, null, d))))
        val bd = d.toJavaBigDecimal.setScale(sc).toString
        val expected = s"""{"a":[$bd,null,$bd],"d":$bd}"""
        val fromUnsafe = text(writer.writeObject(toUnsafe(generic), _))
        assert(fromUnsafe == expected, s"decimal($p,$sc) $d")
        assert(text(writer.writeObject(generic, _)) == expected, s"decimal($p,$sc) $d (generic row)")
      }
    }
  }

  test("escaped text: every length to 40, escapes and UTF-8 at every position, as Jackson's JsonGenerator writes") {
    // The pool holds each byte class the eight-bytes-at-a-time test tells apart: printable ASCII, the two
    // escaped printables, control characters (short and \\u escapes), DEL, and two-, three- and four-byte UTF-8.
    val pool = Seq("a", "Z", "0", " ", "~", "\"", "\\", "\n", "\t", "\b", "\f", "\r", "\u0000", "\u0001", "\u001f",
      "\u007f", "\u00e9", "\u20ac", "\ud83d\ude00", "!", "#", "]", "[", "/")
    val factory = new com.fasterxml.jackson.core.JsonFactory()
    def jackson(text: String): String = {
      val w = new java.io.StringWriter()
      val g = factory.createGenerator(w)
      g.writeString(text)
      g.close()
      w.toString.drop(1).dropRight(1)
    }
    val rnd = new Random(23)
    for (n <- 0 to 40; _ <- 1 to 300) {
      // Mostly plain text, so that whole clean words and a byte to escape at any offset both occur.
      val text = Seq.fill(n)(if (rnd.nextInt(4) == 0) pool(rnd.nextInt(pool.length)) else "x").mkString
      val bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8)
      val padded = Array.fill[Byte](3)(0x22) ++ bytes ++ Array.fill[Byte](9)(0x5c) // an offset, and bytes after the end
      val out = new LineBuffer(1)
      val nonAscii = out.appendEscaped(padded, 3, bytes.length)
      assert(out.toString == jackson(text), s"text ${text.map(_.toInt)}")
      assert(nonAscii == bytes.exists(_ < 0), s"non-ASCII flag of ${text.map(_.toInt)}")
    }
  }

  test("SparkCompat.multiplyHigh: the high 64 bits of the 128-bit product, as BigInteger gives") {
    val rnd = new Random(29)
    val edge = Seq(0L, 1L, -1L, Long.MaxValue, Long.MinValue, 1L << 32, (1L << 32) - 1, -(1L << 32))
    val pairs = (for (x <- edge; y <- edge) yield (x, y)) ++ Seq.fill(200000)((rnd.nextLong(), rnd.nextLong()))
    for ((x, y) <- pairs) {
      val expected = java.math.BigInteger.valueOf(x).multiply(java.math.BigInteger.valueOf(y)).shiftRight(64).longValue
      assert(SparkCompat.multiplyHigh(x, y) == expected, s"$x * $y")
    }
  }
}
