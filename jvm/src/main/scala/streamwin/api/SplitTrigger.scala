package streamwin.api

import org.apache.spark.sql.Row

/**
 * A stateful rule that splits each key's rows into windows, for Scala users: KX
 * `.qsp.window.global` with a custom trigger function. The rule sees every row of a key in
 * `order_by` order, with the state it returned for the previous row (`initialState` for the first
 * row of each key), and says whether this row starts a new window. Use it with
 * [[functions.splitBy]] (`sw.splitBy` after `import streamwin.api.{functions => sw}`); it must be
 * serializable, as it runs on the executors.
 *
 * On a stream the state is kept in the checkpoint. Numbers, strings, decimals and byte arrays are stored as
 * values; any other state is Java-serialized and read back through a class filter that admits Java's and
 * Scala's value types and collections, dates and times, Spark Rows, and the classes of the trigger's own
 * package and of its initial state's. A state holding another class fails the micro-batch that stores it,
 * naming the class.
 *
 * {{{
 *   // KX's high-water-mark example: a window starts at a value above every earlier one and 15.
 *   object HighWaterMark extends SplitTrigger[Int] {
 *     def initialState: Int = 15
 *     def next(mark: Int, row: Row): (Int, Boolean) = {
 *       val v = row.getInt(0)
 *       if (v > mark) (v, true) else (mark, false)
 *     }
 *   }
 *   df.groupBy(sw.splitBy(HighWaterMark, Seq(col("val")), col("seq"))).agg(collect_list("val"))
 * }}}
 */
trait SplitTrigger[S] extends Serializable {
  def initialState: S

  /** @param row the trigger's input columns of this row; returns (next state, starts a new window) */
  def next(state: S, row: Row): (S, Boolean)
}
