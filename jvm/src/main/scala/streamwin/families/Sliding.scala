package streamwin.families

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String
import org.apache.spark.sql.catalyst.expressions.Expression

import streamwin.catalyst.{SliceStart, SqlWindowFunction, StreamWindow}
import streamwin.engine._
import streamwin.spec._

/**
 * Per-event sliding windows (eKuiper SLIDINGWINDOW, Quix `sliding_window`): one window per distinct
 * event time t of a key, covering [t - size, t] with both ends inclusive. Rows sharing a timestamp
 * share that window (Quix: "every interval has a distinct aggregation"). Microseconds.
 *
 * Planning: a groupBy without policies aggregates one slice per timestamp after the shuffle and
 * feeds the slices to [[SlidingWindows]] (the key's slices in window-long blocks, see
 * [[streamwin.engine.TimestampSlices]]); policies and the select form replay rows through the same family.
 */
final case class SlidingWindowSpec(size: Long) extends EventTimeWindowSpec {
  require(size > 0, "size must be positive")
  override def function: String = Sliding.sql.name

  override def describe(w: WindowCall): String = s"$function(${w.timeOrOrder}, size=${size}us)"

  override def planGroupBy(policies: WindowPolicies, columns: WindowColumns): GroupByPlan =
    if (policies.replaysRows) GroupByPlan.ReplayRows
    else GroupByPlan.Slices(SliceStart(columns.timeOrOrder, 1, 0), Nil, preAggregate = false) // one slice per timestamp

  override def planSelect(policies: WindowPolicies): SelectPlan = SelectPlan.ReplayRows

  override def family(policies: WindowPolicies): WindowFamily = SlidingWindows(this, policies.lateness, policies.emitUpdate)
}

/** `sw_sliding`. */
object Sliding {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_sliding",
    "_FUNC_(time, size[, 'partition_by', column ...]) - One window per event time t of a key, covering [t - size, t] with both ends inclusive (eKuiper SLIDINGWINDOW, Quix sliding_window).",
    "SELECT k, _FUNC_(ts, '1 hour') AS window, avg(temp) FROM t GROUP BY k, _FUNC_(ts, '1 hour');")(build)

  /** Overlapping windows, one per event time, never empty. */
  private val support: PolicyOptions.Support = {
    case "count_trigger" => "sliding windows overlap and share their rows, so a window's rows cannot be flushed alone"
    case "emit_empty" => "a sliding window exists only at an event time, so it is never empty"
  }

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("time", "size"), Seq("partition_by", "order_by") ++ PolicyOptions.optionNames,
      Set("partition_by"), args)
    val order = a.option("order_by")
    val policies = PolicyOptions.parse(a, orderGiven = order.isDefined, support)
    val size = a.duration("size", a.positional("size"))
    StreamWindow(SlidingWindowSpec(size), (a.positional("time") +: order.toSeq) ++ a.optionValues("partition_by"), policies)
  }
}

/**
 * Per-event sliding windows: the window of event time t is [t - size, t], both ends inclusive, and
 * holds every row in that range that arrived before it fired, including rows that arrived before t
 * did. It is opened by the first row at t whose window is not dropped yet, and fires when progress
 * passes t + lateness (a row at exactly the progress still joins it). A row joins its own window and
 * every open later window within size; it is late when none is open. Windows share the key's kept
 * rows (by event time), which stay while an open or future window can hold them; each output reads
 * the rows of its range, so its cost grows with the window's row count.
 */
final case class SlidingWindows(spec: SlidingWindowSpec, lateness: Long, emitUpdate: Boolean) extends EventTimeFamily {
  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    val ownOpen = !op.reached(time + lateness + 1)
    // Windows are keyed by start = end - size: open windows ending in (time, time + size].
    if (!ownOpen && !op.state.windows(time - spec.size, false, time, true).hasNext) {
      op.arrivedLate(time - spec.size, time, row)
      return false
    }
    op.state.keepRow(time, row)
    op.keptRowsChanged(1)
    if (ownOpen && op.state.window(time - spec.size) == null) op.open(time - spec.size, time, NoContents)
    if (emitUpdate) {
      // Every open window holding the row: ends in [time, time + size].
      val holding = op.state.windows(time - spec.size, true, time, true).toVector
      holding.foreach(op.enter(_, row, append = false))
    }
    true
  }

  /** A slice (one timestamp) is kept in the key's timestamp slices and opens its own window, which outputs the slices of its range. */
  override def placeSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    op.state.timestampSlices(spec.size).keep(slice.time, slice.buffer)
    op.open(slice.time - spec.size, slice.time, NoContents)
    true
  }

  override def fireAt(w: WindowEntry): Long = w.end + lateness + 1

  override def outputsWhenFired(w: WindowEntry, policies: WindowPolicies): Boolean = true

  override def output(w: WindowEntry, kind: UTF8String, op: KeyedWindowOperator): Unit =
    if (op.state.hasTimestampSlices) {
      op.contents.output.values(w.start, w.end, kind, op.state.timestampSlices(spec.size).aggregate(w.start, w.end))
    } else op.state.aggregateKeptRows(w.start, w.end) match {
      case Some(values) => op.contents.output.values(w.start, w.end, kind, values)
      case None => op.contents.output.rows(w.start, w.end, kind, op.state.keptRows(w.start, w.end))
    }

  override def afterClose(op: KeyedWindowOperator): Unit = {
    // Rows older than every open or future window's range are no longer needed.
    val progress = op.state.progress
    val dropped =
      if (progress == Long.MaxValue) op.state.dropKeptBefore(Long.MaxValue)
      else {
        val first = op.state.firstWindow
        val oldestEnd = math.min(if (first == null) Long.MaxValue else first.end, progress - lateness)
        if (oldestEnd == Long.MaxValue) 0L else op.state.dropKeptBefore(oldestEnd - spec.size)
      }
    op.keptRowsChanged(-dropped)
  }

  override def holdsNothing(state: WindowState): Boolean = !state.hasWindows && !state.hasKeptRows

  // A later row that is not late (t >= progress - lateness) reads kept rows back to t - size: once
  // progress passes the newest kept row + lateness + size, afterClose drops them all.
  override def releaseAt(state: WindowState): Long =
    if (!state.hasKeptRows) Long.MaxValue else state.lastKeptTime + lateness + spec.size + 1
}
