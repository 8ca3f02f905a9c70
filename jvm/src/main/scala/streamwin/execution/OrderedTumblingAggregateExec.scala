package streamwin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.physical.{AllTuples, ClusteredDistribution, Distribution, HashPartitioning,
  Partitioning, SinglePartition, UnspecifiedDistribution}
import org.apache.spark.sql.execution.{BinaryExecNode, RDDScanExec, SortExec, SparkPlan}
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec

import streamwin.engine.{WindowKind, WindowPolicies}
import streamwin.spec.WindowSpec

/**
 * groupBy over tumbling windows with an explicit arrival order (`order_by`, with or without
 * lateness and late passthrough): rows are late only when they arrive after a later window's rows.
 * When a key's windows, taken in event-time order, hold strictly increasing and distinct arrival
 * orders, no row of the key can be late (every row before it in arrival order lies in its window or
 * an earlier one, so the key's progress is still below its window's end) and its windows are plain
 * (key, window start) aggregates. So the windows are first aggregated as Spark aggregates its own
 * `window()`, with each window's arrival-order range ([[streamwin.catalyst.ArrivalOrderRange]]); only keys that fail
 * the check, or have rows with an arrival order but no event time, are replayed row by row on the
 * window operator from the input, exactly as [[WindowReplayExec]] would (the replay also
 * raises the error for ties in order_by). The check needs a job of its own, which reads the windows,
 * unless the map tasks' summaries ([[ArrivalOrderSummaryExec]]) already prove every key in order.
 *
 * @param size    the windows' length (µs)
 * @param windows the final (keys, window start) aggregation, clustered by keys: keys, window start
 *                (null for rows without order or time), the user's aggregate values, then the
 *                hidden count(1) and arrival-order range
 * @param input   the rows, as the replay reads them
 */
case class OrderedTumblingAggregateExec(
    spec: WindowSpec,
    size: Long,
    policies: WindowPolicies,
    keys: Seq[Attribute],
    order: Attribute,
    time: Attribute,
    functions: Seq[aggregate.AggregateFunction],
    filters: Seq[Option[Expression]],
    windowAttr: Attribute,
    resultAttrs: Seq[Attribute],
    windows: SparkPlan,
    input: SparkPlan) extends BinaryExecNode with StreamWindowOperator {

  override def left: SparkPlan = windows
  override def right: SparkPlan = input
  override def output: Seq[Attribute] = keys ++ (windowAttr +: resultAttrs)

  private def keyDistribution: Distribution = if (keys.isEmpty) AllTuples else ClusteredDistribution(keys)

  override def requiredChildDistribution: Seq[Distribution] = Seq(keyDistribution, UnspecifiedDistribution)

  // Rows of equal order are interchangeable when the order is the event time itself.
  private def tiesAllowed: Boolean = order.exprId == time.exprId

  override protected def doExecute(): RDD[InternalRow] = {
    // When the check job runs, the windows are read twice, by it and by the output: both re-read the
    // shuffled partial aggregates (the map side runs once) and redo the final aggregation, which on
    // 10M rows costs less than caching the windows between the jobs did.
    val windowRows = windows.execute()
    // The map side usually proves every key in order; otherwise a job reads the windows to find the keys.
    val replayed: Set[InternalRow] =
      if (ArrivalOrderSummaryExec.provesEveryKeyInOrder(windows)) Set.empty
      else {
        val check = new ArrivalOrderCheck(keys, windows.output, resultAttrs.size, order.dataType, tiesAllowed)
        windowRows.mapPartitions(check.keysToReplay _).collect().toSet
      }
    // Usually no key fails: then nothing is broadcast.
    val replayedKeys: () => Set[InternalRow] =
      if (replayed.isEmpty) () => Set.empty else { val shared = sparkContext.broadcast(replayed); () => shared.value }
    val (outRows, emitted, windowed, skipped) = (longMetric("numOutputRows"), longMetric("windowsEmitted"),
      longMetric("rowsWindowed"), longMetric("rowsSkipped"))
    val (windowsOutput, windowSize, keyCount, valueCount) = (windows.output, size, keys.size, resultAttrs.size)
    val aggregated = windowRows.mapPartitions { rows =>
      val keyOf = UnsafeProjection.create(keys, windowsOutput)
      val valuesOf = UnsafeProjection.create(windowsOutput.slice(keyCount + 1, keyCount + 1 + valueCount), windowsOutput)
      val writer = new WindowRowWriter(output)
      val replay = replayedKeys()
      rows.flatMap { group =>
        val key = keyOf(group)
        val rowCount = group.getLong(keyCount + 1 + valueCount)
        if (replay.contains(key)) Iterator.empty
        else if (group.isNullAt(keyCount)) { skipped += rowCount; Iterator.empty }
        else {
          windowed += rowCount
          emitted += 1
          outRows += 1
          val start = group.getLong(keyCount)
          Iterator.single(writer.aggregated(key, start, start + windowSize, WindowKind.Final, valuesOf(group)))
        }
      }
    }
    if (replayed.isEmpty) aggregated else aggregated.union(replay(replayedKeys))
  }

  /** The keys' rows replayed on the window operator, as [[WindowReplayExec]] does. */
  private def replay(replayKeys: () => Set[InternalRow]): RDD[InternalRow] = {
    val inputOutput = input.output
    val keyAttrs = keys
    val selected = input.execute().mapPartitions { rows =>
      val keyOf = UnsafeProjection.create(keyAttrs, inputOutput)
      val replay = replayKeys()
      rows.filter(row => replay.contains(keyOf(row)))
    }
    val partitioning: Partitioning =
      if (keys.isEmpty) SinglePartition else HashPartitioning(keys, conf.numShufflePartitions)
    val sorted = SortExec((keys :+ order).map(SortOrder(_, Ascending)), global = false,
      child = ShuffleExchangeExec(partitioning, RDDScanExec(inputOutput, selected, "streamwin replayed keys")))
    val (blueprint, orderAttr, timeAttr, ties, execMetrics) =
      (WindowEngineBlueprint(spec, policies, inputOutput, output, Some((functions, filters))), order, time, tiesAllowed,
        metrics)
    sorted.execute().mapPartitions { rows =>
      new KeyedWindowIterator(rows, blueprint, keyAttrs, inputOutput, orderAttr, Some(timeAttr), ties, execMetrics)
    }
  }

  override protected def withNewChildrenInternal(newLeft: SparkPlan, newRight: SparkPlan): OrderedTumblingAggregateExec =
    copy(windows = newLeft, input = newRight)
}

/**
 * Finds the keys whose aggregated windows do not prove their rows arrived in event-time order
 * ([[KeyWindowRanges]]): a window whose arrival orders are not shown increasing (unless ties are
 * allowed), a window whose first order is not above the last order of the key's previous window, or
 * rows with an order but no event time (their ties cannot be ruled out). A partition's windows come
 * in any order (no sort).
 */
final class ArrivalOrderCheck(keys: Seq[Attribute], windowsOutput: Seq[Attribute], valueCount: Int,
    orderType: org.apache.spark.sql.types.DataType, tiesAllowed: Boolean) extends Serializable {

  def keysToReplay(rows: Iterator[InternalRow]): Iterator[InternalRow] = {
    val rangeOrdinal = keys.size + 2 + valueCount
    val gathered = new KeyWindowRanges(UnsafeProjection.create(keys, windowsOutput), keys.size,
      _.getStruct(rangeOrdinal, 3), orderType, tiesAllowed)
    rows.foreach(gathered.add)
    gathered.spans.collect { case (key, None) => key }
  }
}
