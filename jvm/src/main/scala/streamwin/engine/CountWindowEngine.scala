package streamwin.engine

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String

import streamwin.spec.CountWindowSpec

/**
 * What a count window holds while it is open: an aggregate (groupBy) or the rows themselves
 * (select, which tags every member row with its window).
 */
trait WindowContents {
  def append(row: InternalRow): Unit
  def evictOldest(): Unit
  def clear(): Unit
  /** Outputs the window made of every row currently held. */
  def emit(start: Any, end: Any, kind: UTF8String): Unit
}

/**
 * Start-aligned count windows of one key (KX `.qsp.window.count[size; frequency]`, Quix
 * tumbling/hopping/sliding count windows, SPL `count(N)`): in arrival order, windows start at rows
 * 0, step, 2·step, … and hold `size` rows. A window is emitted as `final` when its last row arrives;
 * windows still incomplete at the end of the input are emitted as `partial` (KX teardown).
 * The engine retains only the rows of windows not yet complete: at most `size` rows.
 */
final class CountWindowEngine(spec: CountWindowSpec, contents: WindowContents) {
  private var rows = 0L
  private var oldestRetained = 0L
  // Arrival-order value of each retained row: the window's start and end are its first and last.
  private val orders = new mutable.ArrayDeque[Any]
  private var peak = 0
  private var emitted = 0L

  def peakBuffered: Int = peak
  def windowsEmitted: Long = emitted

  def startKey(): Unit = {
    rows = 0L
    oldestRetained = 0L
    orders.clear()
    contents.clear()
  }

  def addRow(order: Any, row: InternalRow): Unit = {
    contents.append(row)
    orders.append(order)
    rows += 1
    if (orders.size > peak) peak = orders.size
    if (rows >= spec.size && (rows - spec.size) % spec.step == 0) {
      // The retained rows are exactly the window starting at row rows - size.
      contents.emit(orders.head, orders.last, WindowKind.Final)
      emitted += 1
    }
    evictBefore(firstIncompleteStart)
  }

  /** End of the key's input: each incomplete window is emitted as partial, oldest first. */
  def finishKey(): Unit = {
    var start = firstIncompleteStart
    while (start < rows) {
      evictBefore(start)
      contents.emit(orders.head, orders.last, WindowKind.Partial)
      emitted += 1
      start += spec.step
    }
    startKey()
  }

  /** Index of the first row of the oldest window that has not completed yet. */
  private def firstIncompleteStart: Long =
    if (rows < spec.size) 0L else ((rows - spec.size) / spec.step + 1) * spec.step

  private def evictBefore(index: Long): Unit = {
    while (oldestRetained < index && orders.nonEmpty) {
      contents.evictOldest()
      orders.removeHead()
      oldestRetained += 1
    }
  }
}

/** Count-window contents for groupBy: overlapping windows share one FIFO of per-row aggregates. */
final class AggregatedContents(evaluator: AggregateEvaluator, out: (Any, Any, UTF8String, InternalRow) => Unit)
    extends WindowContents {
  private val fifo = new FifoAggregator(evaluator)
  override def append(row: InternalRow): Unit = {
    val buffer = evaluator.newBuffer()
    evaluator.update(buffer, row)
    fifo.push(buffer)
  }
  override def evictOldest(): Unit = fifo.evictOldest()
  override def clear(): Unit = fifo.clear()
  override def emit(start: Any, end: Any, kind: UTF8String): Unit = out(start, end, kind, fifo.result())
}

/**
 * Count-window contents for groupBy when windows do not overlap (step == size): one running buffer,
 * updated in place, is all that is needed.
 */
final class RunningContents(evaluator: AggregateEvaluator, out: (Any, Any, UTF8String, InternalRow) => Unit)
    extends WindowContents {
  private val buffer = evaluator.newBuffer()
  private var held = 0L
  override def append(row: InternalRow): Unit = { evaluator.update(buffer, row); held += 1 }
  override def evictOldest(): Unit = {
    // Disjoint windows are only ever evicted whole, right after they are emitted.
    held -= 1
    if (held == 0) evaluator.initialize(buffer)
  }
  override def clear(): Unit = { held = 0; evaluator.initialize(buffer) }
  override def emit(start: Any, end: Any, kind: UTF8String): Unit = out(start, end, kind, evaluator.evaluate(buffer))
}

/** Count-window contents for select: the member rows, each output once per window holding it. */
final class TaggedContents(out: (InternalRow, Any, Any, UTF8String) => Unit) extends WindowContents {
  private val held = new mutable.ArrayDeque[InternalRow]
  override def append(row: InternalRow): Unit = held.append(row.copy())
  override def evictOldest(): Unit = held.removeHead()
  override def clear(): Unit = held.clear()
  override def emit(start: Any, end: Any, kind: UTF8String): Unit = held.foreach(out(_, start, end, kind))
}
