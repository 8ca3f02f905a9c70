package streamwin.engine

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow

/**
 * The aggregate of a queue of buffers, with push at the back and eviction at the front in O(1)
 * amortised merges ("two stacks"): the back stack keeps one running aggregate of its elements; the
 * front stack keeps, for each element, the aggregate from it to the end of the front stack. Works
 * for every aggregate function, invertible or not, and keeps arrival order for order-sensitive ones
 * (first, last, collect_list) because a merge always puts the older side first.
 */
final class FifoAggregator(evaluator: AggregateEvaluator) {
  private var back = new ArrayBuffer[InternalRow]
  private var backAggregate: InternalRow = evaluator.newBuffer()
  // front(i) aggregates the i-th oldest… newest element of the front stack; front.last is the oldest.
  private var front = new ArrayBuffer[InternalRow]
  private val scratch: InternalRow = evaluator.newBuffer()

  def size: Int = front.size + back.size
  def isEmpty: Boolean = size == 0

  /** Adds a buffer as the newest element; the FIFO owns it from now on. */
  def push(buffer: InternalRow): Unit = {
    back += buffer
    evaluator.merge(backAggregate, buffer)
  }

  /** Drops the oldest element. */
  def evictOldest(): Unit = {
    if (front.isEmpty) flip()
    front.remove(front.size - 1)
  }

  def clear(): Unit = {
    front.clear()
    back.clear()
    evaluator.initialize(backAggregate)
  }

  /** The aggregate of all elements, as one value per function. */
  def result(): InternalRow = evaluator.evaluate(resultBuffer())

  /** The aggregation buffer of all elements (owned by the FIFO: read it before the next change). */
  def resultBuffer(): InternalRow = {
    if (front.isEmpty) backAggregate
    else if (back.isEmpty) front.last
    else {
      evaluator.initialize(scratch)
      evaluator.merge(scratch, front.last)
      evaluator.merge(scratch, backAggregate)
      scratch
    }
  }

  /** The back stack, the front stack and the back stack's aggregate (a stream stores them, see [[WindowStateCodec]]). */
  def buffers: (collection.Seq[InternalRow], collection.Seq[InternalRow], InternalRow) = (back, front, backAggregate)

  /** Restores what [[buffers]] gave into this (empty) FIFO, which owns them from now on. */
  def restore(backBuffers: ArrayBuffer[InternalRow], frontBuffers: ArrayBuffer[InternalRow], aggregate: InternalRow): Unit = {
    back = backBuffers
    front = frontBuffers
    backAggregate = aggregate
  }

  private def flip(): Unit = {
    // Newest first: each element absorbs the aggregate of everything newer than it.
    var i = back.size - 1
    var newer: InternalRow = null
    while (i >= 0) {
      val element = back(i)
      if (newer != null) evaluator.merge(element, newer)
      front += element
      newer = element
      i -= 1
    }
    back.clear()
    backAggregate = evaluator.newBuffer()
  }
}
