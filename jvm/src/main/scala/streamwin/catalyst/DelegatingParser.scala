package streamwin.catalyst

import java.util.Locale

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.{ParseException, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{DataType, StructType}

import streamwin.spec.StreamwinErrors

/**
 * Spark's parser, unchanged, except that a statement it rejects because of an eKuiper `FILTER`
 * clause without `(WHERE ...)` fails with an error naming the eKuiper window: Spark's grammar only
 * knows `FILTER (WHERE cond)`, so the dialect rule never sees such a statement. The methods that
 * differ between Spark lines are added by each line's `StreamwinParser` (jvm/parser-<line>) and
 * [[ParserMethodsOfLine]] (jvm/api-<line>).
 */
abstract class DelegatingParser(protected val delegate: ParserInterface) extends ParserMethodsOfLine {
  protected def explained[T](sqlText: String)(parse: => T): T =
    try parse catch { case e: ParseException => throw EkuiperParseErrors.explain(sqlText).getOrElse(e) }

  override def parsePlan(sqlText: String): LogicalPlan = explained(sqlText)(delegate.parsePlan(sqlText))
  override def parseQuery(sqlText: String): LogicalPlan = explained(sqlText)(delegate.parseQuery(sqlText))
  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier = delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)
}

private[catalyst] object EkuiperParseErrors {
  // An eKuiper window call followed by FILTER that does not open `(WHERE`.
  private val filterWithoutWhere =
    ("""(?is)\b(""" + EkuiperDialect.windowNames.mkString("|") + """)\s*\([^()]*\)\s*filter\b(?!\s*\(\s*where\b)""").r

  def explain(sqlText: String): Option[Exception] = filterWithoutWhere.findFirstMatchIn(sqlText).map { m =>
    StreamwinErrors.misuse(m.group(1).toUpperCase(Locale.ROOT),
      "FILTER takes a WHERE clause in parentheses right after the window, as in eKuiper: " +
        s"GROUP BY ${m.group(1).toUpperCase(Locale.ROOT)}(...) FILTER (WHERE condition)")
  }
}
