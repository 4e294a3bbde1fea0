package ubunye.spark

import java.security.MessageDigest

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{DataType, IntegerType}

/** `ubunye_bucket_v1(col, ..., n_buckets)`: the profile-v1 bucket (docs/rows-v1.md section 12.2) of the key line
  * made of the argument columns, an int from 0 to n_buckets - 1. Deterministic, so usable in a WHERE clause to
  * read the rows of one bucket of `ubunye_profile_v1(n_buckets, array(<the same names>), ...)`.
  *
  * `children` are the key columns then the bucket count (an integer literal, a power of two from 1 to 65,536);
  * `names` are the key columns' names, fixed from the argument expressions when the function is built.
  */
case class BucketV1Expression(children: Seq[Expression], names: Seq[String])
    extends Expression with CodegenFallback {

  override def prettyName: String = UbunyeFunctions.BucketV1
  override def nullable: Boolean = false
  override def dataType: DataType = IntegerType

  private def keyExprs: Seq[Expression] = children.dropRight(1)

  override def checkInputDataTypes(): TypeCheckResult = {
    val problem =
      if (children.length < 2)
        Some("needs at least one key column and the bucket count: ubunye_bucket_v1(col, ..., n_buckets), " +
          "e.g. ubunye_bucket_v1(id, 256)")
      else
        ProfileV1Aggregate.bucketCount(children.last, allowZero = false).left.toOption
          .orElse(RowsV1Type.check(names, keyExprs.map(_.dataType)))
    problem match {
      case None      => TypeCheckResult.TypeCheckSuccess
      case Some(msg) => TypeCheckResult.TypeCheckFailure(s"$prettyName: $msg")
    }
  }

  @transient private lazy val mask: Int =
    ProfileV1Aggregate.bucketCount(children.last, allowZero = false)
      .fold(e => throw new IllegalStateException(e), identity) - 1
  @transient private lazy val columns: Array[Expression] = keyExprs.toArray
  @transient private lazy val direct: Array[Int] = RowsV1Aggregate.boundOrdinals(columns)
  @transient private lazy val lineWriter = CanonicalLine.rowWriter(names, columns.map(_.dataType).toSeq, direct)

  override def eval(input: InternalRow): Any = {
    val s = BucketV1Expression.scratch.get() // one line buffer and digest per thread, nothing new per row
    val line = s.line
    line.reset()
    lineWriter.writeObject(if (direct != null) input else RowsV1Aggregate.evalColumns(columns, input), line)
    s.sha.update(line.bytes, 0, line.length)
    s.sha.digest(s.hash, 0, 32)
    ProfileV1Digest.bucketOf(s.hash, mask)
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): BucketV1Expression =
    copy(children = newChildren)

  override def stringArgs: Iterator[Any] = children.iterator
}

object BucketV1Expression {
  private final class Scratch {
    val line = new LineBuffer(128)
    val sha: MessageDigest = MessageDigest.getInstance("SHA-256")
    val hash = new Array[Byte](32)
  }

  // A ThreadLocal rather than state in the expression: one expression object may be evaluated by several
  // threads (a broadcast plan, a shared subquery), and per-row allocation is what this avoids.
  private val scratch: ThreadLocal[Scratch] = new ThreadLocal[Scratch] {
    override def initialValue(): Scratch = new Scratch
  }
}
