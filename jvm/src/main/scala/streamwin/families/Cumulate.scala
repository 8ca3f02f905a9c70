package streamwin.families

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression

import org.apache.spark.unsafe.types.UTF8String

import streamwin.catalyst.{SliceStart, SqlWindowFunction, StreamWindow}
import streamwin.engine.{EventTimeFamily, KeyedWindowOperator, NoContents, Slice, WindowEntry, WindowFamily, WindowPolicies, WindowTriggers}
import streamwin.spec._

/**
 * Flink SQL's CUMULATE windows: periods [s, s + size) aligned to `size` (plus offset), each split
 * into windows that share its start and grow by `step`: [s, s + step), [s, s + 2·step), …,
 * [s, s + size). A row belongs to every window of its period that ends after it. Only windows
 * holding a row are output (as Flink does), so a period's windows start at the step of its first
 * row, and every later window of the period holds that row too. Microseconds; `size` is a multiple
 * of `step`.
 *
 * Planning: a groupBy without policies pre-aggregates step-long slices map-side, which
 * [[CumulativeWindows]] keeps once per key and outputs each window from (so the cost stays flat as
 * size / step grows); policies and the select form replay rows through the same family.
 */
final case class CumulateWindowSpec(size: Long, step: Long, offset: Long) extends EventTimeWindowSpec {
  require(size > 0 && step > 0 && size % step == 0, "0 < step, size a multiple of step")
  override def function: String = Cumulate.sql.name

  /** Where periods start: `offset` reduced into [0, size). */
  val alignment: Long = Math.floorMod(offset, size)

  /** Start of the period holding `t`. */
  def periodStart(t: Long): Long = t - Math.floorMod(t - alignment, size)

  /** End of the shortest window of `t`'s period that holds `t`. */
  def firstEndHolding(t: Long): Long = {
    val start = periodStart(t)
    start + (Math.floorDiv(t - start, step) + 1) * step
  }

  /** Ends of the windows of `t`'s period that hold `t`, ascending. */
  def endsHolding(t: Long): Iterator[Long] =
    Iterator.iterate(firstEndHolding(t))(_ + step).takeWhile(_ <= periodStart(t) + size)

  override def describe(w: WindowCall): String =
    s"$function(${w.timeOrOrder}, size=${size}us, step=${step}us, offset=${offset}us" +
      s"${w.arrivalOrder.map(o => s", order_by=$o").getOrElse("")}${w.policies})"

  override def planGroupBy(policies: WindowPolicies, columns: WindowColumns): GroupByPlan =
    if (policies.replaysRows) GroupByPlan.ReplayRows
    else GroupByPlan.Slices(SliceStart(columns.timeOrOrder, step, Math.floorMod(alignment, step)), Nil, preAggregate = true)
  // A stream's step-long slices, pre-aggregated per micro-batch as for hopping windows (no policies:
  // lateness and late rows need each row's time).
  override def streamSlice(policies: WindowPolicies, columns: WindowColumns): Option[StreamSlices] =
    if (policies != WindowPolicies.Default) None
    else planGroupBy(policies, columns) match {
      case GroupByPlan.Slices(slice, Nil, true) => Some(StreamSlices(slice, Nil))
      case _ => None
    }

  override def planSelect(policies: WindowPolicies): SelectPlan = SelectPlan.ReplayRows
  override def family(policies: WindowPolicies): WindowFamily = CumulativeWindows(this, policies.lateness)
}

/**
 * The operator's family for cumulative windows: a row joins every window of its period ending after
 * it (each one open, or opened now), and is late for those that progress passed by more than the
 * lateness after their end; a window fires when progress reaches its end + lateness. The windows of
 * a period share their start, so the window state keys each by end - size (distinct across periods,
 * and in firing order); outputs report the period's start.
 */
final case class CumulativeWindows(spec: CumulateWindowSpec, lateness: Long) extends EventTimeFamily {
  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    EventTimeFamily.placeInKeyed(spec.endsHolding(time).map(end => (end - spec.size, end)), lateness, row, op)
  }

  /**
   * A step-long slice is kept once, in the key's kept slices, and opens the windows of its period
   * ending after it that are not open yet (those keyed after the newest open one: slices come in
   * time order); a window outputs the kept slices from its period's start to its end.
   */
  override def placeSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    val t = slice.time
    if (!slice.inOrder) {
      // A stream's slices: a period's windows share them; a period of one window aggregates its own.
      return if (spec.size > spec.step) placeSharedSlice(slice, op)
      else EventTimeFamily.placeSliceInFixed(Iterator(spec.periodStart(t)), spec.size, lateness, slice, op)
    }
    op.state.keptSlices.keep(t, slice.buffer)
    val newest = op.state.windowsDownFrom(t)
    val newestKey = if (newest.hasNext) newest.next().start else Long.MinValue
    spec.endsHolding(t).foreach(end => if (end - spec.size > newestKey) op.open(end - spec.size, end, NoContents))
    true
  }

  /**
   * A stream's slice ([[SharedSlices]]): kept once, shared by the windows of its period that hold it and
   * are open or not opened yet (opened without contents); late for those already fired, as its rows would be.
   */
  private def placeSharedSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    val t = slice.time
    val last = spec.periodStart(t) + spec.size
    var end = spec.firstEndHolding(t)
    while (end <= last && op.reached(end + lateness)) {
      op.arrivedLate(end - spec.size, end, null)
      end += spec.step
    }
    if (end > last) return false
    openUpTo(end, last, op)
    op.state.sharedSlices.add(t, t + spec.step, slice.buffer, slice.rows)
    true
  }

  /**
   * A stream read a key's shared slices back: the windows holding them that have not fired are open (each
   * was opened by the first of its slices, and a slice that came after a window fired is late for it).
   */
  override def sharedSlicesRestored(op: KeyedWindowOperator): Unit = {
    var next = Long.MinValue
    op.state.sharedSlices.entries.foreach { e =>
      val last = spec.periodStart(e.start) + spec.size
      var end = math.max(spec.firstEndHolding(e.start), next)
      while (end <= last && op.reached(end + lateness)) end += spec.step
      openUpTo(end, last, op)
      next = math.max(next, last + spec.step)
    }
  }

  /**
   * Opens the windows of a period ending from `end` to `last` that are not open. A slice opens every
   * window of its period from the first holding it to the last, and they fire by end: so once one is
   * open, every later one is.
   */
  private def openUpTo(from: Long, last: Long, op: KeyedWindowOperator): Unit = {
    var end = from
    while (end <= last && op.state.window(end - spec.size) == null) {
      op.open(end - spec.size, end, NoContents)
      end += spec.step
    }
  }

  /** A stored row of a key's state is one of its shared slices when it spans a step, not a period. */
  override def storesSharedSlice(start: Long, end: Long): Boolean = spec.size > spec.step && end - start == spec.step

  override def output(w: WindowEntry, kind: UTF8String, op: KeyedWindowOperator): Unit =
    if (w.contents eq NoContents) {
      val start = reportedStart(w)
      val aggregate =
        if (op.state.hasSharedSlices) op.state.sharedSlices.aggregate(start, w.end - 1, spec.size, spec.alignment)
        else op.state.keptSlices.aggregate(start, w.end - 1)
      op.contents.output.values(start, w.end, kind, aggregate)
    } else super.output(w, kind, op)

  // A stream's shared slices go once no open window holds them: every window of a period starts with it.
  override def afterClose(op: KeyedWindowOperator): Unit = if (op.state.hasSharedSlices) {
    val first = op.state.firstWindow
    op.state.sharedSlices.dropBefore(if (first == null) Long.MaxValue else reportedStart(first))
  }

  // A window fed slices was opened by a slice it holds.
  override def outputsWhenFired(w: WindowEntry, triggers: WindowTriggers): Boolean =
    (w.contents eq NoContents) || super.outputsWhenFired(w, triggers)

  override def fireAt(w: WindowEntry): Long = w.end + lateness

  override def reportedStart(w: WindowEntry): Long = spec.periodStart(w.end - 1)
}

/** `sw_cumulate`: Flink's CUMULATE windows (a daily total every minute). */
object Cumulate {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_cumulate",
    "_FUNC_(time, size, step[, 'offset', offset]) - Cumulative event-time windows (Flink CUMULATE): periods [offset + k*size, + size), each output at every step as [period start, period start + j*step) once it holds a row.",
    "SELECT k, _FUNC_(ts, '1 day', '1 hour') AS window, sum(v) FROM t GROUP BY k, _FUNC_(ts, '1 day', '1 hour');")(build)

  private val support: PolicyOptions.Support = {
    case "emit_empty" => "only cumulative windows holding rows are output (Flink CUMULATE)"
  }

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("time", "size", "step"),
      Seq("offset", "order_by", "partition_by") ++ PolicyOptions.optionNames, Set("partition_by"), args)
    val size = a.duration("size", a.positional("size"))
    val step = a.duration("step", a.positional("step"))
    if (size % step != 0) {
      throw StreamwinErrors.invalidArgument(a.function, "size",
        s"must be a whole multiple of step (${size}us is not a multiple of ${step}us): a period grows by whole steps")
    }
    val offset = a.option("offset").map(a.duration("offset", _, allowZero = true, allowNegative = true)).getOrElse(0L)
    val order = a.option("order_by")
    val policies = PolicyOptions.parse(a, orderGiven = order.isDefined, support, periodic = true)
    StreamWindow(CumulateWindowSpec(size, step, offset), (a.positional("time") +: order.toSeq) ++ a.optionValues("partition_by"),
      policies)
  }
}
