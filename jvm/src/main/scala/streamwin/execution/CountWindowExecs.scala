package streamwin.execution

import scala.collection.mutable

import org.apache.spark.SparkException
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.catalyst.plans.physical.{AllTuples, ClusteredDistribution, Distribution}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.unsafe.types.UTF8String

import streamwin.engine._
import streamwin.spec.CountWindowSpec

/**
 * Hosts a [[CountWindowEngine]] over rows clustered by key and sorted by (key, order_by): one pass,
 * one engine reset per key. Rows with a null order_by are skipped and counted; two rows of a key with
 * the same order_by value fail the query, since their order (and so the windows) would be arbitrary.
 */
trait CountWindowHost extends StreamWindowExec {
  def spec: CountWindowSpec
  def streamKeys: Seq[Attribute]
  def order: Attribute

  override def requiredChildDistribution: Seq[Distribution] =
    if (streamKeys.isEmpty) AllTuples :: Nil else ClusteredDistribution(streamKeys) :: Nil
  override def requiredChildOrdering: Seq[Seq[SortOrder]] =
    Seq((streamKeys :+ order).map(SortOrder(_, Ascending)))

  /** What the engine fills. `key()` is the current key row; `out(row)` queues an output row. */
  protected def newContents(key: () => InternalRow, out: InternalRow => Unit): WindowContents

  override protected def doExecute(): RDD[InternalRow] = {
    val (outRows, windows, windowed, skipped, peakMetric) = (longMetric("numOutputRows"),
      longMetric("windowsEmitted"), longMetric("rowsWindowed"), longMetric("rowsSkipped"),
      longMetric("peakBufferedRows"))
    val childOutput = child.output
    val orderOrdinal = childOutput.indexWhere(_.exprId == order.exprId)
    val orderType = order.dataType
    val orderName = order.name
    child.execute().mapPartitions { input =>
      val keyOf = UnsafeProjection.create(streamKeys, childOutput)
      var key: InternalRow = null
      var previousOrder: Any = null
      val pending = new mutable.Queue[InternalRow]
      val engine = new CountWindowEngine(spec, newContents(() => key, { row =>
        pending.enqueue(row)
        outRows += 1
      }))
      new PushToPullIterator(pending) {
        override protected def advance(): Boolean = {
          if (!input.hasNext) {
            if (key != null) engine.finishKey()
            peakMetric.set(engine.peakBuffered)
            windows += engine.windowsEmitted
            return false
          }
          val row = input.next()
          val k = keyOf(row)
          if (key == null || k != key) {
            if (key != null) engine.finishKey()
            key = k.copy()
            previousOrder = null
          }
          if (row.isNullAt(orderOrdinal)) {
            skipped += 1
          } else {
            val orderValue = InternalRow.copyValue(row.get(orderOrdinal, orderType))
            if (previousOrder != null && previousOrder == orderValue) {
              throw new SparkException(s"${spec.function}: two rows of the same key have order_by " +
                s"`$orderName` = $orderValue; count windows need a distinct arrival order per key, so " +
                "order by a unique column (a Kafka offset, an ingestion sequence) or add a tie-breaker")
            }
            previousOrder = orderValue
            windowed += 1
            engine.addRow(orderValue, row)
          }
          true
        }
      }
    }
  }
}

/** groupBy over count windows: one row per window with the aggregate values. */
case class CountWindowAggregateExec(
    spec: CountWindowSpec,
    streamKeys: Seq[Attribute],
    order: Attribute,
    functions: Seq[AggregateFunction],
    filters: Seq[Option[Expression]],
    windowAttr: Attribute,
    resultAttrs: Seq[Attribute],
    child: SparkPlan) extends CountWindowHost {

  override def output: Seq[Attribute] = streamKeys ++ (windowAttr +: resultAttrs)

  override protected def newContents(key: () => InternalRow, out: InternalRow => Unit): WindowContents = {
    val evaluator = new AggregateEvaluator(functions, filters, child.output)
    val writer = new WindowRowWriter(output)
    val emit = (start: Any, end: Any, kind: UTF8String, values: InternalRow) =>
      out(writer.aggregated(key(), start, end, kind, values))
    // Disjoint windows need one running buffer; overlapping ones share a FIFO of per-row buffers.
    if (spec.step == spec.size) new RunningContents(evaluator, emit) else new AggregatedContents(evaluator, emit)
  }

  override protected def withNewChildInternal(newChild: SparkPlan): CountWindowAggregateExec = copy(child = newChild)
}

/** select over count windows: every row once per window holding it, tagged with that window. */
case class CountWindowAssignExec(
    spec: CountWindowSpec,
    streamKeys: Seq[Attribute],
    order: Attribute,
    windowAttr: Attribute,
    child: SparkPlan) extends CountWindowHost {

  override def output: Seq[Attribute] = child.output :+ windowAttr

  override protected def newContents(key: () => InternalRow, out: InternalRow => Unit): WindowContents = {
    val writer = new WindowRowWriter(output)
    new TaggedContents((row, start, end, kind) => out(writer.tagged(row, start, end, kind)))
  }

  override protected def withNewChildInternal(newChild: SparkPlan): CountWindowAssignExec = copy(child = newChild)
}
