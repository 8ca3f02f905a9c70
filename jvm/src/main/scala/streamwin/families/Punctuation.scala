package streamwin.families

import streamwin.catalyst.SqlWindowFunction
import streamwin.spec.InputColumn

/** SPL `punct()`: a row whose marker column is true closes the current window and is no member of any. */
case object PunctuationWindowSpec extends DataWindowSpec {
  override def function: String = Punctuation.sql.name
  override def signalColumn: Option[InputColumn] = Some(InputColumn.boolean("column", "a BOOLEAN marker column"))
  override def boundary(signal: Any, record: DataRecord): DataBoundary =
    if (signal == true) DataBoundary.Closes else DataBoundary.Joins
}

/** `sw_punctuation`. */
object Punctuation {
  val sql: SqlWindowFunction = SqlWindowFunction("sw_punctuation",
    "_FUNC_(column, 'order_by', column[, 'partition_by', column ...]) - A row whose boolean column is true closes the window and is no member of any (SPL punct()).",
    "SELECT k, _FUNC_(is_marker, 'order_by', seq) AS window, count(*) FROM t GROUP BY k, _FUNC_(is_marker, 'order_by', seq);")(
    SequenceWindows.dataWindow("column", Nil)(_ => PunctuationWindowSpec))
}
