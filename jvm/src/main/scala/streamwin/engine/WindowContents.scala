package streamwin.engine

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String

/**
 * Where a window's output rows go. A groupBy writes one row of aggregate values per window output;
 * a select writes each member row tagged with the window.
 */
trait WindowOutput extends Serializable {
  /** A window output from its aggregate values (groupBy only). */
  def values(start: Any, end: Any, kind: UTF8String, values: InternalRow): Unit
  /**
   * A window output made of `rows`: a groupBy aggregates them into one row, a select tags each of
   * them. The run is a snapshot, read lazily, so a window's rows never need to fit in memory at once.
   */
  def rows(start: Any, end: Any, kind: UTF8String, rows: RowRun): Unit
}

/**
 * What a window (or a late group) holds while it is open: an aggregation buffer, a FIFO of per-row
 * buffers, or the rows themselves (spilling past the task's memory budget).
 */
trait WindowContents extends Serializable {
  def append(row: InternalRow): Unit
  def evictOldest(): Unit
  def clear(): Unit
  /** Outputs the window made of everything currently held. */
  def emit(start: Any, end: Any, kind: UTF8String): Unit
  /** Takes over every row of `other` (of the same kind), after this window's own (session merges). */
  def absorb(other: WindowContents): Unit =
    throw new UnsupportedOperationException(s"${getClass.getSimpleName} cannot merge windows")
  /** Merges a pre-aggregated slice's buffer into this window (groupBy windows fed slices, see [[Slice]]). */
  def mergeSlice(buffer: InternalRow): Unit =
    throw new UnsupportedOperationException(s"${getClass.getSimpleName} holds no aggregation buffer")
}

/**
 * groupBy contents of windows that never share rows: one running buffer, updated in place (`initial`:
 * a slice's buffer the window takes over, instead of a fresh one).
 */
final class BufferContents(private[engine] val evaluator: AggregateEvaluator, output: WindowOutput,
    initial: InternalRow = null) extends WindowContents {
  private val buffer = if (initial != null) initial else evaluator.newBuffer()
  private[engine] var held = if (initial != null) 1L else 0L
  override def append(row: InternalRow): Unit = { evaluator.update(buffer, row); held += 1 }
  override def evictOldest(): Unit = {
    // Disjoint windows are only ever evicted whole, right after they are emitted (or cleared).
    held -= 1
    if (held == 0) evaluator.initialize(buffer)
  }
  override def clear(): Unit = { held = 0; evaluator.initialize(buffer) }
  override def emit(start: Any, end: Any, kind: UTF8String): Unit = output.values(start, end, kind, evaluator.evaluate(buffer))
  override def mergeSlice(slice: InternalRow): Unit = { evaluator.merge(buffer, slice); held += 1 }
  /** The running aggregation buffer (a stream stores it as typed state). */
  def aggregationBuffer: InternalRow = buffer
  override def absorb(other: WindowContents): Unit = other match {
    case o: BufferContents => evaluator.merge(buffer, o.buffer); held += o.held
    case _ => super.absorb(other)
  }
}

/** groupBy contents of overlapping count windows: they share one FIFO of per-row buffers. */
final class FifoContents(evaluator: AggregateEvaluator, output: WindowOutput) extends WindowContents {
  private[engine] val fifo = new FifoAggregator(evaluator)
  override def append(row: InternalRow): Unit = {
    val buffer = evaluator.newBuffer()
    evaluator.update(buffer, row)
    fifo.push(buffer)
  }
  override def evictOldest(): Unit = fifo.evictOldest()
  override def clear(): Unit = fifo.clear()
  override def emit(start: Any, end: Any, kind: UTF8String): Unit = output.values(start, end, kind, fifo.result())
}

/**
 * The member rows themselves (a select tags each with its window; a groupBy over windows that merge
 * aggregates them at each output), kept in a [[RowBag]] that spills to disk.
 */
final class RowContents(private[engine] val bag: RowBag, output: WindowOutput) extends WindowContents {
  override def append(row: InternalRow): Unit = bag.append(row)
  override def evictOldest(): Unit = bag.dropFirst(1)
  override def clear(): Unit = bag.clear()
  override def emit(start: Any, end: Any, kind: UTF8String): Unit = output.rows(start, end, kind, bag.rows)
  override def absorb(other: WindowContents): Unit = other match {
    case o: RowContents => bag.appendAll(o.bag)
    case _ => super.absorb(other)
  }
}

/**
 * Builds the contents of a task's windows: `buffered` for a window whose rows are only ever added
 * (an aggregation buffer for a groupBy, the rows for a select), `kept` for one whose rows are read
 * again at each output (sessions, which merge). A named class, so the engine state codec finds it.
 */
final class ContentsFactory(evaluator: Option[AggregateEvaluator], val output: WindowOutput, newBag: () => RowBag)
    extends Serializable {
  def buffered(): WindowContents = evaluator match {
    case Some(e) => new BufferContents(e, output)
    case None => kept()
  }
  def fifo(): WindowContents = evaluator match {
    case Some(e) => new FifoContents(e, output)
    case None => kept()
  }
  def kept(): WindowContents = new RowContents(newBag(), output)
  def bag(): RowBag = newBag()
  /** The contents of a window made of one pre-aggregated slice so far (groupBy only). */
  def ofSlice(buffer: InternalRow): WindowContents = evaluator match {
    case Some(e) => new BufferContents(e, output, buffer)
    case None => throw new IllegalStateException("slices are pre-aggregated: a select has none")
  }
  /**
   * Aggregates of sliding windows over kept rows (groupBy); None for a select, and for aggregates whose
   * buffers grow with their rows: the sweep keeps, per timestamp, a prefix fold of its block and, once
   * its block starts a window, a suffix fold, each aggregating up to a window of timestamps (quadratic
   * memory for collect_list), where aggregating the window's kept rows at each output needs one buffer.
   */
  def keptRowsSweep(): Option[KeptRowsSweep] = evaluator.filter(_.boundedBuffers).map(new KeptRowsSweep(_))
  /** A queue of slices shared by windows (groupBy only). */
  def keptSlices(): KeptSlices = new KeptSlices(evaluatorOfSlices)
  /** The evaluator of slices' buffers (groupBy only). */
  def evaluatorOfSlices: AggregateEvaluator =
    evaluator.getOrElse(throw new IllegalStateException("slices are pre-aggregated: a select has none"))
}

/**
 * Windows whose rows live elsewhere: in the key's kept rows ([[WindowState.keepRow]]) or kept slices
 * ([[WindowState.keptSlices]]); their family outputs them from there.
 */
object NoContents extends WindowContents {
  override def append(row: InternalRow): Unit = ()
  override def evictOldest(): Unit = ()
  override def clear(): Unit = ()
  override def emit(start: Any, end: Any, kind: UTF8String): Unit =
    throw new IllegalStateException("a window without contents is output by its family")
}

object RowRuns {
  /** The runs one after the other, each read lazily and closed once exhausted. */
  def concat(runs: Seq[RowRun]): RowRun = if (runs.size == 1) runs.head else new RowRun {
    private var index = 0
    override val numRows: Long = runs.iterator.map(_.numRows).sum
    override def hasNext: Boolean = {
      while (index < runs.size && !runs(index).hasNext) { runs(index).close(); index += 1 }
      index < runs.size
    }
    override def next(): InternalRow = {
      if (!hasNext) throw new NoSuchElementException
      runs(index).next()
    }
    override def close(): Unit = runs.foreach(_.close())
  }
}
