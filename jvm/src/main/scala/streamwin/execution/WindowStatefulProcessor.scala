package streamwin.execution

import scala.collection.mutable

import org.apache.spark.sql.{Encoders, Row}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, BoundReference, InterpretedOrdering, SortOrder}
import org.apache.spark.sql.types.LongType
import org.apache.spark.sql.streaming._
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.metric.SQLMetric

import streamwin.engine.{KeyedWindowOperator, RowBag, RowWindowEngine}

/** What moves a streaming key's time on besides its own rows. */
sealed trait StreamClock extends Serializable
object StreamClock {
  /** Only the key's rows (count and data windows, or no watermark defined). */
  case object Rows extends StreamClock
  /** Spark's event-time watermark (`withWatermark`): closes windows of keys that went idle. */
  case object Watermark extends StreamClock
  /** The trigger's processing time (`sw.timer`). */
  case object ProcessingTime extends StreamClock
}

/**
 * The streaming host: Spark's `transformWithState` calls it per key and micro-batch, and it runs
 * the same engine as the batch execs over the key's new rows, in arrival order (order_by, or event
 * time, within the micro-batch; micro-batches arrive in order). Windows that slice (streamSlice) are
 * fed slices instead (`sliceOrdinal`: the rows are Spark's partial aggregates per key and slice of
 * the micro-batch, see [[SliceFeeder]]). Between micro-batches the key's state lives in the state
 * store: typed (the open windows and their buffers, [[StoredSliceWindows]]) for slice-fed windows,
 * else the engine as bytes (one ValueState, see [[streamwin.engine.EngineStateCodec]]);
 * a timer at the engine's next deadline brings it back when the watermark (or processing time)
 * passes, so windows of idle keys close too. A stream has no end: no `partial` teardown windows.
 * With idle_timeout the query runs in processing time (Spark's timers are then processing-time
 * timers; the watermark, when there is one, is read at each visit): each key's timer is the time its
 * held rows time out ([[RowWindowEngine.idleDeadline]]), and a key holding none but with windows the
 * watermark has yet to close is visited again one timeout later.
 * `metrics` (created on the driver, updated by every task) count rows as the batch execs do, summed
 * over the micro-batches of the query's run.
 *
 * @param keys the grouping columns written into output rows (empty for a select, which writes
 *             the input row itself, and for a window over the whole stream)
 */
final class WindowStatefulProcessor(
    blueprint: WindowEngineBlueprint,
    keys: Seq[Attribute],
    order: Attribute,
    signal: Option[Attribute],
    tiesAllowed: Boolean,
    clock: StreamClock,
    val metrics: Map[String, SQLMetric],
    sliceOrdinal: Option[Int] = None) extends StatefulProcessor[Row, Row, Row] {

  // Each key's engine, Java-serialized (windows fed rows), or its typed windows (fed slices).
  @transient private var engineState: ValueState[Array[Byte]] = _
  @transient private var windowsState: ValueState[InternalRow] = _
  // The timer the current key registered, as its typed state says (fed slices).
  @transient private var storedTimer: Option[Long] = None
  @transient private lazy val pending = new mutable.ArrayBuffer[InternalRow]
  @transient private var currentKey: InternalRow = InternalRow.empty
  // idle_timeout (µs of processing time), 0 when none: the query then runs in processing time. The
  // query's own value, not the one a key's stored engine was created with.
  private val idleTimeout = blueprint.policies.idleTimeout
  @transient private lazy val wiring = blueprint.wire(() => currentKey, row => pending += row)
  @transient private lazy val feeder =
    new EngineFeeder(blueprint.spec, blueprint.input, order, signal, tiesAllowed)
  @transient private lazy val sliceFeeder = sliceOrdinal.map { ordinal =>
    (new SliceFeeder(blueprint.spec, wiring.evaluator.get, ordinal, inOrder = false),
      new InterpretedOrdering(Seq(SortOrder(BoundReference(ordinal, LongType, nullable = true), Ascending))))
  }
  @transient private lazy val fed: FedRows = sliceFeeder.map(_._1).getOrElse(feeder)
  @transient private lazy val storedWindows = new StoredSliceWindows(wiring.evaluator.get)
  // transformWithState hands over external Rows; the engine works on InternalRows (code-generated
  // conversions both ways; the serializer reuses its row, so rows the engine keeps are copied).
  @transient private lazy val keyToInternal = RowConverters.toInternal(DataTypeUtils.fromAttributes(keys))
  @transient private lazy val rowToInternal = RowConverters.toInternal(DataTypeUtils.fromAttributes(blueprint.input))
  @transient private lazy val toExternal = RowConverters.toExternal(DataTypeUtils.fromAttributes(blueprint.output))

  // A checkpoint of the same query written when its rows were fed one by one (an earlier streamwin)
  // holds engines under `engine`: slice-fed windows check it for keys they do not know.
  override def init(outputMode: OutputMode, timeMode: TimeMode): Unit = {
    engineState = getHandle.getValueState[Array[Byte]]("engine", Encoders.BINARY, TTLConfig.NONE)
    if (sliceOrdinal.isDefined) {
      windowsState = getHandle.getValueState[InternalRow](StoredSliceWindows.StateName, storedWindows.stateEncoder, TTLConfig.NONE)
    }
  }

  // One read per variable: a ValueState's exists() is a get() (a state store read and a decode), and
  // get() gives null for a key without state.
  private def storedEngine(): Option[RowWindowEngine] =
    if (windowsState == null) {
      Option(engineState.get()).map(wiring.codec.decode)
    } else {
      val stored = windowsState.get()
      if (stored != null) {
        val engine = startedEngine()
        storedTimer = storedWindows.restore(stored, sliceOperator(engine))
        Some(engine)
      } else withoutStoredWindows()
    }

  /** A key without typed windows: a new key, or one an earlier streamwin kept as an engine (it fails). */
  private def withoutStoredWindows(): Option[RowWindowEngine] = {
    storedTimer = None
    if (engineState.exists()) {
      throw new IllegalStateException("streamwin: this streaming checkpoint holds window state written by an " +
        "earlier streamwin version, which fed this window row by row; this version pre-aggregates its rows. " +
        s"To continue the checkpoint, set ${StreamingWindowHost.PreAggregateConf}=false (rows are then fed one " +
        "by one, as before); or start the query with a new checkpoint location")
    }
    None
  }

  private def sliceOperator(engine: RowWindowEngine): KeyedWindowOperator = engine match {
    case op: KeyedWindowOperator => op
    case other => throw new IllegalStateException(s"slices feed the window operator, not ${other.getClass.getName}")
  }

  override def handleInputRows(key: Row, inputRows: Iterator[Row], timerValues: TimerValues): Iterator[Row] = {
    enterKey(key)
    val engine = storedEngine().getOrElse(startedEngine())
    val before = EngineCounts(engine)
    advance(engine, timerValues)
    val rows = inputRows.map(r => rowToInternal(r).copy()).toArray
    sliceFeeder match {
      case Some((slices, bySlice)) =>
        // Slices of this micro-batch, by start (several map tasks may each send one of the same start).
        java.util.Arrays.sort(rows, bySlice)
        val operator = sliceOperator(engine)
        rows.foreach(slices.partial(operator, _))
        slices.flush(operator)
      case None =>
        java.util.Arrays.sort(rows, feeder.arrivalOrdering) // stable
        feeder.startKey()
        rows.foreach(feeder.feed(engine, _))
    }
    visitEnded(engine, timerValues)
    keep(engine, timerValues, expired = None)
    account(before, engine)
    drain()
  }

  override def handleExpiredTimer(key: Row, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo)
      : Iterator[Row] = {
    enterKey(key)
    val engine = storedEngine().getOrElse(return Iterator.empty)
    val before = EngineCounts(engine)
    advance(engine, timerValues)
    visitEnded(engine, timerValues)
    keep(engine, timerValues, Some(expiredTimerInfo.getExpiryTimeInMs()))
    account(before, engine)
    drain()
  }

  /** What the engine counted so far (its counters travel with its state). */
  private case class EngineCounts(emitted: Long, late: Long, passed: Long, inNoWindow: Long, spilledBytes: Long)
  private object EngineCounts {
    def apply(e: RowWindowEngine): EngineCounts =
      EngineCounts(e.windowsEmitted, e.rowsLate, e.rowsPassedThrough, e.rowsInNoWindow, RowBag.budget.spilledBytes)
  }

  /** Adds this call's rows to the metrics, with the batch execs' accounting. */
  private def account(before: EngineCounts, engine: RowWindowEngine): Unit = {
    val after = EngineCounts(engine)
    val (late, passed, inNoWindow) = (after.late - before.late, after.passed - before.passed,
      after.inNoWindow - before.inNoWindow)
    metrics("numOutputRows") += pending.size
    metrics("windowsEmitted") += after.emitted - before.emitted
    metrics("spillSize") += after.spilledBytes - before.spilledBytes
    RowAccounting.record(metrics, fed, late, passed, inNoWindow)
    fed.resetCounts()
  }

  private def enterKey(key: Row): Unit =
    currentKey = if (keys.isEmpty) InternalRow.empty else keyToInternal(key).copy()

  private def startedEngine(): RowWindowEngine = {
    val engine = wiring.newEngine()
    engine.startKey()
    engine
  }

  /** The clock's time in µs, or None when only the key's rows move its time. */
  private def now(timerValues: TimerValues): Option[Long] = clock match {
    case StreamClock.Rows => None
    // Before the first watermark (0) there is none.
    case StreamClock.Watermark => Some(timerValues.getCurrentWatermarkInMs()).filter(_ > 0).map(_ * 1000L)
    case StreamClock.ProcessingTime => Some(timerValues.getCurrentProcessingTimeInMs() * 1000L)
  }

  private def processingTime(timerValues: TimerValues): Long = timerValues.getCurrentProcessingTimeInMs() * 1000L

  /**
   * The clock moves the key's time on; then, under idle_timeout, rows held too long go out. (What the
   * clock closes counts as output of the visit: it ends the key's quiet period.)
   */
  private def advance(engine: RowWindowEngine, timerValues: TimerValues): Unit = {
    if (idleTimeout > 0) engine.visitStarts()
    now(timerValues).foreach(engine.advanceTo)
    if (idleTimeout > 0) engine.timeOut(processingTime(timerValues), idleTimeout)
  }

  private def visitEnded(engine: RowWindowEngine, timerValues: TimerValues): Unit =
    if (idleTimeout > 0) engine.visitEnded(processingTime(timerValues))

  /**
   * The time (µs) the key's timer is due, in the query's time mode: its next deadline on the clock; under
   * idle_timeout (processing-time timers) when its held rows time out, or, holding none, one timeout
   * later while the watermark has windows of it to close (only a visit reads the watermark).
   */
  private def timerDue(engine: RowWindowEngine, timerValues: TimerValues): Long =
    if (idleTimeout <= 0) { if (clock == StreamClock.Rows) Long.MaxValue else engine.nextDeadline }
    else {
      val onClock = clock match {
        case StreamClock.Rows => Long.MaxValue
        case StreamClock.ProcessingTime => engine.nextDeadline
        case StreamClock.Watermark =>
          if (engine.nextDeadline == Long.MaxValue) Long.MaxValue else processingTime(timerValues) + idleTimeout
      }
      math.min(onClock, engine.idleDeadline(idleTimeout))
    }

  /**
   * Stores the engine (or forgets the key once nothing in it can matter again) and sets one timer
   * at its next deadline. `expired` is the timer being handled, which Spark deletes itself.
   */
  private def keep(engine: RowWindowEngine, timerValues: TimerValues, expired: Option[Long]): Unit = {
    val handle = getHandle
    val forget = now(timerValues).exists(engine.forgettable)
    val deadline = timerDue(engine, timerValues)
    // Timers are in ms; the window closes once the clock reaches the deadline (µs).
    val timer = if (forget || deadline == Long.MaxValue) None
      else Some(Math.floorDiv(deadline, 1000L) + (if (Math.floorMod(deadline, 1000L) == 0) 0 else 1))
    // Typed state knows the key's timer; an engine's must be listed.
    val registered: Seq[Long] =
      if (clock == StreamClock.Rows && idleTimeout <= 0) Nil
      else if (windowsState != null) storedTimer.toSeq
      else handle.listTimers().toSeq
    registered.foreach(t => if (!expired.contains(t) && !timer.contains(t)) handle.deleteTimer(t))
    timer.foreach(t => if (!expired.contains(t) && !registered.contains(t)) handle.registerTimer(t))
    if (windowsState != null) {
      // A timer equal to the expired one is not registered again (Spark deletes it).
      if (forget) windowsState.clear()
      else windowsState.update(storedWindows.snapshot(sliceOperator(engine), timer.filterNot(expired.contains)))
    } else {
      if (forget) engineState.clear() else engineState.update(wiring.codec.encode(engine))
    }
    // The key's state now lives in the state store: release what its decoded engine held (its row
    // bags count against the task's memory budget and may have spill files).
    engine.startKey()
  }

  private def drain(): Iterator[Row] = {
    val out = pending.map(toExternal).toList
    pending.clear()
    out.iterator
  }
}
