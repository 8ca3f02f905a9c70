package org.apache.spark.sql.streamwin

import org.apache.spark.sql.execution.UnaryExecNode
import org.apache.spark.sql.execution.streaming.StateStoreWriter
import org.apache.spark.sql.execution.streaming.state.StateStore

/** Spark 4.0's streaming internals that streamwin reaches (they moved to other packages in 4.1). */
object StreamingInternals {
  type StreamExecution = org.apache.spark.sql.execution.streaming.StreamExecution
  type StreamingQueryWrapper = org.apache.spark.sql.execution.streaming.StreamingQueryWrapper
  type IncrementalExecution = org.apache.spark.sql.execution.streaming.IncrementalExecution
  type QueryExecutionThread = org.apache.spark.sql.execution.streaming.QueryExecutionThread
  type StateStoreWriter = org.apache.spark.sql.execution.streaming.StateStoreWriter
  type StatefulOperatorStateInfo = org.apache.spark.sql.execution.streaming.StatefulOperatorStateInfo
  type StatefulOperatorCustomMetric = org.apache.spark.sql.execution.streaming.StatefulOperatorCustomMetric
  type StatefulOpStateStoreCheckpointInfo = org.apache.spark.sql.execution.streaming.StatefulOpStateStoreCheckpointInfo
  val StatefulOperatorPartitioning = org.apache.spark.sql.execution.streaming.StatefulOperatorPartitioning
  val StatefulOperatorStateInfo = org.apache.spark.sql.execution.streaming.StatefulOperatorStateInfo
  val StatefulOpStateStoreCheckpointInfo = org.apache.spark.sql.execution.streaming.StatefulOpStateStoreCheckpointInfo
}

/**
 * A stateful operator over one child that writes several named state stores, as Spark 4.0's
 * [[StateStoreWriter]] takes it (4.0 lists no store names of its own).
 */
abstract class StateStoresWriterExec(storeNames: Seq[String]) extends UnaryExecNode with StateStoreWriter {
  /** A store's rows, memory and provider metrics, once it committed. (Checkpoint ids are reported for all stores at once.) */
  protected def recordStoreMetrics(store: StateStore): Unit = {
    val storeMetrics = store.metrics
    longMetric("numTotalStateRows") += storeMetrics.numKeys
    longMetric("stateMemory") += storeMetrics.memoryUsedBytes
    storeMetrics.customMetrics.foreach { case (metric, value) => longMetric(metric.name) += value }
  }

}
