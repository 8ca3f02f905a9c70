package streamwin.catalyst

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{CurrentTimestamp, Expression, ExpressionInfo, Literal}

import streamwin.spec._

/** The SQL functions `sw_*`: each parses and validates its literal arguments into a WindowSpec. */
object WindowFunctions {
  type Builder = Seq[Expression] => Expression

  private def tumbling(args: Seq[Expression]): Expression = {
    val a = new WindowArguments("sw_tumbling", Seq("time", "size"), Seq("offset", "order_by", "partition_by") ++
      WindowPolicies.optionNames, Set("partition_by"), args)
    val size = a.duration("size", a.positional("size"), wholeMicros = true)
    alignedWindow(a, TimeWindowSpec(a.function, size, size, alignedOffset(a)))
  }

  private def hopping(args: Seq[Expression]): Expression = {
    val a = new WindowArguments("sw_hopping", Seq("time", "size", "step"), Seq("offset", "order_by", "partition_by") ++
      WindowPolicies.optionNames, Set("partition_by"), args)
    val size = a.duration("size", a.positional("size"), wholeMicros = true)
    val step = a.duration("step", a.positional("step"), wholeMicros = true)
    alignedWindow(a, TimeWindowSpec(a.function, size, step, alignedOffset(a)))
  }

  /** Durations of aligned windows are also whole microseconds, as window()'s windowDuration, slideDuration and startTime. */
  private def alignedOffset(a: WindowArguments): Long =
    a.option("offset").map(a.duration("offset", _, allowZero = true, allowNegative = true, wholeMicros = true)).getOrElse(0L)

  /** Tumbling and hopping windows take every policy; `order_by` makes them replay rows in that order. */
  private def alignedWindow(a: WindowArguments, spec: TimeWindowSpec): StreamWindow = {
    val order = a.option("order_by")
    val policies = WindowPolicies.parse(a, orderGiven = order.isDefined, WindowPolicies.alignedSupport)
    StreamWindow(spec, (a.positional("time") +: order.toSeq) ++ a.optionValues("partition_by"), policies)
  }

  private def count(args: Seq[Expression]): Expression = {
    val a = new WindowArguments("sw_count", Seq("size"), Seq("step", "align", "order_by", "partition_by") ++
      WindowPolicies.optionNames, Set("partition_by"), args)
    val size = a.positiveCount("size", a.positional("size"))
    val step = a.option("step").map(a.positiveCount("step", _)).getOrElse(size)
    val alignEnd = a.option("align").map(a.choice("align", _, Seq("start", "end"))).contains("end")
    if (step > size) {
      throw StreamwinErrors.invalidArgument(a.function, "step",
        s"must not exceed size ($step > $size): count windows cover every row (Quix and eKuiper rule)")
    }
    val policies = WindowPolicies.parse(a, orderGiven = false,
      WindowPolicies.sequenceSupport(endAligned = alignEnd))
    StreamWindow(CountWindowSpec(size, step, alignEnd), requiredOrder(a) +: a.optionValues("partition_by"), policies)
  }

  private def sliding(args: Seq[Expression]): Expression = {
    val a = new WindowArguments("sw_sliding", Seq("time", "size"), Seq("partition_by", "order_by") ++ WindowPolicies.optionNames,
      Set("partition_by"), args)
    val order = a.option("order_by")
    val policies = WindowPolicies.parse(a, orderGiven = order.isDefined, WindowPolicies.slidingSupport)
    val size = a.duration("size", a.positional("size"))
    StreamWindow(SlidingWindowSpec(size), (a.positional("time") +: order.toSeq) ++ a.optionValues("partition_by"), policies)
  }

  private def session(args: Seq[Expression]): Expression = {
    val a = new WindowArguments("sw_session", Seq("time", "gap"),
      Seq("max_duration", "partition_by", "order_by") ++ WindowPolicies.optionNames, Set("partition_by"), args)
    val gapArg = a.positional("gap")
    // A literal is a fixed gap; any other expression is a per-row (dynamic) gap, as in session_window.
    val fixedGap = gapArg match {
      case _: Literal => Some(a.duration("gap", gapArg))
      case _ => None
    }
    val maxDuration = a.option("max_duration").map(a.duration("max_duration", _))
    (fixedGap, maxDuration) match {
      case (None, Some(_)) => throw StreamwinErrors.invalidArgument(a.function, "max_duration",
        "needs a fixed gap (a duration literal); with a dynamic gap column sessions cannot be cut (eKuiper rule)")
      case (Some(g), Some(d)) if d < g => throw StreamwinErrors.invalidArgument(a.function, "max_duration",
        s"must be at least the gap (${d}us < ${g}us): a session always lasts its gap")
      case _ =>
    }
    val order = a.option("order_by")
    val policies = WindowPolicies.parse(a, orderGiven = order.isDefined,
      WindowPolicies.sessionSupport(plain = fixedGap.isDefined && maxDuration.isEmpty))
    val spec = SessionWindowSpec(fixedGap.getOrElse(0L), fixedGap.isEmpty, maxDuration)
    val children = (a.positional("time") +: (if (fixedGap.isEmpty) Seq(gapArg) else Nil)) ++ order.toSeq
    StreamWindow(spec, children ++ a.optionValues("partition_by"), policies)
  }

  private def interval(args: Seq[Expression]): Expression = {
    val a = new WindowArguments("sw_interval", Seq("time", "duration"),
      Seq("creation_period", "discard_age", "offset", "order_by", "partition_by") ++ WindowPolicies.optionNames,
      Set("partition_by"), args)
    val policies = WindowPolicies.parse(a, orderGiven = false, WindowPolicies.intervalSupport)
    val duration = a.duration("duration", a.positional("duration"))
    val period = a.option("creation_period").map(a.duration("creation_period", _)).getOrElse(duration)
    val discardAge = a.option("discard_age").map(a.duration("discard_age", _, allowZero = true)).getOrElse(0L)
    val offset = a.option("offset").map(a.duration("offset", _, allowZero = true, allowNegative = true)).getOrElse(0L)
    val order = a.option("order_by")
    val spec = IntervalWindowSpec(duration, period, discardAge, offset, arrivalOrder = order.isDefined)
    StreamWindow(spec, (a.positional("time") +: order.toSeq) ++ a.optionValues("partition_by"), policies)
  }

  private def timer(args: Seq[Expression]): Expression = {
    val a = new WindowArguments("sw_timer", Seq("period"), Seq("ingest_time", "order_by") ++ WindowPolicies.optionNames,
      Set.empty, args)
    val period = a.duration("period", a.positional("period"))
    val policies = WindowPolicies.parse(a, orderGiven = false, WindowPolicies.timerSupport)
    // Without an arrival time, the whole input arrived at once: at the query's processing time.
    val ingestTime = a.option("ingest_time")
    StreamWindow(TimeWindowSpec(a.function, period, period, 0L, processingTime = ingestTime.isEmpty),
      Seq(ingestTime.getOrElse(CurrentTimestamp())),
      policies)
  }

  private def requiredOrder(a: WindowArguments): Expression = a.option("order_by").getOrElse(
    throw StreamwinErrors.invalidArgument(a.function, "order_by",
      "is required: these windows follow each key's arrival order, so name the column that gives it " +
        "(for example a Kafka offset, an ingestion sequence or the event time)"))

  private def dataWindow(function: String, signalName: String, extraPositional: Seq[String])(
      spec: WindowArguments => SequenceWindowSpec)(args: Seq[Expression]): Expression = {
    val a = new WindowArguments(function, signalName +: extraPositional,
      Seq("order_by", "partition_by") ++ WindowPolicies.optionNames, Set("partition_by"), args)
    val policies = WindowPolicies.parse(a, orderGiven = false, WindowPolicies.sequenceSupport(endAligned = false))
    StreamWindow(spec(a), Seq(requiredOrder(a), a.positional(signalName)) ++ a.optionValues("partition_by"), policies)
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
    function("sw_sliding",
      "_FUNC_(time, size[, 'partition_by', column ...]) - One window per event time t of a key, covering [t - size, t] with both ends inclusive (eKuiper SLIDINGWINDOW, Quix sliding_window).",
      "SELECT k, _FUNC_(ts, '1 hour') AS window, avg(temp) FROM t GROUP BY k, _FUNC_(ts, '1 hour');",
      sliding _),
    function("sw_session",
      "_FUNC_(time, gap[, 'max_duration', duration][, 'partition_by', column ...]) - Session windows that end gap after their last row (gap may be an INTERVAL or STRING column); max_duration cuts long sessions at aligned check times (eKuiper SESSIONWINDOW).",
      "SELECT k, _FUNC_(ts, '5 minutes', 'max_duration', '1 hour') AS window, count(*) FROM t GROUP BY k, _FUNC_(ts, '5 minutes', 'max_duration', '1 hour');",
      session _),
    function("sw_interval",
      "_FUNC_(time, duration[, 'creation_period', period][, 'discard_age', age][, 'offset', offset][, 'order_by', column][, 'partition_by', column ...]) - SPL timeInterval panes [offset + k*period, + duration): final when event-time progress reaches the end, emitted again as update for late rows until end + discard_age.",
      "SELECT k, _FUNC_(ts, '10 seconds', 'creation_period', '5 seconds', 'discard_age', '15 seconds', 'order_by', seq) AS window, sum(v) FROM t GROUP BY k, _FUNC_(ts, '10 seconds', 'creation_period', '5 seconds', 'discard_age', '15 seconds', 'order_by', seq);",
      interval _),
    function("sw_timer",
      "_FUNC_(period[, 'ingest_time', column]) - Processing-time windows: what arrived in each period, by ingest_time, or all rows at the query's processing time when none is given (KX timer, SPL time(T)).",
      "SELECT _FUNC_('5 seconds', 'ingest_time', arrived) AS window, count(*) FROM t GROUP BY _FUNC_('5 seconds', 'ingest_time', arrived);",
      timer _),
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
