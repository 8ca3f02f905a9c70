package streamwin.catalyst

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}

import streamwin.spec.{CountWindowSpec, StreamwinErrors, TimeWindowSpec, WindowArguments}

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
    val a = new WindowArguments("sw_count", Seq("size"), Seq("step", "order_by", "partition_by"),
      Set("partition_by"), args)
    val size = a.positiveCount("size", a.positional("size"))
    val step = a.option("step").map(a.positiveCount("step", _)).getOrElse(size)
    if (step > size) {
      throw StreamwinErrors.invalidArgument(a.function, "step",
        s"must not exceed size ($step > $size): count windows cover every row (Quix and eKuiper rule)")
    }
    val orderBy = a.option("order_by").getOrElse(throw StreamwinErrors.invalidArgument(a.function, "order_by",
      "is required: count windows follow each key's arrival order, so name the column that gives it " +
        "(for example a Kafka offset, an ingestion sequence or the event time)"))
    StreamWindow(CountWindowSpec(size, step), orderBy +: a.optionValues("partition_by"))
  }

  private def info(name: String, usage: String, examples: String): ExpressionInfo =
    new ExpressionInfo(classOf[StreamWindow].getName, null, name, usage, "", examples, "", "window_funcs", "", "", "")

  val all: Seq[(FunctionIdentifier, ExpressionInfo, Builder)] = Seq(
    (FunctionIdentifier("sw_tumbling"), info("sw_tumbling",
      "_FUNC_(time, size[, 'offset', offset]) - Tumbling event-time windows [offset + k*size, offset + (k+1)*size).",
      "\n    > SELECT k, _FUNC_(ts, '10 seconds') AS window, avg(v) FROM t GROUP BY k, _FUNC_(ts, '10 seconds');\n  "),
      tumbling _),
    (FunctionIdentifier("sw_hopping"), info("sw_hopping",
      "_FUNC_(time, size, step[, 'offset', offset]) - Hopping event-time windows of length size starting every step.",
      "\n    > SELECT _FUNC_(ts, '1 minute', '10 seconds') AS window, count(*) FROM t GROUP BY _FUNC_(ts, '1 minute', '10 seconds');\n  "),
      hopping _),
    (FunctionIdentifier("sw_count"), info("sw_count",
      "_FUNC_(size[, 'step', step], 'order_by', column[, 'partition_by', column ...]) - Count windows of size rows starting every step rows per key, in order_by order.",
      "\n    > SELECT k, _FUNC_(3, 'order_by', seq) AS window, sum(v) FROM t GROUP BY k, _FUNC_(3, 'order_by', seq);\n  "),
      count _)
  )
}
