package streamwin.engine

import org.apache.spark.unsafe.types.UTF8String


/** What a trigger asks the operator to do with a window (as Flink's `TriggerResult`). */
sealed abstract class Firing

object Firing {
  /** Nothing to output. */
  case object Continue extends Firing

  /** Output the window with `kind`; it keeps its rows. */
  final case class Fire(kind: UTF8String) extends Firing

  /** Output the window's rows with `kind`, then drop them; the window stays open for later rows. */
  final case class FireAndPurge(kind: UTF8String) extends Firing
}

/**
 * One output policy of a window besides its close (which its family decides, `fireAt`): what it outputs
 * after a row joined an open window, when a row completes a window, after a late row joined its late
 * group, and when the key's event-time progress passes one of its times. A window function's triggers are
 * composed once ([[WindowTriggers]]); the operator applies them alike for every family.
 */
trait WindowTrigger {
  /** After a row joined an open window (not its last row) that now holds `held` rows no trigger took yet. */
  def onRow(held: Long): Firing = Firing.Continue

  /** What is output before a window's `final` when a row completes it (a count window's size-th row). */
  def onCompletingRow: Option[UTF8String] = None

  /** After a late row joined its late group (late="passthrough"), which now holds `held` rows. */
  def onLateRow(held: Long): Firing = Firing.Continue

  /** The first event time after `progress` at which the open windows output `update`; Long.MaxValue: never. */
  def nextEarlyTime(progress: Long): Long = Long.MaxValue

  /** True when this trigger outputs windows at event times ([[nextEarlyTime]]). */
  def firesInEventTime: Boolean = false
}

/** KX's countTrigger: a window (or late group) outputs its rows as `partial` (`late`) once it holds `rows` of them, and drops them. */
final case class CountTrigger(rows: Long) extends WindowTrigger {
  require(rows > 0, "a count trigger fires at one row or more")
  private val partial = Firing.FireAndPurge(WindowKind.Partial)
  private val late = Firing.FireAndPurge(WindowKind.Late)
  override def onRow(held: Long): Firing = if (held >= rows) partial else Firing.Continue
  override def onLateRow(held: Long): Firing = if (held >= rows) late else Firing.Continue
}

/** emit="update" (Quix's current(), eKuiper's per-row output): after every row, each window it joined outputs `update`. */
case object UpdateTrigger extends WindowTrigger {
  private val update = Firing.Fire(WindowKind.Update)
  override def onRow(held: Long): Firing = update
  override def onCompletingRow: Option[UTF8String] = Some(WindowKind.Update)
}

/**
 * emit_every (Flink's ContinuousEventTimeTrigger): each time the key's progress passes a multiple of
 * `period` (plus `alignment`, the window's offset), the windows open before and still open after output `update`.
 */
final case class PeriodicTrigger(period: Long, alignment: Long) extends WindowTrigger {
  require(period > 0, "a periodic trigger has a period")
  override def firesInEventTime: Boolean = true
  override def nextEarlyTime(progress: Long): Long = {
    val next = progress - Math.floorMod(progress - alignment, period) + period
    if (next < progress) Long.MaxValue else next // overflow near the end of time
  }
}

/** What becomes of a row whose windows were dropped already (an evictor of late rows). */
sealed abstract class LateRows(val keeps: Boolean)

object LateRows {
  /** Late rows are dropped and counted (every seed's default). */
  case object Drop extends LateRows(keeps = false)

  /** late="passthrough" (KX): late rows are kept in a late group per window and output as `late`. */
  case object PassThrough extends LateRows(keeps = true)
}

/**
 * The triggers of one window function, in precedence order, and what it does with late rows, composed
 * from its options ([[WindowPolicies]]) once. The operator asks only this what a window outputs besides
 * its `final`; no policy is looked up anywhere else while rows are placed.
 *
 * @param chain     the triggers: after a row, the first that fires decides (a count trigger before
 *                  emit="update": a window at the count outputs `partial`, not also `update`)
 * @param lateRows  dropped, or passed through as `late`
 * @param emitEmpty a window that holds no row still outputs its `final` (emit_empty)
 */
final class WindowTriggers(val chain: Array[WindowTrigger], val lateRows: LateRows, val emitEmpty: Boolean) {
  private val eventTimeTriggers = chain.filter(_.firesInEventTime)

  /** True when a row that joins a window outputs it (emit="update"), so a fired window need not fire again for it. */
  val outputsEveryRow: Boolean = chain.contains(UpdateTrigger)

  /**
   * What a window outputs right after a row entered it, for every family: when the row completes it, what
   * the triggers output on completion and then `final`; otherwise the first trigger that fires.
   *
   * @param held      rows the window holds that no trigger took yet, this row included
   * @param completes the row completes the window
   * @param output    outputs the window's held rows with a kind
   * @param purge     drops the held rows after a trigger output them
   */
  def afterRow(held: Long, completes: Boolean)(output: UTF8String => Unit, purge: => Unit): Unit =
    if (completes) {
      var i = 0
      while (i < chain.length) { chain(i).onCompletingRow.foreach(output); i += 1 }
      output(WindowKind.Final)
    } else {
      var i = 0
      while (i < chain.length) {
        chain(i).onRow(held) match {
          case Firing.Continue => i += 1
          case f => act(f, output, purge); return
        }
      }
    }

  /** What a late group outputs right after a late row joined it (it holds `held` rows). */
  def afterLateRow(held: Long)(output: UTF8String => Unit, purge: => Unit): Unit = {
    var i = 0
    while (i < chain.length) {
      chain(i).onLateRow(held) match {
        case Firing.Continue => i += 1
        case f => act(f, output, purge); return
      }
    }
  }

  private def act(f: Firing, output: UTF8String => Unit, purge: => Unit): Unit = f match {
    case Firing.Fire(kind) => output(kind)
    case Firing.FireAndPurge(kind) => output(kind); purge
    case Firing.Continue =>
  }

  /** True when progress moving from `from` to `to` passes an event time of a trigger (from < t <= to). */
  def passesEarlyTime(from: Long, to: Long): Boolean =
    eventTimeTriggers.nonEmpty && to > from && (from == Long.MinValue || nextEarlyTime(from) <= to)

  /** The first event time after `progress` at which a trigger outputs the open windows; Long.MaxValue: never. */
  def nextEarlyTime(progress: Long): Long = {
    var next = Long.MaxValue
    var i = 0
    while (i < eventTimeTriggers.length) { next = math.min(next, eventTimeTriggers(i).nextEarlyTime(progress)); i += 1 }
    next
  }

  /** True when some trigger outputs windows at event times (emit_every). */
  def firesInEventTime: Boolean = eventTimeTriggers.nonEmpty

  override def toString: String =
    (chain.map(_.toString) ++ Seq(s"late=$lateRows") ++ (if (emitEmpty) Seq("emit_empty") else Nil)).mkString("[", ", ", "]")
}

object WindowTriggers {
  /** No trigger: windows output their `final` only, late rows are dropped. */
  val Default: WindowTriggers = of(WindowPolicies.Default)

  /** The triggers of a window function's options, in precedence order. */
  def of(policies: WindowPolicies): WindowTriggers = {
    val chain = Seq(
      if (policies.countTrigger > 0) Some(CountTrigger(policies.countTrigger)) else None,
      if (policies.emitUpdate) Some(UpdateTrigger) else None,
      if (policies.emitEvery > 0) Some(PeriodicTrigger(policies.emitEvery, policies.emitAlignment)) else None).flatten
    new WindowTriggers(chain.toArray, if (policies.latePassthrough) LateRows.PassThrough else LateRows.Drop, policies.emitEmpty)
  }
}
