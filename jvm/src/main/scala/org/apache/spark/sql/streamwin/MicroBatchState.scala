package org.apache.spark.sql.streamwin

import org.apache.spark.sql.streamwin.StreamingInternals.{IncrementalExecution, QueryExecutionThread,
  StatefulOperatorStateInfo}

/**
 * The micro-batch a streaming query is planning, as a stateful operator of streamwin's own needs it.
 *
 * Spark fills the state info, watermarks and batch time of its own stateful operators in a planning rule
 * of its IncrementalExecution (`state`) that matches them by class; no public hook lets another operator
 * in. streamwin's operator is planned inside that IncrementalExecution (its planner runs on the query's
 * thread), so it takes its state info from the same counter Spark's operators take theirs from, at
 * planning, and its watermarks from the same propagator, at execution: operator ids stay unique and
 * stable across restarts, Spark's schema and metadata rule then sees a complete stateful operator, and
 * watermarks propagate through it as through Spark's own. This is the one place that reaches into
 * Spark's streaming execution; a test runs it on every supported Spark line.
 */
final class PlannedMicroBatch private (@transient private val execution: IncrementalExecution,
    @transient private val query: StreamingInternals.StreamExecution) extends Serializable {
  /** The micro-batch's id (the state stores' version to write). */
  val batchId: Long = execution.currentBatchId
  /** The first micro-batch this run of the query plans (Spark validates state schemas on it). */
  val firstOfRun: Boolean = OperatorStateStores.firstBatchOfRun(execution)
  /** The processing time of the micro-batch (ms): the same for every task, as Spark's own timeouts read it. */
  val batchTimestampMs: Long = execution.offsetSeqMetadata.batchTimestampMs
  /** The query's watermark for this micro-batch (ms): no operator's input watermark is later. */
  val batchWatermarkMs: Long = execution.offsetSeqMetadata.batchWatermarkMs
  /** This run of the query (a restart is another run). */
  val runId: String = execution.runId.toString
  /** The query runs only until its input is read (trigger availableNow or once). */
  def runsToItsEnd: Boolean =
    Set("AvailableNowTrigger", "OneTimeTrigger").contains(query.trigger.getClass.getSimpleName.stripSuffix("$"))

  /**
   * The state info of the next stateful operator of the plan: taken from Spark's own counter, so no
   * other stateful operator of the query gets the same id.
   */
  def nextStateInfo(): StatefulOperatorStateInfo = PlannedMicroBatch.nextStateInfo.invoke(execution)
    .asInstanceOf[StatefulOperatorStateInfo]

  /** The operator's input watermark (ms) that evicts state in this micro-batch, once Spark propagated it. */
  def evictionWatermarkMs(operatorId: Long): Long =
    execution.watermarkPropagator.getInputWatermarkForEviction(batchId, operatorId)

  /** The operator's input watermark of the previous micro-batch (ms). */
  def previousWatermarkMs(operatorId: Long): Long =
    execution.watermarkPropagator.getInputWatermarkForLateEvents(batchId, operatorId)
}

object PlannedMicroBatch {
  private lazy val nextStateInfo: java.lang.reflect.Method = {
    val method = classOf[IncrementalExecution].getDeclaredMethods
      .find(m => m.getParameterCount == 0 && m.getName.endsWith("nextStatefulOperationStateInfo"))
      .getOrElse(throw new IllegalStateException(
        s"streamwin: this Spark (${org.apache.spark.SPARK_VERSION}) hands out no state info to stateful operators"))
    method.setAccessible(true)
    method
  }

  /**
   * The micro-batch being planned on this thread, if the thread runs a streaming query (a stream execution
   * thread plans each micro-batch before running it); None elsewhere (explain() of a streaming DataFrame).
   */
  def current(): Option[PlannedMicroBatch] = Thread.currentThread() match {
    case thread: QueryExecutionThread =>
      // The query's thread is an inner class of its StreamExecution, which holds the execution being planned.
      val outer = thread.getClass.getDeclaredFields.find(_.getName == "$outer").getOrElse(
        throw new IllegalStateException(s"streamwin: this Spark (${org.apache.spark.SPARK_VERSION}) runs streaming " +
          "queries on a thread that does not name its query"))
      outer.setAccessible(true)
      outer.get(thread) match {
        case query: StreamingInternals.StreamExecution => Option(query.lastExecution).map(new PlannedMicroBatch(_, query))
        case _ => None
      }
    case _ => None
  }
}
