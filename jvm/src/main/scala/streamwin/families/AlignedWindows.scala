package streamwin.families

import org.apache.spark.sql.catalyst.expressions.{CurrentTimestamp, Expression}

import streamwin.catalyst.{SliceStart, SqlWindowFunction, StreamWindow}
import streamwin.engine.{AlignedWindows, WindowFamily}
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

  override def describe(w: StreamWindow): String = s"$function(${w.timeOrOrder}, size=${size}us, step=${step}us, offset=${offset}us" +
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
  val optionNames: Seq[String] = Seq("offset", "order_by", "partition_by") ++ WindowPolicies.optionNames

  /** Like window()'s windowDuration, slideDuration and startTime, these durations may be whole microseconds (SQL). */
  def duration(a: WindowArguments, name: String): Long = a.duration(name, a.positional(name), wholeMicros = true)

  def offset(a: WindowArguments): Long =
    a.option("offset").map(a.duration("offset", _, allowZero = true, allowNegative = true, wholeMicros = true)).getOrElse(0L)

  def window(a: WindowArguments, spec: TimeWindowSpec): StreamWindow = {
    val order = a.option("order_by")
    val policies = WindowPolicies.parse(a, orderGiven = order.isDefined, PartialFunction.empty, periodic = true)
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
  private val support: WindowPolicies.Support = {
    case "lateness" | "late" =>
      "timer windows follow processing time, where no row is late (KX timer); use sw_tumbling on an event time"
    case "order_by" => "timer windows take rows in the order of ingest_time, their arrival time"
  }

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("period"), Seq("ingest_time", "order_by") ++ WindowPolicies.optionNames,
      Set.empty, args)
    val period = a.duration("period", a.positional("period"))
    val policies = WindowPolicies.parse(a, orderGiven = false, support)
    // Without an arrival time, the whole input arrived at once: at the query's processing time.
    val ingestTime = a.option("ingest_time")
    StreamWindow(TimeWindowSpec(a.function, period, period, 0L, processingTime = ingestTime.isEmpty),
      Seq(ingestTime.getOrElse(CurrentTimestamp())),
      policies)
  }
}
