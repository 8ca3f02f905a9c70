package streamwin.engine


import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String

import streamwin.families.CountWindowSpec
import streamwin.spec.{DataWindowSpec, WindowPolicies}

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

/** Where a count family is in the key's rows. */
final class CountRecord extends Serializable {
  var rows = 0L
  var oldestRetained = 0L
  // Rows below this index have been in an emitted window.
  var coveredUntil = 0L
  // The order_by values a window can still start or end with (a window's start and end are its first
  // and last row's), oldest first: the oldest retained row's, each later row's that a window starts
  // at, and the newest row's. Other rows' are not kept: count(1000000) keeps two (its open window's first
  // row is the oldest retained), not a million.
  var orders = new RingQueue[Any]
  // The row index of `orders.head` (meaningful while it is not empty).
  var headRow = 0L
  // False for a record just read from a stream's state: its `orders` may hold every retained row's
  // value (as the state of earlier versions does) until [[CountWindows]] keeps only the ones above.
  var compact = true

  def retained: Long = rows - oldestRetained
}

/**
 * Count windows of one key, sharing the retained rows (one running buffer, a FIFO of per-row
 * buffers, or the rows):
 *  - align start (KX count, Quix count windows, SPL count(N)): windows start at rows 0, step, 2·step,
 *    … and hold `size` rows; a window is `final` when its last row arrives.
 *  - align end (eKuiper COUNTWINDOW(size, step)): at every step-th row, once at least `size` rows
 *    arrived, a window holds the latest `size` rows. Rows older than the first such window are in
 *    no window (eKuiper: "the 1st event is ignored") and counted as such.
 * At the end of the input, each window that has begun but is not complete is emitted as `partial`.
 * Only rows that a future window can still hold are retained: at most `size`.
 * Policies (non-overlapping windows only): `emit_update` outputs the window so far after each row;
 * `count_trigger` outputs the rows held as `partial` once they reach N and drops them, so each
 * output's start and end are the first and last order_by value of the rows it holds.
 */
final case class CountWindows(spec: CountWindowSpec, policies: WindowPolicies) extends SequenceFamily {
  override def newRecord(): AnyRef = new CountRecord

  private def retained(op: KeyedWindowOperator): WindowEntry = {
    var w = op.state.window(0L)
    if (w == null) {
      w = op.open(0L, 0L, if (spec.disjoint) op.contents.buffered() else op.contents.fifo())
    }
    w
  }

  override def place(order: Any, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    val r = record(op)
    val w = retained(op)
    w.contents.append(row)
    keepOrder(r, order)
    r.rows += 1
    op.keptRowsChanged(1)
    // When the row completes a window, the retained rows are exactly that window.
    op.afterRow(r.retained, completesWindow(r))({ kind =>
      emit(w, r, kind, op)
      if (kind ne WindowKind.Update) r.coveredUntil = r.rows
    }, evictBefore(r.rows, w, r, op))
    evictBefore(firstRowStillNeeded(r), w, r, op)
    true
  }

  override def teardown(op: KeyedWindowOperator): Unit = {
    val r = record(op)
    val w = op.state.window(0L)
    if (w == null) return
    if (spec.alignEnd) {
      if (r.rows > r.coveredUntil && r.retained > 0) emit(w, r, WindowKind.Partial, op)
    } else {
      // Every retained row is in one of the partial windows below, so none is unwindowed.
      r.coveredUntil = r.rows
      var start = firstRowStillNeeded(r)
      while (start < r.rows) {
        evictBefore(start, w, r, op)
        // (A count trigger may have flushed every row of the last window already.)
        if (r.retained > 0) emit(w, r, WindowKind.Partial, op)
        start += spec.step
      }
    }
  }

  // The retained rows are the open window's (the idle timeout needs disjoint windows, as count_trigger).
  override def flushIdle(op: KeyedWindowOperator): Unit = {
    val r = record(op)
    val w = op.state.window(0L)
    if (w == null || r.retained == 0) return
    emit(w, r, WindowKind.Partial, op)
    r.coveredUntil = r.rows
    evictBefore(r.rows, w, r, op)
  }

  private def emit(w: WindowEntry, r: CountRecord, kind: UTF8String, op: KeyedWindowOperator): Unit = {
    w.first = r.orders.head
    w.last = r.orders.last
    op.output(w, kind)
  }

  private def completesWindow(r: CountRecord): Boolean =
    r.rows >= spec.size && (if (spec.alignEnd) r.rows % spec.step == 0 else (r.rows - spec.size) % spec.step == 0)

  /** Index of the oldest row that a window not yet complete holds. */
  private def firstRowStillNeeded(r: CountRecord): Long =
    if (spec.alignEnd) {
      // The next window ends at the next multiple of step that is at least size.
      val next = math.max(spec.size, (r.rows / spec.step + 1) * spec.step)
      next - spec.size
    } else if (r.rows < spec.size) 0L
    else ((r.rows - spec.size) / spec.step + 1) * spec.step

  private def evictBefore(index: Long, w: WindowEntry, r: CountRecord, op: KeyedWindowOperator): Unit = {
    while (r.oldestRetained < index && r.oldestRetained < r.rows) {
      if (r.oldestRetained >= r.coveredUntil) op.countInNoWindow()
      w.contents.evictOldest()
      if (r.oldestRetained == r.headRow) {
        r.orders.removeHead()
        r.headRow = math.min(nextStart(r.headRow), r.rows - 1)
      }
      r.oldestRetained += 1
      op.keptRowsChanged(-1)
    }
  }

  /** Whether a window starts at row `index`. */
  private def startsWindow(index: Long): Boolean =
    if (spec.alignEnd) (index + spec.size) % spec.step == 0 else index % spec.step == 0

  /** The first row after `index` that a window starts at. */
  private def nextStart(index: Long): Long =
    if (spec.alignEnd) ((index + spec.size) / spec.step + 1) * spec.step - spec.size
    else (index / spec.step + 1) * spec.step

  /**
   * Keeps the order value of the row arriving now (row `r.rows`), which is the newest; the one kept for the
   * row before goes unless a window can start with it.
   */
  private def keepOrder(r: CountRecord, order: Any): Unit = {
    if (r.orders.isEmpty) r.headRow = r.rows
    else {
      val previous = r.rows - 1
      if (previous != r.headRow && !startsWindow(previous)) r.orders.removeLast()
    }
    r.orders.append(order)
  }

  /** The key's record, holding only the order values [[keepOrder]] keeps (a record read may hold every row's). */
  private def record(op: KeyedWindowOperator): CountRecord = {
    val r = op.state.record.asInstanceOf[CountRecord]
    if (!r.compact) {
      r.headRow = r.oldestRetained
      if (r.orders.size == r.retained && r.retained > 2) {
        var index = r.oldestRetained
        val all = r.orders
        r.orders = new RingQueue[Any]
        all.foreach { order =>
          if (index == r.oldestRetained || index == r.rows - 1 || startsWindow(index)) r.orders.append(order)
          index += 1
        }
      }
      r.compact = true
    }
    r
  }
}

/** How many rows an overlapping count family has seen. */
final class RowCount extends Serializable { var rows = 0L }

/**
 * Overlapping start-aligned count windows (Quix hopping and sliding count windows) whose rows so
 * far are output while they fill: with `emit_update` after every row, each open window (every
 * window holding the row) as `update`; with `count_trigger` a window's rows as `partial` once they
 * reach N. Each open window keeps its own contents, so a row is added to size / step of them; the
 * shared [[CountWindows]] serve every other count window. Windows start at rows 0, step, 2·step, …
 * (their start in the state is that row index), are `final` at their size-th row and `partial` at
 * the end of the input.
 */
final case class OverlappingCountWindows(spec: CountWindowSpec) extends SequenceFamily {
  override def newRecord(): AnyRef = new RowCount

  override def place(order: Any, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    val r = op.state.record.asInstanceOf[RowCount]
    if (r.rows % spec.step == 0) op.open(r.rows, r.rows + spec.size, op.contents.buffered())
    r.rows += 1
    val open = op.state.windows(Long.MinValue, true, Long.MaxValue, true).toVector
    open.foreach { w =>
      if (w.held == 0) w.first = order
      w.last = order
      op.enter(w, row, completes = r.rows == w.end)
    }
    open.iterator.takeWhile(_.end == r.rows).foreach(w => op.drop(w))
    true
  }

  override def teardown(op: KeyedWindowOperator): Unit =
    op.state.windows(Long.MinValue, true, Long.MaxValue, true).foreach { w =>
      if (w.held > 0) op.output(w, WindowKind.Partial)
    }
}

/**
 * Where a data family is in the key's rows: how many rows the open window holds since it began, and
 * what the family remembers between rows (see [[DataWindowSpec.boundary]]).
 */
final class DataRecord(var state: Any) extends Serializable {
  var members = 0
}

/** What a row does to the open window of a data family. */
sealed trait DataBoundary

object DataBoundary {
  /** The row joins the open window. */
  case object Joins extends DataBoundary
  /** The row starts the next window: the open one (if it holds rows) is output as `final`, then the row joins the new one. */
  case object Starts extends DataBoundary
  /** The row closes the open window (if it holds rows) and is no member of any (a punctuation marker). */
  case object Closes extends DataBoundary
  /** The row is no member and changes nothing (a delta row without a value). */
  case object Skipped extends DataBoundary
}

/**
 * Windows whose boundaries come from the data; they never overlap and one is open at a time. Each
 * row's [[DataBoundary]] comes from the spec (split: a true predicate, or a user's
 * [[streamwin.api.SplitTrigger]], starts a window; delta: a value more than the threshold above the
 * oldest member's starts one; punctuation: a marker row closes one and is no member).
 * The open window at the end of the input is emitted as `partial`.
 * Policies: `emit_update` outputs the window so far after each row that entered it;
 * `count_trigger` outputs the rows held as `partial` once they reach N and drops them (the window
 * goes on); each output's start and end are the first and last order_by value of its rows.
 */
final case class DataWindows(spec: DataWindowSpec) extends SequenceFamily {
  override def newRecord(): AnyRef = new DataRecord(spec.initialState)
  override def userClasses: Seq[Class[_]] = spec.userClasses

  override def place(order: Any, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    val r = op.state.record.asInstanceOf[DataRecord]
    spec.boundary(signal, r) match {
      case DataBoundary.Joins =>
        append(order, row, r, op)
        true
      case DataBoundary.Starts =>
        if (r.members > 0) close(WindowKind.Final, r, op)
        append(order, row, r, op)
        true
      case DataBoundary.Closes =>
        if (r.members > 0) close(WindowKind.Final, r, op)
        false
      case DataBoundary.Skipped => false
    }
  }

  override def teardown(op: KeyedWindowOperator): Unit = {
    val r = op.state.record.asInstanceOf[DataRecord]
    if (r.members > 0) close(WindowKind.Partial, r, op)
  }

  private def current(op: KeyedWindowOperator): WindowEntry = {
    val w = op.state.window(0L)
    if (w != null) w else op.open(0L, 0L, op.contents.buffered())
  }

  private def append(order: Any, row: InternalRow, r: DataRecord, op: KeyedWindowOperator): Unit = {
    val w = current(op)
    if (w.held == 0) w.first = order
    w.last = order
    r.members += 1
    op.enter(w, row)
  }

  private def close(kind: UTF8String, r: DataRecord, op: KeyedWindowOperator): Unit = {
    val w = current(op)
    if (w.held > 0) op.output(w, kind)
    op.flushRows(w)
    r.members = 0
  }
}
