package streamwin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.execution.metric.SQLMetric

import org.apache.spark.unsafe.types.UTF8String

import streamwin.engine.{AggregateEvaluator, ContentsFactory, InMemoryWindowState, KeyedWindowOperator, RowBag, RowRun, Slice,
  WindowOutput}
import streamwin.spec.{WindowPolicies, WindowSpec}

/**
 * One partition of [[TimeWindowAggregateExec]]: rows clustered by key and sorted by (key, slice
 * start) in, window rows out. It merges the slices of each key in event-time order (a slice
 * pre-aggregated by several map tasks is merged into one; unaggregated rows are aggregated into
 * their slice here) and feeds them to the window operator ([[KeyedWindowOperator.addSlice]]) over
 * the spec's family, which outputs the windows.
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

  private val (outRows, windows, windowed, skipped, peakMetric) = (metrics("numOutputRows"), metrics("windowsEmitted"),
    metrics("rowsWindowed"), metrics("rowsSkipped"), metrics("peakBufferedRows"))
  private val bufferOffset = keys.size + 1
  private val evaluator =
    if (preAggregated) new AggregateEvaluator(functions, functions.map(_ => None), Nil)
    else new AggregateEvaluator(functions, filters, inputAttrs)
  private val rowCountSlot = evaluator.offsetOf(functions.size - 1)
  private val readBuffer = MutableProjection.create(
    functions.flatMap(_.aggBufferAttributes.map(_.dataType)).zipWithIndex.map { case (dt, i) =>
      BoundReference(bufferOffset + i, dt, nullable = true)
    })
  private val sliceOf = UnsafeProjection.create(Seq(slice), inputAttrs)
  private val keyOf = UnsafeProjection.create(keys, inputAttrs)
  private val writer = new WindowRowWriter(output)
  private var key: InternalRow = null
  private var sliceStart = 0L
  private var sliceBuffer: InternalRow = null
  private val current = new Slice
  private val bounds = spec.sliceBounds(evaluator)
  private val windowOutput = new WindowOutput {
    override def values(start: Any, end: Any, kind: UTF8String, values: InternalRow): Unit = {
      row(writer.aggregated(key, start, end, kind, values))
      outRows += 1
      windows += 1
    }
    override def rows(start: Any, end: Any, kind: UTF8String, rows: RowRun): Unit =
      throw new IllegalStateException("slices are aggregated: a window fed slices holds no rows")
  }
  private val contents = new ContentsFactory(Some(evaluator), windowOutput, NoRowBags)
  private val operator = new KeyedWindowOperator(spec.family(WindowPolicies.Default), WindowPolicies.Default, contents,
    new InMemoryWindowState(contents))
  operator.startKey()

  private def flushSlice(): Unit = if (sliceBuffer != null) {
    val rows = sliceBuffer.getLong(rowCountSlot)
    current.time = sliceStart
    current.buffer = sliceBuffer
    current.rows = rows
    bounds.fill(current)
    if (operator.addSlice(current)) windowed += rows else skipped += rows
    sliceBuffer = null
  }

  private def finishKey(): Unit = if (key != null) {
    flushSlice()
    operator.finishKey()
  }

  override protected def advance(): Boolean = {
    if (!input.hasNext) {
      finishKey()
      peakMetric.set(operator.peakBuffered)
      return false
    }
    val row = input.next()
    val k = keyOf(row)
    if (key == null || k != key) {
      finishKey()
      key = k.copy()
    }
    if (preAggregated) {
      // The slice is the partial aggregation's grouping column, right after the keys.
      if (row.isNullAt(keys.size)) {
        skipped += row.getLong(bufferOffset + rowCountSlot)
      } else {
        val start = row.getLong(keys.size)
        val buffer = evaluator.fromSerialized(readBuffer.target(evaluator.newBuffer())(row))
        if (sliceBuffer != null && start == sliceStart) {
          evaluator.merge(sliceBuffer, buffer) // the same slice, pre-aggregated by another map task
        } else {
          flushSlice()
          sliceStart = start
          sliceBuffer = buffer
        }
      }
    } else {
      val sliceValue = sliceOf(row)
      if (sliceValue.isNullAt(0)) {
        skipped += 1
      } else {
        val start = sliceValue.getLong(0)
        if (sliceBuffer == null || start != sliceStart) {
          flushSlice()
          sliceStart = start
          sliceBuffer = evaluator.newBuffer()
        }
        evaluator.update(sliceBuffer, row)
      }
    }
    true
  }
}

/** Windows fed slices keep no rows. */
private object NoRowBags extends (() => RowBag) with Serializable {
  override def apply(): RowBag = throw new IllegalStateException("slices are aggregated: a window fed slices keeps no rows")
}
