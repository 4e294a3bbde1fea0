package ubunye.spark

import java.math.BigInteger

/** Section 5.1's text of a finite double, written straight into the line: the shortest decimal that rounds to
  * the double (the closer one when two are as short, then the even one), in the layout of JDK 19+
  * Double.toString (plain from 10^-3 up to 10^7, else `d.dddE±n`; at least one digit after the point).
  *
  * The algorithm is Schubfach (R. Giulietti, "The Schubfach way to render doubles", 2020), the one JDK 19+ and
  * jackson-core's `DoubleToDecimal` run. jackson's gives a new String per value, which was a fifth of the
  * aggregate's time on a table with one double column (docs/performance.md); this one writes digits in place.
  * NumberFormatSuite compares the two, and the JDK's own Double.toString, on every class of double.
  */
private[spark] object ShortestDouble {
  private final val Precision = 53
  private final val QMin = -1074 // the exponent of the subnormals
  private final val CMin = 1L << 52 // the significand of a power of two (its lower neighbour is closer)
  private final val CTiny = 3L // subnormal significands below this have a one-digit shortest decimal
  private final val KMin = -324 // flog10pow2(QMin)
  private final val KMax = 292 // flog10pow2(971), 971 the exponent of Double.MaxValue
  private final val Mask63 = (1L << 63) - 1

  /** floor(e log10(2)), for |e| <= 6432 (the constant is log10(2) 2^41, rounded). */
  private[spark] def flog10pow2(e: Int): Int = ((e * 661971961083L) >> 41).toInt

  /** floor(e log10(2) + log10(3/4)), for |e| <= 3000: the decade of 3/4 2^e. */
  private[spark] def flog10threeQuartersPow2(e: Int): Int = ((e * 661971961083L - 274743187321L) >> 41).toInt

  /** floor(e log2(10)), for |e| <= 1233. */
  private[spark] def flog2pow10(e: Int): Int = ((e * 913124641741L) >> 38).toInt

  /** For each k from KMin to KMax, g = floor(beta) + 1 where 10^-k = beta 2^r and 2^125 <= beta < 2^126, as its
    * upper 63 bits (at 2(k - KMin)) and lower 63 bits (at 2(k - KMin) + 1). Derived here with exact integer
    * arithmetic rather than carried as a table of constants. */
  private val G: Array[Long] = {
    val table = new Array[Long](2 * (KMax - KMin + 1))
    val low63 = BigInteger.ONE.shiftLeft(63).subtract(BigInteger.ONE)
    var k = KMin
    while (k <= KMax) {
      val e = -k // beta = 10^e 2^(125 - flog2pow10(e))
      val shift = 125 - flog2pow10(e)
      val beta =
        if (e >= 0) {
          val p = BigInteger.TEN.pow(e)
          if (shift >= 0) p.shiftLeft(shift) else p.shiftRight(-shift)
        } else BigInteger.ONE.shiftLeft(shift).divide(BigInteger.TEN.pow(-e))
      val g = beta.add(BigInteger.ONE)
      table(2 * (k - KMin)) = g.shiftRight(63).longValueExact()
      table(2 * (k - KMin) + 1) = g.and(low63).longValueExact()
      k += 1
    }
    table
  }

  /** g cp / 2^127, rounded to odd (the paper's r_o'): the lowest bit says whether anything was cut off. */
  private def roundToOdd(g1: Long, g0: Long, cp: Long): Long = {
    val x1 = SparkCompat.multiplyHigh(g0, cp)
    val y0 = g1 * cp
    val y1 = SparkCompat.multiplyHigh(g1, cp)
    val z = (y0 >>> 1) + x1
    val vbp = y1 + (z >>> 63)
    vbp | (((z & Mask63) + Mask63) >>> 63)
  }

  /** Appends the text of `v`, which must be finite (NaN and the infinities are the caller's). */
  def append(v: Double, out: LineBuffer): Unit = {
    val bits = java.lang.Double.doubleToRawLongBits(v)
    if (bits < 0) out.append('-')
    val t = bits & (CMin - 1)
    val bq = (bits >>> 52).toInt & 0x7ff
    if (bq != 0) {
      val mq = 1075 - bq // v = c 2^-mq
      val c = CMin | t
      if (0 < mq && mq < Precision) {
        // An integer below 2^53: its own digits are the shortest (its neighbours are at most 1 away).
        val f = c >> mq
        if (f << mq == c) { appendDecimal(f, 0, out); return }
      }
      appendShortest(-mq, c, 0, out)
    } else if (t != 0) {
      // The smallest subnormals: ten times the significand and one decade less, so that a one-digit decimal
      // gets its second digit (the JDK's two-digit rule: 4.9E-324, not 5.0E-324).
      if (t < CTiny) appendShortest(QMin, 10 * t, -1, out) else appendShortest(QMin, t, 0, out)
    } else out.appendAscii("0.0")
  }

  /** The shortest decimal in the rounding interval of c 2^q (the paper's figure 7, computed as its figure 9). */
  private def appendShortest(q: Int, c: Long, dk: Int, out: LineBuffer): Unit = {
    // The interval is closed when c is even (round half to even gives its ends to c 2^q).
    val odd = c.toInt & 1
    val cb = c << 2
    val cbr = cb + 2
    var cbl = 0L
    var k = 0
    if (c != CMin || q == QMin) {
      cbl = cb - 2
      k = flog10pow2(q)
    } else {
      // A power of two: the gap below it is half the gap above it.
      cbl = cb - 1
      k = flog10threeQuartersPow2(q)
    }
    val h = q + flog2pow10(-k) + 2
    val g1 = G(2 * (k - KMin))
    val g0 = G(2 * (k - KMin) + 1)
    val vb = roundToOdd(g1, g0, cb << h)
    val vbl = roundToOdd(g1, g0, cbl << h)
    val vbr = roundToOdd(g1, g0, cbr << h)
    val s = vb >> 2
    if (s >= 100) {
      // One digit fewer: s' = floor(s / 10) as a multiply (the paper's section 10 table, n = 17, m = 1).
      val sp = SparkCompat.multiplyHigh(s, 115292150460684698L << 4)
      val sp10 = 10 * sp
      val tp10 = sp10 + 10
      val upin = vbl + odd <= (sp10 << 2)
      val wpin = (tp10 << 2) + odd <= vbr
      // s' 10^(k+1) rather than 10 s' 10^k: the same number, one trailing zero fewer for appendDecimal to strip.
      if (upin != wpin) { appendDecimal(if (upin) sp else sp + 1, k + 1, out); return }
    }
    val tt = s + 1
    val uin = vbl + odd <= (s << 2)
    val win = (tt << 2) + odd <= vbr
    if (uin != win) { appendDecimal(if (uin) s else tt, k + dk, out); return }
    // Both s and s + 1 round to v: the closer, or the even one on a tie.
    val cmp = vb - ((s + tt) << 1)
    appendDecimal(if (cmp < 0 || (cmp == 0 && (s & 1) == 0)) s else tt, k + dk, out)
  }

  /** Appends f 10^e (f > 0) in Double.toString's layout, trailing zeros of f dropped. */
  private def appendDecimal(f0: Long, e0: Int, out: LineBuffer): Unit = {
    var f = f0
    var e = e0
    while (f % 10 == 0) { f /= 10; e += 1 }
    val n = LineBuffer.digitCount(f)
    val exponent = n - 1 + e // f 10^e = d.ddd 10^exponent
    if (exponent >= 0 && exponent < 7) {
      if (e >= 0) {
        out.appendPadded(f, n)
        var z = e
        while (z > 0) { out.append('0'); z -= 1 }
        out.append('.')
        out.append('0')
      } else {
        out.appendPointed(f, n, -e)
      }
    } else if (exponent < 0 && exponent >= -3) {
      out.append('0')
      out.append('.')
      var z = -exponent - 1
      while (z > 0) { out.append('0'); z -= 1 }
      out.appendPadded(f, n)
    } else {
      if (n == 1) { out.appendPadded(f, 1); out.append('.'); out.append('0') } else out.appendPointed(f, n, n - 1)
      out.append('E')
      out.appendLong(exponent.toLong)
    }
  }
}
