package streamwin.catalyst

import org.apache.spark.sql.catalyst.expressions.{Expression, Unevaluable}
import org.apache.spark.sql.types._

import streamwin.engine.WindowPolicies
import streamwin.spec._

/**
 * A window column as written by the user (`sw_tumbling(ts, '10 seconds')`, …). It is never
 * evaluated: the analyzer rule [[ResolveStreamWindows]] replaces the Aggregate or Project holding
 * it by streamwin's own operators.
 *
 * @param children the time column (time windows) or the order_by column (count and data windows),
 *                 then the signal column if the spec has one (split predicate, delta value,
 *                 punctuation marker, dynamic session gap, timeInterval order_by), then the
 *                 arrival order of a time window (`policies.arrivalOrder`), then the
 *                 partition_by columns (windows in select)
 * @param policies the event-time policies (lateness, late rows, emission, count trigger, empty windows)
 */
case class StreamWindow(spec: WindowSpec, children: Seq[Expression], policies: WindowPolicies = WindowPolicies.Default)
    extends Expression with Unevaluable with WindowCall {
  private def hasSignal: Boolean = spec.hasSignal
  private def leading: Int = 1 + (if (hasSignal) 1 else 0) + (if (policies.arrivalOrder) 1 else 0)
  def timeOrOrder: Expression = children.head
  def signal: Option[Expression] = if (hasSignal) Some(children(1)) else None
  /** The explicit arrival order of a time window (`order_by`), if any. */
  def arrivalOrder: Option[Expression] = if (policies.arrivalOrder) Some(children(leading - 1)) else None
  def partitionBy: Seq[Expression] = children.drop(leading)

  override def nullable: Boolean = false
  override def prettyName: String = spec.function
  // Named as Spark names its grouped window() column when the query gives it no alias.
  override def sql: String = "window"

  /** start and end have the type of the time (or order_by) column; kind says why the row exists. */
  override def dataType: DataType = StreamWindow.structType(timeOrOrder.dataType)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): StreamWindow =
    copy(children = newChildren)

  /** The plan string: each family says how it shows (see [[WindowSpec.describe]]). */
  override def toString: String = spec.describe(this)
}

object StreamWindow {
  val fieldNames: Seq[String] = Seq("start", "end", "kind")

  def structType(boundType: DataType): StructType = StructType(Seq(
    StructField("start", boundType, nullable = false),
    StructField("end", boundType, nullable = false),
    StructField("kind", StringType, nullable = false)))
}
