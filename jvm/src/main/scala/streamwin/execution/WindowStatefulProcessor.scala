package streamwin.execution

import scala.collection.mutable

import org.apache.spark.sql.{Encoders, Row}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.encoders.{ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.streaming._
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.metric.SQLMetric

import streamwin.engine.{RowBag, RowWindowEngine}

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
 * time, within the micro-batch; micro-batches arrive in order). Between micro-batches the key's
 * engine lives in the state store (one ValueState, see [[streamwin.engine.EngineStateCodec]]);
 * a timer at the engine's next deadline brings it back when the watermark (or processing time)
 * passes, so windows of idle keys close too. A stream has no end: no `partial` teardown windows.
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
    val metrics: Map[String, SQLMetric]) extends StatefulProcessor[Row, Row, Row] {

  @transient private var engineState: ValueState[Array[Byte]] = _
  @transient private lazy val pending = new mutable.ArrayBuffer[InternalRow]
  @transient private var currentKey: InternalRow = InternalRow.empty
  @transient private lazy val wiring = blueprint.wire(() => currentKey, row => pending += row)
  @transient private lazy val feeder =
    new EngineFeeder(blueprint.spec, blueprint.input, order, signal, tiesAllowed)
  // transformWithState hands over external Rows; the engine works on InternalRows (code-generated
  // conversions both ways; the serializer reuses its row, so rows the engine keeps are copied).
  @transient private lazy val keyToInternal = encoder(keys).createSerializer()
  @transient private lazy val rowToInternal = encoder(blueprint.input).createSerializer()
  @transient private lazy val toExternal = encoder(blueprint.output).resolveAndBind().createDeserializer()

  private def encoder(attrs: Seq[Attribute]): ExpressionEncoder[Row] =
    ExpressionEncoder(RowEncoder.encoderFor(DataTypeUtils.fromAttributes(attrs), lenient = true))

  override def init(outputMode: OutputMode, timeMode: TimeMode): Unit = {
    engineState = getHandle.getValueState[Array[Byte]]("engine", Encoders.BINARY, TTLConfig.NONE)
  }

  override def handleInputRows(key: Row, inputRows: Iterator[Row], timerValues: TimerValues): Iterator[Row] = {
    enterKey(key)
    val engine = if (engineState.exists()) wiring.codec.decode(engineState.get()) else startedEngine()
    val before = EngineCounts(engine)
    advance(engine, timerValues)
    val rows = inputRows.map(r => rowToInternal(r).copy()).toArray
    java.util.Arrays.sort(rows, feeder.arrivalOrdering) // stable
    feeder.startKey()
    rows.foreach(feeder.feed(engine, _))
    keep(engine, timerValues, expired = None)
    account(before, engine)
    drain()
  }

  override def handleExpiredTimer(key: Row, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo)
      : Iterator[Row] = {
    if (!engineState.exists()) return Iterator.empty
    enterKey(key)
    val engine = wiring.codec.decode(engineState.get())
    val before = EngineCounts(engine)
    advance(engine, timerValues)
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
    RowAccounting.record(metrics, feeder, late, passed, inNoWindow)
    feeder.accepted = 0
    feeder.rejected = 0
    feeder.nullOrders = 0
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

  private def advance(engine: RowWindowEngine, timerValues: TimerValues): Unit =
    now(timerValues).foreach(engine.advanceTo)

  /**
   * Stores the engine (or forgets the key once nothing in it can matter again) and sets one timer
   * at its next deadline. `expired` is the timer being handled, which Spark deletes itself.
   */
  private def keep(engine: RowWindowEngine, timerValues: TimerValues, expired: Option[Long]): Unit = {
    val handle = getHandle
    if (clock != StreamClock.Rows) handle.listTimers().foreach(t => if (!expired.contains(t)) handle.deleteTimer(t))
    val time = now(timerValues)
    if (time.exists(engine.forgettable)) {
      engineState.clear()
    } else {
      engineState.update(wiring.codec.encode(engine))
      val deadline = engine.nextDeadline
      if (clock != StreamClock.Rows && deadline != Long.MaxValue) {
        // Timers are in ms; the window closes once the clock reaches the deadline (µs).
        val timerMs = Math.floorDiv(deadline, 1000L) + (if (Math.floorMod(deadline, 1000L) == 0) 0 else 1)
        if (!expired.contains(timerMs)) handle.registerTimer(timerMs)
      }
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
