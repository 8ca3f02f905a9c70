package streamwin

import org.scalatest.funsuite.AnyFunSuite

import streamwin.api.functions

/** Each jar is built for one Spark line and Scala version and says so, plainly, on any other. */
class SparkLineSuite extends AnyFunSuite {
  private val runningScala = SparkLineCheck.lineOf(_root_.scala.util.Properties.versionNumberString)
  private val jar = s"streamwin-spark${BuildInfo.SparkLine}_${BuildInfo.ScalaBinaryVersion}.jar"

  test("the jar is built for the Spark line and Scala version it is tested on") {
    assert(SparkLineCheck.lineOf(org.apache.spark.SPARK_VERSION) == BuildInfo.SparkLine)
    assert(runningScala == BuildInfo.ScalaBinaryVersion)
    assert(SparkLineCheck.mismatch(org.apache.spark.SPARK_VERSION, _root_.scala.util.Properties.versionNumberString) == null)
    assert(BuildInfo.SupportedLinesText == "3.5,4.0,4.1,4.2,4.3")
    assert(BuildInfo.JarsText == "3.5_2.12,3.5_2.13,4.0_2.13,4.1_2.13,4.2_2.13,4.3_2.13")
  }

  test("another supported line, or another Scala version of one, is told which jar to use") {
    val other = BuildInfo.SupportedLinesText.split(",").find(_ != BuildInfo.SparkLine).get
    val otherScala = if (other == "3.5") "2.12" else "2.13"
    assert(SparkLineCheck.mismatch(s"$other.2", s"$otherScala.11").getMessage ==
      s"streamwin: this jar ($jar, streamwin ${BuildInfo.Version}) is built for Spark ${BuildInfo.SparkLine} on Scala " +
        s"${BuildInfo.ScalaBinaryVersion}, but Spark $other.2 on Scala $otherScala is running: use " +
        s"streamwin-spark${other}_$otherScala.jar instead (in Python, streamwin.configure(builder) picks it)")
    val otherOf35 = if (BuildInfo.SparkLine == "3.5" && BuildInfo.ScalaBinaryVersion == "2.12") "2.13" else "2.12"
    assert(SparkLineCheck.mismatch("3.5.7", s"$otherOf35.18").getMessage.endsWith(
      s"but Spark 3.5.7 on Scala $otherOf35 is running: use streamwin-spark3.5_$otherOf35.jar instead " +
        "(in Python, streamwin.configure(builder) picks it)"))
  }

  test("a supported line on a Scala version without a jar, and an unsupported Spark, are told what there is") {
    assert(SparkLineCheck.mismatch("4.1.0", "2.12.18").getMessage.endsWith(
      "but Spark 4.1.0 on Scala 2.12 is running: streamwin has no jar for Spark 4.1 on Scala 2.12 (its jars: " +
        "streamwin-spark3.5_2.12.jar, streamwin-spark3.5_2.13.jar, streamwin-spark4.0_2.13.jar, " +
        "streamwin-spark4.1_2.13.jar, streamwin-spark4.2_2.13.jar, streamwin-spark4.3_2.13.jar)"))
    for (version <- Seq("3.4.1", "4.4.0-SNAPSHOT", "5.0.0")) {
      assert(SparkLineCheck.mismatch(version, "2.13.16").getMessage.endsWith(
        s"but Spark $version on Scala 2.13 is running: streamwin supports Spark 3.5, 4.0, 4.1, 4.2, 4.3"))
    }
  }

  test("a mismatched jar names every SQL function streamwin registers") {
    val names = SparkLineCheck.functionNames.toSeq
    assert(functions.sqlFunctions.map(_.name).sorted == names.sorted)
    assert(names.nonEmpty && names.distinct == names)
  }
}
