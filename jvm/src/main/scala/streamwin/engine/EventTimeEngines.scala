package streamwin.engine

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow

import streamwin.families.{SessionWindowSpec, SlidingWindowSpec}

/**
 * Event-time windows of one key fed with pre-aggregated slices in ascending time order: the host
 * groups rows by (key, slice) with Spark's partial aggregation, so every row is aggregated once,
 * however many windows hold it.
 */
trait SliceWindowEngine extends Serializable {
  def startKey(): Unit
  /** Adds the aggregate of the slice at `time`; false, keeping nothing, when the slice is in no window. */
  def addSlice(time: Long, buffer: InternalRow): Boolean
  /** End of the key's input: every open window closes. */
  def finishKey(): Unit
  /** Most slices held at once for any key so far. */
  def peakBuffered: Int
}

/** How a session reads a slice: its first and last row time and how far its rows reach (time + gap). */
final case class SessionSliceBounds(
    first: (Long, InternalRow) => Long,
    last: (Long, InternalRow) => Long,
    reach: (Long, InternalRow) => Long)

/**
 * Per-event sliding windows: slices are single timestamps; at each one, the window [t - size, t]
 * is the FIFO after evicting slices older than t - size, so each slice is merged O(1) amortised
 * times whatever the window length.
 */
final class SlidingWindowEngine(spec: SlidingWindowSpec, evaluator: AggregateEvaluator, emit: (Long, Long, InternalRow) => Unit)
    extends SliceWindowEngine {
  private val fifo = new FifoAggregator(evaluator)
  private val times = new mutable.ArrayDeque[Long]
  private var peak = 0

  override def peakBuffered: Int = peak
  override def startKey(): Unit = { fifo.clear(); times.clear() }

  override def addSlice(time: Long, buffer: InternalRow): Boolean = {
    val start = time - spec.size
    while (times.nonEmpty && times.head < start) { fifo.evictOldest(); times.removeHead() }
    fifo.push(buffer)
    times.append(time)
    if (fifo.size > peak) peak = fifo.size
    emit(start, time, fifo.result())
    true
  }

  override def finishKey(): Unit = startKey()
}

/**
 * Session windows in one pass over a key's slices. A slice is a set of rows that surely share a
 * session: one timestamp (dynamic gap), or the rows of one aligned bucket shorter than the gap that
 * does not straddle a max-duration check time (fixed gap, pre-aggregated map-side). The session's
 * slices are merged into one buffer, except the latest, which is held apart because a
 * max-duration cut at or before its first row moves it into the next session (eKuiper keeps rows
 * at the cut time for the next window). See [[SessionWindowSpec]] for the rules.
 */
final class SessionWindowEngine(
    spec: SessionWindowSpec,
    evaluator: AggregateEvaluator,
    bounds: SessionSliceBounds,
    emit: (Long, Long, InternalRow) => Unit) extends SliceWindowEngine {

  private var open = false
  private var reportedStart = 0L
  private var firstTime = 0L
  private var end = 0L
  private var nextCheck = Long.MaxValue
  private var merged: InternalRow = null
  private var pendingFirst = 0L
  private var pendingReach = 0L
  private var pending: InternalRow = null

  override def peakBuffered: Int = if (open) 2 else 0
  override def startKey(): Unit = { open = false; merged = null; pending = null }

  /** End of the open session (its last row + gap); Long.MaxValue when none is open. */
  def openEnd: Long = if (open) end else Long.MaxValue

  override def addSlice(time: Long, buffer: InternalRow): Boolean = {
    add(bounds.first(time, buffer), bounds.last(time, buffer), bounds.reach(time, buffer), buffer)
    true
  }

  private def add(first: Long, last: Long, reach: Long, buffer: InternalRow): Unit = {
    if (!open) {
      begin(first, first, buffer, reach)
      return
    }
    if (pending != null && first == pendingFirst && last == pendingFirst) {
      // More rows of the latest slice's timestamp (a host feeding single rows): they stay in that
      // slice, so a max-duration cut carries them together, and close nothing.
      evaluator.merge(pending, buffer)
      hold(first, pending, reach)
      return
    }
    // The gap closes the session before this slice's first row; a max-duration check is crossed
    // by the first row after the check time (eKuiper checks row by row, advancing one period per row).
    var closeAt = if (first > end) end else Long.MaxValue
    var cut = false
    def check(): Unit = {
      if (nextCheck - spec.maxDuration.get > firstTime && nextCheck < closeAt) {
        closeAt = nextCheck
        cut = true
      }
      nextCheck += spec.maxDuration.get
    }
    if (spec.maxDuration.isDefined) {
      val firstCrosses = first > nextCheck
      if ((if (closeAt == Long.MaxValue) last else first) > nextCheck) check()
      // A slice starts at most one period after the check time, so a later row of it can cross
      // one more check time (only when its first row crossed the previous one).
      if (!cut && closeAt == Long.MaxValue && firstCrosses && last > nextCheck) check()
    }
    if (closeAt == Long.MaxValue) {
      absorbPending()
      hold(first, buffer, reach)
    } else if (!cut) {
      absorbPending()
      emit(reportedStart, closeAt, evaluator.evaluate(merged))
      begin(first, first, buffer, reach)
    } else {
      val carried = pendingFirst >= closeAt
      if (!carried) absorbPending()
      emit(reportedStart, closeAt, evaluator.evaluate(merged))
      if (carried) {
        // The rows at or after the cut open the next session; the new slice then goes through the
        // rules again, within that session.
        begin(closeAt, pendingFirst, pending, pendingReach)
        add(first, last, reach, buffer)
      } else {
        begin(closeAt, first, buffer, reach)
      }
    }
  }

  override def finishKey(): Unit = {
    if (open) {
      absorbPending()
      emit(reportedStart, end, evaluator.evaluate(merged))
    }
    startKey()
  }

  private def begin(reported: Long, first: Long, buffer: InternalRow, reach: Long): Unit = {
    open = true
    reportedStart = reported
    firstTime = first
    end = reach
    nextCheck = if (spec.maxDuration.isDefined) spec.firstCheckAfter(first) else Long.MaxValue
    merged = evaluator.newBuffer()
    pending = null
    hold(first, buffer, reach)
  }

  private def hold(first: Long, buffer: InternalRow, reach: Long): Unit = {
    pendingFirst = first
    pendingReach = reach
    pending = buffer
    if (reach > end) end = reach
  }

  private def absorbPending(): Unit = if (pending != null) {
    evaluator.merge(merged, pending)
    pending = null
  }
}

/**
 * Sessions with a maximum duration or a dynamic gap, fed row by row in event-time order by a
 * streaming host (a batch input pre-aggregates slices for [[SessionWindowEngine]] instead). Each
 * row is a slice of that same engine, which holds the session rules (eKuiper's max-duration cut
 * included), so both hosts cut sessions alike. The row's order is its event time; `signal` is its
 * gap in µs for a dynamic gap (rows without a positive gap are in no session). A row older than the
 * key's progress cannot be placed any more: it is late (these sessions take no policies). Spark's
 * watermark closes a session whose end it passed as the end of a batch input does.
 */
final class OrderedSessionEngine(
    spec: SessionWindowSpec,
    evaluator: AggregateEvaluator,
    output: WindowOutput) extends RowWindowEngine {

  private val reach = new SliceReach
  private val sessions = new SessionWindowEngine(spec, evaluator,
    SessionSliceBounds(SliceTime, SliceTime, reach), new FinalOutput)
  private var progress = Long.MinValue

  /** Outputs a closed session as `final`. */
  private final class FinalOutput extends ((Long, Long, InternalRow) => Unit) with Serializable {
    override def apply(start: Long, end: Long, values: InternalRow): Unit = {
      output.values(start, end, WindowKind.Final, values)
      countEmitted()
    }
  }

  override def startKey(): Unit = {
    progress = Long.MinValue
    sessions.startKey()
  }

  override def addRow(order: Any, signal: Any, row: InternalRow): Boolean = {
    val time = order.asInstanceOf[Long]
    val gap = if (!spec.dynamicGap) spec.gap else if (signal == null) 0L else signal.asInstanceOf[Long]
    if (gap <= 0) return false // in no session: skipped
    if (time < progress) {
      late += 1
      return false
    }
    val slice = evaluator.newBuffer()
    evaluator.update(slice, row)
    reach.value = time + gap
    sessions.addSlice(time, slice)
    progress = time
    held(sessions.peakBuffered)
    true
  }

  override def finishKey(): Unit = {
    sessions.finishKey()
    startKey()
  }

  override def advanceTo(watermark: Long): Unit = if (watermark > progress) {
    progress = watermark
    if (watermark >= sessions.openEnd) sessions.finishKey()
  }

  override def nextDeadline: Long = sessions.openEnd

  override def forgettable(watermark: Long): Boolean = sessions.openEnd == Long.MaxValue && progress <= watermark
}

/** A slice's first and last row time: a slice here is one timestamp. */
private object SliceTime extends ((Long, InternalRow) => Long) with Serializable {
  override def apply(time: Long, buffer: InternalRow): Long = time
}

/** How far the row being added reaches (its time + gap). */
private final class SliceReach extends ((Long, InternalRow) => Long) with Serializable {
  var value = 0L
  override def apply(time: Long, buffer: InternalRow): Long = value
}
