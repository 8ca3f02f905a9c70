package streamwin.families

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.types.DataType

import streamwin.catalyst.SqlWindowFunction
import streamwin.spec.InputColumn

/** KX `.qsp.window.global` with a splitting trigger: a new window starts at each row where the predicate holds. */
case object SplitWindowSpec extends DataWindowSpec {
  override def function: String = Split.sql.name
  override def signalColumn: Option[InputColumn] = Some(InputColumn.boolean("predicate", "a BOOLEAN column or condition"))
  override def boundary(signal: Any, record: DataRecord): DataBoundary =
    if (signal == true) DataBoundary.Starts else DataBoundary.Joins
}

/**
 * KX `.qsp.window.global` with a user's trigger (Scala): like [[SplitWindowSpec]], but a stateful
 * function decides, row by row, where a new window starts; it reads the trigger's input columns as
 * a Row, and its state is the key's [[DataRecord.state]]. Compared by identity of the trigger.
 */
final case class TriggerSplitWindowSpec(trigger: streamwin.api.SplitTrigger[Any]) extends DataWindowSpec {
  override def function: String = Split.sql.name
  override def toString: String = s"TriggerSplitWindowSpec(${trigger.getClass.getName})"
  override def initialState: Any = trigger.initialState
  override def userClasses: Seq[Class[_]] = Seq(trigger.getClass) ++ Option(trigger.initialState).map(_.getClass)
  override def signalConverter(signalType: DataType): Any => Any = CatalystTypeConverters.createToScalaConverter(signalType)
  override def boundary(signal: Any, record: DataRecord): DataBoundary = {
    val (state, startsWindow) = trigger.next(record.state, signal.asInstanceOf[Row])
    record.state = state
    if (startsWindow) DataBoundary.Starts else DataBoundary.Joins
  }
}

/** `sw_split` (the Scala `splitBy` builds a [[TriggerSplitWindowSpec]] directly). */
object Split {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_split",
    "_FUNC_(predicate, 'order_by', column[, 'partition_by', column ...]) - A new window starts at each row where the boolean predicate is true (KX global window with a splitting trigger).",
    "SELECT k, _FUNC_(status = 'new', 'order_by', seq) AS window, sum(v) FROM t GROUP BY k, _FUNC_(status = 'new', 'order_by', seq);")(
    SequenceWindows.dataWindow("predicate", Nil)(_ => SplitWindowSpec))
}
