package ubunye.spark

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/** Type names, the schema string (section 7) and the refusals of section 11. */
class RowsV1TypeSuite extends AnyFunSuite {

  test("schema string: columns and struct fields sorted by code point, nullability ignored") {
    val st = StructType(Seq(StructField("z", StringType), StructField("a", ArrayType(DoubleType, containsNull = false))))
    val schema = RowsV1Type.schemaString(
      Seq("tags", "id", "s", "m", "\uD83D\uDE00", "\uFF61"),
      Seq(ArrayType(StringType), LongType, st, MapType(DateType, DecimalType(38, 18)), ByteType, VarcharType(3)))
    assert(schema == "struct<\"id\":int64,\"m\":map<date,decimal(38,18)>,\"s\":struct<\"a\":list<float64>," +
      "\"z\":string>,\"tags\":list<string>,\"\uFF61\":string,\"\uD83D\uDE00\":int8>")
    assert(RowsV1Type.schemaString(Nil, Nil) == "struct<>")
    assert(RowsV1Type.schemaString(Seq("a\"b"), Seq(TimestampNTZType)) == "struct<\"a\\\"b\":timestamp_ntz>")
  }

  test("every rows-v1 type has its name") {
    val names = Seq(ByteType -> "int8", ShortType -> "int16", IntegerType -> "int32", LongType -> "int64",
      FloatType -> "float32", DoubleType -> "float64", BooleanType -> "bool", StringType -> "string",
      CharType(2) -> "string", BinaryType -> "binary", DateType -> "date", TimestampType -> "timestamp",
      TimestampNTZType -> "timestamp_ntz", DecimalType(10, 2) -> "decimal(10,2)")
    names.foreach { case (t, n) => assert(RowsV1Type.name(t, "c", "c") == Right(n)) }
  }

  test("unsupported types and duplicates are refused naming the column, the field and the type") {
    def err(names: Seq[String], types: Seq[DataType]): String = RowsV1Type.check(names, types).getOrElse(fail("accepted"))
    assert(err(Seq("iv"), Seq(DayTimeIntervalType())).contains("column `iv` has type interval day to second"))
    assert(err(Seq("n"), Seq(NullType)).contains("column `n` has type void"))
    // variant is a Spark 4 type: the suite runs on Spark 3.5 too, where the DDL name does not parse.
    scala.util.Try(DataType.fromDDL("variant")).foreach(variant => assert(err(Seq("v"), Seq(variant)).contains("variant")))
    assert(err(Seq("y"), Seq(YearMonthIntervalType())).contains("interval year to month"))
    assert(err(Seq("c"), Seq(CalendarIntervalType)).contains("interval"))
    val nested = StructType(Seq(StructField("x", ArrayType(MapType(StringType, NullType)))))
    assert(err(Seq("st"), Seq(nested)).contains("column `st` (field `st.x[]{value}`) has type void"))
    assert(err(Seq("id", "a", "id"), Seq(LongType, LongType, LongType)).contains("duplicate column name `id`"))
    val dup = StructType(Seq(StructField("a", LongType), StructField("a", StringType)))
    assert(err(Seq("s"), Seq(ArrayType(dup))).contains("duplicate field name `a`"))
    assert(RowsV1Type.check(Seq("A", "a"), Seq(LongType, LongType)).isEmpty) // names are case-sensitive
  }
}
