package streamwin.execution

import org.apache.spark.sql.catalyst.expressions.{Alias, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Complete, Count}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.aggregate.AggUtils

import streamwin.catalyst.{WindowAggregate, WindowAssign, WindowNode}
import streamwin.spec.{GroupByPlan, SelectPlan}

/**
 * Plans streamwin's logical nodes; the physical operators state the distribution and order they need.
 * Each family says how it runs ([[streamwin.spec.WindowSpec.planGroupBy]], `planSelect`, `replay`);
 * this strategy builds the operators. A window over a stream is hosted by Spark's transformWithState:
 * planned anew for each micro-batch.
 */
object StreamWindowStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case node: WindowNode if node.isStreaming =>
      planLater(StreamingWindowHost.plan(node)) :: Nil

    case agg @ WindowAggregate(spec, policies, _, keys, _, _, windowAttr, functions, filters, resultAttrs, child) =>
      spec.planGroupBy(policies, agg.columns) match {
        // Policies (or the family itself) need each key's rows one by one in arrival order: no slice pre-aggregation.
        case GroupByPlan.ReplayRows =>
          val replay = spec.replay(agg.columns)
          replay.eventTime match {
            case Some(eventTime) =>
              EventTimeReplayAggregateExec(spec, policies, keys, replay.order, eventTime, functions, filters, windowAttr,
                resultAttrs, planLater(child)) :: Nil
            case None =>
              SequenceWindowAggregateExec(spec, policies, keys, replay.order, replay.signal, functions, filters, windowAttr,
                resultAttrs, planLater(child)) :: Nil
          }

        // A window that is one slice: plain (keys, window start) hash aggregation, partial before the
        // shuffle and final after it, as Spark plans its own window(); no sort, no engine.
        case GroupByPlan.HashPerWindow(windowStart, size) =>
          val rowCount = Count(Literal(1))
          val aggregates = (functions :+ rowCount).zip(filters :+ None).map { case (f, filter) =>
            AggregateExpression(f, Complete, isDistinct = false, filter)
          }
          val grouping = keys :+ Alias(windowStart, "_sw_window_start")()
          val aggregate = AggUtils.planAggregateWithoutDistinct(
            grouping, aggregates, grouping.map(_.toAttribute) ++ aggregates.map(_.resultAttribute), planLater(child)).head
          TumblingWindowResultExec(spec, size, keys, windowAttr, resultAttrs, aggregate) :: Nil

        // Slices pre-aggregated map-side with Spark's own (code-generated) partial aggregation, or
        // aggregated from raw rows when a slice is one timestamp; the family's hidden aggregates go
        // after the user's, and the hidden count(1) last tells how many rows a slice holds.
        case GroupByPlan.Slices(slice, familyHidden, preAggregate) =>
          val hidden = familyHidden :+ Count(Literal(1))
          val withHidden = functions ++ hidden
          if (preAggregate) {
            val aggregates = withHidden.zip(filters ++ hidden.map(_ => None)).map { case (f, filter) =>
              AggregateExpression(f, Complete, isDistinct = false, filter)
            }
            val sliceAlias = Alias(slice, "_sw_slice")()
            val grouping = keys :+ sliceAlias
            val finalAggregate = AggUtils.planAggregateWithoutDistinct(
              grouping, aggregates, grouping.map(_.toAttribute) ++ aggregates.map(_.resultAttribute), planLater(child)).head
            val partialAggregate = finalAggregate.children.head
            TimeWindowAggregateExec(spec, keys, sliceAlias.toAttribute, withHidden, withHidden.map(_ => None),
              preAggregated = true, windowAttr, resultAttrs, partialAggregate) :: Nil
          } else {
            TimeWindowAggregateExec(spec, keys, slice, withHidden, filters ++ hidden.map(_ => None),
              preAggregated = false, windowAttr, resultAttrs, planLater(child)) :: Nil
          }
      }

    case assign @ WindowAssign(spec, policies, _, time, _, partitionBy, windowAttr, child) =>
      spec.planSelect(policies) match {
        // Windows that depend on the other rows of the key (or under policies): each key's rows in
        // arrival order through the window operator, which tags them with each window output.
        case SelectPlan.ReplayRows =>
          val replay = spec.replay(assign.columns)
          replay.eventTime match {
            case Some(eventTime) =>
              EventTimeReplayAssignExec(spec, policies, partitionBy, replay.order, eventTime, windowAttr, planLater(child)) :: Nil
            case None =>
              SequenceWindowAssignExec(spec, policies, partitionBy, replay.order, replay.signal, windowAttr,
                planLater(child)) :: Nil
          }

        case SelectPlan.TagByTime(windows) =>
          TimeWindowAssignExec(spec, windows, time, windowAttr, planLater(child)) :: Nil

        // The analyzer already planned these as a groupBy (WindowResolution.groupedAndExploded).
        case SelectPlan.GroupAndExplode => Nil
      }

    case _ => Nil
  }
}
