package streamwin.spec

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, GreaterThanOrEqual, Greatest, If, LeafExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block.BlockHelper
import org.apache.spark.sql.types.{DataType, LongType}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction

import streamwin.engine.AggregateEvaluator

/** The columns a window node reads, as attributes of its child (see [[streamwin.catalyst.StreamWindow]]). */
final case class WindowColumns(timeOrOrder: Attribute, signal: Option[Attribute], arrivalOrder: Option[Attribute])

/**
 * An aggregate a family computes over each slice besides the user's (sessions: the earliest and latest
 * row time), declared by name in [[WindowSpec.hiddenAggregates]] and read back by that name through
 * [[HiddenSlots]], never by position.
 *
 * @param build the aggregate over the window's columns
 */
final case class HiddenAggregate(name: String, build: WindowColumns => AggregateFunction)

/**
 * Where a slice's buffer holds each of its family's hidden aggregates ([[WindowSpec.hiddenAggregates]]),
 * by name. A slice's functions are the user's, then the family's hidden ones, then a row count.
 */
final class HiddenSlots(spec: WindowSpec, evaluator: AggregateEvaluator) {
  private val names = spec.hiddenAggregates.map(_.name)
  private val firstHidden = evaluator.functionCount - 1 - names.size
  require(firstHidden >= 0, s"${spec.function}'s slices hold ${evaluator.functionCount} aggregates, fewer than its hidden ones and the row count")

  /** The buffer offset of the hidden aggregate `name`. */
  def apply(name: String): Int = names.indexOf(name) match {
    case -1 => throw new IllegalArgumentException(
      s"${spec.function} declares no hidden aggregate '$name' (it declares ${names.mkString(", ")})")
    case i => evaluator.offsetOf(firstHidden + i)
  }

  /** The buffer offset of the row count. */
  def rowCount: Int = evaluator.offsetOf(evaluator.functionCount - 1)
}

/**
 * How each key's rows are fed to the window operator.
 *
 * @param order       the arrival order rows are sorted and fed in
 * @param signal      the per-row value the family reads
 * @param tiesAllowed rows of a key may share an order value (it is the event time itself) — streams;
 *                    batch execs compare the order with the event time column
 * @param eventTime   the event time, for families that follow it; None for windows that follow rows
 */
final case class RowReplay(order: Attribute, signal: Option[Attribute], tiesAllowed: Boolean, eventTime: Option[Attribute])

/** How a groupBy over a window runs on batch data (the planner builds the operators). */
sealed trait GroupByPlan

object GroupByPlan {
  /** Each key's rows in arrival order through the window operator ([[WindowSpec.replay]]). */
  case object ReplayRows extends GroupByPlan

  /**
   * Each window is one slice: Spark's own hash aggregation by (keys, `windowStart`), partial before
   * the shuffle and final after it, no sort; a window ends `size` after its start.
   */
  final case class HashPerWindow(windowStart: Expression, size: Long) extends GroupByPlan

  /**
   * Each window is one slice and rows have an explicit arrival order (`order`) whose only effect is
   * lateness: hashed per (keys, `windowStart`) as [[HashPerWindow]], with each window's arrival-order
   * range; only keys whose rows did not arrive in event-time order (the only ones with late rows) are
   * replayed ([[ReplayRows]]). Aggregates that follow the arrival order (first, collect_list) replay.
   */
  final case class OrderedHashPerWindow(windowStart: Expression, size: Long, order: Attribute, time: Attribute)
      extends GroupByPlan

  /**
   * Aggregated per (key, `slice`) — map-side by Spark's partial aggregation when `preAggregate`,
   * else from raw rows after the shuffle (one slice per timestamp would shrink nothing) — and
   * fed to the window operator, which combines them into windows (reading them through
   * [[WindowSpec.sliceBounds]]). A null slice skips the row.
   *
   * @param hidden the family's [[WindowSpec.hiddenFunctions]] (a row count follows them)
   */
  final case class Slices(slice: Expression, hidden: Seq[AggregateFunction], preAggregate: Boolean) extends GroupByPlan
}

/**
 * How a groupBy's rows over a stream are pre-aggregated within each micro-batch, before the shuffle
 * (see [[WindowSpec.streamSlice]]): per (key, `slice`) start, with the family's `hidden` aggregates
 * after the user's (a row count follows them), as [[GroupByPlan.Slices]]. A null slice skips the row.
 *
 * @param settled a coarser slice start for the rows that no key's progress has reached yet (their
 *                time at or after every key's progress): rows that surely join the same windows and
 *                none of which is late, as in batch (sessions: gap-long buckets). A row a key's progress
 *                may have passed could be late while the rest of its bucket is not, so it keeps `slice`.
 */
final case class StreamSlices(slice: Expression, hidden: Seq[AggregateFunction], settled: Option[Expression] = None) {
  /**
   * The slice start of a micro-batch in which no key's progress is past `bound` (µs), when one is known:
   * rows at or after it take the settled slice, never starting before the bound (so no slice of an
   * earlier row shares its start), the others `slice`.
   */
  def start(bound: Option[Long]): Expression = (settled, bound) match {
    case (Some(coarse), Some(b)) =>
      val threshold = MicroBatchThreshold(b)
      If(GreaterThanOrEqual(slice, threshold), Greatest(Seq(coarse, threshold)), slice)
    case _ => slice
  }
}

/**
 * A threshold (µs) fixed for one micro-batch, read in generated code from the plan's references rather
 * than written into it as a literal: each micro-batch's aggregation then reuses the code Spark compiled
 * for the first.
 */
case class MicroBatchThreshold(micros: Long) extends LeafExpression {
  override def dataType: DataType = LongType
  override def nullable: Boolean = false
  override def eval(input: InternalRow): Any = micros
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val boxed = ctx.addReferenceObj("microBatchThreshold", java.lang.Long.valueOf(micros), "java.lang.Long")
    ev.copy(code = code"final long ${ev.value} = $boxed.longValue();", isNull = FalseLiteral)
  }
}

/** How a select of a window runs on batch data. */
sealed trait SelectPlan

object SelectPlan {
  /** Each key's rows in arrival order through the window operator, which tags them with each window output. */
  case object ReplayRows extends SelectPlan

  /** Each row tagged with the windows its time alone places it in: no shuffle, no state. */
  final case class TagByTime(windows: FixedTimeWindows) extends SelectPlan

}

/** Windows of one length placed by a row's time alone (µs). */
trait FixedTimeWindows {
  def size: Long
  /** True when `t` falls into no window. */
  def inGap(t: Long): Boolean
  /** Starts of all windows holding `t`, ascending. */
  def windowStartsHolding(t: Long): Iterator[Long]
}
