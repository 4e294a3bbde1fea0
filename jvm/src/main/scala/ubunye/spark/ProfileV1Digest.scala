package ubunye.spark

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest

/** The running state of profile-v1 over some rows (docs/rows-v1.md section 12): the rows-v1 numbers (row count,
  * the two sums of section 8), per column its nulls, nans and the two sums of its column lines (12.1), and per
  * bucket its count and the two sums of its rows' line hashes (12.2).
  *
  * `columns` holds 4 longs per column, in the order of the aggregate's arguments: nulls, nans, sum1, sum2.
  * `buckets` holds 3 longs per bucket: count, sum1, sum2 (empty when there are no buckets). Sums are plain Long
  * additions (wrapping modulo 2^64 whatever spark.sql.ansi.enabled says, as in RowsV1Digest). Numbers only:
  * the per-row working space is a ProfileV1Scratch.
  */
private[spark] final class ProfileV1Digest(
    val nColumns: Int,
    val nBuckets: Int,
    var rowCount: Long,
    var sum1: Long,
    var sum2: Long,
    val columns: Array[Long],
    val buckets: Array[Long]) {

  def this(nColumns: Int, nBuckets: Int) =
    this(nColumns, nBuckets, 0L, 0L, 0L, new Array[Long](4 * nColumns), new Array[Long](3 * nBuckets))

  def merge(other: ProfileV1Digest): this.type = {
    rowCount += other.rowCount
    sum1 += other.sum1
    sum2 += other.sum2
    var i = 0
    while (i < columns.length) { columns(i) += other.columns(i); i += 1 }
    i = 0
    while (i < buckets.length) { buckets(i) += other.buckets(i); i += 1 }
    this
  }

  /** The partial buffer that crosses the shuffle: count and sums, 32 bytes per column, 24 per bucket. */
  def toBytes: Array[Byte] = {
    val b = ByteBuffer.allocate(8 * (3 + columns.length + buckets.length))
    b.putLong(rowCount).putLong(sum1).putLong(sum2)
    b.asLongBuffer().put(columns).put(buckets)
    b.array()
  }

  /** Section 12.2's packed form: bucket i at byte 24 * i, count, sum1, sum2 as big-endian 64-bit integers. */
  def packedBuckets: Array[Byte] = {
    val b = ByteBuffer.allocate(8 * buckets.length)
    b.asLongBuffer().put(buckets)
    b.array()
  }
}

private[spark] object ProfileV1Digest {
  val MaxBuckets: Int = 65536

  def fromBytes(bytes: Array[Byte], nColumns: Int, nBuckets: Int): ProfileV1Digest = {
    val want = 8 * (3 + 4 * nColumns + 3 * nBuckets)
    if (bytes.length != want)
      throw new IllegalStateException(
        s"profile-v1: a partial buffer of ${bytes.length} bytes where $nColumns columns and $nBuckets buckets " +
          s"take $want")
    val b = ByteBuffer.wrap(bytes)
    val d = new ProfileV1Digest(nColumns, nBuckets, b.getLong, b.getLong, b.getLong,
      new Array[Long](4 * nColumns), new Array[Long](3 * nBuckets))
    val longs = b.asLongBuffer()
    longs.get(d.columns)
    longs.get(d.buckets)
    d
  }

  /** True for the bucket counts of section 12.2: a power of two from 1 to 65,536. */
  def validBuckets(n: Long): Boolean = n >= 1 && n <= MaxBuckets && (n & (n - 1)) == 0

  /** Section 12.2: bytes 28..31 of a SHA-256 as an unsigned 32-bit integer, mod N (`mask` = N - 1, N a power
    * of two, so the low bits are the remainder). */
  def bucketOf(hash: Array[Byte], mask: Int): Int = bucketBits(hash) & mask

  /** Bytes 28..31 of a SHA-256 as a 32-bit integer: its bucket under any bucket count is these bits & (N - 1). */
  def bucketBits(hash: Array[Byte]): Int =
    (hash(28) & 0xff) << 24 | (hash(29) & 0xff) << 16 | (hash(30) & 0xff) << 8 | (hash(31) & 0xff)

  /** The two halves (section 8) of the SHA-256 of the column line of a null value, `{}` (section 12.1). */
  val NullLine: (Long, Long) = {
    val b = ByteBuffer.wrap(MessageDigest.getInstance("SHA-256").digest("{}".getBytes(UTF_8)))
    (b.getLong(0), b.getLong(8))
  }

  /** bucketBits of that line, `{}`: also the key line of a one-column key whose value is null. */
  val NullLineBucket: Int = bucketBits(MessageDigest.getInstance("SHA-256").digest("{}".getBytes(UTF_8)))

  /** Section 12.1: `sha256:` + hex SHA-256 of "profile-v1-column\n" + json_name + "\n" + T + "\n" + count +
    * "\n" + hex16(sum1) + "\n" + hex16(sum2). */
  def fingerprint(name: String, typeName: String, rowCount: Long, sum1: Long, sum2: Long): String =
    "sha256:" + RowsV1Digest.sha256Hex(
      s"profile-v1-column\n${RowsV1Type.jsonString(name)}\n$typeName\n$rowCount\n" +
        s"${RowsV1Digest.hex16(sum1)}\n${RowsV1Digest.hex16(sum2)}")
}


/** The per-row working space of ubunye_profile_v1 (one per thread, not per aggregation buffer: a GROUP BY holds
  * many buffers at once, and none needs its own digest or memo): the digest, the row line and where its members
  * are, the key line, and each column's memo of recent values.
  */
private[spark] final class ProfileV1Scratch(nColumns: Int) {
  val sha: MessageDigest = MessageDigest.getInstance("SHA-256")
  val hash: Array[Byte] = new Array[Byte](32)
  val hashView: ByteBuffer = ByteBuffer.wrap(hash) // big-endian, as sections 8 and 12.2 read it
  val line = new LineBuffer(256)
  val keyLine = new LineBuffer(64)
  val starts: Array[Int] = new Array[Int](nColumns)
  val ends: Array[Int] = new Array[Int](nColumns)
  private val memos = new Array[LineMemo](nColumns)
  /** Columns whose memo was dropped (their values rarely repeat): they are hashed without one. */
  private val unmemoised = new Array[Boolean](nColumns)

  /** SHA-256 of `len` bytes of `bytes` from `off` into `hash`. */
  def digest(bytes: Array[Byte], off: Int, len: Int): Unit = {
    sha.update(bytes, off, len)
    sha.digest(hash, 0, 32)
  }

  /** The memo of column i, made on first use; null when the column is unmemoised. */
  def memo(i: Int): LineMemo = {
    val m = memos(i)
    if (m != null || unmemoised(i)) m
    else { val made = new LineMemo(LineMemo.slotsFor(nColumns)); memos(i) = made; made }
  }

  /** Called after each try of column i's memo: drops it when the last Trial tries found few repeats. */
  def checkMemo(i: Int, m: LineMemo): Unit =
    if (m.tries == LineMemo.Trial) {
      if (m.hits < LineMemo.Trial / 8) { memos(i) = null; unmemoised(i) = true }
      else { m.tries = 0; m.hits = 0 }
    }
}

/** A direct-mapped memo of column values to the two halves (section 8) of their column line's SHA-256, for
  * the columns that repeat values (flags, codes, dates): a SHA-256 costs about 80 ns even for a one-block
  * line, a lookup a fraction of that. A value is its JSON bytes after the column's `"name":` prefix; values
  * longer than MaxLen bytes are not memoised. A hit compares every byte, so the memo changes no number.
  */
private[spark] final class LineMemo(slots: Int) {
  private val mask = slots - 1
  private val keys = new Array[Byte](slots * LineMemo.MaxLen)
  private val lens = new Array[Int](slots) // 0: empty (a JSON value is never empty)
  private val as = new Array[Long](slots)
  private val bs = new Array[Long](slots)
  private val cs = new Array[Int](slots) // bucketBits of the line: the bucket of a one-column key's line
  var tries = 0
  var hits = 0

  /** The slot of these bytes. */
  def slot(bytes: Array[Byte], off: Int, len: Int): Int = {
    var h = len
    var i = off
    val end = off + len
    while (i < end) { h = h * 0x9e3779b1 + bytes(i); i += 1 }
    (h ^ (h >>> 15)) & mask
  }

  /** True when `slot` holds exactly these bytes. */
  def holds(slot: Int, bytes: Array[Byte], off: Int, len: Int): Boolean =
    lens(slot) == len && {
      val base = slot * LineMemo.MaxLen
      var i = 0
      while (i < len && keys(base + i) == bytes(off + i)) i += 1
      i == len
    }

  def a(slot: Int): Long = as(slot)
  def b(slot: Int): Long = bs(slot)
  def c(slot: Int): Int = cs(slot)

  def store(slot: Int, bytes: Array[Byte], off: Int, len: Int, a: Long, b: Long, c: Int): Unit = {
    System.arraycopy(bytes, off, keys, slot * LineMemo.MaxLen, len)
    lens(slot) = len
    as(slot) = a
    bs(slot) = b
    cs(slot) = c
  }
}

private[spark] object LineMemo {
  val MaxLen = 32
  /** A column's memo is dropped when fewer than an eighth of its last Trial tries were hits: its values rarely
    * repeat, and the lookups would only cost. */
  val Trial = 4096

  /** Slots per column: 4096, fewer for wide tables (at most 2^16 slots, ~3.4 MB, per thread). */
  def slotsFor(nColumns: Int): Int = {
    var n = 4096
    while (n > 64 && n.toLong * nColumns > 65536) n /= 2
    n
  }
}
