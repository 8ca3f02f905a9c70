package streamwin

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.streamwin.SparkShim

import streamwin.api.functions
import streamwin.catalyst.{CheckStreamWindows, EkuiperDialect, EkuiperHavingColumns, ExpandWindowStar, ResolveGroupedWindows,
  ResolveStreamWindows, StreamwinParser}
import streamwin.execution.StreamWindowStrategy

/** What streamwin adds to a session: its SQL functions, analyzer rules and planner strategy. */
object StreamwinRegistration {
  // Sessions' extension objects streamwin registered in. On Spark 3.5 a session applies the providers of
  // `spark.sql.extensions` and of the ServiceLoader both, so streamwin may be asked twice (its parser and
  // rules would then run twice).
  private val registered = java.util.Collections.synchronizedSet(
    java.util.Collections.newSetFromMap(new java.util.WeakHashMap[SparkSessionExtensions, java.lang.Boolean]))

  /** Registers streamwin's functions, parser, rules and strategy, once per extensions object. */
  def apply(extensions: SparkSessionExtensions): Unit = if (registered.add(extensions)) {
    functions.sqlFunctions.foreach(f => extensions.injectFunction(f.registration))
    // Spark's parser, with eKuiper's FILTER mistakes named (everything else passes through unchanged).
    extensions.injectParser((_, delegate) => new StreamwinParser(delegate))
    // eKuiper's window SQL becomes sw_* windows before anything resolves (its units are bare words).
    SparkShim.injectEarlyAnalysisRule(extensions, _ => EkuiperDialect)
    SparkShim.injectEarlyAnalysisRule(extensions, _ => ExpandWindowStar)
    extensions.injectResolutionRule(_ => ResolveStreamWindows)
    extensions.injectResolutionRule(_ => EkuiperHavingColumns)
    extensions.injectPostHocResolutionRule(_ => ResolveGroupedWindows)
    extensions.injectCheckRule(_ => CheckStreamWindows)
    extensions.injectPlannerStrategy(_ => StreamWindowStrategy)
  }
}
