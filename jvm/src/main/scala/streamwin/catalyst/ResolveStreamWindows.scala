package streamwin.catalyst

import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.{AGGREGATE, PROJECT}

import streamwin.catalyst.WindowResolution.hasWindow

/**
 * Analyzer rule: resolves window columns (as Spark's ResolveTimeWindows resolves `window()`). It only
 * finds them: an Aggregate grouped by a window, a Project selecting one, or a window in agg(...)
 * without groupBy(...) (misuse); [[WindowResolution]] does the rewrite. Plans without an Aggregate
 * or Project are skipped by their tree patterns.
 */
object ResolveStreamWindows extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan =
    plan.resolveOperatorsUpWithPruning(_.containsAnyPattern(AGGREGATE, PROJECT)) {
      case a: Aggregate if a.childrenResolved && a.groupingExpressions.exists(hasWindow) &&
          a.expressions.forall(_.resolved) =>
        WindowResolution.resolveAggregate(a)
      case a: Aggregate if a.childrenResolved && !a.groupingExpressions.exists(hasWindow) &&
          a.aggregateExpressions.exists(hasWindow) =>
        throw WindowResolution.windowOnlyInAgg(a)
      case p: Project if p.childrenResolved && p.projectList.exists(hasWindow) && p.projectList.forall(_.resolved) =>
        WindowResolution.resolveProject(p)
    }
}
