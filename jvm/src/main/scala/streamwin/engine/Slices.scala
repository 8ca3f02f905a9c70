package streamwin.engine

import org.apache.spark.sql.catalyst.InternalRow

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
 * instant (its start); sessions read hidden min/max aggregates or the gap (see
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
 * The slices a key keeps for windows that share them (hopping, per-event sliding), in time order:
 * a FIFO aggregate of every slice but the newest, which is held apart. Windows fire in start order, and
 * a window fires once a slice at or past its end arrived: then every slice in the FIFO precedes its
 * end, and only the newest may lie past it. So a window's aggregate is the FIFO, after evicting the
 * slices before its start, plus the newest slice when the window holds it: O(1) amortised merges per
 * slice whatever the number of windows sharing it.
 */
@SerialVersionUID(5041686886604367190L)
final class KeptSlices(evaluator: AggregateEvaluator) extends Serializable {
  private val fifo = new FifoAggregator(evaluator)
  private var times = new scala.collection.mutable.ArrayDeque[Long]
  // Stored engines write `times` packed after the fields, with it empty; one written before that
  // (false when read back) holds them as objects.
  private var packedTimes = false
  private var newestTime = 0L
  private var newest: InternalRow = null
  private val scratch = evaluator.newBuffer()

  private def writeObject(out: java.io.ObjectOutputStream): Unit = {
    val all = times
    times = new scala.collection.mutable.ArrayDeque[Long]
    packedTimes = true
    try out.defaultWriteObject() finally {
      times = all
      packedTimes = false
    }
    out.writeInt(all.size)
    all.foreach(out.writeLong)
  }

  private def readObject(in: java.io.ObjectInputStream): Unit = {
    in.defaultReadObject()
    if (packedTimes) {
      val n = in.readInt()
      times = new scala.collection.mutable.ArrayDeque[Long](n)
      var i = 0
      while (i < n) { times.append(in.readLong()); i += 1 }
      packedTimes = false
    }
  }

  /** Writes the slices (the stored form, see [[EngineStateCodec]]): the FIFO, its times, the newest slice. */
  def writeState(out: java.io.DataOutput): Unit = {
    fifo.writeState(out)
    out.writeInt(times.size)
    times.foreach(out.writeLong)
    out.writeBoolean(newest != null)
    if (newest != null) {
      out.writeLong(newestTime)
      evaluator.writePacked(out, Seq(newest))
    }
  }

  /** Reads what [[writeState]] wrote into these (empty) slices. */
  def readState(in: java.io.DataInput): Unit = {
    fifo.readState(in)
    val n = StoredEngineFormat.checked(in.readInt(), in, bytesEach = 8)
    times = new scala.collection.mutable.ArrayDeque[Long](n)
    var i = 0
    while (i < n) { times.append(in.readLong()); i += 1 }
    if (in.readBoolean()) {
      newestTime = in.readLong()
      newest = evaluator.readPacked(in).head
    }
  }

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
 * The aggregates of a key's successive per-event sliding windows over its kept rows (a groupBy fed rows:
 * streams, and windows under policies). Windows are output by ascending end, so each one's aggregate is the
 * previous one's FIFO ([[FifoAggregator]], one buffer per timestamp) after evicting the timestamps before its
 * start and adding those after the previous end: O(1) amortised merges per timestamp, where aggregating each
 * window's rows again cost O(rows in the window) per output. A row kept at or before the newest timestamp
 * the sweep holds (out of event-time order, or a tie), or a window that starts or ends before the previous
 * one, makes it start again from the kept rows. Not stored: a decoded engine starts again at its first output.
 */
final class KeptRowsSweep(evaluator: AggregateEvaluator) {
  private val fifo = new FifoAggregator(evaluator)
  private val times = new scala.collection.mutable.ArrayDeque[Long]
  private var from = Long.MinValue
  private var coveredTo = Long.MinValue
  private var valid = false

  /** A row was kept at `time`: the sweep holds it only if it comes after every timestamp the sweep holds. */
  def rowKept(time: Long): Unit = if (valid && time <= coveredTo) valid = false

  def reset(): Unit = {
    fifo.clear()
    times.clear()
    valid = false
  }

  /** The aggregate of the kept rows with start <= time <= end (`timestamps` gives them, by time). */
  def aggregate(start: Long, end: Long, timestamps: (Long, Long) => Iterator[(Long, RowRun)]): InternalRow = {
    if (!valid || start < from || end < coveredTo) {
      reset()
      coveredTo = Long.MinValue
      valid = true
    }
    from = start
    if (end > coveredTo) {
      val next = if (coveredTo == Long.MinValue) start else math.max(coveredTo + 1, start)
      timestamps(next, end).foreach { case (time, rows) =>
        val buffer = evaluator.newBuffer()
        try rows.foreach(evaluator.update(buffer, _)) finally rows.close()
        fifo.push(buffer)
        times.append(time)
      }
      coveredTo = end
    }
    while (times.nonEmpty && times.head < start) {
      fifo.evictOldest()
      times.removeHead()
    }
    fifo.result()
  }
}
