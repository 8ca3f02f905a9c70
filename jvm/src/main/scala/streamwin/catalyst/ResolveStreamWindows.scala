package streamwin.catalyst

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, CollectList}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Generate, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.util.toPrettySQL
import org.apache.spark.sql.types._

import streamwin.execution.StreamingWindowHost
import streamwin.spec._

/**
 * Analyzer rule: an Aggregate grouped by a window column becomes Project(WindowAggregate), and a
 * Project selecting one becomes Project(WindowAssign). The time, order and key expressions are
 * computed by a Project below, so streamwin's nodes only ever see attributes.
 */
object ResolveStreamWindows extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case a: Aggregate if a.childrenResolved && a.groupingExpressions.exists(containsWindow) &&
        a.expressions.forall(_.resolved) =>
      rewriteAggregate(a)
    case a: Aggregate if a.childrenResolved && !a.groupingExpressions.exists(containsWindow) &&
        a.aggregateExpressions.exists(containsWindow) =>
      val w = a.aggregateExpressions.flatMap(_.collectFirst { case w: StreamWindow => w }).head
      throw StreamwinErrors.misuse(w.spec.function,
        "a window column used in agg(...) must also be in groupBy(...): df.groupBy(keys..., window).agg(...)")
    case p: Project if p.childrenResolved && p.projectList.exists(containsWindow) &&
        p.projectList.forall(_.resolved) =>
      rewriteProject(p)
  }

  private def containsWindow(e: Expression): Boolean = e.exists(_.isInstanceOf[StreamWindow])

  /** The window of a top-level window column (possibly aliased, even twice: a renamed window), or None. */
  private def topLevelWindow(e: Expression): Option[StreamWindow] = e match {
    case w: StreamWindow => Some(w)
    case Alias(child, _) => topLevelWindow(child)
    case _ => None
  }

  private def rejectNested(e: Expression): Unit = {
    val inner = topLevelWindow(e).map(_.children).getOrElse(Seq(e))
    inner.foreach(_.collectFirst { case w: StreamWindow => w }.foreach { w =>
      throw StreamwinErrors.misuse(w.spec.function,
        s"a window column cannot be used inside another expression (${toPrettySQL(e)}); " +
          "select or group by the window itself, then use its fields (window.start, window.end, window.kind)")
    })
  }

  private def validate(w: StreamWindow, grouped: Boolean): Unit = {
    val f = w.spec.function
    w.spec match {
      case _: SequenceWindowSpec => checkOrderType(f, w.timeOrOrder)
      case _ => w.timeOrOrder.dataType match {
        case TimestampType | TimestampNTZType =>
        case other =>
          val name = if (w.spec.function == "sw_timer") "ingest_time" else "time"
          throw StreamwinErrors.invalidArgument(f, name,
            s"must be a TIMESTAMP or TIMESTAMP_NTZ column, got ${other.sql} (${toPrettySQL(w.timeOrOrder)}); " +
              "convert it first, for example with timestamp_seconds() or to_timestamp()")
      }
    }
    (w.spec, w.signal) match {
      case (SplitWindowSpec, Some(p)) if p.dataType != BooleanType =>
        throw StreamwinErrors.invalidArgument(f, "predicate",
          s"must be a BOOLEAN column or condition, got ${p.dataType.sql} (${toPrettySQL(p)})")
      case (PunctuationWindowSpec, Some(m)) if m.dataType != BooleanType =>
        throw StreamwinErrors.invalidArgument(f, "column",
          s"must be a BOOLEAN marker column, got ${m.dataType.sql} (${toPrettySQL(m)})")
      case (_: IntervalWindowSpec, Some(o)) => checkOrderType(f, o)
      case (_: SessionWindowSpec, Some(g)) => g.dataType match {
        case CalendarIntervalType | _: DayTimeIntervalType | _: StringType =>
        case other => throw StreamwinErrors.invalidArgument(f, "gap",
          s"must be a duration literal or an INTERVAL or STRING column (a dynamic gap), got ${other.sql} (${toPrettySQL(g)})")
      }
      case (_: DeltaWindowSpec, Some(c)) => c.dataType match {
        case _: NumericType | TimestampType | TimestampNTZType =>
        case other => throw StreamwinErrors.invalidArgument(f, "column",
          s"must be a numeric or timestamp column, got ${other.sql} (${toPrettySQL(c)})")
      }
      case _ =>
    }
    w.arrivalOrder.foreach(checkOrderType(f, _))
    if (grouped && w.partitionBy.nonEmpty) {
      throw StreamwinErrors.invalidArgument(f, "partition_by",
        "is only for select(...); in groupBy(...) the other grouping columns are the keys")
    }
  }

  private def checkOrderType(f: String, order: Expression): Unit = order.dataType match {
    case _: NumericType | TimestampType | TimestampNTZType | DateType | _: StringType =>
    case other => throw StreamwinErrors.invalidArgument(f, "order_by",
      s"must be a numeric, string, date or timestamp column, got ${other.sql} (${toPrettySQL(order)})")
  }

  /**
   * The signal as the engine reads it: a boolean, for delta the value as a double (seconds for
   * time), for a dynamic session gap microseconds, for timeInterval the order_by column.
   */
  private def signalAttribute(w: StreamWindow, extra: ArrayBuffer[NamedExpression]): Option[Attribute] =
    w.signal.map { s =>
      val value = (w.spec, s.dataType) match {
        case (_: SessionWindowSpec, _: StringType) => GapMicros(Cast(s, CalendarIntervalType))
        case (_: SessionWindowSpec, _) => GapMicros(s)
        case (_: DeltaWindowSpec, TimestampType | TimestampNTZType) => EpochSeconds(s)
        case (_: DeltaWindowSpec, DoubleType) => s
        case (_: DeltaWindowSpec, _) => Cast(s, DoubleType)
        case _ => s
      }
      asAttribute(value, "_sw_signal", extra)
    }

  /** A window node over a streaming child is hosted by Spark's transformWithState instead. */
  private def hosted(node: LogicalPlan): LogicalPlan =
    if (node.children.exists(_.isStreaming)) StreamingWindowHost.plan(node) else node

  /** Makes `e` an attribute of the plan, adding an alias to `extra` if it is computed. */
  private def asAttribute(e: Expression, name: => String, extra: ArrayBuffer[NamedExpression]): Attribute =
    e match {
      case a: Attribute => a
      case alias: Alias =>
        // An aliased grouping column (DataFrame groupBy(expr.alias("x"))) keeps its name and id.
        if (!extra.exists(_.exprId == alias.exprId)) extra += alias
        alias.toAttribute
      case other =>
        extra.collectFirst { case a: Alias if a.child.semanticEquals(other) => a }.map(_.toAttribute).getOrElse {
          val alias = Alias(other, name)()
          extra += alias
          alias.toAttribute
        }
    }

  private def withExtraColumns(child: LogicalPlan, extra: Seq[NamedExpression]): LogicalPlan =
    if (extra.isEmpty) child else Project(child.output ++ extra, child)

  private def rewriteAggregate(a: Aggregate): LogicalPlan = {
    a.groupingExpressions.foreach(rejectNested)
    a.aggregateExpressions.foreach(rejectNested)
    val windows = a.groupingExpressions.flatMap(topLevelWindow)
    val distinctWindows = windows.foldLeft(Seq.empty[StreamWindow]) { (acc, w) =>
      if (acc.exists(_.semanticEquals(w))) acc else acc :+ w
    }
    if (distinctWindows.size > 1) {
      throw StreamwinErrors.misuse(distinctWindows.head.spec.function,
        s"a query can group by one window column only, found ${distinctWindows.size}: " +
          distinctWindows.map(_.spec.function).mkString(", "))
    }
    val window = distinctWindows.head
    validate(window, grouped = true)

    val extra = new ArrayBuffer[NamedExpression]
    val keyExprs = a.groupingExpressions.filter(topLevelWindow(_).isEmpty)
    val keys = keyExprs.map(k => asAttribute(k, toPrettySQL(k), extra))
    val timeOrOrder = asAttribute(window.timeOrOrder, "_sw_time", extra)
    val signal = signalAttribute(window, extra)
    val arrivalOrder = window.arrivalOrder.map(asAttribute(_, "_sw_order", extra))
    val windowAttr = AttributeReference("window", window.dataType, nullable = false)()

    val aggregates = a.aggregateExpressions.flatMap(_.collect { case ae: AggregateExpression => ae })
      .foldLeft(Seq.empty[AggregateExpression]) { (acc, ae) =>
        if (acc.exists(_.semanticEquals(ae))) acc else acc :+ ae
      }
    aggregates.find(_.isDistinct).foreach { ae =>
      throw StreamwinErrors.misuse(window.spec.function,
        s"DISTINCT aggregates are not supported in windows (${toPrettySQL(ae)}); " +
          "use approx_count_distinct(...) or size(collect_set(...)) instead")
    }

    val grouped: Seq[(Expression, Attribute)] = keyExprs.zip(keys).flatMap {
      case (alias: Alias, attr) => Seq(alias -> attr, alias.child -> attr)
      case pair => Seq(pair)
    } :+ (window -> windowAttr)
    def rewrite(e: Expression): Expression = e.transformDown {
      case ae: AggregateExpression => aggregates.find(_.semanticEquals(ae)).get.resultAttribute
      case g if grouped.exists(_._1.semanticEquals(g)) => grouped.find(_._1.semanticEquals(g)).get._2
    }
    val results = a.aggregateExpressions.map(rewrite(_).asInstanceOf[NamedExpression])

    val node = WindowAggregate(window.spec, window.policies, arrivalOrder, keys, timeOrOrder, signal, windowAttr,
      aggregates.map(_.aggregateFunction), aggregates.map(_.filter), aggregates.map(_.resultAttribute),
      withExtraColumns(a.child, extra.toSeq))
    val available = AttributeSet(node.output)
    results.foreach { r =>
      val missing = r.references.filterNot(available.contains)
      if (missing.nonEmpty) {
        throw StreamwinErrors.misuse(window.spec.function,
          s"${missing.map(m => s"`${m.name}`").mkString(", ")} in ${toPrettySQL(r)} is neither grouped nor " +
            "aggregated; add it to groupBy(...) or wrap it in an aggregate such as first(...)")
      }
    }
    Project(results, hosted(node))
  }

  private def rewriteProject(p: Project): LogicalPlan = {
    p.projectList.foreach(rejectNested)
    val windows = p.projectList.flatMap(topLevelWindow)
    if (windows.exists(w => !w.semanticEquals(windows.head))) {
      throw StreamwinErrors.misuse(windows.head.spec.function,
        "a select can hold one window column only; tag with one window, then group or join")
    }
    val window = windows.head
    validate(window, grouped = false)

    val extra = new ArrayBuffer[NamedExpression]
    val timeOrOrder = asAttribute(window.timeOrOrder, "_sw_time", extra)
    val signal = signalAttribute(window, extra)
    val arrivalOrder = window.arrivalOrder.map(asAttribute(_, "_sw_order", extra))
    val windowAttr = AttributeReference("window", window.dataType, nullable = false)()
    val projectList = p.projectList.map(_.transformDown {
      case w: StreamWindow if w.semanticEquals(window) => windowAttr
    }.asInstanceOf[NamedExpression])
    val tagged = window.spec match {
      case _: TimeWindowSpec | _: SequenceWindowSpec =>
        val partitionBy = window.partitionBy.map(e => asAttribute(e, toPrettySQL(e), extra))
        hosted(WindowAssign(window.spec, window.policies, arrivalOrder, timeOrOrder, signal, partitionBy, windowAttr,
          withExtraColumns(p.child, extra.toSeq)))
      case _ =>
        // A row's sliding, session or interval windows depend on the other rows of its stream: tag
        // by grouping the rows themselves (collect_list of the whole row) and exploding each window,
        // so tagged rows are exactly the members of the grouped windows.
        val partitionBy = window.partitionBy.zipWithIndex.map { case (e, i) =>
          val alias = Alias(e, s"_sw_partition_$i")()
          extra += alias
          alias.toAttribute
        }
        val columns = p.child.output
        val members = CollectList(CreateStruct(columns))
        val membersAttr = AttributeReference("_sw_members", members.dataType, nullable = false)()
        val grouped = hosted(WindowAggregate(window.spec, window.policies, arrivalOrder, partitionBy, timeOrOrder, signal,
          windowAttr, Seq(members), Seq(None), Seq(membersAttr), withExtraColumns(p.child, extra.toSeq)))
        val member = AttributeReference("_sw_member", members.dataType.asInstanceOf[ArrayType].elementType, nullable = false)()
        val exploded = Generate(Explode(membersAttr), unrequiredChildIndex = Seq(partitionBy.size + 1),
          outer = false, qualifier = None, generatorOutput = Seq(member), child = grouped)
        // Each column comes back under its own name and id, so the select list above still resolves.
        Project(columns.zipWithIndex.map { case (c, i) =>
          Alias(GetStructField(member, i, Some(c.name)), c.name)(exprId = c.exprId, qualifier = c.qualifier)
        } :+ windowAttr, exploded)
    }
    Project(projectList, tagged)
  }
}

/** Check rule: a window column anywhere else (a filter, an orderBy, an agg without groupBy) is misuse. */
object CheckStreamWindows extends (LogicalPlan => Unit) {
  override def apply(plan: LogicalPlan): Unit = plan.foreach { node =>
    node.expressions.foreach(_.collectFirst { case w: StreamWindow => w }.foreach { w =>
      throw StreamwinErrors.misuse(w.spec.function,
        s"a window column can only be used directly in groupBy(...) or select(...), not in ${node.nodeName}")
    })
  }
}
