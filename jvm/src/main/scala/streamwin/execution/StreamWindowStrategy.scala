package streamwin.execution

import org.apache.spark.sql.catalyst.expressions.{Alias, And, Expression, GreaterThan, If, IsNotNull, IsNull, Literal}
import org.apache.spark.sql.catalyst.plans.physical.{HashPartitioning, SinglePartition}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, AggregateFunction, Average, BitAndAgg,
  BitOrAgg, BitXorAgg, CentralMomentAgg, Complete, Count, Covariance, HyperLogLogPlusPlus, Max, Min, PearsonCorrelation, Sum}
import org.apache.spark.sql.types.LongType
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.aggregate.AggUtils
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec
import org.apache.spark.sql.internal.SQLConf

import streamwin.catalyst.{ArrivalOrderRange, SliceStart, WindowAggregate, WindowAssign, WindowNode}
import streamwin.spec._

/**
 * Plans streamwin's logical nodes; the physical operators state the distribution and order they need.
 * A window over a stream is hosted by Spark's transformWithState: planned anew for each micro-batch.
 */
object StreamWindowStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case node: WindowNode if node.isStreaming =>
      planLater(StreamingWindowHost.plan(node)) :: Nil

    // Tumbling windows whose only policies are an arrival order and lateness: aggregated as Spark's own
    // window(), with each window's arrival-order range; keys whose rows did not arrive in event-time
    // order (the only ones that can have late rows) are replayed.
    case WindowAggregate(spec: TimeWindowSpec, policies, Some(order), keys, time, _, windowAttr, functions, filters,
        resultAttrs, child) if spec.size == spec.step && !policies.emitUpdate && policies.countTrigger == 0 &&
        !policies.emitEmpty && functions.forall(orderInsensitive) =>
      val counts = Seq(Count(Literal(1)), Count(order))
      val hidden = counts :+ ArrivalOrderRange(order)
      val aggregates = (functions ++ hidden).zip(filters ++ hidden.map(_ => None)).map { case (f, filter) =>
        AggregateExpression(f, Complete, isDistinct = false, filter)
      }
      // Rows without an order are skipped by the replay too: they join no window.
      val windowStart = Alias(If(IsNull(order), Literal(null, LongType), SliceStart(time, spec.size, spec.alignment)),
        "_sw_window_start")()
      val grouping = keys :+ windowStart
      val finalAggregate = AggUtils.planAggregateWithoutDistinct(
        grouping, aggregates, grouping.map(_.toAttribute) ++ aggregates.map(_.resultAttribute), planLater(child)).head
      // Shuffled by the keys alone, so that each key's windows meet in one partition for the check.
      val partitioning = if (keys.isEmpty) SinglePartition else HashPartitioning(keys, SQLConf.get.numShufflePartitions)
      val windows = finalAggregate.withNewChildren(Seq(ShuffleExchangeExec(partitioning, finalAggregate.children.head)))
      OrderedTumblingAggregateExec(spec, policies, keys, order, time, functions, filters, windowAttr, resultAttrs,
        windows, planLater(child)) :: Nil

    // Policies need each key's rows one by one in arrival order: no slice pre-aggregation.
    case WindowAggregate(spec @ (_: TimeWindowSpec | _: SlidingWindowSpec | _: SessionWindowSpec), policies, order,
        keys, time, _, windowAttr, functions, filters, resultAttrs, child) if policies.replaysRows =>
      EventTimeReplayAggregateExec(spec, policies, keys, order.getOrElse(time), time, functions, filters, windowAttr,
        resultAttrs, planLater(child)) :: Nil

    // A select over windows that depend on the other rows of the key (or under policies): each key's
    // rows in arrival order through the window operator, which tags them with each window output.
    case WindowAssign(spec, policies, order, time, signal, partitionBy, windowAttr, child) if (spec match {
          case _: TimeWindowSpec => policies.replaysRows
          case _: SlidingWindowSpec | _: IntervalWindowSpec => true
          case s: SessionWindowSpec => !s.dynamicGap && s.maxDuration.isEmpty
          case _ => false
        }) =>
      // An interval's order_by is its signal column.
      val arrival = spec match {
        case _: IntervalWindowSpec => signal.getOrElse(time)
        case _ => order.getOrElse(time)
      }
      EventTimeReplayAssignExec(spec, policies, partitionBy, arrival, time, windowAttr, planLater(child)) :: Nil

    // A tumbling window is one slice: plain (keys, window start) hash aggregation, partial before the
    // shuffle and final after it, as Spark plans its own window(); no sort, no engine.
    case WindowAggregate(spec: TimeWindowSpec, _, _, keys, time, _, windowAttr, functions, filters, resultAttrs, child)
        if spec.size == spec.step =>
      val rowCount = Count(Literal(1))
      val aggregates = (functions :+ rowCount).zip(filters :+ None).map { case (f, filter) =>
        AggregateExpression(f, Complete, isDistinct = false, filter)
      }
      val windowStart = Alias(SliceStart(time, spec.size, spec.alignment), "_sw_window_start")()
      val grouping = keys :+ windowStart
      val aggregate = AggUtils.planAggregateWithoutDistinct(
        grouping, aggregates, grouping.map(_.toAttribute) ++ aggregates.map(_.resultAttribute), planLater(child)).head
      TumblingWindowResultExec(spec, keys, windowAttr, resultAttrs, aggregate) :: Nil

    case WindowAggregate(spec @ (_: TimeWindowSpec | _: SlidingWindowSpec | _: SessionWindowSpec), _, _, keys, time, signal,
        windowAttr, functions, filters, resultAttrs, child) =>
      // Aligned windows and fixed-gap sessions pre-aggregate map-side per (key, slice) with Spark's own
      // (code-generated) partial aggregation: a slice of an aligned window, or a gap-long bucket whose
      // rows surely share a session (with hidden min/max time). Sliding windows and dynamic gaps need
      // every timestamp, so they aggregate raw rows. The hidden count(1) tells how many rows a slice holds.
      val (slice, hidden, preAggregate): (Expression, Seq[AggregateFunction], Boolean) = (spec, signal) match {
        case (t: TimeWindowSpec, _) =>
          (SliceStart(time, t.slice, Math.floorMod(t.alignment, t.slice)), Seq(Count(Literal(1))), true)
        case (s: SessionWindowSpec, None) =>
          (SliceStart(time, s.bucket, 0), Seq(Min(time), Max(time), Count(Literal(1))), true)
        case (_: SessionWindowSpec, Some(gap)) =>
          // Rows without a usable gap open no session: a null slice, skipped and counted.
          (If(And(IsNotNull(gap), GreaterThan(gap, Literal(0L))), SliceStart(time, 1, 0), Literal(null, LongType)),
            Seq(Max(gap), Count(Literal(1))), false)
        case _ => (SliceStart(time, 1, 0), Seq(Count(Literal(1))), false) // one slice per distinct timestamp
      }
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

    case WindowAggregate(spec: IntervalWindowSpec, policies, _, keys, time, order, windowAttr, functions, filters,
        resultAttrs, child) =>
      EventTimeReplayAggregateExec(spec, policies, keys, order.getOrElse(time), time, functions, filters, windowAttr, resultAttrs,
        planLater(child)) :: Nil

    case WindowAggregate(spec: SequenceWindowSpec, policies, _, keys, order, signal, windowAttr, functions, filters,
        resultAttrs, child) =>
      SequenceWindowAggregateExec(spec, policies, keys, order, signal, functions, filters, windowAttr, resultAttrs,
        planLater(child)) :: Nil

    case WindowAssign(spec: TimeWindowSpec, _, _, time, _, _, windowAttr, child) =>
      TimeWindowAssignExec(spec, time, windowAttr, planLater(child)) :: Nil

    case WindowAssign(spec: SequenceWindowSpec, policies, _, order, signal, partitionBy, windowAttr, child) =>
      SequenceWindowAssignExec(spec, policies, partitionBy, order, signal, windowAttr, planLater(child)) :: Nil

    case _ => Nil
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
}
