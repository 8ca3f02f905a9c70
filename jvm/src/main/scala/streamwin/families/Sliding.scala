package streamwin.families

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BasePredicate, BoundReference, CreateStruct, Expression,
  GenericInternalRow, JoinedRow, Predicate}
import org.apache.spark.sql.types.LongType
import org.apache.spark.unsafe.types.UTF8String

import streamwin.catalyst.{LastHit, SliceStart, SqlWindowFunction, StreamWindow}
import streamwin.engine._
import streamwin.spec._

/**
 * Per-event sliding windows (eKuiper SLIDINGWINDOW, Quix `sliding_window`): one window per distinct
 * event time t of a key, covering [t - size, t] with both ends inclusive. Rows sharing a timestamp
 * share that window (Quix: "every interval has a distinct aggregation"). Microseconds.
 *
 * With a `delay` (eKuiper `SLIDINGWINDOW(unit, size, delay)`), the window of t also takes the rows
 * that come up to `delay` after it: it covers [t - size, t + delay), its end is t + delay, and it is
 * output once the key's progress reaches that end. A zero size then is a window of what follows t
 * alone (eKuiper's change-data-capture example, `SLIDINGWINDOW(ss, 0, 10)`).
 *
 * With a `when` condition (eKuiper `SLIDINGWINDOW(...) OVER (WHEN condition)`), only the rows that
 * match it open a window; the other rows are kept all the same and join the windows whose range
 * holds them ("collect one second before and one second after the temperature crosses zero"). A
 * null condition is false. Rows then follow event-time order (the condition is the signal). The
 * condition may read eKuiper's `last_hit_time()` and `last_hit_count()` ([[LastHit]]): the time of
 * the last row that matched and how many did, before this row. Only the engine knows them, so such a
 * condition is evaluated by the engine, row by row (`trigger`, see [[bindSignal]]), and each key
 * remembers its last hit in its record.
 *
 * Planning: a groupBy without policies or delay aggregates one slice per timestamp after the shuffle
 * and feeds the slices to [[SlidingWindows]] (the key's slices in window-long blocks, see
 * [[streamwin.engine.TimestampSlices]]); policies, a delay and the select form replay rows through
 * the same family.
 */
final case class SlidingWindowSpec(size: Long, delay: Long = 0L, when: Boolean = false, trigger: Option[Expression] = None)
    extends EventTimeWindowSpec {
  require(size > 0 || (size == 0 && delay > 0), "size must be positive, or zero with a delay")
  require(delay >= 0, "delay must not be negative")
  override def function: String = Sliding.sql.name
  override def hasSignal: Boolean = when
  override def signalColumn: Option[InputColumn] = Some(InputColumn.boolean("when", "a BOOLEAN condition"))

  override def describe(w: WindowCall): String =
    s"$function(${w.timeOrOrder}, size=${size}us${if (delay > 0) s", delay=${delay}us" else ""}" +
      s"${w.signal.map(c => s", when=$c").getOrElse("")})"

  /**
   * A condition reading [[LastHit]] is the engine's to evaluate: the column fed is a struct of the
   * condition's parts that read the row, and `trigger` is the condition over the row [last hit time,
   * last hit count, those parts].
   */
  override def bindSignal(signal: Expression): (WindowSpec, Expression) =
    if (!signal.exists(_.isInstanceOf[LastHit])) super.bindSignal(signal)
    else {
      val parts = ArrayBuffer[Expression]()
      val bound = signal.transformDown {
        case LastHit(measure) => BoundReference(LastHit.measures.indexOf(measure), LongType, nullable = false)
        case part if part.references.nonEmpty && !part.exists(_.isInstanceOf[LastHit]) =>
          val known = parts.indexWhere(_.semanticEquals(part))
          val i = if (known >= 0) known else { parts += part; parts.size - 1 }
          BoundReference(LastHit.measures.size + i, part.dataType, part.nullable)
      }
      (copy(trigger = Some(bound)), CreateStruct(parts.toSeq))
    }

  // With a condition, rows follow event-time order and the condition is their signal.
  override def replay(columns: WindowColumns): RowReplay =
    if (!when) super.replay(columns)
    else RowReplay(order = columns.timeOrOrder, signal = columns.signal, tiesAllowed = true, eventTime = Some(columns.timeOrOrder))

  override def planGroupBy(policies: WindowPolicies, columns: WindowColumns): GroupByPlan =
    if (policies.replaysRows || delay > 0 || when) GroupByPlan.ReplayRows
    else GroupByPlan.Slices(SliceStart(columns.timeOrOrder, 1, 0), Nil, preAggregate = false) // one slice per timestamp

  override def planSelect(policies: WindowPolicies): SelectPlan = SelectPlan.ReplayRows

  override def family(policies: WindowPolicies): WindowFamily = SlidingWindows(this, policies.lateness)

  /** The end of the window of event time t: t itself (included), or t + delay (excluded). */
  def endOf(t: Long): Long = t + delay

  /** The latest row time the window of event time t holds. */
  def lastHeldBy(t: Long): Long = if (delay == 0) t else t + delay - 1

  /** How far before a row the event times of the windows holding it reach: windows of [time - reachBack, time + size]. */
  def reachBack: Long = if (delay == 0) 0L else delay - 1
}

/** `sw_sliding`. */
object Sliding {
  /** A key's last hit before any row matched: last_hit_time() and last_hit_count() are 0. */
  private[families] val NoHit: (Long, Long) = (0L, 0L)

  val sql: SqlWindowFunction = SqlWindowFunction("sw_sliding",
    "_FUNC_(time, size[, 'delay', delay][, 'when', condition][, 'partition_by', column ...]) - One window per event time t of a key, covering [t - size, t] with both ends inclusive (eKuiper SLIDINGWINDOW, Quix sliding_window); with a delay, [t - size, t + delay), output once progress reaches t + delay (eKuiper SLIDINGWINDOW(unit, size, delay)); with a condition, only the rows matching it open a window, the others join the windows holding them (eKuiper OVER (WHEN condition)).",
    "SELECT k, _FUNC_(ts, '1 hour') AS window, avg(temp) FROM t GROUP BY k, _FUNC_(ts, '1 hour');")(build)

  /** Overlapping windows, one per event time, never empty. */
  private val support: PolicyOptions.Support = {
    case "count_trigger" => "sliding windows overlap and share their rows, so a window's rows cannot be flushed alone"
    case "emit_empty" => "a sliding window exists only at an event time, so it is never empty"
  }

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("time", "size"), Seq("delay", "when", "partition_by", "order_by") ++ PolicyOptions.optionNames,
      Set("partition_by"), args)
    val order = a.option("order_by")
    val policies = PolicyOptions.parse(a, orderGiven = order.isDefined, support)
    val delay = a.option("delay").map(a.duration("delay", _, allowZero = true)).getOrElse(0L)
    // A window of what follows each row alone: only with a delay (eKuiper SLIDINGWINDOW(ss, 0, 10)).
    val sizeArgument = a.positional("size")
    if (delay == 0 && a.duration("size", sizeArgument, allowZero = true, allowNegative = true) == 0) {
      throw StreamwinErrors.invalidArgument(name, "size",
        s"must be positive, or zero with a delay (a window of what follows each row), got ${sizeArgument.sql}")
    }
    val size = a.duration("size", sizeArgument, allowZero = delay > 0)
    val when = a.option("when")
    // The condition is the rows' signal, so their order is the event time (see SlidingWindowSpec.replay).
    if (when.isDefined && order.isDefined) throw StreamwinErrors.invalidArgument(name, "order_by",
      "cannot be combined with `when`: the rows of a sliding window with a condition follow their event time")
    StreamWindow(SlidingWindowSpec(size, delay, when.isDefined),
      (a.positional("time") +: when.toSeq) ++ order.toSeq ++ a.optionValues("partition_by"), policies)
  }
}

/**
 * Per-event sliding windows: the window of event time t is [t - size, t], both ends inclusive (with a
 * delay: [t - size, t + delay), see [[SlidingWindowSpec]]), and holds every row in that range that
 * arrived before it fired, including rows that arrived before t did. It is opened by the first row at
 * t whose window is not dropped yet, and fires when progress passes its last row time + lateness (a
 * row at exactly the progress still joins it). A row joins its own window and every open window whose
 * range holds it; it is late when none is open. Windows are keyed by start (t - size) and share the
 * key's kept rows (by event time), which stay while an open or future window can hold them; each
 * output reads the rows of its range, so its cost grows with the window's row count.
 */
final case class SlidingWindows(spec: SlidingWindowSpec, lateness: Long) extends EventTimeFamily {
  // With a condition, the host feeds the event time as the order and the condition as the signal.
  override def rowTime(order: Any, signal: Any): Any = if (spec.when) order else signal

  @transient private lazy val trigger: Option[BasePredicate] = spec.trigger.map { condition =>
    val p = Predicate.create(condition, Nil)
    p.initialize(0)
    p
  }

  /** A condition reading the last hit: the key remembers (last hit time in ms, hit count). */
  override def newRecord(): FamilyRecord = if (spec.trigger.isEmpty) null else new DataRecord(Sliding.NoHit)
  override def recordForm: Option[FamilyRecordForm] = if (spec.trigger.isEmpty) None else Some(DataRecord.Form)

  /** The row's condition; one reading the last hit reads the key's, and updates it when it holds. */
  private def matches(time: Long, signal: Any, op: KeyedWindowOperator): Boolean = trigger match {
    case None => signal == true
    case Some(condition) =>
      val hits = op.state.record.asInstanceOf[DataRecord]
      val (lastTime, count) = hits.state.asInstanceOf[(Long, Long)]
      val hit = condition.eval(new JoinedRow(new GenericInternalRow(Array[Any](lastTime, count)),
        signal.asInstanceOf[InternalRow]))
      if (hit) hits.state = (Math.floorDiv(time, 1000L), count + 1)
      hit
  }

  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    val ownStart = time - spec.size
    val timely = !op.reached(spec.lastHeldBy(time) + lateness + 1)
    // A row behind its own window's firing opens none, so its condition is not asked (nor the last hit moved).
    val opens = !spec.when || (timely && matches(time, signal, op))
    val ownOpen = opens && timely
    // The windows holding the row are those of event times in [time - reachBack, time + size].
    def holding = op.state.windows(ownStart - spec.reachBack, true, time, true)
    // A late row joins no window but the open ones holding it (a row opening none: any of them); a
    // timely row that opens none is kept for the windows of later rows.
    if (!ownOpen && (if (opens) !holding.exists(_.start != ownStart) else !timely && holding.isEmpty)) {
      op.arrivedLate(ownStart, spec.endOf(time), row)
      return false
    }
    op.state.keepRow(time, row)
    op.keptRowsChanged(1)
    if (ownOpen && op.state.window(ownStart) == null) op.open(ownStart, spec.endOf(time), NoContents)
    // Under emit="update" the row also changes the earlier windows holding it: they output too.
    if (op.triggers.outputsEveryRow) holding.toVector.foreach(op.enter(_, row, append = false))
    true
  }

  /** A slice (one timestamp) is kept in the key's timestamp slices and opens its own window, which outputs the slices of its range. */
  override def placeSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    op.state.timestampSlices(spec.size).keep(slice.time, slice.buffer)
    op.open(slice.time - spec.size, slice.time, NoContents)
    true
  }

  /** The latest row time `w` holds (its end, or just before it with a delay). */
  private def lastHeld(w: WindowEntry): Long = spec.lastHeldBy(w.start + spec.size)

  override def fireAt(w: WindowEntry): Long = lastHeld(w) + lateness + 1

  override def outputsWhenFired(w: WindowEntry, triggers: WindowTriggers): Boolean = true

  override def output(w: WindowEntry, kind: UTF8String, op: KeyedWindowOperator): Unit =
    if (op.state.hasTimestampSlices) {
      op.contents.output.values(w.start, w.end, kind, op.state.timestampSlices(spec.size).aggregate(w.start, w.end))
    } else op.state.aggregateKeptRows(w.start, lastHeld(w)) match {
      case Some(values) => op.contents.output.values(w.start, w.end, kind, values)
      case None => op.contents.output.rows(w.start, w.end, kind, op.state.keptRows(w.start, lastHeld(w)))
    }

  override def afterClose(op: KeyedWindowOperator): Unit = {
    // Rows older than every open or future window's range are no longer needed: a future window is
    // that of a row not late yet, whose last row time is at or after progress - lateness.
    val progress = op.state.progress
    val dropped =
      if (progress == Long.MaxValue) op.state.dropKeptBefore(Long.MaxValue)
      else {
        val first = op.state.firstWindow
        val futureStart = progress - lateness - spec.reachBack - spec.size
        op.state.dropKeptBefore(if (first == null) futureStart else math.min(first.start, futureStart))
      }
    op.keptRowsChanged(-dropped)
  }

  // A key's last hit is kept as long as the stream runs (as eKuiper keeps it).
  override def holdsNothing(state: WindowState): Boolean = !state.hasWindows && !state.hasKeptRows &&
    (state.record == null || state.record.asInstanceOf[DataRecord].state == Sliding.NoHit)

  // A later row that is not late (its window's last row time >= progress - lateness) reads kept rows
  // back to its time - size: once progress passes the newest kept row + lateness + reachBack + size,
  // afterClose drops them all.
  override def releaseAt(state: WindowState): Long =
    if (!state.hasKeptRows) Long.MaxValue else state.lastKeptTime + lateness + spec.reachBack + spec.size + 1
}
