package streamwin

import org.apache.spark.sql.{SparkSessionExtensions, SparkSessionExtensionsProvider}
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo

/**
 * Registers streamwin in a SparkSession. Found through
 * META-INF/services/org.apache.spark.sql.SparkSessionExtensionsProvider, so having the jar on the
 * classpath (`--jars streamwin-spark4.3_2.13.jar`) is enough; `spark.sql.extensions=streamwin.StreamwinExtensions`
 * also works.
 *
 * This class touches only APIs every supported Spark line shares: the rules and functions, compiled
 * against one line, are loaded by StreamwinRegistration once the running Spark is known to match.
 */
class StreamwinExtensions extends SparkSessionExtensionsProvider {
  // (Java strings, arrays and loops only until the check passed: see SparkLineCheck.)
  override def apply(extensions: SparkSessionExtensions): Unit = {
    val mismatch = SparkLineCheck.mismatch(org.apache.spark.SPARK_VERSION, scala.util.Properties.versionNumberString)
    if (mismatch == null) StreamwinRegistration(extensions)
    else {
      val message = mismatch.getMessage
      // Spark may log and swallow an extension's exception; the functions then fail with the same message.
      val names = SparkLineCheck.functionNames
      var i = 0
      while (i < names.length) {
        val info = new ExpressionInfo(classOf[StreamwinExtensions].getName, null, names(i), message, "", "", "", "", "", "", "")
        extensions.injectFunction(new Tuple3(FunctionIdentifier(names(i)), info,
          new MismatchedFunction(message)))
        i += 1
      }
      throw mismatch
    }
  }
}

/**
 * What a function of a mismatched jar does when called. It takes Any, not a Seq: a Seq parameter would
 * be cast to this jar's Scala `Seq`, which another Scala version's Spark does not pass.
 */
private final class MismatchedFunction(message: String)
    extends scala.runtime.AbstractFunction1[Any, org.apache.spark.sql.catalyst.expressions.Expression] {
  override def apply(arguments: Any): org.apache.spark.sql.catalyst.expressions.Expression =
    throw new SparkLineMismatchException(message)
}
