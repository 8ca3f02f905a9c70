package streamwin

import org.apache.spark.sql.{SparkSessionExtensions, SparkSessionExtensionsProvider}

import streamwin.catalyst.{CheckStreamWindows, ResolveStreamWindows, WindowFunctions}
import streamwin.execution.StreamWindowStrategy

/**
 * Registers streamwin in a SparkSession. Found through
 * META-INF/services/org.apache.spark.sql.SparkSessionExtensionsProvider, so having the jar on the
 * classpath (`--jars streamwin.jar`) is enough; `spark.sql.extensions=streamwin.StreamwinExtensions`
 * also works.
 */
class StreamwinExtensions extends SparkSessionExtensionsProvider {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    WindowFunctions.all.foreach(extensions.injectFunction)
    extensions.injectResolutionRule(_ => ResolveStreamWindows)
    extensions.injectCheckRule(_ => CheckStreamWindows)
    extensions.injectPlannerStrategy(_ => StreamWindowStrategy)
  }
}
