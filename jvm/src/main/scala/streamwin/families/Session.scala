package streamwin.families

import org.apache.spark.sql.catalyst.expressions.{And, Cast, Expression, GreaterThan, If, IsNotNull, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate.{Max, Min}
import org.apache.spark.sql.types.{CalendarIntervalType, DayTimeIntervalType, LongType, StringType}

import streamwin.catalyst.{GapMicros, SliceStart, SqlWindowFunction, StreamWindow}
import streamwin.engine.{CutSessions, SessionWindows, Slice, SliceBounds, WindowFamily}
import streamwin.spec._

/**
 * Session windows: a session of a key extends while its next row is at most `gap` after the
 * session's end so far (the same merge rule as Spark's `session_window`), and ends at last + gap.
 * With a dynamic gap (`dynamicGap`, a per-row gap column) each row reaches to its time + its gap.
 *
 * `maxDuration` cuts long sessions as eKuiper's event-time SESSIONWINDOW does
 * (internal/topo/node/event_window_trigger.go, getNextSessionWindow): checks happen at the ends of
 * the max-duration periods aligned to the epoch, starting with the end of the period holding the
 * session's first row; when a row arrives after such a check time T and the session began before
 * T - maxDuration, the session ends at T, rows at T or later go to the next session, and that next
 * session is reported as starting at T. Microseconds.
 *
 * Planning: a groupBy without policies feeds slices to the window operator: gap-long buckets
 * pre-aggregated map-side with hidden min/max time (fixed gap), or one slice per timestamp with the
 * hidden max gap (dynamic gap). Plain sessions (fixed gap, no max duration) are [[SessionWindows]],
 * which replay rows under policies and in a select; the others are [[CutSessions]], which take no
 * policies and replay rows in event-time order (the gap as signal) in a select and in streams.
 */
final case class SessionWindowSpec(gap: Long, dynamicGap: Boolean, maxDuration: Option[Long]) extends EventTimeWindowSpec {
  require(dynamicGap || gap > 0, "gap must be positive")
  require(maxDuration.forall(d => !dynamicGap && d >= gap), "max_duration needs a fixed gap and must be >= gap")
  override def function: String = Session.sql.name
  override def hasSignal: Boolean = dynamicGap
  /** A dynamic gap, read as microseconds. */
  override def signalColumn: Option[InputColumn] = Some(
    InputColumn("gap", "a duration literal or an INTERVAL or STRING column (a dynamic gap)")({
      case CalendarIntervalType | _: DayTimeIntervalType | _: StringType => true
      case _ => false
    }, gap => GapMicros(if (gap.dataType.isInstanceOf[StringType]) Cast(gap, CalendarIntervalType) else gap)))

  /** A fixed gap and no max duration: the window operator replays these sessions under every policy. */
  def plain: Boolean = !dynamicGap && maxDuration.isEmpty

  /**
   * Length of the buckets whose rows surely share a session: shorter than the gap (consecutive rows
   * closer than the gap) and dividing the max duration (no check time inside a bucket).
   */
  def bucket: Long = maxDuration.map(d => gcd(gap, d)).getOrElse(gap)

  private def gcd(a: Long, b: Long): Long = if (b == 0) a else gcd(b, a % b)

  /** End of the max-duration period that holds `t` (the first check time of a session starting at t). */
  def firstCheckAfter(t: Long): Long = {
    val d = maxDuration.get
    t - Math.floorMod(t, d) + d
  }

  override def describe(w: StreamWindow): String =
    s"$function(${w.timeOrOrder}, gap=${if (dynamicGap) w.signal.get else s"${gap}us"}, max_duration=${maxDuration.map(d => s"${d}us").getOrElse("none")})"

  // Cut and dynamic-gap sessions follow event-time order only; their signal is the dynamic gap.
  override def replay(columns: WindowColumns): RowReplay =
    if (plain) super.replay(columns)
    else RowReplay(order = columns.timeOrOrder, signal = columns.signal, tiesAllowed = true, eventTime = Some(columns.timeOrOrder))

  override def planGroupBy(policies: WindowPolicies, columns: WindowColumns): GroupByPlan = {
    val time = columns.timeOrOrder
    if (policies.replaysRows) GroupByPlan.ReplayRows
    else columns.signal match {
      case None => GroupByPlan.Slices(SliceStart(time, bucket, 0), hiddenFunctions(columns), preAggregate = true)
      case Some(gap) =>
        // Rows without a usable gap open no session: a null slice, skipped and counted.
        GroupByPlan.Slices(If(And(IsNotNull(gap), GreaterThan(gap, Literal(0L))), SliceStart(time, 1, 0), Literal(null, LongType)),
          hiddenFunctions(columns), preAggregate = false)
    }
  }

  override def planSelect(policies: WindowPolicies): SelectPlan = SelectPlan.ReplayRows

  // A stream's rows arrive out of order across micro-batches: rows a key's progress may have passed
  // are sliced per timestamp, whose rows a session takes or refuses alike (a gap-long bucket could hold
  // a late row and a timely one); the others in gap-long buckets, as in batch.
  override def streamSlice(policies: WindowPolicies, columns: WindowColumns): Option[StreamSlices] =
    if (!plain || policies != WindowPolicies.Default) None
    else Some(StreamSlices(SliceStart(columns.timeOrOrder, 1, 0), hiddenFunctions(columns),
      settled = Some(SliceStart(columns.timeOrOrder, bucket, 0))))

  override def family(policies: WindowPolicies): WindowFamily =
    if (plain) SessionWindows(this, policies.lateness) else CutSessions(this)

  /** A slice's earliest and latest row time (fixed gap), or its largest gap (dynamic gap). */
  override def hiddenAggregates: Seq[HiddenAggregate] =
    if (dynamicGap) Seq(HiddenAggregate("max_gap", c => Max(c.signal.getOrElse(
      throw new IllegalStateException("a session with a dynamic gap reads its gap column")))))
    else Seq(HiddenAggregate("first_time", c => Min(c.timeOrOrder)), HiddenAggregate("last_time", c => Max(c.timeOrOrder)))

  override def sliceBounds(slots: HiddenSlots): SliceBounds =
    if (dynamicGap) DynamicGapBounds(slots("max_gap"))
    else FixedGapBounds(slots("first_time"), slots("last_time"), gap)
}

/** A slice of one timestamp reaching to its time + its largest gap. */
private final case class DynamicGapBounds(gapSlot: Int) extends SliceBounds {
  override def fill(s: Slice): Unit = {
    s.first = s.time
    s.last = s.time
    s.reach = s.time + s.buffer.getLong(gapSlot)
  }
}

/** A bucket from its earliest to its latest row, reaching a gap past the latest. */
private final case class FixedGapBounds(minSlot: Int, maxSlot: Int, gap: Long) extends SliceBounds {
  override def fill(s: Slice): Unit = {
    s.first = s.buffer.getLong(minSlot)
    s.last = s.buffer.getLong(maxSlot)
    s.reach = s.last + gap
  }
}

/** `sw_session`. */
object Session {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_session",
    "_FUNC_(time, gap[, 'max_duration', duration][, 'partition_by', column ...]) - Session windows that end gap after their last row (gap may be an INTERVAL or STRING column); max_duration cuts long sessions at aligned check times (eKuiper SESSIONWINDOW).",
    "SELECT k, _FUNC_(ts, '5 minutes', 'max_duration', '1 hour') AS window, count(*) FROM t GROUP BY k, _FUNC_(ts, '5 minutes', 'max_duration', '1 hour');")(
    build)

  /** Sessions are never empty; the eKuiper max-duration cut and dynamic gaps follow the slice path only. */
  private def support(plain: Boolean): WindowPolicies.Support = {
    case "emit_empty" => "a session always holds rows"
    case name if !plain && name != "order_by" =>
      "not available with max_duration or a dynamic gap (eKuiper's cut checks need rows in event-time order)"
    case "order_by" if !plain =>
      "not available with max_duration or a dynamic gap (eKuiper's cut checks need rows in event-time order)"
  }

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("time", "gap"),
      Seq("max_duration", "partition_by", "order_by") ++ WindowPolicies.optionNames, Set("partition_by"), args)
    val gapArg = a.positional("gap")
    // A literal is a fixed gap; any other expression is a per-row (dynamic) gap, as in session_window.
    val fixedGap = gapArg match {
      case _: Literal => Some(a.duration("gap", gapArg))
      case _ => None
    }
    val maxDuration = a.option("max_duration").map(a.duration("max_duration", _))
    (fixedGap, maxDuration) match {
      case (None, Some(_)) => throw StreamwinErrors.invalidArgument(a.function, "max_duration",
        "needs a fixed gap (a duration literal); with a dynamic gap column sessions cannot be cut (eKuiper rule)")
      case (Some(g), Some(d)) if d < g => throw StreamwinErrors.invalidArgument(a.function, "max_duration",
        s"must be at least the gap (${d}us < ${g}us): a session always lasts its gap")
      case _ =>
    }
    val order = a.option("order_by")
    val policies = WindowPolicies.parse(a, orderGiven = order.isDefined,
      support(plain = fixedGap.isDefined && maxDuration.isEmpty), periodic = true)
    val spec = SessionWindowSpec(fixedGap.getOrElse(0L), fixedGap.isEmpty, maxDuration)
    val children = (a.positional("time") +: (if (fixedGap.isEmpty) Seq(gapArg) else Nil)) ++ order.toSeq
    StreamWindow(spec, children ++ a.optionValues("partition_by"), policies)
  }
}
