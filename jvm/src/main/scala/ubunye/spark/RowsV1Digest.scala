package ubunye.spark

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest

/** The running state of rows-v1 over some rows (docs/rows-v1.md sections 8 and 9): the row count and the two
  * sums. It owns one MessageDigest and one line buffer, reused for every row it adds.
  *
  * The sums are plain Long additions, which wrap modulo 2^64 on the JVM whatever spark.sql.ansi.enabled
  * says (no Catalyst Add is involved). A signed Long holds the same 64 bits as the unsigned sum.
  */
private[spark] final class RowsV1Digest(var rowCount: Long, var sum1: Long, var sum2: Long) {
  def this() = this(0L, 0L, 0L)

  private lazy val sha = MessageDigest.getInstance("SHA-256")
  private lazy val hash = new Array[Byte](32)
  private lazy val hashView = ByteBuffer.wrap(hash) // big-endian, as section 8 reads the halves
  lazy val line = new LineBuffer(256)

  /** Adds the row whose canonical line is in `line`. */
  def addLine(): Unit = {
    sha.update(line.bytes, 0, line.length)
    sha.digest(hash, 0, 32)
    sum1 += hashView.getLong(0)
    sum2 += hashView.getLong(8)
    rowCount += 1
  }

  def merge(other: RowsV1Digest): this.type = {
    rowCount += other.rowCount
    sum1 += other.sum1
    sum2 += other.sum2
    this
  }

  def toBytes: Array[Byte] = ByteBuffer.allocate(24).putLong(rowCount).putLong(sum1).putLong(sum2).array()
}

private[spark] object RowsV1Digest {
  def fromBytes(bytes: Array[Byte]): RowsV1Digest = {
    val b = ByteBuffer.wrap(bytes)
    new RowsV1Digest(b.getLong, b.getLong, b.getLong)
  }

  /** Section 9: `sha256:` + hex SHA-256 of "rows-v1\n" + schema + "\n" + count + "\n" + hex16 + "\n" + hex16. */
  def dataHash(schema: String, rowCount: Long, sum1: Long, sum2: Long): String =
    "sha256:" + sha256Hex(s"rows-v1\n$schema\n$rowCount\n${hex16(sum1)}\n${hex16(sum2)}")

  def hex16(x: Long): String = f"$x%016x" // the unsigned 64 bits, lower case

  def sha256Hex(text: String): String =
    MessageDigest.getInstance("SHA-256").digest(text.getBytes(UTF_8)).map(b => f"${b & 0xff}%02x").mkString
}
