package streamwin.execution

import org.apache.spark.sql.catalyst.expressions.{Alias, If, IsNull, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, AggregateFunction, Average, BitAndAgg,
  BitOrAgg, BitXorAgg, CentralMomentAgg, Complete, Count, Covariance, HyperLogLogPlusPlus, Max, Min, PearsonCorrelation, Sum}
import org.apache.spark.sql.catalyst.plans.physical.{HashPartitioning, SinglePartition}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.aggregate.AggUtils
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.LongType

import streamwin.catalyst.{ArrivalOrderRange, SlicePartialAggregate, WindowAggregate, WindowAssign, WindowNode}
import streamwin.spec.{GroupByPlan, SelectPlan}

/**
 * Plans streamwin's logical nodes; the physical operators state the distribution and order they need.
 * Each family says how it runs ([[streamwin.spec.WindowSpec.planGroupBy]], `planSelect`, `replay`);
 * this strategy builds the operators. A window over a stream is planned anew for each micro-batch, on
 * streamwin's own stateful operator ([[StreamingWindowHost]]).
 */
object StreamWindowStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case node: WindowNode if node.isStreaming =>
      val hosted = StreamingWindowHost.plan(node)
      hosted.operator(planLater(hosted.input)) :: Nil

    // Policies of streams only (idle_timeout: processing time) change nothing in a batch: planned without them.
    case agg: WindowAggregate if agg.policies != agg.policies.inBatch => apply(agg.copy(policies = agg.policies.inBatch)(agg.streamMetrics))
    case assign: WindowAssign if assign.policies != assign.policies.inBatch =>
      apply(assign.copy(policies = assign.policies.inBatch)(assign.streamMetrics))

    // A stream's slices: the partial step of Spark's own aggregation, without its final step.
    case p: SlicePartialAggregate =>
      val resultExpressions = p.grouping.map(_.toAttribute) ++ p.aggregates.map(_.resultAttribute)
      AggUtils.planAggregateWithoutDistinct(p.grouping, p.aggregates, resultExpressions, planLater(p.child))
        .head.children.head :: Nil

    case agg @ WindowAggregate(spec, policies, _, keys, _, _, windowAttr, functions, filters, resultAttrs, child) =>
      spec.planGroupBy(policies, agg.columns) match {
        // Policies (or the family itself) need each key's rows one by one in arrival order: no slice pre-aggregation.
        case GroupByPlan.ReplayRows => replayed(agg) :: Nil

        case GroupByPlan.OrderedHashPerWindow(windowStart, size, order, time) =>
          if (!functions.forall(orderInsensitive)) replayed(agg) :: Nil
          else {
            val hidden = Seq(Count(Literal(1)), ArrivalOrderRange(order))
            val aggregates = (functions ++ hidden).zip(filters ++ hidden.map(_ => None)).map { case (f, filter) =>
              AggregateExpression(f, Complete, isDistinct = false, filter)
            }
            // Rows without an order are skipped by the replay too: they join no window.
            val grouping = keys :+ Alias(If(IsNull(order), Literal(null, LongType), windowStart), "_sw_window_start")()
            val finalAggregate = AggUtils.planAggregateWithoutDistinct(
              grouping, aggregates, grouping.map(_.toAttribute) ++ aggregates.map(_.resultAttribute), planLater(child)).head
            // Shuffled by the keys alone, so that each key's windows meet in one partition for the check;
            // the map tasks summarize each key's arrival orders, which usually spares the check its job.
            val partitioning = if (keys.isEmpty) SinglePartition else HashPartitioning(keys, SQLConf.get.numShufflePartitions)
            val summarized = ArrivalOrderSummaryExec(keys.size, order.dataType, tiesAllowed = order.exprId == time.exprId,
              finalAggregate.children.head)
            val windows = finalAggregate.withNewChildren(Seq(ShuffleExchangeExec(partitioning, summarized)))
            OrderedTumblingAggregateExec(spec, size, policies, keys, order, time, functions, filters, windowAttr, resultAttrs,
              windows, planLater(child)) :: Nil
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

    case other => planSelect(other)
  }

  /** Each key's rows in arrival order through the window operator. */
  private def replayed(agg: WindowAggregate): SparkPlan = {
    val replay = agg.spec.replay(agg.columns)
    WindowReplayExec.aggregate(agg.spec, agg.policies, agg.keys, replay.order, replay.eventTime, replay.signal,
      agg.functions, agg.filters, agg.windowAttr, agg.resultAttrs, planLater(agg.child))
  }

  /**
   * Aggregates whose value does not depend on the order of their rows (up to floating-point
   * rounding, as in Spark's own aggregation), so that they may be computed out of arrival order.
   * first(), last(), collect_list() and the like follow order_by: they keep the replay.
   */
  private def orderInsensitive(f: AggregateFunction): Boolean = f match {
    case _: Count | _: Sum | _: Min | _: Max | _: Average | _: CentralMomentAgg | _: Covariance | _: PearsonCorrelation |
        _: HyperLogLogPlusPlus | _: BitAndAgg | _: BitOrAgg | _: BitXorAgg => true
    case _ => false
  }

  /** A select over a window (or nothing of streamwin's). */
  private def planSelect(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case assign @ WindowAssign(spec, policies, _, time, _, partitionBy, windowAttr, child) =>
      spec.planSelect(policies) match {
        // Windows that depend on the other rows of the key (or under policies): each key's rows in
        // arrival order through the window operator, which tags them with each window output.
        case SelectPlan.ReplayRows =>
          val replay = spec.replay(assign.columns)
          WindowReplayExec.assign(spec, policies, partitionBy, replay.order, replay.eventTime, replay.signal, windowAttr,
            planLater(child)) :: Nil

        case SelectPlan.TagByTime(windows) =>
          TimeWindowAssignExec(spec, windows, time, windowAttr, planLater(child)) :: Nil
      }

    case _ => Nil
  }
}
