package org.apache.spark.sql.streamwin

import org.apache.spark.sql.{internal, Column, DataFrame, SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.classic.ExpressionUtils
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike

/**
 * The one place where streamwin reaches package-private Spark API: keep it thin. Columns holding a
 * Scala object (a user's split trigger) cannot go through a SQL function call, so they are built
 * from the expression directly. Spark 4's API (Column nodes, the classic session); 3.5 has its own
 * (jvm/api-3.5).
 */
object SparkShim {
  /** The session a physical plan runs in. */
  type ClassicSession = org.apache.spark.sql.classic.SparkSession

  /** The executed plan of a DataFrame of a classic (non-Connect) session. */
  def executedPlan(df: DataFrame): Option[SparkPlan] = df match {
    case classic: org.apache.spark.sql.classic.Dataset[_] => Some(classic.queryExecution.executedPlan)
    case _ => None
  }

  /** Adds `rule` to the rules that run before anything resolves (Spark's hint resolution batch). */
  def injectEarlyAnalysisRule(extensions: SparkSessionExtensions, rule: SparkSession => Rule[LogicalPlan]): Unit =
    extensions.injectHintResolutionRule(rule)

  def column(expression: Expression): Column = ExpressionUtils.column(expression)
  def expression(column: Column): Expression = ExpressionUtils.expression(column)

  /** `call(args...).alias(n)` with more arguments, for a call of a function whose name starts with `prefix`. */
  def appendArguments(column: Column, prefix: String, extra: Seq[Column]): Option[Column] = column.node match {
    case alias @ internal.Alias(call @ internal.UnresolvedFunction(name, args, _, _, _, _), _, _, _)
        if name.startsWith(prefix) =>
      Some(new Column(alias.copy(child = call.copy(arguments = args ++ extra.map(_.node)))))
    case _ => None
  }

  /** Runs the exchange's map stage, if it has not run (Spark keeps the job's future). */
  def submitShuffleJob(exchange: ShuffleExchangeLike): scala.concurrent.Future[org.apache.spark.MapOutputStatistics] =
    exchange.submitShuffleJob()
}
