package streamwin.engine

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String


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
  def newRecord(): FamilyRecord = null

  /** How a stream stores the family's records (families that keep one). */
  def recordForm: Option[FamilyRecordForm] = None

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
  def outputsWhenFired(w: WindowEntry, triggers: WindowTriggers): Boolean = w.held > 0 || triggers.emitEmpty

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
