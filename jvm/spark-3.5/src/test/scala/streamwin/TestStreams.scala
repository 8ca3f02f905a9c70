package streamwin

/** Spark 3.5's and 4.0's in-memory test source (moved to the `runtime` package in 4.1). */
object TestStreams {
  val MemoryStream = org.apache.spark.sql.execution.streaming.MemoryStream
}
