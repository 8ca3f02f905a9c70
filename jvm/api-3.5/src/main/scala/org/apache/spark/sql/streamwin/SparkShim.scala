package org.apache.spark.sql.streamwin

import org.apache.spark.sql.{Column, DataFrame, Dataset, SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction
import org.apache.spark.sql.catalyst.expressions.{Alias, Expression, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, SubqueryAlias, UnresolvedWith}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.command.ExplainCommand
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike

import streamwin.catalyst.DelegatingParser

/**
 * The one place where streamwin reaches package-private Spark API: keep it thin. Spark 3.5's API: a
 * Column is its expression, and the session is the classic one.
 */
object SparkShim {
  /** The session a physical plan runs in. */
  type ClassicSession = SparkSession

  def column(expression: Expression): Column = new Column(expression)
  def expression(column: Column): Expression = column.expr

  /** The executed plan of a DataFrame. */
  def executedPlan(df: DataFrame): Option[SparkPlan] = Some((df: Dataset[_]).queryExecution.executedPlan)

  /**
   * Makes `rule` run on every plan the session's SQL parser returns, before anything resolves: 3.5 has no
   * hint resolution batch for extensions, and its resolution batch would fail on an eKuiper window (bare
   * unit words, unknown functions) before a rule of that batch rewrote it.
   */
  def injectEarlyAnalysisRule(extensions: SparkSessionExtensions, rule: SparkSession => Rule[LogicalPlan]): Unit =
    extensions.injectParser { (session, delegate) =>
      val rewrite = rule(session)
      new DelegatingParser(delegate) {
        override def parsePlan(sqlText: String): LogicalPlan = everywhere(rewrite)(super.parsePlan(sqlText))
        override def parseQuery(sqlText: String): LogicalPlan = everywhere(rewrite)(super.parseQuery(sqlText))
      }
    }

  /**
   * `rule` on a parsed plan and on the plans it holds outside its children, innermost first: a WITH
   * clause's queries, subquery expressions and EXPLAIN's query (on 4.x the analyzer reaches them itself).
   */
  private def everywhere(rule: Rule[LogicalPlan])(plan: LogicalPlan): LogicalPlan = {
    val inner = plan.transformUp {
      case w: UnresolvedWith => w.copy(cteRelations = w.cteRelations.map { case (name, query) =>
        name -> everywhere(rule)(query).asInstanceOf[SubqueryAlias] })
      case e: ExplainCommand => e.copy(logicalPlan = everywhere(rule)(e.logicalPlan))
      case p => p.transformExpressions { case s: SubqueryExpression => s.withNewPlan(everywhere(rule)(s.plan)) }
    }
    rule(inner)
  }

  /** `call(args...).alias(n)` with more arguments, for a call of a function whose name starts with `prefix`. */
  def appendArguments(column: Column, prefix: String, extra: Seq[Column]): Option[Column] = column.expr match {
    case alias @ Alias(call @ UnresolvedFunction(nameParts, args, _, _, _), _) if nameParts.last.startsWith(prefix) =>
      Some(new Column(Alias(call.copy(arguments = args ++ extra.map(_.expr)), alias.name)(
        alias.exprId, alias.qualifier, alias.explicitMetadata, alias.nonInheritableMetadataKeys)))
    case _ => None
  }

  /** Runs the exchange's map stage, if it has not run (Spark keeps the job's future). */
  def submitShuffleJob(exchange: ShuffleExchangeLike): scala.concurrent.Future[org.apache.spark.MapOutputStatistics] =
    exchange.submitShuffleJob
}
