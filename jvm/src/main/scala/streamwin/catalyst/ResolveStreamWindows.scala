package streamwin.catalyst

import java.util.Locale

import org.apache.spark.sql.catalyst.analysis.{UnresolvedAttribute, UnresolvedExtractValue, UnresolvedFunction, UnresolvedHaving,
  UnresolvedStar}
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Expression, Literal, NamedExpression, SortOrder}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, LogicalPlan, Project, Sort}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.{AGGREGATE, PROJECT}

import streamwin.catalyst.WindowResolution.{groupedWindow, hasWindow}

/**
 * Analyzer rule: resolves window columns (as Spark's ResolveTimeWindows resolves `window()`). It only
 * finds them: a Project selecting one ([[WindowResolution]] does the rewrite), and, in a query grouped
 * by a window, references to the grouped window by the name Spark gives its own (`window`,
 * `window.start`, `window.*`) in the select list, HAVING and ORDER BY. The Aggregate itself is
 * rewritten after resolution ([[ResolveGroupedWindows]]), so that Spark first resolves everything
 * around it (HAVING, GROUP BY ALL, ordinals and aliases) as around any Aggregate. Plans without an
 * Aggregate or Project are skipped by their tree patterns.
 */
object ResolveStreamWindows extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan =
    plan.resolveOperatorsUpWithPruning(_.containsAnyPattern(AGGREGATE, PROJECT)) {
      case h @ UnresolvedHaving(condition, a: Aggregate) if windowNamed(a).isDefined =>
        h.copy(havingCondition = WindowFieldReferences(condition, windowNamed(a).get))
      case s: Sort if aggregateBelow(s.child).flatMap(windowNamed).isDefined =>
        val aggregate = aggregateBelow(s.child).get
        val window = windowNamed(aggregate).get
        s.copy(order = s.order.map(o => selected(WindowFieldReferences(o, window), aggregate).asInstanceOf[SortOrder]))
      case a: Aggregate if windowNamed(a).isDefined && !a.aggregateExpressions.forall(_.resolved) =>
        val window = windowNamed(a).get
        a.copy(aggregateExpressions = a.aggregateExpressions.map(e =>
          WindowResolution.withWindowMetadata(WindowFieldReferences.named(e, window))))
      case a: Aggregate if a.childrenResolved && a.aggregateExpressions.exists(WindowResolution.needsWindowMetadata) &&
          groupedWindow(a).isDefined =>
        a.copy(aggregateExpressions = a.aggregateExpressions.map(WindowResolution.withWindowMetadata))
      case p: Project if p.childrenResolved && p.projectList.exists(hasWindow) && p.projectList.forall(_.resolved) =>
        WindowResolution.resolveProject(p)
    }

  /** The Aggregate an ORDER BY sorts, through a HAVING and the projection Spark puts above it. */
  private def aggregateBelow(plan: LogicalPlan): Option[Aggregate] = plan match {
    case a: Aggregate => Some(a)
    case f: Filter => aggregateBelow(f.child)
    case p: Project => aggregateBelow(p.child)
    case h: UnresolvedHaving => aggregateBelow(h.child)
    case _ => None
  }

  /**
   * `e` with a window field the select list outputs (`SELECT window.start ... ORDER BY window.start`) read
   * from that output column: Spark 3.5 does not add a sort expression to the Aggregate through a HAVING.
   * Only expressions of the grouped window, never inside an aggregate function (whose arguments are the
   * Aggregate's input, not its output).
   */
  private def selected(e: Expression, aggregate: Aggregate): Expression = e match {
    case _: AggregateExpression => e
    case field if field.resolved && !field.isInstanceOf[Attribute] && field.exists(_.isInstanceOf[StreamWindow]) &&
        outputOf(field, aggregate).isDefined => outputOf(field, aggregate).get
    case other => other.mapChildren(selected(_, aggregate))
  }

  private def outputOf(field: Expression, aggregate: Aggregate): Option[Attribute] =
    aggregate.aggregateExpressions.collectFirst { case a: Alias if a.resolved && a.child.semanticEquals(field) => a.toAttribute }

  /** The window an Aggregate groups by, when its input has no column named `window` of its own. */
  private def windowNamed(a: Aggregate): Option[StreamWindow] =
    if (!a.childrenResolved || a.child.output.exists(_.name.equalsIgnoreCase("window"))) None else groupedWindow(a)
}

/**
 * Post-hoc resolution rule: an Aggregate grouped by a window column becomes streamwin's
 * WindowAggregate ([[WindowResolution.resolveAggregate]]) once Spark resolved the query around it.
 */
object ResolveGroupedWindows extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan =
    plan.resolveOperatorsUpWithPruning(_.containsPattern(AGGREGATE)) {
      case a: Aggregate if a.childrenResolved && a.groupingExpressions.exists(hasWindow) &&
          a.expressions.forall(_.resolved) =>
        WindowResolution.resolveAggregate(a)
      case a: Aggregate if a.childrenResolved && !a.groupingExpressions.exists(hasWindow) &&
          a.aggregateExpressions.exists(hasWindow) =>
        throw WindowResolution.windowOnlyInAgg(a)
    }
}

/**
 * Hint-batch rule (it runs before Spark expands stars, which fails on `window.*` when the input has
 * no `window` column): `window.*` in a query grouped by a window is the window's fields. The window
 * call is still unresolved here, so it is recognised by its name (`sw_*`).
 */
object ExpandWindowStar extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUpWithPruning(_.containsPattern(AGGREGATE)) {
    case a: Aggregate if a.aggregateExpressions.exists(WindowFieldReferences.isWindowStar) =>
      a.groupingExpressions.flatMap(windowCall).headOption.map { call =>
        a.copy(aggregateExpressions = a.aggregateExpressions.flatMap {
          case star if WindowFieldReferences.isWindowStar(star) =>
            StreamWindow.fieldNames.map(f => Alias(UnresolvedExtractValue(call, Literal(f)), f)())
          case other => Seq(other)
        })
      }.getOrElse(a)
  }

  private def windowCall(e: Expression): Option[Expression] = e match {
    case w: StreamWindow => Some(w)
    case f: UnresolvedFunction if f.nameParts.lastOption.exists(_.toLowerCase(Locale.ROOT).startsWith("sw_")) => Some(f)
    case Alias(child, _) => windowCall(child)
    case _ => None
  }
}

/** References to a grouped window by name: `window`, `window.start` (any case), and `window.*`. */
private object WindowFieldReferences {
  private def isWindow(part: String): Boolean = part.equalsIgnoreCase("window")

  def apply(e: Expression, window: StreamWindow): Expression = e.transformUp {
    case UnresolvedAttribute(parts) if parts.nonEmpty && isWindow(parts.head) =>
      parts.tail.foldLeft(window: Expression)((struct, field) => UnresolvedExtractValue(struct, Literal(field)))
  }

  /** A select-list item: a bare `window.start` keeps the name Spark gives it (`start`). */
  def named(e: NamedExpression, window: StreamWindow): NamedExpression = e match {
    case UnresolvedAttribute(parts) if parts.nonEmpty && isWindow(parts.head) => Alias(apply(e, window), parts.last)()
    case other => apply(other, window).asInstanceOf[NamedExpression]
  }

  def isWindowStar(e: Expression): Boolean = e match {
    case UnresolvedStar(Some(Seq(target))) => isWindow(target)
    case _ => false
  }
}
