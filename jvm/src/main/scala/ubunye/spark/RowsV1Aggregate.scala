package ubunye.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression, GenericInternalRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** `ubunye_rows_v1(col, ...)`: the rows-v1 fingerprint of the rows it aggregates (docs/rows-v1.md).
  *
  * Returns struct<row_count: bigint, sum1: bigint, sum2: bigint, data_hash: string>. Variadic: `ubunye_rows_v1(*)`
  * hashes every column. `names` are the column names, fixed when the function is built from the argument
  * expressions (see UbunyeFunctions.columnName), so later rewrites of the children (alias clean-up) cannot
  * change them.
  *
  * A TypedImperativeAggregate: each aggregation buffer is a RowsV1Digest with its own MessageDigest, and the
  * partial buffers that cross the shuffle are 24 bytes (count and the two sums).
  */
case class RowsV1Aggregate(
    children: Seq[Expression],
    names: Seq[String],
    mutableAggBufferOffset: Int = 0,
    inputAggBufferOffset: Int = 0)
    extends TypedImperativeAggregate[RowsV1Digest] {

  override def prettyName: String = UbunyeFunctions.RowsV1
  override def nullable: Boolean = false
  override def dataType: DataType = RowsV1Aggregate.ResultType

  override def checkInputDataTypes(): TypeCheckResult =
    RowsV1Type.check(names, children.map(_.dataType)) match {
      case None      => TypeCheckResult.TypeCheckSuccess
      case Some(msg) => TypeCheckResult.TypeCheckFailure(s"$prettyName: $msg")
    }

  /** The schema string of section 7. */
  @transient lazy val schema: String = RowsV1Type.schemaString(names, children.map(_.dataType))
  @transient private lazy val columns: Array[Expression] = children.toArray
  // Spark internals: by the time update() runs, the children are bound to the input row; plain column
  // references (the `*` case) are BoundReferences, read in place by ordinal instead of evaluated and boxed.
  @transient private lazy val direct: Array[Int] = RowsV1Aggregate.boundOrdinals(columns)
  @transient private lazy val lineWriter = CanonicalLine.rowWriter(names, children.map(_.dataType), direct)

  override def createAggregationBuffer(): RowsV1Digest = new RowsV1Digest()

  override def update(buffer: RowsV1Digest, input: InternalRow): RowsV1Digest = {
    val line = buffer.line
    line.reset()
    lineWriter.writeObject(if (direct != null) input else RowsV1Aggregate.evalColumns(columns, input), line)
    buffer.addLine()
    buffer
  }

  override def merge(buffer: RowsV1Digest, input: RowsV1Digest): RowsV1Digest = buffer.merge(input)

  override def eval(buffer: RowsV1Digest): Any = InternalRow(
    buffer.rowCount,
    buffer.sum1,
    buffer.sum2,
    UTF8String.fromString(RowsV1Digest.dataHash(schema, buffer.rowCount, buffer.sum1, buffer.sum2)))

  override def serialize(buffer: RowsV1Digest): Array[Byte] = buffer.toBytes
  override def deserialize(bytes: Array[Byte]): RowsV1Digest = RowsV1Digest.fromBytes(bytes)

  override def withNewMutableAggBufferOffset(offset: Int): RowsV1Aggregate = copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): RowsV1Aggregate = copy(inputAggBufferOffset = offset)
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): RowsV1Aggregate =
    copy(children = newChildren)

  // EXPLAIN shows the arguments only (not the names, not the buffer offsets).
  override def stringArgs: Iterator[Any] = children.iterator
}

object RowsV1Aggregate {
  val ResultType: StructType = new StructType()
    .add("row_count", LongType, nullable = false)
    .add("sum1", LongType, nullable = false)
    .add("sum2", LongType, nullable = false)
    .add("data_hash", StringType, nullable = false)

  /** The input ordinals of the arguments when every one is a plain bound column reference, else null. */
  private[spark] def boundOrdinals(columns: Array[Expression]): Array[Int] =
    if (columns.forall(_.isInstanceOf[BoundReference])) columns.map(_.asInstanceOf[BoundReference].ordinal)
    else null

  /** The argument values of one input row, as a row the line writer reads (a new small row per call). */
  private[spark] def evalColumns(columns: Array[Expression], input: InternalRow): InternalRow = {
    val values = new Array[Any](columns.length)
    var i = 0
    while (i < columns.length) { values(i) = columns(i).eval(input); i += 1 }
    new GenericInternalRow(values)
  }
}
