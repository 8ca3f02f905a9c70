package streamwin.catalyst

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}

import streamwin.spec._

/** The SQL functions `sw_*`: each parses and validates its literal arguments into a WindowSpec. */
object WindowFunctions {
  type Builder = Seq[Expression] => Expression

  private def tumbling(args: Seq[Expression]): Expression = {
    val a = new WindowArguments("sw_tumbling", Seq("time", "size"), Seq("offset"), Set.empty, args)
    val size = a.duration("size", a.positional("size"))
    val offset = a.option("offset").map(a.duration("offset", _, allowZero = true, allowNegative = true)).getOrElse(0L)
    StreamWindow(TimeWindowSpec(a.function, size, size, offset), Seq(a.positional("time")))
  }

  private def hopping(args: Seq[Expression]): Expression = {
    val a = new WindowArguments("sw_hopping", Seq("time", "size", "step"), Seq("offset"), Set.empty, args)
    val size = a.duration("size", a.positional("size"))
    val step = a.duration("step", a.positional("step"))
    val offset = a.option("offset").map(a.duration("offset", _, allowZero = true, allowNegative = true)).getOrElse(0L)
    StreamWindow(TimeWindowSpec(a.function, size, step, offset), Seq(a.positional("time")))
  }

  private def count(args: Seq[Expression]): Expression = {
    val a = new WindowArguments("sw_count", Seq("size"), Seq("step", "align", "order_by", "partition_by"),
      Set("partition_by"), args)
    val size = a.positiveCount("size", a.positional("size"))
    val step = a.option("step").map(a.positiveCount("step", _)).getOrElse(size)
    val alignEnd = a.option("align").map(a.choice("align", _, Seq("start", "end"))).contains("end")
    if (step > size) {
      throw StreamwinErrors.invalidArgument(a.function, "step",
        s"must not exceed size ($step > $size): count windows cover every row (Quix and eKuiper rule)")
    }
    StreamWindow(CountWindowSpec(size, step, alignEnd), requiredOrder(a) +: a.optionValues("partition_by"))
  }

  private def requiredOrder(a: WindowArguments): Expression = a.option("order_by").getOrElse(
    throw StreamwinErrors.invalidArgument(a.function, "order_by",
      "is required: these windows follow each key's arrival order, so name the column that gives it " +
        "(for example a Kafka offset, an ingestion sequence or the event time)"))

  private def dataWindow(function: String, signalName: String, extraPositional: Seq[String])(
      spec: WindowArguments => SequenceWindowSpec)(args: Seq[Expression]): Expression = {
    val a = new WindowArguments(function, signalName +: extraPositional, Seq("order_by", "partition_by"),
      Set("partition_by"), args)
    StreamWindow(spec(a), Seq(requiredOrder(a), a.positional(signalName)) ++ a.optionValues("partition_by"))
  }

  private val split = dataWindow("sw_split", "predicate", Nil)(_ => SplitWindowSpec) _
  private val delta = dataWindow("sw_delta", "column", Seq("threshold"))(a =>
    DeltaWindowSpec(a.nonNegativeNumber("threshold", a.positional("threshold")))) _
  private val punctuation = dataWindow("sw_punctuation", "column", Nil)(_ => PunctuationWindowSpec) _

  /** One SQL function: its name, usage line (`_FUNC_` stands for the name), example and builder. */
  private def function(name: String, usage: String, example: String, builder: Builder)
      : (FunctionIdentifier, ExpressionInfo, Builder) = {
    val info = new ExpressionInfo(classOf[StreamWindow].getName, null, name, usage, "",
      s"\n    > $example\n  ", "", "window_funcs", "", "", "")
    (FunctionIdentifier(name), info, builder)
  }

  val all: Seq[(FunctionIdentifier, ExpressionInfo, Builder)] = Seq(
    function("sw_tumbling",
      "_FUNC_(time, size[, 'offset', offset]) - Tumbling event-time windows [offset + k*size, offset + (k+1)*size).",
      "SELECT k, _FUNC_(ts, '10 seconds') AS window, avg(v) FROM t GROUP BY k, _FUNC_(ts, '10 seconds');",
      tumbling _),
    function("sw_hopping",
      "_FUNC_(time, size, step[, 'offset', offset]) - Hopping event-time windows of length size starting every step.",
      "SELECT _FUNC_(ts, '1 minute', '10 seconds') AS window, count(*) FROM t GROUP BY _FUNC_(ts, '1 minute', '10 seconds');",
      hopping _),
    function("sw_count",
      "_FUNC_(size[, 'step', step][, 'align', 'start'|'end'], 'order_by', column[, 'partition_by', column ...]) - Count windows of size rows per key in order_by order: starting every step rows (align 'start'), or at every step-th row holding the latest size rows (align 'end', eKuiper COUNTWINDOW).",
      "SELECT k, _FUNC_(3, 'order_by', seq) AS window, sum(v) FROM t GROUP BY k, _FUNC_(3, 'order_by', seq);",
      count _),
    function("sw_split",
      "_FUNC_(predicate, 'order_by', column[, 'partition_by', column ...]) - A new window starts at each row where the boolean predicate is true (KX global window with a splitting trigger).",
      "SELECT k, _FUNC_(status = 'new', 'order_by', seq) AS window, sum(v) FROM t GROUP BY k, _FUNC_(status = 'new', 'order_by', seq);",
      split),
    function("sw_delta",
      "_FUNC_(column, threshold, 'order_by', column[, 'partition_by', column ...]) - A row whose column exceeds the window's oldest value by more than threshold (seconds for timestamps) closes the window and starts the next (SPL delta).",
      "SELECT k, _FUNC_(temp, 1.5, 'order_by', seq) AS window, avg(temp) FROM t GROUP BY k, _FUNC_(temp, 1.5, 'order_by', seq);",
      delta),
    function("sw_punctuation",
      "_FUNC_(column, 'order_by', column[, 'partition_by', column ...]) - A row whose boolean column is true closes the window and is no member of any (SPL punct()).",
      "SELECT k, _FUNC_(is_marker, 'order_by', seq) AS window, count(*) FROM t GROUP BY k, _FUNC_(is_marker, 'order_by', seq);",
      punctuation)
  )
}
