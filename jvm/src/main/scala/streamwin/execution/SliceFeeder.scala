package streamwin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, MutableProjection}

import streamwin.engine.{AggregateEvaluator, KeyedWindowOperator, Slice}
import streamwin.spec.{HiddenSlots, WindowSpec}

/**
 * Feeds one key's slices to its window operator ([[KeyedWindowOperator.addSlice]]), in slice order:
 * rows of Spark's partial aggregation (the same slice, pre-aggregated by several map tasks, merges
 * into one) or raw rows aggregated into their slice here. Counts rows as [[EngineFeeder]] does.
 *
 * @param evaluator    the aggregates over slice buffers: the user's, the family's hidden ones, and
 *                     a row count last
 * @param sliceOrdinal where a partial row holds its slice start; its buffers follow it
 * @param inOrder      a key's slices all come in time order (batch), not per micro-batch (streams)
 */
final class SliceFeeder(spec: WindowSpec, val evaluator: AggregateEvaluator, sliceOrdinal: Int, inOrder: Boolean)
    extends FedRows {
  private val bufferOffset = sliceOrdinal + 1
  private val slots = new HiddenSlots(spec, evaluator)
  private val rowCountSlot = slots.rowCount
  private lazy val readBuffer = MutableProjection.create(
    evaluator.bufferTypes.zipWithIndex.map { case (dt, i) =>
      BoundReference(bufferOffset + i, dt, nullable = true)
    })
  private val bounds = spec.sliceBounds(slots)
  private val current = new Slice
  current.inOrder = inOrder
  private var sliceStart = 0L
  private var sliceBuffer: InternalRow = null

  /** A partial aggregation row of the key (rows of a key come by ascending slice start). */
  def partial(operator: KeyedWindowOperator, row: InternalRow): Unit =
    if (row.isNullAt(sliceOrdinal)) {
      nullOrders += row.getLong(bufferOffset + rowCountSlot) // rows without a time: skipped
    } else {
      val start = row.getLong(sliceOrdinal)
      val buffer = evaluator.fromSerialized(readBuffer.target(evaluator.blankBuffer())(row))
      if (sliceBuffer != null && start == sliceStart) {
        evaluator.merge(sliceBuffer, buffer)
      } else {
        flush(operator)
        sliceStart = start
        sliceBuffer = buffer
      }
    }

  /** A raw row of the key in slice `start` (rows of a key come by ascending slice). */
  def raw(operator: KeyedWindowOperator, start: Long, row: InternalRow): Unit = {
    if (sliceBuffer == null || start != sliceStart) {
      flush(operator)
      sliceStart = start
      sliceBuffer = evaluator.newBuffer()
    }
    evaluator.update(sliceBuffer, row)
  }

  /** A row of the key without a slice (no time): skipped. */
  def noSlice(): Unit = nullOrders += 1

  /** Hands the slice being merged to the operator; call before the key finishes. */
  def flush(operator: KeyedWindowOperator): Unit = if (sliceBuffer != null) {
    val rows = sliceBuffer.getLong(rowCountSlot)
    current.time = sliceStart
    current.buffer = sliceBuffer
    current.rows = rows
    bounds.fill(current)
    if (operator.addSlice(current)) accepted += rows else rejected += rows
    sliceBuffer = null
  }
}

/** Rows handed to a window operator, as the row accounting reads them ([[RowAccounting]]). */
trait FedRows {
  /** Rows the operator took into a window. */
  var accepted = 0L
  /** Rows the operator rejected (late, or in no window). */
  var rejected = 0L
  /** Rows without an order or time: never handed over. */
  var nullOrders = 0L

  def resetCounts(): Unit = { accepted = 0; rejected = 0; nullOrders = 0 }
}
