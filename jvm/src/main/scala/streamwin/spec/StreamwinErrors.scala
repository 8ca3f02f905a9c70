package streamwin.spec

import org.apache.spark.sql.AnalysisException

/**
 * An AnalysisException carrying streamwin's own message (Spark's public constructors need an error
 * class registered in Spark's error-conditions file; the message-only one is open to subclasses).
 * PySpark and Spark Connect surface it as a plain AnalysisException.
 */
class StreamwinAnalysisException(message: String)
    extends AnalysisException(message, None, None, None, None, Map.empty, Array.empty)

/** Every user-facing error of streamwin: they name the function, the argument and what is allowed. */
object StreamwinErrors {
  def invalidArgument(function: String, argument: String, problem: String): AnalysisException =
    new StreamwinAnalysisException(s"$function: argument `$argument` $problem")

  def misuse(function: String, problem: String): AnalysisException =
    new StreamwinAnalysisException(s"$function: $problem")
}
