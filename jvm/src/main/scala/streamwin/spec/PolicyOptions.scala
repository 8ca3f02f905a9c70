package streamwin.spec

import streamwin.engine.WindowPolicies

/** The policy options every `sw_*` function takes, and how they are parsed into [[WindowPolicies]]. */
object PolicyOptions {
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
