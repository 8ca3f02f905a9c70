package streamwin.execution

import scala.collection.mutable

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.catalyst.plans.physical.{AllTuples, ClusteredDistribution, Distribution}
import org.apache.spark.sql.execution.SparkPlan

import streamwin.spec.{SequenceWindowSpec, WindowPolicies, WindowSpec}

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
    val (outRows, windows, windowed, skipped, lateMetric, passedMetric, peakMetric) = (longMetric("numOutputRows"),
      longMetric("windowsEmitted"), longMetric("rowsWindowed"), longMetric("rowsSkipped"),
      longMetric("lateRowsDropped"), longMetric("lateRowsPassedThrough"), longMetric("peakBufferedRows"))
    val spillMetric = longMetric("spillSize")
    val (engineBlueprint, childOutput, windowSpec, orderAttr, signalAttr, tiesAllowed) =
      (blueprint, child.output, spec, order, signal, orderIsEventTime)
    child.execute().mapPartitions { input =>
      // The task's budget for kept rows: it counts what they spilled (read before the task ends).
      val budget = streamwin.engine.RowBag.budget
      val spilledBefore = budget.spilledBytes
      val keyOf = UnsafeProjection.create(streamKeys, childOutput)
      var key: InternalRow = null
      val pending = new mutable.Queue[Iterator[InternalRow]]
      val engine = engineBlueprint.wireRuns(() => key, { rows =>
        pending.enqueue(rows.map { row => outRows += 1; row })
      }).newEngine()
      val feeder = new EngineFeeder(windowSpec, childOutput, orderAttr, signalAttr, tiesAllowed)
      new PushToPullIterator(pending) {
        override protected def advance(): Boolean = {
          if (!input.hasNext) {
            if (key != null) engine.finishKey()
            peakMetric.set(engine.peakBuffered)
            windows += engine.windowsEmitted
            // Some rows only turn out to be in no window once they are evicted (eKuiper alignment).
            windowed += feeder.accepted - engine.rowsInNoWindow
            skipped += feeder.nullOrders + feeder.rejected - engine.rowsLate - engine.rowsPassedThrough +
              engine.rowsInNoWindow
            lateMetric += engine.rowsLate
            passedMetric += engine.rowsPassedThrough
            spillMetric += budget.spilledBytes - spilledBefore
            return false
          }
          val row = input.next()
          val k = keyOf(row)
          if (key == null || k != key) {
            if (key != null) engine.finishKey()
            key = k.copy()
            engine.startKey()
            feeder.startKey()
          }
          feeder.feed(engine, row)
          true
        }
      }
    }
  }
}

/** groupBy over count and data windows: one row per window with the aggregate values. */
case class SequenceWindowAggregateExec(
    spec: SequenceWindowSpec,
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
    spec: SequenceWindowSpec,
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
 * the event time itself, where ties are interchangeable), with the event time as the signal.
 */
trait EventTimeReplayHost extends SequenceWindowHost {
  def time: Attribute
  override def signal: Option[Attribute] = Some(time)
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
    windowAttr: Attribute,
    child: SparkPlan) extends EventTimeReplayHost {

  override def output: Seq[Attribute] = child.output :+ windowAttr

  override protected def blueprint: WindowEngineBlueprint =
    WindowEngineBlueprint(spec, policies, child.output, output, None)

  override protected def withNewChildInternal(newChild: SparkPlan): EventTimeReplayAssignExec = copy(child = newChild)
}
