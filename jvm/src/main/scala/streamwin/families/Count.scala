package streamwin.families

import org.apache.spark.sql.catalyst.expressions.Expression

import streamwin.catalyst.{SqlWindowFunction, StreamWindow}
import streamwin.engine.{CountWindows, OverlappingCountWindows, WindowFamily}
import streamwin.spec._

/**
 * Count windows. align = "start" (KX `.qsp.window.count[size; frequency]`, Quix count windows,
 * SPL `count(N)`): windows start at the key's rows 0, step, 2·step, … and hold `size` rows.
 * align = "end" (eKuiper `COUNTWINDOW(size, step)`): at every step-th row, once at least `size`
 * rows have arrived, a window holds the latest `size` rows.
 *
 * Replayed through [[CountWindows]], which share the retained rows, or, when overlapping windows
 * are output while they fill (emit_update, count_trigger), [[OverlappingCountWindows]].
 */
final case class CountWindowSpec(size: Long, step: Long, alignEnd: Boolean = false) extends SequenceWindowSpec {
  require(size > 0 && step > 0 && step <= size, "0 < step <= size")
  override def function: String = Count.sql.name

  /** True when the windows never overlap, so one running aggregate suffices. */
  def disjoint: Boolean = step == size

  override def describe(w: StreamWindow): String =
    s"$function($size, step=$step, align=${if (alignEnd) "end" else "start"}, order_by=${w.timeOrOrder}${w.policies})"

  override def family(policies: WindowPolicies): WindowFamily =
    if (step < size && !alignEnd && (policies.emitUpdate || policies.countTrigger > 0 || policies.idleTimeout > 0))
      OverlappingCountWindows(this)
    else CountWindows(this, policies)
}

/** `sw_count`. */
object Count {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_count",
    "_FUNC_(size[, 'step', step][, 'align', 'start'|'end'], 'order_by', column[, 'partition_by', column ...]) - Count windows of size rows per key in order_by order: starting every step rows (align 'start'), or at every step-th row holding the latest size rows (align 'end', eKuiper COUNTWINDOW).",
    "SELECT k, _FUNC_(3, 'order_by', seq) AS window, sum(v) FROM t GROUP BY k, _FUNC_(3, 'order_by', seq);")(build)

  private def build(name: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(name, Seq("size"), Seq("step", "align", "order_by", "partition_by") ++
      WindowPolicies.optionNames, Set("partition_by"), args)
    val size = a.positiveCount("size", a.positional("size"))
    val step = a.option("step").map(a.positiveCount("step", _)).getOrElse(size)
    val alignEnd = a.option("align").map(a.choice("align", _, Seq("start", "end"))).contains("end")
    if (step > size) {
      throw StreamwinErrors.invalidArgument(a.function, "step",
        s"must not exceed size ($step > $size): count windows cover every row (Quix and eKuiper rule)")
    }
    val policies = WindowPolicies.parse(a, orderGiven = false, SequenceWindows.support(endAligned = alignEnd))
    StreamWindow(CountWindowSpec(size, step, alignEnd), SequenceWindows.requiredOrder(a) +: a.optionValues("partition_by"),
      policies)
  }
}
