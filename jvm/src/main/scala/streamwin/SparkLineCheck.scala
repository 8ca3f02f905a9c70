package streamwin

/**
 * Each streamwin jar is compiled for one Spark line (Spark's internal APIs differ between lines), so
 * the extension first checks the running Spark: a jar of another line must fail with this message
 * when it registers, never with a NoClassDefFoundError in the middle of a query.
 */
object SparkLineCheck {
  /** The SQL functions a session gets from streamwin, read from the sources by the build (apart from
   *  their builders, so a mismatched jar can name them without loading any class compiled against
   *  another Spark line). */
  val functionNames: Seq[String] = BuildInfo.FunctionNames

  def lineOf(sparkVersion: String): String = sparkVersion.split("[.-]").take(2).mkString(".")

  /** Why this jar cannot run on `sparkVersion`, or None when it can. */
  def mismatch(sparkVersion: String): Option[String] = {
    val running = lineOf(sparkVersion)
    if (running == BuildInfo.SparkLine) None
    else {
      val jar = s"streamwin-spark${BuildInfo.SparkLine}_${BuildInfo.ScalaBinaryVersion}.jar"
      val remedy =
        if (BuildInfo.SupportedLines.contains(running))
          s"use streamwin-spark${running}_${BuildInfo.ScalaBinaryVersion}.jar instead (in Python, streamwin.configure(builder) picks it)"
        else s"streamwin supports Spark ${BuildInfo.SupportedLines.mkString(", ")}"
      Some(s"streamwin: this jar ($jar, streamwin ${BuildInfo.Version}) is built for Spark ${BuildInfo.SparkLine}, " +
        s"but Spark $sparkVersion is running: $remedy")
    }
  }
}

/** Thrown when the extension registers in a Spark of another line than the jar's. */
class SparkLineMismatchException(message: String) extends RuntimeException(message)
