package org.apache.spark.sql.streamwin

/** Spark 4.1's (and later lines') streaming internals that streamwin reaches. */
object StreamingInternals {
  type StreamExecution = org.apache.spark.sql.execution.streaming.runtime.StreamExecution
  type StreamingQueryWrapper = org.apache.spark.sql.execution.streaming.runtime.StreamingQueryWrapper
  type TransformWithStateExec =
    org.apache.spark.sql.execution.streaming.operators.stateful.transformwithstate.TransformWithStateExec
}
