package streamwin.catalyst

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, Expression, NamedExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, AggregateFunction}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}
import org.apache.spark.SparkContext
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.util.AccumulatorV2

import streamwin.engine.WindowPolicies
import streamwin.spec.{WindowColumns, WindowSpec}

/**
 * The row accounting of a window over a stream. Every micro-batch plans the query anew (a new
 * stateful operator each time), so the SQL metrics are made once, when the query is analysed, carried
 * by the window node, and handed to each micro-batch's operator: they sum over the micro-batches of the
 * run. Windows over batch data have none (their operators own their metrics).
 *
 * `keyProgress` gathers the progress its tasks wrote or scanned in any key's record, for
 * [[streamwin.spec.StreamSlices]]'s settled slices: once a micro-batch of a run scanned every key's
 * record, its value bounds the progress of every key of that run (progress only grows).
 */
final class StreamWindowMetrics(val metrics: Map[String, SQLMetric], val keyProgress: LatestProgress) extends Serializable {
  // Run id -> the first micro-batch of that run whose keys `keyProgress` covers (the driver's).
  @transient private lazy val coveredRuns = new java.util.concurrent.ConcurrentHashMap[String, java.lang.Long]()

  /** From micro-batch `batchId` of run `runId` on, `keyProgress` covers every key of the run. */
  def cover(runId: String, batchId: Long): Unit =
    coveredRuns.merge(runId, batchId, (a: java.lang.Long, b: java.lang.Long) => java.lang.Long.valueOf(math.min(a, b)))

  /**
   * A time (µs) at or after every key's progress in micro-batch `batchId` of run `runId`, if known:
   * the latest progress seen, or the micro-batch's watermark (keys move to it), whichever is later.
   */
  def progressBound(runId: String, batchId: Long, watermarkMicros: Long): Option[Long] =
    Option(coveredRuns.get(runId)).filter(_ <= batchId).map(_ => math.max(keyProgress.value, watermarkMicros))

  override def toString: String = "StreamWindowMetrics"
}

object StreamWindowMetrics {
  /** The metrics of a window over a stream, made when the query is analysed (see above). */
  def create(): StreamWindowMetrics = {
    val sc = SparkContext.getOrCreate()
    val keyProgress = new LatestProgress
    sc.register(keyProgress, "streamwin keys' latest progress")
    new StreamWindowMetrics(WindowMetrics.create(sc), keyProgress)
  }
}

/** The metrics every streamwin operator reports (Spark UI, and `executedPlan.metrics` in tests). */
object WindowMetrics {
  def create(sc: SparkContext): Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sc, "number of output rows"),
    "windowsEmitted" -> SQLMetrics.createMetric(sc, "windows emitted"),
    "rowsWindowed" -> SQLMetrics.createMetric(sc, "input rows in windows"),
    "lateRowsDropped" -> SQLMetrics.createMetric(sc, "late rows dropped"),
    "lateRowsPassedThrough" -> SQLMetrics.createMetric(sc, "late rows passed through (kind late)"),
    "rowsSkipped" -> SQLMetrics.createMetric(sc, "rows skipped (null time or order, or between windows)"),
    "peakBufferedRows" -> SQLMetrics.createMetric(sc, "peak buffered rows or slices (sum over tasks)"),
    "spillSize" -> SQLMetrics.createSizeMetric(sc, "spill size of rows kept by windows"))
}

/** The latest of the times added (µs), Long.MinValue before any: an accumulator tasks add to. */
final class LatestProgress extends AccumulatorV2[Long, Long] {
  private var latest = Long.MinValue
  override def isZero: Boolean = latest == Long.MinValue
  override def copy(): LatestProgress = { val c = new LatestProgress; c.latest = latest; c }
  override def reset(): Unit = latest = Long.MinValue
  override def add(v: Long): Unit = if (v > latest) latest = v
  override def merge(other: AccumulatorV2[Long, Long]): Unit = add(other.value)
  override def value: Long = latest
}

/** What streamwin's logical nodes share. */
trait WindowNode extends UnaryNode {
  def spec: WindowSpec
  def policies: WindowPolicies
  def timeOrOrder: Attribute
  def signal: Option[Attribute]
  def arrivalOrder: Option[Attribute]
  def streamMetrics: Option[StreamWindowMetrics]

  /** The columns the window reads, as its family's planning methods take them. */
  def columns: WindowColumns = WindowColumns(timeOrOrder, signal, arrivalOrder)

  /**
   * Over a stream, every column of the child reaches the state store (rows the engine keeps, in the
   * child's layout), so the optimizer must not prune them: a checkpoint restores into the layout it
   * was written with.
   */
  @transient override lazy val references: AttributeSet =
    if (streamMetrics.isDefined) PlanReferences.of(this) ++ child.outputSet else PlanReferences.of(this)
}

/**
 * What a plan node references by Spark's own rule (its expressions' references less the attributes it
 * produces), for nodes that add to or replace it: `references` is a lazy val in Spark 3.5 and a method in
 * Spark 4, so an override cannot call `super.references` on both.
 */
object PlanReferences {
  def of(plan: org.apache.spark.sql.catalyst.plans.QueryPlan[_]): AttributeSet =
    AttributeSet.fromAttributeSets(plan.expressions.map(_.references)) -- plan.producedAttributes
}

/**
 * groupBy(keys, window).agg(...): one output row per (key, window) with the window struct and the
 * value of each aggregate function. Aggregates are held as functions plus FILTER predicates (not as
 * AggregateExpressions, which Spark admits only in its own Aggregate and Window nodes); the
 * Project above this node computes the user's result expressions from `output`.
 *
 * @param keys         grouping columns other than the window (attributes of child)
 * @param timeOrOrder  event-time column (time windows) or order_by column (count and data windows)
 * @param signal       per-row input of data windows (split predicate, delta value in seconds or as
 *                     a double, punctuation marker)
 * @param windowAttr   the window struct this node produces
 * @param functions    aggregate functions over child's columns
 * @param filters      each function's FILTER (WHERE …) predicate, if any
 * @param resultAttrs  one attribute per function for its value
 * @param policies     event-time policies; `arrivalOrder` is the explicit order_by of a time window
 * @param streamMetrics over a stream, the metrics every micro-batch adds to (not part of the node's identity)
 */
case class WindowAggregate(
    spec: WindowSpec,
    policies: WindowPolicies,
    arrivalOrder: Option[Attribute],
    keys: Seq[Attribute],
    timeOrOrder: Attribute,
    signal: Option[Attribute],
    windowAttr: Attribute,
    functions: Seq[AggregateFunction],
    filters: Seq[Option[Expression]],
    resultAttrs: Seq[Attribute],
    child: LogicalPlan)(val streamMetrics: Option[StreamWindowMetrics]) extends WindowNode {

  override def output: Seq[Attribute] = keys ++ (windowAttr +: resultAttrs)
  override def producedAttributes: AttributeSet = AttributeSet(windowAttr +: resultAttrs)
  override protected def otherCopyArgs: Seq[AnyRef] = streamMetrics :: Nil
  override protected def withNewChildInternal(newChild: LogicalPlan): WindowAggregate =
    copy(child = newChild)(streamMetrics)
}

/**
 * select(..., window): every input row tagged with each window holding it (a row in several
 * overlapping windows appears once per window, as with Spark's `window()` in a select).
 *
 * @param partitionBy columns that split the rows into independent streams (count and data windows)
 * @param streamMetrics over a stream, the metrics every micro-batch adds to (see [[WindowAggregate]])
 */
case class WindowAssign(
    spec: WindowSpec,
    policies: WindowPolicies,
    arrivalOrder: Option[Attribute],
    timeOrOrder: Attribute,
    signal: Option[Attribute],
    partitionBy: Seq[Attribute],
    windowAttr: Attribute,
    child: LogicalPlan)(val streamMetrics: Option[StreamWindowMetrics]) extends WindowNode {

  override def output: Seq[Attribute] = child.output :+ windowAttr
  override def producedAttributes: AttributeSet = AttributeSet(windowAttr :: Nil)
  override protected def otherCopyArgs: Seq[AnyRef] = streamMetrics :: Nil
  override protected def withNewChildInternal(newChild: LogicalPlan): WindowAssign = copy(child = newChild)(streamMetrics)
}

/**
 * A stream's micro-batch rows aggregated per (keys, slice start) before the shuffle to the window
 * operator (see [[streamwin.spec.WindowSpec.streamSlice]]): planned as Spark's partial aggregation
 * alone, with no final step and no state of its own. Built while a micro-batch is planned, never
 * analysed.
 *
 * @param grouping   the keys, then the slice start
 * @param aggregates the functions (Complete mode, as Spark's planner takes them)
 */
case class SlicePartialAggregate(grouping: Seq[NamedExpression], aggregates: Seq[AggregateExpression], child: LogicalPlan)
    extends UnaryNode {
  /** As Spark's partial aggregation outputs it: grouping columns, then each function's buffer as shipped. */
  override def output: Seq[Attribute] =
    grouping.map(_.toAttribute) ++ aggregates.flatMap(_.aggregateFunction.inputAggBufferAttributes)
  override protected def withNewChildInternal(newChild: LogicalPlan): SlicePartialAggregate = copy(child = newChild)
}
