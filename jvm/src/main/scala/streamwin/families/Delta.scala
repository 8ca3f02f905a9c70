package streamwin.families

import org.apache.spark.sql.catalyst.expressions.Cast
import org.apache.spark.sql.types.{DoubleType, NumericType}

import streamwin.catalyst.{EpochSeconds, SqlWindowFunction}
import streamwin.spec.InputColumn

/**
 * SPL `delta(attribute, threshold)`: when a row's value minus the value of the current window's
 * oldest row is greater than `threshold`, the window is emitted and the row starts the next one.
 * Values are compared as doubles; timestamps in seconds. The key's [[DataRecord.state]] is the
 * open window's oldest value.
 */
final case class DeltaWindowSpec(threshold: Double) extends DataWindowSpec {
  require(threshold >= 0, "threshold >= 0")
  override def function: String = Delta.sql.name
  /** The value, read as a double (a timestamp in seconds). */
  override def signalColumn: Option[InputColumn] = Some(
    InputColumn("column", "a numeric or timestamp column")(t => t.isInstanceOf[NumericType] || InputColumn.isTimestamp(t),
      value => value.dataType match {
        case t if InputColumn.isTimestamp(t) => EpochSeconds(value)
        case DoubleType => value
        case _ => Cast(value, DoubleType)
      }))

  // A row without a value is in no window and changes nothing.
  override def boundary(signal: Any, record: DataRecord): DataBoundary =
    if (signal == null) DataBoundary.Skipped
    else {
      val value = signal.asInstanceOf[Double]
      val starts = record.members > 0 && value - record.state.asInstanceOf[Double] > threshold
      if (starts || record.members == 0) record.state = value
      if (starts) DataBoundary.Starts else DataBoundary.Joins
    }
}

/** `sw_delta`. */
object Delta {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_delta",
    "_FUNC_(column, threshold, 'order_by', column[, 'partition_by', column ...]) - A row whose column exceeds the window's oldest value by more than threshold (seconds for timestamps) closes the window and starts the next (SPL delta).",
    "SELECT k, _FUNC_(temp, 1.5, 'order_by', seq) AS window, avg(temp) FROM t GROUP BY k, _FUNC_(temp, 1.5, 'order_by', seq);")(
    SequenceWindows.dataWindow("column", Seq("threshold"))(a =>
      DeltaWindowSpec(a.nonNegativeNumber("threshold", a.positional("threshold")))))
}
