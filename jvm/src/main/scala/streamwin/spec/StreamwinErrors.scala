package streamwin.spec

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.trees.Origin

/**
 * An AnalysisException carrying streamwin's own message (Spark's public constructors need an error
 * class registered in Spark's error-conditions file; the message-only one is open to subclasses).
 * PySpark and Spark Connect surface it as a plain AnalysisException.
 */
class StreamwinAnalysisException(message: String, line: Option[Int] = None, startPosition: Option[Int] = None)
    extends AnalysisException(message, line, startPosition, None, None, Map.empty, Array.empty) {

  // Spark attaches the caller's query context here; rendering a context needs a registered error
  // class (PySpark fails on it otherwise), so keep the SQL position and the plain message only.
  override def withPosition(origin: Origin): AnalysisException = {
    val positioned = new StreamwinAnalysisException(message, origin.line, origin.startPosition)
    positioned.setStackTrace(getStackTrace)
    positioned
  }
}

/** Every user-facing error of streamwin: they name the function, the argument and what is allowed. */
object StreamwinErrors {
  def invalidArgument(function: String, argument: String, problem: String): AnalysisException =
    new StreamwinAnalysisException(s"$function: argument `$argument` $problem")

  def misuse(function: String, problem: String): AnalysisException =
    new StreamwinAnalysisException(s"$function: $problem")
}
