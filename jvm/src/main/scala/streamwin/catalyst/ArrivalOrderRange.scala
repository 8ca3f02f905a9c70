package streamwin.catalyst

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate
import org.apache.spark.sql.catalyst.trees.UnaryLike
import org.apache.spark.sql.types.{BooleanType, DataType, StructField, StructType}

/**
 * The range of a group's arrival-order values (`first`, `last`: its least and greatest non-null
 * value, exact while `increasing`) and `increasing`: true only if each partial aggregation saw the values strictly
 * increasing and the ranges it merged did not overlap, which proves the values distinct. Spark's
 * own (code-generated, spilling) aggregation computes it next to the user's aggregates, so a window
 * operator can tell from aggregates alone that a key's rows arrived in event-time order (see
 * [[streamwin.execution.OrderedTumblingAggregateExec]]). A false `increasing` proves nothing (the
 * partial aggregation may have met the rows in another order): it only sends the key to a replay.
 */
case class ArrivalOrderRange(order: Expression) extends DeclarativeAggregate with UnaryLike[Expression] {
  override def child: Expression = order
  override def nullable: Boolean = false
  override def dataType: DataType = ArrivalOrderRange.resultType(order.dataType)

  private lazy val first = AttributeReference(ArrivalOrderRange.BufferNames(0), order.dataType)()
  private lazy val last = AttributeReference(ArrivalOrderRange.BufferNames(1), order.dataType)()
  private lazy val increasing = AttributeReference(ArrivalOrderRange.BufferNames(2), BooleanType, nullable = false)()

  override lazy val aggBufferAttributes: Seq[AttributeReference] = Seq(first, last, increasing)
  override lazy val initialValues: Seq[Expression] =
    Seq(Literal(null, order.dataType), Literal(null, order.dataType), Literal(true))

  // Per row: cheap. While the values increase, the last one is the greatest; once they do not, the
  // group is replayed and the range no longer matters.
  override lazy val updateExpressions: Seq[Expression] = Seq(
    If(IsNull(first), order, first),
    If(IsNull(order), last, order),
    If(IsNull(order), increasing, And(increasing, Or(IsNull(last), GreaterThan(order, last)))))

  override lazy val mergeExpressions: Seq[Expression] = Seq(
    Least(Seq(first.left, first.right)),
    Greatest(Seq(last.left, last.right)),
    And(And(increasing.left, increasing.right),
      Or(Or(IsNull(last.left), IsNull(last.right)),
        Or(LessThan(last.left, first.right), LessThan(last.right, first.left)))))

  override lazy val evaluateExpression: Expression = CreateStruct(Seq(first, last, increasing))

  override def prettyName: String = "sw_arrival_order_range"

  override protected def withNewChildInternal(newChild: Expression): ArrivalOrderRange = copy(order = newChild)
}

object ArrivalOrderRange {
  /** The names of its aggregation buffer, which a partial aggregation outputs as its last columns when it is the last aggregate. */
  val BufferNames: Seq[String] = Seq("first", "last", "increasing")

  def resultType(orderType: DataType): StructType = StructType(Seq(
    StructField("first", orderType), StructField("last", orderType), StructField("increasing", BooleanType, nullable = false)))
}
