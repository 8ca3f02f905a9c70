package streamwin.engine

/**
 * A map from event times (µs) to values, sorted by time, for what a key keeps per timestamp (the rows of
 * sliding windows). Times mostly come in order and leave oldest first, so entries live in blocks of sorted
 * arrays: an append after the newest time and a removal of the oldest are O(1), a time out of order
 * shifts at most one block's entries (a full block splits in two), and a lookup is two binary searches.
 * A `java.util.TreeMap` paid a tree node, rebalancing and boxed keys for every timestamp (a seventh of a
 * per-event sliding stream's time, profiled).
 *
 * Iterators read the map as it is: change it only after they are done. Not thread-safe.
 */
final class SortedTimeMap[V <: AnyRef] extends Serializable {
  import SortedTimeMap.BlockCapacity

  // Entries [first, end) of `times` and `values` are live, ascending by time; a block is never empty.
  private final class Block extends Serializable {
    val times = new Array[Long](BlockCapacity)
    val values = new Array[AnyRef](BlockCapacity)
    var first = 0
    var end = 0
    def size: Int = end - first
    def firstTime: Long = times(first)
    def lastTime: Long = times(end - 1)
    /** The position of `time` if present, else -(insertion point) - 1, as java.util.Arrays.binarySearch. */
    def search(time: Long): Int = java.util.Arrays.binarySearch(times, first, end, time)
  }

  // Blocks [lo, hi) of `blocks` are live, ascending by time.
  private var blocks = new Array[Block](4)
  private var lo = 0
  private var hi = 0
  private var count = 0

  def size: Int = count
  def isEmpty: Boolean = count == 0
  def nonEmpty: Boolean = count > 0

  /** The oldest time (the map must not be empty). */
  def firstTime: Long = { requireEntries(); blocks(lo).firstTime }
  /** The newest time (the map must not be empty). */
  def lastTime: Long = { requireEntries(); blocks(hi - 1).lastTime }

  private def requireEntries(): Unit = if (count == 0) throw new NoSuchElementException("an empty SortedTimeMap")

  /** The value at `time`, or null. */
  def get(time: Long): V = {
    if (count == 0) return null.asInstanceOf[V]
    val b = blocks(blockFor(time))
    val at = b.search(time)
    if (at >= 0) b.values(at).asInstanceOf[V] else null.asInstanceOf[V]
  }

  /** The value at `time`, made by `make` and added first if there is none. */
  def getOrElseUpdate(time: Long, make: => V): V = {
    if (count > 0) {
      val last = blocks(hi - 1)
      val newest = last.lastTime
      if (time == newest) return last.values(last.end - 1).asInstanceOf[V]
      if (time < newest) {
        val bi = blockFor(time)
        val at = blocks(bi).search(time)
        if (at >= 0) return blocks(bi).values(at).asInstanceOf[V]
        val v = make
        insertAt(bi, -at - 1, time, v)
        return v
      }
    }
    val v = make
    appendNewest(time, v)
    v
  }

  /** Sets the value at `time` (replacing any). */
  def put(time: Long, value: V): Unit = {
    if (count == 0 || time > lastTime) appendNewest(time, value)
    else {
      val bi = blockFor(time)
      val at = blocks(bi).search(time)
      if (at >= 0) blocks(bi).values(at) = value else insertAt(bi, -at - 1, time, value)
    }
  }

  /** Removes the entry of the oldest time and returns its value (the map must not be empty). */
  def removeFirst(): V = {
    requireEntries()
    val b = blocks(lo)
    val v = b.values(b.first).asInstanceOf[V]
    b.values(b.first) = null
    b.first += 1
    count -= 1
    if (b.size == 0) {
      blocks(lo) = null
      lo += 1
      if (lo == hi) { lo = 0; hi = 0 }
    }
    v
  }

  /** The entries with from <= time <= to, by ascending time. */
  def range(from: Long, to: Long): Iterator[(Long, V)] =
    if (count == 0 || from > to) Iterator.empty
    else {
      val bi = blockFor(from)
      val at = blocks(bi).search(from)
      new Entries(bi, if (at >= 0) at else -at - 1, to)
    }

  /** Every entry, by ascending time. */
  def iterator: Iterator[(Long, V)] = if (count == 0) Iterator.empty else new Entries(lo, blocks(lo).first, Long.MaxValue)

  /** The values with from <= time <= to, by ascending time. */
  def valuesIn(from: Long, to: Long): Iterator[V] = range(from, to).map(_._2)

  def foreachValue(f: V => Unit): Unit = {
    var bi = lo
    while (bi < hi) {
      val b = blocks(bi)
      var i = b.first
      while (i < b.end) { f(b.values(i).asInstanceOf[V]); i += 1 }
      bi += 1
    }
  }

  def clear(): Unit = {
    java.util.Arrays.fill(blocks.asInstanceOf[Array[AnyRef]], null)
    if (blocks.length > 64) blocks = new Array[Block](4)
    lo = 0
    hi = 0
    count = 0
  }

  private final class Entries(var bi: Int, var at: Int, to: Long) extends Iterator[(Long, V)] {
    private def settle(): Unit = while (bi < hi && at >= blocks(bi).end) { bi += 1; if (bi < hi) at = blocks(bi).first }
    settle()
    override def hasNext: Boolean = bi < hi && blocks(bi).times(at) <= to
    override def next(): (Long, V) = {
      if (!hasNext) throw new NoSuchElementException("no more entries")
      val b = blocks(bi)
      val entry = (b.times(at), b.values(at).asInstanceOf[V])
      at += 1
      settle()
      entry
    }
  }

  // The last block whose first time is <= time, or the first block when time precedes them all.
  private def blockFor(time: Long): Int = {
    var l = lo
    var h = hi - 1
    while (l < h) {
      val m = (l + h + 1) >>> 1
      if (blocks(m).firstTime <= time) l = m else h = m - 1
    }
    l
  }

  private def appendNewest(time: Long, value: AnyRef): Unit = {
    if (hi == lo || blocks(hi - 1).end == BlockCapacity) insertBlock(hi, new Block)
    val b = blocks(hi - 1)
    b.times(b.end) = time
    b.values(b.end) = value
    b.end += 1
    count += 1
  }

  // Inserts (time, value) at position `at` of block `bi` (the entries from `at` on come after `time`).
  private def insertAt(bi: Int, at: Int, time: Long, value: AnyRef): Unit = {
    val b = blocks(bi)
    if (b.end < BlockCapacity) {
      System.arraycopy(b.times, at, b.times, at + 1, b.end - at)
      System.arraycopy(b.values, at, b.values, at + 1, b.end - at)
      b.times(at) = time
      b.values(at) = value
      b.end += 1
    } else if (b.first > 0) {
      System.arraycopy(b.times, b.first, b.times, b.first - 1, at - b.first)
      System.arraycopy(b.values, b.first, b.values, b.first - 1, at - b.first)
      b.first -= 1
      b.times(at - 1) = time
      b.values(at - 1) = value
    } else {
      // Full: its upper half moves to a new block after it.
      val half = BlockCapacity / 2
      val upper = new Block
      System.arraycopy(b.times, half, upper.times, 0, BlockCapacity - half)
      System.arraycopy(b.values, half, upper.values, 0, BlockCapacity - half)
      java.util.Arrays.fill(b.values, half, BlockCapacity, null)
      upper.end = BlockCapacity - half
      b.end = half
      val upperIndex = insertBlock(bi + 1, upper) // moves the blocks' indices when it compacts them
      count -= 1 // counted again below
      if (at <= half) insertAt(upperIndex - 1, at, time, value) else insertAt(upperIndex, at - half, time, value)
    }
    count += 1
  }

  /** Inserts `block` before the block at index `j` (at the end when j == hi); returns its index. */
  private def insertBlock(j: Int, block: Block): Int = {
    var index = j
    if (hi == blocks.length) {
      val live = hi - lo
      val target = if (live * 2 <= blocks.length) blocks else new Array[Block](blocks.length * 2)
      System.arraycopy(blocks, lo, target, 0, live)
      if (target eq blocks) java.util.Arrays.fill(blocks.asInstanceOf[Array[AnyRef]], live, hi, null)
      blocks = target
      index -= lo
      lo = 0
      hi = live
    }
    System.arraycopy(blocks, index, blocks, index + 1, hi - index)
    blocks(index) = block
    hi += 1
    index
  }
}

object SortedTimeMap {
  /** Entries per block: an out-of-order time shifts at most this many. */
  private[engine] val BlockCapacity = 128
}
