package streamwin.catalyst

import org.apache.spark.sql.catalyst.expressions.{Expression, Unevaluable}
import org.apache.spark.sql.types._

import streamwin.spec.{CountWindowSpec, TimeWindowSpec, WindowSpec}

/**
 * A window column as written by the user (`sw_tumbling(ts, '10 seconds')`, …). It is never
 * evaluated: the analyzer rule [[ResolveStreamWindows]] replaces the Aggregate or Project holding
 * it by streamwin's own operators.
 *
 * @param children the time column (time windows) or the order_by column (count windows), then the
 *                 partition_by columns (count windows in select)
 */
case class StreamWindow(spec: WindowSpec, children: Seq[Expression]) extends Expression with Unevaluable {
  def timeOrOrder: Expression = children.head
  def partitionBy: Seq[Expression] = children.tail

  override def nullable: Boolean = false
  override def prettyName: String = spec.function

  /** start and end have the type of the time (or order_by) column; kind says why the row exists. */
  override def dataType: DataType = StreamWindow.structType(timeOrOrder.dataType)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): StreamWindow =
    copy(children = newChildren)

  override def toString: String = spec match {
    case t: TimeWindowSpec => s"${spec.function}(${timeOrOrder}, size=${t.size}us, step=${t.step}us, offset=${t.offset}us)"
    case c: CountWindowSpec => s"${spec.function}(${c.size}, step=${c.step}, order_by=$timeOrOrder)"
  }
}

object StreamWindow {
  def structType(boundType: DataType): StructType = StructType(Seq(
    StructField("start", boundType, nullable = false),
    StructField("end", boundType, nullable = false),
    StructField("kind", StringType, nullable = false)))
}
