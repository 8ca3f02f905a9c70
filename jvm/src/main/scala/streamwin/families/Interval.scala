package streamwin.families

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression

import streamwin.catalyst.{SqlWindowFunction, StreamWindow}
import streamwin.engine._
import streamwin.spec._

/**
 * IBM Streams SPL timeInterval windows: panes [offset + k·period, offset + k·period + duration). A
 * pane is emitted (kind `final`) when the key's event-time progress (the largest event time seen
 * so far in arrival order) reaches its end; a row that arrives later but before progress reaches
 * end + discardAge updates the pane, which is emitted again whole (kind `update`); after that the
 * pane is gone and rows for it are late. Microseconds.
 *
 * Planning: always replayed through [[IntervalPanes]], in the order of the `order_by` column (the
 * spec's signal), or in event-time order.
 */
final case class IntervalWindowSpec(duration: Long, period: Long, discardAge: Long, offset: Long, arrivalOrder: Boolean)
    extends EventTimeWindowSpec {
  require(duration > 0 && period > 0 && discardAge >= 0, "duration > 0, period > 0, discard_age >= 0")
  override def function: String = Interval.sql.name
  /** With an explicit order_by, rows arrive in that order (and may be late); without, in event-time order. */
  override def hasSignal: Boolean = arrivalOrder
  override def signalColumn: Option[InputColumn] = Some(InputColumn.Order)

  private val alignment = Math.floorMod(offset, period)

  /** Starts of the panes holding `t`, ascending. */
  def paneStartsHolding(t: Long): Iterator[Long] = {
    val last = t - Math.floorMod(t - alignment, period)
    val first = last - ((duration - 1) / period) * period
    Iterator.iterate(first)(_ + period).takeWhile(_ <= last).filter(s => t < s + duration)
  }

  override def describe(w: WindowCall): String =
    s"$function(${w.timeOrOrder}, duration=${duration}us, period=${period}us, discard_age=${discardAge}us, " +
      s"offset=${offset}us, order_by=${w.signal.getOrElse(w.timeOrOrder)})"

  // The order_by is the signal column; the event time is what the panes read.
  override def replay(columns: WindowColumns): RowReplay = RowReplay(
    order = columns.signal.getOrElse(columns.timeOrOrder), signal = Some(columns.timeOrOrder),
    tiesAllowed = columns.signal.isEmpty, eventTime = Some(columns.timeOrOrder))

  override def planGroupBy(policies: WindowPolicies, columns: WindowColumns): GroupByPlan = GroupByPlan.ReplayRows
  override def planSelect(policies: WindowPolicies): SelectPlan = SelectPlan.ReplayRows
  override def family(policies: WindowPolicies): WindowFamily = IntervalPanes(this)
}

/** `sw_interval`. */
object Interval {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_interval",
    "_FUNC_(time, duration[, 'creation_period', period][, 'discard_age', age][, 'offset', offset][, 'order_by', column][, 'partition_by', column ...]) - SPL timeInterval panes [offset + k*period, + duration): final when event-time progress reaches the end, emitted again as update for late rows until end + discard_age.",
    "SELECT k, _FUNC_(ts, '10 seconds', 'creation_period', '5 seconds', 'discard_age', '15 seconds', 'order_by', seq) AS window, sum(v) FROM t GROUP BY k, _FUNC_(ts, '10 seconds', 'creation_period', '5 seconds', 'discard_age', '15 seconds', 'order_by', seq);")(
    build)

  /** discard_age is its lateness; late re-triggers are its update emission. */
  private val support: PolicyOptions.Support = {
    case "lateness" => "use discard_age: SPL keeps a pane open for late rows until its end + discard_age"
    case "count_trigger" =>
      "SPL timeInterval re-emits a pane whole for late rows, which a count trigger would have split"
    case "emit_empty" => "SPL timeInterval emits only panes that hold rows"
  }

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("time", "duration"),
      Seq("creation_period", "discard_age", "offset", "order_by", "partition_by") ++ PolicyOptions.optionNames,
      Set("partition_by"), args)
    val policies = PolicyOptions.parse(a, orderGiven = false, support)
    val duration = a.duration("duration", a.positional("duration"))
    val period = a.option("creation_period").map(a.duration("creation_period", _)).getOrElse(duration)
    val discardAge = a.option("discard_age").map(a.duration("discard_age", _, allowZero = true)).getOrElse(0L)
    val offset = a.option("offset").map(a.duration("offset", _, allowZero = true, allowNegative = true)).getOrElse(0L)
    val order = a.option("order_by")
    val spec = IntervalWindowSpec(duration, period, discardAge, offset, arrivalOrder = order.isDefined)
    StreamWindow(spec, (a.positional("time") +: order.toSeq) ++ a.optionValues("partition_by"), policies)
  }
}

/**
 * SPL timeInterval panes [offset + k·period, … + duration): a pane fires (`final`) when progress
 * reaches its end; a row that arrives later but before progress reaches end + discard age joins
 * it, and the pane fires again whole (`update`); after that the pane is gone and rows for it are
 * late. A row in no pane at all is skipped, not late.
 */
final case class IntervalPanes(spec: IntervalWindowSpec) extends EventTimeFamily {
  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean =
    EventTimeFamily.placeInFixed(spec.paneStartsHolding(time), spec.duration, spec.discardAge, row, op)

  override def fireAt(w: WindowEntry): Long = w.end
  override def dropAt(w: WindowEntry): Long = w.end + spec.discardAge
  override def refires: Boolean = true
}
