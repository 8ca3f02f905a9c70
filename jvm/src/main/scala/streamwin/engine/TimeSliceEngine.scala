package streamwin.engine

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow

import streamwin.families.TimeWindowSpec

/**
 * Aligned event-time windows (tumbling, hopping) of one key, fed with slice aggregates in event-time
 * order. A window is the union of the slices it covers, so each row is aggregated once (into its
 * slice) however many windows overlap it, and the FIFO combines slices in O(1) amortised merges:
 * the cost per slice is flat in the overlap factor size/step.
 *
 * A window is emitted once event time reaches its end (a slice at or past the end arrives) or at the
 * end of the key's input; like Spark's `window()`, windows holding no row are not emitted.
 *
 * @param emit receives (start, end, kind, aggregate values) of each window, in start order
 */
final class TimeSliceEngine(
    spec: TimeWindowSpec,
    evaluator: AggregateEvaluator,
    emit: (Long, Long, InternalRow) => Unit) extends SliceWindowEngine {

  private val fifo = new FifoAggregator(evaluator)
  private val sliceStarts = new mutable.ArrayDeque[Long]
  // Start of the earliest window not emitted yet: every earlier one has been.
  private var nextWindowStart = Long.MinValue
  private var peak = 0

  /** Most slices held at once for any key so far. */
  def peakBuffered: Int = peak

  def startKey(): Unit = {
    fifo.clear()
    sliceStarts.clear()
    nextWindowStart = Long.MinValue
  }

  /**
   * Adds the aggregate of the slice starting at `start`; slices arrive in ascending order. Returns
   * false, keeping nothing, when the slice falls between windows (hopping with step > size).
   */
  def addSlice(start: Long, buffer: InternalRow): Boolean = {
    if (spec.inGap(start)) return false
    emitWindowsEndingBy(start)
    fifo.push(buffer)
    sliceStarts.append(start)
    if (fifo.size > peak) peak = fifo.size
    true
  }

  /** End of the key's input: every window still open closes. */
  def finishKey(): Unit = {
    emitWindowsEndingBy(Long.MaxValue)
    startKey()
  }

  private def emitWindowsEndingBy(limit: Long): Unit = {
    while (!fifo.isEmpty) {
      val oldest = sliceStarts.head
      val start = math.max(nextWindowStart, spec.firstStartEndingAfter(oldest))
      if (oldest < start) {
        // Every window holding this slice has been emitted.
        fifo.evictOldest()
        sliceStarts.removeHead()
      } else if (start > limit - spec.size) {
        return
      } else {
        // The FIFO holds exactly the slices of [start, start + size): older ones were evicted above,
        // and a newer slice would have closed this window when it arrived.
        emit(start, start + spec.size, fifo.result())
        nextWindowStart = start + spec.step
      }
    }
  }
}
