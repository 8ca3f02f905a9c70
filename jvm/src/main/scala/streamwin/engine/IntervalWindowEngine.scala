package streamwin.engine

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String

import streamwin.spec.IntervalWindowSpec

/**
 * SPL timeInterval panes of one key, fed row by row in arrival order with each row's event time
 * (µs) as the signal. After each row the key's progress (largest event time so far) acts as SPL's
 * watermark: panes whose end it reached trigger — `final` the first time, `update` again whenever
 * late rows changed them — and panes whose end + discard age it reached are dropped. A row whose
 * every pane is gone (or was never created before its discard time) is late.
 *
 * @param emit receives (pane start, pane end, kind, aggregate values), panes in start order
 */
final class IntervalWindowEngine(
    spec: IntervalWindowSpec,
    evaluator: AggregateEvaluator,
    emit: (Long, Long, UTF8String, InternalRow) => Unit) extends RowWindowEngine {

  private final class Pane(val buffer: InternalRow) {
    var triggered = false
    var changed = false
  }

  private val panes = new mutable.TreeMap[Long, Pane]
  private var progress = Long.MinValue

  override def startKey(): Unit = {
    panes.clear()
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
      }
    }
    held(panes.size)
    if (time > progress) progress = time
    trigger(progress)
    if (!accepted && inAnyPane) late += 1
    accepted
  }

  override def finishKey(): Unit = {
    // A batch input is a finished replay: event time runs out, every pane triggers.
    trigger(Long.MaxValue)
    startKey()
  }

  private def trigger(watermark: Long): Unit = {
    // Panes are ordered by start, so by end: nothing to do until the earliest end is reached (late
    // updates only ever touch panes at or before it). Keeps the common row allocation-free.
    if (panes.isEmpty || panes.firstKey + spec.duration > watermark) return
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
