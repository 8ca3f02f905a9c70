package streamwin.spec

import java.util.Locale

import org.apache.spark.sql.catalyst.expressions.{Expression, Literal, NamedArgumentExpression, UnresolvedWindowExpression, WindowExpression}
import org.apache.spark.sql.catalyst.util.IntervalUtils
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.{CalendarInterval, UTF8String}

/**
 * The arguments of one `sw_*` call: required positional arguments first, then options, either as
 * SQL named arguments (`step => 10`) or as pairs of a string literal name and a value
 * (`'step', 10`), which is the form the Python and Scala APIs emit.
 */
final class WindowArguments(
    val function: String,
    positionalNames: Seq[String],
    allowedOptions: Seq[String],
    multiValued: Set[String],
    args: Seq[Expression]) {

  private val (positionalArgs, optionArgs) = args.span(!_.isInstanceOf[NamedArgumentExpression]) match {
    case (pos, named) if named.nonEmpty => (pos, named)
    case (all, _) => all.splitAt(positionalNames.size)
  }

  if (positionalArgs.size < positionalNames.size) {
    val missing = positionalNames.drop(positionalArgs.size).map(n => s"`$n`").mkString(", ")
    throw StreamwinErrors.misuse(function,
      s"missing required argument $missing; usage: $usage")
  }
  if (positionalArgs.size > positionalNames.size) {
    throw StreamwinErrors.misuse(function, s"too many positional arguments; usage: $usage")
  }

  private val options: Seq[(String, Expression)] = parseOptions(optionArgs)

  // Spark moves window functions out of the query around them; inside a window column they would
  // be torn apart, so they are computed first, as a column of their own.
  args.find(_.exists(e => e.isInstanceOf[WindowExpression] || e.isInstanceOf[UnresolvedWindowExpression]))
    .foreach { e =>
      throw StreamwinErrors.misuse(function,
        s"window functions (OVER ...) cannot be used inside $function (${e.sql}); compute them first as a " +
          "column, e.g. df.withColumn(\"new_high\", ...), and pass that column")
    }

  private def usage: String = {
    val opts = allowedOptions.map(o => s"[, '$o', value]").mkString
    s"$function(${positionalNames.mkString(", ")}$opts)"
  }

  private def parseOptions(rest: Seq[Expression]): Seq[(String, Expression)] = {
    val pairs: Seq[(String, Expression)] = if (rest.forall(_.isInstanceOf[NamedArgumentExpression])) {
      rest.map { case NamedArgumentExpression(k, v) => (k, v) }
    } else {
      if (rest.size % 2 != 0) {
        throw StreamwinErrors.misuse(function,
          s"options must come as pairs of a name and a value; usage: $usage")
      }
      rest.grouped(2).map { case Seq(name, value) =>
        name match {
          case Literal(s: UTF8String, StringType) => (s.toString, value)
          case other => throw StreamwinErrors.misuse(function,
            s"expected an option name (a string literal) but got ${other.sql}; usage: $usage")
        }
      }.toSeq
    }
    val normalised = pairs.map { case (k, v) => (k.toLowerCase(Locale.ROOT), v) }
    normalised.foreach { case (k, _) =>
      if (!allowedOptions.contains(k)) {
        val allowed = if (allowedOptions.isEmpty) "none" else allowedOptions.mkString(", ")
        throw StreamwinErrors.invalidArgument(function, k,
          s"is not an option of $function; allowed options: $allowed")
      }
    }
    normalised.groupBy(_._1).foreach { case (k, vs) =>
      if (vs.size > 1 && !multiValued.contains(k)) {
        throw StreamwinErrors.invalidArgument(function, k, "is given more than once")
      }
    }
    normalised
  }

  def positional(name: String): Expression = positionalArgs(positionalNames.indexOf(name))

  def option(name: String): Option[Expression] = options.collectFirst { case (`name`, v) => v }

  def optionValues(name: String): Seq[Expression] = options.collect { case (`name`, v) => v }

  /** A positive duration in microseconds from a string literal ('10 seconds') or an interval literal. */
  def duration(name: String, e: Expression, allowZero: Boolean = false, allowNegative: Boolean = false,
      wholeMicros: Boolean = false): Long = {
    val hint = "a duration such as '10 seconds', INTERVAL 10 SECONDS or a Python timedelta"
    val micros: Long = e match {
      // As Spark's window() takes its durations (SQL only: Python rejects numbers, which read as seconds too easily).
      case Literal(v: Int, IntegerType) if wholeMicros => v.toLong
      case Literal(v: Long, LongType) if wholeMicros => v
      case Literal(null, _) => throw StreamwinErrors.invalidArgument(function, name, s"must be $hint, not NULL")
      case Literal(s: UTF8String, StringType) =>
        val interval = try IntervalUtils.stringToInterval(s) catch {
          case _: IllegalArgumentException | _: org.apache.spark.SparkThrowable =>
            throw StreamwinErrors.invalidArgument(function, name, s"must be $hint; cannot parse '$s'")
        }
        fromCalendarInterval(name, interval, s"'$s'")
      case Literal(ci: CalendarInterval, CalendarIntervalType) => fromCalendarInterval(name, ci, ci.toString)
      case Literal(v: Long, _: DayTimeIntervalType) => v
      case Literal(_, _: YearMonthIntervalType) =>
        throw StreamwinErrors.invalidArgument(function, name,
          "must be a fixed duration; months and years vary in length")
      case other =>
        throw StreamwinErrors.invalidArgument(function, name, s"must be $hint, got ${other.sql}")
    }
    if (micros < 0 && !allowNegative) {
      throw StreamwinErrors.invalidArgument(function, name,
        s"must be ${if (allowZero) "zero or positive" else "positive"}, got ${e.sql}")
    }
    if (micros == 0 && !allowZero) {
      throw StreamwinErrors.invalidArgument(function, name, s"must be positive, got ${e.sql}")
    }
    micros
  }

  private def fromCalendarInterval(name: String, ci: CalendarInterval, shown: String): Long = {
    if (ci.months != 0) {
      throw StreamwinErrors.invalidArgument(function, name,
        s"must be a fixed duration; months and years vary in length (got $shown)")
    }
    Math.addExact(Math.multiplyExact(ci.days.toLong, 86400L * 1000000L), ci.microseconds)
  }

  /** One of `allowed` (case-insensitive) from a string literal. */
  def choice(name: String, e: Expression, allowed: Seq[String]): String = e match {
    case Literal(s: UTF8String, StringType) if allowed.contains(s.toString.toLowerCase(Locale.ROOT)) =>
      s.toString.toLowerCase(Locale.ROOT)
    case other => throw StreamwinErrors.invalidArgument(function, name,
      s"must be one of ${allowed.map(v => s"'$v'").mkString(", ")}, got ${other.sql}")
  }

  /** A boolean literal (SQL TRUE/FALSE, Python True/False). */
  def boolean(name: String, e: Expression): Boolean = e match {
    case Literal(b: Boolean, BooleanType) => b
    case other => throw StreamwinErrors.invalidArgument(function, name, s"must be TRUE or FALSE, got ${other.sql}")
  }

  /** A number >= 0 from a numeric literal. */
  def nonNegativeNumber(name: String, e: Expression): Double = {
    val v: Double = e match {
      case Literal(null, _) => throw StreamwinErrors.invalidArgument(function, name, "must be a number >= 0, not NULL")
      case Literal(v, _: NumericType) => v match {
        case d: Decimal => d.toDouble
        case n: java.lang.Number => n.doubleValue()
        case other => other.toString.toDouble
      }
      case other => throw StreamwinErrors.invalidArgument(function, name, s"must be a number >= 0, got ${other.sql}")
    }
    if (v.isNaN || v < 0) throw StreamwinErrors.invalidArgument(function, name, s"must be a number >= 0, got ${e.sql}")
    v
  }

  /** A positive whole number (a row count) from an integer literal. */
  def positiveCount(name: String, e: Expression): Long = {
    val n: Long = e match {
      case Literal(v: Int, IntegerType) => v.toLong
      case Literal(v: Long, LongType) => v
      case Literal(v: Short, ShortType) => v.toLong
      case Literal(v: Byte, ByteType) => v.toLong
      case other => throw StreamwinErrors.invalidArgument(function, name,
        s"must be a positive whole number of rows, got ${other.sql}")
    }
    if (n <= 0) throw StreamwinErrors.invalidArgument(function, name, s"must be a positive whole number of rows, got $n")
    n
  }
}
