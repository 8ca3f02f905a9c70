package streamwin.catalyst

import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface, SqlStatementSplitResult, TemporalIdentifier}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/** Spark 4.3 adds temporal table identifiers and statement splitting to the parser's interface. */
class StreamwinParser(sparkParser: ParserInterface) extends DelegatingParser(sparkParser) {
  override def parsePlanWithParameters(sqlText: String, parameters: ParameterContext): LogicalPlan =
    explained(sqlText)(delegate.parsePlanWithParameters(EkuiperOverWhen.rewrite(sqlText), parameters))
  override def parseTemporalTableIdentifier(sqlText: String): TemporalIdentifier =
    delegate.parseTemporalTableIdentifier(sqlText)
  override def splitStatements(sqlText: String): SqlStatementSplitResult = delegate.splitStatements(sqlText)
}
