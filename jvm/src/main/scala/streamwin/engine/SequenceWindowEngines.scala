package streamwin.engine

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String

import streamwin.spec._

/**
 * A per-key state machine over rows in arrival (`order_by`) order. The host resets it per key,
 * feeds every row of the key with a non-null order, and finishes the key at the end of its input.
 */
abstract class RowWindowEngine extends Serializable {
  private var emitted = 0L
  private var peak = 0
  protected var unwindowed = 0L
  protected var late = 0L
  protected var passed = 0L

  def windowsEmitted: Long = emitted
  def peakBuffered: Int = peak
  /** Rows accepted but dropped without ever being in a window (eKuiper: rows before the first full window). */
  def rowsInNoWindow: Long = unwindowed
  /** Rejected rows that were late (their windows were already gone), as opposed to in no window at all. */
  def rowsLate: Long = late
  /** Late rows output with kind `late` (passthrough), as opposed to dropped. */
  def rowsPassedThrough: Long = passed

  def startKey(): Unit

  /**
   * One row of the key. `signal` is the per-row value the family reads (split predicate, delta
   * value, punctuation marker, event time), null when absent. Returns false when the row is not a
   * window member (a punctuation marker, a delta row without a value, a late row), so the host
   * counts it as late or skipped.
   */
  def addRow(order: Any, signal: Any, row: InternalRow): Boolean

  def finishKey(): Unit

  // A streaming host keeps the engine between micro-batches and never finishes a key (a stream has
  // no end); these let it close windows on Spark's watermark or processing time instead.

  /**
   * Event time (µs) has reached `watermark` for the key, whatever its own rows say (Spark's
   * event-time watermark, or processing time for timer windows): windows it passed close.
   */
  def advanceTo(watermark: Long): Unit = ()

  /** Earliest time (µs) at which [[advanceTo]] would output something; Long.MaxValue when never. */
  def nextDeadline: Long = Long.MaxValue

  /**
   * True when the key holds nothing that a later row could need once its time reached `watermark`,
   * so a streaming host may forget the key: a fresh engine advanced to the watermark behaves the same.
   */
  def forgettable(watermark: Long): Boolean = false

  protected final def countEmitted(): Unit = emitted += 1
  protected final def held(n: Int): Unit = if (n > peak) peak = n
}

/**
 * Count and data-driven windows: the rows of open windows live in a [[WindowContents]]. At the
 * end of the key's input (teardown), incomplete windows are emitted as `partial`.
 */
abstract class SequenceWindowEngine(contents: WindowContents, policies: WindowPolicies) extends RowWindowEngine {
  protected final def emit(start: Any, end: Any, kind: UTF8String): Unit = {
    contents.emit(start, end, kind)
    countEmitted()
  }
}

object SequenceWindowEngine {
  /**
   * @param contents    what the windows share (one running buffer, a FIFO, or the rows)
   * @param newContents a window's own buffer, for overlapping count windows that output each
   *                    window's rows so far (update emission, count trigger)
   */
  def apply(spec: SequenceWindowSpec, contents: WindowContents, policies: WindowPolicies,
      newContents: () => WindowContents): RowWindowEngine =
    spec match {
      case c: CountWindowSpec if c.step < c.size && !c.alignEnd && (policies.emitUpdate || policies.countTrigger > 0) =>
        new OverlappingCountEngine(c, policies, newContents)
      case c: CountWindowSpec => new CountWindowEngine(c, contents, policies)
      case other => new DataWindowEngine(other, contents, policies)
    }

  /** True when the windows of `spec` never overlap, so one running aggregate suffices. */
  def disjoint(spec: SequenceWindowSpec): Boolean = spec match {
    case c: CountWindowSpec => c.step == c.size
    case _ => true
  }
}

/**
 * Count windows of one key.
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
final class CountWindowEngine(spec: CountWindowSpec, contents: WindowContents, policies: WindowPolicies)
    extends SequenceWindowEngine(contents, policies) {
  private var rows = 0L
  private var oldestRetained = 0L
  // Rows below this index have been in an emitted window.
  private var coveredUntil = 0L
  // Arrival-order value of each retained row: a window's start and end are its first and last.
  private val orders = new mutable.ArrayDeque[Any]

  override def startKey(): Unit = {
    rows = 0L
    oldestRetained = 0L
    coveredUntil = 0L
    orders.clear()
    contents.clear()
  }

  override def addRow(order: Any, signal: Any, row: InternalRow): Boolean = {
    contents.append(row)
    orders.append(order)
    rows += 1
    held(orders.size)
    // When the row completes a window, the retained rows are exactly that window.
    PolicyEmission.afterRow(policies, orders.size, completesWindow)({ kind =>
      emit(orders.head, orders.last, kind)
      if (kind ne WindowKind.Update) coveredUntil = rows
    }, evictBefore(rows))
    evictBefore(firstRowStillNeeded)
    true
  }

  override def finishKey(): Unit = {
    if (spec.alignEnd) {
      if (rows > coveredUntil && orders.nonEmpty) emit(orders.head, orders.last, WindowKind.Partial)
    } else {
      // Every retained row is in one of the partial windows below, so none is unwindowed.
      coveredUntil = rows
      var start = firstRowStillNeeded
      while (start < rows) {
        evictBefore(start)
        // (A count trigger may have flushed every row of the last window already.)
        if (orders.nonEmpty) emit(orders.head, orders.last, WindowKind.Partial)
        start += spec.step
      }
    }
    startKey()
  }

  private def completesWindow: Boolean =
    rows >= spec.size && (if (spec.alignEnd) rows % spec.step == 0 else (rows - spec.size) % spec.step == 0)

  /** Index of the oldest row that a window not yet complete holds. */
  private def firstRowStillNeeded: Long =
    if (spec.alignEnd) {
      // The next window ends at the next multiple of step that is at least size.
      val next = math.max(spec.size, (rows / spec.step + 1) * spec.step)
      next - spec.size
    } else if (rows < spec.size) 0L
    else ((rows - spec.size) / spec.step + 1) * spec.step

  private def evictBefore(index: Long): Unit = {
    while (oldestRetained < index && orders.nonEmpty) {
      if (oldestRetained >= coveredUntil) unwindowed += 1
      contents.evictOldest()
      orders.removeHead()
      oldestRetained += 1
    }
  }
}

/**
 * Overlapping start-aligned count windows (Quix hopping and sliding count windows) whose rows so
 * far are output while they fill: with `emit_update` after every row, each open window (every
 * window holding the row) as `update`; with `count_trigger` a window's rows as `partial` once they
 * reach N. Each open window keeps its own buffer, so a row is added to size / step of them; the
 * shared-FIFO [[CountWindowEngine]] serves every other count window. Windows start at rows 0,
 * step, 2·step, …, are `final` at their size-th row and `partial` at the end of the input.
 */
final class OverlappingCountEngine(spec: CountWindowSpec, policies: WindowPolicies, newContents: () => WindowContents)
    extends RowWindowEngine {

  private final class OpenWindow extends Serializable {
    val contents: WindowContents = newContents()
    var rows = 0L   // rows of the window so far
    var held = 0L   // rows not output by a count trigger yet
    var first: Any = null
    var last: Any = null
    def output(kind: UTF8String): Unit = { contents.emit(first, last, kind); countEmitted() }
  }

  private var rows = 0L
  private var heldRows = 0L
  private val openWindows = new mutable.ArrayDeque[OpenWindow]

  override def startKey(): Unit = {
    rows = 0L
    heldRows = 0L
    openWindows.clear()
  }

  override def addRow(order: Any, signal: Any, row: InternalRow): Boolean = {
    if (rows % spec.step == 0) openWindows.append(new OpenWindow)
    rows += 1
    openWindows.foreach { w =>
      if (w.held == 0) w.first = order
      w.last = order
      w.contents.append(row)
      w.rows += 1
      w.held += 1
      heldRows += 1
    }
    held(heldRows.toInt)
    openWindows.foreach(w => PolicyEmission.afterRow(policies, w.held, w.rows == spec.size)(w.output, flush(w)))
    while (openWindows.nonEmpty && openWindows.head.rows == spec.size) flush(openWindows.removeHead())
    true
  }

  override def finishKey(): Unit = {
    openWindows.foreach(w => if (w.held > 0) w.output(WindowKind.Partial))
    startKey()
  }

  private def flush(w: OpenWindow): Unit = {
    heldRows -= w.held
    w.held = 0
    w.contents.clear()
  }
}

/**
 * Windows whose boundaries come from the data; they never overlap and one is open at a time.
 *  - split (KX global trigger): a row whose predicate is true starts a new window; with a user's
 *    [[streamwin.api.SplitTrigger]], its stateful function says so (the host passes the trigger's
 *    input columns as a Row).
 *  - delta (SPL delta): a row whose value exceeds the oldest member's value by more than the
 *    threshold closes the window and starts the next one.
 *  - punctuation (SPL punct()): a marker row closes the window and is no member of any.
 * The open window at the end of the input is emitted as `partial`.
 * Policies: `emit_update` outputs the window so far after each row that entered it;
 * `count_trigger` outputs the rows held as `partial` once they reach N and drops them (the window
 * goes on); each output's start and end are the first and last order_by value of its rows.
 */
final class DataWindowEngine(spec: SequenceWindowSpec, contents: WindowContents, policies: WindowPolicies)
    extends SequenceWindowEngine(contents, policies) {
  private var members = 0
  private var buffered = 0
  private var first: Any = null
  private var last: Any = null
  private var oldestValue = 0.0
  private var triggerState: Any = null

  override def startKey(): Unit = {
    members = 0
    buffered = 0
    contents.clear()
    spec match {
      case TriggerSplitWindowSpec(trigger) => triggerState = trigger.initialState
      case _ =>
    }
  }

  override def addRow(order: Any, signal: Any, row: InternalRow): Boolean = spec match {
    case SplitWindowSpec =>
      if (signal == true && members > 0) close(WindowKind.Final)
      append(order, row)
      true
    case TriggerSplitWindowSpec(trigger) =>
      val (state, startsWindow) = trigger.next(triggerState, signal.asInstanceOf[org.apache.spark.sql.Row])
      triggerState = state
      if (startsWindow && members > 0) close(WindowKind.Final)
      append(order, row)
      true
    case DeltaWindowSpec(threshold) =>
      if (signal == null) false
      else {
        val value = signal.asInstanceOf[Double]
        if (members > 0 && value - oldestValue > threshold) close(WindowKind.Final)
        if (members == 0) oldestValue = value
        append(order, row)
        true
      }
    case PunctuationWindowSpec =>
      if (signal == true) {
        if (members > 0) close(WindowKind.Final)
        false
      } else {
        append(order, row)
        true
      }
    case other => throw new IllegalStateException(s"not a data window: $other")
  }

  override def finishKey(): Unit = {
    if (members > 0) close(WindowKind.Partial)
    startKey()
  }

  private def append(order: Any, row: InternalRow): Unit = {
    if (buffered == 0) first = order
    last = order
    contents.append(row)
    members += 1
    buffered += 1
    held(buffered)
    PolicyEmission.afterRow(policies, buffered, completes = false)(emit(first, last, _), { contents.clear(); buffered = 0 })
  }

  private def close(kind: UTF8String): Unit = {
    if (buffered > 0) emit(first, last, kind)
    contents.clear()
    members = 0
    buffered = 0
  }
}
