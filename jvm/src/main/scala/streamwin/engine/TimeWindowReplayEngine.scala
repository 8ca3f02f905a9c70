package streamwin.engine

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String

import streamwin.spec.{TimeWindowSpec, WindowPolicies}

/**
 * Aligned time windows (tumbling, hopping, timer) of one key under the event-time policies, fed
 * row by row in arrival order (`order_by`, or event time) with each row's event time (µs) as the
 * signal. This is the model of seeds 000 (KX) and 002 (Quix):
 *
 *  - progress is the largest event time seen so far; a window closes when progress reaches
 *    end + lateness and is then output as `final` (with `emit_empty`, preceded by the empty windows
 *    since the key's previous closed window);
 *  - a row whose windows are all closed is late: dropped and counted, or (passthrough) buffered per
 *    window it would have belonged to and output as `late` just before the next windows close;
 *  - `emit_update` outputs each window a row entered, right after that row, as `update`;
 *  - `count_trigger` outputs a window's (or a late group's) buffered rows as `partial` (`late`)
 *    once they reach N, and clears them; the remainder is the `final` output.
 *
 * At the end of a key's input (a batch replay's teardown) late groups and then every open window
 * are output.
 *
 * @param newContents a fresh, empty window buffer: an aggregate (groupBy) or the member rows (select)
 */
final class TimeWindowReplayEngine(
    spec: TimeWindowSpec,
    policies: WindowPolicies,
    newContents: () => WindowContents) extends RowWindowEngine {

  private final class Buffered(val contents: WindowContents) {
    var rows = 0L
    def add(row: InternalRow): Unit = { contents.append(row); rows += 1 }
  }

  // Open windows and late groups by window start (so by end: windows share one length).
  private val open = new java.util.TreeMap[java.lang.Long, Buffered]
  private val lateGroups = new java.util.TreeMap[java.lang.Long, Buffered]
  private var progress = Long.MinValue
  private var lastClosedStart: Option[Long] = None
  private var bufferedRows = 0L

  override def startKey(): Unit = {
    open.clear()
    lateGroups.clear()
    progress = Long.MinValue
    lastClosedStart = None
    bufferedRows = 0L
  }

  private def isClosed(start: Long): Boolean =
    progress != Long.MinValue && start + spec.size + policies.lateness <= progress

  override def addRow(order: Any, signal: Any, row: InternalRow): Boolean = {
    if (signal == null) return false // no event time: skipped
    val time = signal.asInstanceOf[Long]
    var entered = false
    var wasLate = false
    val starts = spec.windowStartsHolding(time)
    var updates: List[Long] = Nil
    while (starts.hasNext) {
      val start = starts.next()
      if (isClosed(start)) {
        wasLate = true
        if (policies.latePassthrough) {
          val group = buffer(lateGroups, start)
          group.add(row)
          if (policies.countTrigger > 0 && group.rows >= policies.countTrigger) flush(lateGroups, start, WindowKind.Late)
        }
      } else {
        entered = true
        val window = buffer(open, start)
        window.add(row)
        if (policies.countTrigger > 0 && window.rows >= policies.countTrigger) flush(open, start, WindowKind.Partial)
        else if (policies.emitUpdate) updates = start :: updates
      }
    }
    held(bufferedRows.toInt)
    updates.reverse.foreach { start =>
      open.get(start).contents.emit(start, start + spec.size, WindowKind.Update)
      countEmitted()
    }
    if (time > progress) {
      progress = time
      closeUntil(progress)
    }
    if (!entered && wasLate) {
      if (policies.latePassthrough) passed += 1 else late += 1
    }
    entered
  }

  override def finishKey(): Unit = {
    // A batch input is a finished replay: event time runs out and every window closes.
    closeUntil(Long.MaxValue)
    startKey()
  }

  private def buffer(map: java.util.TreeMap[java.lang.Long, Buffered], start: Long): Buffered = {
    bufferedRows += 1
    val existing = map.get(start)
    if (existing != null) existing
    else {
      val created = new Buffered(newContents())
      map.put(start, created)
      created
    }
  }

  /** Outputs a buffer's rows with `kind` and empties it (count trigger, late group). */
  private def flush(map: java.util.TreeMap[java.lang.Long, Buffered], start: Long, kind: UTF8String): Unit = {
    val b = map.get(start)
    b.contents.emit(start, start + spec.size, kind)
    countEmitted()
    bufferedRows -= b.rows
    b.rows = 0
    b.contents.clear()
  }

  /** Closes every window whose end + lateness `watermark` reached; late rows go out first (KX). */
  private def closeUntil(watermark: Long): Unit = {
    val closing = !open.isEmpty && (watermark == Long.MaxValue ||
      open.firstKey + spec.size + policies.lateness <= watermark)
    if (!closing && !(watermark == Long.MaxValue && !lateGroups.isEmpty)) return
    while (!lateGroups.isEmpty) {
      val start = lateGroups.firstKey
      if (lateGroups.get(start).rows > 0) flush(lateGroups, start, WindowKind.Late)
      lateGroups.remove(start)
    }
    while (!open.isEmpty && (watermark == Long.MaxValue || open.firstKey + spec.size + policies.lateness <= watermark)) {
      val start: Long = open.firstKey
      if (policies.emitEmpty) lastClosedStart.foreach { previous =>
        var empty = previous + spec.step
        while (empty < start) {
          newContents().emit(empty, empty + spec.size, WindowKind.Final)
          countEmitted()
          empty += spec.step
        }
      }
      val window = open.remove(start)
      // After count-trigger flushes the remainder may be empty: it is a window with no rows.
      if (window.rows > 0 || policies.emitEmpty) {
        window.contents.emit(start, start + spec.size, WindowKind.Final)
        countEmitted()
      }
      bufferedRows -= window.rows
      lastClosedStart = Some(start)
    }
  }
}
