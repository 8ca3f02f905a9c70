package org.apache.spark.sql.streamwin

import org.apache.spark.sql.execution.UnaryExecNode
import org.apache.spark.sql.execution.streaming.StateStoreWriter
import org.apache.spark.sql.execution.streaming.state.StateStore

/** Spark 3.5's streaming internals that streamwin reaches (the packages of 4.0; 3.5 has no state checkpoint ids). */
object StreamingInternals {
  type StreamExecution = org.apache.spark.sql.execution.streaming.StreamExecution
  type StreamingQueryWrapper = org.apache.spark.sql.execution.streaming.StreamingQueryWrapper
  type IncrementalExecution = org.apache.spark.sql.execution.streaming.IncrementalExecution
  type QueryExecutionThread = org.apache.spark.sql.execution.streaming.QueryExecutionThread
  type StateStoreWriter = org.apache.spark.sql.execution.streaming.StateStoreWriter
  type StatefulOperatorStateInfo = org.apache.spark.sql.execution.streaming.StatefulOperatorStateInfo
  type StatefulOperatorCustomMetric = org.apache.spark.sql.execution.streaming.StatefulOperatorCustomMetric
  val StatefulOperatorPartitioning = org.apache.spark.sql.execution.streaming.StatefulOperatorPartitioning
  val StatefulOperatorStateInfo = org.apache.spark.sql.execution.streaming.StatefulOperatorStateInfo
}

/**
 * A stateful operator over one child that writes several named state stores, as Spark 3.5's
 * [[StateStoreWriter]] takes it (3.5 lists no store names of its own).
 */
abstract class StateStoresWriterExec(storeNames: Seq[String]) extends UnaryExecNode with StateStoreWriter {
  /** A store's rows, memory and provider metrics, once it committed. */
  protected def recordStoreMetrics(store: StateStore): Unit = {
    val storeMetrics = store.metrics
    longMetric("numTotalStateRows") += storeMetrics.numKeys
    longMetric("stateMemory") += storeMetrics.memoryUsedBytes
    storeMetrics.customMetrics.foreach { case (metric, value) => longMetric(metric.name) += value }
  }
}
