package org.apache.spark.sql.streamwin

/** Spark 4.0's streaming internals that streamwin reaches (they moved to other packages in 4.1). */
object StreamingInternals {
  type StreamExecution = org.apache.spark.sql.execution.streaming.StreamExecution
  type StreamingQueryWrapper = org.apache.spark.sql.execution.streaming.StreamingQueryWrapper
  type TransformWithStateExec = org.apache.spark.sql.execution.streaming.TransformWithStateExec
}
