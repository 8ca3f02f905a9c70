package streamwin.engine

import org.apache.spark.sql.catalyst.InternalRow

/**
 * One window of a key while it is open, or a late group (the late rows of a window already
 * closed): its bounds, what it holds, and whether it was output.
 */
final class WindowEntry(var start: Long, var end: Long, val contents: WindowContents) extends Serializable {
  /** Rows held that no count trigger output yet. */
  var held = 0L
  /** Output as `final` already (a window that fires again for late rows, SPL timeInterval). */
  var fired = false
  /** Changed since its last output. */
  var changed = false
  /** Order_by values of its first and last row held (windows over rows in arrival order). */
  var first: Any = null
  var last: Any = null
}

/**
 * A key's windows, as the operator reads and writes them: open windows ordered by start, late
 * groups ordered by start, the rows a family keeps by event time (windows that share rows), and a
 * small progress record. The batch host keeps it in memory (rows spill, see [[RowBag]]).
 */
trait WindowState extends Serializable {
  /** The key's event-time progress (µs): the largest event time seen, or the clock's time. */
  def progress: Long
  def progress_=(time: Long): Unit
  /** Start of the last window closed (gap filling of empty windows), if any. */
  def lastClosedStart: Option[Long]
  def lastClosedStart_=(start: Option[Long]): Unit
  /** What the key's family remembers besides its windows (row counts, retained orders, a trigger's state), or null. */
  def record: FamilyRecord
  def record_=(r: FamilyRecord): Unit

  def window(start: Long): WindowEntry
  def putWindow(w: WindowEntry): Unit
  def removeWindow(start: Long): WindowEntry
  /** The open window with the smallest start, or null. */
  def firstWindow: WindowEntry
  /** The open window with the latest start, or null. */
  def lastWindow: WindowEntry
  /** Open windows with from <= start <= to (each bound inclusive or not), by ascending start. */
  def windows(from: Long, fromInclusive: Boolean, to: Long, toInclusive: Boolean): Iterator[WindowEntry]
  /** Open windows starting at or before `start`, by descending start. */
  def windowsDownFrom(start: Long): Iterator[WindowEntry]
  def hasWindows: Boolean
  def windowCount: Int

  def lateGroup(start: Long): WindowEntry
  def putLateGroup(g: WindowEntry): Unit
  /** Removes and returns the late group with the smallest start, or null. */
  def pollLateGroup(): WindowEntry
  def hasLateGroups: Boolean
  def lateGroupCount: Int

  /** Keeps a row at event time `time` (families whose windows share rows: sliding). */
  def keepRow(time: Long, row: InternalRow): Unit
  /** The kept rows with from <= time <= to, by time then arrival. */
  def keptRows(from: Long, to: Long): RowRun
  /**
   * The aggregate of the kept rows with from <= time <= to, for a groupBy (None for a select, whose
   * windows output the rows): cheapest when called for windows by ascending range, as sliding windows are output.
   */
  def aggregateKeptRows(from: Long, to: Long): Option[InternalRow]
  /** Drops the kept rows with time < `time`; returns how many. */
  def dropKeptBefore(time: Long): Long
  def hasKeptRows: Boolean
  /** The time of the newest kept row (Long.MinValue when none is kept). */
  def lastKeptTime: Long

  /** Slices kept for windows that share them (hopping and cumulating windows fed slices). */
  def keptSlices: KeptSlices
  /**
   * Per-event sliding windows of `windowSize` fed slices: the key's buffers, one per timestamp (groupBy
   * only; made at the first call).
   */
  def timestampSlices(windowSize: Long): TimestampSlices
  def hasTimestampSlices: Boolean
  /** Slices a stream keeps for overlapping windows (hopping), one state row each (made at the first call). */
  def sharedSlices: SharedSlices
  def hasSharedSlices: Boolean
  /** How many slices the key keeps, of any kind. */
  def keptSliceCount: Int

  def clear(): Unit
}

/**
 * A key's window state in memory: sorted maps, rows in bags. Batch keeps it for a key's whole input; a stream
 * reads it from the key's state rows at each visit and writes back what changed ([[WindowStateCodec]]).
 */
final class InMemoryWindowState(contents: ContentsFactory) extends WindowState {
  private val open = new java.util.TreeMap[java.lang.Long, WindowEntry]
  private val late = new java.util.TreeMap[java.lang.Long, WindowEntry]
  private val kept = new SortedTimeMap[RowBag]
  private[engine] var keptCount = 0L
  private var slices: KeptSlices = null
  private var shared: SharedSlices = null
  private var _progress = Long.MinValue
  private var _lastClosedStart: Option[Long] = None
  private var _record: FamilyRecord = null
  // Successive sliding windows' aggregates over the kept rows (groupBy); not stored, made again after a read from a stream's state.
  @transient private var sweep: Option[KeptRowsSweep] = null
  // Batch only: a stream feeds sliding windows rows, never slices (WindowStateCodec refuses to store them).
  @transient private var timestamps: TimestampSlices = null

  override def progress: Long = _progress
  override def progress_=(time: Long): Unit = _progress = time
  override def lastClosedStart: Option[Long] = _lastClosedStart
  override def lastClosedStart_=(start: Option[Long]): Unit = _lastClosedStart = start
  override def record: FamilyRecord = _record
  override def record_=(r: FamilyRecord): Unit = _record = r

  override def window(start: Long): WindowEntry = open.get(start)
  override def putWindow(w: WindowEntry): Unit = open.put(w.start, w)
  override def removeWindow(start: Long): WindowEntry = open.remove(start)
  override def firstWindow: WindowEntry = if (open.isEmpty) null else open.firstEntry.getValue
  override def lastWindow: WindowEntry = if (open.isEmpty) null else open.lastEntry.getValue
  override def windows(from: Long, fromInclusive: Boolean, to: Long, toInclusive: Boolean): Iterator[WindowEntry] =
    if (from > to) Iterator.empty else iterate(open.subMap(from, fromInclusive, to, toInclusive).values().iterator())
  override def windowsDownFrom(start: Long): Iterator[WindowEntry] =
    iterate(open.headMap(start, true).descendingMap().values().iterator())
  override def hasWindows: Boolean = !open.isEmpty
  override def windowCount: Int = open.size

  override def lateGroup(start: Long): WindowEntry = late.get(start)
  override def putLateGroup(g: WindowEntry): Unit = late.put(g.start, g)
  override def pollLateGroup(): WindowEntry = { val e = late.pollFirstEntry(); if (e == null) null else e.getValue }
  override def hasLateGroups: Boolean = !late.isEmpty
  override def lateGroupCount: Int = late.size

  override def keepRow(time: Long, row: InternalRow): Unit = {
    kept.getOrElseUpdate(time, contents.bag()).append(row)
    keptCount += 1
    if (sweep != null) sweep.foreach(_.rowKept(time, row))
  }
  override def aggregateKeptRows(from: Long, to: Long): Option[InternalRow] = {
    if (sweep == null) sweep = contents.keptRowsSweep()
    sweep.map(_.aggregate(from, to, (first, last) => kept.range(first, last).map { case (time, bag) => (time, bag.rows) }))
  }
  override def keptRows(from: Long, to: Long): RowRun =
    RowRuns.concat(kept.valuesIn(from, to).map(_.rows).toVector)
  override def dropKeptBefore(time: Long): Long = {
    var dropped = 0L
    while (kept.nonEmpty && kept.firstTime < time) {
      val bag = kept.removeFirst()
      dropped += bag.size
      bag.clear()
    }
    keptCount -= dropped
    dropped
  }
  override def hasKeptRows: Boolean = kept.nonEmpty
  override def lastKeptTime: Long = if (kept.isEmpty) Long.MinValue else kept.lastTime

  override def keptSlices: KeptSlices = {
    if (slices == null) slices = contents.keptSlices()
    slices
  }
  override def timestampSlices(windowSize: Long): TimestampSlices = {
    if (timestamps == null) {
      timestamps = new TimestampSlices(contents.evaluatorOfSlices, TimestampSlices.blockLengthFor(windowSize))
    }
    timestamps
  }
  override def hasTimestampSlices: Boolean = timestamps != null && !timestamps.isEmpty
  override def sharedSlices: SharedSlices = {
    if (shared == null) shared = new SharedSlices(contents.evaluatorOfSlices)
    shared
  }
  override def hasSharedSlices: Boolean = shared != null && !shared.isEmpty
  override def keptSliceCount: Int =
    (if (slices == null) 0 else slices.size) + (if (timestamps == null) 0 else timestamps.size) +
      (if (shared == null) 0 else shared.size)

  // What a stream's window state (WindowStateCodec) reads and restores besides the interface.
  private[engine] def openWindows: Iterator[WindowEntry] = iterate(open.values().iterator())
  private[engine] def lateGroups: Iterator[WindowEntry] = iterate(late.values().iterator())
  private[engine] def keptBags: Iterator[(Long, RowBag)] = kept.iterator
  private[engine] def restoreKept(time: Long, bag: RowBag): Unit = kept.put(time, bag)
  private[engine] def slicesIfAny: KeptSlices = slices

  override def clear(): Unit = {
    if (slices != null) slices.clear()
    if (timestamps != null) timestamps.clear()
    if (shared != null) shared.clear()
    if (_record != null) _record.release()
    // Contents may hold spilled rows: clearing them frees their files.
    open.values().forEach(_.contents.clear())
    late.values().forEach(_.contents.clear())
    open.clear()
    late.clear()
    kept.foreachValue(_.clear())
    kept.clear()
    if (sweep != null) sweep.foreach(_.reset())
    keptCount = 0
    _progress = Long.MinValue
    _lastClosedStart = None
    _record = null
  }

  private def iterate[A](it: java.util.Iterator[A]): Iterator[A] = new Iterator[A] {
    override def hasNext: Boolean = it.hasNext
    override def next(): A = it.next()
  }
}
