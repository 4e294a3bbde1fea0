package ubunye.spark

import java.nio.charset.StandardCharsets.UTF_8
import java.time.LocalDate
import java.util.Base64

import scala.annotation.switch

import com.fasterxml.jackson.core.io.schubfach.FloatToDecimal
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{SpecializedGetters, UnsafeArrayData, UnsafeRow}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/** Writes one value of one Spark type as rows-v1 canonical JSON (docs/rows-v1.md sections 3 to 6).
  *
  * Values are read from Spark's internal representation through SpecializedGetters, the common interface of
  * InternalRow (columns, struct fields) and ArrayData (list elements, map keys and values). Writers hold no
  * mutable state: one tree serves every thread, all state is in the LineBuffer passed in.
  */
private[spark] abstract class ValueWriter extends Serializable {

  /** Appends the canonical JSON of the (non-null) value at `ordinal`. */
  def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit

  /** Appends the map key text (section 6): the canonical JSON, unquoted and unescaped when it is a JSON
    * string. The caller escapes it when it writes the member name. */
  def writeKeyText(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = write(in, ordinal, out)
}

/** A writer whose JSON is a string: `write` quotes and escapes what `writeKeyText` gives raw. */
private[spark] abstract class TextWriter extends ValueWriter {
  override def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = {
    out.append('"')
    writeEscaped(in, ordinal, out)
    out.append('"')
  }

  /** The text, escaped. Text that never needs escaping (digits, base64) overrides nothing. */
  protected def writeEscaped(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit =
    writeKeyText(in, ordinal, out)
}

private[spark] object CanonicalLine {

  /** The writer of a whole row: the columns as a JSON object with sorted keys, null columns left out. */
  def rowWriter(names: Seq[String], types: Seq[DataType], source: Array[Int] = null): StructWriter =
    new StructWriter(names.toArray, types.map(writer).toArray, source)

  /** The writer of one rows-v1 type. The type must have passed RowsV1Type.check. */
  def writer(dt: DataType): ValueWriter = dt match {
    case ByteType         => ByteWriter
    case ShortType        => ShortWriter
    case IntegerType      => IntWriter
    case LongType         => LongWriter
    case BooleanType      => BooleanWriter
    case FloatType        => FloatWriter
    case DoubleType       => DoubleWriter
    case d: DecimalType   => DecimalWriter(d.precision, d.scale)
    case _: CharType | _: VarcharType => StringWriter // before StringType: not its subclasses in Spark 3.5
    case _: StringType    => StringWriter
    case BinaryType       => BinaryWriter
    case DateType         => DateWriter
    case TimestampType    => TimestampWriter(zulu = true)
    case TimestampNTZType => TimestampWriter(zulu = false)
    case ArrayType(et, _) => ArrayWriter(writer(et))
    case MapType(kt, vt, _) => MapWriter(writer(kt), writer(vt))
    case st: StructType   => new StructWriter(st.fieldNames, st.fields.map(f => writer(f.dataType)))
    case other            => throw new IllegalArgumentException(s"rows-v1 has no encoding for ${other.simpleString}")
  }

  // One object per width rather than a getter function: a (SpecializedGetters, Int) => Long would box its
  // arguments and result on every value.
  object ByteWriter extends ValueWriter {
    def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = out.appendLong(in.getByte(ordinal).toLong)
  }
  object ShortWriter extends ValueWriter {
    def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = out.appendLong(in.getShort(ordinal).toLong)
  }
  object IntWriter extends ValueWriter {
    def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = out.appendLong(in.getInt(ordinal).toLong)
  }
  object LongWriter extends ValueWriter {
    def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = out.appendLong(in.getLong(ordinal))
  }

  object BooleanWriter extends ValueWriter {
    def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit =
      out.append(if (in.getBoolean(ordinal)) True else False)
    private val True = "true".getBytes(UTF_8)
    private val False = "false".getBytes(UTF_8)
  }

  /** Section 5.1: the shortest round-trip text of JDK 19+ Double.toString, layout and two-digit rule included,
    * on any JDK: this is what makes a JDK 17 cluster and a JDK 21 cluster write the same line. ShortestDouble
    * writes finite values in place; NaN and the infinities are JSON strings with Double.toString's words. */
  object DoubleWriter extends ValueWriter {
    def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = {
      val v = in.getDouble(ordinal)
      if (java.lang.Double.isFinite(v)) ShortestDouble.append(v, out)
      else { out.append('"'); appendNonFinite(v, out); out.append('"') }
    }
    override def writeKeyText(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = {
      val v = in.getDouble(ordinal)
      if (java.lang.Double.isFinite(v)) ShortestDouble.append(v, out) else appendNonFinite(v, out)
    }
    private def appendNonFinite(v: Double, out: LineBuffer): Unit =
      out.appendAscii(if (v.isNaN) "NaN" else if (v > 0) "Infinity" else "-Infinity")
  }

  /** Section 5.1 for floats: jackson-core's schubfach (shipped with Spark), the algorithm of JDK 19+
    * Float.toString, on any JDK. Its toString gives "NaN", "Infinity" and "-Infinity" for the non-finite
    * values; rows-v1 writes those as JSON strings. */
  object FloatWriter extends ValueWriter {
    def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = {
      val v = in.getFloat(ordinal)
      if (java.lang.Float.isFinite(v)) out.appendAscii(FloatToDecimal.toString(v))
      else { out.append('"'); out.appendAscii(FloatToDecimal.toString(v)); out.append('"') }
    }
    override def writeKeyText(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit =
      out.appendAscii(FloatToDecimal.toString(in.getFloat(ordinal)))
  }

  private val Pow10: Array[Long] = Array.iterate(1L, 19)(_ * 10)
  // The unscaled values appendCompact takes from a wide column: bitLength < 63, as the BigInteger path checks.
  private final val CompactMin = -(1L << 62)
  private final val CompactMax = 1L << 62

  /** Section 5.2: BigDecimal.toString at scale exactly s. */
  final case class DecimalWriter(precision: Int, scale: Int) extends ValueWriter {
    def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit =
      // Spark internals: UnsafeRow and UnsafeArrayData hold a decimal wider than 18 digits as the big-endian
      // two's complement bytes of its unscaled value at the column's scale (BigInteger.toByteArray, written by
      // UnsafeWriter; read back the same way by their getDecimal, Spark 3.5 to 4.3). Most values of a wide
      // column fit a Long: read those without the BigInteger, BigDecimal and Decimal getDecimal builds.
      // The bytes are read where they lie: the fixed-width slot holds their offset (from the row's or array's
      // base) and size, as getBinary reads them, without getBinary's copy.
      in match {
        case r: UnsafeRow if precision > 18       => writeWide(r.getBaseObject, r.getBaseOffset, r, ordinal, out)
        case a: UnsafeArrayData if precision > 18 => writeWide(a.getBaseObject, a.getBaseOffset, a, ordinal, out)
        case _                                    => writeGeneric(in, ordinal, out)
      }

    /** The wide decimal at `ordinal` of an UnsafeRow or UnsafeArrayData `in` whose bytes start at `base` +
      * `baseOffset`. */
    private def writeWide(base: AnyRef, baseOffset: Long, in: SpecializedGetters, ordinal: Int,
        out: LineBuffer): Unit = {
      val offsetAndSize = in.getLong(ordinal)
      val size = offsetAndSize.toInt
      if (size > 0 && size <= 8) {
        val unscaled = bigEndian(base, baseOffset + (offsetAndSize >> 32), size)
        if (unscaled >= CompactMin && unscaled < CompactMax) { appendCompact(unscaled, out); return }
      }
      writeGeneric(in, ordinal, out)
    }

    private def writeGeneric(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = {
      val d = in.getDecimal(ordinal, precision, scale)
      if (precision <= 18) appendCompact(d.toUnscaledLong, out)
      else {
        val raw = d.toJavaBigDecimal
        val bd = if (raw.scale == scale) raw else raw.setScale(scale)
        val unscaled = bd.unscaledValue
        // Most values of a wide column still fit a Long: format those without BigDecimal.toString.
        if (unscaled.bitLength < 63) appendCompact(unscaled.longValue, out) else out.appendAscii(bd.toString)
      }
    }

    /** The big-endian two's complement integer of `size` (1 to 8) bytes at `at`. */
    private def bigEndian(base: AnyRef, at: Long, size: Int): Long = {
      // One load of the eight bytes that end where the value ends (a loop over its bytes was a tenth of the
      // line's time). They lie inside the row or array: its variable-length part, where the value is, comes after
      // at least 16 bytes of null bits and fixed-width slots (an UnsafeArrayData's also after its 8-byte length).
      val word = Platform.getLong(base, at + size - 8)
      val value = if (LineBuffer.LittleEndian) java.lang.Long.reverseBytes(word) else word
      val drop = 64 - 8 * size
      (value << drop) >> drop // its low `size` bytes, sign-extended
    }

    /** BigDecimal.toString of unscaled x 10^-scale without a BigDecimal (the unscaled value fits a Long). */
    private def appendCompact(unscaled: Long, out: LineBuffer): Unit = {
      val abs = Math.abs(unscaled)
      if (scale <= 18 && abs >= Pow10(math.max(scale - 6, 0))) {
        // Plain notation (adjusted >= -6), digits written in place: the integer part (0 when abs < 10^scale),
        // point, `scale` digits.
        if (unscaled < 0) out.append('-')
        if (scale == 0) out.appendLong(abs)
        else if (abs >= Pow10(scale)) {
          out.appendPointed(abs, LineBuffer.digitCount(abs), scale)
        } else {
          out.append('0')
          out.append('.')
          out.appendPadded(abs, scale)
        }
        return
      }
      val digits = java.lang.Long.toString(abs)
      val n = digits.length
      val adjusted = n - 1 - scale
      if (unscaled < 0) out.append('-')
      if (adjusted >= -6) {
        if (scale == 0) out.appendAscii(digits)
        else if (n > scale) {
          out.appendAscii(digits.substring(0, n - scale))
          out.append('.')
          out.appendAscii(digits.substring(n - scale))
        } else {
          out.appendAscii("0.")
          var z = scale - n
          while (z > 0) { out.append('0'); z -= 1 }
          out.appendAscii(digits)
        }
      } else {
        out.append(digits.charAt(0).toInt)
        if (n > 1) { out.append('.'); out.appendAscii(digits.substring(1)) }
        out.append('E')
        out.appendLong(adjusted.toLong)
      }
    }
  }

  object StringWriter extends TextWriter {
    // Spark internals: a UTF8String is a (base object, offset, length) view; when the base is a byte[]
    // (on-heap rows, the usual case) its bytes are escaped in place without a copy.
    override protected def writeEscaped(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = {
      val s = in.getUTF8String(ordinal)
      val mark = out.length
      val nonAscii = s.getBaseObject match {
        case a: Array[Byte] => out.appendEscaped(a, (s.getBaseOffset - Platform.BYTE_ARRAY_OFFSET).toInt, s.numBytes)
        case _              => out.appendEscaped(s.getBytes, 0, s.numBytes)
      }
      // All-ASCII text is well-formed UTF-8: only text with a byte >= 0x80 is checked, and rewritten if it is not.
      if (nonAscii && !SparkCompat.isValidUtf8(s)) {
        out.truncate(mark)
        val fixed = valid(s).getBytes
        out.appendEscaped(fixed, 0, fixed.length)
      }
    }
    override def writeKeyText(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit =
      out.append(valid(in.getUTF8String(ordinal)).getBytes)

    /** `write` for a string column of an UnsafeRow (StructWriter's fast path): its bytes escaped where they lie
      * (the fixed-width slot holds their offset from the row's base and their size, as getUTF8String reads
      * them), without the UTF8String view. Text with a byte >= 0x80 is written again by `write`, which checks it. */
    def writeUnsafe(row: UnsafeRow, ordinal: Int, out: LineBuffer): Unit = row.getBaseObject match {
      case a: Array[Byte] =>
        val offsetAndSize = row.getLong(ordinal)
        val mark = out.length
        out.append('"')
        val at = row.getBaseOffset + (offsetAndSize >> 32) - Platform.BYTE_ARRAY_OFFSET
        if (out.appendEscaped(a, at.toInt, offsetAndSize.toInt)) { out.truncate(mark); write(row, ordinal, out) }
        else out.append('"')
      case _ => write(row, ordinal, out)
    }

    /** Bytes that are not UTF-8 are read as Java (and so Jackson, and to_json) reads them: U+FFFD. */
    private def valid(s: UTF8String): UTF8String =
      if (SparkCompat.isValidUtf8(s)) s else UTF8String.fromString(new String(s.getBytes, UTF_8))
  }

  object BinaryWriter extends TextWriter {
    override def writeKeyText(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit =
      out.append(Base64.getEncoder.encode(in.getBinary(ordinal)))
  }

  /** Days since 1970-01-01, proleptic Gregorian (Spark 3+): LocalDate.toString is section 5.3's layout. */
  object DateWriter extends TextWriter {
    override def writeKeyText(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit =
      appendDate(in.getInt(ordinal).toLong, out)
  }

  /** yyyy-MM-dd of a day since the epoch. Years 0..9999 by integer arithmetic (H. Hinnant's civil_from_days,
    * no allocation); other years through LocalDate.toString, which is section 5.3's rule for them. */
  def appendDate(epochDay: Long, out: LineBuffer): Unit =
    // 0000-03-01 (the start of era 0, where z = 0) to 9999-12-31: z >= 0 and everything fits an Int, so the
    // divisions are Int divisions by constants and no floorDiv is needed. Other days take the Long path.
    if (epochDay >= -719468L && epochDay <= 2932896L) {
      // C. Neri and L. Schneider, "Euclidean affine functions and applications to calendar algorithms" (2022),
      // their to-date algorithm with no shift (n >= 0 here): three divisions by constants instead of Hinnant's
      // ten. The year runs from March: days after February belong to the next calendar year.
      val n1 = 4 * (epochDay.toInt + 719468) + 3
      val century = n1 / 146097
      val p2 = 2939745L * (4 * (n1 % 146097 / 4) + 3)
      val dayOfYear = ((p2 & 0xffffffffL) / 2939745L / 4).toInt // 0 = March 1
      val n3 = 2141 * dayOfYear + 197913
      val late = dayOfYear >= 306 // January and February
      val year = 100 * century + (p2 >>> 32).toInt + (if (late) 1 else 0)
      out.appendYearMonthDay(year, if (late) (n3 >>> 16) - 12 else n3 >>> 16, (n3 & 0xffff) / 2141 + 1)
    } else appendDateLong(epochDay, out)

  private def appendDateLong(epochDay: Long, out: LineBuffer): Unit = {
    val z = epochDay + 719468L
    val era = Math.floorDiv(z, 146097L)
    val doe = z - era * 146097L
    val yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
    val doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    val mp = (5 * doy + 2) / 153
    val day = doy - (153 * mp + 2) / 5 + 1
    val month = if (mp < 10) mp + 3 else mp - 9
    val year = yoe + era * 400 + (if (month <= 2) 1 else 0)
    if (year >= 0 && year <= 9999) out.appendYearMonthDay(year.toInt, month.toInt, day.toInt)
    else out.appendAscii(LocalDate.ofEpochDay(epochDay).toString)
  }

  /** Microseconds since the epoch: of the instant (timestamp, written in UTC with `Z`) or of the wall clock
    * read as if in UTC (timestamp_ntz). The session time zone is never consulted. */
  final case class TimestampWriter(zulu: Boolean) extends TextWriter {
    override def writeKeyText(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit =
      appendTimestamp(in.getLong(ordinal), zulu, out)
  }

  /** The text of a timestamp (`zulu`: with `Z`) of `micros` since the epoch, unquoted. */
  def appendTimestamp(micros: Long, zulu: Boolean, out: LineBuffer): Unit = {
    // One division each, the remainders by multiplying back (a division by a constant is a multiplication
    // too, but a longer one): every timestamp of every row goes through here.
    val day = Math.floorDiv(micros, MicrosPerDay)
    val ofDay = micros - day * MicrosPerDay
    val second = (ofDay / 1000000L).toInt
    appendDate(day, out)
    out.append('T')
    out.appendTimeOfDay(second, (ofDay - second * 1000000L).toInt)
    if (zulu) out.append('Z')
  }
  private final val MicrosPerDay = 86400L * 1000000L

  final case class ArrayWriter(element: ValueWriter) extends ValueWriter {
    def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = {
      val a = in.getArray(ordinal)
      val n = a.numElements()
      out.append('[')
      var i = 0
      while (i < n) {
        if (i > 0) out.append(',')
        if (a.isNullAt(i)) out.appendAscii("null") else element.write(a, i, out)
        i += 1
      }
      out.append(']')
    }
  }

  /** Section 6: members named by the key text, sorted by key text then value JSON, both in code point
    * order (unsigned UTF-8 bytes). */
  final case class MapWriter(key: ValueWriter, value: ValueWriter) extends ValueWriter {
    def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit = {
      val m = in.getMap(ordinal)
      val keys = m.keyArray()
      val values = m.valueArray()
      val n = m.numElements()
      val entries = new Array[(Array[Byte], Array[Byte])](n)
      val tmp = new LineBuffer(64)
      var i = 0
      while (i < n) {
        if (keys.isNullAt(i)) throw new IllegalStateException("rows-v1: a map holds a null key")
        tmp.reset(); key.writeKeyText(keys, i, tmp)
        val k = tmp.toByteArray
        tmp.reset(); if (values.isNullAt(i)) tmp.appendAscii("null") else value.write(values, i, tmp)
        entries(i) = (k, tmp.toByteArray)
        i += 1
      }
      java.util.Arrays.sort(entries, EntryOrder)
      out.append('{')
      i = 0
      while (i < n) {
        if (i > 0) out.append(',')
        out.appendJsonString(entries(i)._1)
        out.append(':')
        out.append(entries(i)._2)
        i += 1
      }
      out.append('}')
    }
  }

  private object EntryOrder extends java.util.Comparator[(Array[Byte], Array[Byte])] with Serializable {
    def compare(a: (Array[Byte], Array[Byte]), b: (Array[Byte], Array[Byte])): Int = {
      val c = LineBuffer.compareUtf8(a._1, b._1)
      if (c != 0) c else LineBuffer.compareUtf8(a._2, b._2)
    }
  }
}

/** A JSON object of named fields (a row's columns or a struct's fields): keys sorted by code point, null
  * fields left out, `{}` when every field is null (sections 2, 3 and 6). */
private[spark] final class StructWriter(
    names: Array[String],
    writers: Array[ValueWriter],
    source: Array[Int] = null)
    extends ValueWriter {
  // `source`, when given, maps field i to the ordinal it is read from in the row handed to writeObject: the
  // aggregate reads its columns straight from Spark's input row (no boxed copy per row).
  /** Field ordinals in code point order of their names. */
  private[spark] val order: Array[Int] =
    names.indices.sortWith((a, b) => LineBuffer.codePointOrder(names(a), names(b))).toArray
  /** `"name":` for each ordinal, escaped once here. */
  private val keys: Array[Array[Byte]] = names.map(n => (RowsV1Type.jsonString(n) + ":").getBytes(UTF_8))
  /** `,"name":`: the members after the first, in one copy. */
  private val nextKeys: Array[Array[Byte]] = keys.map(k => ','.toByte +: k)

  def write(in: SpecializedGetters, ordinal: Int, out: LineBuffer): Unit =
    writeObject(in.getStruct(ordinal, names.length), out)

  // The fast path of writeObject, indexed by position k in `order` (not by field): the input ordinal, the kind
  // of value (StructWriter.kind), and the member names as words for LineBuffer.appendWords.
  private val ordinals: Array[Int] = order.map(i => if (source == null) i else source(i))
  private val kinds: Array[Int] = order.map(i => StructWriter.kind(writers(i)))
  private val sorted: Array[ValueWriter] = order.map(writers)
  private val firstWords: Array[Long] = order.flatMap(i => wordsOf(keys(i)))
  private val nextWords: Array[Long] = order.flatMap(i => wordsOf(nextKeys(i)))
  private val firstLengths: Array[Int] = order.map(keys(_).length)
  private val nextLengths: Array[Int] = order.map(nextKeys(_).length)
  private def wordsOf(b: Array[Byte]): Array[Long] = { val (w0, w1) = LineBuffer.words(b); Array(w0, w1) }
  /** Whether every member name fits two words and every ordinal the first word of an UnsafeRow's null bits (a
    * row of no fields has no null bits to read). */
  private val fast: Boolean = ordinals.nonEmpty && nextKeys.forall(_.length <= 16) && ordinals.forall(_ < 64)

  def writeObject(row: InternalRow, out: LineBuffer): Unit = row match {
    case u: UnsafeRow if fast => writeUnsafe(u, out)
    case _                    => writeGeneric(row, out)
  }

  /** writeObject of an UnsafeRow (the rows Spark hands an aggregate): one method for the whole row, each field
    * dispatched on its kind by a switch rather than by a virtual call of its writer (eight or so writer classes
    * at one call site is a megamorphic call the JIT cannot inline), its value read through the final class
    * UnsafeRow. Spark internals: UnsafeRow's null bits are the words at its start, bit j of the first word for
    * ordinal j < 64 (UnsafeRow.isNullAt); the first word is read once per row. */
  private def writeUnsafe(u: UnsafeRow, out: LineBuffer): Unit = {
    val nulls = Platform.getLong(u.getBaseObject, u.getBaseOffset)
    out.append('{')
    var first = true
    var k = 0
    while (k < ordinals.length) {
      val j = ordinals(k)
      if ((nulls & (1L << j)) == 0) {
        if (first) out.appendWords(firstWords(2 * k), firstWords(2 * k + 1), firstLengths(k))
        else out.appendWords(nextWords(2 * k), nextWords(2 * k + 1), nextLengths(k))
        first = false
        (kinds(k): @switch) match {
          case StructWriter.KindLong    => out.appendLong(u.getLong(j))
          case StructWriter.KindInt     => out.appendLong(u.getInt(j).toLong)
          case StructWriter.KindBoolean => out.appendBoolean(u.getBoolean(j))
          case StructWriter.KindDouble =>
            val v = u.getDouble(j)
            if (java.lang.Double.isFinite(v)) ShortestDouble.append(v, out)
            else CanonicalLine.DoubleWriter.write(u, j, out)
          case StructWriter.KindString => CanonicalLine.StringWriter.writeUnsafe(u, j, out)
          case StructWriter.KindDate =>
            out.append('"'); CanonicalLine.appendDate(u.getInt(j).toLong, out); out.append('"')
          case StructWriter.KindTimestamp =>
            out.append('"'); CanonicalLine.appendTimestamp(u.getLong(j), zulu = true, out); out.append('"')
          case StructWriter.KindTimestampNtz =>
            out.append('"'); CanonicalLine.appendTimestamp(u.getLong(j), zulu = false, out); out.append('"')
          case StructWriter.KindDecimal => sorted(k).asInstanceOf[CanonicalLine.DecimalWriter].write(u, j, out)
          case _                        => sorted(k).write(u, j, out)
        }
      }
      k += 1
    }
    out.append('}')
  }

  private def writeGeneric(row: InternalRow, out: LineBuffer): Unit = {
    out.append('{')
    var first = true
    var k = 0
    while (k < order.length) {
      val i = order(k)
      val j = if (source == null) i else source(i)
      if (!row.isNullAt(j)) {
        out.append(if (first) keys(i) else nextKeys(i))
        writers(i).write(row, j, out)
        first = false
      }
      k += 1
    }
    out.append('}')
  }

  /** writeObject that also records where each field's member (`"name":value`) lies in `out`: bytes
    * `starts(i)` until `ends(i)` for field i, `starts(i) = -1` when it is null. profile-v1 (docs/rows-v1.md
    * section 12) hashes a column line and a key line from these members of the row line, so no value is
    * written twice. The byte before a member is always `{` or `,`, the byte at `ends(i)` always `,` or `}`. */
  def writeMembers(row: InternalRow, out: LineBuffer, starts: Array[Int], ends: Array[Int]): Unit = {
    out.append('{')
    var first = true
    var k = 0
    while (k < order.length) {
      val i = order(k)
      val j = if (source == null) i else source(i)
      if (row.isNullAt(j)) starts(i) = -1
      else {
        if (!first) out.append(',')
        starts(i) = out.length
        out.append(keys(i))
        writers(i).write(row, j, out)
        ends(i) = out.length
        first = false
      }
      k += 1
    }
    out.append('}')
  }
}

private[spark] object StructWriter {
  // The kinds of value StructWriter's fast path writes itself; KindOther goes through the field's writer.
  final val KindOther = 0
  final val KindLong = 1
  final val KindInt = 2
  final val KindBoolean = 3
  final val KindDouble = 4
  final val KindString = 5
  final val KindDate = 6
  final val KindTimestamp = 7
  final val KindTimestampNtz = 8
  final val KindDecimal = 9

  def kind(w: ValueWriter): Int = w match {
    case CanonicalLine.LongWriter             => KindLong
    case CanonicalLine.IntWriter              => KindInt
    case CanonicalLine.BooleanWriter          => KindBoolean
    case CanonicalLine.DoubleWriter           => KindDouble
    case CanonicalLine.StringWriter           => KindString
    case CanonicalLine.DateWriter             => KindDate
    case CanonicalLine.TimestampWriter(true)  => KindTimestamp
    case CanonicalLine.TimestampWriter(false) => KindTimestampNtz
    case _: CanonicalLine.DecimalWriter       => KindDecimal
    case _                                    => KindOther
  }
}
