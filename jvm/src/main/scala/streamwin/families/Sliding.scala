package streamwin.families

import org.apache.spark.sql.catalyst.expressions.Expression

import streamwin.catalyst.{SliceStart, SqlWindowFunction, StreamWindow}
import streamwin.engine.{SlidingWindows, WindowFamily}
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

  override def describe(w: StreamWindow): String = s"$function(${w.timeOrOrder}, size=${size}us)"

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
  private val support: WindowPolicies.Support = {
    case "count_trigger" => "sliding windows overlap and share their rows, so a window's rows cannot be flushed alone"
    case "emit_empty" => "a sliding window exists only at an event time, so it is never empty"
  }

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("time", "size"), Seq("partition_by", "order_by") ++ WindowPolicies.optionNames,
      Set("partition_by"), args)
    val order = a.option("order_by")
    val policies = WindowPolicies.parse(a, orderGiven = order.isDefined, support)
    val size = a.duration("size", a.positional("size"))
    StreamWindow(SlidingWindowSpec(size), (a.positional("time") +: order.toSeq) ++ a.optionValues("partition_by"), policies)
  }
}
