package org.apache.spark.sql.streamwin

import scala.reflect.ClassTag

import org.apache.spark.{Partition, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.execution.streaming.state.{StateStore, StateStoreConf, StateStoreCoordinatorRef}
import org.apache.spark.sql.internal.SessionState
import org.apache.spark.sql.streamwin.StreamingInternals.StatefulOperatorStateInfo
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.SerializableConfiguration

/** One named state store of an operator: its rows' key and value schemas. */
final case class StoreLayout(name: String, keySchema: StructType, valueSchema: StructType)

/**
 * Spark's state store RDD for an operator with several named stores per partition (as Spark's
 * stream-stream join keeps four): each task opens its partition's stores at the micro-batch's version,
 * hands them with its input to `update`, and aborts them if the task ends before `update` committed them.
 * Tasks prefer the executor that has the partition's stores loaded already.
 */
final class OperatorStoresRDD[T: ClassTag, U: ClassTag](
    input: RDD[T],
    info: StatefulOperatorStateInfo,
    stores: Seq[StoreLayout],
    sessionState: SessionState,
    @transient private val coordinator: Option[StateStoreCoordinatorRef],
    update: (Seq[StateStore], Iterator[T]) => Iterator[U]) extends RDD[U](input) {

  private val storeConf = new StateStoreConf(sessionState.conf)
  // A Hadoop configuration is about 10 KB: broadcast once, as Spark's own state store RDD does.
  private val hadoopConf = input.context.broadcast(new SerializableConfiguration(sessionState.newHadoopConf()))

  override protected def getPartitions: Array[Partition] = input.partitions

  override def getPreferredLocations(partition: Partition): Seq[String] =
    coordinator.flatMap(c => OperatorStateStores.location(c,
      OperatorStateStores.providerId(info, partition.index, stores.head.name))).toSeq

  override def compute(partition: Partition, context: TaskContext): Iterator[U] = {
    val opened = stores.zipWithIndex.map { case (store, i) =>
      val opened = OperatorStateStores.open(OperatorStateStores.providerId(info, partition.index, store.name),
        store.keySchema, store.valueSchema, info.storeVersion,
        OperatorStateStores.checkpointIdOf(info, partition.index, i), storeConf, hadoopConf.value.value)
      context.addTaskCompletionListener[Unit](_ => if (!opened.hasCommitted) opened.abort())
      opened
    }
    update(opened, input.iterator(partition, context))
  }
}
