package streamwin.catalyst

import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.types.{DataType, LongType}

/**
 * Start (in microseconds) of the slice of length `slice`, aligned to `alignment`, that holds the
 * timestamp `child`. Used as a grouping key of Spark's partial aggregation, so it has codegen.
 */
case class SliceStart(child: Expression, slice: Long, alignment: Long) extends UnaryExpression {
  override def dataType: DataType = LongType
  override protected def nullSafeEval(t: Any): Any = {
    val micros = t.asInstanceOf[Long]
    micros - Math.floorMod(micros - alignment, slice)
  }
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    defineCodeGen(ctx, ev, t => s"$t - java.lang.Math.floorMod($t - ${alignment}L, ${slice}L)")
  override protected def withNewChildInternal(newChild: Expression): SliceStart = copy(child = newChild)
}
