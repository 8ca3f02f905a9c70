package streamwin.catalyst

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import streamwin.spec.StreamwinErrors

/** Check rule: a window column anywhere else (a filter, an orderBy, an agg without groupBy) is misuse. */
object CheckStreamWindows extends (LogicalPlan => Unit) {
  override def apply(plan: LogicalPlan): Unit = plan.foreach { node =>
    node.expressions.foreach(_.collectFirst { case w: StreamWindow => w }.foreach { w =>
      throw StreamwinErrors.misuse(w.spec.function,
        s"a window column can only be used directly in groupBy(...) or select(...), not in ${node.nodeName}")
    })
  }
}
