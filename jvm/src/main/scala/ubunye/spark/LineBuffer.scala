package ubunye.spark

import java.nio.charset.StandardCharsets.UTF_8
import java.util.Arrays

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
      var width = 1
      var p = 10L
      while (width < 19 && x >= p) { width += 1; p *= 10 }
      appendPadded(x, width)
    }

  /** Appends `v` as exactly `width` decimal digits, zero-padded (v >= 0): its low `width` digits. Two digits per
    * step from a table, in Int arithmetic while the value fits (dates, times and most numbers are written here,
    * so this loop is the hottest code of the line writer). */
  def appendPadded(v: Long, width: Int): Unit = {
    ensure(width)
    var i = len + width
    var x = v
    while (x > Int.MaxValue && i > len) { i -= 1; buf(i) = ('0' + (x % 10)).toByte; x /= 10 }
    var y = x.toInt
    while (i - 2 >= len) {
      val r = (y % 100) << 1
      y /= 100
      i -= 2
      buf(i) = LineBuffer.DigitPairs(r)
      buf(i + 1) = LineBuffer.DigitPairs(r + 1)
    }
    if (i > len) buf(len) = ('0' + (y % 10)).toByte
    len += width
  }

  /** The two digits of `v` (0 to 99) at `p`: the caller has ensured room. */
  private def put2(p: Int, v: Int): Unit = {
    val r = v << 1
    buf(p) = LineBuffer.DigitPairs(r)
    buf(p + 1) = LineBuffer.DigitPairs(r + 1)
  }

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
    put2(p, secondOfDay / 3600)
    buf(p + 2) = ':'
    put2(p + 3, secondOfDay / 60 % 60)
    buf(p + 5) = ':'
    put2(p + 6, secondOfDay % 60)
    buf(p + 8) = '.'
    put2(p + 9, micros / 10000)
    put2(p + 11, micros / 100 % 100)
    put2(p + 13, micros % 100)
    len += 15
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
    var high = 0
    while (i < end) {
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
    high < 0
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
  private val Hex: Array[Byte] = "0123456789ABCDEF".getBytes(UTF_8) // upper case, as Jackson writes
  /** "00" "01" ... "99": the two ASCII digits of i at 2i and 2i + 1. */
  private val DigitPairs: Array[Byte] = Array.tabulate(200)(i => ('0' + (if (i % 2 == 0) i / 20 else i / 2 % 10)).toByte)

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
