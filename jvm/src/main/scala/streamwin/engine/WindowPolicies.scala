package streamwin.engine

/**
 * The event-time policies every window function takes as options (seed 000: KX lateness,
 * passthrough, countTrigger, skipEmptyWindows; seed 002: Quix grace, current()/final()), as a window
 * function's options say them. Parsed from the options by [[streamwin.spec.PolicyOptions]]; the operator
 * applies them as trigger objects and a late-row evictor composed from them ([[WindowTriggers]]).
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
}
