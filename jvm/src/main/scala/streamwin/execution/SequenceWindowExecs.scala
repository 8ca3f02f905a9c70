package streamwin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.catalyst.plans.physical.{AllTuples, ClusteredDistribution, Distribution}
import org.apache.spark.sql.execution.SparkPlan

import streamwin.spec.{WindowPolicies, WindowSpec}

/**
 * Hosts a [[RowWindowEngine]] (count, data-driven and timeInterval windows) over rows clustered by
 * key and sorted by (key, order_by): one pass, one engine reset per key. Rows with a null order_by
 * are skipped and counted; two rows of a key with the same order_by value fail the query, since
 * their order (and so the windows) would be arbitrary — unless the order is the event time itself
 * (`orderIsEventTime`), where rows of equal time are interchangeable.
 */
trait SequenceWindowHost extends StreamWindowExec {
  def streamKeys: Seq[Attribute]
  def order: Attribute
  def signal: Option[Attribute]
  protected def orderIsEventTime: Boolean = false

  override def requiredChildDistribution: Seq[Distribution] =
    if (streamKeys.isEmpty) AllTuples :: Nil else ClusteredDistribution(streamKeys) :: Nil
  override def requiredChildOrdering: Seq[Seq[SortOrder]] =
    Seq((streamKeys :+ order).map(SortOrder(_, Ascending)))

  /** How the per-key engine is built (shared with the streaming host). */
  protected def blueprint: WindowEngineBlueprint

  override protected def doExecute(): RDD[InternalRow] = {
    val (engineBlueprint, keys, childOutput, orderAttr, signalAttr, tiesAllowed, execMetrics) =
      (blueprint, streamKeys, child.output, order, signal, orderIsEventTime, metrics)
    child.execute().mapPartitions { input =>
      new KeyedWindowIterator(input, engineBlueprint, keys, childOutput, orderAttr, signalAttr, tiesAllowed, execMetrics)
    }
  }
}

/** groupBy over count and data windows: one row per window with the aggregate values. */
case class SequenceWindowAggregateExec(
    spec: WindowSpec,
    policies: WindowPolicies,
    streamKeys: Seq[Attribute],
    order: Attribute,
    signal: Option[Attribute],
    functions: Seq[AggregateFunction],
    filters: Seq[Option[Expression]],
    windowAttr: Attribute,
    resultAttrs: Seq[Attribute],
    child: SparkPlan) extends SequenceWindowHost {

  override def output: Seq[Attribute] = streamKeys ++ (windowAttr +: resultAttrs)

  override protected def blueprint: WindowEngineBlueprint =
    WindowEngineBlueprint(spec, policies, child.output, output, Some((functions, filters)))

  override protected def withNewChildInternal(newChild: SparkPlan): SequenceWindowAggregateExec = copy(child = newChild)
}

/** select over count and data windows: every row once per window holding it, tagged with that window. */
case class SequenceWindowAssignExec(
    spec: WindowSpec,
    policies: WindowPolicies,
    streamKeys: Seq[Attribute],
    order: Attribute,
    signal: Option[Attribute],
    windowAttr: Attribute,
    child: SparkPlan) extends SequenceWindowHost {

  override def output: Seq[Attribute] = child.output :+ windowAttr

  override protected def blueprint: WindowEngineBlueprint =
    WindowEngineBlueprint(spec, policies, child.output, output, None)

  override protected def withNewChildInternal(newChild: SparkPlan): SequenceWindowAssignExec = copy(child = newChild)
}

/**
 * Hosts an event-time family replayed row by row: each key's rows in arrival order (`order_by`, or
 * the event time itself, where ties are interchangeable), with the signal its family reads
 * ([[streamwin.spec.RowReplay]]: the event time, or a session's dynamic gap).
 */
trait EventTimeReplayHost extends SequenceWindowHost {
  def time: Attribute
  override protected def orderIsEventTime: Boolean = order.exprId == time.exprId
}

/**
 * groupBy over event-time windows replayed in arrival order: SPL timeInterval panes
 * ([[IntervalWindowEngine]]) and, under event-time policies, tumbling, hopping, timer, sliding and
 * session windows ([[EventTimeReplayEngine]]; without policies the planner takes the slice path).
 */
case class EventTimeReplayAggregateExec(
    spec: WindowSpec,
    policies: WindowPolicies,
    streamKeys: Seq[Attribute],
    order: Attribute,
    time: Attribute,
    signal: Option[Attribute],
    functions: Seq[AggregateFunction],
    filters: Seq[Option[Expression]],
    windowAttr: Attribute,
    resultAttrs: Seq[Attribute],
    child: SparkPlan) extends EventTimeReplayHost {

  override def output: Seq[Attribute] = streamKeys ++ (windowAttr +: resultAttrs)

  override protected def blueprint: WindowEngineBlueprint =
    WindowEngineBlueprint(spec, policies, child.output, output, Some((functions, filters)))

  override protected def withNewChildInternal(newChild: SparkPlan): EventTimeReplayAggregateExec = copy(child = newChild)
}

/**
 * select over event-time windows replayed in arrival order (aligned windows under policies, sliding
 * and session windows, SPL panes): rows tagged with each output of their windows.
 */
case class EventTimeReplayAssignExec(
    spec: WindowSpec,
    policies: WindowPolicies,
    streamKeys: Seq[Attribute],
    order: Attribute,
    time: Attribute,
    signal: Option[Attribute],
    windowAttr: Attribute,
    child: SparkPlan) extends EventTimeReplayHost {

  override def output: Seq[Attribute] = child.output :+ windowAttr

  override protected def blueprint: WindowEngineBlueprint =
    WindowEngineBlueprint(spec, policies, child.output, output, None)

  override protected def withNewChildInternal(newChild: SparkPlan): EventTimeReplayAssignExec = copy(child = newChild)
}
