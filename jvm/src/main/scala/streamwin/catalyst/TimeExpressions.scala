package streamwin.catalyst

import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.types.{DataType, DoubleType, LongType}

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

/**
 * Seconds since the epoch, as a double, of a TIMESTAMP or TIMESTAMP_NTZ (both are microseconds
 * inside): SPL delta compares timestamps in seconds. Only differences matter, so NTZ values need no
 * time zone.
 */
case class EpochSeconds(child: Expression) extends UnaryExpression {
  override def dataType: DataType = DoubleType
  override protected def nullSafeEval(t: Any): Any = t.asInstanceOf[Long] / 1e6
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    defineCodeGen(ctx, ev, t => s"$t / 1000000.0")
  override protected def withNewChildInternal(newChild: Expression): EpochSeconds = copy(child = newChild)
}
