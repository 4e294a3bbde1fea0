package ubunye.spark

import java.time.{LocalDate, LocalDateTime, ZoneOffset}
import java.time.format.DateTimeFormatter

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/** The writer's fast paths (Int date arithmetic, eight digits per word, wide decimals read from Unsafe bytes, the
  * row writer's own path for UnsafeRows) against independent derivations: java.time's own text,
  * BigDecimal.toString, digits counted one at a time, and the generic-row path. */
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

  test("digits8: every value 0 to 99999999 as eight ASCII digits, against a counter kept digit by digit") {
    val digits = Array.fill(8)('0'.toByte) // the counter, most significant first
    var x = 0
    while (x < 100000000) {
      var expected = 0L
      var d = 7
      while (d >= 0) { expected = (expected << 8) | digits(d); d -= 1 } // the first digit in the low byte
      val got = LineBuffer.digits8(x)
      if (got != expected) fail(s"$x: ${got.toHexString}, expected ${expected.toHexString}")
      d = 7
      while (d >= 0 && digits(d) == '9') { digits(d) = '0'; d -= 1 }
      if (d >= 0) digits(d) = (digits(d) + 1).toByte
      x += 1
    }
  }

  test("padded and pointed digits: every width and point, after and before other bytes, as strings give") {
    val rnd = new Random(31)
    for (width <- 1 to 19; fraction <- -1 until width; _ <- 1 to 300) {
      val v = rnd.nextInt(4) match {
        case 0 => math.abs(rnd.nextLong() >> rnd.nextInt(64)) // any size
        case 1 => math.pow(10, rnd.nextInt(19)).toLong - rnd.nextInt(2) // 10^k and 10^k - 1
        case _ => math.abs(rnd.nextLong()) % (if (width >= 19) Long.MaxValue else math.pow(10, width).toLong)
      }
      val digits = if (width == 19) f"$v%019d" else f"$v%019d".takeRight(width)
      val prefix = "x" * rnd.nextInt(20)
      val pointed = if (fraction < 0) digits else digits.dropRight(fraction) + "." + digits.takeRight(fraction)
      val expected = prefix + pointed + "]"
      val out = new LineBuffer(1 + rnd.nextInt(40)) // growing at any place
      out.appendAscii(prefix)
      if (fraction < 0) out.appendPadded(v, width) else out.appendPointed(v, width, fraction)
      out.append(']')
      assert(out.toString == expected, s"$v width $width fraction $fraction")
    }
  }

  /** Random values of every rows-v1 type (Spark's internal representations), edges included, nulls 1 in 6. */
  private def randomValue(dt: DataType, rnd: Random, depth: Int = 0): Any = {
    def pick[T](edges: Seq[T], random: => T): T = if (rnd.nextInt(4) == 0) edges(rnd.nextInt(edges.length)) else random
    if (rnd.nextInt(6) == 0) return null
    dt match {
      case LongType =>
        pick(Seq(0L, -1L, Long.MinValue, Long.MaxValue, 99999999L, 100000000L), rnd.nextLong() >> rnd.nextInt(64))
      case IntegerType => pick(Seq(0, -1, Int.MinValue, Int.MaxValue), rnd.nextInt() >> rnd.nextInt(32))
      case ShortType => rnd.nextInt().toShort
      case ByteType => rnd.nextInt().toByte
      case BooleanType => rnd.nextBoolean()
      case DoubleType =>
        pick(Seq(0.0, -0.0, Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity, Double.MinPositiveValue,
          Double.MaxValue, 1e7, 1e-3, 123.0), if (rnd.nextBoolean()) rnd.nextDouble() * 100
          else java.lang.Double.longBitsToDouble(rnd.nextLong()))
      case FloatType => rnd.nextFloat() * 1000
      case StringType =>
        val pool = Seq("a", "Z", " ", "\"", "\\", "\n", "\u0001", "\u00e9", "\u20ac", "\ud83d\ude00", "customer-")
        val text = Seq.fill(rnd.nextInt(30))(if (rnd.nextInt(5) == 0) pool(rnd.nextInt(pool.length)) else "x").mkString
        val bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8)
        if (rnd.nextInt(20) == 0 && bytes.nonEmpty) bytes(rnd.nextInt(bytes.length)) = 0xff.toByte // not UTF-8
        UTF8String.fromBytes(bytes)
      case BinaryType => Array.fill(rnd.nextInt(10))(rnd.nextInt().toByte)
      case DateType => pick(Seq(0, -719468, 2932896, -719469, 2932897, Int.MinValue / 2), rnd.nextInt(40000) - 10000)
      case TimestampType | TimestampNTZType =>
        pick(Seq(0L, -1L, 1700000000000000L, -62135596800000000L, 253402300799999999L),
          rnd.nextLong() >> (rnd.nextInt(10) + 3))
      case d: DecimalType =>
        val limit = BigInt(10).pow(d.precision)
        val wide = if (rnd.nextBoolean()) BigInt(rnd.nextLong()) else BigInt(1)
        val u = (BigInt(rnd.nextLong()) * wide) >> rnd.nextInt(64)
        Decimal(BigDecimal(u % limit, d.scale), d.precision, d.scale)
      case ArrayType(et, _) => new GenericArrayData(Array.fill(rnd.nextInt(4))(randomValue(et, rnd, depth + 1)))
      case MapType(kt, vt, _) =>
        val keys = Seq.fill(rnd.nextInt(4))(rnd.nextLong()).distinct
        ArrayBasedMapData(keys.toArray[Any], keys.map(_ => randomValue(vt, rnd, depth + 1)).toArray)
      case st: StructType => new GenericInternalRow(st.fields.map(f => randomValue(f.dataType, rnd, depth + 1)))
    }
  }

  test("the row writer's UnsafeRow path equals its generic path: every type, random values, nulls, names") {
    val rnd = new Random(37)
    val types: Seq[DataType] = Seq(LongType, IntegerType, ShortType, ByteType, BooleanType, DoubleType, FloatType,
      StringType, BinaryType, DateType, TimestampType, TimestampNTZType, DecimalType(20, 2), DecimalType(38, 10),
      DecimalType(10, 3), DecimalType(19, 0), ArrayType(StringType), MapType(LongType, DoubleType),
      new StructType().add("b", TimestampType).add("a", DecimalType(25, 5)).add("c", StringType))
    // Name lengths around the two words of a member name (`,"name":` is the name and 4 bytes).
    def name(i: Int) = s"c$i" + "n" * rnd.nextInt(16)
    for (round <- 1 to 60) {
      val n = if (round % 10 == 0) 70 else 1 + rnd.nextInt(12) // past 64 columns: the generic path
      val colTypes = Seq.fill(n)(types(rnd.nextInt(types.length)))
      val names = (0 until n).map(name)
      // The columns read from a wider input row in another order, as the aggregate reads them (its `source`).
      val extra = rnd.nextInt(3)
      val source = rnd.shuffle((0 until n + extra).toList).take(n).toArray
      val inputTypes = Array.fill[DataType](n + extra)(LongType)
      for (i <- 0 until n) inputTypes(source(i)) = colTypes(i)
      val schema = StructType(inputTypes.zipWithIndex.map { case (t, i) => StructField(s"f$i", t) })
      val toUnsafe = UnsafeProjection.create(schema)
      val writer = CanonicalLine.rowWriter(names, colTypes, source)
      for (_ <- 1 to 300) {
        val generic = new GenericInternalRow(inputTypes.map(randomValue(_, rnd)))
        val unsafe: InternalRow = toUnsafe(generic)
        assert(unsafe.isInstanceOf[UnsafeRow])
        val expected = text(writer.writeObject(generic, _))
        assert(text(writer.writeObject(unsafe, _)) == expected, s"types $colTypes")
        // after other bytes, as the aggregate's reused buffer holds them
        val out = new LineBuffer(3)
        out.appendAscii("{}{}{}")
        writer.writeObject(unsafe, out)
        assert(out.toString == "{}{}{}" + expected)
      }
    }
  }
}
