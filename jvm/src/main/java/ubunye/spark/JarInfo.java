package ubunye.spark;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * What this ubunye jar is built for: its Spark line ("3.5", "4.0" or "4.1"), Scala version and file name, read from
 * ubunye/spark/jar.properties (written by build.sbt next to the manifest attributes of the same values).
 *
 * <p>Plain Java on purpose: it loads and runs under any Scala, so a session holding the jar of another Spark
 * line or Scala version can still ask it what is wrong ({@link #mismatch}) before any Scala code of the jar
 * runs. Python reaches it through py4j as {@code ubunye.spark.JarInfo}.
 */
public final class JarInfo {
  private static final Properties PROPS = load();

  private JarInfo() {}

  private static Properties load() {
    Properties p = new Properties();
    try (InputStream in = JarInfo.class.getResourceAsStream("jar.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read ubunye/spark/jar.properties", e);
    }
    return p;
  }

  /** The ubunye version, e.g. "0.7.0". */
  public static String version() {
    return PROPS.getProperty("version", "unknown");
  }

  /** The Spark line this jar is for: "3.5", "4.0" or "4.1" (the last serves Spark 4.1, 4.2 and 4.3). */
  public static String sparkLine() {
    return PROPS.getProperty("spark.line", "unknown");
  }

  /** The Scala binary version this jar is for: "2.12" or "2.13". */
  public static String scalaBinary() {
    return PROPS.getProperty("scala.binary", "unknown");
  }

  /** This jar's file name, e.g. "ubunye-spark-3.5_2.12-0.7.0.jar". */
  public static String jarName() {
    return PROPS.getProperty("jar", "ubunye-spark (unknown build)");
  }

  /**
   * The jar line of a Spark version: "3.5.2" and "3.5.0-databricks" give "3.5", "4.0.1" gives "4.0", and every
   * later 4.x ("4.1.0", "4.3.0") gives "4.1": one jar links on 4.1 to 4.3, not on 4.0 (toPrettySQL changed).
   */
  private static String lineOf(String sparkVersion) {
    String[] parts = sparkVersion.trim().split("[.-]");
    if (parts.length >= 2 && parts[0].equals("4")) {
      return parts[1].equals("0") ? "4.0" : "4.1";
    }
    return parts.length >= 2 ? parts[0] + "." + parts[1] : sparkVersion;
  }

  /** "2.12" of "2.12.18". */
  private static String binaryOf(String scalaVersion) {
    String[] parts = scalaVersion.trim().split("\\.");
    return parts.length >= 2 ? parts[0] + "." + parts[1] : scalaVersion;
  }

  /** The name of the jar a session with this Spark and Scala version needs. */
  private static String jarFor(String sparkVersion, String scalaVersion) {
    return "ubunye-spark-" + lineOf(sparkVersion) + "_" + binaryOf(scalaVersion) + "-" + version() + ".jar";
  }

  /**
   * Null when this jar fits a session of Spark {@code sparkVersion} on Scala {@code scalaVersion}; else what
   * is wrong and which jar to attach instead.
   */
  public static String mismatch(String sparkVersion, String scalaVersion) {
    String line = lineOf(sparkVersion);
    String binary = binaryOf(scalaVersion);
    if (line.equals(sparkLine()) && binary.equals(scalaBinary())) {
      return null;
    }
    boolean supported = line.equals("3.5") || line.equals("4.0") || line.equals("4.1");
    return "the ubunye jar on this session's classpath ("
        + jarName()
        + ") is built for Spark "
        + sparkLine()
        + " / Scala "
        + scalaBinary()
        + ", but this session runs Spark "
        + sparkVersion
        + " / Scala "
        + scalaVersion
        + (supported
            ? ": attach " + jarFor(sparkVersion, scalaVersion) + " instead"
            : ": ubunye has jars for Spark 3.5 (Scala 2.12 and 2.13) and 4.0 to 4.3 (Scala 2.13) only;"
                + " use the jar-free path (hash_frame without the jar)");
  }

  /** {@link #mismatch(String, String)} of the Spark and Scala running this JVM. */
  public static String mismatch() {
    return mismatch(org.apache.spark.package$.MODULE$.SPARK_VERSION(), scala.util.Properties.versionNumberString());
  }

  /** True when this jar fits the running Spark and Scala; else logs {@link #mismatch()} as an error. */
  public static boolean fitsOrLog() {
    String wrong = mismatch();
    if (wrong != null) {
      org.slf4j.LoggerFactory.getLogger(JarInfo.class).error(wrong);
    }
    return wrong == null;
  }
}
