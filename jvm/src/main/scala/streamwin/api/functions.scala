package streamwin.api

import java.time.Duration

import org.apache.spark.sql.Column
import org.apache.spark.sql.{functions => F}
import org.apache.spark.sql.streamwin.SparkShim

import streamwin.catalyst.{SqlWindowFunction, StreamWindow}
import streamwin.families._

/**
 * streamwin's windows for Scala users. Each returns a Column named `window` (a struct of start, end
 * and kind) to use in `groupBy(...)` (one row per window) or `select(...)` (each row tagged with its
 * windows). The columns call the SQL functions `sw_*`, so they behave the same from SQL and Python.
 * The SQL functions themselves are listed here too ([[sqlFunctions]]), so a new window family is
 * added to SQL and Scala in this one file (besides its definition under `streamwin.families`).
 *
 * Import it under a name: `count` and `split` are in Spark's `org.apache.spark.sql.functions` too.
 * {{{
 *   import org.apache.spark.sql.functions._
 *   import streamwin.api.{functions => sw}
 *   df.groupBy(col("sensor"), sw.tumbling(col("ts"), "10 seconds")).agg(avg("temp"))
 * }}}
 */
object functions {

  /** The SQL functions a session gets from streamwin, each declared by its family. */
  private[streamwin] val sqlFunctions: Seq[SqlWindowFunction] = Seq(Tumbling.sql, Hopping.sql, Sliding.sql, Session.sql,
    Interval.sql, Timer.sql, Count.sql, Split.sql, Delta.sql, Punctuation.sql, Cumulate.sql)

  private def window(name: String, required: Seq[Column], options: Seq[(String, Column)]): Column =
    F.call_function(name, required ++ options.flatMap { case (k, v) => Seq(F.lit(k), v) }: _*).alias("window")

  private def duration(d: Duration): Column = F.lit(d)

  /**
   * A window with more options, under the same names as in SQL and Python: the event-time policies
   * (`order_by`, `lateness`, `late`, `emit`, `count_trigger`, `emit_empty`, `emit_every`, `idle_timeout`) and
   * any option of the function. Values are Columns or literals (strings, numbers, booleans, `java.time.Duration`s).
   * {{{
   *   df.groupBy(col("sensor"), sw.withOptions(sw.tumbling(col("ts"), "10 seconds"),
   *     "lateness" -> "2 seconds", "order_by" -> col("offset"), "late" -> "passthrough"))
   * }}}
   */
  def withOptions(window: Column, options: (String, Any)*): Column = {
    val extra = options.flatMap { case (k, v) =>
      Seq(F.lit(k), v match {
        case c: Column => c
        case other => F.lit(other)
      })
    }
    SparkShim.appendArguments(window, "sw_", extra).getOrElse(throw new IllegalArgumentException(
      s"withOptions takes a window column built by streamwin.api.functions (not splitBy), got $window"))
  }

  /** Tumbling event-time windows [offset + k·size, offset + (k+1)·size). */
  def tumbling(time: Column, size: String): Column = window("sw_tumbling", Seq(time, F.lit(size)), Nil)
  def tumbling(time: Column, size: String, offset: String): Column =
    window("sw_tumbling", Seq(time, F.lit(size)), Seq("offset" -> F.lit(offset)))
  def tumbling(time: Column, size: Duration): Column = window("sw_tumbling", Seq(time, duration(size)), Nil)

  /** Hopping event-time windows of length `size` starting every `step` (gaps when step > size). */
  def hopping(time: Column, size: String, step: String): Column =
    window("sw_hopping", Seq(time, F.lit(size), F.lit(step)), Nil)
  def hopping(time: Column, size: String, step: String, offset: String): Column =
    window("sw_hopping", Seq(time, F.lit(size), F.lit(step)), Seq("offset" -> F.lit(offset)))
  def hopping(time: Column, size: Duration, step: Duration): Column =
    window("sw_hopping", Seq(time, duration(size), duration(step)), Nil)

  /**
   * Cumulative windows (Flink CUMULATE): periods of `size` aligned to the epoch (plus `offset`), each
   * output at every `step` as [period start, period start + j·step) once it holds a row.
   */
  def cumulate(time: Column, size: String, step: String): Column =
    window("sw_cumulate", Seq(time, F.lit(size), F.lit(step)), Nil)
  def cumulate(time: Column, size: String, step: String, offset: String): Column =
    window("sw_cumulate", Seq(time, F.lit(size), F.lit(step)), Seq("offset" -> F.lit(offset)))
  def cumulate(time: Column, size: Duration, step: Duration): Column =
    window("sw_cumulate", Seq(time, duration(size), duration(step)), Nil)

  /** Per-event sliding windows: one per event time t of a key, covering [t - size, t] (both ends inclusive). */
  def sliding(time: Column, size: String, partitionBy: Column*): Column =
    window("sw_sliding", Seq(time, F.lit(size)), partitionBy.map("partition_by" -> _))
  /**
   * Per-event sliding windows that also take the rows up to `delay` after their event (eKuiper
   * SLIDINGWINDOW(unit, size, delay)): [t - size, t + delay), output once progress reaches t + delay.
   */
  def sliding(time: Column, size: String, delay: String, partitionBy: Column*): Column =
    window("sw_sliding", Seq(time, F.lit(size)), ("delay" -> F.lit(delay)) +: partitionBy.map("partition_by" -> _))
  /**
   * Sliding windows opened only by the rows matching `when` (eKuiper SLIDINGWINDOW(...) OVER (WHEN
   * condition)): the window of such a row at t holds every row of [t - size, t] (with a delay: [t - size,
   * t + delay)), matching or not. A zero `delay` is none.
   */
  def slidingWhen(time: Column, size: String, delay: String, when: Column, partitionBy: Column*): Column =
    window("sw_sliding", Seq(time, F.lit(size)), Seq("delay" -> F.lit(delay), "when" -> when) ++
      partitionBy.map("partition_by" -> _))

  /** Session windows ending `gap` after their last row (Spark's `session_window` rule). */
  def session(time: Column, gap: String, partitionBy: Column*): Column =
    window("sw_session", Seq(time, F.lit(gap)), partitionBy.map("partition_by" -> _))
  /** Sessions with a per-row gap: `gap` is an INTERVAL or interval STRING column. */
  def session(time: Column, gap: Column): Column = window("sw_session", Seq(time, gap), Nil)
  /** Sessions cut at most every `maxDuration`, at aligned check times, as eKuiper's SESSIONWINDOW does. */
  def session(time: Column, gap: String, maxDuration: String, partitionBy: Column*): Column =
    window("sw_session", Seq(time, F.lit(gap)), ("max_duration" -> F.lit(maxDuration)) +: partitionBy.map("partition_by" -> _))

  /**
   * SPL timeInterval panes [offset + k·creationPeriod, + duration), replayed per key in `orderBy`
   * order: `final` when event-time progress reaches a pane's end, `update` for late rows until
   * end + discardAge.
   */
  def interval(time: Column, duration: String, creationPeriod: String, discardAge: String, orderBy: Column): Column =
    window("sw_interval", Seq(time, F.lit(duration)),
      Seq("creation_period" -> F.lit(creationPeriod), "discard_age" -> F.lit(discardAge), "order_by" -> orderBy))
  def interval(time: Column, duration: String): Column = window("sw_interval", Seq(time, F.lit(duration)), Nil)

  /** Processing-time windows: what arrived (by `ingestTime`) in each period. */
  def timer(period: String, ingestTime: Column): Column =
    window("sw_timer", Seq(F.lit(period)), Seq("ingest_time" -> ingestTime))
  /** Processing-time windows without an arrival column: the whole input arrives at the query's processing time. */
  def timer(period: String): Column = window("sw_timer", Seq(F.lit(period)), Nil)

  /**
   * Count windows of `size` rows, starting every `step` rows (tumbling when step == size, sliding
   * when step == 1) per key in `orderBy` order. A window still incomplete at the end of the input is
   * emitted with kind `partial`.
   */
  def count(size: Long, orderBy: Column): Column =
    window("sw_count", Seq(F.lit(size)), Seq("order_by" -> orderBy))
  def count(size: Long, step: Long, orderBy: Column): Column =
    window("sw_count", Seq(F.lit(size)), Seq("step" -> F.lit(step), "order_by" -> orderBy))
  /** Count windows in a select: `partitionBy` splits the rows into independent streams. */
  def count(size: Long, step: Long, orderBy: Column, partitionBy: Seq[Column]): Column =
    window("sw_count", Seq(F.lit(size)),
      Seq("step" -> F.lit(step), "order_by" -> orderBy) ++ partitionBy.map("partition_by" -> _))

  /**
   * eKuiper COUNTWINDOW(size, step): at every step-th row, once at least `size` rows arrived, a
   * window holds the latest `size` rows (align "end").
   */
  def countEndAligned(size: Long, step: Long, orderBy: Column): Column =
    window("sw_count", Seq(F.lit(size)), Seq("step" -> F.lit(step), "align" -> F.lit("end"), "order_by" -> orderBy))

  /** KX global window with a splitting trigger: a new window starts at each row where `predicate` holds. */
  def split(predicate: Column, orderBy: Column, partitionBy: Column*): Column =
    window("sw_split", Seq(predicate), ("order_by" -> orderBy) +: partitionBy.map("partition_by" -> _))

  /**
   * SPL delta(attribute, threshold): a row whose `column` exceeds the current window's oldest value
   * by more than `threshold` (seconds for timestamps) closes the window and starts the next one.
   */
  def delta(column: Column, threshold: Double, orderBy: Column, partitionBy: Column*): Column =
    window("sw_delta", Seq(column, F.lit(threshold)), ("order_by" -> orderBy) +: partitionBy.map("partition_by" -> _))

  /**
   * KX global window with a custom trigger: `trigger` sees each row's `inputs` (as a Row) in
   * `orderBy` order per key, keeps its own state, and says where a new window starts.
   */
  def splitBy[S](trigger: SplitTrigger[S], inputs: Seq[Column], orderBy: Column, partitionBy: Column*): Column = {
    val spec = TriggerSplitWindowSpec(trigger.asInstanceOf[SplitTrigger[Any]])
    val children = Seq(orderBy, F.struct(inputs: _*)) ++ partitionBy
    SparkShim.column(StreamWindow(spec, children.map(SparkShim.expression))).alias("window")
  }

  /** SPL punct(): a row whose boolean `marker` is true closes the current window and is no member of any. */
  def punctuation(marker: Column, orderBy: Column, partitionBy: Column*): Column =
    window("sw_punctuation", Seq(marker), ("order_by" -> orderBy) +: partitionBy.map("partition_by" -> _))
}
