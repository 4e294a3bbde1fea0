package ubunye.spark

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest

import org.apache.spark.sql.{AnalysisException, Row, SparkSession}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** ubunye_profile_v1 and ubunye_bucket_v1 (docs/rows-v1.md section 12) in a real local session. Expected numbers
  * are computed here with MessageDigest from column, key and row lines written by hand (not by the writers). */
class ProfileV1Suite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = SparkSession.builder()
    .master("local[2]")
    .appName("ubunye-profile")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.sql.extensions", classOf[UbunyeExtensions].getName)
    .getOrCreate()

  override def afterAll(): Unit = spark.stop()

  private def sha(text: String): Array[Byte] = MessageDigest.getInstance("SHA-256").digest(text.getBytes(UTF_8))
  private def hex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString
  private def halves(text: String): (Long, Long) = {
    val h = ByteBuffer.wrap(sha(text))
    (h.getLong(0), h.getLong(8))
  }
  /** Section 8 over some lines: (sum1, sum2), wrapping. */
  private def sums(lines: Seq[String]): (Long, Long) =
    lines.map(halves).foldLeft((0L, 0L)) { case ((x, y), (a, b)) => (x + a, y + b) }
  private def hex16(x: Long): String = f"$x%016x"
  /** Section 12.2 with BigInt arithmetic: bytes 28..31 unsigned, mod n. */
  private def bucket(keyLine: String, n: Int): Int = (BigInt(1, sha(keyLine).slice(28, 32)) % n).toInt

  // Three rows, their lines written by hand (section 2/3: sorted keys, nulls left out, NaN a string).
  private val table =
    "SELECT * FROM VALUES (1L, 'Ana', 0.5D), (2L, null, double('NaN')), (3L, 'Bo', null) AS t(id, name, score)"
  private val rowLines = Seq("""{"id":1,"name":"Ana","score":0.5}""", """{"id":2,"score":"NaN"}""", """{"id":3,"name":"Bo"}""")
  private val columnLines = Seq(
    ("id", "int64", Seq("""{"id":1}""", """{"id":2}""", """{"id":3}"""), 0L, None),
    ("name", "string", Seq("""{"name":"Ana"}""", "{}", """{"name":"Bo"}"""), 1L, None),
    ("score", "float64", Seq("""{"score":0.5}""", """{"score":"NaN"}""", "{}"), 1L, Some(1L)))
  private val schema = "struct<\"id\":int64,\"name\":string,\"score\":float64>"

  private def profile(args: String, from: String = s"($table)"): Row =
    spark.sql(s"SELECT ubunye_profile_v1($args) AS p FROM $from").head().getStruct(0)

  /** The packed buckets (section 12.2) expected of rows given as (key line, row line). */
  private def packed(rows: Seq[(String, String)], n: Int): Array[Byte] = {
    val out = ByteBuffer.allocate(24 * n)
    for (i <- 0 until n) {
      val in = rows.filter { case (k, _) => bucket(k, n) == i }.map(_._2)
      val (s1, s2) = sums(in)
      out.putLong(in.length.toLong).putLong(s1).putLong(s2)
    }
    out.array()
  }

  test("section 12.1: column sums, nulls, nans and fingerprints of a small table") {
    val p = profile("0, array(), *")
    val (s1, s2) = sums(rowLines)
    assert(p.getLong(0) == 3L && p.getLong(1) == s1 && p.getLong(2) == s2)
    val dataHash = "sha256:" + hex(sha(s"rows-v1\n$schema\n3\n${hex16(s1)}\n${hex16(s2)}"))
    assert(p.getString(3) == dataHash)
    assert(p.isNullAt(5), "n_buckets 0: buckets is null")
    val cols = p.getSeq[Row](4)
    assert(cols.map(_.getString(0)) == Seq("id", "name", "score"))
    for (((name, typeName, lines, nulls, nans), c) <- columnLines.zip(cols)) {
      val (c1, c2) = sums(lines)
      assert(c.getString(1) == typeName, name)
      assert(c.getLong(2) == nulls, name)
      assert((if (c.isNullAt(3)) None else Some(c.getLong(3))) == nans, name)
      assert(c.getLong(4) == c1 && c.getLong(5) == c2, name)
      val input = "profile-v1-column\n\"" + name + "\"\n" + s"$typeName\n3\n${hex16(c1)}\n${hex16(c2)}"
      assert(c.getString(6) == "sha256:" + hex(sha(input)), name)
    }
  }

  test("row_count, sums and data_hash equal ubunye_rows_v1's, whatever the partitioning") {
    val from = "(SELECT id, cast(id % 7 AS string) AS s, id / 3.0D AS d, array(id, null) AS a FROM range(0, 3000, 1, 5))"
    val rows = spark.sql(s"SELECT ubunye_rows_v1(*) FROM $from").head().getStruct(0)
    for (args <- Seq("0, array(), *", "16, array('s'), *", "65536, array(), *")) {
      val p = profile(args, from)
      assert((0 to 3).map(p.get) == (0 to 3).map(rows.get), args)
    }
    val one = profile("8, array('s'), *", s"(SELECT /*+ COALESCE(1) */ * FROM $from)")
    val many = profile("8, array('s'), *", s"(SELECT /*+ REPARTITION(7) */ * FROM $from)")
    assert(one == many)
  }

  test("each column's sums are ubunye_rows_v1 of that column alone (its lines are the column lines)") {
    // Repeating, distinct, long (> 32 bytes), null and NaN values over 20000 rows: the column-value memo finds
    // hits, collisions, values it does not hold and columns it drops; none may change a number.
    val from = "(SELECT id, id % 3 AS small, id % 5000 AS mid, if(id % 4 = 0, null, cast(id % 7 AS string)) AS s, " +
      "repeat(cast(id % 11 AS string), 40) AS long_s, if(id % 9 = 0, double('NaN'), if(id % 10 = 0, null, " +
      "(id % 100) / 8.0D)) AS d, if(id % 6 = 0, float('NaN'), cast(id AS float)) AS f, id % 2 = 0 AS b " +
      "FROM range(0, 20000, 1, 3))"
    val p = profile("16, array('mid'), *", from)
    val cols = p.getSeq[Row](4)
    assert(cols.map(_.getString(0)) == Seq("b", "d", "f", "id", "long_s", "mid", "s", "small"))
    for (c <- cols) {
      val name = c.getString(0)
      val alone = spark.sql(s"SELECT ubunye_rows_v1($name) FROM $from").head().getStruct(0)
      assert((c.getLong(4), c.getLong(5)) == ((alone.getLong(1), alone.getLong(2))), name)
      val nulls = spark.sql(s"SELECT count(*) - count($name) FROM $from").head().getLong(0)
      assert(c.getLong(2) == nulls, name)
      if (name == "d" || name == "f") {
        val nans = spark.sql(s"SELECT count_if(isnan($name)) FROM $from").head().getLong(0)
        assert(!c.isNullAt(3) && c.getLong(3) == nans && nans > 0, name)
      } else assert(c.isNullAt(3), name)
    }
  }

  test("GROUP BY: each group's profile is the profile of that group's rows alone") {
    val from = "(SELECT id, id % 5 AS g, cast(id % 17 AS string) AS s FROM range(0, 6000, 1, 3))"
    val grouped = spark.sql(s"SELECT g, ubunye_profile_v1(8, array('id'), id, s) FROM $from GROUP BY g").collect()
    assert(grouped.length == 5)
    for (r <- grouped) {
      val alone = profile("8, array('id'), id, s", s"(SELECT * FROM $from WHERE g = ${r.getLong(0)})")
      assert(r.getStruct(1) == alone, s"g=${r.getLong(0)}")
    }
  }

  test("section 12.2: buckets of a key (key columns sorted by code point, nulls left out) and without a key") {
    // The key lists name before id; the key line sorts them. Row 2's null name is left out of its key line.
    val keyLines = Seq("""{"id":1,"name":"Ana"}""", """{"id":2}""", """{"id":3,"name":"Bo"}""")
    for (n <- Seq(1, 2, 4, 256)) {
      val keyed = profile(s"$n, array('name', 'id'), *")
      assert(keyed.getAs[Array[Byte]](5).toSeq == packed(keyLines.zip(rowLines), n).toSeq, s"n=$n")
      val keyless = profile(s"$n, array(), *")
      assert(keyless.getAs[Array[Byte]](5).toSeq == packed(rowLines.zip(rowLines), n).toSeq, s"n=$n keyless")
    }
    // N = 1: bucket 0 holds the table's row_count, sum1, sum2.
    val p = profile("1, array('id'), *")
    val b = ByteBuffer.wrap(p.getAs[Array[Byte]](5))
    assert((b.getLong, b.getLong, b.getLong) == ((p.getLong(0), p.getLong(1), p.getLong(2))))
  }

  test("bucket counts add up to the row count and bucket sums to the row sums; ubunye_bucket_v1 agrees") {
    val from = "(SELECT id, id % 13 AS k, cast(id AS string) AS s FROM range(0, 5000, 1, 3))"
    val p = profile("64, array('k'), *", from)
    val b = ByteBuffer.wrap(p.getAs[Array[Byte]](5))
    val buckets = (0 until 64).map(_ => (b.getLong, b.getLong, b.getLong))
    assert(buckets.map(_._1).sum == 5000L)
    assert(buckets.map(_._2).sum == p.getLong(1) && buckets.map(_._3).sum == p.getLong(2))
    assert(buckets.count(_._1 > 0) <= 13) // 13 key values, each in one bucket
    val counts = spark.sql(s"SELECT ubunye_bucket_v1(k, 64) AS b, count(*) AS n FROM $from GROUP BY 1").collect()
      .map(r => r.getInt(0) -> r.getLong(1)).toMap
    assert(counts == buckets.zipWithIndex.filter(_._1._1 > 0).map { case (x, i) => i -> x._1 }.toMap)
    // The rows of one bucket through WHERE hash to that bucket's sums.
    val (i, (count, s1, s2)) = buckets.zipWithIndex.map(_.swap).find(_._2._1 > 0).get
    val h = spark.sql(s"SELECT ubunye_rows_v1(*) FROM $from WHERE ubunye_bucket_v1(k, 64) = $i").head().getStruct(0)
    assert((h.getLong(0), h.getLong(1), h.getLong(2)) == ((count, s1, s2)))
  }

  test("a one-column key (its bucket taken from the column's own line hash) equals ubunye_bucket_v1 grouping") {
    // Key columns taking every path of the column loop: repeating values with nulls (memo hits, null line), unique
    // values (the memo dropped after its trial), values longer than the memo keeps, and a bigint.
    val from = "(SELECT id, if(id % 11 = 0, null, id % 7) AS k, concat(repeat('x', 40), id) AS u, " +
      "cast(id AS string) AS s FROM range(0, 12000, 1, 3))"
    for (key <- Seq("k", "u", "s", "id")) {
      val p = profile(s"64, array('$key'), *", from)
      val b = ByteBuffer.wrap(p.getAs[Array[Byte]](5))
      val got = (0 until 64).map(_ => (b.getLong, b.getLong, b.getLong)).zipWithIndex.filter(_._1._1 > 0)
        .map { case (x, i) => i -> x }.toMap
      val want = spark.sql(s"SELECT ubunye_bucket_v1($key, 64) AS b, ubunye_rows_v1(id, k, u, s) AS h FROM $from " +
        "GROUP BY 1").collect().map(r => r.getInt(0) -> {
          val h = r.getStruct(1); (h.getLong(0), h.getLong(1), h.getLong(2))
        }).toMap
      assert(got == want, s"key $key")
    }
  }

  test("ubunye_bucket_v1 is the bucket of the hand-written key line") {
    val rows = spark.sql(s"SELECT id, ubunye_bucket_v1(name, id, 4), ubunye_bucket_v1(id, name, 256), " +
      s"ubunye_bucket_v1(score, 1) FROM ($table) ORDER BY id").collect()
    val keyLines = Seq("""{"id":1,"name":"Ana"}""", """{"id":2}""", """{"id":3,"name":"Bo"}""")
    for ((r, k) <- rows.zip(keyLines)) {
      assert(r.getInt(1) == bucket(k, 4) && r.getInt(2) == bucket(k, 256) && r.getInt(3) == 0, k)
    }
    // A computed argument is named as ubunye_rows_v1 names it: `(id + 1)`.
    val c = spark.sql("SELECT ubunye_bucket_v1(id + 1, 65536) FROM range(1, 2)").head().getInt(0)
    assert(c == bucket("""{"(id + 1)":2}""", 65536))
  }

  test("bad arguments fail at analysis, naming the value") {
    def err(sql: String): String = intercept[AnalysisException](spark.sql(sql)).getMessage
    val t = s"($table)"
    assert(err(s"SELECT ubunye_profile_v1(3, array(), *) FROM $t").contains("n_buckets is 3"))
    assert(err(s"SELECT ubunye_profile_v1(131072, array(), *) FROM $t").contains("n_buckets is 131072"))
    assert(err(s"SELECT ubunye_profile_v1(-4, array(), *) FROM $t").contains("n_buckets is -4"))
    assert(err(s"SELECT ubunye_profile_v1(cast(id AS int), array(), *) FROM $t").contains("integer literal"))
    assert(err(s"SELECT ubunye_profile_v1('4', array(), *) FROM $t").contains("integer literal"))
    assert(err(s"SELECT ubunye_profile_v1(4, array('nope'), *) FROM $t").contains("key column `nope` is not one"))
    assert(err(s"SELECT ubunye_profile_v1(4, array('id', 'id'), *) FROM $t").contains("key column `id` is listed twice"))
    assert(err(s"SELECT ubunye_profile_v1(4, array(name), *) FROM $t").contains("key must be a literal array"))
    assert(err(s"SELECT ubunye_profile_v1(4, 'id', *) FROM $t").contains("key must be a literal array"))
    assert(err(s"SELECT ubunye_profile_v1(4) FROM $t").contains("needs the bucket count and the key"))
    assert(err(s"SELECT ubunye_profile_v1(4, array(), *) FROM (SELECT interval '1' day AS iv)")
      .contains("column `iv` has type interval day"))
    // A key column must be hashed: `score` is in the table but not among the arguments.
    assert(err(s"SELECT ubunye_profile_v1(4, array('score'), id, name) FROM $t").contains("key column `score`"))
    assert(err(s"SELECT ubunye_bucket_v1(id, 0) FROM $t").contains("n_buckets is 0"))
    assert(err(s"SELECT ubunye_bucket_v1(id, 6) FROM $t").contains("n_buckets is 6"))
    assert(err(s"SELECT ubunye_bucket_v1(id, id) FROM $t").contains("integer literal"))
    assert(err(s"SELECT ubunye_bucket_v1(4) FROM $t").contains("needs at least one key column"))
    assert(err(s"SELECT ubunye_bucket_v1(id, id, 4) FROM $t").contains("duplicate column name `id`"))
  }

  test("both functions are registered with usage text, through the extensions and registerAll") {
    for ((name, usage) <- Seq(UbunyeFunctions.ProfileV1 -> "(n_buckets, key, cols...)",
        UbunyeFunctions.BucketV1 -> "(cols..., n_buckets)")) {
      val desc = spark.sql(s"DESCRIBE FUNCTION EXTENDED $name").collect().map(_.getString(0)).mkString("\n")
      assert(desc.contains(s"Usage: $name$usage"), desc)
    }
    val other = spark.newSession()
    UbunyeFunctions.unregisterAll(other)
    assert(!other.catalog.functionExists(UbunyeFunctions.ProfileV1))
    UbunyeFunctions.registerAll(other)
    val p = other.sql("SELECT ubunye_profile_v1(4, array('id'), *) AS p FROM range(10)").head().getStruct(0)
    assert(p.getLong(0) == 10L)
    assert(other.sql("SELECT count(*) FROM range(10) WHERE ubunye_bucket_v1(id, 1) = 0").head().getLong(0) == 10L)
  }
}
