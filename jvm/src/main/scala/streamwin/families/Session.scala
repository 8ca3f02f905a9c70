package streamwin.families

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{And, Cast, Expression, GenericInternalRow, GreaterThan, If, IsNotNull, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate.{Max, Min}
import org.apache.spark.sql.types.{CalendarIntervalType, DayTimeIntervalType, LongType, StringType}

import streamwin.catalyst.{GapMicros, SliceStart, SqlWindowFunction, StreamWindow}
import streamwin.engine._
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

  override def describe(w: WindowCall): String =
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
  private def support(plain: Boolean): PolicyOptions.Support = {
    case "emit_empty" => "a session always holds rows"
    case name if !plain && name != "order_by" =>
      "not available with max_duration or a dynamic gap (eKuiper's cut checks need rows in event-time order)"
    case "order_by" if !plain =>
      "not available with max_duration or a dynamic gap (eKuiper's cut checks need rows in event-time order)"
  }

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("time", "gap"),
      Seq("max_duration", "partition_by", "order_by") ++ PolicyOptions.optionNames, Set("partition_by"), args)
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
    val policies = PolicyOptions.parse(a, orderGiven = order.isDefined,
      support(plain = fixedGap.isDefined && maxDuration.isEmpty), periodic = true)
    val spec = SessionWindowSpec(fixedGap.getOrElse(0L), fixedGap.isEmpty, maxDuration)
    val children = (a.positional("time") +: (if (fixedGap.isEmpty) Seq(gapArg) else Nil)) ++ order.toSeq
    StreamWindow(spec, children ++ a.optionValues("partition_by"), policies)
  }
}

/**
 * Sessions (fixed gap): a row's own window is [t, t + gap); it joins every open session within a
 * gap of it (merging them when it bridges two), or opens a session when none is open there and its
 * own window is not dropped yet; otherwise it is late. A session [first, last + gap) fires when
 * progress reaches its end + lateness. A session keeps its rows (they are aggregated at each output).
 */
final case class SessionWindows(spec: SessionWindowSpec, lateness: Long) extends EventTimeFamily {
  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean =
    join(time, time + spec.gap, row, op, op.contents.kept())(op.enter(_, row))

  /**
   * The session of rows at `time` reaching to `reach`: they join every open session within a gap
   * (merging them), or open one (with `contents`) when none is open there and theirs is not dropped
   * yet; otherwise they are late (`lateRow` goes to the operator).
   */
  private def join(time: Long, reach: Long, lateRow: InternalRow, op: KeyedWindowOperator, contents: => WindowContents)(
      enter: WindowEntry => Unit): Boolean = {
    // Open sessions within a gap of the row (Spark's merge rule, as the batch session engine):
    // starting at or before time + gap and ending at or after time.
    val touching = new mutable.ArrayBuffer[WindowEntry]
    val candidates = op.state.windowsDownFrom(reach)
    var scanning = true
    while (scanning && candidates.hasNext) {
      val s = candidates.next()
      if (s.end >= time) touching += s else scanning = false
    }
    if (touching.isEmpty && op.reached(reach + lateness)) {
      op.arrivedLate(time, reach, lateRow)
      return false
    }
    val session = if (touching.isEmpty) new WindowEntry(time, reach, contents) else touching.last
    touching.foreach(s => op.state.removeWindow(s.start))
    touching.iterator.filter(_ ne session).foreach { s =>
      session.contents.absorb(s.contents)
      session.held += s.held
      session.end = math.max(session.end, s.end)
    }
    session.start = math.min(session.start, time)
    session.end = math.max(session.end, reach)
    op.state.putWindow(session)
    enter(session)
    true
  }

  /**
   * A slice of rows that surely share a session (a gap-long bucket): in time order, only the latest
   * session can be within a gap of it. It joins that one, or opens the next. A stream's slices (one
   * per timestamp, in no order across micro-batches) are placed as their rows would be.
   */
  override def placeSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    if (!slice.inOrder) {
      return join(slice.first, slice.reach, null, op, op.contents.buffered()) { session =>
        session.contents.mergeSlice(slice.buffer)
        op.enteredSlice(session, slice)
      }
    }
    val latest = op.state.windowsDownFrom(slice.reach)
    val session = if (latest.hasNext) latest.next() else null
    if (session != null && session.end >= slice.first) {
      session.contents.mergeSlice(slice.buffer)
      session.end = math.max(session.end, slice.reach)
      op.enteredSlice(session, slice)
    } else {
      op.enteredSlice(op.open(slice.first, slice.reach, op.contents.ofSlice(slice.buffer)), slice)
    }
    true
  }

  // Sessions never overlap, so their ends ascend with their starts.
  override def fireAt(w: WindowEntry): Long = w.end + lateness
}

/**
 * Sessions with a maximum duration or a dynamic gap (eKuiper's SESSIONWINDOW cut; see
 * [[SessionWindowSpec]] for the rules), in event-time order: a row older than the key's progress is
 * late. Fed rows (each one a slice of one instant, reaching to its time + its gap) or pre-aggregated
 * slices (gap-long buckets that do not straddle a check time), alike. The key's one open session is
 * a window; the latest slice is held apart in the key's record, because a cut at or before its first
 * row moves it into the next session (eKuiper keeps rows at the cut time for the next window).
 */
final case class CutSessions(spec: SessionWindowSpec) extends EventTimeFamily {
  override def recordForm: Option[FamilyRecordForm] = Some(CutSessionRecord.Form)
  // Event-time order is the arrival order; the signal is the dynamic gap. A row without a positive
  // gap is in no session: skipped, and its time moves nothing (as a null slice in batch).
  override def rowTime(order: Any, signal: Any): Any = if (gapOf(signal) > 0) order else null

  private def gapOf(signal: Any): Long =
    if (!spec.dynamicGap) spec.gap else if (signal == null) 0L else signal.asInstanceOf[Long]

  override def place(time: Long, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    val gap = gapOf(signal)
    if (time < op.state.progress) {
      op.arrivedLate(time, time + gap, row)
      return false
    }
    val contents = op.contents.buffered()
    contents.append(row)
    add(time, time, time + gap, contents, 1L, op)
    true
  }

  override def placeSlice(slice: Slice, op: KeyedWindowOperator): Boolean = {
    add(slice.first, slice.last, slice.reach, op.contents.ofSlice(slice.buffer), slice.rows, op)
    true
  }

  override def fireAt(w: WindowEntry): Long = w.end

  // The held-apart slice joins the session when progress closes it.
  override def beforeFire(w: WindowEntry, op: KeyedWindowOperator): Unit = absorbLatest(w, record(op), op)

  private def record(op: KeyedWindowOperator): CutSessionRecord = op.state.record match {
    case r: CutSessionRecord => r
    case _ =>
      val r = new CutSessionRecord
      op.state.record = r
      r
  }

  private def add(first: Long, last: Long, reach: Long, contents: WindowContents, rows: Long, op: KeyedWindowOperator): Unit = {
    val r = record(op)
    val session = op.state.firstWindow
    if (session == null) {
      begin(first, first, contents, rows, reach, r, op)
      return
    }
    if (r.latest != null && first == r.latestFirst && last == r.latestFirst) {
      // More rows of the latest slice's instant (a host feeding rows): they stay in that slice, so a
      // cut carries them together, and they close nothing.
      r.latest.absorb(contents)
      hold(first, r.latest, r.latestRows + rows, reach, session, r, op)
      return
    }
    // The gap closes the session before this slice's first row; a check time is crossed by the
    // first row after it (eKuiper checks row by row, advancing one period per row).
    var closeAt = if (first > session.end) session.end else Long.MaxValue
    var cut = false
    def check(): Unit = {
      val d = spec.maxDuration.get
      if (r.nextCheck - d > r.firstTime && r.nextCheck < closeAt) {
        closeAt = r.nextCheck
        cut = true
      }
      r.nextCheck += d
    }
    if (spec.maxDuration.isDefined) {
      val firstCrosses = first > r.nextCheck
      if ((if (closeAt == Long.MaxValue) last else first) > r.nextCheck) check()
      // A slice starts at most one period after the check time, so a later row of it can cross one
      // more check time (only when its first row crossed the previous one).
      if (!cut && closeAt == Long.MaxValue && firstCrosses && last > r.nextCheck) check()
    }
    if (closeAt == Long.MaxValue) {
      absorbLatest(session, r, op)
      hold(first, contents, rows, reach, session, r, op)
    } else if (!cut) {
      close(session, closeAt, r, op, absorb = true)
      begin(first, first, contents, rows, reach, r, op)
    } else {
      val carried = r.latestFirst >= closeAt
      val (carriedFirst, carriedContents, carriedRows, carriedReach) = (r.latestFirst, r.latest, r.latestRows, r.latestReach)
      close(session, closeAt, r, op, absorb = !carried)
      if (carried) {
        // The rows at or after the cut open the next session; the new slice then goes through the
        // rules again, within that session.
        begin(closeAt, carriedFirst, carriedContents, carriedRows, carriedReach, r, op)
        add(first, last, reach, contents, rows, op)
      } else {
        begin(closeAt, first, contents, rows, reach, r, op)
      }
    }
  }

  /** Outputs the session as [start, end) and drops it; the latest slice joins it first unless carried over. */
  private def close(session: WindowEntry, end: Long, r: CutSessionRecord, op: KeyedWindowOperator, absorb: Boolean): Unit = {
    if (absorb) absorbLatest(session, r, op)
    else { r.latest = null; op.keptRowsChanged(-r.latestRows) }
    session.end = end
    op.output(session, WindowKind.Final)
    op.drop(session)
  }

  /** Opens a session reported as starting at `reported`, whose first row is at `first`, holding the slice apart. */
  private def begin(reported: Long, first: Long, contents: WindowContents, rows: Long, reach: Long, r: CutSessionRecord,
      op: KeyedWindowOperator): Unit = {
    val session = op.open(reported, reach, op.contents.buffered())
    r.firstTime = first
    r.nextCheck = if (spec.maxDuration.isDefined) spec.firstCheckAfter(first) else Long.MaxValue
    r.latest = null
    hold(first, contents, rows, reach, session, r, op)
  }

  private def hold(first: Long, contents: WindowContents, rows: Long, reach: Long, session: WindowEntry, r: CutSessionRecord,
      op: KeyedWindowOperator): Unit = {
    op.keptRowsChanged(rows - (if (r.latest eq contents) r.latestRows else 0L))
    r.latestFirst = first
    r.latestReach = reach
    r.latest = contents
    r.latestRows = rows
    if (reach > session.end) session.end = reach
  }

  private def absorbLatest(session: WindowEntry, r: CutSessionRecord, op: KeyedWindowOperator): Unit = if (r.latest != null) {
    session.contents.absorb(r.latest)
    session.held += r.latestRows // the rows stay counted as held, now by the session
    r.latest = null
  }
}

/** What a key's [[CutSessions]] remember besides its window: its first row, the next check time, and its latest slice. */
final class CutSessionRecord extends FamilyRecord with Serializable {
  var firstTime = 0L
  var nextCheck = Long.MaxValue
  var latestFirst = 0L
  var latestReach = 0L
  var latestRows = 0L
  var latest: WindowContents = _
  override def heldContents: Iterator[WindowContents] = Option(latest).iterator
  override def release(): Unit = if (latest != null) { latest.clear(); latest = null }
}

object CutSessionRecord {
  /** Stored as `cut_session`: the times, and the latest slice's contents as a window's are stored. */
  object Form extends FamilyRecordForm {
    override val field = "cut_session"

    override def write(record: FamilyRecord, io: StoredRecordIO): Any = {
      val x = record.asInstanceOf[CutSessionRecord]
      new GenericInternalRow(Array[Any](x.firstTime, x.nextCheck, x.latestFirst, x.latestReach, x.latestRows,
        io.contentsValue(x.latest)))
    }

    override def read(row: InternalRow, ordinal: Int, io: StoredRecordIO): FamilyRecord = {
      val v = row.getStruct(ordinal, io.width(field))
      val x = new CutSessionRecord
      x.firstTime = v.getLong(0)
      x.nextCheck = v.getLong(1)
      x.latestFirst = v.getLong(2)
      x.latestReach = v.getLong(3)
      x.latestRows = v.getLong(4)
      x.latest = io.readContents(v, 5)
      x
    }
  }
}
