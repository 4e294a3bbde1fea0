package ubunye.spark

import java.nio.charset.StandardCharsets.UTF_8
import java.util.Arrays

import org.apache.spark.unsafe.Platform

/** A growable UTF-8 byte buffer: the canonical line is written straight into it, then hashed from it.
  *
  * Strings arrive as UTF-8 bytes (Spark's UTF8String), so JSON escaping works on bytes: every byte of a
  * multi-byte UTF-8 sequence is >= 0x80, so it is never mistaken for `"`, `\` or a control character.
  */
private[spark] final class LineBuffer(initialCapacity: Int = 256) {
  private var buf = new Array[Byte](initialCapacity)
  private var len = 0

  def length: Int = len
  def bytes: Array[Byte] = buf
  def reset(): Unit = len = 0
  def toByteArray: Array[Byte] = Arrays.copyOf(buf, len)
  override def toString: String = new String(buf, 0, len, UTF_8)

  private def ensure(extra: Int): Unit =
    if (len + extra > buf.length) buf = Arrays.copyOf(buf, math.max(buf.length * 2, len + extra))

  def append(b: Int): Unit = {
    ensure(1)
    buf(len) = b.toByte
    len += 1
  }

  def append(src: Array[Byte], off: Int, n: Int): Unit = {
    ensure(n)
    System.arraycopy(src, off, buf, len, n)
    len += n
  }

  def append(src: Array[Byte]): Unit = append(src, 0, src.length)

  /** Appends the first `n` (at most 16) bytes of the 16 held by two words, as Platform.getLong read them from a
    * byte array (so the byte order is the machine's either way): two stores instead of an arraycopy, for the
    * member names (`,"name":`) of every row. Bytes past `n` are written too, in room ensured here, and are
    * overwritten by what comes next. */
  def appendWords(w0: Long, w1: Long, n: Int): Unit = {
    ensure(16)
    Platform.putLong(buf, Platform.BYTE_ARRAY_OFFSET + len, w0)
    Platform.putLong(buf, Platform.BYTE_ARRAY_OFFSET + len + 8, w1)
    len += n
  }

  /** Appends an ASCII-only string (numbers, dates, literals) byte by byte. */
  def appendAscii(s: String): Unit = {
    val n = s.length
    ensure(n)
    var i = 0
    while (i < n) { buf(len + i) = s.charAt(i).toByte; i += 1 }
    len += n
  }

  /** Appends the decimal text of `v`, digits written in place (no String per value). */
  def appendLong(v: Long): Unit =
    if (v == Long.MinValue) appendAscii("-9223372036854775808") // its negation does not fit a Long
    else {
      var x = v
      if (x < 0) { append('-'); x = -x }
      appendPadded(x, LineBuffer.digitCount(x))
    }

  /** Appends `true` or `false` as one store. */
  def appendBoolean(b: Boolean): Unit =
    if (b) appendWords(LineBuffer.TrueWord, 0L, 4) else appendWords(LineBuffer.FalseWord, 0L, 5)

  /** Appends `v` as exactly `width` decimal digits, zero-padded (v >= 0): its low `width` digits. Every date,
    * time, integer, decimal and double is written here or by put2, so this is the hottest code of the line
    * writer: eight digits at a time, each group made one word by LineBuffer.digits8 and written with one store. */
  def appendPadded(v: Long, width: Int): Unit = {
    ensure(width + 9)
    putDigits(v, width, len, Int.MaxValue)
    len += width
  }

  /** Writes the low `width` digits of `v` at `p` and on, with a gap at `point` (the digits from there on one
    * place to the right) when `point` is inside them. The groups of eight digits are written from the left, the
    * first (1 to 8 digits) as a whole word whose extra bytes the next group's word overwrites; the group the
    * gap falls in is written twice, whole at its place and its part after the gap one place to the right. Up to
    * nine bytes past the end are written: the caller has ensured room for them. */
  private def putDigits(v: Long, width: Int, p: Int, point: Int): Unit =
    if (width <= 8) putHead(p, (v % 100000000L).toInt, width, point)
    else if (width <= 16) {
      val q = v / 100000000L
      putHead(p, (q % 100000000L).toInt, width - 8, point)
      putGroup(p + width - 8, 8, LineBuffer.digits8((v - q * 100000000L).toInt), point)
    } else {
      val q = v / 100000000L
      val q2 = q / 100000000L
      putHead(p, (q2 % 100000000L).toInt, width - 16, point)
      putGroup(p + width - 16, 8, LineBuffer.digits8((q - q2 * 100000000L).toInt), point)
      putGroup(p + width - 8, 8, LineBuffer.digits8((v - q * 100000000L).toInt), point)
    }

  /** The low `n` (0 to 8) digits of `x` (0 to 99999999) at `p` (a group of putDigits). */
  private def putHead(p: Int, x: Int, n: Int, point: Int): Unit =
    if (n > 0) putGroup(p, n, LineBuffer.digits8(x) >>> (8 * (8 - n)), point) // the leading digits are the low bytes

  /** The `n` digits of `w` (putDigits' group at `p`): at `p`, or one place on when they are after the gap at
    * `point`, or split there. */
  private def putGroup(p: Int, n: Int, w: Long, point: Int): Unit =
    if (p + n <= point) putWord(p, w)
    else if (p >= point) putWord(p + 1, w)
    else {
      putWord(p, w)
      putWord(point + 1, w >>> (8 * (point - p)))
    }

  /** Eight bytes at `p`, the first in the low byte of `w` (the caller has ensured room). */
  private def putWord(p: Int, w: Long): Unit =
    Platform.putLong(buf, Platform.BYTE_ARRAY_OFFSET + p,
      if (LineBuffer.LittleEndian) w else java.lang.Long.reverseBytes(w))

  /** The two digits of `v` (0 to 99) at `p`: the caller has ensured room. */
  private def put2(p: Int, v: Int): Unit =
    Platform.putShort(buf, Platform.BYTE_ARRAY_OFFSET + p, LineBuffer.DigitPairs(v)) // one load, one store

  /** Appends `yyyy-MM-dd` (year 0 to 9999) with one bounds check: dates and timestamps are on most rows. */
  def appendYearMonthDay(year: Int, month: Int, day: Int): Unit = {
    ensure(10)
    val p = len
    put2(p, year / 100)
    put2(p + 2, year % 100)
    buf(p + 4) = '-'
    put2(p + 5, month)
    buf(p + 7) = '-'
    put2(p + 8, day)
    len += 10
  }

  /** Appends `HH:mm:ss.ffffff` of a second of the day (0 to 86399) and its microseconds (0 to 999999). */
  def appendTimeOfDay(secondOfDay: Int, micros: Int): Unit = {
    ensure(15)
    val p = len
    val hours = secondOfDay / 3600
    val secondOfHour = secondOfDay - 3600 * hours
    val minutes = secondOfHour / 60
    val high = micros / 10000
    val low = micros - 10000 * high
    val middle = low / 100
    put2(p, hours)
    buf(p + 2) = ':'
    put2(p + 3, minutes)
    buf(p + 5) = ':'
    put2(p + 6, secondOfHour - 60 * minutes)
    buf(p + 8) = '.'
    put2(p + 9, high)
    put2(p + 11, middle)
    put2(p + 13, low - 100 * middle)
    len += 15
  }

  /** Appends `v` as `width` digits (as appendPadded) with a `.` before the last `fraction` of them (0 <= fraction
    * < width). The digits go around the point as they are written (putDigits): splitting the number first would
    * divide by a power of ten not known in advance (a hardware division; divisions by constants are
    * multiplications). */
  def appendPointed(v: Long, width: Int, fraction: Int): Unit = {
    ensure(width + 10)
    val point = len + width - fraction
    putDigits(v, width, len, point)
    buf(point) = '.' // last: the words before it may have written over its place
    len += width + 1
  }

  /** Drops what was appended after `mark` (a length read earlier). */
  def truncate(mark: Int): Unit = len = mark

  /** Appends UTF-8 bytes as a JSON string with quotes (rows-v1 section 4). */
  def appendJsonString(src: Array[Byte], off: Int, n: Int): Unit = {
    append('"')
    appendEscaped(src, off, n)
    append('"')
  }

  def appendJsonString(src: Array[Byte]): Unit = appendJsonString(src, 0, src.length)

  /** Appends UTF-8 bytes escaped exactly as Jackson's JsonGenerator escapes them (no quotes). Returns whether
    * any byte was >= 0x80, so a caller can skip checking all-ASCII text for well-formed UTF-8. */
  def appendEscaped(src: Array[Byte], off: Int, n: Int): Boolean = {
    ensure(n)
    var i = off
    val end = off + n
    var high = 0L
    // Eight bytes at a time: a word none of whose bytes needs escaping (most text) is one load and one store.
    while (end - i >= 8) {
      val word = Platform.getLong(src, Platform.BYTE_ARRAY_OFFSET + i)
      if (!LineBuffer.needsEscape(word)) {
        if (len + 8 > buf.length) ensure(8)
        Platform.putLong(buf, Platform.BYTE_ARRAY_OFFSET + len, word)
        high |= word
        len += 8
      } else high |= escapeBytes(src, i, i + 8)
      i += 8
    }
    if (i < end) {
      if (n >= 8 && !LineBuffer.needsEscape(Platform.getLong(src, Platform.BYTE_ARRAY_OFFSET + end - 8))) {
        // The last eight bytes as one word too, when none needs escaping: the ones it shares with the eight
        // before are then the last bytes written, raw, so writing them again at the same places changes nothing.
        val word = Platform.getLong(src, Platform.BYTE_ARRAY_OFFSET + end - 8)
        ensure(8)
        Platform.putLong(buf, Platform.BYTE_ARRAY_OFFSET + len - (8 - (end - i)), word)
        high |= word
        len += end - i
      } else high |= escapeBytes(src, i, end)
    }
    (high & LineBuffer.HighBits) != 0
  }

  /** Appends bytes `from` until `to` one at a time, escaping those that need it; returns them OR'ed together. */
  private def escapeBytes(src: Array[Byte], from: Int, to: Int): Long = {
    var high = 0L
    var i = from
    while (i < to) {
      val b = src(i)
      high |= b
      // Raw: every byte of a multi-byte UTF-8 sequence (negative as a Java byte) and printable ASCII.
      if (b < 0 || (b >= 0x20 && b != '"' && b != '\\')) {
        if (len == buf.length) ensure(1)
        buf(len) = b
        len += 1
      } else {
        appendEscape(b)
      }
      i += 1
    }
    high
  }

  private def appendEscape(b: Byte): Unit = b match {
    case '"'  => append('\\'); append('"')
    case '\\' => append('\\'); append('\\')
    case 0x08 => append('\\'); append('b')
    case 0x09 => append('\\'); append('t')
    case 0x0a => append('\\'); append('n')
    case 0x0c => append('\\'); append('f')
    case 0x0d => append('\\'); append('r')
    case _ =>
      appendAscii("\\u00")
      append(LineBuffer.Hex(b >> 4))
      append(LineBuffer.Hex(b & 0xf))
  }
}

private[spark] object LineBuffer {
  /** The byte order of Platform.getLong and putLong: the machine's. */
  val LittleEndian: Boolean = java.nio.ByteOrder.nativeOrder == java.nio.ByteOrder.LITTLE_ENDIAN

  private final val Ones = 0x0101010101010101L
  private final val HighBits = 0x8080808080808080L

  /** Whether any of the eight bytes of `word` is a control character (< 0x20), `"` or `\\`: the bytes JSON
    * escapes. Exact (no false positives), by the "has a zero byte" test of Hacker's Delight 6-1: bytes >= 0x80
    * (UTF-8 sequences) are excluded by `~word`. */
  def needsEscape(word: Long): Boolean = {
    val control = (word - 0x20 * Ones) & ~word & HighBits
    val quote = word ^ ('"' * Ones)
    val backslash = word ^ ('\\' * Ones)
    (control | ((quote - Ones) & ~quote & HighBits) | ((backslash - Ones) & ~backslash & HighBits)) != 0
  }

  private val Pow10: Array[Long] = Array.iterate(1L, 19)(_ * 10)

  /** The eight ASCII digits of `x` (0 to 99999999, zero-padded) as one word, the first digit in its low byte.
    * SIMD within a register: x is split into two halves of four digits (32-bit lanes), each lane into two pairs
    * (16-bit lanes), each pair into two digits (bytes), every lane divided at once by multiplying by a
    * reciprocal and shifting: 10486 / 2^20 is 1/100 and 103 / 2^10 is 1/10 exactly enough for the lanes' ranges
    * (below 10^4 and below 100), and no lane's product reaches the next lane. FastPathSuite checks every x. */
  def digits8(x: Int): Long = {
    val high = x / 10000
    val z = high.toLong | ((x - 10000 * high).toLong << 32)
    val hundreds = ((z * 10486L) >>> 20) & 0x0000007f0000007fL
    val pairs = hundreds | ((z - 100 * hundreds) << 16)
    val tens = ((pairs * 103L) >>> 10) & 0x000f000f000f000fL
    (tens | ((pairs - 10 * tens) << 8)) + 0x3030303030303030L
  }

  /** The first eight and the next eight bytes of `bytes` (zero-padded to 16) as Platform.getLong reads them, for
    * appendWords. */
  def words(bytes: Array[Byte]): (Long, Long) = {
    val padded = Arrays.copyOf(bytes, 16)
    (Platform.getLong(padded, Platform.BYTE_ARRAY_OFFSET), Platform.getLong(padded, Platform.BYTE_ARRAY_OFFSET + 8))
  }
  private val TrueWord: Long = words("true".getBytes(UTF_8))._1
  private val FalseWord: Long = words("false".getBytes(UTF_8))._1

  /** The number of decimal digits of `x` (x >= 0; 1 for 0): from its bit length, as floor(bits log10(2)) is the
    * count or one less (ShortestDouble.flog10pow2), without a loop over the powers of ten. */
  def digitCount(x: Long): Int = {
    val n = ((64 - java.lang.Long.numberOfLeadingZeros(x)) * 661971961083L >> 41).toInt
    if (x >= Pow10(n)) n + 1 else math.max(n, 1) // n <= 18: x < 2^63
  }

  private val Hex: Array[Byte] = "0123456789ABCDEF".getBytes(UTF_8) // upper case, as Jackson writes
  /** "00" "01" ... "99": the two ASCII digits of i as Platform.getShort reads them from a byte array (so in the
    * machine's byte order, as put2 stores them). */
  private val DigitPairs: Array[Short] = Array.tabulate(100) { i =>
    Platform.getShort(Array[Byte](('0' + i / 10).toByte, ('0' + i % 10).toByte), Platform.BYTE_ARRAY_OFFSET)
  }

  /** Code point order of two UTF-8 byte strings (= unsigned lexicographic order of their bytes). Written out
    * rather than Arrays.compareUnsigned, which is Java 9+: the Spark 3.5 jars run on Java 8. */
  def compareUtf8(a: Array[Byte], aOff: Int, aLen: Int, b: Array[Byte], bOff: Int, bLen: Int): Int = {
    val n = math.min(aLen, bLen)
    var i = 0
    while (i < n) {
      val c = (a(aOff + i) & 0xff) - (b(bOff + i) & 0xff)
      if (c != 0) return c
      i += 1
    }
    aLen - bLen
  }

  def compareUtf8(a: Array[Byte], b: Array[Byte]): Int = compareUtf8(a, 0, a.length, b, 0, b.length)

  /** Sorts names by code point (rows-v1 section 2), NOT by Java's UTF-16 String.compareTo. */
  def codePointOrder(a: String, b: String): Boolean = compareUtf8(a.getBytes(UTF_8), b.getBytes(UTF_8)) < 0
}
