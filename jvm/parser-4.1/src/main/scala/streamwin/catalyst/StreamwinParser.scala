package streamwin.catalyst

import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/** Spark 4.1 and 4.2: parameterized statements parse through Spark's own parser (its default would drop the parameters). */
class StreamwinParser(sparkParser: ParserInterface) extends DelegatingParser(sparkParser) {
  override def parsePlanWithParameters(sqlText: String, parameters: ParameterContext): LogicalPlan =
    explained(sqlText)(delegate.parsePlanWithParameters(EkuiperOverWhen.rewrite(sqlText), parameters))
}
