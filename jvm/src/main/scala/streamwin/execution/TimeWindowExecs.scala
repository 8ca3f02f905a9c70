package streamwin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.catalyst.plans.physical.{AllTuples, ClusteredDistribution, Distribution}
import org.apache.spark.sql.execution.SparkPlan

import streamwin.catalyst.PlanReferences
import streamwin.engine.WindowKind
import streamwin.spec.{FixedTimeWindows, WindowSpec}

/**
 * groupBy over event-time windows built from slices: aligned (tumbling, hopping, timer), per-event
 * sliding and session windows. Its child is Spark's own partial aggregation by (keys, slice start),
 * so rows are pre-aggregated map-side before the shuffle; this operator merges the slices of each
 * key in event-time order and feeds them to the window operator over the spec's family ([[SliceWindowIterator]]).
 *
 * The last of `functions` is a hidden count(1) that tells how many input rows each slice holds;
 * families add hidden functions before it (see [[streamwin.spec.GroupByPlan.Slices]]).
 *
 * When `preAggregated` is false the child gives raw rows and this operator builds each slice's
 * aggregate itself: per-event sliding windows and sessions have one slice per distinct timestamp,
 * so a map-side partial aggregation would shrink nothing and only cost a hash table and buffer
 * serialisation.
 *
 * @param slice  the slice start: a child attribute (pre-aggregated: the partial aggregation's
 *               grouping column) or an expression over the raw rows (null: the row is skipped)
 * @param child  output: keys, slice start, then the partial buffers of `functions` (pre-aggregated);
 *               raw rows otherwise
 */
case class TimeWindowAggregateExec(
    spec: WindowSpec,
    keys: Seq[Attribute],
    slice: Expression,
    functions: Seq[AggregateFunction],
    filters: Seq[Option[Expression]],
    preAggregated: Boolean,
    windowAttr: Attribute,
    resultAttrs: Seq[Attribute],
    child: SparkPlan) extends StreamWindowExec {

  override def output: Seq[Attribute] = keys ++ (windowAttr +: resultAttrs)
  // Pre-aggregated, the functions read Spark's partial buffers, not the raw columns their expressions name.
  @transient override lazy val references: AttributeSet =
    if (preAggregated) AttributeSet(keys) ++ slice.references else PlanReferences.of(this)

  override def requiredChildDistribution: Seq[Distribution] =
    if (keys.isEmpty) AllTuples :: Nil else ClusteredDistribution(keys) :: Nil
  override def requiredChildOrdering: Seq[Seq[SortOrder]] = Seq((keys :+ slice).map(SortOrder(_, Ascending)))

  override protected def doExecute(): RDD[InternalRow] = {
    val childOutput = child.output
    child.execute().mapPartitions { input =>
      new SliceWindowIterator(input, spec, keys, slice, functions, filters, preAggregated, childOutput, output, metrics)
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): TimeWindowAggregateExec = copy(child = newChild)
}

/** select over windows placed by time alone (aligned time windows): each row once per window holding it. */
case class TimeWindowAssignExec(
    spec: WindowSpec,
    windows: FixedTimeWindows,
    time: Attribute,
    windowAttr: Attribute,
    child: SparkPlan) extends StreamWindowExec {

  override def output: Seq[Attribute] = child.output :+ windowAttr

  override protected def doExecute(): RDD[InternalRow] = {
    val (outRows, windowed, skipped) =
      (longMetric("numOutputRows"), longMetric("rowsWindowed"), longMetric("rowsSkipped"))
    val timeOrdinal = child.output.indexWhere(_.exprId == time.exprId)
    child.execute().mapPartitions { input =>
      val writer = new WindowRowWriter(output)
      input.flatMap { row =>
        if (row.isNullAt(timeOrdinal)) {
          skipped += 1
          Iterator.empty
        } else {
          val t = row.getLong(timeOrdinal)
          if (windows.inGap(t)) {
            skipped += 1
            Iterator.empty
          } else {
            windowed += 1
            windows.windowStartsHolding(t).map { start =>
              outRows += 1
              writer.tagged(row, start, start + windows.size, WindowKind.Final)
            }
          }
        }
      }
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): TimeWindowAssignExec = copy(child = newChild)
}
