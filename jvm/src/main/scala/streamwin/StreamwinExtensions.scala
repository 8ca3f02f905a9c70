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
  override def apply(extensions: SparkSessionExtensions): Unit =
    SparkLineCheck.mismatch(org.apache.spark.SPARK_VERSION) match {
      case None => StreamwinRegistration(extensions)
      case Some(message) =>
        // Spark may log and swallow an extension's exception; the functions then fail with the same message.
        SparkLineCheck.functionNames.foreach { name =>
          val info = new ExpressionInfo(classOf[StreamwinExtensions].getName, null, name, message, "", "", "", "", "", "", "")
          extensions.injectFunction((FunctionIdentifier(name), info, (_: Seq[_]) => throw new SparkLineMismatchException(message)))
        }
        throw new SparkLineMismatchException(message)
    }
}
