package ubunye.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.catalyst.util.{ArrayData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** `ubunye_profile_v1(n_buckets, key, col, ...)`: the profile-v1 numbers of the rows it aggregates
  * (docs/rows-v1.md section 12.3), in one pass beside the rows-v1 ones.
  *
  * `children` are the bucket count (an integer literal, 0 for no buckets), the key (a literal array of column
  * names, empty for none), then the hashed columns; `names` are the names of those columns only, fixed from the
  * argument expressions when the function is built (as in RowsV1Aggregate).
  *
  * Per row it writes the row line once, recording where each column's member lies in it (StructWriter
  * .writeMembers); a column line is that member between braces, hashed in place in the row line (or its hash
  * found in a memo of the column's recent values), and the key line is the key columns' members (already in
  * code point order) joined into a second buffer. Each aggregation buffer is a ProfileV1Digest (numbers only);
  * the partial buffers that cross the shuffle are 24 + 32 x columns + 24 x n_buckets bytes.
  */
case class ProfileV1Aggregate(
    children: Seq[Expression],
    names: Seq[String],
    mutableAggBufferOffset: Int = 0,
    inputAggBufferOffset: Int = 0)
    extends TypedImperativeAggregate[ProfileV1Digest] {

  override def prettyName: String = UbunyeFunctions.ProfileV1
  override def nullable: Boolean = false
  override def dataType: DataType = ProfileV1Aggregate.ResultType

  private def columnExprs: Seq[Expression] = children.drop(2)

  override def checkInputDataTypes(): TypeCheckResult = {
    val problem =
      if (children.length < 2)
        Some("needs the bucket count and the key before the columns: ubunye_profile_v1(n_buckets, key, cols...), " +
          "e.g. ubunye_profile_v1(256, array(), *)")
      else
        ProfileV1Aggregate.bucketCount(children.head, allowZero = true).left.toOption
          .orElse(ProfileV1Aggregate.keyNames(children(1), names).left.toOption)
          .orElse(RowsV1Type.check(names, columnExprs.map(_.dataType)))
    problem match {
      case None      => TypeCheckResult.TypeCheckSuccess
      case Some(msg) => TypeCheckResult.TypeCheckFailure(s"$prettyName: $msg")
    }
  }

  @transient lazy val schema: String = RowsV1Type.schemaString(names, columnExprs.map(_.dataType))
  @transient private lazy val nBuckets: Int =
    ProfileV1Aggregate.bucketCount(children.head, allowZero = true).fold(e => throw new IllegalStateException(e), identity)
  @transient private lazy val mask: Int = nBuckets - 1
  @transient private lazy val columns: Array[Expression] = columnExprs.toArray
  @transient private lazy val direct: Array[Int] = RowsV1Aggregate.boundOrdinals(columns)
  @transient private lazy val lineWriter = CanonicalLine.rowWriter(names, columns.map(_.dataType).toSeq, direct)
  /** The key's columns (indices into `names`) in code point order of their names: the key line's order. */
  @transient private lazy val keyOrder: Array[Int] = {
    val key = ProfileV1Aggregate.keyNames(children(1), names).fold(e => throw new IllegalStateException(e), identity)
      .map(names.indexOf(_)).toSet
    lineWriter.order.filter(key.contains)
  }
  /** The length of each column's member prefix `"name":` in the row line. */
  @transient private lazy val prefixLength: Array[Int] =
    names.map(n => RowsV1Type.jsonString(n).getBytes(java.nio.charset.StandardCharsets.UTF_8).length + 1).toArray
  /** The key's one column when the key has exactly one (its key line is then that column's line), else -1. */
  @transient private lazy val singleKey: Int = if (keyOrder.length == 1) keyOrder(0) else -1
  /** 1 for a float column, 2 for a double column (the ones with nans), else 0. */
  @transient private lazy val floatKind: Array[Int] = columns.map(_.dataType match {
    case FloatType  => 1
    case DoubleType => 2
    case _          => 0
  })

  // A ThreadLocal, not state in this object: whichever thread runs update() gets its own digest, buffers and
  // memos (the thread running one partition's aggregation reuses them for every row and every group).
  @transient private lazy val scratches: ThreadLocal[ProfileV1Scratch] = new ThreadLocal[ProfileV1Scratch] {
    override def initialValue(): ProfileV1Scratch = new ProfileV1Scratch(columns.length)
  }

  override def createAggregationBuffer(): ProfileV1Digest = new ProfileV1Digest(columns.length, nBuckets)

  override def update(buffer: ProfileV1Digest, input: InternalRow): ProfileV1Digest = {
    val row = if (direct != null) input else RowsV1Aggregate.evalColumns(columns, input)
    val scratch = scratches.get()
    val line = scratch.line
    val starts = scratch.starts
    val ends = scratch.ends
    val view = scratch.hashView
    line.reset()
    lineWriter.writeMembers(row, line, starts, ends)
    val bytes = line.bytes
    // Section 8: the row's own line.
    scratch.digest(bytes, 0, line.length)
    val a = view.getLong(0)
    val b = view.getLong(8)
    val rowBucket = ProfileV1Digest.bucketBits(scratch.hash) // the column hashes below reuse scratch.hash
    buffer.rowCount += 1
    buffer.sum1 += a
    buffer.sum2 += b
    // Section 12.1: each column line is its member between braces, hashed in place in the row line (columnLine),
    // or its hash found in the column's memo of recent values.
    val cols = buffer.columns
    var keyBucket = 0
    var i = 0
    while (i < starts.length) {
      val at = 4 * i
      val s = starts(i)
      if (s < 0) {
        cols(at) += 1
        cols(at + 2) += ProfileV1Digest.NullLine._1
        cols(at + 3) += ProfileV1Digest.NullLine._2
        if (i == singleKey) keyBucket = ProfileV1Digest.NullLineBucket
      } else {
        val e = ends(i)
        val memo = scratch.memo(i)
        val v = s + prefixLength(i) // the value's JSON, after `"name":`
        val n = e - v
        if (memo != null && n <= LineMemo.MaxLen) {
          val slot = memo.slot(bytes, v, n)
          memo.tries += 1
          if (memo.holds(slot, bytes, v, n)) {
            memo.hits += 1
            cols(at + 2) += memo.a(slot)
            cols(at + 3) += memo.b(slot)
            if (i == singleKey) keyBucket = memo.c(slot)
          } else {
            columnLine(scratch, bytes, s, e)
            val ca = view.getLong(0)
            val cb = view.getLong(8)
            val cc = ProfileV1Digest.bucketBits(scratch.hash)
            memo.store(slot, bytes, v, n, ca, cb, cc)
            cols(at + 2) += ca
            cols(at + 3) += cb
            if (i == singleKey) keyBucket = cc
          }
          scratch.checkMemo(i, memo)
        } else {
          columnLine(scratch, bytes, s, e)
          cols(at + 2) += view.getLong(0)
          cols(at + 3) += view.getLong(8)
          if (i == singleKey) keyBucket = ProfileV1Digest.bucketBits(scratch.hash)
        }
        val kind = floatKind(i)
        if (kind != 0) {
          val j = if (direct != null) direct(i) else i
          val nan = if (kind == 1) java.lang.Float.isNaN(row.getFloat(j)) else java.lang.Double.isNaN(row.getDouble(j))
          if (nan) cols(at + 1) += 1
        }
      }
      i += 1
    }
    if (nBuckets > 0) {
      // Section 12.2: the bucket of the key line, or of the row line when there is no key. A one-column key's
      // line is that column's line, whose bucket the column loop above already took.
      val bucket =
        if (singleKey >= 0) keyBucket
        else if (keyOrder.length == 0) rowBucket
        else {
          val key = scratch.keyLine
          key.reset()
          key.append('{')
          var first = true
          var k = 0
          while (k < keyOrder.length) {
            val i = keyOrder(k)
            val s = starts(i)
            if (s >= 0) {
              if (!first) key.append(',')
              key.append(bytes, s, ends(i) - s)
              first = false
            }
            k += 1
          }
          key.append('}')
          scratch.digest(key.bytes, 0, key.length)
          ProfileV1Digest.bucketBits(scratch.hash)
        }
      val at = 3 * (bucket & mask)
      val bk = buffer.buckets
      bk(at) += 1
      bk(at + 1) += a
      bk(at + 2) += b
    }
    buffer
  }

  /** SHA-256 of the column line whose member is bytes s until e of the row line, into scratch.hash. */
  private def columnLine(scratch: ProfileV1Scratch, bytes: Array[Byte], s: Int, e: Int): Unit = {
    val before = bytes(s - 1)
    val after = bytes(e)
    bytes(s - 1) = '{'
    bytes(e) = '}'
    scratch.digest(bytes, s - 1, e - s + 2)
    bytes(s - 1) = before
    bytes(e) = after
  }

  override def merge(buffer: ProfileV1Digest, input: ProfileV1Digest): ProfileV1Digest = buffer.merge(input)

  override def eval(buffer: ProfileV1Digest): Any = {
    val n = buffer.rowCount
    val types = columns.map(_.dataType)
    val sorted = lineWriter.order // the columns in code point order of their names
    val entries = sorted.map { i =>
      val at = 4 * i
      val typeName = RowsV1Type.name(types(i), names(i), names(i)).fold(e => throw new IllegalStateException(e), identity)
      val s1 = buffer.columns(at + 2)
      val s2 = buffer.columns(at + 3)
      InternalRow(
        UTF8String.fromString(names(i)),
        UTF8String.fromString(typeName),
        buffer.columns(at),
        if (floatKind(i) != 0) buffer.columns(at + 1) else null,
        s1,
        s2,
        UTF8String.fromString(ProfileV1Digest.fingerprint(names(i), typeName, n, s1, s2)))
    }
    InternalRow(
      n,
      buffer.sum1,
      buffer.sum2,
      UTF8String.fromString(RowsV1Digest.dataHash(schema, n, buffer.sum1, buffer.sum2)),
      new GenericArrayData(entries.toArray[Any]),
      if (nBuckets > 0) buffer.packedBuckets else null)
  }

  override def serialize(buffer: ProfileV1Digest): Array[Byte] = buffer.toBytes
  override def deserialize(bytes: Array[Byte]): ProfileV1Digest =
    ProfileV1Digest.fromBytes(bytes, columns.length, nBuckets)

  override def withNewMutableAggBufferOffset(offset: Int): ProfileV1Aggregate = copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): ProfileV1Aggregate = copy(inputAggBufferOffset = offset)
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): ProfileV1Aggregate =
    copy(children = newChildren)

  override def stringArgs: Iterator[Any] = children.iterator
}

object ProfileV1Aggregate {
  val ColumnType: StructType = new StructType()
    .add("name", StringType, nullable = false)
    .add("type", StringType, nullable = false)
    .add("nulls", LongType, nullable = false)
    .add("nans", LongType, nullable = true)
    .add("sum1", LongType, nullable = false)
    .add("sum2", LongType, nullable = false)
    .add("fingerprint", StringType, nullable = false)

  /** Section 12.3's result. */
  val ResultType: StructType = new StructType()
    .add("row_count", LongType, nullable = false)
    .add("sum1", LongType, nullable = false)
    .add("sum2", LongType, nullable = false)
    .add("data_hash", StringType, nullable = false)
    .add("columns", ArrayType(ColumnType, containsNull = false), nullable = false)
    .add("buckets", BinaryType, nullable = true)

  /** The bucket count an argument holds (section 12.2: a power of two from 1 to 65,536; 0, no buckets, where
    * `allowZero`), or Left(message) naming what it is instead. */
  private[spark] def bucketCount(e: Expression, allowZero: Boolean): Either[String, Int] = {
    val want = (if (allowZero) "0 (no buckets) or " else "") + "a power of two from 1 to 65536"
    val value: Option[Long] =
      if (!e.foldable) None
      else
        e.dataType match {
          case ByteType | ShortType | IntegerType | LongType =>
            e.eval() match {
              case null                    => None
              case v: java.lang.Number     => Some(v.longValue)
              case _                       => None
            }
          case _ => None
        }
    value match {
      case Some(n) if (allowZero && n == 0) || ProfileV1Digest.validBuckets(n) => Right(n.toInt)
      case Some(n) => Left(s"n_buckets is $n; it must be $want")
      case None =>
        Left(s"n_buckets must be an integer literal, $want; got ${e.sql} (type ${e.dataType.simpleString})")
    }
  }

  /** The key's column names (section 12.2: distinct, each one of the hashed `columns`), or Left(message) naming
    * the offending name. */
  private[spark] def keyNames(e: Expression, columns: Seq[String]): Either[String, Seq[String]] = {
    val literal = e.foldable && (e.dataType match {
      case ArrayType(_: StringType | NullType, _) => true
      case _                                      => false
    })
    if (!literal)
      Left(s"key must be a literal array of column names (array('id'), or array() for none); got ${e.sql} " +
        s"(type ${e.dataType.simpleString})")
    else keyArray(e, columns)
  }

  private def keyArray(e: Expression, columns: Seq[String]): Either[String, Seq[String]] = {
    val array = e.eval().asInstanceOf[ArrayData]
    if (array == null) Left("key is null; give array() for no key")
    else if ((0 until array.numElements()).exists(array.isNullAt)) Left(s"key ${e.sql} holds a null name")
    else {
      val keys = (0 until array.numElements()).map(i => array.getUTF8String(i).toString)
      val twice = keys.diff(keys.distinct).headOption
      val unknown = keys.find(k => !columns.contains(k))
      (twice, unknown) match {
        case (Some(d), _) => Left(s"key column ${quote(d)} is listed twice in ${e.sql}")
        case (_, Some(k)) =>
          Left(s"key column ${quote(k)} is not one of the hashed columns (${columns.map(quote).mkString(", ")})")
        case _ => Right(keys)
      }
    }
  }

  private def quote(s: String): String = "`" + s.replace("`", "``") + "`"
}
