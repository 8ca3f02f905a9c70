package streamwin

import org.scalatest.funsuite.AnyFunSuite

import streamwin.api.functions

/** Each jar is built for one Spark line and says so, plainly, on any other. */
class SparkLineSuite extends AnyFunSuite {
  test("the jar is built for the Spark line it is tested on") {
    assert(SparkLineCheck.lineOf(org.apache.spark.SPARK_VERSION) == BuildInfo.SparkLine)
    assert(SparkLineCheck.mismatch(org.apache.spark.SPARK_VERSION).isEmpty)
    assert(BuildInfo.SupportedLines == Seq("4.0", "4.1", "4.2", "4.3"))
  }

  test("another supported line is told which jar to use") {
    val other = BuildInfo.SupportedLines.find(_ != BuildInfo.SparkLine).get
    assert(SparkLineCheck.mismatch(s"$other.2").contains(
      s"streamwin: this jar (streamwin-spark${BuildInfo.SparkLine}_2.13.jar, streamwin ${BuildInfo.Version}) is built " +
        s"for Spark ${BuildInfo.SparkLine}, but Spark $other.2 is running: use streamwin-spark${other}_2.13.jar instead " +
        "(in Python, streamwin.configure(builder) picks it)"))
  }

  test("an unsupported Spark is told the supported lines") {
    for (version <- Seq("3.5.1", "4.4.0-SNAPSHOT", "5.0.0")) {
      assert(SparkLineCheck.mismatch(version).get.endsWith(s"but Spark $version is running: streamwin supports Spark 4.0, 4.1, 4.2, 4.3"))
    }
  }

  test("a mismatched jar names every SQL function streamwin registers") {
    assert(functions.sqlFunctions.map(_.name).sorted == SparkLineCheck.functionNames.sorted)
    assert(SparkLineCheck.functionNames.nonEmpty && SparkLineCheck.functionNames.distinct == SparkLineCheck.functionNames)
  }
}
