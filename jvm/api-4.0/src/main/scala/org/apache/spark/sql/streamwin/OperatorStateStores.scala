package org.apache.spark.sql.streamwin

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.execution.streaming.state.{NoPrefixKeyStateEncoderSpec, OperatorInfoV1, OperatorStateMetadata,
  OperatorStateMetadataV1, StateSchemaCompatibilityChecker, StateSchemaValidationResult, StateStore,
  StateStoreColFamilySchema, StateStoreConf, StateStoreCoordinatorRef, StateStoreMetadataV1, StateStoreProviderId}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.internal.{SQLConf, SessionState}
import org.apache.spark.sql.types.StructType

import org.apache.spark.sql.streamwin.StreamingInternals.{IncrementalExecution, StatefulOperatorStateInfo,
  StatefulOpStateStoreCheckpointInfo}

/**
 * The state stores of one stateful operator: several named stores per partition, as Spark's stream-stream
 * join keeps. Spark 4's state store API (column families, checkpoint ids, schema evolution); 3.5 has its
 * own (jvm/api-3.5).
 */
object OperatorStateStores {
  /** The first micro-batch this run of the query plans. */
  def firstBatchOfRun(execution: IncrementalExecution): Boolean = execution.isFirstBatch

  /** The checkpoint id of the partition's `store`-th store that the micro-batch loads (checkpoint format 2). */
  def checkpointIdOf(info: StatefulOperatorStateInfo, partition: Int, store: Int): Option[String] =
    info.stateStoreCkptIds.flatMap(ids => Option(ids(partition)).map(_(store)))

  /** Spark's state checkpoint ids are on: one version of a store may have several lineages. */
  def checkpointIdsOn(conf: SQLConf): Boolean = StatefulOperatorStateInfo.enableStateStoreCheckpointIds(conf)

  def providerId(info: StatefulOperatorStateInfo, partition: Int, storeName: String): StateStoreProviderId =
    StateStoreProviderId(info, partition, storeName)

  def coordinator(session: SparkShim.ClassicSession): StateStoreCoordinatorRef =
    session.streams.stateStoreCoordinator

  /** Where the partition's first store is loaded already, if anywhere (the task is best run there). */
  def location(coordinator: StateStoreCoordinatorRef, id: StateStoreProviderId): Option[String] = coordinator.getLocation(id)

  /** The store of version `info.storeVersion` (the micro-batch's), to update and commit. */
  def open(id: StateStoreProviderId, keySchema: StructType, valueSchema: StructType, version: Long, checkpointId: Option[String],
      storeConf: StateStoreConf, hadoopConf: Configuration): StateStore =
    StateStore.get(id, keySchema, valueSchema, NoPrefixKeyStateEncoderSpec(keySchema), version, checkpointId, None,
      useColumnFamilies = false, storeConf, hadoopConf)

  /**
   * Records the store's schema on the query's first micro-batch and checks it against the one the
   * checkpoint recorded (Spark's own check: a query whose state rows changed shape is refused).
   */
  def validateSchema(info: StatefulOperatorStateInfo, hadoopConf: Configuration, sessionState: SessionState,
      schemaVersion: Int, storeName: String, keySchema: StructType, valueSchema: StructType): StateSchemaValidationResult =
    StateSchemaCompatibilityChecker.validateAndMaybeEvolveStateSchema(info, hadoopConf,
      List(StateStoreColFamilySchema(StateStore.DEFAULT_COL_FAMILY_NAME, 0, keySchema, 0, valueSchema,
        Some(NoPrefixKeyStateEncoderSpec(keySchema)))), sessionState, schemaVersion, storeName = storeName)
}

/**
 * What an operator with several named stores tells Spark 4's stateful planning: the stores' schemas
 * (checked and recorded on a run's first micro-batch), the operator's metadata (the `state-metadata`
 * source reads it) and the committed stores' checkpoint ids.
 */
trait OperatorStoresWriter extends StreamingInternals.StateStoreWriter { self: SparkPlan =>
  /** The operator's stores. */
  protected def storeLayouts: Seq[StoreLayout]

  override def validateAndMaybeEvolveStateSchema(hadoopConf: Configuration, batchId: Long, stateSchemaVersion: Int)
      : List[StateSchemaValidationResult] =
    storeLayouts.map(s => OperatorStateStores.validateSchema(getStateInfo, hadoopConf, session.sessionState,
      stateSchemaVersion, s.name, s.keySchema, s.valueSchema)).toList

  override def operatorStateMetadata(stateSchemaPaths: List[List[String]]): OperatorStateMetadata = {
    val info = getStateInfo
    OperatorStateMetadataV1(OperatorInfoV1(info.operatorId, shortName),
      storeLayouts.map(s => StateStoreMetadataV1(s.name, 0, info.numPartitions)).toArray)
  }

  /** Reports the committed stores' checkpoint ids (checkpoint format 2): one array per partition, in store order. */
  protected def reportCheckpointIds(stores: Seq[StateStore]): Unit =
    if (OperatorStateStores.checkpointIdsOn(conf)) {
      val infos = stores.map(_.getStateStoreCheckpointInfo())
      setStateStoreCheckpointInfo(StatefulOpStateStoreCheckpointInfo(infos.head.partitionId, infos.head.batchVersion,
        Some(infos.map(_.stateStoreCkptId.orNull).toArray),
        if (infos.exists(_.baseStateStoreCkptId.isDefined)) Some(infos.map(_.baseStateStoreCkptId.orNull).toArray) else None))
    }
}
