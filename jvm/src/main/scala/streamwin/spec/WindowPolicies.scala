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

  /** Why a policy does not apply to a family: the family's SQL name and the policy name give the reason. */
  type Support = PartialFunction[String, String]

  private val eventTimeOnly =
    "applies to event-time windows (sw_tumbling, sw_hopping); count and data windows follow arrival order, " +
      "where no row is late"

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

  /** Aligned event-time windows (tumbling, hopping): every policy. */
  val alignedSupport: Support = PartialFunction.empty

  /** Processing-time windows: nothing is late (KX timer has no lateness). */
  val timerSupport: Support = {
    case "lateness" | "late" =>
      "timer windows follow processing time, where no row is late (KX timer); use sw_tumbling on an event time"
    case "order_by" => "timer windows take rows in the order of ingest_time, their arrival time"
  }

  /** Per-event sliding windows: overlapping, one per event time, never empty. */
  val slidingSupport: Support = {
    case "count_trigger" => "sliding windows overlap and share their rows, so a window's rows cannot be flushed alone"
    case "emit_empty" => "a sliding window exists only at an event time, so it is never empty"
  }

  /** Sessions: never empty; the eKuiper max-duration cut and dynamic gaps follow the slice path only. */
  def sessionSupport(plain: Boolean): Support = {
    case "emit_empty" => "a session always holds rows"
    case name if !plain && name != "order_by" =>
      "not available with max_duration or a dynamic gap (eKuiper's cut checks need rows in event-time order)"
    case "order_by" if !plain =>
      "not available with max_duration or a dynamic gap (eKuiper's cut checks need rows in event-time order)"
  }

  /** SPL timeInterval: discard_age is its lateness; late re-triggers are its update emission. */
  val intervalSupport: Support = {
    case "lateness" => "use discard_age: SPL keeps a pane open for late rows until its end + discard_age"
    case "count_trigger" =>
      "SPL timeInterval re-emits a pane whole for late rows, which a count trigger would have split"
    case "emit_empty" => "SPL timeInterval emits only panes that hold rows"
  }

  /** Count and data windows: update emission and count triggers; no event time, no empty windows. */
  def sequenceSupport(endAligned: Boolean): Support = {
    case "lateness" | "late" => eventTimeOnly
    case "emit_empty" => "applies to time windows; a count or data window always holds rows"
    case "emit" | "count_trigger" if endAligned =>
      "needs start-aligned count windows: an end-aligned window (eKuiper COUNTWINDOW) is only known when it is emitted"
  }
}
