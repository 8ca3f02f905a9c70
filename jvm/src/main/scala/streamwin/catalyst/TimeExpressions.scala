package streamwin.catalyst

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, CodegenFallback, ExprCode}
import org.apache.spark.unsafe.types.CalendarInterval
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

/**
 * A dynamic session gap in microseconds, from a CALENDAR INTERVAL or DAY TO SECOND interval. Like
 * Spark's `session_window`, a row whose gap is null, not positive or not a fixed duration (months)
 * opens no session: the result is null and the row is skipped and counted.
 */
case class GapMicros(child: Expression) extends UnaryExpression with CodegenFallback {
  override def dataType: DataType = LongType
  override def nullable: Boolean = true
  override def eval(input: InternalRow): Any = {
    val micros: Any = child.eval(input) match {
      case null => null
      case ci: CalendarInterval => if (ci.months != 0) null else ci.days * 86400L * 1000000L + ci.microseconds
      case v: Long => v
      case _ => null
    }
    micros match {
      case m: Long if m > 0 => m
      case _ => null
    }
  }
  override protected def withNewChildInternal(newChild: Expression): GapMicros = copy(child = newChild)
}

/**
 * Its child's value, as a column that no longer carries Spark's event-time watermark marker. The
 * streaming host feeds the event-time column through it, so Spark does not drop rows behind the
 * watermark before they reach the engine: the engine decides what is late (and may pass it through).
 */
case class WithoutWatermarkMarker(child: Expression) extends UnaryExpression {
  override def dataType: DataType = child.dataType
  override def nullable: Boolean = child.nullable
  override def eval(input: InternalRow): Any = child.eval(input)
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = child.genCode(ctx)
  override protected def withNewChildInternal(newChild: Expression): WithoutWatermarkMarker = copy(child = newChild)
}
