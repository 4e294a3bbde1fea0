package ubunye.spark

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.types._

/** Spark types to rows-v1 type names and the schema string (docs/rows-v1.md sections 7 and 11).
  *
  * A type outside section 7, a duplicate column name or a duplicate struct field name is refused with a
  * message naming the column, the field path inside it and the type, at analysis time.
  */
private[spark] object RowsV1Type {

  /** The rows-v1 name of `dt`, or Left(message) naming `column`, the field `path` and the type. */
  def name(dt: DataType, column: String, path: String): Either[String, String] = dt match {
    case ByteType                  => Right("int8")
    case ShortType                 => Right("int16")
    case IntegerType               => Right("int32")
    case LongType                  => Right("int64")
    case FloatType                 => Right("float32")
    case DoubleType                => Right("float64")
    case BooleanType               => Right("bool")
    case _: CharType | _: VarcharType => Right("string") // before StringType: not its subclasses in Spark 3.5
    case _: StringType             => Right("string") // any collation
    case BinaryType                => Right("binary")
    case DateType                  => Right("date")
    case TimestampType             => Right("timestamp")
    case TimestampNTZType          => Right("timestamp_ntz")
    case d: DecimalType if d.precision <= 38 && d.scale >= 0 && d.scale <= d.precision =>
      Right(s"decimal(${d.precision},${d.scale})")
    case ArrayType(et, _)          => name(et, column, s"$path[]").map(t => s"list<$t>")
    case MapType(kt, vt, _) =>
      for {
        k <- name(kt, column, s"$path{key}")
        v <- name(vt, column, s"$path{value}")
      } yield s"map<$k,$v>"
    case st: StructType =>
      duplicate(st.fieldNames.toSeq) match {
        case Some(d) =>
          Left(s"column ${quote(column)}: duplicate field name ${quote(d)} in the struct at ${quote(path)} " +
            s"(type ${st.simpleString}); rows-v1 needs unique field names")
        case None =>
          val parts = st.fields.toSeq.map(f => name(f.dataType, column, s"$path.${f.name}").map(f.name -> _))
          parts.collectFirst { case Left(e) => e } match {
            case Some(e) => Left(e)
            case None    => Right(structString(parts.collect { case Right(p) => p }))
          }
      }
    case other =>
      val where = if (path == column) "" else s" (field ${quote(path)})"
      Left(s"column ${quote(column)}$where has type ${other.simpleString}, which rows-v1 does not hash " +
        "(see docs/rows-v1.md sections 7 and 11)")
  }

  /** The first problem with these columns (duplicate name, unsupported type), if any. */
  def check(names: Seq[String], types: Seq[DataType]): Option[String] =
    duplicate(names).map(d => s"duplicate column name ${quote(d)}; rows-v1 needs unique column names")
      .orElse(names.zip(types).iterator.map { case (n, t) => name(t, n, n) }.collectFirst { case Left(e) => e })

  /** The schema string of section 7, e.g. `struct<"id":int64,"name":string>`. */
  def schemaString(names: Seq[String], types: Seq[DataType]): String =
    structString(names.zip(types).map { case (n, t) =>
      n -> name(t, n, n).fold(e => throw new IllegalArgumentException(e), identity)
    })

  private def structString(fields: Seq[(String, String)]): String =
    fields.sortWith((a, b) => LineBuffer.codePointOrder(a._1, b._1))
      .map { case (n, t) => jsonString(n) + ":" + t }
      .mkString("struct<", ",", ">")

  /** `s` as a rows-v1 JSON string (section 4). */
  def jsonString(s: String): String = {
    val out = new LineBuffer(s.length + 8)
    out.appendJsonString(s.getBytes(UTF_8))
    out.toString
  }

  private def duplicate(names: Seq[String]): Option[String] =
    names.diff(names.distinct).headOption // the first name seen twice (exact, case-sensitive)

  private def quote(s: String): String = "`" + s.replace("`", "``") + "`"
}
