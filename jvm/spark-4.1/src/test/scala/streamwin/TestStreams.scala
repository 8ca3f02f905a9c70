package streamwin

/** Spark 4.1's (and later lines') in-memory test source. */
object TestStreams {
  val MemoryStream = org.apache.spark.sql.execution.streaming.runtime.MemoryStream
}
