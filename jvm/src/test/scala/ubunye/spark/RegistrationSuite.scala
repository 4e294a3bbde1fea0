package ubunye.spark

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import org.apache.spark.sql.SparkSession
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** The functions in a real local session: through spark.sql.extensions, and registerAll on a running one. */
class RegistrationSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = SparkSession.builder()
    .master("local[2]")
    .appName("ubunye-registration")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.sql.extensions", classOf[UbunyeExtensions].getName)
    .getOrCreate()

  override def afterAll(): Unit = spark.stop()

  test("the extensions register both functions, with usage text") {
    for (name <- Seq(UbunyeFunctions.RowsV1, UbunyeFunctions.CanonicalLine)) {
      assert(spark.catalog.functionExists(name), name)
      val desc = spark.sql(s"DESCRIBE FUNCTION EXTENDED $name").collect().map(_.getString(0)).mkString("\n")
      assert(desc.contains(s"Usage: $name(cols...)"), desc)
    }
  }

  test("SELECT ubunye_rows_v1(*) equals the digest of its canonical lines") {
    val table = "SELECT * FROM VALUES (1L, 'Ana', 0.5D), (2L, null, double('NaN')) AS t(id, name, score)"
    val h = spark.sql(s"SELECT ubunye_rows_v1(*) FROM ($table)").head().getStruct(0)
    val lines = spark.sql(s"SELECT ubunye_canonical_line(*) FROM ($table)").collect().map(_.getString(0))
    assert(lines.sorted.toSeq == Seq("""{"id":1,"name":"Ana","score":0.5}""", """{"id":2,"score":"NaN"}"""))
    val sums = new RowsV1Digest()
    lines.foreach { l => sums.line.reset(); sums.line.append(l.getBytes("UTF-8")); sums.addLine() }
    assert(h.getLong(0) == 2L && h.getLong(1) == sums.sum1 && h.getLong(2) == sums.sum2)
    val schema = "struct<\"id\":int64,\"name\":string,\"score\":float64>"
    assert(h.getString(3) == RowsV1Digest.dataHash(schema, 2L, sums.sum1, sums.sum2))
  }

  test("registerAll brings the functions back into a running session; twice is harmless") {
    val other = spark.newSession()
    UbunyeFunctions.unregisterAll(other)
    assert(!other.catalog.functionExists(UbunyeFunctions.RowsV1))
    UbunyeFunctions.registerAll(other)
    UbunyeFunctions.registerAll(other)
    assert(other.catalog.functionExists(UbunyeFunctions.RowsV1))
    assert(other.sql("SELECT ubunye_rows_v1(*).row_count FROM range(5)").head().getLong(0) == 5L)
  }

  test("every function's Since is the package version (python/ubunye/VERSION), through the jar's properties") {
    // The forked test JVM runs in jvm/: look for the file upwards rather than hard-code where the build runs.
    val file = Iterator.iterate(new File("").getAbsoluteFile)(_.getParentFile).takeWhile(_ != null)
      .map(new File(_, "python/ubunye/VERSION")).find(_.isFile).getOrElse(fail("no python/ubunye/VERSION above"))
    val version = new String(Files.readAllBytes(file.toPath), UTF_8).trim
    assert(JarInfo.version() == version)
    for (name <- Seq(UbunyeFunctions.RowsV1, UbunyeFunctions.CanonicalLine, UbunyeFunctions.ProfileV1,
        UbunyeFunctions.BucketV1)) {
      val desc = spark.sql(s"DESCRIBE FUNCTION EXTENDED $name").collect().map(_.getString(0)).mkString("\n")
      assert(desc.contains(s"Since: $version"), desc)
    }
  }

  test("sums wrap with ANSI on; a bad type fails at analysis naming the column") {
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try assert(spark.sql("SELECT ubunye_rows_v1(*).row_count FROM range(10000)").head().getLong(0) == 10000L)
    finally spark.conf.unset("spark.sql.ansi.enabled")
    val e = intercept[org.apache.spark.sql.AnalysisException](
      spark.sql("SELECT ubunye_rows_v1(*) FROM (SELECT interval '1' day AS iv)"))
    assert(e.getMessage.contains("column `iv` has type interval day"))
  }
}
