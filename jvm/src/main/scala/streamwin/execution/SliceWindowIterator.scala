package streamwin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.unsafe.types.UTF8String

import streamwin.engine.{AggregateEvaluator, ContentsFactory, InMemoryWindowState, KeyedWindowOperator, RowBag,
  RowRun, WindowOutput, WindowPolicies, WindowTriggers}
import streamwin.spec.WindowSpec

/**
 * One partition of [[TimeWindowAggregateExec]]: rows clustered by key and sorted by (key, slice
 * start) in, window rows out. It merges the slices of each key in event-time order (a slice
 * pre-aggregated by several map tasks is merged into one; unaggregated rows are aggregated into
 * their slice here) and feeds them to the window operator ([[SliceFeeder]]) over the spec's family,
 * which outputs the windows.
 *
 * @param input      the partition: keys, slice start, then the partial buffers of `functions`
 *                   (pre-aggregated); raw rows otherwise
 * @param inputAttrs the attributes of `input`
 * @param output     key ++ window ++ aggregate values
 * @param metrics    the exec's metrics ([[WindowMetrics]])
 */
final class SliceWindowIterator(
    input: Iterator[InternalRow],
    spec: WindowSpec,
    keys: Seq[Attribute],
    slice: Expression,
    functions: Seq[AggregateFunction],
    filters: Seq[Option[Expression]],
    preAggregated: Boolean,
    inputAttrs: Seq[Attribute],
    output: Seq[Attribute],
    metrics: Map[String, SQLMetric]) extends PushToPullIterator {

  private val (outRows, windows, peakMetric) = (metrics("numOutputRows"), metrics("windowsEmitted"),
    metrics("peakBufferedRows"))
  private val feeder = new SliceFeeder(spec,
    if (preAggregated) new AggregateEvaluator(functions, functions.map(_ => None), Nil)
    else new AggregateEvaluator(functions, filters, inputAttrs),
    sliceOrdinal = keys.size, inOrder = true)
  private val sliceOf = UnsafeProjection.create(Seq(slice), inputAttrs)
  private val keyOf = UnsafeProjection.create(keys, inputAttrs)
  private val writer = new WindowRowWriter(output)
  private var key: InternalRow = null
  private val windowOutput = new WindowOutput {
    override def values(start: Any, end: Any, kind: UTF8String, values: InternalRow): Unit = {
      row(writer.aggregated(key, start, end, kind, values))
      outRows += 1
      windows += 1
    }
    override def rows(start: Any, end: Any, kind: UTF8String, rows: RowRun): Unit =
      throw new IllegalStateException("slices are aggregated: a window fed slices holds no rows")
  }
  private val contents = new ContentsFactory(Some(feeder.evaluator), windowOutput, NoRowBags)
  private val operator = new KeyedWindowOperator(spec.family(WindowPolicies.Default), WindowTriggers.Default, contents,
    new InMemoryWindowState(contents))
  operator.startKey()

  private def finishKey(): Unit = if (key != null) {
    feeder.flush(operator)
    operator.finishKey()
  }

  override protected def advance(): Boolean = {
    if (!input.hasNext) {
      finishKey()
      peakMetric.set(operator.peakBuffered)
      // A batch's slices come in time order: none is late.
      metrics("rowsWindowed") += feeder.accepted
      metrics("rowsSkipped") += feeder.rejected + feeder.nullOrders
      return false
    }
    val row = input.next()
    val k = keyOf(row)
    if (key == null || k != key) {
      finishKey()
      key = k.copy()
    }
    if (preAggregated) feeder.partial(operator, row)
    else {
      val sliceValue = sliceOf(row)
      if (sliceValue.isNullAt(0)) feeder.noSlice() else feeder.raw(operator, sliceValue.getLong(0), row)
    }
    true
  }
}

/** Windows fed slices keep no rows. */
private[execution] object NoRowBags extends (() => RowBag) with Serializable {
  override def apply(): RowBag = throw new IllegalStateException("slices are aggregated: a window fed slices keeps no rows")
}
