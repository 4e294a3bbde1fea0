package ubunye.spark

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/** The encoder of each rows-v1 type (docs/rows-v1.md sections 2 to 6), straight from internal rows. */
class CanonicalLineSuite extends AnyFunSuite {

  private def line(columns: (String, DataType, Any)*): String = {
    val out = new LineBuffer(8)
    val row = new GenericInternalRow(columns.map(_._3).toArray)
    CanonicalLine.rowWriter(columns.map(_._1), columns.map(_._2)).writeObject(row, out)
    out.toString
  }

  private def one(dt: DataType, value: Any): String = {
    val l = line(("x", dt, value))
    assert(l.startsWith("{\"x\":") && l.endsWith("}"), l)
    l.substring(5, l.length - 1)
  }

  private def s(v: String) = UTF8String.fromString(v)
  private def arr(values: Any*) = new GenericArrayData(values.toArray)
  private def map(entries: (Any, Any)*) = ArrayBasedMapData(entries.map(_._1).toArray, entries.map(_._2).toArray)

  test("columns sorted by code point, nulls left out, {} for an all-null row") {
    assert(line(("score", DoubleType, 0.5), ("name", StringType, s("Ana")), ("id", LongType, 1L)) ==
      """{"id":1,"name":"Ana","score":0.5}""")
    assert(line(("id", LongType, 2L), ("name", StringType, null)) == """{"id":2}""")
    assert(line(("a", LongType, null)) == "{}")
    assert(line() == "{}")
    // U+FF61 before U+1F600 (UTF-8 bytes); Java's String.compareTo would put the emoji first.
    assert(line(("\uD83D\uDE00", IntegerType, 1), ("\uFF61", IntegerType, 2)) == "{\"\uFF61\":2,\"\uD83D\uDE00\":1}")
  }

  test("integers and booleans") {
    assert(one(ByteType, (-42).toByte) == "-42")
    assert(one(ShortType, 32767.toShort) == "32767")
    assert(one(IntegerType, Int.MinValue) == "-2147483648")
    assert(one(LongType, Long.MinValue) == "-9223372036854775808")
    assert(one(BooleanType, true) == "true")
    assert(one(BooleanType, false) == "false")
  }

  test("doubles and floats: shortest digits, JDK 19+ layout, non-finite as strings") {
    val doubles = Seq(
      1e23 -> "1.0E23", 2.82879384806159e17 -> "2.82879384806159E17",
      1.9400994884341945e25 -> "1.9400994884341945E25", java.lang.Double.MIN_VALUE -> "4.9E-324",
      1e-323 -> "9.9E-324", 0.1 -> "0.1", -0.0 -> "-0.0", 0.0 -> "0.0", 1.0 -> "1.0", 1e7 -> "1.0E7",
      9999999.0 -> "9999999.0", 1e-3 -> "0.001", 1e-4 -> "1.0E-4", 1234567.0 -> "1234567.0", 123.456 -> "123.456",
      Double.NaN -> "\"NaN\"", Double.PositiveInfinity -> "\"Infinity\"", Double.NegativeInfinity -> "\"-Infinity\"")
    doubles.foreach { case (v, text) => assert(one(DoubleType, v) == text, s"double $v") }
    assert(one(DoubleType, java.lang.Double.longBitsToDouble(0x7ff8000000000123L)) == "\"NaN\"")
    val floats = Seq(java.lang.Float.MIN_VALUE -> "1.4E-45", 0.1f -> "0.1", -0.0f -> "-0.0", 1e10f -> "1.0E10",
      Float.NaN -> "\"NaN\"", Float.NegativeInfinity -> "\"-Infinity\"")
    floats.foreach { case (v, text) => assert(one(FloatType, v) == text, s"float $v") }
  }

  test("decimals: BigDecimal.toString at scale s") {
    def dec(v: String, p: Int, sc: Int) = one(DecimalType(p, sc), Decimal(BigDecimal(v), p, sc))
    assert(dec("0", 38, 18) == "0E-18")
    assert(dec("0", 38, 10) == "0E-10")
    assert(dec("1.5", 5, 2) == "1.50")
    assert(dec("7", 3, 0) == "7")
    assert(dec("0.000001", 10, 6) == "0.000001")
    assert(dec("0.0000000123", 20, 10) == "1.23E-8")
    assert(dec("-0.0000001", 10, 7) == "-1E-7")
    assert(dec("99999999999999999999999999999999999999", 38, 0) == "99999999999999999999999999999999999999")
  }

  test("strings: Jackson's escaping, upper-case hex, raw UTF-8") {
    assert(one(StringType, s("a\"b\\c\t\u0001\uD83D\uDE00")) == "\"a\\\"b\\\\c\\t\\u0001\uD83D\uDE00\"")
    assert(one(StringType, s("\b\f\n\r\u0000\u001f/\u007f\u2028")) == "\"\\b\\f\\n\\r\\u0000\\u001F/\u007f\u2028\"")
    // A string that is a slice of a bigger buffer (as in UnsafeRow) is read from its own offset only.
    val big = "xx\"hé\"yy".getBytes(UTF_8)
    assert(one(StringType, UTF8String.fromBytes(big, 2, 5)) == "\"\\\"hé\\\"\"")
    // Bytes that are not UTF-8 are read as Java reads them (U+FFFD), as to_json does.
    assert(one(StringType, UTF8String.fromBytes(Array[Byte]('a', 0xff.toByte))) == "\"a\uFFFD\"")
  }

  test("invalid UTF-8: one U+FFFD per maximal subpart, an encoded surrogate is one (section 4.1)") {
    def bytes(hex: String) = UTF8String.fromBytes(hex.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray)
    val r = "\uFFFD"
    val table = Seq(
      "61FF62" -> s"a${r}b", "C3" -> r, "E282" -> r, "E28241" -> s"${r}A", "808080" -> r * 3, "C080" -> r * 2,
      "E08080" -> r * 3, "F0808080" -> r * 4, "F4908080" -> r * 4, "F0908080" -> "\uD800\uDC00",
      // Unlike Unicode's recommended practice (Python, WHATWG, UTF8String.makeValid: three U+FFFD for ED A0 80).
      "EDA080" -> r, "EDBFBF" -> r, "EDA080EDB080" -> r * 2, "EDA0" -> r, "EDA041" -> s"${r}A")
    for ((hex, text) <- table) assert(one(StringType, bytes(hex)) == "\"" + text + "\"", hex)
    // Map keys are read the same way before they are sorted; equal key texts are ordered by value.
    val keys = map(bytes("EDA080") -> 3, s("a") -> 0, bytes("C3") -> 2)
    assert(one(MapType(StringType, IntegerType), keys) == s"""{"a":0,"$r":2,"$r":3}""")
  }

  test("binary, dates, timestamps") {
    assert(one(BinaryType, Array[Byte](0, 1, 0xff.toByte)) == "\"AAH/\"")
    assert(one(BinaryType, Array.emptyByteArray) == "\"\"")
    def days(y: Int, m: Int, d: Int) = java.time.LocalDate.of(y, m, d).toEpochDay.toInt
    assert(one(DateType, days(2024, 2, 29)) == "\"2024-02-29\"")
    assert(one(DateType, days(10000, 1, 1)) == "\"+10000-01-01\"")
    assert(one(DateType, days(-1, 12, 31)) == "\"-0001-12-31\"")
    assert(one(DateType, days(1, 1, 1)) == "\"0001-01-01\"")
    val noon = java.time.Instant.parse("2024-01-01T10:00:00Z").getEpochSecond * 1000000L
    assert(one(TimestampType, noon) == "\"2024-01-01T10:00:00.000000Z\"")
    assert(one(TimestampType, noon + 123456) == "\"2024-01-01T10:00:00.123456Z\"")
    assert(one(TimestampType, -1L) == "\"1969-12-31T23:59:59.999999Z\"")
    assert(one(TimestampNTZType, noon + 7) == "\"2024-01-01T10:00:00.000007\"")
    val ancient = java.time.LocalDateTime.of(-44, 3, 15, 1, 2, 3).toEpochSecond(java.time.ZoneOffset.UTC) * 1000000L
    assert(one(TimestampNTZType, ancient) == "\"-0044-03-15T01:02:03.000000\"")
  }

  test("lists, structs, maps") {
    assert(one(ArrayType(LongType), arr(1L, null, 3L)) == "[1,null,3]")
    assert(one(ArrayType(LongType), arr()) == "[]")
    val st = StructType(Seq(StructField("z", IntegerType), StructField("a", IntegerType)))
    assert(one(st, InternalRow(1, null)) == """{"z":1}""")
    assert(one(st, InternalRow(null, null)) == "{}")
    // Spec section 6's example: c: list<struct<m:map<string,list<int64>>>>
    val c = ArrayType(StructType(Seq(StructField("m", MapType(StringType, ArrayType(LongType))))))
    val m = map(s("b") -> arr(), s("a") -> arr(1L, null))
    assert(one(c, arr(InternalRow(m), InternalRow(null), null)) == """[{"m":{"a":[1,null],"b":[]}},{},null]""")
  }

  test("map members: key text, sorted by key text then value, null values written") {
    assert(one(MapType(IntegerType, StringType), map(10 -> s("ten"), 2 -> s("two"), -1 -> null)) ==
      """{"-1":null,"10":"ten","2":"two"}""")
    assert(one(MapType(StringType, IntegerType), map(s("\uD83D\uDE00") -> 1, s("\uFF61") -> 2, s("a") -> 3)) ==
      "{\"a\":3,\"\uFF61\":2,\"\uD83D\uDE00\":1}")
    // Key text is the unescaped text; it is escaped once as the member name, and sorted before escaping.
    assert(one(MapType(StringType, IntegerType), map(s("!") -> 1, s("\t") -> 2, s("a\"b") -> 3)) ==
      "{\"\\t\":2,\"!\":1,\"a\\\"b\":3}")
    assert(one(MapType(DoubleType, IntegerType), map(1.5 -> 1, Double.NaN -> 2)) == """{"1.5":1,"NaN":2}""")
    assert(one(MapType(DateType, IntegerType), map(19723 -> 1)) == """{"2024-01-01":1}""")
    val key = StructType(Seq(StructField("a", IntegerType)))
    assert(one(MapType(key, StringType), map(InternalRow(1) -> s("x"))) == """{"{\"a\":1}":"x"}""")
    // Duplicate keys (possible in Spark's internal maps) sort by value.
    assert(one(MapType(StringType, IntegerType), map(s("k") -> 2, s("k") -> 1)) == """{"k":1,"k":2}""")
    val err = intercept[IllegalStateException](one(MapType(StringType, IntegerType), map((null, 1))))
    assert(err.getMessage.contains("null key"))
  }
}
