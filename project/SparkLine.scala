/** One ubunye jar of build.sbt: its Spark line ("3.5", "4.0", "4.1"), the Spark release compiled against (the line's
  * oldest), the Scala version that release ships, and the Java release of its class files. */
final case class SparkLine(line: String, spark: String, scala: String, javaRelease: String) {
  def scalaBinary: String = scala.split('.').take(2).mkString(".")

  /** "spark-3.5_2.12": the jar is ubunye-<id>-<version>.jar, its build folder jvm/target/<id>. */
  def id: String = s"spark-${line}_$scalaBinary"

  /** The source folder of what differs between Spark lines (jvm/src/main/scala-spark3 or scala-spark4). */
  def shimFolder: String = if (line.startsWith("3.")) "scala-spark3" else "scala-spark4"
}
