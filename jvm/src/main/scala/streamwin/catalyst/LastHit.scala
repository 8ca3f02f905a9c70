package streamwin.catalyst

import org.apache.spark.sql.catalyst.expressions.{LeafExpression, Unevaluable}
import org.apache.spark.sql.types.{DataType, LongType}

/**
 * eKuiper's `last_hit_time()` (`time`: the event time, in epoch milliseconds, of the last row whose
 * condition held, 0 before any) and `last_hit_count()` (`count`: how many rows' condition held so
 * far), inside the condition of a sliding window (`OVER (WHEN ...)`). Each row reads them before its
 * own condition is known; a row whose condition holds updates them. Only the window's engine knows
 * them, so they are never evaluated as columns: the sliding family binds them (see
 * [[streamwin.families.SlidingWindowSpec]]).
 */
case class LastHit(measure: String) extends LeafExpression with Unevaluable {
  require(LastHit.measures.contains(measure), s"unknown last hit measure $measure")
  override def dataType: DataType = LongType
  override def nullable: Boolean = false
  override def prettyName: String = s"last_hit_$measure"
  override def sql: String = s"$prettyName()"
  override def toString: String = sql
}

object LastHit {
  val Time = "time"
  val Count = "count"
  val measures: Seq[String] = Seq(Time, Count)
  /** The functions' SQL names, as eKuiper writes them. */
  val functionNames: Seq[String] = measures.map(m => s"last_hit_$m")
}
