package streamwin.execution

import org.apache.spark.sql.catalyst.expressions.{Alias, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Complete, Count}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.aggregate.AggUtils

import streamwin.catalyst.{SliceStart, WindowAggregate, WindowAssign}
import streamwin.spec.{SequenceWindowSpec, TimeWindowSpec}

/** Plans streamwin's logical nodes; the physical operators state the distribution and order they need. */
object StreamWindowStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case WindowAggregate(spec: TimeWindowSpec, keys, time, _, windowAttr, functions, filters, resultAttrs, child) =>
      // Pre-aggregate map-side per (key, slice) with Spark's own (code-generated) partial aggregation;
      // the hidden count(1) tells the engine how many rows each slice holds.
      val withRowCount = functions :+ Count(Literal(1))
      val aggregates = withRowCount.zip(filters :+ None).map { case (f, filter) =>
        AggregateExpression(f, Complete, isDistinct = false, filter)
      }
      val slice = Alias(SliceStart(time, spec.slice, Math.floorMod(spec.alignment, spec.slice)), "_sw_slice")()
      val grouping = keys :+ slice
      val finalAggregate = AggUtils.planAggregateWithoutDistinct(
        grouping, aggregates, grouping.map(_.toAttribute) ++ aggregates.map(_.resultAttribute), planLater(child)).head
      val partialAggregate = finalAggregate.children.head
      TimeWindowAggregateExec(spec, keys, slice.toAttribute, withRowCount, windowAttr, resultAttrs,
        partialAggregate) :: Nil

    case WindowAggregate(spec: SequenceWindowSpec, keys, order, signal, windowAttr, functions, filters, resultAttrs, child) =>
      SequenceWindowAggregateExec(spec, keys, order, signal, functions, filters, windowAttr, resultAttrs,
        planLater(child)) :: Nil

    case WindowAssign(spec: TimeWindowSpec, time, _, _, windowAttr, child) =>
      TimeWindowAssignExec(spec, time, windowAttr, planLater(child)) :: Nil

    case WindowAssign(spec: SequenceWindowSpec, order, signal, partitionBy, windowAttr, child) =>
      SequenceWindowAssignExec(spec, partitionBy, order, signal, windowAttr, planLater(child)) :: Nil

    case _ => Nil
  }
}
