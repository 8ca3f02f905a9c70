package streamwin.catalyst

import java.util.Locale

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.{ParseException, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{DataType, StructType}

import streamwin.spec.StreamwinErrors

/**
 * Spark's parser, unchanged, except for eKuiper's window clauses that Spark's grammar does not know:
 * `SLIDINGWINDOW(...) OVER (WHEN condition)` is handed to it as `SLIDINGWINDOW(..., __sw_when(condition))`
 * (see [[EkuiperOverWhen]]), and a statement it rejects because of an eKuiper `FILTER` clause without
 * `(WHERE ...)` fails with an error naming the eKuiper window. The methods that
 * differ between Spark lines are added by each line's `StreamwinParser` (jvm/parser-<line>) and
 * [[ParserMethodsOfLine]] (jvm/api-<line>).
 */
abstract class DelegatingParser(protected val delegate: ParserInterface) extends ParserMethodsOfLine {
  protected def explained[T](sqlText: String)(parse: => T): T =
    try parse catch { case e: ParseException => throw EkuiperParseErrors.explain(sqlText).getOrElse(e) }

  override def parsePlan(sqlText: String): LogicalPlan =
    explained(sqlText)(delegate.parsePlan(EkuiperOverWhen.rewrite(sqlText)))
  override def parseQuery(sqlText: String): LogicalPlan =
    explained(sqlText)(delegate.parseQuery(EkuiperOverWhen.rewrite(sqlText)))
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

  // OVER (WHEN ...) after a window that is not a sliding one.
  private val overWhenElsewhere = ("""(?is)\b(""" + EkuiperDialect.windowNames.filter(_ != "slidingwindow").mkString("|") +
    """)\s*\([^()]*\)\s*(?:filter\s*\(.*?\)\s*)?over\s*\(\s*when\b""").r

  def explain(sqlText: String): Option[Exception] = filterWithoutWhere.findFirstMatchIn(sqlText).map { m =>
    StreamwinErrors.misuse(m.group(1).toUpperCase(Locale.ROOT),
      "FILTER takes a WHERE clause in parentheses right after the window, as in eKuiper: " +
        s"GROUP BY ${m.group(1).toUpperCase(Locale.ROOT)}(...) FILTER (WHERE condition)")
  }.orElse(overWhenElsewhere.findFirstMatchIn(sqlText).map { m =>
    StreamwinErrors.misuse(m.group(1).toUpperCase(Locale.ROOT),
      "OVER (WHEN condition) triggers sliding windows only, as in eKuiper: " +
        "GROUP BY SLIDINGWINDOW(unit, size[, delay]) [FILTER (WHERE ...)] OVER (WHEN condition)")
  })
}

/**
 * eKuiper's triggered sliding windows in SQL text: `SLIDINGWINDOW(args) [FILTER (WHERE f)] OVER (WHEN c)`
 * becomes `SLIDINGWINDOW(args, __sw_when(c)) [FILTER (WHERE f)]`, which Spark's grammar parses; the
 * dialect ([[EkuiperDialect]]) takes the condition back out. Quoted strings and identifiers and
 * comments are read past, never into. Text without such a clause is returned as it is.
 */
private[catalyst] object EkuiperOverWhen {
  /** The argument that carries the condition into the window call. */
  val Marker = "__sw_when"

  def rewrite(sql: String): String = {
    if (!sql.toLowerCase(Locale.ROOT).contains("over")) return sql
    val out = new StringBuilder
    var from = 0 // copied up to here
    var i = 0
    while (i < sql.length) {
      val c = sql.charAt(i)
      if (c == '\'' || c == '"' || c == '`' || startsComment(sql, i)) i = skipQuotedOrComment(sql, i)
      else if (Character.isLetterOrDigit(c) || c == '_') {
        val end = wordEnd(sql, i)
        if (sql.substring(i, end).equalsIgnoreCase("slidingwindow") && (i == 0 || !isWordChar(sql.charAt(i - 1)))) {
          triggered(sql, end) match {
            case Some((callClose, overStart, condStart, condEnd, overEnd)) =>
              val condition = sql.substring(condStart, condEnd)
              if (condition.trim.isEmpty) {
                throw StreamwinErrors.misuse("SLIDINGWINDOW", "OVER (WHEN condition) needs a condition")
              }
              // Positional parameters are numbered in text order, which moving the condition would change.
              if (condition.contains('?') && sql.substring(callClose, overStart).contains('?')) {
                throw StreamwinErrors.misuse("SLIDINGWINDOW",
                  "positional parameters (?) in both FILTER and OVER (WHEN ...) are not supported; use named ones (:name)")
              }
              out.append(sql.substring(from, callClose)).append(s", $Marker(").append(condition).append(")")
                .append(sql.substring(callClose, overStart))
              from = overEnd
              i = overEnd
            case None => i = end
          }
        } else i = end
      } else i += 1
    }
    if (from == 0) sql else out.append(sql.substring(from)).toString
  }

  /**
   * After the name of a SLIDINGWINDOW call (at `i`): its closing parenthesis, where OVER starts, the
   * condition's bounds and the end of the OVER clause, when an `OVER (WHEN ...)` follows the call
   * (and its FILTER clause, if any).
   */
  private def triggered(sql: String, i: Int): Option[(Int, Int, Int, Int, Int)] = {
    val (_, callClose) = parenthesized(sql, i).getOrElse(return None)
    var at = skipBlank(sql, callClose + 1)
    if (keywordAt(sql, at, "filter")) {
      at = skipBlank(sql, parenthesized(sql, at + "filter".length).getOrElse(return None)._2 + 1)
    }
    if (!keywordAt(sql, at, "over")) return None
    val (open, close) = parenthesized(sql, at + "over".length).getOrElse(return None)
    val when = skipBlank(sql, open + 1)
    if (!keywordAt(sql, when, "when")) return None
    Some((callClose, at, when + "when".length, close, close + 1))
  }

  /** The parentheses that open after the blanks from `i`, when they do and close. */
  private def parenthesized(sql: String, i: Int): Option[(Int, Int)] = {
    val open = skipBlank(sql, i)
    if (open >= sql.length || sql.charAt(open) != '(') None
    else Some(closing(sql, open)).filter(_ >= 0).map(close => (open, close))
  }

  private def isWordChar(c: Char): Boolean = Character.isLetterOrDigit(c) || c == '_'

  private def wordEnd(sql: String, i: Int): Int = {
    var j = i
    while (j < sql.length && isWordChar(sql.charAt(j))) j += 1
    j
  }

  private def keywordAt(sql: String, i: Int, word: String): Boolean =
    sql.regionMatches(true, i, word, 0, word.length) && wordEnd(sql, i) == i + word.length

  private def startsComment(sql: String, i: Int): Boolean =
    sql.startsWith("--", i) || sql.startsWith("/*", i)

  /** Past the blanks and comments from `i`. */
  private def skipBlank(sql: String, i: Int): Int = {
    var j = i
    while (j < sql.length && (Character.isWhitespace(sql.charAt(j)) || startsComment(sql, j))) {
      j = if (startsComment(sql, j)) skipQuotedOrComment(sql, j) else j + 1
    }
    j
  }

  /** Past the quoted string or identifier, or comment, that starts at `i` (to the end if unclosed). */
  private def skipQuotedOrComment(sql: String, i: Int): Int = sql.charAt(i) match {
    case '-' =>
      val end = sql.indexOf('\n', i)
      if (end < 0) sql.length else end + 1
    case '/' =>
      // Spark's block comments nest.
      var depth = 0
      var j = i
      while (j < sql.length) {
        if (sql.startsWith("/*", j)) { depth += 1; j += 2 }
        else if (sql.startsWith("*/", j)) { depth -= 1; j += 2; if (depth == 0) return j }
        else j += 1
      }
      sql.length
    case quote =>
      var j = i + 1
      while (j < sql.length && sql.charAt(j) != quote) j += (if (sql.charAt(j) == '\\' && quote != '`') 2 else 1)
      math.min(j + 1, sql.length)
  }

  /** The parenthesis closing the one at `open`, or -1. */
  private def closing(sql: String, open: Int): Int = {
    var depth = 0
    var j = open
    while (j < sql.length) {
      val c = sql.charAt(j)
      if (c == '\'' || c == '"' || c == '`' || startsComment(sql, j)) j = skipQuotedOrComment(sql, j)
      else {
        if (c == '(') depth += 1
        else if (c == ')') { depth -= 1; if (depth == 0) return j }
        j += 1
      }
    }
    -1
  }
}
