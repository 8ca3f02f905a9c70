package streamwin.families

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String
import org.apache.spark.sql.catalyst.expressions.{CurrentTimestamp, Expression}

import streamwin.catalyst.{SliceStart, SqlWindowFunction, StreamWindow}
import streamwin.engine._
import streamwin.spec._

/**
 * Aligned event-time windows (tumbling, hopping, timer): windows start at `offset + k * step` for
 * every integer k and last `size`, as [start, end). All values in microseconds. A hopping window
 * whose step exceeds its size leaves gaps that belong to no window.
 *
 * Planning: under policies that need arrival order, rows replay through [[AlignedWindows]]; else a
 * tumbling window is one slice (Spark's hash aggregation by window start), and other aligned windows
 * pre-aggregate slices of gcd(size, step) map-side, which the window operator combines into windows
 * ([[AlignedWindows.placeSlice]]). A select places rows by their time alone.
 *
 * @param processingTime the windows follow the query's processing time (`sw_timer` without an
 *                       ingest_time column): on a stream, the clock that closes them is Spark's
 */
final case class TimeWindowSpec(function: String, size: Long, step: Long, offset: Long, processingTime: Boolean = false)
    extends EventTimeWindowSpec with FixedTimeWindows {
  require(size > 0 && step > 0, "size and step must be positive")
  override def leadingColumn: InputColumn = if (function == Timer.sql.name) InputColumn.eventTime("ingest_time") else InputColumn.Time

  /** Windows are unions of slices of this length: the largest unit that divides size and step. */
  val slice: Long = gcd(size, step)

  /** The offset reduced into [0, step), so that the alignment arithmetic never overflows. */
  val alignment: Long = Math.floorMod(offset, step)

  /** Windows overlap (step < size): each slice is shared by several windows. */
  def overlapping: Boolean = step < size

  /** Start of the slice holding `t`. */
  def sliceStart(t: Long): Long = t - Math.floorMod(t - alignment, slice)

  /** Start of the latest window that starts at or before `t`. */
  def lastStartAtOrBefore(t: Long): Long = t - Math.floorMod(t - alignment, step)

  /** Start of the earliest window that ends after `t` (it holds `t` only if it starts at or before t). */
  def firstStartEndingAfter(t: Long): Long = lastStartAtOrBefore(t - size) + step

  /** True when `t` falls into no window (only possible when step > size). */
  def inGap(t: Long): Boolean = firstStartEndingAfter(t) > t

  /** Starts of all windows holding `t`, ascending. */
  def windowStartsHolding(t: Long): Iterator[Long] = {
    val first = firstStartEndingAfter(t)
    Iterator.iterate(first)(_ + step).takeWhile(_ <= t)
  }

  private def gcd(a: Long, b: Long): Long = if (b == 0) a else gcd(b, a % b)

  override def describe(w: WindowCall): String = s"$function(${w.timeOrOrder}, size=${size}us, step=${step}us, offset=${offset}us" +
    s"${w.arrivalOrder.map(o => s", order_by=$o").getOrElse("")}${w.policies})"

  override def followsProcessingTime: Boolean = processingTime

  override def planGroupBy(policies: WindowPolicies, columns: WindowColumns): GroupByPlan =
    if (size == step && columns.arrivalOrder.isDefined && !policies.emitsMoreThanFinal) {
      GroupByPlan.OrderedHashPerWindow(SliceStart(columns.timeOrOrder, size, alignment), size, columns.arrivalOrder.get,
        columns.timeOrOrder)
    } else if (policies.replaysRows) GroupByPlan.ReplayRows
    else if (size == step) GroupByPlan.HashPerWindow(SliceStart(columns.timeOrOrder, size, alignment), size)
    else GroupByPlan.Slices(SliceStart(columns.timeOrOrder, slice, Math.floorMod(alignment, slice)), Nil, preAggregate = true)

  override def planSelect(policies: WindowPolicies): SelectPlan =
    if (policies.replaysRows) SelectPlan.ReplayRows else SelectPlan.TagByTime(this)

  // Processing-time windows place rows by the micro-batch's clock, not by a column. Lateness and late
  // rows matter in a stream (rows arrive out of order across micro-batches): they need each row's time.
  override def streamSlice(policies: WindowPolicies, columns: WindowColumns): Option[StreamSlices] =
    if (processingTime || policies != WindowPolicies.Default) None
    else planGroupBy(policies, columns) match {
      case GroupByPlan.HashPerWindow(windowStart, _) => Some(StreamSlices(windowStart, Nil))
      case GroupByPlan.Slices(slice, Nil, true) => Some(StreamSlices(slice, Nil))
      case _ => None
    }

  override def family(policies: WindowPolicies): WindowFamily = AlignedWindows(this, policies.lateness, policies.emitEmpty)
}

/** What tumbling and hopping windows share: their options, and every policy; `order_by` makes them replay rows in that order. */
private object EventTimeAligned {
  val optionNames: Seq[String] = Seq("offset", "order_by", "partition_by") ++ PolicyOptions.optionNames

  /** Like window()'s windowDuration, slideDuration and startTime, these durations may be whole microseconds (SQL). */
  def duration(a: WindowArguments, name: String): Long = a.duration(name, a.positional(name), wholeMicros = true)

  def offset(a: WindowArguments): Long =
    a.option("offset").map(a.duration("offset", _, allowZero = true, allowNegative = true, wholeMicros = true)).getOrElse(0L)

  def window(a: WindowArguments, spec: TimeWindowSpec): StreamWindow = {
    val order = a.option("order_by")
    val policies = PolicyOptions.parse(a, orderGiven = order.isDefined, PartialFunction.empty, periodic = true)
    StreamWindow(spec, (a.positional("time") +: order.toSeq) ++ a.optionValues("partition_by"), policies)
  }
}

/** `sw_tumbling`: tumbling event-time windows (KX tumbling, eKuiper TUMBLINGWINDOW, Quix tumbling_window). */
object Tumbling {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_tumbling",
    "_FUNC_(time, size[, 'offset', offset]) - Tumbling event-time windows [offset + k*size, offset + (k+1)*size).",
    "SELECT k, _FUNC_(ts, '10 seconds') AS window, avg(v) FROM t GROUP BY k, _FUNC_(ts, '10 seconds');")(build)

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("time", "size"), EventTimeAligned.optionNames, Set("partition_by"), args)
    val size = EventTimeAligned.duration(a, "size")
    EventTimeAligned.window(a, TimeWindowSpec(a.function, size, size, EventTimeAligned.offset(a)))
  }
}

/** `sw_hopping`: hopping event-time windows (KX sliding, eKuiper HOPPINGWINDOW, Quix hopping_window). */
object Hopping {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_hopping",
    "_FUNC_(time, size, step[, 'offset', offset]) - Hopping event-time windows of length size starting every step.",
    "SELECT _FUNC_(ts, '1 minute', '10 seconds') AS window, count(*) FROM t GROUP BY _FUNC_(ts, '1 minute', '10 seconds');")(
    build)

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("time", "size", "step"), EventTimeAligned.optionNames, Set("partition_by"), args)
    val size = EventTimeAligned.duration(a, "size")
    val step = EventTimeAligned.duration(a, "step")
    EventTimeAligned.window(a, TimeWindowSpec(a.function, size, step, EventTimeAligned.offset(a)))
  }
}

/** `sw_timer`: processing-time windows (KX timer, SPL time(T)), aligned windows on the arrival time. */
object Timer {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_timer",
    "_FUNC_(period[, 'ingest_time', column]) - Processing-time windows: what arrived in each period, by ingest_time, or all rows at the query's processing time when none is given (KX timer, SPL time(T)).",
    "SELECT _FUNC_('5 seconds', 'ingest_time', arrived) AS window, count(*) FROM t GROUP BY _FUNC_('5 seconds', 'ingest_time', arrived);")(
    build)

  /** Processing-time windows: nothing is late (KX timer has no lateness). */
  private val support: PolicyOptions.Support = {
    case "lateness" | "late" =>
      "timer windows follow processing time, where no row is late (KX timer); use sw_tumbling on an event time"
    case "order_by" => "timer windows take rows in the order of ingest_time, their arrival time"
  }

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("period"), Seq("ingest_time", "order_by") ++ PolicyOptions.optionNames,
      Set.empty, args)
    val period = a.duration("period", a.positional("period"))
    val policies = PolicyOptions.parse(a, orderGiven = false, support)
    // Without an arrival time, the whole input arrived at once: at the query's processing time.
    val ingestTime = a.option("ingest_time")
    StreamWindow(TimeWindowSpec(a.function, period, period, 0L, processingTime = ingestTime.isEmpty),
      Seq(ingestTime.getOrElse(CurrentTimestamp())),
      policies)
  }
}

/**
 * Aligned windows (tumbling, hopping, timer): a row joins every window [start, end) holding it; a
 * window fires when progress reaches end + lateness (KX: "greater or equal to the window's end time
 * + allowed lateness"). With `emit_empty`, the empty windows since the key's previous fired window
 * are output just before a window fires.
 */
final case class AlignedWindows(spec: TimeWindowSpec, lateness: Long, emitEmpty: Boolean) extends EventTimeFamily {
  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean =
    EventTimeFamily.placeInFixed(spec.windowStartsHolding(time), spec.size, lateness, row, op)

  /**
   * A slice of gcd(size, step) is kept once, in the key's kept slices, and opens the windows holding
   * it that are not open yet (those after the newest open one: slices come in time order); a window
   * outputs the kept slices of its range.
   */
  override def placeSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    val t = slice.time
    if (spec.inGap(t)) return false
    if (!slice.inOrder) {
      // A stream's slices: windows that overlap share them; other windows aggregate their own, as they would rows.
      return if (spec.overlapping) placeSharedSlice(slice, op)
      else EventTimeFamily.placeSliceInFixed(spec.windowStartsHolding(t), spec.size, lateness, slice, op)
    }
    op.state.keptSlices.keep(t, slice.buffer)
    // Slices come in time order, so every open window starts at or before t.
    val newest = op.state.lastWindow
    val newestStart = if (newest == null) Long.MinValue else newest.start
    // Only the windows after the newest open one are new: a direct loop, as this runs once per slice.
    var start = spec.firstStartEndingAfter(t)
    if (newestStart >= start) start = newestStart + spec.step
    val last = spec.lastStartAtOrBefore(t)
    while (start <= last) {
      op.open(start, start + spec.size, NoContents)
      start += spec.step
    }
    true
  }

  /**
   * A stream's slice of overlapping windows ([[SharedSlices]]): kept once, shared by the windows holding
   * it that are open or not opened yet (opened without contents); late for those already fired. A window
   * that holds its own buffer (one stored by a version before shared slices) merges the slice into it.
   */
  private def placeSharedSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    val t = slice.time
    // The windows holding t start from `first` to t; those progress passed (the oldest) fired already.
    var start = spec.firstStartEndingAfter(t)
    while (start <= t && op.reached(start + spec.size + lateness)) {
      op.arrivedLate(start, start + spec.size, null)
      start += spec.step
    }
    if (start > t) return false
    val oldest = op.state.firstWindow
    if (oldest == null || (oldest.contents eq NoContents)) openMissing(start, t, op)
    else {
      // Windows stored with buffers of their own start before every window made of shared slices.
      var shared = false
      while (start <= t) {
        var w = op.state.window(start)
        if (w == null) w = op.open(start, start + spec.size, NoContents)
        if (w.contents eq NoContents) shared = true
        else {
          w.contents.mergeSlice(slice.buffer)
          op.enteredSlice(w, slice)
        }
        start += spec.step
      }
      if (!shared) return true
    }
    op.state.sharedSlices.add(t, t + spec.slice, slice.buffer, slice.rows)
    true
  }

  /**
   * Opens the windows starting in [from, to] that are not open, without contents. A key's open windows
   * are mostly one run of consecutive starts (slices come in time order): then only the windows before
   * and after the run are looked at.
   */
  private def openMissing(from: Long, to: Long, op: KeyedWindowOperator): Unit = {
    val oldest = op.state.firstWindow
    val newest = op.state.lastWindow
    val consecutive = oldest != null && op.state.windowCount == (newest.start - oldest.start) / spec.step + 1
    var start = from
    if (oldest == null || consecutive) {
      val below = if (oldest == null) to else math.min(to, oldest.start - spec.step)
      while (start <= below) { op.open(start, start + spec.size, NoContents); start += spec.step }
      if (oldest != null) {
        start = math.max(from, newest.start + spec.step)
        while (start <= to) { op.open(start, start + spec.size, NoContents); start += spec.step }
      }
    } else {
      while (start <= to) {
        if (op.state.window(start) == null) op.open(start, start + spec.size, NoContents)
        start += spec.step
      }
    }
  }

  /**
   * A stream read a key's shared slices back: the windows holding them that have not fired are open
   * (each was opened by the first of its slices, and a slice that came after a window fired is late
   * for it, so not in it). Slices come by ascending start, so each window is looked at once.
   */
  override def sharedSlicesRestored(op: KeyedWindowOperator): Unit = {
    // Windows stored with buffers of their own were restored before: look each window up only then.
    val noneOpen = op.state.firstWindow == null
    var next = Long.MinValue
    op.state.sharedSlices.entries.foreach { e =>
      var start = math.max(spec.firstStartEndingAfter(e.start), next)
      while (start <= e.start && op.reached(start + spec.size + lateness)) start += spec.step
      while (start <= e.start) {
        if (noneOpen || op.state.window(start) == null) op.open(start, start + spec.size, NoContents)
        start += spec.step
      }
      next = math.max(next, start)
    }
  }

  /** A stored row of a key's state is one of its shared slices when it spans a slice, not a window. */
  override def storesSharedSlice(start: Long, end: Long): Boolean = spec.overlapping && end - start == spec.slice

  override def output(w: WindowEntry, kind: UTF8String, op: KeyedWindowOperator): Unit =
    if (w.contents ne NoContents) super.output(w, kind, op)
    else if (op.state.hasSharedSlices) op.contents.output.values(w.start, w.end, kind, op.state.sharedSlices.aggregate(w.start, w.end - 1, spec.size, spec.alignment))
    else op.contents.output.values(w.start, w.end, kind, op.state.keptSlices.aggregate(w.start, w.end - 1))

  // A stream's shared slices go once no open window holds them.
  override def afterClose(op: KeyedWindowOperator): Unit = if (op.state.hasSharedSlices) {
    val first = op.state.firstWindow
    op.state.sharedSlices.dropBefore(if (first == null) Long.MaxValue else first.start)
  }

  // A window fed slices was opened by a slice it holds.
  override def outputsWhenFired(w: WindowEntry, triggers: WindowTriggers): Boolean =
    (w.contents eq NoContents) || super.outputsWhenFired(w, triggers)

  override def fireAt(w: WindowEntry): Long = w.end + lateness

  override def beforeFire(w: WindowEntry, op: KeyedWindowOperator): Unit = if (emitEmpty) {
    op.state.lastClosedStart.foreach { previous =>
      var empty = previous + spec.step
      while (empty < w.start) {
        op.outputEmpty(empty, empty + spec.size)
        empty += spec.step
      }
    }
    op.state.lastClosedStart = Some(w.start)
  }

  // Gap filling remembers the last fired window for as long as the key lives.
  override def holdsNothing(state: WindowState): Boolean = !state.hasWindows && !emitEmpty
}
