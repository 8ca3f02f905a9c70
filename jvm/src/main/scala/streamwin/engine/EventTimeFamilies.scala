package streamwin.engine

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String

import streamwin.families.{IntervalWindowSpec, SessionWindowSpec, SlidingWindowSpec, TimeWindowSpec}
import streamwin.spec.WindowPolicies

/**
 * A window family, as the operator needs it (Flink's window assigner and trigger, in this engine's
 * terms): which windows a row belongs to, and when a window fires. Families are small and hold no
 * state of their own: a key's windows live in the operator's [[WindowState]]. Event-time families
 * ([[EventTimeFamily]]) follow the key's event-time progress; sequence families
 * ([[SequenceFamily]]) follow its rows in order_by order.
 */
trait WindowFamily extends Serializable {
  /**
   * Places a row the host fed (its order and signal) and moves the key on as the family's kind does:
   * event-time families through the operator's progress ([[KeyedWindowOperator.placeTimed]]), sequence
   * families row by row. True when the row joined a window.
   */
  def addRow(order: Any, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean

  /**
   * Places a pre-aggregated slice (see [[Slice]]; no policies): into the windows holding it, opened
   * as needed. False when it is in no window or late. Families fed slices in streams (slices not
   * [[Slice.inOrder]]) place them as they place rows.
   */
  def placeSlice(slice: Slice, op: KeyedWindowOperator): Boolean =
    throw new UnsupportedOperationException(s"${getClass.getSimpleName} windows follow rows, not slices")

  /** The end of the key's input: what is still open goes out. */
  def endOfInput(op: KeyedWindowOperator): Unit

  /** Windows close when the key's time reaches a deadline (a stream's clock closes them), not by rows alone. */
  def closesByTime: Boolean

  /** A fresh record for a key: what the family keeps besides its windows ([[WindowState.record]]), or null. */
  def newRecord(): AnyRef = null

  /** idle_timeout passed: what each window holds goes out as `partial` and is flushed; windows go on. */
  def flushIdle(op: KeyedWindowOperator): Unit =
    op.state.windows(Long.MinValue, true, Long.MaxValue, true).toVector.foreach(op.flushPartial)

  /** Progress (µs) at which `w` fires: it is output as `final`. Never, for windows closed by rows. */
  def fireAt(w: WindowEntry): Long = Long.MaxValue

  /** Progress at which `w` is dropped, so that rows for it are late. After fireAt only for families that [[refires]]. */
  def dropAt(w: WindowEntry): Long = fireAt(w)

  /** A fired window stays until dropAt and is output again (`update`) when late rows changed it (SPL timeInterval). */
  def refires: Boolean = false

  /** True when `w` has something to output as `final` (by default: rows a count trigger did not take). */
  def outputsWhenFired(w: WindowEntry, policies: WindowPolicies): Boolean = w.held > 0 || policies.emitEmpty

  /**
   * The start a window (or late group) is output with. A window's state key is its start, unless a
   * family keys windows that share a start otherwise (cumulative windows).
   */
  def reportedStart(w: WindowEntry): Long = w.start

  /** Outputs `w` with `kind`; families whose windows share rows read them from the state. */
  def output(w: WindowEntry, kind: UTF8String, op: KeyedWindowOperator): Unit =
    w.contents.emit(reportedStart(w), w.end, kind)

  /** Just before `w` fires for the first time (gap filling of empty windows). */
  def beforeFire(w: WindowEntry, op: KeyedWindowOperator): Unit = ()

  /** After windows fired or late groups were output at the key's current progress (evicting kept rows). */
  def afterClose(op: KeyedWindowOperator): Unit = ()

  /**
   * Progress at which what the key keeps besides its windows (rows shared by future windows) can all
   * be released, so that a stream's clock comes back to a key that went idle and forgets it.
   */
  def releaseAt(state: WindowState): Long = Long.MaxValue

  /**
   * A stream's stored row of a slice-fed key spanning [start, end) is one of the key's shared slices
   * ([[SharedSlices]]), not a window.
   */
  def storesSharedSlice(start: Long, end: Long): Boolean = false

  /** A stream read back a key's shared slices: open the windows they hold. */
  def sharedSlicesRestored(op: KeyedWindowOperator): Unit = ()

  /** Nothing of the key needs keeping besides open windows and late groups. */
  def holdsNothing(state: WindowState): Boolean = !state.hasWindows

  /** Classes of a user's code the family runs (a split trigger), whose state it may keep. */
  def userClasses: Seq[Class[_]] = Nil
}

/** A family of event-time windows: the row's event time (µs) places it. */
trait EventTimeFamily extends WindowFamily {
  /**
   * The row's event time from what the host feeds: its signal (see [[streamwin.spec.RowReplay]]),
   * unless the family follows event-time order and reads a signal of its own (a dynamic session gap).
   * Null: the row has no event time and is skipped.
   */
  def rowTime(order: Any, signal: Any): Any = signal

  /**
   * Places a row at event time `time`: `op.enter` for each open window it joins (opening windows as
   * needed), `op.late` for each window of it that is already dropped. True when it joined a window.
   * `signal` is what the host fed besides the order (the time itself, or the family's own signal).
   */
  def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean

  override final def addRow(order: Any, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean =
    op.placeTimed(this, order, signal, row)

  // A batch input is a finished replay: event time runs out and every window fires.
  override final def endOfInput(op: KeyedWindowOperator): Unit = op.runOutOfTime()

  override final def closesByTime: Boolean = true

  override def fireAt(w: WindowEntry): Long
}

object EventTimeFamily {
  /**
   * Places a row into the fixed windows [start, start + length) of `starts` (those holding it): it
   * joins each one that is open or not opened yet, and is late for each one that progress passed by
   * more than `allowance` after its end.
   */
  def placeInFixed(starts: Iterator[Long], length: Long, allowance: Long, row: InternalRow, op: KeyedWindowOperator)
      : Boolean = placeInKeyed(starts.map(start => (start, start + length)), allowance, row, op)

  /**
   * As [[placeInFixed]], for windows given as (state key, end): the key is the window's start unless
   * the family keys windows that share a start otherwise (see [[WindowFamily.reportedStart]]).
   */
  def placeInKeyed(windows: Iterator[(Long, Long)], allowance: Long, row: InternalRow, op: KeyedWindowOperator)
      : Boolean = joinKeyed(windows, allowance, row, op)(op.enter(_, row))

  /**
   * As [[placeInFixed]], for a pre-aggregated slice that may come after later ones (a stream's next
   * micro-batch): its buffer is merged into each window holding it that is open or not opened yet;
   * it is late for the others, exactly as each of its rows would be.
   */
  def placeSliceInFixed(starts: Iterator[Long], length: Long, allowance: Long, slice: Slice, op: KeyedWindowOperator)
      : Boolean = joinKeyed(starts.map(start => (start, start + length)), allowance, null, op) { w =>
    w.contents.mergeSlice(slice.buffer)
    op.enteredSlice(w, slice)
  }

  private def joinKeyed(windows: Iterator[(Long, Long)], allowance: Long, lateRow: InternalRow, op: KeyedWindowOperator)(
      join: WindowEntry => Unit): Boolean = {
    var entered = false
    while (windows.hasNext) {
      val (key, end) = windows.next()
      if (op.reached(end + allowance)) op.arrivedLate(key, end, lateRow)
      else {
        var w = op.state.window(key)
        if (w == null) w = op.open(key, end, op.contents.buffered())
        join(w)
        entered = true
      }
    }
    entered
  }
}

/**
 * Aligned windows (tumbling, hopping, timer): a row joins every window [start, end) holding it; a
 * window fires when progress reaches end + lateness (KX: "greater or equal to the window's end time
 * + allowed lateness"). With `emit_empty`, the empty windows since the key's previous fired window
 * are output just before a window fires.
 */
final case class AlignedWindows(spec: TimeWindowSpec, lateness: Long, emitEmpty: Boolean) extends EventTimeFamily {
  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean =
    EventTimeFamily.placeInFixed(spec.windowStartsHolding(time), spec.size, lateness, row, op)

  /**
   * A slice of gcd(size, step) is kept once, in the key's kept slices, and opens the windows holding
   * it that are not open yet (those after the newest open one: slices come in time order); a window
   * outputs the kept slices of its range.
   */
  override def placeSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    val t = slice.time
    if (spec.inGap(t)) return false
    if (!slice.inOrder) {
      // A stream's slices: windows that overlap share them; other windows aggregate their own, as they would rows.
      return if (spec.overlapping) placeSharedSlice(slice, op)
      else EventTimeFamily.placeSliceInFixed(spec.windowStartsHolding(t), spec.size, lateness, slice, op)
    }
    op.state.keptSlices.keep(t, slice.buffer)
    // Slices come in time order, so every open window starts at or before t.
    val newest = op.state.lastWindow
    val newestStart = if (newest == null) Long.MinValue else newest.start
    // Only the windows after the newest open one are new: a direct loop, as this runs once per slice.
    var start = spec.firstStartEndingAfter(t)
    if (newestStart >= start) start = newestStart + spec.step
    val last = spec.lastStartAtOrBefore(t)
    while (start <= last) {
      op.open(start, start + spec.size, NoContents)
      start += spec.step
    }
    true
  }

  /**
   * A stream's slice of overlapping windows ([[SharedSlices]]): kept once, shared by the windows holding
   * it that are open or not opened yet (opened without contents); late for those already fired. A window
   * that holds its own buffer (one stored by a version before shared slices) merges the slice into it.
   */
  private def placeSharedSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    val t = slice.time
    // The windows holding t start from `first` to t; those progress passed (the oldest) fired already.
    var start = spec.firstStartEndingAfter(t)
    while (start <= t && op.reached(start + spec.size + lateness)) {
      op.arrivedLate(start, start + spec.size, null)
      start += spec.step
    }
    if (start > t) return false
    val oldest = op.state.firstWindow
    if (oldest == null || (oldest.contents eq NoContents)) openMissing(start, t, op)
    else {
      // Windows stored with buffers of their own start before every window made of shared slices.
      var shared = false
      while (start <= t) {
        var w = op.state.window(start)
        if (w == null) w = op.open(start, start + spec.size, NoContents)
        if (w.contents eq NoContents) shared = true
        else {
          w.contents.mergeSlice(slice.buffer)
          op.enteredSlice(w, slice)
        }
        start += spec.step
      }
      if (!shared) return true
    }
    op.state.sharedSlices.add(t, t + spec.slice, slice.buffer, slice.rows)
    true
  }

  /**
   * Opens the windows starting in [from, to] that are not open, without contents. A key's open windows
   * are mostly one run of consecutive starts (slices come in time order): then only the windows before
   * and after the run are looked at.
   */
  private def openMissing(from: Long, to: Long, op: KeyedWindowOperator): Unit = {
    val oldest = op.state.firstWindow
    val newest = op.state.lastWindow
    val consecutive = oldest != null && op.state.windowCount == (newest.start - oldest.start) / spec.step + 1
    var start = from
    if (oldest == null || consecutive) {
      val below = if (oldest == null) to else math.min(to, oldest.start - spec.step)
      while (start <= below) { op.open(start, start + spec.size, NoContents); start += spec.step }
      if (oldest != null) {
        start = math.max(from, newest.start + spec.step)
        while (start <= to) { op.open(start, start + spec.size, NoContents); start += spec.step }
      }
    } else {
      while (start <= to) {
        if (op.state.window(start) == null) op.open(start, start + spec.size, NoContents)
        start += spec.step
      }
    }
  }

  /**
   * A stream read a key's shared slices back: the windows holding them that have not fired are open
   * (each was opened by the first of its slices, and a slice that came after a window fired is late
   * for it, so not in it). Slices come by ascending start, so each window is looked at once.
   */
  override def sharedSlicesRestored(op: KeyedWindowOperator): Unit = {
    // Windows stored with buffers of their own were restored before: look each window up only then.
    val noneOpen = op.state.firstWindow == null
    var next = Long.MinValue
    op.state.sharedSlices.entries.foreach { e =>
      var start = math.max(spec.firstStartEndingAfter(e.start), next)
      while (start <= e.start && op.reached(start + spec.size + lateness)) start += spec.step
      while (start <= e.start) {
        if (noneOpen || op.state.window(start) == null) op.open(start, start + spec.size, NoContents)
        start += spec.step
      }
      next = math.max(next, start)
    }
  }

  /** A stored row of a key's state is one of its shared slices when it spans a slice, not a window. */
  override def storesSharedSlice(start: Long, end: Long): Boolean = spec.overlapping && end - start == spec.slice

  override def output(w: WindowEntry, kind: UTF8String, op: KeyedWindowOperator): Unit =
    if (w.contents ne NoContents) super.output(w, kind, op)
    else if (op.state.hasSharedSlices) op.contents.output.values(w.start, w.end, kind, op.state.sharedSlices.aggregate(w.start, w.end - 1, spec.size, spec.alignment))
    else op.contents.output.values(w.start, w.end, kind, op.state.keptSlices.aggregate(w.start, w.end - 1))

  // A stream's shared slices go once no open window holds them.
  override def afterClose(op: KeyedWindowOperator): Unit = if (op.state.hasSharedSlices) {
    val first = op.state.firstWindow
    op.state.sharedSlices.dropBefore(if (first == null) Long.MaxValue else first.start)
  }

  // A window fed slices was opened by a slice it holds.
  override def outputsWhenFired(w: WindowEntry, policies: WindowPolicies): Boolean =
    (w.contents eq NoContents) || super.outputsWhenFired(w, policies)

  override def fireAt(w: WindowEntry): Long = w.end + lateness

  override def beforeFire(w: WindowEntry, op: KeyedWindowOperator): Unit = if (emitEmpty) {
    op.state.lastClosedStart.foreach { previous =>
      var empty = previous + spec.step
      while (empty < w.start) {
        op.outputEmpty(empty, empty + spec.size)
        empty += spec.step
      }
    }
    op.state.lastClosedStart = Some(w.start)
  }

  // Gap filling remembers the last fired window for as long as the key lives.
  override def holdsNothing(state: WindowState): Boolean = !state.hasWindows && !emitEmpty
}

/**
 * SPL timeInterval panes [offset + k·period, … + duration): a pane fires (`final`) when progress
 * reaches its end; a row that arrives later but before progress reaches end + discard age joins
 * it, and the pane fires again whole (`update`); after that the pane is gone and rows for it are
 * late. A row in no pane at all is skipped, not late.
 */
final case class IntervalPanes(spec: IntervalWindowSpec) extends EventTimeFamily {
  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean =
    EventTimeFamily.placeInFixed(spec.paneStartsHolding(time), spec.duration, spec.discardAge, row, op)

  override def fireAt(w: WindowEntry): Long = w.end
  override def dropAt(w: WindowEntry): Long = w.end + spec.discardAge
  override def refires: Boolean = true
}

/**
 * Per-event sliding windows: the window of event time t is [t - size, t], both ends inclusive, and
 * holds every row in that range that arrived before it fired, including rows that arrived before t
 * did. It is opened by the first row at t whose window is not dropped yet, and fires when progress
 * passes t + lateness (a row at exactly the progress still joins it). A row joins its own window and
 * every open later window within size; it is late when none is open. Windows share the key's kept
 * rows (by event time), which stay while an open or future window can hold them; each output reads
 * the rows of its range, so its cost grows with the window's row count.
 */
final case class SlidingWindows(spec: SlidingWindowSpec, lateness: Long, emitUpdate: Boolean) extends EventTimeFamily {
  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    val ownOpen = !op.reached(time + lateness + 1)
    // Windows are keyed by start = end - size: open windows ending in (time, time + size].
    if (!ownOpen && !op.state.windows(time - spec.size, false, time, true).hasNext) {
      op.arrivedLate(time - spec.size, time, row)
      return false
    }
    op.state.keepRow(time, row)
    op.keptRowsChanged(1)
    if (ownOpen && op.state.window(time - spec.size) == null) op.open(time - spec.size, time, NoContents)
    if (emitUpdate) {
      // Every open window holding the row: ends in [time, time + size].
      val holding = op.state.windows(time - spec.size, true, time, true).toVector
      holding.foreach(op.enter(_, row, append = false))
    }
    true
  }

  /** A slice (one timestamp) is kept in the key's timestamp slices and opens its own window, which outputs the slices of its range. */
  override def placeSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    op.state.timestampSlices(spec.size).keep(slice.time, slice.buffer)
    op.open(slice.time - spec.size, slice.time, NoContents)
    true
  }

  override def fireAt(w: WindowEntry): Long = w.end + lateness + 1

  override def outputsWhenFired(w: WindowEntry, policies: WindowPolicies): Boolean = true

  override def output(w: WindowEntry, kind: UTF8String, op: KeyedWindowOperator): Unit =
    if (op.state.hasTimestampSlices) {
      op.contents.output.values(w.start, w.end, kind, op.state.timestampSlices(spec.size).aggregate(w.start, w.end))
    } else op.state.aggregateKeptRows(w.start, w.end) match {
      case Some(values) => op.contents.output.values(w.start, w.end, kind, values)
      case None => op.contents.output.rows(w.start, w.end, kind, op.state.keptRows(w.start, w.end))
    }

  override def afterClose(op: KeyedWindowOperator): Unit = {
    // Rows older than every open or future window's range are no longer needed.
    val progress = op.state.progress
    val dropped =
      if (progress == Long.MaxValue) op.state.dropKeptBefore(Long.MaxValue)
      else {
        val first = op.state.firstWindow
        val oldestEnd = math.min(if (first == null) Long.MaxValue else first.end, progress - lateness)
        if (oldestEnd == Long.MaxValue) 0L else op.state.dropKeptBefore(oldestEnd - spec.size)
      }
    op.keptRowsChanged(-dropped)
  }

  override def holdsNothing(state: WindowState): Boolean = !state.hasWindows && !state.hasKeptRows

  // A later row that is not late (t >= progress - lateness) reads kept rows back to t - size: once
  // progress passes the newest kept row + lateness + size, afterClose drops them all.
  override def releaseAt(state: WindowState): Long =
    if (!state.hasKeptRows) Long.MaxValue else state.lastKeptTime + lateness + spec.size + 1
}

/**
 * Sessions (fixed gap): a row's own window is [t, t + gap); it joins every open session within a
 * gap of it (merging them when it bridges two), or opens a session when none is open there and its
 * own window is not dropped yet; otherwise it is late. A session [first, last + gap) fires when
 * progress reaches its end + lateness. A session keeps its rows (they are aggregated at each output).
 */
final case class SessionWindows(spec: SessionWindowSpec, lateness: Long) extends EventTimeFamily {
  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean =
    join(time, time + spec.gap, row, op, op.contents.kept())(op.enter(_, row))

  /**
   * The session of rows at `time` reaching to `reach`: they join every open session within a gap
   * (merging them), or open one (with `contents`) when none is open there and theirs is not dropped
   * yet; otherwise they are late (`lateRow` goes to the operator).
   */
  private def join(time: Long, reach: Long, lateRow: InternalRow, op: KeyedWindowOperator, contents: => WindowContents)(
      enter: WindowEntry => Unit): Boolean = {
    // Open sessions within a gap of the row (Spark's merge rule, as the batch session engine):
    // starting at or before time + gap and ending at or after time.
    val touching = new mutable.ArrayBuffer[WindowEntry]
    val candidates = op.state.windowsDownFrom(reach)
    var scanning = true
    while (scanning && candidates.hasNext) {
      val s = candidates.next()
      if (s.end >= time) touching += s else scanning = false
    }
    if (touching.isEmpty && op.reached(reach + lateness)) {
      op.arrivedLate(time, reach, lateRow)
      return false
    }
    val session = if (touching.isEmpty) new WindowEntry(time, reach, contents) else touching.last
    touching.foreach(s => op.state.removeWindow(s.start))
    touching.iterator.filter(_ ne session).foreach { s =>
      session.contents.absorb(s.contents)
      session.held += s.held
      session.end = math.max(session.end, s.end)
    }
    session.start = math.min(session.start, time)
    session.end = math.max(session.end, reach)
    op.state.putWindow(session)
    enter(session)
    true
  }

  /**
   * A slice of rows that surely share a session (a gap-long bucket): in time order, only the latest
   * session can be within a gap of it. It joins that one, or opens the next. A stream's slices (one
   * per timestamp, in no order across micro-batches) are placed as their rows would be.
   */
  override def placeSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    if (!slice.inOrder) {
      return join(slice.first, slice.reach, null, op, op.contents.buffered()) { session =>
        session.contents.mergeSlice(slice.buffer)
        op.enteredSlice(session, slice)
      }
    }
    val latest = op.state.windowsDownFrom(slice.reach)
    val session = if (latest.hasNext) latest.next() else null
    if (session != null && session.end >= slice.first) {
      session.contents.mergeSlice(slice.buffer)
      session.end = math.max(session.end, slice.reach)
      op.enteredSlice(session, slice)
    } else {
      op.enteredSlice(op.open(slice.first, slice.reach, op.contents.ofSlice(slice.buffer)), slice)
    }
    true
  }

  // Sessions never overlap, so their ends ascend with their starts.
  override def fireAt(w: WindowEntry): Long = w.end + lateness
}

/**
 * Sessions with a maximum duration or a dynamic gap (eKuiper's SESSIONWINDOW cut; see
 * [[SessionWindowSpec]] for the rules), in event-time order: a row older than the key's progress is
 * late. Fed rows (each one a slice of one instant, reaching to its time + its gap) or pre-aggregated
 * slices (gap-long buckets that do not straddle a check time), alike. The key's one open session is
 * a window; the latest slice is held apart in the key's record, because a cut at or before its first
 * row moves it into the next session (eKuiper keeps rows at the cut time for the next window).
 */
final case class CutSessions(spec: SessionWindowSpec) extends EventTimeFamily {
  // Event-time order is the arrival order; the signal is the dynamic gap. A row without a positive
  // gap is in no session: skipped, and its time moves nothing (as a null slice in batch).
  override def rowTime(order: Any, signal: Any): Any = if (gapOf(signal) > 0) order else null

  private def gapOf(signal: Any): Long =
    if (!spec.dynamicGap) spec.gap else if (signal == null) 0L else signal.asInstanceOf[Long]

  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    val gap = gapOf(signal)
    if (time < op.state.progress) {
      op.arrivedLate(time, time + gap, row)
      return false
    }
    val contents = op.contents.buffered()
    contents.append(row)
    add(time, time, time + gap, contents, 1L, op)
    true
  }

  override def placeSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    add(slice.first, slice.last, slice.reach, op.contents.ofSlice(slice.buffer), slice.rows, op)
    true
  }

  override def fireAt(w: WindowEntry): Long = w.end

  // The held-apart slice joins the session when progress closes it.
  override def beforeFire(w: WindowEntry, op: KeyedWindowOperator): Unit = absorbLatest(w, record(op), op)

  private def record(op: KeyedWindowOperator): CutSessionRecord = op.state.record match {
    case r: CutSessionRecord => r
    case _ =>
      val r = new CutSessionRecord
      op.state.record = r
      r
  }

  private def add(first: Long, last: Long, reach: Long, contents: WindowContents, rows: Long, op: KeyedWindowOperator): Unit = {
    val r = record(op)
    val session = op.state.firstWindow
    if (session == null) {
      begin(first, first, contents, rows, reach, r, op)
      return
    }
    if (r.latest != null && first == r.latestFirst && last == r.latestFirst) {
      // More rows of the latest slice's instant (a host feeding rows): they stay in that slice, so a
      // cut carries them together, and they close nothing.
      r.latest.absorb(contents)
      hold(first, r.latest, r.latestRows + rows, reach, session, r, op)
      return
    }
    // The gap closes the session before this slice's first row; a check time is crossed by the
    // first row after it (eKuiper checks row by row, advancing one period per row).
    var closeAt = if (first > session.end) session.end else Long.MaxValue
    var cut = false
    def check(): Unit = {
      val d = spec.maxDuration.get
      if (r.nextCheck - d > r.firstTime && r.nextCheck < closeAt) {
        closeAt = r.nextCheck
        cut = true
      }
      r.nextCheck += d
    }
    if (spec.maxDuration.isDefined) {
      val firstCrosses = first > r.nextCheck
      if ((if (closeAt == Long.MaxValue) last else first) > r.nextCheck) check()
      // A slice starts at most one period after the check time, so a later row of it can cross one
      // more check time (only when its first row crossed the previous one).
      if (!cut && closeAt == Long.MaxValue && firstCrosses && last > r.nextCheck) check()
    }
    if (closeAt == Long.MaxValue) {
      absorbLatest(session, r, op)
      hold(first, contents, rows, reach, session, r, op)
    } else if (!cut) {
      close(session, closeAt, r, op, absorb = true)
      begin(first, first, contents, rows, reach, r, op)
    } else {
      val carried = r.latestFirst >= closeAt
      val (carriedFirst, carriedContents, carriedRows, carriedReach) = (r.latestFirst, r.latest, r.latestRows, r.latestReach)
      close(session, closeAt, r, op, absorb = !carried)
      if (carried) {
        // The rows at or after the cut open the next session; the new slice then goes through the
        // rules again, within that session.
        begin(closeAt, carriedFirst, carriedContents, carriedRows, carriedReach, r, op)
        add(first, last, reach, contents, rows, op)
      } else {
        begin(closeAt, first, contents, rows, reach, r, op)
      }
    }
  }

  /** Outputs the session as [start, end) and drops it; the latest slice joins it first unless carried over. */
  private def close(session: WindowEntry, end: Long, r: CutSessionRecord, op: KeyedWindowOperator, absorb: Boolean): Unit = {
    if (absorb) absorbLatest(session, r, op)
    else { r.latest = null; op.keptRowsChanged(-r.latestRows) }
    session.end = end
    op.output(session, WindowKind.Final)
    op.drop(session)
  }

  /** Opens a session reported as starting at `reported`, whose first row is at `first`, holding the slice apart. */
  private def begin(reported: Long, first: Long, contents: WindowContents, rows: Long, reach: Long, r: CutSessionRecord,
      op: KeyedWindowOperator): Unit = {
    val session = op.open(reported, reach, op.contents.buffered())
    r.firstTime = first
    r.nextCheck = if (spec.maxDuration.isDefined) spec.firstCheckAfter(first) else Long.MaxValue
    r.latest = null
    hold(first, contents, rows, reach, session, r, op)
  }

  private def hold(first: Long, contents: WindowContents, rows: Long, reach: Long, session: WindowEntry, r: CutSessionRecord,
      op: KeyedWindowOperator): Unit = {
    op.keptRowsChanged(rows - (if (r.latest eq contents) r.latestRows else 0L))
    r.latestFirst = first
    r.latestReach = reach
    r.latest = contents
    r.latestRows = rows
    if (reach > session.end) session.end = reach
  }

  private def absorbLatest(session: WindowEntry, r: CutSessionRecord, op: KeyedWindowOperator): Unit = if (r.latest != null) {
    session.contents.absorb(r.latest)
    session.held += r.latestRows // the rows stay counted as held, now by the session
    r.latest = null
  }
}

/** What a key's cut session remembers besides its window: its first row, the next check time, and its latest slice. */
final class CutSessionRecord extends ContentsRecord with Serializable {
  var firstTime = 0L
  var nextCheck = Long.MaxValue
  var latestFirst = 0L
  var latestReach = 0L
  var latestRows = 0L
  var latest: WindowContents = _
  override def release(): Unit = if (latest != null) { latest.clear(); latest = null }
}
