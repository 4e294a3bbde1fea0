package ubunye.spark

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, NamedExpression}
import org.apache.spark.sql.catalyst.util.toPrettySQL

/** The SQL functions of ubunye: their names, usage text and builders, and `registerAll` for a session that
  * already exists (e.g. a Databricks notebook with the jar attached as a cluster library).
  *
  * {{{
  *   ubunye.spark.UbunyeFunctions.registerAll(spark)
  *   spark.sql("SELECT ubunye_rows_v1(*) FROM t")
  * }}}
  */
object UbunyeFunctions {
  val RowsV1 = "ubunye_rows_v1"
  val CanonicalLine = "ubunye_canonical_line"
  val ProfileV1 = "ubunye_profile_v1"
  val BucketV1 = "ubunye_bucket_v1"

  private[spark] type Builder = Seq[Expression] => Expression

  /** The name of the column an argument stands for: an attribute's or alias's own name (what `*` expands
    * to), else the expression as Spark prints it in a column header, e.g. `(a + 1)` for `a + 1`. */
  private[spark] def columnName(e: Expression): String = e match {
    case ne: NamedExpression => ne.name
    case other               => toPrettySQL(other)
  }

  private val ColsArgument = """
      * cols - the columns to hash (any number, `*` for all): int types, float, double, boolean, string,
          binary, date, timestamp, timestamp_ntz, decimal(p<=38, s>=0), and arrays, maps and structs of these.
          Column names come from the arguments (a column's own name; an alias; else the expression's SQL text)
          and must be unique."""

  private val BucketsArgument = """
      * n_buckets - an integer literal: the number of row buckets, a power of two from 1 to 65536
          (docs/rows-v1.md section 12.2)"""

  // Spark internals: what DESCRIBE FUNCTION EXTENDED shows, built with the 11-argument constructor every line
  // (3.5 to 4.3) has, rather than read from an @ExpressionDescription on the classes, whose fields must be
  // constants: `since` is this jar's version (ubunye/spark/jar.properties, which build.sbt writes from
  // python/ubunye/VERSION), as the functions ship with the jar.
  private def info(
      name: String,
      className: String,
      usage: String,
      examples: String,
      arguments: String = ColsArgument): ExpressionInfo =
    new ExpressionInfo(
      className,
      null, // db
      name,
      usage,
      "\n    Arguments:" + arguments + "\n  ",
      examples,
      "\n    The bytes are frozen by docs/rows-v1.md: equal for any row order, column order, partitioning, JVM\n" +
        "    version, session time zone and ANSI setting.\n  ",
      "misc_funcs",
      JarInfo.version(), // since
      "", // deprecated
      "built-in")

  /** (identifier, usage, builder) of every function. */
  private[spark] val functions: Seq[(FunctionIdentifier, ExpressionInfo, Builder)] = Seq(
    (
      FunctionIdentifier(RowsV1),
      info(
        RowsV1,
        classOf[RowsV1Aggregate].getName,
        "_FUNC_(cols...) - Aggregate: the rows-v1 content hash of the rows, " +
          "struct<row_count: bigint, sum1: bigint, sum2: bigint, data_hash: string>.",
        """
    Examples:
      > SELECT _FUNC_(*).data_hash FROM VALUES (1, 'a') AS t(id, name);
       sha256:...
  """),
      (children: Seq[Expression]) => RowsV1Aggregate(children, children.map(columnName))),
    (
      FunctionIdentifier(CanonicalLine),
      info(
        CanonicalLine,
        classOf[CanonicalLineExpression].getName,
        "_FUNC_(cols...) - The rows-v1 canonical line (JSON text) of each row, for debugging and diffing.",
        """
    Examples:
      > SELECT _FUNC_(*) FROM VALUES (1, 'a') AS t(id, name);
       {"id":1,"name":"a"}
  """),
      (children: Seq[Expression]) => CanonicalLineExpression(children, children.map(columnName))),
    (
      FunctionIdentifier(ProfileV1),
      info(
        ProfileV1,
        classOf[ProfileV1Aggregate].getName,
        "_FUNC_(n_buckets, key, cols...) - Aggregate: the profile-v1 numbers of the rows (docs/rows-v1.md " +
          "section 12): the rows-v1 hash, a fingerprint per column and the row buckets, " +
          "struct<row_count: bigint, sum1: bigint, sum2: bigint, data_hash: string, columns: array<struct<" +
          "name: string, type: string, nulls: bigint, nans: bigint, sum1: bigint, sum2: bigint, " +
          "fingerprint: string>>, buckets: binary>.",
        """
    Examples:
      > SELECT _FUNC_(4, array('id'), *).columns[0].fingerprint FROM VALUES (1, 'a') AS t(id, name);
       sha256:...
  """,
        BucketsArgument.replace("65536", "65536, or 0 for none (buckets is then null)") + """
      * key - a literal array of the key's column names, array() for none (the buckets then follow the
          whole row's hash)""" + ColsArgument),
      (children: Seq[Expression]) => ProfileV1Aggregate(children, children.drop(2).map(columnName))),
    (
      FunctionIdentifier(BucketV1),
      info(
        BucketV1,
        classOf[BucketV1Expression].getName,
        "_FUNC_(cols..., n_buckets) - The profile-v1 bucket (an int from 0 to n_buckets - 1) of each row's key " +
          "line made of these columns, as ubunye_profile_v1(n_buckets, array(<their names>), ...) counts it.",
        """
    Examples:
      > SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(id, name) WHERE _FUNC_(id, 4) = 0;
  """,
        """
      * cols - the key columns (their names come from the arguments, as for ubunye_rows_v1)""" +
          BucketsArgument),
      (children: Seq[Expression]) => BucketV1Expression(children, children.dropRight(1).map(columnName)))
  )

  /** Registers every function in the function registry of `spark`, an already running session. Fails, naming
    * the jar to attach instead, when this jar is built for another Spark line or Scala version. */
  def registerAll(spark: SparkSession): Unit = {
    val wrong = JarInfo.mismatch()
    if (wrong != null) throw new IllegalStateException(wrong)
    val registry = SparkCompat.functionRegistry(spark)
    functions.foreach { case (id, info, builder) => registry.registerFunction(key(registry, id), info, builder) }
  }

  /** Takes the functions out of the session again: for the tests of registerAll (ScalaTest, and the Python
    * suite through py4j, which is why it is in the jar). Extension functions cannot be dropped in SQL. */
  def unregisterAll(spark: SparkSession): Unit = {
    val registry = SparkCompat.functionRegistry(spark)
    functions.foreach { case (id, _, _) => registry.dropFunction(key(registry, id)) }
  }

  // Spark internals, detected at run time rather than per line: the registry's keys are bare names on Spark
  // 3.5 to 4.1 and 3-part (system.builtin.<name>) on 4.2+, which is also where injectFunction
  // (spark.sql.extensions) puts extension functions there; a key of the wrong form is never looked up (4.0,
  // 4.1) or fails an assertion (4.2). The built-in `abs` is registered under the form this Spark uses.
  private def key(registry: FunctionRegistry, id: FunctionIdentifier): FunctionIdentifier =
    registry.listFunction().find(_.funcName == "abs") match {
      case Some(abs) => FunctionIdentifier(id.funcName, abs.database, abs.catalog)
      case None      => id
    }
}
