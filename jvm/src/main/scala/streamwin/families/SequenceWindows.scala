package streamwin.families

import org.apache.spark.sql.catalyst.expressions.Expression

import streamwin.catalyst.StreamWindow
import streamwin.spec.{DataWindowSpec, StreamwinErrors, WindowArguments, WindowPolicies}

/** What the builders of count and data windows share: a required order_by and the same policy rules. */
private object SequenceWindows {
  private val eventTimeOnly =
    "applies to event-time windows (sw_tumbling, sw_hopping); count and data windows follow arrival order, " +
      "where no row is late"

  /** Count and data windows: update emission and count triggers; no event time, no empty windows. */
  def support(endAligned: Boolean): WindowPolicies.Support = {
    case "lateness" | "late" => eventTimeOnly
    case "emit_empty" => "applies to time windows; a count or data window always holds rows"
    case "emit" | "count_trigger" if endAligned =>
      "needs start-aligned count windows: an end-aligned window (eKuiper COUNTWINDOW) is only known when it is emitted"
  }

  def requiredOrder(a: WindowArguments): Expression = a.option("order_by").getOrElse(
    throw StreamwinErrors.invalidArgument(a.function, "order_by",
      "is required: these windows follow each key's arrival order, so name the column that gives it " +
        "(for example a Kafka offset, an ingestion sequence or the event time)"))

  /** The builder of a data window: its signal column first, then `extraPositional` arguments, then options. */
  def dataWindow(signalName: String, extraPositional: Seq[String])(spec: WindowArguments => DataWindowSpec)(
      function: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(function, signalName +: extraPositional,
      Seq("order_by", "partition_by") ++ WindowPolicies.optionNames, Set("partition_by"), args)
    val policies = WindowPolicies.parse(a, orderGiven = false, support(endAligned = false))
    StreamWindow(spec(a), Seq(requiredOrder(a), a.positional(signalName)) ++ a.optionValues("partition_by"), policies)
  }
}
