package streamwin.engine

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String

import streamwin.spec.{IntervalWindowSpec, WindowPolicies}

/**
 * SPL timeInterval panes of one key, fed row by row in arrival order with each row's event time
 * (µs) as the signal. After each row the key's progress (largest event time so far) acts as SPL's
 * watermark: panes whose end it reached trigger — `final` the first time, `update` again whenever
 * late rows changed them — and panes whose end + discard age it reached are dropped. A row whose
 * every pane is gone (or was never created before its discard time) is late.
 *
 * Policies: with `emit_update` each pane a row entered is output as `update` right after the row
 * (then `final` when it triggers); with `late="passthrough"` late rows are aggregated per pane they
 * would have belonged to and output as `late` just before the next panes trigger (KX passthrough).
 *
 * @param emit receives (pane start, pane end, kind, aggregate values), panes in start order
 */
final class IntervalWindowEngine(
    spec: IntervalWindowSpec,
    policies: WindowPolicies,
    evaluator: AggregateEvaluator,
    emit: (Long, Long, UTF8String, InternalRow) => Unit) extends RowWindowEngine {

  private final class Pane(val buffer: InternalRow) extends Serializable {
    var triggered = false
    var changed = false
  }

  private val panes = new mutable.TreeMap[Long, Pane]
  private val lateGroups = new mutable.TreeMap[Long, InternalRow]
  private var progress = Long.MinValue

  override def startKey(): Unit = {
    panes.clear()
    lateGroups.clear()
    progress = Long.MinValue
  }

  override def addRow(order: Any, signal: Any, row: InternalRow): Boolean = {
    if (signal == null) return false // no event time: skipped, not late
    val time = signal.asInstanceOf[Long]
    var inAnyPane = false
    var accepted = false
    spec.paneStartsHolding(time).foreach { start =>
      inAnyPane = true
      val alive = progress == Long.MinValue || start + spec.duration + spec.discardAge > progress
      if (alive) {
        val pane = panes.getOrElseUpdate(start, new Pane(evaluator.newBuffer()))
        evaluator.update(pane.buffer, row)
        pane.changed = true
        accepted = true
        if (policies.emitUpdate) {
          emit(start, start + spec.duration, WindowKind.Update, evaluator.evaluate(pane.buffer))
          countEmitted()
          // A triggered pane needs no re-trigger: this update already reported the late row.
          if (pane.triggered) pane.changed = false
        }
      } else if (policies.latePassthrough) {
        evaluator.update(lateGroups.getOrElseUpdate(start, evaluator.newBuffer()), row)
      }
    }
    held(panes.size + lateGroups.size)
    if (time > progress) progress = time
    trigger(progress)
    if (!accepted && inAnyPane) {
      if (policies.latePassthrough) passed += 1 else late += 1
    }
    accepted
  }

  override def finishKey(): Unit = {
    // A batch input is a finished replay: event time runs out, every pane triggers.
    flushLate()
    trigger(Long.MaxValue)
    startKey()
  }

  override def advanceTo(watermark: Long): Unit = if (watermark > progress) {
    progress = watermark
    flushLate()
    trigger(progress)
  }

  // A pane next triggers at its end (first time, or again after a late change), and goes at end + discard age.
  override def nextDeadline: Long =
    if (lateGroups.nonEmpty && progress != Long.MinValue) progress + 1
    else panes.iterator.map { case (start, pane) =>
      val end = start + spec.duration
      if (!pane.triggered || pane.changed) end else end + spec.discardAge
    }.minOption.getOrElse(Long.MaxValue)

  override def forgettable(watermark: Long): Boolean = panes.isEmpty && lateGroups.isEmpty && progress <= watermark

  private def flushLate(): Unit = {
    lateGroups.foreach { case (start, buffer) =>
      emit(start, start + spec.duration, WindowKind.Late, evaluator.evaluate(buffer))
      countEmitted()
    }
    lateGroups.clear()
  }

  private def trigger(watermark: Long): Unit = {
    // Panes are ordered by start, so by end: nothing to do until the earliest end is reached (late
    // updates only ever touch panes at or before it). Keeps the common row allocation-free.
    if (panes.isEmpty || panes.firstKey + spec.duration > watermark) return
    if (lateGroups.nonEmpty && panes.exists { case (s, p) => p.changed && s + spec.duration <= watermark }) flushLate()
    val it = panes.iterator
    val gone = mutable.ArrayBuffer.empty[Long]
    var scanning = true
    while (scanning && it.hasNext) {
      val (start, pane) = it.next()
      val end = start + spec.duration
      if (end > watermark) scanning = false
      else {
        if (pane.changed) {
          emit(start, end, if (pane.triggered) WindowKind.Update else WindowKind.Final, evaluator.evaluate(pane.buffer))
          countEmitted()
          pane.triggered = true
          pane.changed = false
        }
        if (watermark == Long.MaxValue || end + spec.discardAge <= watermark) gone += start
      }
    }
    gone.foreach(panes.remove)
  }
}
