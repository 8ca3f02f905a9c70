package org.apache.spark.sql.streamwin

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.streaming.state.{StateStore, StateStoreConf, StateStoreCoordinatorRef,
  StateStoreProviderId}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

import org.apache.spark.sql.streamwin.StreamingInternals.{IncrementalExecution, StatefulOperatorStateInfo}

/**
 * The state stores of one stateful operator: several named stores per partition, as Spark's stream-stream
 * join keeps. Spark 3.5's state store API: no column families or checkpoint ids; the store checks its own
 * schema when a task loads partition 0.
 */
object OperatorStateStores {
  // The first micro-batch each run planned (3.5's IncrementalExecution does not say which is first). Weak
  // keys: a run's id object lives as long as its query does, so a stopped query's entry goes with it.
  private val firstBatches = java.util.Collections.synchronizedMap(new java.util.WeakHashMap[java.util.UUID, java.lang.Long])

  /** The first micro-batch this run of the query plans. */
  def firstBatchOfRun(execution: IncrementalExecution): Boolean =
    firstBatches.computeIfAbsent(execution.runId, _ => execution.currentBatchId) == execution.currentBatchId

  /** The checkpoint id of the partition's `store`-th store (none: 3.5 has no checkpoint ids). */
  def checkpointIdOf(info: StatefulOperatorStateInfo, partition: Int, store: Int): Option[String] = None

  /** Spark's state checkpoint ids are on (never on 3.5). */
  def checkpointIdsOn(conf: SQLConf): Boolean = false

  def providerId(info: StatefulOperatorStateInfo, partition: Int, storeName: String): StateStoreProviderId =
    StateStoreProviderId(info, partition, storeName)

  def coordinator(session: SparkSession): StateStoreCoordinatorRef = session.streams.stateStoreCoordinator

  /** Where the partition's first store is loaded already, if anywhere (the task is best run there). */
  def location(coordinator: StateStoreCoordinatorRef, id: StateStoreProviderId): Option[String] = coordinator.getLocation(id)

  /** The store of version `version` (the micro-batch's), to update and commit. */
  def open(id: StateStoreProviderId, keySchema: StructType, valueSchema: StructType, version: Long, checkpointId: Option[String],
      storeConf: StateStoreConf, hadoopConf: Configuration): StateStore =
    StateStore.get(id, keySchema, valueSchema, 0, version, storeConf, hadoopConf)
}

/** What an operator with several named stores tells Spark 3.5's stateful planning: nothing beyond its stores. */
trait OperatorStoresWriter extends StreamingInternals.StateStoreWriter { self: SparkPlan =>
  /** The operator's stores. */
  protected def storeLayouts: Seq[StoreLayout]

  /** 3.5 has no state checkpoint ids to report. */
  protected def reportCheckpointIds(stores: Seq[StateStore]): Unit = ()
}
