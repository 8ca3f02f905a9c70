package streamwin.engine

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String


/**
 * The one window operator of event-time families: per key, in arrival order, it applies the
 * event-time policies of seeds 000 (KX) and 002 (Quix) to any [[EventTimeFamily]], once:
 *
 *  - progress is the largest event time seen so far (or the stream's clock, see [[advanceTo]]);
 *    a window fires when progress reaches its family's `fireAt` (end + lateness), is then output as
 *    `final` and dropped (SPL panes stay until `dropAt` and fire again as `update` when late rows
 *    changed them);
 *  - a row for windows already dropped is late: dropped and counted, or (passthrough) kept in a late
 *    group per window and output as `late` just before the next windows fire;
 *  - after each row, a window it joined may be output as `update` (emit_update) or as `partial` and
 *    flushed (count_trigger), and progress passing an emit_every time outputs the open windows: the
 *    window function's triggers ([[WindowTriggers]], composed once from its policies), for every family;
 *  - at the end of a key's input (a batch replay's teardown) late groups and then every window go out;
 *  - on a stream with idle_timeout (KX's temporal timeout), a key that held rows for that long in
 *    processing time with nothing output outputs what each window holds as `partial` and flushes it,
 *    late groups as `late`; its windows stay open for later rows ([[timeOut]]).
 *
 * It reads and writes windows only through its [[WindowState]].
 *
 * A stream stores its state between visits as state rows: a record, one row per window and late group
 * ([[WindowStateCodec]]), and the rows it keeps ([[StoredBags]]).
 */
final class KeyedWindowOperator(
    private[engine] val family: WindowFamily,
    val triggers: WindowTriggers,
    val contents: ContentsFactory,
    val state: WindowState) extends RowWindowEngine {

  private[engine] var heldRows = 0L
  // Processing time (µs) since which the key holds rows with nothing output (idle_timeout); 0: none.
  // (A field added after release: older engine state reads it as 0, which is right for it.)
  private[engine] var quietSince = 0L
  // What the key had output when the current visit began.
  @transient private var emittedBeforeVisit = 0L
  // Set by `late` while the current row is placed.
  private[engine] var lateRow = false
  // The key's bags in a stream's state store, from its read (or first write) on; reset with the key.
  private[engine] var storedBags: StoredBags = null
  // The key's window rows as read from a stream's state store (or last written); reset with the key.
  private[engine] var storedRows: LoadedWindowRows = null

  private[engine] def bagsIn(rows: KeptRowStore): StoredBags = {
    if (storedBags == null) storedBags = new StoredBags(rows, rows.inlineRows)
    storedBags
  }

  override def startKey(): Unit = {
    storedBags = null
    storedRows = null
    state.clear()
    heldRows = 0L
    quietSince = 0L
    state.record = family.newRecord()
  }

  override def addRow(order: Any, signal: Any, row: InternalRow): Boolean = family.addRow(order, signal, row, this)

  /** A row of an event-time family: placed at its event time, then the key's progress moves to it, firing what it passed. */
  private[engine] def placeTimed(f: EventTimeFamily, order: Any, signal: Any, row: InternalRow): Boolean = {
    val eventTime = f.rowTime(order, signal)
    if (eventTime == null) return false // no event time: skipped
    val time = eventTime.asInstanceOf[Long]
    val periodic = triggers.passesEarlyTime(state.progress, time)
    val openBefore = if (periodic) openWindows() else Nil
    lateRow = false
    val entered = f.place(time, signal, row, this)
    if (!entered && lateRow) { if (triggers.lateRows.keeps) passed += 1 else late += 1 }
    held(heldRows.toInt)
    if (time > state.progress) state.progress = time
    settle(flushLate = false)
    if (periodic) outputEarly(openBefore)
    entered
  }

  /** A row of a sequence family: its windows follow the key's rows. */
  private[engine] def placeSequenced(f: SequenceFamily, order: Any, signal: Any, row: InternalRow): Boolean = {
    val member = f.place(order, signal, row, this)
    held(heldRows.toInt)
    member
  }

  /**
   * A pre-aggregated slice of the key (a groupBy without policies, see [[Slice]]): progress moves to
   * the slice's latest row, firing what it passed, as rows do. False when the slice is in no window
   * or late (its rows are then counted as late rows).
   */
  def addSlice(slice: Slice): Boolean = {
    lateRow = false
    val entered = family.placeSlice(slice, this)
    // Slices exist without policies only: late rows are dropped.
    if (!entered && lateRow) late += slice.rows
    held(heldRows.toInt + state.keptSliceCount)
    if (slice.last > state.progress) state.progress = slice.last
    settle(flushLate = false)
    entered
  }

  /**
   * A stream's stored row of the key, fed slices, spanning [start, end) and holding `rows` rows in
   * `buffer`: one of its family's shared slices, or a window. Call [[storedRowsRestored]] after the last.
   */
  def restoreStoredRow(start: Long, end: Long, rows: Long, buffer: InternalRow): Unit =
    if (family.storesSharedSlice(start, end)) state.sharedSlices.restore(start, end, buffer, rows)
    else {
      val entry = new WindowEntry(start, end, contents.ofSlice(buffer))
      entry.held = rows
      state.putWindow(entry)
    }

  /** Every stored row of the key was restored. */
  def storedRowsRestored(): Unit = if (state.hasSharedSlices) family.sharedSlicesRestored(this)

  // Once the clock, not the key's own rows, moves the key's time on, its late rows go out even when
  // no window fires: no row of the key may come to flush them.
  override def advanceTo(watermark: Long): Unit = if (watermark > state.progress) {
    val periodic = triggers.passesEarlyTime(state.progress, watermark)
    val openBefore = if (periodic) openWindows() else Nil
    state.progress = watermark
    settle(flushLate = true)
    // Kept rows age with the clock too, even when no window fires (a key that went idle).
    family.afterClose(this)
    if (periodic) outputEarly(openBefore)
  }

  override def finishKey(): Unit = {
    family.endOfInput(this)
    startKey()
  }

  /** The key's event time runs out: every window fires and late groups go out. */
  private[engine] def runOutOfTime(): Unit = {
    state.progress = Long.MaxValue
    settle(flushLate = true)
  }

  // Windows closed by rows have no deadline, and a key's row count must never be forgotten.
  override def nextDeadline: Long = if (!family.closesByTime) Long.MaxValue else {
    val windows =
      if (!state.hasWindows) family.releaseAt(state)
      else if (!family.refires) family.fireAt(state.firstWindow)
      else state.windows(Long.MinValue, true, Long.MaxValue, true)
        .map(w => if (!w.fired || w.changed) family.fireAt(w) else family.dropAt(w)).min
    val early =
      if (triggers.firesInEventTime && state.hasWindows && state.progress != Long.MinValue) triggers.nextEarlyTime(state.progress)
      else Long.MaxValue
    val due = math.min(windows, early)
    if (!state.hasLateGroups || state.progress == Long.MaxValue) due else math.min(due, state.progress + 1)
  }

  override def visitStarts(): Unit = emittedBeforeVisit = windowsEmitted

  override def timeOut(now: Long, timeout: Long): Unit = if (idleDeadline(timeout) <= now) flushIdle()

  override def visitEnded(now: Long): Unit =
    if (heldRows == 0) quietSince = 0L
    else if (quietSince == 0L || windowsEmitted > emittedBeforeVisit) quietSince = now

  override def idleDeadline(timeout: Long): Long =
    if (timeout <= 0 || heldRows == 0 || quietSince == 0L) Long.MaxValue else quietSince + timeout

  /** The timeout passed: late groups go out as `late`, every window's rows as `partial`; the windows stay open. */
  private def flushIdle(): Unit = {
    var group = state.pollLateGroup()
    while (group != null) {
      if (group.held > 0) emit(group, WindowKind.Late)
      flush(group)
      group = state.pollLateGroup()
    }
    family.flushIdle(this)
  }

  /** Outputs what `w` holds (if anything) as `partial` and flushes it, as a count trigger does. */
  def flushPartial(w: WindowEntry): Unit = if (w.held > 0) {
    output(w, WindowKind.Partial)
    flush(w)
  }

  override def forgettable(watermark: Long): Boolean = family.closesByTime &&
    !state.hasLateGroups && state.progress <= watermark && family.holdsNothing(state)

  // ---- what families call while placing a row ----

  /** True when the key's progress reached `time` (a window firing or dropped at `time` is). */
  def reached(time: Long): Boolean =
    state.progress != Long.MinValue && (state.progress == Long.MaxValue || time <= state.progress)

  /** Opens the window [start, end) (or [start, end] for families with inclusive ends). */
  def open(start: Long, end: Long, windowContents: WindowContents): WindowEntry = {
    val w = new WindowEntry(start, end, windowContents)
    state.putWindow(w)
    w
  }

  /**
   * The row joins open window `w` (`append`: `w` holds rows itself, not through the key's kept
   * rows; `completes`: it is the window's last row, a count window's size-th).
   */
  def enter(w: WindowEntry, row: InternalRow, append: Boolean = true, completes: Boolean = false): Unit = {
    if (append) {
      w.contents.append(row)
      w.held += 1
      heldRows += 1
    }
    w.changed = true
    afterRow(w.held, completes)(kind => output(w, kind), flush(w))
    // A fired window just output this row as an update: no re-fire needed for it.
    if (triggers.outputsEveryRow && w.fired) w.changed = false
  }

  /** A slice's rows joined window `w` (its contents merged the slice's buffer). */
  def enteredSlice(w: WindowEntry, slice: Slice): Unit = {
    w.held += slice.rows
    heldRows += slice.rows
    w.changed = true
  }

  /** The row belongs to window [start, end), already dropped: late (kept in its late group under passthrough). */
  def arrivedLate(start: Long, end: Long, row: InternalRow): Unit = {
    lateRow = true
    if (triggers.lateRows.keeps) {
      var group = state.lateGroup(start)
      if (group == null) {
        group = new WindowEntry(start, end, contents.buffered())
        state.putLateGroup(group)
      }
      group.contents.append(row)
      group.held += 1
      heldRows += 1
      triggers.afterLateRow(group.held)(kind => emit(group, kind), flush(group))
    }
  }

  /**
   * What a window outputs right after a row joined it, for every family ([[WindowTriggers.afterRow]]):
   * `final` when the row completes it (after an `update` under emit="update"), else what the first
   * trigger that fires outputs (`partial` and a flush at the count trigger, `update` under emit="update").
   * `held` is the rows it holds that no trigger took yet.
   */
  def afterRow(held: Long, completes: Boolean)(output: UTF8String => Unit, flush: => Unit): Unit =
    triggers.afterRow(held, completes)(output, flush)

  /** A row is found to be in no window at all once it leaves (eKuiper's end-aligned count windows). */
  def countInNoWindow(): Unit = unwindowed += 1

  /** Removes a window without output. */
  def drop(w: WindowEntry): Unit = {
    state.removeWindow(w.start)
    flush(w)
  }

  /** Empties a window's contents (rows output or given up). */
  def flushRows(w: WindowEntry): Unit = flush(w)

  /** Rows kept by the state itself (not by a window) were added or dropped. */
  def keptRowsChanged(delta: Long): Unit = heldRows += delta

  /** Outputs an empty window (emit_empty). */
  def outputEmpty(start: Long, end: Long): Unit = {
    contents.buffered().emit(start, end, WindowKind.Final)
    countEmitted()
  }

  /** Outputs `w` as its family writes it, and counts the output. */
  def output(w: WindowEntry, kind: UTF8String): Unit = {
    family.output(w, kind, this)
    countEmitted()
  }

  private def emit(group: WindowEntry, kind: UTF8String): Unit = {
    group.contents.emit(family.reportedStart(group), group.end, kind)
    countEmitted()
  }

  private def flush(w: WindowEntry): Unit = {
    heldRows -= w.held
    w.held = 0
    w.contents.clear()
  }

  // ---- firing ----

  /** The windows open and not fired yet (before progress passes an emit_every time). */
  private def openWindows(): Seq[WindowEntry] =
    state.windows(Long.MinValue, true, Long.MaxValue, true).filter(!_.fired).toVector

  /**
   * emit_every: progress just passed a multiple of the period, so each window that was open before
   * and is still open outputs an `update` (windows the same move closed output only their `final`;
   * a window the moving row opened has no row before that time, as Flink's continuous trigger).
   */
  private def outputEarly(openBefore: Seq[WindowEntry]): Unit =
    openBefore.foreach(w => if (!w.fired && (state.window(w.start) eq w)) output(w, WindowKind.Update))

  /** Fires and drops what the key's progress reached; late groups go out just before the first firing. */
  private def settle(flushLate: Boolean): Unit = {
    val first = state.firstWindow
    // Windows fire in start order, which is also their fireAt order.
    val due: Seq[WindowEntry] =
      if (first == null || !reached(family.fireAt(first))) Nil
      else if (!family.refires) {
        val ws = new mutable.ArrayBuffer[WindowEntry]
        val it = state.windows(first.start, true, Long.MaxValue, true)
        var scanning = true
        while (scanning && it.hasNext) { val w = it.next(); if (reached(family.fireAt(w))) ws += w else scanning = false }
        ws.toSeq
      } else state.windows(first.start, true, Long.MaxValue, true).takeWhile(w => reached(family.fireAt(w))).toVector
    val fires = due.exists(w => !w.fired || w.changed)
    val flushing = fires || ((flushLate || state.progress == Long.MaxValue) && state.hasLateGroups)
    if (flushing) {
      var group = state.pollLateGroup()
      while (group != null) {
        if (group.held > 0) emit(group, WindowKind.Late)
        flush(group)
        group = state.pollLateGroup()
      }
    }
    due.foreach { w =>
      if (!w.fired) {
        family.beforeFire(w, this)
        if (family.outputsWhenFired(w, triggers)) output(w, WindowKind.Final)
      } else if (w.changed) {
        output(w, WindowKind.Update)
      }
      w.fired = true
      w.changed = false
      if (reached(family.dropAt(w))) {
        state.removeWindow(w.start)
        flush(w)
      }
    }
    if (due.nonEmpty || flushing) family.afterClose(this)
  }
}
