package streamwin.spec

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.util.toPrettySQL
import org.apache.spark.sql.types._

/**
 * What one input column of a window must be, checked when the query is analysed, and how the
 * window's engine reads it. Each family states its own columns in its spec
 * ([[WindowSpec.leadingColumn]], [[WindowSpec.signalColumn]]); the analyzer only applies them.
 *
 * @param argument the argument the error names
 * @param expected what the column must be: the error says "must be `expected`, got <type> (<column>)`hint`"
 * @param accepts  the column types allowed
 * @param read     the column as the engine reads it (for a signal: a boolean, a double, microseconds, ...)
 */
final case class InputColumn(argument: String, expected: String, hint: String = "")(
    accepts: DataType => Boolean, read: Expression => Expression = identity) {

  def check(function: String, column: Expression): Unit =
    if (!accepts(column.dataType)) {
      throw StreamwinErrors.invalidArgument(function, argument,
        s"must be $expected, got ${column.dataType.sql} (${toPrettySQL(column)})$hint")
    }

  def forEngine(column: Expression): Expression = read(column)
}

object InputColumn {
  def isTimestamp(t: DataType): Boolean = t == TimestampType || t == TimestampNTZType

  /** An event-time column (`time`, or `ingest_time` of a timer). */
  def eventTime(argument: String): InputColumn =
    InputColumn(argument, "a TIMESTAMP or TIMESTAMP_NTZ column",
      "; convert it first, for example with timestamp_seconds() or to_timestamp()")(isTimestamp)

  val Time: InputColumn = eventTime("time")

  /** An arrival order (`order_by`): anything Spark sorts by value. */
  val Order: InputColumn = InputColumn("order_by", "a numeric, string, date or timestamp column") {
    case _: NumericType | TimestampType | TimestampNTZType | DateType | _: StringType => true
    case _ => false
  }

  /** A per-row condition. */
  def boolean(argument: String, expected: String): InputColumn = InputColumn(argument, expected)(_ == BooleanType)
}
