package streamwin.engine

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * A slice: rows of one key pre-aggregated into one buffer before they reach the window operator
 * (Spark's partial aggregation per (key, slice start), map-side), so that each row is aggregated once
 * however many windows hold it. A host reuses one Slice object and fills it per slice.
 */
final class Slice {
  /**
   * Slices reach the key in ascending time order (batch). A stream's slices ascend within a
   * micro-batch only: the next one may bring older slices, which may be late.
   */
  var inOrder: Boolean = true
  /** The slice's start (its grouping value): aligned windows place the slice by it. */
  var time: Long = 0L
  /** Event time of the slice's earliest and latest row, as far as the family needs them ([[SliceBounds]]). */
  var first: Long = 0L
  var last: Long = 0L
  /** How far the slice's rows reach (sessions: the latest row time + its gap). */
  var reach: Long = 0L
  /** The aggregation buffer (the operator takes it over). */
  var buffer: InternalRow = _
  /** How many input rows it holds. */
  var rows: Long = 0L
}

/**
 * How a family reads the bounds of a slice from its start and buffer: by default a slice is one
 * instant (its start); sessions read their hidden min/max time or max gap (see
 * [[streamwin.spec.WindowSpec.sliceBounds]]).
 */
trait SliceBounds extends Serializable {
  def fill(slice: Slice): Unit
}

object SliceBounds {
  /** The slice is placed by its start alone. */
  object AtStart extends SliceBounds {
    override def fill(slice: Slice): Unit = {
      slice.first = slice.time
      slice.last = slice.time
      slice.reach = slice.time
    }
  }
}

/**
 * The slices a key keeps for windows that share them (hopping, cumulate; per-event sliding windows use
 * [[TimestampSlices]]), in time order:
 * a FIFO aggregate of every slice but the newest, which is held apart. Windows fire in start order, and
 * a window fires once a slice at or past its end arrived: then every slice in the FIFO precedes its
 * end, and only the newest may lie past it. So a window's aggregate is the FIFO, after evicting the
 * slices before its start, plus the newest slice when the window holds it: O(1) amortised merges per
 * slice whatever the number of windows sharing it.
 */
final class KeptSlices(evaluator: AggregateEvaluator) {
  private val fifo = new FifoAggregator(evaluator)
  private var times = new RingQueue[Long]
  private var newestTime = 0L
  private var newest: InternalRow = null
  private val scratch = evaluator.newBuffer()

  def size: Int = fifo.size + (if (newest == null) 0 else 1)
  def isEmpty: Boolean = size == 0
  /** The newest slice's time (Long.MinValue when none is kept). */
  def lastTime: Long = if (newest == null) Long.MinValue else newestTime

  /** Keeps the slice at `time` (the newest so far; the queue owns `buffer` from now on). */
  def keep(time: Long, buffer: InternalRow): Unit = {
    if (newest != null) {
      fifo.push(newest)
      times.append(newestTime)
    }
    newestTime = time
    newest = buffer
  }

  /** The aggregate of the kept slices with from <= time <= to, once every slice before `from` is evicted for good. */
  def aggregate(from: Long, to: Long): InternalRow = {
    dropBefore(from)
    if (newest == null || newestTime > to) fifo.result()
    else if (fifo.isEmpty) evaluator.evaluate(newest)
    else {
      evaluator.initialize(scratch)
      evaluator.merge(scratch, fifo.resultBuffer())
      evaluator.merge(scratch, newest)
      evaluator.evaluate(scratch)
    }
  }

  /** Drops the slices before `time`; returns how many. */
  def dropBefore(time: Long): Int = {
    var dropped = 0
    while (times.nonEmpty && times.head < time) {
      fifo.evictOldest()
      times.removeHead()
      dropped += 1
    }
    if (times.isEmpty && newest != null && newestTime < time) {
      newest = null
      dropped += 1
    }
    dropped
  }

  def clear(): Unit = {
    fifo.clear()
    times.clear()
    newest = null
  }
}

/**
 * The slices a stream keeps for overlapping windows fed slices (hopping): one buffer per slice start,
 * shared by every open window holding it, as Flink's slicing window operators keep them. A stream
 * stores each slice as a state row of its own, written when a micro-batch adds to it and removed once
 * no open window holds it, so a micro-batch writes a row per slice it brings rather than one per window
 * its slices join. Slices may come out of time order (a micro-batch may bring older rows); a window is
 * assembled from its slices when it fires, merged in time order.
 */
final class SharedSlices(evaluator: AggregateEvaluator) {
  /** One slice: its buffer (owned), its input row count, and whether it changed since it was read back. */
  final class Entry(val start: Long, val end: Long, val buffer: InternalRow, var rows: Long, var changed: Boolean)

  private val slices = new java.util.TreeMap[java.lang.Long, Entry]

  // Windows fire in start order, so they are assembled by a sweep over copies of the slices in
  // [[TimestampSlices]]' blocks (a window long): two merges per window instead of one per slice it holds,
  // in an association fixed by the window's range alone, however micro-batches cut the stream. A slice
  // the sweep copied that changes, or a window that starts before the previous one, makes it start again.
  private var sweep: TimestampSlices = null
  private var sweptFrom = Long.MinValue

  def size: Int = slices.size
  def isEmpty: Boolean = slices.isEmpty

  /** A slice [start, end) read back from its state row. */
  def restore(start: Long, end: Long, buffer: InternalRow, rows: Long): Unit = {
    changing(start)
    slices.put(start, new Entry(start, end, buffer, rows, changed = false))
  }

  private def changing(start: Long): Unit =
    if (sweep != null && start >= sweptFrom && start <= sweep.lastTime) sweep = null

  /** Adds a slice's rows: merged into the slice [start, end) kept, or kept (the slices own `buffer` then). */
  def add(start: Long, end: Long, buffer: InternalRow, rows: Long): Unit = {
    changing(start)
    val kept = slices.get(start)
    if (kept == null) slices.put(start, new Entry(start, end, buffer, rows, changed = true))
    else {
      evaluator.merge(kept.buffer, buffer)
      kept.rows += rows
      kept.changed = true
    }
  }

  /**
   * The aggregate of the slices with from <= start <= to, merged in time order, for windows no longer
   * than `blockLength` whose starts are `blockOffset` plus multiples of it or lie between.
   */
  def aggregate(from: Long, to: Long, blockLength: Long, blockOffset: Long): InternalRow = {
    if (sweep == null || sweep.blockLength != blockLength || sweep.blockOffset != blockOffset || from < sweptFrom) {
      sweep = new TimestampSlices(evaluator, blockLength, blockOffset)
    }
    sweptFrom = from
    val next = if (sweep.isEmpty) from else math.max(sweep.lastTime + 1, from)
    if (next <= to) {
      val it = slices.subMap(next, true, to, true).values().iterator()
      while (it.hasNext) {
        val e = it.next()
        // A copy: the sweep folds its buffers in place.
        val copy = evaluator.newBuffer()
        evaluator.merge(copy, e.buffer)
        sweep.keep(e.start, copy)
      }
    }
    sweep.aggregate(from, to)
  }

  /** Drops the slices before `time` (no open window holds them; a stream removes their rows as it saves). */
  def dropBefore(time: Long): Unit = slices.headMap(time, false).clear()

  /** The slices, by ascending start. */
  def entries: Iterator[Entry] = {
    val it = slices.values().iterator()
    new Iterator[Entry] {
      override def hasNext: Boolean = it.hasNext
      override def next(): Entry = it.next()
    }
  }

  def clear(): Unit = {
    slices.clear()
    sweep = null
  }
}

/**
 * Per-event sliding windows' aggregates over buffers kept one per timestamp, in time order: a batch's
 * slices, or the buffers a stream makes of its kept rows ([[KeptRowsSweep]]). A window's aggregate is
 * merged in one order fixed by the buffers in its range alone, never by the windows output before it:
 * a FIFO's association depends on when it flipped, so a batch and a stream (which makes its buffers again
 * after each stored micro-batch) gave floating-point sums that differed in their last bits.
 *
 * Time is cut into blocks of `blockLength`, a window's length, from `blockOffset`, so that a window
 * [from, to] spans two blocks. It merges, in time order: the suffix of its first block from `from` (folded
 * from the block's end, kept per timestamp once made), and the prefix of its second block up to `to`
 * (folded from the block's start, kept per timestamp). Two merges per window whatever its number of
 * timestamps, and up to two buffers per timestamp. (Windows longer than two blocks merge the blocks
 * between, in order; one within a block is its block's prefix when it starts with the block, as aligned
 * windows do, and merges its buffers one by one otherwise.) Windows come in order: `from` and `to` never
 * go back.
 */
final class TimestampSlices(evaluator: AggregateEvaluator, val blockLength: Long, val blockOffset: Long = 0L) {
  require(blockLength > 0, "blockLength must be positive")

  private def blockOf(time: Long): Long = Math.floorDiv(time - blockOffset, blockLength)

  private final class Entry(val time: Long, val buffer: InternalRow, val prefix: InternalRow) {
    // The buffer itself, once folded with the newer ones (see makeSuffixes).
    var suffix: InternalRow = _
  }
  private final class Block(val index: Long) {
    val entries = new scala.collection.mutable.ArrayBuffer[Entry]
    // Entries before `first` were dropped: they precede every window still to come.
    var first = 0
    var suffixesMade = false
    def live: Int = entries.size - first
  }

  private val blocks = new RingQueue[Block]
  private var count = 0
  private val scratch = evaluator.newBuffer()

  def size: Int = count
  def isEmpty: Boolean = count == 0
  /** The newest timestamp kept (Long.MinValue when none is). */
  def lastTime: Long = if (blocks.isEmpty) Long.MinValue else blocks.last.entries.last.time

  /** Keeps the buffer of timestamp `time`, after every timestamp kept so far; the slices own `buffer` from now on. */
  def keep(time: Long, buffer: InternalRow): Unit = {
    require(time > lastTime, s"timestamp $time is not after the newest kept one, $lastTime")
    val index = blockOf(time)
    if (blocks.isEmpty || blocks.last.index != index) blocks.append(new Block(index))
    val block = blocks.last
    val prefix =
      if (block.entries.isEmpty) buffer
      else {
        val p = evaluator.newBuffer()
        evaluator.merge(p, block.entries.last.prefix)
        evaluator.merge(p, buffer)
        p
      }
    block.entries += new Entry(time, buffer, prefix)
    count += 1
  }

  /** Drops the timestamps before `time`; returns how many. */
  def dropBefore(time: Long): Int = {
    var dropped = 0
    var scanning = true
    while (scanning && blocks.nonEmpty) {
      val block = blocks.head
      while (block.first < block.entries.size && block.entries(block.first).time < time) {
        block.first += 1
        dropped += 1
      }
      if (block.live == 0) blocks.removeHead() else scanning = false
    }
    count -= dropped
    dropped
  }

  /**
   * The aggregate of the kept timestamps with from <= time <= to, once every timestamp before `from` is
   * dropped for good. Every timestamp up to `to` must be kept already.
   */
  def aggregate(from: Long, to: Long): InternalRow = {
    dropBefore(from)
    val firstIndex = blockOf(from)
    val lastIndex = blockOf(to)
    evaluator.initialize(scratch)
    val it = blocks.iterator
    var going = true
    while (going && it.hasNext) {
      val block = it.next()
      if (block.index > lastIndex) going = false
      else if (block.index == lastIndex) {
        if (firstIndex == lastIndex && from > block.index * blockLength + blockOffset) {
          // A window within one block that starts after the block does (only when it is shorter than a
          // block): its buffers one by one. (One that starts with the block is its prefix, below.)
          var i = block.first
          while (i < block.entries.size && block.entries(i).time <= to) {
            evaluator.merge(scratch, block.entries(i).buffer)
            i += 1
          }
        } else {
          var i = block.entries.size - 1
          while (i >= block.first && block.entries(i).time > to) i -= 1
          if (i >= block.first) evaluator.merge(scratch, block.entries(i).prefix)
        }
        going = false
      } else if (block.index == firstIndex) {
        makeSuffixes(block)
        evaluator.merge(scratch, block.entries(block.first).suffix)
      } else evaluator.merge(scratch, block.entries.last.prefix)
    }
    evaluator.evaluate(scratch)
  }

  // Made when the block first starts a window: every later timestamp lies past the block, so it is complete.
  // Each buffer is folded in place: a block that starts a window never ends one, so its buffers and
  // prefixes (the first prefix is its buffer) are not read again.
  private def makeSuffixes(block: Block): Unit = if (!block.suffixesMade) {
    val entries = block.entries
    var i = entries.size - 1
    entries(i).suffix = entries(i).buffer
    i -= 1
    while (i >= block.first) {
      evaluator.merge(entries(i).buffer, entries(i + 1).suffix)
      entries(i).suffix = entries(i).buffer
      i -= 1
    }
    block.suffixesMade = true
  }

  def clear(): Unit = {
    blocks.clear()
    count = 0
  }
}

object TimestampSlices {
  /** The block length for sliding windows of `windowSize` (µs; windows cover [t - size, t]). */
  def blockLengthFor(windowSize: Long): Long = math.max(1L, windowSize)
}

/**
 * The aggregates of a key's successive per-event sliding windows over its kept rows (a groupBy fed rows:
 * streams, and windows under policies): each timestamp's rows are aggregated into one buffer, kept in
 * [[TimestampSlices]] as a batch keeps its slices, so both give the same bits. Windows are output by
 * ascending end, so each one adds only the timestamps after the previous end. A row kept at or before the
 * newest timestamp the sweep holds (out of event-time order, or a tie), or a window that starts or ends
 * before the previous one, makes it start again from the kept rows. Not stored: an engine read from a
 * stream's state starts again at its first output.
 *
 * Once it has read the kept rows, it folds each row kept after them as it comes (`rowKept`) into a pending
 * buffer of its timestamp, in the order rows are kept, as reading the timestamp's bag would: later windows
 * then take those buffers without reading the kept rows again. A row kept behind the newest pending
 * timestamp makes it read the kept rows after its last window again.
 */
final class KeptRowsSweep(evaluator: AggregateEvaluator) {
  private var slices: TimestampSlices = null
  private var from = Long.MinValue
  private var coveredTo = Long.MinValue
  private var valid = false
  // The buffers of the timestamps after coveredTo, by time: every kept row after coveredTo is in one when `eager`.
  private val pending = new RingQueue[PendingTimestamp]
  private var eager = false
  // A buffer of strings or decimals holds values of the row it was updated with: a row folded as it is kept
  // (a task's reused row) is copied first, as the kept rows' bags do.
  private val copiesRows = !evaluator.bufferTypes.forall(UnsafeRow.isFixedLength)

  /**
   * A row was kept at `time`: the sweep holds it only if it comes after every timestamp the sweep holds
   * (and folds it at once when it holds every kept row after them).
   */
  def rowKept(time: Long, row: InternalRow): Unit =
    if (valid && time <= coveredTo) { valid = false; dropPending() }
    else if (eager) {
      if (pending.nonEmpty && pending.last.time == time) evaluator.update(pending.last.buffer, own(row))
      else if (pending.isEmpty || pending.last.time < time) {
        val buffer = evaluator.newBuffer()
        evaluator.update(buffer, own(row))
        pending.append(new PendingTimestamp(time, buffer))
      } else dropPending() // behind a pending timestamp: the next window reads the kept rows after coveredTo
    }

  private def own(row: InternalRow): InternalRow = if (copiesRows) row.copy() else row

  private def dropPending(): Unit = {
    pending.clear()
    eager = false
  }

  def reset(): Unit = {
    if (slices != null) slices.clear()
    valid = false
    dropPending()
  }

  /** The aggregate of the kept rows with start <= time <= end (`timestamps` gives them, by time). */
  def aggregate(start: Long, end: Long, timestamps: (Long, Long) => Iterator[(Long, RowRun)]): InternalRow = {
    val blockLength = TimestampSlices.blockLengthFor(end - start)
    if (slices == null || slices.blockLength != blockLength) {
      slices = new TimestampSlices(evaluator, blockLength)
      valid = false
    }
    if (!valid || start < from || end < coveredTo) {
      slices.clear()
      dropPending()
      coveredTo = Long.MinValue
      valid = true
    }
    from = start
    if (end > coveredTo) {
      val next = if (coveredTo == Long.MinValue) start else math.max(coveredTo + 1, start)
      if (eager) {
        while (pending.nonEmpty && pending.head.time <= end) {
          val p = pending.removeHead()
          if (p.time >= next) slices.keep(p.time, p.buffer)
        }
      } else {
        def fold(first: Long, last: Long)(into: (Long, InternalRow) => Unit): Unit =
          timestamps(first, last).foreach { case (time, rows) =>
            val buffer = evaluator.newBuffer()
            try rows.foreach(evaluator.update(buffer, _)) finally rows.close()
            into(time, buffer)
          }
        fold(next, end)(slices.keep)
        // The rows kept after this window: from now on, rows kept after them are folded as they come.
        if (end < Long.MaxValue) fold(end + 1, Long.MaxValue)((time, buffer) => pending.append(new PendingTimestamp(time, buffer)))
        eager = true
      }
      coveredTo = end
    }
    slices.aggregate(start, end)
  }
}

/** A timestamp's buffer that [[KeptRowsSweep]] folds as its rows are kept, before a window takes it. */
private final class PendingTimestamp(val time: Long, val buffer: InternalRow)
