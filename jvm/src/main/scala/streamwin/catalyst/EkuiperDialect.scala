package streamwin.catalyst

import java.time.{Instant, ZoneId}
import java.util.Locale

import org.apache.spark.sql.catalyst.analysis.{FunctionRegistry, UnresolvedAttribute, UnresolvedFunction, UnresolvedHaving, UnresolvedStar}
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, LogicalPlan, Project, UnaryNode}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.UNRESOLVED_FUNCTION
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, TimestampType}

import streamwin.spec.StreamwinErrors

/**
 * eKuiper's window SQL (seed 001) on Spark SQL: `GROUP BY ID, TUMBLINGWINDOW(ss, 10)`,
 * `HOPPINGWINDOW(unit, size, hop)`, `SLIDINGWINDOW(unit, size)`, `SESSIONWINDOW(unit, max_duration,
 * timeout)`, `COUNTWINDOW(size[, interval])`, each optionally followed by `FILTER (WHERE cond)`, a
 * sliding window by `OVER (WHEN cond)` (only the rows matching cond open a window; cond may read
 * `last_hit_time()` and `last_hit_count()`), and
 * `window_start()` / `window_end()` (epoch milliseconds) in the select list and HAVING. Each window is
 * translated into the matching `sw_*` window before analysis (a hint-batch rule over the parsed
 * plan), so eKuiper's windows are streamwin's families, not a second implementation:
 *
 *  - the event time is the column named by the session conf `spark.streamwin.ekuiper.timestamp`
 *    (BIGINT epoch milliseconds or TIMESTAMP), as eKuiper's stream definition declares
 *    `TIMESTAMP="ts"`; count windows follow `spark.streamwin.ekuiper.order` when set (else the event
 *    time) as their arrival order;
 *  - time windows align to natural time in the session time zone (eKuiper's local zone);
 *  - the window is over the whole stream and the other GROUP BY columns group rows within each window
 *    (eKuiper rule): tumbling and hopping windows are the same for every key, so they group directly;
 *    sliding, session and count windows tag the stream's rows first, then group;
 *  - FILTER rows before they enter windows; WHERE filters rows before tumbling, hopping and session
 *    windows, and a sliding or count window's rows after it is formed (eKuiper keeps WHERE above those;
 *    the seed: with WHERE a count window's output length varies, with FILTER it is always the size);
 *    incomplete count windows are not output (eKuiper waits);
 *  - a windowed query without aggregates outputs each window's rows (eKuiper emits the window's list
 *    of rows), tagged with `window`; HAVING then keeps the windows whose aggregate passes;
 *  - with aggregates, a plain column outside GROUP BY is the window's first row's value (eKuiper).
 */
object EkuiperDialect extends Rule[LogicalPlan] {
  /** The session conf naming the event-time column (eKuiper's stream definition `TIMESTAMP="ts"`). */
  val TimestampConf = "spark.streamwin.ekuiper.timestamp"
  /** The session conf naming the arrival order of count windows (default: the event time). */
  val OrderConf = "spark.streamwin.ekuiper.order"

  /**
   * eKuiper's window functions, as eKuiper writes them: the dialect recognises exactly these (any case),
   * its arity errors quote their arguments, and docs/reference/sql.md lists them from here. Each example
   * runs on the docs' `demo` stream (color, size, ts) with `spark.streamwin.ekuiper.timestamp` = ts.
   */
  val windows: Seq[EkuiperFunction] = Seq(
    EkuiperFunction("TUMBLINGWINDOW", "(unit, size)",
      "Tumbling windows of size units, aligned to natural time in the session time zone (sw_tumbling).",
      "SELECT color, count(*) AS c, window_start(), window_end() FROM demo GROUP BY color, TUMBLINGWINDOW(ss, 2)"),
    EkuiperFunction("HOPPINGWINDOW", "(unit, size, hop)",
      "Windows of size units starting every hop units, aligned as TUMBLINGWINDOW (sw_hopping).",
      "SELECT count(*) AS c, window_start() FROM demo GROUP BY HOPPINGWINDOW(ss, 4, 2)"),
    EkuiperFunction("SLIDINGWINDOW", "(unit, size[, delay]) [OVER (WHEN condition)]",
      "One window per row of the stream at time t, holding the rows of [t - size, t] (sw_sliding); with a " +
        "delay, the rows of [t - size, t + delay), output once the stream reaches t + delay (a zero size then " +
        "holds what follows t alone). With OVER (WHEN condition), only the rows matching the condition open a " +
        "window, which holds the other rows of its range too (sw_sliding's when).",
      "SELECT count(*) AS c, window_end() FROM demo GROUP BY SLIDINGWINDOW(ss, 2)"),
    EkuiperFunction("SESSIONWINDOW", "(unit, max_duration, timeout)",
      "Sessions of the stream that end timeout units after their last row, cut at aligned multiples of " +
        "max_duration (sw_session with max_duration).",
      "SELECT count(*) AS c, window_start(), window_end() FROM demo GROUP BY SESSIONWINDOW(ss, 60, 1)"),
    EkuiperFunction("COUNTWINDOW", "(size[, interval])",
      "Windows of size rows of the stream; with interval, at every interval-th row the latest size rows " +
        "(sw_count, aligned at the end). Incomplete windows are not output.",
      "SELECT count(*) AS c, sum(size) AS s FROM demo GROUP BY COUNTWINDOW(3, 1)"))

  /** eKuiper's functions of the grouped window's bounds, in epoch milliseconds. */
  val bounds: Seq[EkuiperFunction] = Seq(
    EkuiperFunction("window_start", "()", "The start of the row's window, in epoch milliseconds.",
      "SELECT window_start(), count(*) AS c FROM demo GROUP BY TUMBLINGWINDOW(ss, 2)"),
    EkuiperFunction("window_end", "()", "The end of the row's window, in epoch milliseconds.",
      "SELECT window_end(), max(size) AS biggest FROM demo GROUP BY TUMBLINGWINDOW(ss, 2) HAVING count(*) > 2"))

  /** eKuiper's functions of a sliding window's trigger condition (`OVER (WHEN ...)`), and nowhere else. */
  val conditionFunctions: Seq[EkuiperFunction] = Seq(
    EkuiperFunction("last_hit_time", "()",
      "In OVER (WHEN condition): the event time, in epoch milliseconds, of the last row whose condition held " +
        "(0 before any); a row reads it before its own condition is known.",
      "SELECT count(*) AS c, window_start(), window_end() FROM demo " +
        "GROUP BY SLIDINGWINDOW(ss, 2) OVER (WHEN ts - last_hit_time() > 1000)"),
    EkuiperFunction("last_hit_count", "()",
      "In OVER (WHEN condition): how many rows' condition held before this row.",
      "SELECT collect_list(size) AS sizes FROM demo " +
        "GROUP BY SLIDINGWINDOW(ss, 1) OVER (WHEN size > 2 AND last_hit_count() < 2)"))

  /**
   * The time units of eKuiper's windows, written bare in any case, and the Spark unit each stands for.
   * eKuiper's list says `mi` for minutes; its own window examples write `mm` (`SLIDINGWINDOW(mm, 1)`,
   * `SESSIONWINDOW(mm, 2, 1)`), so both are minutes.
   */
  val timeUnits: Seq[(String, String)] =
    Seq("dd" -> "days", "hh" -> "hours", "mi" -> "minutes", "mm" -> "minutes", "ss" -> "seconds", "ms" -> "milliseconds")

  private[catalyst] val windowNames = windows.map(_.name.toLowerCase(Locale.ROOT)).toSet
  private[catalyst] val boundNames = bounds.map(_.name.toLowerCase(Locale.ROOT)).toSet
  private val conditionNames = conditionFunctions.map(_.name.toLowerCase(Locale.ROOT)).toSet

  private[catalyst] def nameOf(f: UnresolvedFunction): String = f.nameParts.last.toLowerCase(Locale.ROOT)

  override def apply(plan: LogicalPlan): LogicalPlan = if (!plan.containsPattern(UNRESOLVED_FUNCTION)) plan else {
    val rewritten = plan.resolveOperatorsDownWithPruning(_.containsPattern(UNRESOLVED_FUNCTION)) {
      case UnresolvedHaving(condition, agg: Aggregate) if windowOf(agg).isDefined => rewrite(agg, Some(condition))
      case agg: Aggregate if windowOf(agg).isDefined => rewrite(agg, None)
    }
    // What is left is misplaced: a window outside GROUP BY, or window_start() outside a windowed query.
    rewritten.foreach(_.expressions.foreach(_.foreach {
      case f: UnresolvedFunction if windowNames.contains(nameOf(f)) =>
        throw StreamwinErrors.misuse(nameOf(f).toUpperCase(Locale.ROOT),
          "an eKuiper window belongs in GROUP BY (e.g. GROUP BY ID, TUMBLINGWINDOW(ss, 10)), once per query")
      case f: UnresolvedFunction if boundNames.contains(nameOf(f)) =>
        throw StreamwinErrors.misuse(s"${nameOf(f)}()",
          "is only available in a windowed query (GROUP BY with TUMBLINGWINDOW, HOPPINGWINDOW, SLIDINGWINDOW, " +
            "SESSIONWINDOW or COUNTWINDOW)")
      case f: UnresolvedFunction if conditionNames.contains(nameOf(f)) =>
        throw StreamwinErrors.misuse(s"${nameOf(f)}()",
          "is only available in the condition of a sliding window: GROUP BY SLIDINGWINDOW(unit, size) OVER (WHEN condition)")
      case _ =>
    }))
    rewritten
  }

  private def windowOf(agg: Aggregate): Option[UnresolvedFunction] = {
    val calls = agg.groupingExpressions.collect { case f: UnresolvedFunction if windowNames.contains(nameOf(f)) => f }
    if (calls.size > 1) {
      throw StreamwinErrors.misuse(nameOf(calls(1)).toUpperCase(Locale.ROOT), "a query groups by one eKuiper window only")
    }
    calls.headOption
  }

  private def rewrite(agg: Aggregate, having: Option[Expression]): LogicalPlan = {
    val call = windowOf(agg).get
    val window = EkuiperWindow.parse(call, conf)
    val (where, source) = agg.child match {
      case Filter(condition, child) => (Some(condition), child)
      case child => (None, child)
    }
    val admitted = call.filter.map(Filter(_, source)).getOrElse(source)
    val selectList = agg.aggregateExpressions.map(e => withBounds(e).asInstanceOf[NamedExpression])
    // Rule (b) looks at the select list: `SELECT * ... HAVING count(*) > 2` outputs the passing windows' rows.
    val aggregating = selectList.exists(containsAggregate)
    val windowColumn = UnresolvedAttribute("window")
    val others = agg.groupingExpressions.filterNot(_ eq call)

    if (!window.wholeStream && aggregating) {
      // Tumbling and hopping windows are the same for every key: group by them directly.
      val grouped = Aggregate(others :+ window.sql, firstOfPlainColumns(selectList, others),
        where.map(Filter(_, admitted)).getOrElse(admitted))
      return having.map(h => UnresolvedHaving(withBounds(h), grouped)).getOrElse(grouped)
    }
    val beforeWindow = if (window.whereAfter) admitted else where.map(Filter(_, admitted)).getOrElse(admitted)
    val tagged = Project(Seq(UnresolvedStar(None), Alias(window.sql, "window")()), beforeWindow)
    val complete = if (window.dropsIncomplete) Filter(Not(EqualTo(field(windowColumn, "kind"), Literal("partial"))), tagged)
      else tagged
    val rows = if (window.whereAfter) where.map(Filter(_, complete)).getOrElse(complete) else complete
    if (aggregating) {
      val grouped = Aggregate(others :+ windowColumn, firstOfPlainColumns(selectList, others :+ windowColumn), rows)
      having.map(h => UnresolvedHaving(withBounds(h), grouped)).getOrElse(grouped)
    } else {
      // The windows' rows themselves; HAVING keeps the windows whose aggregate passes, over their rows.
      Project(selectList, having.map(h => havingOverWindows(withBounds(h), rows)).getOrElse(rows))
    }
  }

  /** window_start() / window_end(): the grouped window's bounds in epoch milliseconds, named as eKuiper names them. */
  private def withBounds(e: Expression): Expression = e match {
    case f: UnresolvedFunction if boundNames.contains(nameOf(f)) => Alias(bound(f), nameOf(f))()
    // The parser wraps an unaliased select item; eKuiper names the column after the function.
    case org.apache.spark.sql.catalyst.analysis.UnresolvedAlias(f: UnresolvedFunction, _)
        if boundNames.contains(nameOf(f)) => Alias(bound(f), nameOf(f))()
    case other => other.transformDown {
      case f: UnresolvedFunction if boundNames.contains(nameOf(f)) => bound(f)
    }
  }

  private def bound(f: UnresolvedFunction): Expression = {
    if (f.arguments.nonEmpty) throw StreamwinErrors.misuse(s"${nameOf(f)}()", "takes no arguments")
    UnixMillis(field(UnresolvedAttribute("window"), if (nameOf(f) == "window_start") "start" else "end"))
  }

  private def field(struct: Expression, name: String): Expression =
    org.apache.spark.sql.catalyst.analysis.UnresolvedExtractValue(struct, Literal(name))

  /** With aggregates, eKuiper outputs a plain column outside GROUP BY as the window's first row's value. */
  private def firstOfPlainColumns(selectList: Seq[NamedExpression], grouping: Seq[Expression]): Seq[NamedExpression] = {
    val grouped = grouping.collect { case a: UnresolvedAttribute => a.nameParts.map(_.toLowerCase(Locale.ROOT)) }.toSet
    selectList.map {
      case a: UnresolvedAttribute if !grouped.contains(a.nameParts.map(_.toLowerCase(Locale.ROOT))) &&
          !a.nameParts.headOption.exists(_.equalsIgnoreCase("window")) =>
        Alias(UnresolvedFunction("first", Seq(a), isDistinct = false), a.nameParts.last)()
      case other => other
    }
  }

  /** HAVING over each window's rows: its aggregates become window functions partitioned by the window. */
  private def havingOverWindows(condition: Expression, rows: LogicalPlan): LogicalPlan = {
    var n = 0
    val computed = scala.collection.mutable.ArrayBuffer[NamedExpression]()
    val test = condition.transformDown {
      case f: UnresolvedFunction if isAggregate(f) =>
        val name = s"$HavingColumnPrefix$n"
        n += 1
        computed += Alias(WindowExpression(f, WindowSpecDefinition(Seq(UnresolvedAttribute("window")), Nil,
          UnspecifiedFrame)), name)()
        UnresolvedAttribute(name)
    }
    EkuiperHavingRows(Filter(test, Project(UnresolvedStar(None) +: computed.toSeq, rows)))
  }

  /** The prefix of the columns [[havingOverWindows]] computes. */
  private[catalyst] val HavingColumnPrefix = "_ekuiper_having_"

  private def containsAggregate(e: Expression): Boolean = e.exists {
    case f: UnresolvedFunction => isAggregate(f)
    case _: AggregateFunction => true
    case _ => false
  }

  /** Spark's built-in aggregate functions (count, sum, collect_list, …), as eKuiper's are built in. */
  private def isAggregate(f: UnresolvedFunction): Boolean =
    FunctionRegistry.expressions.get(nameOf(f)).exists { case (info, _) =>
      try classOf[AggregateFunction].isAssignableFrom(Class.forName(info.getClassName))
      catch { case _: ClassNotFoundException => false }
    }
}

/**
 * The rows of the windows that passed HAVING, less the columns HAVING computed (see
 * EkuiperDialect.havingOverWindows): replaced by a projection once its child is resolved
 * ([[EkuiperHavingColumns]]), unresolved until then so that a `SELECT *` above waits for it and shows the
 * stream's columns only.
 */
private[catalyst] final case class EkuiperHavingRows(child: LogicalPlan) extends UnaryNode {
  override def output: Seq[Attribute] = child.output.filterNot(_.name.startsWith(EkuiperDialect.HavingColumnPrefix))
  override lazy val resolved: Boolean = false
  override protected def withNewChildInternal(newChild: LogicalPlan): EkuiperHavingRows = copy(child = newChild)
}

/** Resolution: drops the columns HAVING computed for the rows of the windows that passed it ([[EkuiperHavingRows]]). */
object EkuiperHavingColumns extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!plan.exists(_.isInstanceOf[EkuiperHavingRows])) plan
    else plan.resolveOperatorsUp {
      case h: EkuiperHavingRows if h.child.resolved => Project(h.output, h.child)
    }
}

/**
 * One eKuiper window call, translated: its `sw_*` call, whether it spans the whole stream (tagged
 * before grouping), whether WHERE applies after it (sliding and count windows), and whether incomplete
 * windows are dropped (count windows).
 */
private final case class EkuiperWindow(sql: Expression, wholeStream: Boolean, whereAfter: Boolean, dropsIncomplete: Boolean)

private object EkuiperWindow {
  private val units = EkuiperDialect.timeUnits.toMap

  def parse(call: UnresolvedFunction, conf: SQLConf): EkuiperWindow = {
    val name = EkuiperDialect.nameOf(call).toUpperCase(Locale.ROOT)
    // A sliding window's OVER (WHEN condition) comes as a last argument (see EkuiperOverWhen).
    val (args, conditions) = call.arguments.partition {
      case f: UnresolvedFunction => EkuiperDialect.nameOf(f) != EkuiperOverWhen.Marker
      case _ => true
    }
    def arity(expected: String, ok: Boolean): Unit = if (!ok) {
      throw StreamwinErrors.misuse(name, s"takes $expected argument(s) ($name${signature(name)}), got ${args.size}")
    }
    def unit: String = args.head match {
      case UnresolvedAttribute(Seq(u)) if units.contains(u.toLowerCase(Locale.ROOT)) => units(u.toLowerCase(Locale.ROOT))
      case other => throw StreamwinErrors.invalidArgument(name, "unit",
        s"must be a time unit written bare, one of dd, hh, mi (or mm), ss, ms (any case), got ${other.sql}")
    }
    def count(i: Int, argument: String, allowZero: Boolean = false): Long = args(i) match {
      case Literal(v: Int, IntegerType) if v > 0 || (allowZero && v == 0) => v.toLong
      case Literal(v: Long, LongType) if v > 0 || (allowZero && v == 0) => v
      case other => throw StreamwinErrors.invalidArgument(name, argument,
        s"must be a ${if (allowZero) "non-negative" else "positive"} integer literal, got ${other.sql}")
    }
    def duration(i: Int, argument: String, allowZero: Boolean = false): Expression =
      Literal(s"${count(i, argument, allowZero)} $unit")
    def time: Expression = {
      val column = conf.getConfString(EkuiperDialect.TimestampConf, "")
      if (column.isEmpty) throw StreamwinErrors.misuse(name,
        s"needs the event-time column: set the session conf ${EkuiperDialect.TimestampConf} to its name (a BIGINT " +
          "of epoch milliseconds, as eKuiper's TIMESTAMP=\"ts\", or a TIMESTAMP)")
      EkuiperEventTime(UnresolvedAttribute.quotedString(column))
    }
    def sw(function: String, arguments: Expression*): Expression =
      UnresolvedFunction(Seq(function), arguments, isDistinct = false)
    // eKuiper aligns time windows to natural time in its zone: windows start at local midnight, hours, …
    def alignment: Seq[Expression] = {
      val offset = ZoneId.of(conf.sessionLocalTimeZone).getRules.getStandardOffset(Instant.now()).getTotalSeconds
      Seq(Literal("offset"), Literal(s"${-offset} seconds"))
    }
    name match {
      case "TUMBLINGWINDOW" =>
        arity("2", args.size == 2)
        EkuiperWindow(sw("sw_tumbling", time +: duration(1, "size") +: alignment: _*), false, false, false)
      case "HOPPINGWINDOW" =>
        arity("3", args.size == 3)
        EkuiperWindow(sw("sw_hopping", time +: duration(1, "size") +: duration(2, "hop") +: alignment: _*), false, false,
          false)
      case "SLIDINGWINDOW" =>
        arity("2 or 3", args.size == 2 || args.size == 3)
        val when = conditions.headOption.toSeq.flatMap { case f: UnresolvedFunction =>
          Seq(Literal("when"), conditionOf(f.arguments.head))
        }
        // A delay of 0 is none; a size of 0 takes only what follows each row, so it needs a delay.
        val delay = if (args.size == 3) count(2, "delay", allowZero = true) else 0L
        val delayOption = if (delay > 0) Seq(Literal("delay"), duration(2, "delay")) else Nil
        // eKuiper keeps WHERE above a sliding window (as above a count window): it filters each window's rows.
        EkuiperWindow(sw("sw_sliding", time +: duration(1, "size", allowZero = delay > 0) +: (delayOption ++ when): _*),
          true, true, false)
      case "SESSIONWINDOW" =>
        arity("3", args.size == 3)
        EkuiperWindow(sw("sw_session", time, duration(2, "timeout"), Literal("max_duration"), duration(1, "max_duration")),
          true, false, false)
      case "COUNTWINDOW" =>
        arity("1 or 2", args.size == 1 || args.size == 2)
        val order = (conf.getConfString(EkuiperDialect.OrderConf, ""), conf.getConfString(EkuiperDialect.TimestampConf, "")) match {
          case ("", "") => throw StreamwinErrors.misuse(name, s"needs the order of its rows: set the session conf " +
            s"${EkuiperDialect.TimestampConf} (the event time) or ${EkuiperDialect.OrderConf} (an arrival order, e.g. a Kafka offset)")
          case ("", _) => time
          case (column, _) => UnresolvedAttribute.quotedString(column)
        }
        // eKuiper: "the 2nd parameter should not be larger than the 1st".
        if (args.size == 2 && count(1, "interval") > count(0, "size")) throw StreamwinErrors.invalidArgument(name, "interval",
          s"must not exceed the size (${count(1, "interval")} > ${count(0, "size")}): count windows cover every row")
        val size = Literal(count(0, "size"))
        val window =
          if (args.size == 1) sw("sw_count", size, Literal("order_by"), order)
          else sw("sw_count", size, Literal("step"), Literal(count(1, "interval")), Literal("align"), Literal("end"),
            Literal("order_by"), order)
        EkuiperWindow(window, true, true, true)
    }
  }

  /** The trigger condition, its last_hit_time() and last_hit_count() the window's own. */
  private def conditionOf(condition: Expression): Expression = condition.transformDown {
    case f: UnresolvedFunction if LastHit.functionNames.contains(EkuiperDialect.nameOf(f)) =>
      if (f.arguments.nonEmpty) throw StreamwinErrors.misuse(s"${EkuiperDialect.nameOf(f)}()", "takes no arguments")
      LastHit(EkuiperDialect.nameOf(f).stripPrefix("last_hit_"))
  }

  private def signature(name: String): String = EkuiperDialect.windows.find(_.name == name).map(_.arguments).getOrElse("")
}

/**
 * One function of eKuiper's window SQL.
 *
 * @param name        as eKuiper writes it (SQL matches it in any case)
 * @param arguments   its argument list, in eKuiper's order
 * @param description what it is here, and the `sw_*` function it becomes
 * @param example     a query using it
 */
final case class EkuiperFunction(name: String, arguments: String, description: String, example: String)

/** eKuiper's event time: a BIGINT of epoch milliseconds (eKuiper's own), or a TIMESTAMP as it is. */
case class EkuiperEventTime(child: Expression) extends UnaryExpression with RuntimeReplaceable {
  override lazy val replacement: Expression = child.dataType match {
    case LongType | IntegerType => MillisToTimestamp(child)
    case _ => child
  }
  override def dataType: DataType = child.dataType match {
    case LongType | IntegerType => TimestampType
    case other => other
  }
  override def prettyName: String = "ekuiper_event_time"
  override protected def withNewChildInternal(newChild: Expression): EkuiperEventTime = copy(child = newChild)
}
