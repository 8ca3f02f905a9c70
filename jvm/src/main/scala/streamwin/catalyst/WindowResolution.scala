package streamwin.catalyst

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, EventTimeWatermark, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.util.toPrettySQL
import org.apache.spark.sql.types._

import streamwin.spec._

/**
 * The rewrites behind [[ResolveStreamWindows]]: an Aggregate grouped by a window column becomes
 * Project(WindowAggregate), and a Project selecting one becomes Project(WindowAssign). The time,
 * order, signal and key expressions are computed by a Project below, so streamwin's nodes only ever
 * see attributes. Each family's rules for its columns come from its spec ([[WindowSpec.leadingColumn]],
 * [[WindowSpec.signalColumn]]). Windows over a stream get the same nodes; planning hosts them on
 * Spark's state store (`streamwin.execution.StreamingWindowHost`).
 */
object WindowResolution {

  def hasWindow(e: Expression): Boolean = e.exists(_.isInstanceOf[StreamWindow])

  /** The window of a top-level window column (possibly aliased, even twice: a renamed window), or None. */
  private def topLevelWindow(e: Expression): Option[StreamWindow] = e match {
    case w: StreamWindow => Some(w)
    case Alias(child, _) => topLevelWindow(child)
    case _ => None
  }

  /**
   * The window column a node produces, named `window` as Spark names its own. Windows of event time
   * carry Spark's time-window marker, so `window_time(window)` gives their event time (end - 1 µs)
   * to window the results again, and the time column's watermark, so a stream can chain them.
   */
  private def windowAttribute(window: StreamWindow): AttributeReference =
    AttributeReference("window", window.dataType, nullable = false, windowMetadata(window))()

  /** The metadata of a window column (see [[windowAttribute]]); empty for windows without event time. */
  def windowMetadata(window: StreamWindow): Metadata =
    window.spec match {
      case _: EventTimeWindowSpec =>
        val time = window.timeOrOrder match {
          case a: Attribute => a.metadata
          case EkuiperEventTime(a: Attribute) => a.metadata // eKuiper SQL's TIMESTAMP column, as it is
          case _ => Metadata.empty
        }
        val builder = new MetadataBuilder().putBoolean(TimeWindow.marker, true)
        if (time.contains(EventTimeWatermark.delayKey)) {
          builder.putLong(EventTimeWatermark.delayKey, time.getLong(EventTimeWatermark.delayKey))
        }
        builder.build()
      // eKuiper's count windows follow its event time: their end is their last row's time, and the column
      // carries its watermark, so a stream groups the tagged rows by window in append mode (GROUP BY
      // COUNTWINDOW(5), ID; see EkuiperDialect).
      case _ => window.timeOrOrder match {
        case EkuiperEventTime(a: Attribute) if a.metadata.contains(EventTimeWatermark.delayKey) =>
          new MetadataBuilder().putLong(EventTimeWatermark.delayKey, a.metadata.getLong(EventTimeWatermark.delayKey)).build()
        case _ => Metadata.empty
      }
    }

  /**
   * A grouped window selected under a name (`sw_tumbling(...) AS w`, or `window`) carries its
   * metadata from the start: an outer query's `window_time(w)` may be checked by Spark before the
   * Aggregate itself is rewritten (after resolution).
   */
  def withWindowMetadata(e: NamedExpression): NamedExpression = e match {
    case alias @ Alias(w: StreamWindow, name) if w.resolved && !alias.metadata.contains(TimeWindow.marker) =>
      val metadata = windowMetadata(w)
      if (metadata == Metadata.empty) alias
      else Alias(w, name)(exprId = alias.exprId, qualifier = alias.qualifier, explicitMetadata = Some(metadata),
        nonInheritableMetadataKeys = alias.nonInheritableMetadataKeys)
    case other => other
  }

  def needsWindowMetadata(e: NamedExpression): Boolean = withWindowMetadata(e) ne e

  /** The window a query groups by (its grouping holds one, possibly aliased), if any. */
  def groupedWindow(a: Aggregate): Option[StreamWindow] = a.groupingExpressions.flatMap {
    case sets: BaseGroupingSets => sets.children.flatMap(topLevelWindow) // ROLLUP, CUBE, GROUPING SETS
    case e => topLevelWindow(e).toSeq
  }.headOption

  /** A window's fields (`window.start`) may be read where the window is grouped by. */
  private def withoutFieldReads(e: Expression): Expression = e.transformUp {
    case GetStructField(_: StreamWindow, _, _) => Literal(null)
  }

  private def rejectNested(e: Expression): Unit = {
    val inner = topLevelWindow(e).map(_.children).getOrElse(Seq(e))
    inner.foreach(_.collectFirst { case w: StreamWindow => w }.foreach { w =>
      throw StreamwinErrors.misuse(w.spec.function,
        s"a window column cannot be used inside another expression (${toPrettySQL(e)}); " +
          "select or group by the window itself, then use its fields (window.start, window.end, window.kind)")
    })
  }

  /** A window column in agg(...) of an Aggregate that does not group by it. */
  def windowOnlyInAgg(a: Aggregate): AnalysisException = {
    val w = a.aggregateExpressions.flatMap(_.collectFirst { case w: StreamWindow => w }).head
    StreamwinErrors.misuse(w.spec.function,
      "a window column used in agg(...) must also be in groupBy(...): df.groupBy(keys..., window).agg(...)")
  }

  /** The checks every family shares; each family's own column rules come from its spec. */
  private def validate(w: StreamWindow, grouped: Boolean): Unit = {
    val f = w.spec.function
    w.spec.leadingColumn.check(f, w.timeOrOrder)
    for (signal <- w.signal; rule <- w.spec.signalColumn) rule.check(f, signal)
    w.arrivalOrder.foreach(InputColumn.Order.check(f, _))
    if (grouped && w.partitionBy.nonEmpty) {
      throw StreamwinErrors.invalidArgument(f, "partition_by",
        "is only for select(...); in groupBy(...) the other grouping columns are the keys")
    }
  }

  /** The signal as the engine reads it, and the spec that reads it (see [[WindowSpec.bindSignal]]). */
  private def signalAttribute(w: StreamWindow, extra: ArrayBuffer[NamedExpression]): (streamwin.spec.WindowSpec, Option[Attribute]) =
    w.signal match {
      case None => (w.spec, None)
      case Some(s) =>
        val (spec, read) = w.spec.bindSignal(s)
        (spec, Some(asAttribute(read, "_sw_signal", extra)))
    }

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

  /** A window over a stream is checked now (it is planned per micro-batch) and gets the metrics its micro-batches share. */
  private def streamMetrics(node: WindowNode): Option[StreamWindowMetrics] =
    if (node.child.isStreaming) Some(StreamWindowMetrics.create()) else None

  def resolveAggregate(a: Aggregate): LogicalPlan = {
    a.groupingExpressions.foreach(rejectNested)
    a.aggregateExpressions.map(withoutFieldReads).foreach(rejectNested)
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
    val (spec, signal) = signalAttribute(window, extra)
    val arrivalOrder = window.arrivalOrder.map(asAttribute(_, "_sw_order", extra))
    val windowAttr = windowAttribute(window)

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

    val child = withExtraColumns(a.child, extra.toSeq)
    val node = WindowAggregate(spec, window.policies, arrivalOrder, keys, timeOrOrder, signal, windowAttr,
      aggregates.map(_.aggregateFunction), aggregates.map(_.filter), aggregates.map(_.resultAttribute), child)(None)
    val available = AttributeSet(node.output)
    results.foreach { r =>
      val missing = r.references.filterNot(available.contains)
      if (missing.nonEmpty) {
        throw StreamwinErrors.misuse(window.spec.function,
          s"${missing.map(m => s"`${m.name}`").mkString(", ")} in ${toPrettySQL(r)} is neither grouped nor " +
            "aggregated; add it to groupBy(...) or wrap it in an aggregate such as first(...)")
      }
    }
    // Over a stream, the stream's own check comes after every check of the query itself.
    Project(results, node.copy()(streamMetrics(node)))
  }

  def resolveProject(p: Project): LogicalPlan = {
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
    val (spec, signal) = signalAttribute(window, extra)
    val arrivalOrder = window.arrivalOrder.map(asAttribute(_, "_sw_order", extra))
    val windowAttr = windowAttribute(window)
    val projectList = p.projectList.map(_.transformDown {
      case w: StreamWindow if w.semanticEquals(window) => windowAttr
    }.asInstanceOf[NamedExpression])
    // The window operator tags each row with every window output holding it, reading a window's
    // rows back from its (spilling) row bag.
    val partitionBy = window.partitionBy.map(e => asAttribute(e, toPrettySQL(e), extra))
    val child = withExtraColumns(p.child, extra.toSeq)
    val tagged = WindowAssign(spec, window.policies, arrivalOrder, timeOrOrder, signal, partitionBy, windowAttr, child)(None)
    Project(projectList, tagged.copy()(streamMetrics(tagged)))
  }
}
