package org.apache.spark.sql.streamwin

import org.apache.spark.sql.execution.UnaryExecNode
import org.apache.spark.sql.execution.streaming.operators.stateful.StateStoreWriter
import org.apache.spark.sql.execution.streaming.state.StateStore

/** Spark 4.1's (and later lines') streaming internals that streamwin reaches. */
object StreamingInternals {
  type StreamExecution = org.apache.spark.sql.execution.streaming.runtime.StreamExecution
  type StreamingQueryWrapper = org.apache.spark.sql.execution.streaming.runtime.StreamingQueryWrapper
  type IncrementalExecution = org.apache.spark.sql.execution.streaming.runtime.IncrementalExecution
  type QueryExecutionThread = org.apache.spark.sql.execution.streaming.runtime.QueryExecutionThread
  type StateStoreWriter = org.apache.spark.sql.execution.streaming.operators.stateful.StateStoreWriter
  type StatefulOperatorStateInfo = org.apache.spark.sql.execution.streaming.operators.stateful.StatefulOperatorStateInfo
  type StatefulOperatorCustomMetric = org.apache.spark.sql.execution.streaming.operators.stateful.StatefulOperatorCustomMetric
  type StatefulOpStateStoreCheckpointInfo =
    org.apache.spark.sql.execution.streaming.operators.stateful.StatefulOpStateStoreCheckpointInfo
  val StatefulOperatorPartitioning = org.apache.spark.sql.execution.streaming.operators.stateful.StatefulOperatorPartitioning
  val StatefulOperatorStateInfo = org.apache.spark.sql.execution.streaming.operators.stateful.StatefulOperatorStateInfo
  val StatefulOpStateStoreCheckpointInfo =
    org.apache.spark.sql.execution.streaming.operators.stateful.StatefulOpStateStoreCheckpointInfo
}

/**
 * A stateful operator over one child that writes several named state stores, as Spark 4.1's
 * [[StateStoreWriter]] takes it: it lists them (per-store instance metrics, commit tracking).
 */
abstract class StateStoresWriterExec(storeNames: Seq[String]) extends UnaryExecNode with StateStoreWriter {
  override val stateStoreNames: Seq[String] = storeNames

  /** A store's rows, memory and provider metrics, once it committed. (Checkpoint ids are reported for all stores at once.) */
  protected def recordStoreMetrics(store: StateStore): Unit = setStoreMetrics(store, setCheckpointInfo = false)

}
