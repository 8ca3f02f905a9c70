package streamwin.spec

/**
 * The event-time policies every window function takes as options (seed 000: KX lateness,
 * passthrough, countTrigger, skipEmptyWindows; seed 002: Quix grace, current()/final()).
 *
 * @param arrivalOrder   an explicit `order_by` on a time window: rows arrive per key in that order,
 *                       so they can be late (without it they arrive in event-time order)
 * @param lateness       µs a time window stays open after its end, in the key's event-time progress
 * @param latePassthrough late rows are output with kind `late` instead of being dropped
 * @param emitUpdate     after every row, each window it entered is output with kind `update`
 * @param countTrigger   a window's buffered rows are output as `partial` when they reach this (0: never)
 * @param emitEmpty      empty time windows between a key's first and last window are output too
 * @param emitEvery      µs period of early results (Flink's ContinuousEventTimeTrigger, in event time):
 *                       after a row (or a stream's clock) moves the key's progress past a multiple of
 *                       it, each window open before and still open after outputs an `update` (0: never)
 * @param emitAlignment  where the multiples of `emitEvery` fall: epoch + this (the window's offset)
 * @param idleTimeout    µs of processing time (KX's temporal timeout for idle streams): on a stream, a key
 *                       that held rows that long with nothing output outputs them as `partial` and
 *                       flushes them (0: never). A batch has no processing time: it changes nothing there.
 */
final case class WindowPolicies(
    arrivalOrder: Boolean = false,
    lateness: Long = 0L,
    latePassthrough: Boolean = false,
    emitUpdate: Boolean = false,
    countTrigger: Long = 0L,
    emitEmpty: Boolean = false,
    emitEvery: Long = 0L,
    emitAlignment: Long = 0L,
    idleTimeout: Long = 0L) {

  /**
   * True when a time window must be replayed row by row in arrival order (no slice fast path).
   * Without an explicit order rows arrive in event-time order, where no row is ever late, so
   * lateness and late rows alone change nothing.
   */
  def replaysRows: Boolean = arrivalOrder || emitUpdate || countTrigger > 0 || emitEmpty || emitEvery > 0

  /** A window may be output again after an `update` (a stream needs update mode). */
  def outputsUpdates: Boolean = emitUpdate || emitEvery > 0

  /** Outputs besides a window's `final` and its late rows: under these, a window is more than its aggregate. */
  def emitsMoreThanFinal: Boolean = emitUpdate || countTrigger > 0 || emitEmpty || emitEvery > 0

  /** The policies that apply to a batch input, which has no processing time (no idle_timeout). */
  def inBatch: WindowPolicies = if (idleTimeout == 0L) this else copy(idleTimeout = 0L)

  /** True when progress moving from `from` to `to` passes a multiple of `emitEvery` (from < m <= to). */
  def passesEmitTime(from: Long, to: Long): Boolean =
    emitEvery > 0 && to > from && (from == Long.MinValue || nextEmitTime(from) <= to)

  /** The first multiple of `emitEvery` (plus alignment) after `time`. */
  def nextEmitTime(time: Long): Long = {
    val next = time - Math.floorMod(time - emitAlignment, emitEvery) + emitEvery
    if (next < time) Long.MaxValue else next // overflow near the end of time
  }

  // (The order_by column itself is shown by the window expression.)
  override def toString: String = Seq(
    if (lateness > 0) Some(s"lateness=${lateness}us") else None,
    if (latePassthrough) Some("late=passthrough") else None,
    if (emitUpdate) Some("emit=update") else None,
    if (countTrigger > 0) Some(s"count_trigger=$countTrigger") else None,
    if (emitEmpty) Some("emit_empty") else None,
    if (emitEvery > 0) Some(s"emit_every=${emitEvery}us") else None,
    if (idleTimeout > 0) Some(s"idle_timeout=${idleTimeout}us") else None).flatten.map(", " + _).mkString
}

object WindowPolicies {
  val Default: WindowPolicies = WindowPolicies()

  /** The policy options, accepted by every `sw_*` function (each checks which ones apply to it). */
  val optionNames: Seq[String] = Seq("lateness", "late", "emit", "count_trigger", "emit_empty", "emit_every",
    "idle_timeout")

  /** The families that take `emit_every` (periodic early results of windows that span a period of event time). */
  val periodicFamilies: String = "sw_tumbling, sw_hopping, sw_session and sw_cumulate"

  /**
   * Why a policy does not apply to a family: defined for each policy name the family rejects, with the
   * reason. Each family states its own (see `streamwin.families`).
   */
  type Support = PartialFunction[String, String]

  /**
   * Parses the policy options of `a`; `unsupported(policy)` is the reason a policy does not apply.
   * `periodic`: the family takes `emit_every`, aligned to its `offset` option when it has one.
   */
  def parse(a: WindowArguments, orderGiven: Boolean, unsupported: Support, periodic: Boolean = false): WindowPolicies = {
    def reject(name: String): Unit = if (unsupported.isDefinedAt(name) && a.option(name).isDefined) {
      throw StreamwinErrors.invalidArgument(a.function, name, s"is not available for ${a.function}: ${unsupported(name)}")
    }
    (optionNames :+ "order_by").foreach(reject)
    // An idle timeout flushes a window's rows as a count trigger does: where that cannot be, neither can this.
    if (a.option("idle_timeout").isDefined && unsupported.isDefinedAt("count_trigger")) {
      throw StreamwinErrors.invalidArgument(a.function, "idle_timeout", s"is not available for ${a.function}: it " +
        s"outputs and flushes what a window holds, as count_trigger does, and ${unsupported("count_trigger")}")
    }
    val emitEvery = a.option("emit_every").map { e =>
      if (!periodic) throw StreamwinErrors.invalidArgument(a.function, "emit_every",
        s"is not available for ${a.function}: periodic early results apply to windows that span a period of event " +
          s"time ($periodicFamilies)")
      a.duration("emit_every", e)
    }.getOrElse(0L)
    val emitUpdate = a.option("emit").map(a.choice("emit", _, Seq("final", "update"))).contains("update")
    if (emitEvery > 0 && emitUpdate) throw StreamwinErrors.invalidArgument(a.function, "emit_every",
      "adds nothing to emit='update', which already outputs every window a row enters after each row")
    val offset = a.option("offset").map(a.duration("offset", _, allowZero = true, allowNegative = true, wholeMicros = true))
    WindowPolicies(
      arrivalOrder = orderGiven,
      lateness = a.option("lateness").map(a.duration("lateness", _, allowZero = true)).getOrElse(0L),
      latePassthrough = a.option("late").map(a.choice("late", _, Seq("drop", "passthrough"))).contains("passthrough"),
      emitUpdate = emitUpdate,
      countTrigger = a.option("count_trigger").map(a.positiveCount("count_trigger", _)).getOrElse(0L),
      emitEmpty = a.option("emit_empty").exists(a.boolean("emit_empty", _)),
      emitEvery = emitEvery,
      emitAlignment = if (emitEvery > 0) Math.floorMod(offset.getOrElse(0L), emitEvery) else 0L,
      idleTimeout = a.option("idle_timeout").map(a.duration("idle_timeout", _)).getOrElse(0L))
  }
}
