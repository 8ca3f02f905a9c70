package streamwin

/**
 * Each streamwin jar is compiled for one Spark line (Spark's internal APIs differ between lines) and one
 * Scala version, so the extension first checks the running Spark: a jar of another line or Scala version
 * must fail with this message when it registers, never with a NoClassDefFoundError or NoSuchMethodError in
 * the middle of a query. Written with Java's strings and arrays only: Scala 2.12 and 2.13 differ in the
 * signatures of their collections and string helpers, and this code must run on the other one too.
 */
object SparkLineCheck {
  /** The SQL functions a session gets from streamwin, read from the sources by the build (apart from
   *  their builders, so a mismatched jar can name them without loading any class compiled against
   *  another Spark line). */
  def functionNames: Array[String] = BuildInfo.FunctionNamesText.split(",")

  /** "4.3.0" -> "4.3", "2.13.16" -> "2.13". */
  def lineOf(version: String): String = {
    val parts = version.split("[.-]")
    if (parts.length < 2) version else parts(0) + "." + parts(1)
  }

  /** Why this jar cannot run on `sparkVersion` with Scala `scalaVersion`, or null when it can. */
  def mismatch(sparkVersion: String, scalaVersion: String): SparkLineMismatchException = {
    val running = lineOf(sparkVersion)
    val scala = lineOf(scalaVersion)
    if (running == BuildInfo.SparkLine && scala == BuildInfo.ScalaBinaryVersion) null
    else {
      val jar = "streamwin-spark" + BuildInfo.SparkLine + "_" + BuildInfo.ScalaBinaryVersion + ".jar"
      val wanted = running + "_" + scala
      val remedy =
        if (("," + BuildInfo.JarsText + ",").contains("," + wanted + ","))
          "use streamwin-spark" + wanted + ".jar instead (in Python, streamwin.configure(builder) picks it)"
        else if (("," + BuildInfo.SupportedLinesText + ",").contains("," + running + ","))
          "streamwin has no jar for Spark " + running + " on Scala " + scala + " (its jars: streamwin-spark" +
            BuildInfo.JarsText.replace(",", ".jar, streamwin-spark") + ".jar)"
        else "streamwin supports Spark " + BuildInfo.SupportedLinesText.replace(",", ", ")
      new SparkLineMismatchException("streamwin: this jar (" + jar + ", streamwin " + BuildInfo.Version +
        ") is built for Spark " + BuildInfo.SparkLine + " on Scala " + BuildInfo.ScalaBinaryVersion + ", but Spark " +
        sparkVersion + " on Scala " + scala + " is running: " + remedy)
    }
  }
}

/** Thrown when the extension registers in a Spark of another line or Scala version than the jar's. */
class SparkLineMismatchException(message: String) extends RuntimeException(message)
