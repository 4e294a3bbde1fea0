package ubunye.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{DataType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/** `ubunye_canonical_line(col, ...)`: the rows-v1 canonical line of each row, as a string (a debugging aid:
  * diff it against another engine's lines). Same arguments, names and checks as `ubunye_rows_v1`. */
case class CanonicalLineExpression(children: Seq[Expression], names: Seq[String])
    extends Expression with CodegenFallback {

  override def prettyName: String = UbunyeFunctions.CanonicalLine
  override def nullable: Boolean = false
  override def dataType: DataType = StringType

  override def checkInputDataTypes(): TypeCheckResult =
    RowsV1Type.check(names, children.map(_.dataType)) match {
      case None      => TypeCheckResult.TypeCheckSuccess
      case Some(msg) => TypeCheckResult.TypeCheckFailure(s"$prettyName: $msg")
    }

  @transient private lazy val columns: Array[Expression] = children.toArray
  @transient private lazy val direct: Array[Int] = RowsV1Aggregate.boundOrdinals(columns)
  @transient private lazy val lineWriter = CanonicalLine.rowWriter(names, children.map(_.dataType), direct)

  override def eval(input: InternalRow): Any = {
    val line = new LineBuffer(256)
    lineWriter.writeObject(if (direct != null) input else RowsV1Aggregate.evalColumns(columns, input), line)
    UTF8String.fromBytes(line.toByteArray)
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): CanonicalLineExpression =
    copy(children = newChildren)

  override def stringArgs: Iterator[Any] = children.iterator
}
