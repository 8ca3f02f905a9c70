package streamwin.engine

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String

/**
 * A family of windows over each key's rows in `order_by` (arrival) order: count and data-driven
 * windows. No event time, so no lateness: windows close by rows, and at the end of a key's input
 * (teardown) the windows still open are output as `partial`. A window's start and end are the
 * order_by values of its first and last row. What a family must remember between rows besides its
 * windows lives in the state's record ([[WindowState.record]]).
 */
trait SequenceFamily extends WindowFamily {
  /** Places one row; false when it is no window member (a punctuation marker, a delta row without a value). */
  def place(order: Any, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean

  override final def addRow(order: Any, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean =
    op.placeSequenced(this, order, signal, row)

  /** The end of the key's input: open windows go out as `partial`. */
  def teardown(op: KeyedWindowOperator): Unit

  override final def endOfInput(op: KeyedWindowOperator): Unit = teardown(op)

  override final def closesByTime: Boolean = false

  override def output(w: WindowEntry, kind: UTF8String, op: KeyedWindowOperator): Unit = w.contents.emit(w.first, w.last, kind)
}
