package streamwin

import org.apache.spark.sql.SparkSessionExtensions

import streamwin.catalyst.{CheckStreamWindows, ExpandWindowStar, ResolveGroupedWindows, ResolveStreamWindows, WindowFunctions}
import streamwin.execution.StreamWindowStrategy

/** What streamwin adds to a session: its SQL functions, analyzer rules and planner strategy. */
object StreamwinRegistration {
  def apply(extensions: SparkSessionExtensions): Unit = {
    WindowFunctions.all.foreach(extensions.injectFunction)
    extensions.injectHintResolutionRule(_ => ExpandWindowStar)
    extensions.injectResolutionRule(_ => ResolveStreamWindows)
    extensions.injectPostHocResolutionRule(_ => ResolveGroupedWindows)
    extensions.injectCheckRule(_ => CheckStreamWindows)
    extensions.injectPlannerStrategy(_ => StreamWindowStrategy)
  }
}
