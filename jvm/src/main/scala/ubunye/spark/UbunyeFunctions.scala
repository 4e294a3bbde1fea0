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

  type Builder = Seq[Expression] => Expression

  /** The name of the column an argument stands for: an attribute's or alias's own name (what `*` expands
    * to), else the expression as Spark prints it in a column header, e.g. `(a + 1)` for `a + 1`. */
  def columnName(e: Expression): String = e match {
    case ne: NamedExpression => ne.name
    case other               => toPrettySQL(other)
  }

  private def info(name: String, className: String, usage: String, examples: String): ExpressionInfo =
    new ExpressionInfo(
      className,
      null, // db
      name,
      usage,
      """
    Arguments:
      * cols - the columns to hash (any number, `*` for all): int types, float, double, boolean, string,
          binary, date, timestamp, timestamp_ntz, decimal(p<=38, s>=0), and arrays, maps and structs of these.
          Column names come from the arguments (a column's own name; an alias; else the expression's SQL text)
          and must be unique.
  """,
      examples,
      "\n    The bytes are frozen by docs/rows-v1.md: equal for any row order, column order, partitioning, JVM\n" +
        "    version, session time zone and ANSI setting.\n  ",
      "misc_funcs",
      "0.7.0",
      "",
      "built-in")

  /** (identifier, usage, builder) of every function. */
  val functions: Seq[(FunctionIdentifier, ExpressionInfo, Builder)] = Seq(
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
      (children: Seq[Expression]) => CanonicalLineExpression(children, children.map(columnName)))
  )

  /** Registers every function in the function registry of `spark`, an already running session. Fails, naming
    * the jar to attach instead, when this jar is built for another Spark line or Scala version. */
  def registerAll(spark: SparkSession): Unit = {
    val wrong = JarInfo.mismatch()
    if (wrong != null) throw new IllegalStateException(wrong)
    val registry = SparkCompat.functionRegistry(spark)
    functions.foreach { case (id, info, builder) => registry.registerFunction(key(registry, id), info, builder) }
  }

  /** Takes the functions out of the session again (for tests of registerAll). */
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

  /** True when `ubunye_rows_v1` is known to the session. */
  def isRegistered(spark: SparkSession): Boolean = spark.catalog.functionExists(RowsV1)
}
