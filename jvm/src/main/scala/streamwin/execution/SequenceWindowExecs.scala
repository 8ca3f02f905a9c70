package streamwin.execution

import scala.collection.mutable

import org.apache.spark.SparkException
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.catalyst.plans.physical.{AllTuples, ClusteredDistribution, Distribution}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.unsafe.types.UTF8String

import streamwin.engine._
import streamwin.spec.{IntervalWindowSpec, SequenceWindowSpec, TimeWindowSpec, TriggerSplitWindowSpec, WindowPolicies,
  WindowSpec}

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

  /** The per-key engine. `key()` is the current key row; `out(row)` queues an output row. */
  protected def newEngine(key: () => InternalRow, out: InternalRow => Unit): RowWindowEngine

  override protected def doExecute(): RDD[InternalRow] = {
    val (outRows, windows, windowed, skipped, lateMetric, passedMetric, peakMetric) = (longMetric("numOutputRows"),
      longMetric("windowsEmitted"), longMetric("rowsWindowed"), longMetric("rowsSkipped"),
      longMetric("lateRowsDropped"), longMetric("lateRowsPassedThrough"), longMetric("peakBufferedRows"))
    val tiesAllowed = orderIsEventTime
    val childOutput = child.output
    val orderOrdinal = childOutput.indexWhere(_.exprId == order.exprId)
    val orderType = order.dataType
    val orderName = order.name
    val signalOrdinal = signal.map(s => childOutput.indexWhere(_.exprId == s.exprId)).getOrElse(-1)
    val signalType = signal.map(_.dataType).orNull
    // A user's trigger reads its inputs as an external Row.
    val signalToScala: Any => Any = spec match {
      case _: TriggerSplitWindowSpec => CatalystTypeConverters.createToScalaConverter(signalType)
      case _ => identity
    }
    child.execute().mapPartitions { input =>
      val keyOf = UnsafeProjection.create(streamKeys, childOutput)
      var key: InternalRow = null
      var previousOrder: Any = null
      var accepted = 0L
      var rejected = 0L
      val pending = new mutable.Queue[InternalRow]
      val engine = newEngine(() => key, { row =>
        pending.enqueue(row)
        outRows += 1
      })
      new PushToPullIterator(pending) {
        override protected def advance(): Boolean = {
          if (!input.hasNext) {
            if (key != null) engine.finishKey()
            peakMetric.set(engine.peakBuffered)
            windows += engine.windowsEmitted
            // Some rows only turn out to be in no window once they are evicted (eKuiper alignment).
            windowed += accepted - engine.rowsInNoWindow
            skipped += rejected - engine.rowsLate - engine.rowsPassedThrough + engine.rowsInNoWindow
            lateMetric += engine.rowsLate
            passedMetric += engine.rowsPassedThrough
            return false
          }
          val row = input.next()
          val k = keyOf(row)
          if (key == null || k != key) {
            if (key != null) engine.finishKey()
            key = k.copy()
            engine.startKey()
            previousOrder = null
          }
          if (row.isNullAt(orderOrdinal)) {
            skipped += 1
          } else {
            val orderValue = InternalRow.copyValue(row.get(orderOrdinal, orderType))
            if (!tiesAllowed && previousOrder != null && previousOrder == orderValue) {
              throw new SparkException(s"${spec.function}: two rows of the same key have order_by " +
                s"`$orderName` = $orderValue; these windows need a distinct arrival order per key, so " +
                "order by a unique column (a Kafka offset, an ingestion sequence) or add a tie-breaker")
            }
            previousOrder = orderValue
            val signalValue =
              if (signalOrdinal < 0 || row.isNullAt(signalOrdinal)) null
              else signalToScala(row.get(signalOrdinal, signalType))
            if (engine.addRow(orderValue, signalValue, row)) accepted += 1 else rejected += 1
          }
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

  override protected def newEngine(key: () => InternalRow, out: InternalRow => Unit): RowWindowEngine = {
    val evaluator = new AggregateEvaluator(functions, filters, child.output)
    val writer = new WindowRowWriter(output)
    val emit = (start: Any, end: Any, kind: UTF8String, values: InternalRow) =>
      out(writer.aggregated(key(), start, end, kind, values))
    // Disjoint windows need one running buffer; overlapping ones share a FIFO of per-row buffers.
    SequenceWindowEngine(spec,
      if (SequenceWindowEngine.disjoint(spec)) new RunningContents(evaluator, emit)
      else new AggregatedContents(evaluator, emit), policies, () => new RunningContents(evaluator, emit))
  }

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

  override protected def newEngine(key: () => InternalRow, out: InternalRow => Unit): RowWindowEngine = {
    val writer = new WindowRowWriter(output)
    val tagged = () => new TaggedContents((row, start, end, kind) => out(writer.tagged(row, start, end, kind)))
    SequenceWindowEngine(spec, tagged(), policies, tagged)
  }

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

  override protected def newEngine(key: () => InternalRow, out: InternalRow => Unit): RowWindowEngine = {
    val evaluator = new AggregateEvaluator(functions, filters, child.output)
    val writer = new WindowRowWriter(output)
    val emit = (start: Any, end: Any, kind: UTF8String, values: InternalRow) =>
      out(writer.aggregated(key(), start, end, kind, values))
    spec match {
      case interval: IntervalWindowSpec => new IntervalWindowEngine(interval, policies, evaluator, emit)
      case other => EventTimeReplayEngine(other, policies, () => new RunningContents(evaluator, emit))
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): EventTimeReplayAggregateExec = copy(child = newChild)
}

/** select over aligned time windows under event-time policies: rows tagged with each output of their windows. */
case class EventTimeReplayAssignExec(
    spec: TimeWindowSpec,
    policies: WindowPolicies,
    streamKeys: Seq[Attribute],
    order: Attribute,
    time: Attribute,
    windowAttr: Attribute,
    child: SparkPlan) extends EventTimeReplayHost {

  override def output: Seq[Attribute] = child.output :+ windowAttr

  override protected def newEngine(key: () => InternalRow, out: InternalRow => Unit): RowWindowEngine = {
    val writer = new WindowRowWriter(output)
    EventTimeReplayEngine(spec, policies,
      () => new TaggedContents((row, start, end, kind) => out(writer.tagged(row, start, end, kind))))
  }

  override protected def withNewChildInternal(newChild: SparkPlan): EventTimeReplayAssignExec = copy(child = newChild)
}
