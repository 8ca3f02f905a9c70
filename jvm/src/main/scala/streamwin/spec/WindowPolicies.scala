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
 */
final case class WindowPolicies(
    arrivalOrder: Boolean = false,
    lateness: Long = 0L,
    latePassthrough: Boolean = false,
    emitUpdate: Boolean = false,
    countTrigger: Long = 0L,
    emitEmpty: Boolean = false) {

  /**
   * True when a time window must be replayed row by row in arrival order (no slice fast path).
   * Without an explicit order rows arrive in event-time order, where no row is ever late, so
   * lateness and late rows alone change nothing.
   */
  def replaysRows: Boolean = arrivalOrder || emitUpdate || countTrigger > 0 || emitEmpty

  // (The order_by column itself is shown by the window expression.)
  override def toString: String = Seq(
    if (lateness > 0) Some(s"lateness=${lateness}us") else None,
    if (latePassthrough) Some("late=passthrough") else None,
    if (emitUpdate) Some("emit=update") else None,
    if (countTrigger > 0) Some(s"count_trigger=$countTrigger") else None,
    if (emitEmpty) Some("emit_empty") else None).flatten.map(", " + _).mkString
}

object WindowPolicies {
  val Default: WindowPolicies = WindowPolicies()

  /** The policy options, accepted by every `sw_*` function (each checks which ones apply to it). */
  val optionNames: Seq[String] = Seq("lateness", "late", "emit", "count_trigger", "emit_empty")

  /**
   * Why a policy does not apply to a family: defined for each policy name the family rejects, with the
   * reason. Each family states its own (see `streamwin.families`).
   */
  type Support = PartialFunction[String, String]

  /** Parses the policy options of `a`; `unsupported(policy)` is the reason a policy does not apply. */
  def parse(a: WindowArguments, orderGiven: Boolean, unsupported: Support): WindowPolicies = {
    def reject(name: String): Unit = if (unsupported.isDefinedAt(name) && a.option(name).isDefined) {
      throw StreamwinErrors.invalidArgument(a.function, name, s"is not available for ${a.function}: ${unsupported(name)}")
    }
    (optionNames :+ "order_by").foreach(reject)
    WindowPolicies(
      arrivalOrder = orderGiven,
      lateness = a.option("lateness").map(a.duration("lateness", _, allowZero = true)).getOrElse(0L),
      latePassthrough = a.option("late").map(a.choice("late", _, Seq("drop", "passthrough"))).contains("passthrough"),
      emitUpdate = a.option("emit").map(a.choice("emit", _, Seq("final", "update"))).contains("update"),
      countTrigger = a.option("count_trigger").map(a.positiveCount("count_trigger", _)).getOrElse(0L),
      emitEmpty = a.option("emit_empty").exists(a.boolean("emit_empty", _)))
  }
}
