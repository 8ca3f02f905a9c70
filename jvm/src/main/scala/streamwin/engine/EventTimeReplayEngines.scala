package streamwin.engine

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String

import streamwin.spec.{SessionWindowSpec, SlidingWindowSpec, TimeWindowSpec, WindowPolicies}

/**
 * Event-time windows of one key under the event-time policies, fed row by row in arrival order
 * (`order_by`, or event time) with each row's event time (µs) as the signal. The model of seeds
 * 000 (KX) and 002 (Quix), shared by every event-time family:
 *
 *  - progress is the largest event time seen so far; a window closes when progress passes its
 *    end + lateness and is then output as `final`;
 *  - a row that enters no open window is late: dropped and counted, or (passthrough) kept per
 *    window it would have belonged to and output as `late` just before the next windows close;
 *  - `emit_update` outputs each window a row entered, right after that row, as `update`;
 *  - `count_trigger` outputs a window's (or late group's) rows as `partial` (`late`) once they
 *    reach N, and clears them; the remainder is the `final` output.
 *
 * At the end of a key's input (a batch replay's teardown) late groups and then every open window
 * are output. Families say which windows a row enters and when they close.
 *
 * @param newContents a fresh, empty window buffer: an aggregate (groupBy) or the member rows (select)
 */
abstract class EventTimeReplayEngine(policies: WindowPolicies, newContents: () => WindowContents)
    extends RowWindowEngine {

  /** The rows of one window (or late group) not output yet. */
  protected final class Buffered(val end: Long) extends Serializable {
    val contents: WindowContents = newContents()
    var rows = 0L
    def add(row: InternalRow): Unit = { contents.append(row); rows += 1; bufferedRows += 1 }
    def clear(): Unit = { bufferedRows -= rows; rows = 0; contents.clear() }
  }

  private val lateGroups = new java.util.TreeMap[java.lang.Long, Buffered]
  protected var progress: Long = Long.MinValue
  protected var bufferedRows = 0L

  protected def resetKey(): Unit

  /** Adds a row of the key; true when it entered an open window. */
  protected def place(time: Long, row: InternalRow): Boolean

  /** Outputs (as `final`) and forgets every window whose end + lateness `watermark` passed. */
  protected def closeUntil(watermark: Long): Unit

  /** True when windows closing at `watermark` exist (then late groups go out first). */
  protected def closesAny(watermark: Long): Boolean

  override final def startKey(): Unit = {
    lateGroups.clear()
    progress = Long.MinValue
    bufferedRows = 0L
    resetKey()
  }

  override final def addRow(order: Any, signal: Any, row: InternalRow): Boolean = {
    if (signal == null) return false // no event time: skipped
    val time = signal.asInstanceOf[Long]
    val entered = place(time, row)
    held(bufferedRows.toInt)
    if (time > progress) {
      progress = time
      close(progress)
    }
    entered
  }

  // Once the watermark, not the key's own rows, moves the key's time on, its late rows go out even
  // when no window closes: no row of the key may come to flush them.
  override final def advanceTo(watermark: Long): Unit = if (watermark > progress) {
    progress = watermark
    close(progress, flushLate = true)
  }

  override final def nextDeadline: Long =
    if (lateGroups.isEmpty || progress == Long.MaxValue) nextClose else math.min(nextClose, progress + 1)

  override final def forgettable(watermark: Long): Boolean =
    lateGroups.isEmpty && progress <= watermark && holdsNothing

  /** When the earliest open window closes (µs of progress); Long.MaxValue when none is open. */
  protected def nextClose: Long

  /** No open window, retained row or gap-filling memory. */
  protected def holdsNothing: Boolean

  override final def finishKey(): Unit = {
    // A batch input is a finished replay: event time runs out and every window closes.
    close(Long.MaxValue)
    startKey()
  }

  private def close(watermark: Long, flushLate: Boolean = false): Unit = {
    if (closesAny(watermark) || ((flushLate || watermark == Long.MaxValue) && !lateGroups.isEmpty)) {
      while (!lateGroups.isEmpty) {
        val start = lateGroups.firstKey
        val group = lateGroups.remove(start)
        if (group.rows > 0) output(group, start, WindowKind.Late)
      }
      closeUntil(watermark)
    }
  }

  /** Counts a row that entered no open window: late, dropped or passed through. */
  protected final def countLate(): Unit = if (policies.latePassthrough) passed += 1 else late += 1

  /** Keeps a late row (passthrough) in the group of the window [start, end] it would have belonged to. */
  protected final def keepLate(start: Long, end: Long, row: InternalRow): Unit = if (policies.latePassthrough) {
    var group = lateGroups.get(start)
    if (group == null) { group = new Buffered(end); lateGroups.put(start, group) }
    group.add(row)
    if (policies.countTrigger > 0 && group.rows >= policies.countTrigger) output(group, start, WindowKind.Late)
  }

  /** A row entered `window`: the count trigger or update emission may output it. */
  protected final def entered(window: Buffered, start: Long): Unit =
    PolicyEmission.afterRow(policies, window.rows, completes = false)(
      kind => emitWindow(window.contents, start, window.end, kind), window.clear())

  /** Outputs a window's remaining rows as `final` at close (nothing when a count trigger took them all). */
  protected final def closeWindow(window: Buffered, start: Long): Unit = {
    if (window.rows > 0 || policies.emitEmpty) emitWindow(window.contents, start, window.end, WindowKind.Final)
    bufferedRows -= window.rows
  }

  /** Outputs a buffer with `kind` and empties it. */
  private def output(b: Buffered, start: Long, kind: UTF8String): Unit = {
    emitWindow(b.contents, start, b.end, kind)
    b.clear()
  }

  protected final def emitWindow(contents: WindowContents, start: Long, end: Long, kind: UTF8String): Unit = {
    contents.emit(start, end, kind)
    countEmitted()
  }

  protected final def emptyContents(): WindowContents = newContents()
}

object EventTimeReplayEngine {
  def apply(spec: streamwin.spec.WindowSpec, policies: WindowPolicies, newContents: () => WindowContents)
      : EventTimeReplayEngine = spec match {
    case t: TimeWindowSpec => new TimeWindowReplayEngine(t, policies, newContents)
    case s: SlidingWindowSpec => new SlidingReplayEngine(s, policies, newContents)
    case s: SessionWindowSpec if !s.dynamicGap && s.maxDuration.isEmpty => new SessionReplayEngine(s, policies, newContents)
    case other => throw new IllegalArgumentException(s"not a window replayed under policies: $other")
  }
}

/**
 * Aligned windows (tumbling, hopping, timer) under the policies: a row enters each open window
 * holding it; a window [start, end) closes when progress reaches end + lateness (KX: "greater or
 * equal to the window's end time + allowed lateness"). With `emit_empty`, the empty windows since
 * the key's previous closed window are output just before a window closes.
 */
final class TimeWindowReplayEngine(spec: TimeWindowSpec, policies: WindowPolicies, newContents: () => WindowContents)
    extends EventTimeReplayEngine(policies, newContents) {

  // Open windows by start (so by end: windows share one length).
  private val open = new java.util.TreeMap[java.lang.Long, Buffered]
  private var lastClosedStart: Option[Long] = None

  override protected def resetKey(): Unit = {
    open.clear()
    lastClosedStart = None
  }

  private def closedAt(start: Long, watermark: Long): Boolean =
    watermark != Long.MinValue && (watermark == Long.MaxValue || start + spec.size + policies.lateness <= watermark)

  override protected def place(time: Long, row: InternalRow): Boolean = {
    var inOpen = false
    var inClosed = false
    val starts = spec.windowStartsHolding(time)
    while (starts.hasNext) {
      val start = starts.next()
      if (closedAt(start, progress)) {
        inClosed = true
        keepLate(start, start + spec.size, row)
      } else {
        inOpen = true
        var window = open.get(start)
        if (window == null) { window = new Buffered(start + spec.size); open.put(start, window) }
        window.add(row)
        entered(window, start)
      }
    }
    if (!inOpen && inClosed) countLate()
    inOpen
  }

  override protected def closesAny(watermark: Long): Boolean = !open.isEmpty && closedAt(open.firstKey, watermark)

  override protected def nextClose: Long =
    if (open.isEmpty) Long.MaxValue else open.firstKey + spec.size + policies.lateness

  // Gap filling remembers the last closed window for as long as the key lives.
  override protected def holdsNothing: Boolean = open.isEmpty && !policies.emitEmpty

  override protected def closeUntil(watermark: Long): Unit = {
    while (!open.isEmpty && closedAt(open.firstKey, watermark)) {
      val start: Long = open.firstKey
      if (policies.emitEmpty) lastClosedStart.foreach { previous =>
        var empty = previous + spec.step
        while (empty < start) {
          emitWindow(emptyContents(), empty, empty + spec.size, WindowKind.Final)
          empty += spec.step
        }
      }
      closeWindow(open.remove(start), start)
      lastClosedStart = Some(start)
    }
  }
}

/**
 * Per-event sliding windows under the policies: the window of event time t is [t - size, t], both
 * ends inclusive, and holds every row in that range that arrived before it closed, including rows
 * that arrived before t did. It is created by the first row at t whose window is still open, and
 * closes when progress passes t + lateness (a row at exactly the progress still joins it). A row
 * enters its own window and every open later window within size; it is late when none is open.
 * Rows stay retained while an open or future window can hold them; each output aggregates the
 * retained rows of its range, so the cost per output grows with the window's row count.
 */
final class SlidingReplayEngine(spec: SlidingWindowSpec, policies: WindowPolicies, newContents: () => WindowContents)
    extends EventTimeReplayEngine(policies, newContents) {

  private val rowsByTime = new java.util.TreeMap[java.lang.Long, mutable.ArrayBuffer[InternalRow]]
  private val openEnds = new java.util.TreeSet[java.lang.Long]

  override protected def resetKey(): Unit = {
    rowsByTime.clear()
    openEnds.clear()
  }

  private def closedAt(end: Long, watermark: Long): Boolean =
    watermark != Long.MinValue && (watermark == Long.MaxValue || end + policies.lateness < watermark)

  override protected def place(time: Long, row: InternalRow): Boolean = {
    val ownOpen = !closedAt(time, progress)
    val later = openEnds.subSet(time, false, time + spec.size, true)
    if (!ownOpen && later.isEmpty) {
      keepLate(time - spec.size, time, row)
      countLate()
      return false
    }
    rowsByTime.computeIfAbsent(time, _ => new mutable.ArrayBuffer[InternalRow]).append(row.copy())
    bufferedRows += 1
    if (ownOpen) openEnds.add(time)
    if (policies.emitUpdate) {
      val ends = openEnds.subSet(time, true, time + spec.size, true).iterator()
      while (ends.hasNext) { val end: Long = ends.next(); emitWindow(windowContents(end), end - spec.size, end, WindowKind.Update) }
    }
    true
  }

  private def windowContents(end: Long): WindowContents = {
    val contents = emptyContents()
    val it = rowsByTime.subMap(end - spec.size, true, end, true).values().iterator()
    while (it.hasNext) it.next().foreach(contents.append)
    contents
  }

  override protected def closesAny(watermark: Long): Boolean = !openEnds.isEmpty && closedAt(openEnds.first, watermark)

  override protected def nextClose: Long =
    if (openEnds.isEmpty) Long.MaxValue else openEnds.first + policies.lateness + 1

  override protected def holdsNothing: Boolean = openEnds.isEmpty && rowsByTime.isEmpty

  override protected def closeUntil(watermark: Long): Unit = {
    while (!openEnds.isEmpty && closedAt(openEnds.first, watermark)) {
      val end: Long = openEnds.pollFirst()
      emitWindow(windowContents(end), end - spec.size, end, WindowKind.Final)
    }
    // Rows older than every open or future window's range are no longer needed.
    val oldestEnd = if (watermark == Long.MaxValue) Long.MaxValue
      else math.min(if (openEnds.isEmpty) Long.MaxValue else openEnds.first.longValue, watermark - policies.lateness)
    while (!rowsByTime.isEmpty && (oldestEnd == Long.MaxValue || rowsByTime.firstKey < oldestEnd - spec.size)) {
      bufferedRows -= rowsByTime.pollFirstEntry().getValue.size
    }
  }
}

/**
 * Sessions (fixed gap) under the policies: a row's own window is [t, t + gap); it joins every open
 * session within a gap of it (merging them when it bridges two), or starts a session when none
 * is open there and its own window is not closed yet; otherwise it is late. A session
 * [first, last + gap) closes when progress reaches its end + lateness. A session's rows are kept
 * and aggregated at each output.
 */
final class SessionReplayEngine(spec: SessionWindowSpec, policies: WindowPolicies, newContents: () => WindowContents)
    extends EventTimeReplayEngine(policies, newContents) {

  private final class Session(var start: Long, var reach: Long) extends Serializable {
    val rows = new mutable.ArrayBuffer[InternalRow] // not yet output by a count trigger
  }

  // Open sessions by start; they never overlap.
  private val open = new java.util.TreeMap[java.lang.Long, Session]

  override protected def resetKey(): Unit = open.clear()

  private def closedAt(end: Long, watermark: Long): Boolean =
    watermark != Long.MinValue && (watermark == Long.MaxValue || end + policies.lateness <= watermark)

  override protected def place(time: Long, row: InternalRow): Boolean = {
    val reach = time + spec.gap
    // Open sessions within a gap of the row (Spark's merge rule, as the batch session engine):
    // starting at or before time + gap and ending at or after time.
    val touching = new mutable.ArrayBuffer[Session]
    val candidates = open.headMap(reach, true).descendingMap().values().iterator()
    var scanning = true
    while (scanning && candidates.hasNext) {
      val s = candidates.next()
      if (s.reach >= time) touching += s else scanning = false
    }
    if (touching.isEmpty && closedAt(reach, progress)) {
      keepLate(time, reach, row)
      countLate()
      return false
    }
    val session = if (touching.isEmpty) new Session(time, reach) else touching.last
    touching.foreach(s => open.remove(s.start))
    touching.iterator.filter(_ ne session).foreach { s =>
      session.rows ++= s.rows
      session.reach = math.max(session.reach, s.reach)
    }
    session.start = math.min(session.start, time)
    session.reach = math.max(session.reach, reach)
    session.rows += row.copy()
    bufferedRows += 1
    open.put(session.start, session)
    PolicyEmission.afterRow(policies, session.rows.size, completes = false)(
      kind => emitWindow(contentsOf(session), session.start, session.reach, kind),
      { bufferedRows -= session.rows.size; session.rows.clear() })
    true
  }

  private def contentsOf(session: Session): WindowContents = {
    val contents = emptyContents()
    session.rows.foreach(contents.append)
    contents
  }

  // Sessions are ordered by start but close by end; with no overlap, ends ascend with starts.
  override protected def closesAny(watermark: Long): Boolean = !open.isEmpty && closedAt(open.firstEntry.getValue.reach, watermark)

  override protected def nextClose: Long =
    if (open.isEmpty) Long.MaxValue else open.firstEntry.getValue.reach + policies.lateness

  override protected def holdsNothing: Boolean = open.isEmpty

  override protected def closeUntil(watermark: Long): Unit = {
    while (!open.isEmpty && closedAt(open.firstEntry.getValue.reach, watermark)) {
      val session = open.pollFirstEntry().getValue
      if (session.rows.nonEmpty) emitWindow(contentsOf(session), session.start, session.reach, WindowKind.Final)
      bufferedRows -= session.rows.size
    }
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
    emit: (Any, Any, UTF8String, InternalRow) => Unit) extends RowWindowEngine {

  private val reach = new SliceReach
  private val sessions = new SessionWindowEngine(spec, evaluator,
    SessionSliceBounds(SliceTime, SliceTime, reach), new FinalOutput)
  private var progress = Long.MinValue

  /** Outputs a closed session as `final`. */
  private final class FinalOutput extends ((Long, Long, InternalRow) => Unit) with Serializable {
    override def apply(start: Long, end: Long, values: InternalRow): Unit = {
      emit(start, end, WindowKind.Final, values)
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
