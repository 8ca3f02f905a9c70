package streamwin.families

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericInternalRow}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.unsafe.types.UTF8String

import streamwin.catalyst.{SqlWindowFunction, StreamWindow}
import streamwin.engine._
import streamwin.spec._

/**
 * Count windows. align = "start" (KX `.qsp.window.count[size; frequency]`, Quix count windows,
 * SPL `count(N)`): windows start at the key's rows 0, step, 2·step, … and hold `size` rows.
 * align = "end" (eKuiper `COUNTWINDOW(size, step)`): at every step-th row, once at least `size`
 * rows have arrived, a window holds the latest `size` rows.
 *
 * Replayed through [[CountWindows]], which share the retained rows, or, when overlapping windows
 * are output while they fill (emit_update, count_trigger), [[OverlappingCountWindows]].
 */
final case class CountWindowSpec(size: Long, step: Long, alignEnd: Boolean = false) extends SequenceWindowSpec {
  require(size > 0 && step > 0 && step <= size, "0 < step <= size")
  override def function: String = Count.sql.name

  /** True when the windows never overlap, so one running aggregate suffices. */
  def disjoint: Boolean = step == size

  override def describe(w: WindowCall): String =
    s"$function($size, step=$step, align=${if (alignEnd) "end" else "start"}, order_by=${w.timeOrOrder}${w.policies})"

  override def family(policies: WindowPolicies): WindowFamily =
    if (step < size && !alignEnd && (policies.emitUpdate || policies.countTrigger > 0 || policies.idleTimeout > 0))
      OverlappingCountWindows(this)
    else CountWindows(this, policies)
}

/** `sw_count`. */
object Count {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_count",
    "_FUNC_(size[, 'step', step][, 'align', 'start'|'end'], 'order_by', column[, 'partition_by', column ...]) - Count windows of size rows per key in order_by order: starting every step rows (align 'start'), or at every step-th row holding the latest size rows (align 'end', eKuiper COUNTWINDOW).",
    "SELECT k, _FUNC_(3, 'order_by', seq) AS window, sum(v) FROM t GROUP BY k, _FUNC_(3, 'order_by', seq);")(build)

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("size"), Seq("step", "align", "order_by", "partition_by") ++
      PolicyOptions.optionNames, Set("partition_by"), args)
    val size = a.positiveCount("size", a.positional("size"))
    val step = a.option("step").map(a.positiveCount("step", _)).getOrElse(size)
    val alignEnd = a.option("align").map(a.choice("align", _, Seq("start", "end"))).contains("end")
    if (step > size) {
      throw StreamwinErrors.invalidArgument(a.function, "step",
        s"must not exceed size ($step > $size): count windows cover every row (Quix and eKuiper rule)")
    }
    val policies = PolicyOptions.parse(a, orderGiven = false, SequenceWindows.support(endAligned = alignEnd))
    StreamWindow(CountWindowSpec(size, step, alignEnd), SequenceWindows.requiredOrder(a) +: a.optionValues("partition_by"),
      policies)
  }
}

/**
 * Count windows of one key, sharing the retained rows (one running buffer, a FIFO of per-row
 * buffers, or the rows):
 *  - align start (KX count, Quix count windows, SPL count(N)): windows start at rows 0, step, 2·step,
 *    … and hold `size` rows; a window is `final` when its last row arrives.
 *  - align end (eKuiper COUNTWINDOW(size, step)): at every step-th row, once at least `size` rows
 *    arrived, a window holds the latest `size` rows. Rows older than the first such window are in
 *    no window (eKuiper: "the 1st event is ignored") and counted as such.
 * At the end of the input, each window that has begun but is not complete is emitted as `partial`.
 * Only rows that a future window can still hold are retained: at most `size`.
 * Policies (non-overlapping windows only): `emit_update` outputs the window so far after each row;
 * `count_trigger` outputs the rows held as `partial` once they reach N and drops them, so each
 * output's start and end are the first and last order_by value of the rows it holds.
 */
final case class CountWindows(spec: CountWindowSpec, policies: WindowPolicies) extends SequenceFamily {
  override def newRecord(): FamilyRecord = new CountRecord
  override def recordForm: Option[FamilyRecordForm] = Some(CountRecord.Form)

  private def retained(op: KeyedWindowOperator): WindowEntry = {
    var w = op.state.window(0L)
    if (w == null) {
      w = op.open(0L, 0L, if (spec.disjoint) op.contents.buffered() else op.contents.fifo())
    }
    w
  }

  override def place(order: Any, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    val r = record(op)
    val w = retained(op)
    w.contents.append(row)
    keepOrder(r, order)
    r.rows += 1
    op.keptRowsChanged(1)
    // When the row completes a window, the retained rows are exactly that window.
    op.afterRow(r.retained, completesWindow(r))({ kind =>
      emit(w, r, kind, op)
      if (kind ne WindowKind.Update) r.coveredUntil = r.rows
    }, evictBefore(r.rows, w, r, op))
    evictBefore(firstRowStillNeeded(r), w, r, op)
    true
  }

  override def teardown(op: KeyedWindowOperator): Unit = {
    val r = record(op)
    val w = op.state.window(0L)
    if (w == null) return
    if (spec.alignEnd) {
      if (r.rows > r.coveredUntil && r.retained > 0) emit(w, r, WindowKind.Partial, op)
    } else {
      // Every retained row is in one of the partial windows below, so none is unwindowed.
      r.coveredUntil = r.rows
      var start = firstRowStillNeeded(r)
      while (start < r.rows) {
        evictBefore(start, w, r, op)
        // (A count trigger may have flushed every row of the last window already.)
        if (r.retained > 0) emit(w, r, WindowKind.Partial, op)
        start += spec.step
      }
    }
  }

  // The retained rows are the open window's (the idle timeout needs disjoint windows, as count_trigger).
  override def flushIdle(op: KeyedWindowOperator): Unit = {
    val r = record(op)
    val w = op.state.window(0L)
    if (w == null || r.retained == 0) return
    emit(w, r, WindowKind.Partial, op)
    r.coveredUntil = r.rows
    evictBefore(r.rows, w, r, op)
  }

  private def emit(w: WindowEntry, r: CountRecord, kind: UTF8String, op: KeyedWindowOperator): Unit = {
    w.first = r.orders.head
    w.last = r.orders.last
    op.output(w, kind)
  }

  private def completesWindow(r: CountRecord): Boolean =
    r.rows >= spec.size && (if (spec.alignEnd) r.rows % spec.step == 0 else (r.rows - spec.size) % spec.step == 0)

  /** Index of the oldest row that a window not yet complete holds. */
  private def firstRowStillNeeded(r: CountRecord): Long =
    if (spec.alignEnd) {
      // The next window ends at the next multiple of step that is at least size.
      val next = math.max(spec.size, (r.rows / spec.step + 1) * spec.step)
      next - spec.size
    } else if (r.rows < spec.size) 0L
    else ((r.rows - spec.size) / spec.step + 1) * spec.step

  private def evictBefore(index: Long, w: WindowEntry, r: CountRecord, op: KeyedWindowOperator): Unit = {
    while (r.oldestRetained < index && r.oldestRetained < r.rows) {
      if (r.oldestRetained >= r.coveredUntil) op.countInNoWindow()
      w.contents.evictOldest()
      if (r.oldestRetained == r.headRow) {
        r.orders.removeHead()
        r.headRow = math.min(nextStart(r.headRow), r.rows - 1)
      }
      r.oldestRetained += 1
      op.keptRowsChanged(-1)
    }
  }

  /** Whether a window starts at row `index`. */
  private def startsWindow(index: Long): Boolean =
    if (spec.alignEnd) (index + spec.size) % spec.step == 0 else index % spec.step == 0

  /** The first row after `index` that a window starts at. */
  private def nextStart(index: Long): Long =
    if (spec.alignEnd) ((index + spec.size) / spec.step + 1) * spec.step - spec.size
    else (index / spec.step + 1) * spec.step

  /**
   * Keeps the order value of the row arriving now (row `r.rows`), which is the newest; the one kept for the
   * row before goes unless a window can start with it.
   */
  private def keepOrder(r: CountRecord, order: Any): Unit = {
    if (r.orders.isEmpty) r.headRow = r.rows
    else {
      val previous = r.rows - 1
      if (previous != r.headRow && !startsWindow(previous)) r.orders.removeLast()
    }
    r.orders.append(order)
  }

  /** The key's record, holding only the order values [[keepOrder]] keeps (a record read may hold every row's). */
  private def record(op: KeyedWindowOperator): CountRecord = {
    val r = op.state.record.asInstanceOf[CountRecord]
    if (!r.compact) {
      r.headRow = r.oldestRetained
      if (r.orders.size == r.retained && r.retained > 2) {
        var index = r.oldestRetained
        val all = r.orders
        r.orders = new RingQueue[Any]
        all.foreach { order =>
          if (index == r.oldestRetained || index == r.rows - 1 || startsWindow(index)) r.orders.append(order)
          index += 1
        }
      }
      r.compact = true
    }
    r
  }
}

/**
 * Overlapping start-aligned count windows (Quix hopping and sliding count windows) whose rows so
 * far are output while they fill: with `emit_update` after every row, each open window (every
 * window holding the row) as `update`; with `count_trigger` a window's rows as `partial` once they
 * reach N. Each open window keeps its own contents, so a row is added to size / step of them; the
 * shared [[CountWindows]] serve every other count window. Windows start at rows 0, step, 2·step, …
 * (their start in the state is that row index), are `final` at their size-th row and `partial` at
 * the end of the input.
 */
final case class OverlappingCountWindows(spec: CountWindowSpec) extends SequenceFamily {
  override def newRecord(): FamilyRecord = new RowCount
  override def recordForm: Option[FamilyRecordForm] = Some(RowCount.Form)

  override def place(order: Any, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    val r = op.state.record.asInstanceOf[RowCount]
    if (r.rows % spec.step == 0) op.open(r.rows, r.rows + spec.size, op.contents.buffered())
    r.rows += 1
    val open = op.state.windows(Long.MinValue, true, Long.MaxValue, true).toVector
    open.foreach { w =>
      if (w.held == 0) w.first = order
      w.last = order
      op.enter(w, row, completes = r.rows == w.end)
    }
    open.iterator.takeWhile(_.end == r.rows).foreach(w => op.drop(w))
    true
  }

  override def teardown(op: KeyedWindowOperator): Unit =
    op.state.windows(Long.MinValue, true, Long.MaxValue, true).foreach { w =>
      if (w.held > 0) op.output(w, WindowKind.Partial)
    }
}

/** Where a key is in its rows for [[CountWindows]]. */
final class CountRecord extends FamilyRecord with Serializable {
  var rows = 0L
  var oldestRetained = 0L
  // Rows below this index have been in an emitted window.
  var coveredUntil = 0L
  // The order_by values a window can still start or end with (a window's start and end are its first
  // and last row's), oldest first: the oldest retained row's, each later row's that a window starts
  // at, and the newest row's. Other rows' are not kept: count(1000000) keeps two (its open window's first
  // row is the oldest retained), not a million.
  var orders = new RingQueue[Any]
  // The row index of `orders.head` (meaningful while it is not empty).
  var headRow = 0L
  // False for a record just read from a stream's state: its `orders` may hold every retained row's
  // value (as the state of earlier versions does) until [[CountWindows]] keeps only the ones above.
  var compact = true

  def retained: Long = rows - oldestRetained
}

object CountRecord {
  /** Stored as `count`: rows, oldest_retained, covered_until, and the orders (typed by the order column). */
  object Form extends FamilyRecordForm {
    override val field = "count"

    override def write(record: FamilyRecord, io: StoredRecordIO): Any = {
      val x = record.asInstanceOf[CountRecord]
      new GenericInternalRow(Array[Any](x.rows, x.oldestRetained, x.coveredUntil, new GenericArrayData(x.orders.toArray)))
    }

    override def read(row: InternalRow, ordinal: Int, io: StoredRecordIO): FamilyRecord = {
      val v = row.getStruct(ordinal, io.width(field))
      val x = new CountRecord
      x.rows = v.getLong(0)
      x.oldestRetained = v.getLong(1)
      x.coveredUntil = v.getLong(2)
      val orders = v.getArray(3)
      x.orders = new RingQueue[Any](orders.numElements())
      var i = 0
      while (i < orders.numElements()) {
        x.orders.append(if (orders.isNullAt(i)) null else InternalRow.copyValue(orders.get(i, io.orderType)))
        i += 1
      }
      x.compact = false
      x
    }
  }
}

/** How many rows an [[OverlappingCountWindows]] key has seen. */
final class RowCount extends FamilyRecord with Serializable { var rows = 0L }

object RowCount {
  /** Stored as `row_count`. */
  object Form extends FamilyRecordForm {
    override val field = "row_count"
    override def write(record: FamilyRecord, io: StoredRecordIO): Any = record.asInstanceOf[RowCount].rows
    override def read(row: InternalRow, ordinal: Int, io: StoredRecordIO): FamilyRecord = {
      val x = new RowCount
      x.rows = row.getLong(ordinal)
      x
    }
  }
}
