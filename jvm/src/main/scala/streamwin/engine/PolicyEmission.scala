package streamwin.engine

import org.apache.spark.unsafe.types.UTF8String


/** The one rule, for every family, of what a window outputs right after a row entered it. */
object PolicyEmission {
  /**
   * A window that the row completes (a count window's last row) is output as `final` (after an
   * `update` under emit="update"); otherwise a window whose held rows reach the count trigger is
   * output as `partial` and flushed; otherwise, under emit="update", as `update`.
   *
   * @param held      rows the window holds that no count trigger output yet, this row included
   * @param completes the row completes the window
   * @param output    outputs the window's held rows with a kind
   * @param flush     drops the held rows after a count trigger output them
   */
  def afterRow(policies: WindowPolicies, held: Long, completes: Boolean)(output: UTF8String => Unit, flush: => Unit): Unit =
    if (completes) {
      if (policies.emitUpdate) output(WindowKind.Update)
      output(WindowKind.Final)
    } else if (policies.countTrigger > 0 && held >= policies.countTrigger) {
      output(WindowKind.Partial)
      flush
    } else if (policies.emitUpdate) {
      output(WindowKind.Update)
    }
}
