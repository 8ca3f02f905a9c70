package streamwin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.catalyst.plans.physical.{AllTuples, ClusteredDistribution, Distribution}
import org.apache.spark.sql.execution.SparkPlan

import streamwin.engine.WindowPolicies
import streamwin.spec.WindowSpec

/**
 * Replays each key's rows through its window operator ([[streamwin.engine.RowWindowEngine]]), in batch:
 * count and data-driven windows, SPL timeInterval panes, and the event-time windows fed rows (sliding,
 * sessions with a maximum duration, every window under policies). The rows come clustered by key and
 * sorted by (key, order_by): one pass, one engine reset per key. Rows with a null order_by are skipped
 * and counted; two rows of a key with the same order_by value fail the query, since their order (and so
 * the windows) would be arbitrary, unless the order is the event time itself, where rows of equal time
 * are interchangeable.
 *
 * A groupBy (`grouped`) outputs one row per window, `keys ++ window ++ results`, the values of
 * `functions`; a select outputs every row once per window holding it, tagged with that window.
 *
 * @param time   the event time its family reads, if any ([[streamwin.spec.RowReplay]])
 * @param signal what the family reads of each row besides its order (the event time, a session's
 *               dynamic gap, a data window's condition)
 */
case class WindowReplayExec(
    spec: WindowSpec,
    policies: WindowPolicies,
    streamKeys: Seq[Attribute],
    order: Attribute,
    time: Option[Attribute],
    signal: Option[Attribute],
    grouped: Boolean,
    functions: Seq[AggregateFunction],
    filters: Seq[Option[Expression]],
    windowAttr: Attribute,
    resultAttrs: Seq[Attribute],
    child: SparkPlan) extends StreamWindowExec {
  require(grouped || (functions.isEmpty && resultAttrs.isEmpty), "a select computes no aggregates")

  override def output: Seq[Attribute] =
    if (grouped) streamKeys ++ (windowAttr +: resultAttrs) else child.output :+ windowAttr

  override def requiredChildDistribution: Seq[Distribution] =
    if (streamKeys.isEmpty) AllTuples :: Nil else ClusteredDistribution(streamKeys) :: Nil
  override def requiredChildOrdering: Seq[Seq[SortOrder]] =
    Seq((streamKeys :+ order).map(SortOrder(_, Ascending)))

  private def orderIsEventTime: Boolean = time.exists(_.exprId == order.exprId)

  /** How the per-key engine is built (as the streaming host builds it). */
  private def blueprint: WindowEngineBlueprint =
    WindowEngineBlueprint(spec, policies, child.output, output, if (grouped) Some((functions, filters)) else None)

  override protected def doExecute(): RDD[InternalRow] = {
    val (engineBlueprint, keys, childOutput, orderAttr, signalAttr, tiesAllowed, execMetrics) =
      (blueprint, streamKeys, child.output, order, signal, orderIsEventTime, metrics)
    child.execute().mapPartitions { input =>
      new KeyedWindowIterator(input, engineBlueprint, keys, childOutput, orderAttr, signalAttr, tiesAllowed, execMetrics)
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): WindowReplayExec = copy(child = newChild)
}

object WindowReplayExec {
  /** A groupBy's replay: one row per window with the aggregate values. */
  def aggregate(spec: WindowSpec, policies: WindowPolicies, keys: Seq[Attribute], order: Attribute, time: Option[Attribute],
      signal: Option[Attribute], functions: Seq[AggregateFunction], filters: Seq[Option[Expression]], windowAttr: Attribute,
      resultAttrs: Seq[Attribute], child: SparkPlan): WindowReplayExec =
    WindowReplayExec(spec, policies, keys, order, time, signal, grouped = true, functions, filters, windowAttr, resultAttrs,
      child)

  /** A select's replay: every row tagged with each window holding it. */
  def assign(spec: WindowSpec, policies: WindowPolicies, keys: Seq[Attribute], order: Attribute, time: Option[Attribute],
      signal: Option[Attribute], windowAttr: Attribute, child: SparkPlan): WindowReplayExec =
    WindowReplayExec(spec, policies, keys, order, time, signal, grouped = false, Nil, Nil, windowAttr, Nil, child)
}
