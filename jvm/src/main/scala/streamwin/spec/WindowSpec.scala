package streamwin.spec

import org.apache.spark.sql.catalyst.expressions.Cast
import org.apache.spark.sql.types.{CalendarIntervalType, DayTimeIntervalType, DoubleType, NumericType, StringType}

import streamwin.catalyst.{EpochSeconds, GapMicros}

/**
 * What a window function asked for, validated and normalised: data, plus the rules for its input
 * columns that the analyzer checks. Specs are part of streaming engine state (Java-serialized), so
 * each case class pins its serialVersionUID: methods may be added without breaking checkpoints.
 */
sealed trait WindowSpec extends Serializable {
  /** The SQL name of the function that built this spec (for error messages and plan strings). */
  def function: String
  /** True when the window reads a second column (a data window's signal, a dynamic session gap, an interval's order_by). */
  def hasSignal: Boolean = false
  /** What the first column must be: the event time (time windows) or the order_by (count and data windows). */
  def leadingColumn: InputColumn = InputColumn.Time
  /** What the signal column must be and how the engine reads it (when `hasSignal`); None: any column, as it is. */
  def signalColumn: Option[InputColumn] = None
}

/**
 * Aligned event-time windows (tumbling and hopping): windows start at `offset + k * step` for every
 * integer k and last `size`, as [start, end). All values in microseconds. A hopping window whose
 * step exceeds its size leaves gaps that belong to no window.
 *
 * @param processingTime the windows follow the query's processing time (`sw_timer` without an
 *                       ingest_time column): on a stream, the clock that closes them is Spark's
 */
// Pinned to the UID the class had before `processingTime` existed: streaming checkpoints hold the spec
// (Java-serialized engine state) and must still restore; an old spec reads back with processingTime = false.
@SerialVersionUID(-1230919987242088045L)
final case class TimeWindowSpec(function: String, size: Long, step: Long, offset: Long, processingTime: Boolean = false)
    extends WindowSpec {
  require(size > 0 && step > 0, "size and step must be positive")
  override def leadingColumn: InputColumn = if (function == "sw_timer") InputColumn.eventTime("ingest_time") else InputColumn.Time

  /** Windows are unions of slices of this length: the largest unit that divides size and step. */
  val slice: Long = gcd(size, step)

  /** The offset reduced into [0, step), so that the alignment arithmetic never overflows. */
  val alignment: Long = Math.floorMod(offset, step)

  /** Start of the slice holding `t`. */
  def sliceStart(t: Long): Long = t - Math.floorMod(t - alignment, slice)

  /** Start of the latest window that starts at or before `t`. */
  def lastStartAtOrBefore(t: Long): Long = t - Math.floorMod(t - alignment, step)

  /** Start of the earliest window that ends after `t` (it holds `t` only if it starts at or before t). */
  def firstStartEndingAfter(t: Long): Long = lastStartAtOrBefore(t - size) + step

  /** True when `t` falls into no window (only possible when step > size). */
  def inGap(t: Long): Boolean = firstStartEndingAfter(t) > t

  /** Starts of all windows holding `t`, ascending. */
  def windowStartsHolding(t: Long): Iterator[Long] = {
    val first = firstStartEndingAfter(t)
    Iterator.iterate(first)(_ + step).takeWhile(_ <= t)
  }

  private def gcd(a: Long, b: Long): Long = if (b == 0) a else gcd(b, a % b)
}

/**
 * Per-event sliding windows (eKuiper SLIDINGWINDOW, Quix `sliding_window`): one window per distinct
 * event time t of a key, covering [t - size, t] with both ends inclusive. Rows sharing a timestamp
 * share that window (Quix: "every interval has a distinct aggregation"). Microseconds.
 */
@SerialVersionUID(6951449584940748472L)
final case class SlidingWindowSpec(size: Long) extends WindowSpec {
  require(size > 0, "size must be positive")
  override def function: String = "sw_sliding"
}

/**
 * Session windows: a session of a key extends while its next row is at most `gap` after the
 * session's end so far (the same merge rule as Spark's `session_window`), and ends at last + gap.
 * With a dynamic gap (`dynamicGap`, a per-row gap column) each row reaches to its time + its gap.
 *
 * `maxDuration` cuts long sessions as eKuiper's event-time SESSIONWINDOW does
 * (internal/topo/node/event_window_trigger.go, getNextSessionWindow): checks happen at the ends of
 * the max-duration periods aligned to the epoch, starting with the end of the period holding the
 * session's first row; when a row arrives after such a check time T and the session began before
 * T - maxDuration, the session ends at T, rows at T or later go to the next session, and that next
 * session is reported as starting at T. Microseconds.
 */
@SerialVersionUID(-4775134978169674607L)
final case class SessionWindowSpec(gap: Long, dynamicGap: Boolean, maxDuration: Option[Long]) extends WindowSpec {
  require(dynamicGap || gap > 0, "gap must be positive")
  require(maxDuration.forall(d => !dynamicGap && d >= gap), "max_duration needs a fixed gap and must be >= gap")
  override def function: String = "sw_session"
  override def hasSignal: Boolean = dynamicGap
  /** A dynamic gap, read as microseconds. */
  override def signalColumn: Option[InputColumn] = Some(
    InputColumn("gap", "a duration literal or an INTERVAL or STRING column (a dynamic gap)")({
      case CalendarIntervalType | _: DayTimeIntervalType | _: StringType => true
      case _ => false
    }, gap => GapMicros(if (gap.dataType.isInstanceOf[StringType]) Cast(gap, CalendarIntervalType) else gap)))

  /**
   * Length of the buckets whose rows surely share a session: shorter than the gap (consecutive rows
   * closer than the gap) and dividing the max duration (no check time inside a bucket).
   */
  def bucket: Long = maxDuration.map(d => gcd(gap, d)).getOrElse(gap)

  private def gcd(a: Long, b: Long): Long = if (b == 0) a else gcd(b, a % b)

  /** End of the max-duration period that holds `t` (the first check time of a session starting at t). */
  def firstCheckAfter(t: Long): Long = {
    val d = maxDuration.get
    t - Math.floorMod(t, d) + d
  }
}

/**
 * IBM Streams SPL timeInterval windows: panes [offset + k·period, offset + k·period + duration). A
 * pane is emitted (kind `final`) when the key's event-time progress (the largest event time seen
 * so far in arrival order) reaches its end; a row that arrives later but before progress reaches
 * end + discardAge updates the pane, which is emitted again whole (kind `update`); after that the
 * pane is gone and rows for it are late. Microseconds.
 */
@SerialVersionUID(-1116261797982886946L)
final case class IntervalWindowSpec(duration: Long, period: Long, discardAge: Long, offset: Long, arrivalOrder: Boolean)
    extends WindowSpec {
  require(duration > 0 && period > 0 && discardAge >= 0, "duration > 0, period > 0, discard_age >= 0")
  override def function: String = "sw_interval"
  /** With an explicit order_by, rows arrive in that order (and may be late); without, in event-time order. */
  override def hasSignal: Boolean = arrivalOrder
  override def signalColumn: Option[InputColumn] = Some(InputColumn.Order)

  private val alignment = Math.floorMod(offset, period)

  /** Starts of the panes holding `t`, ascending. */
  def paneStartsHolding(t: Long): Iterator[Long] = {
    val last = t - Math.floorMod(t - alignment, period)
    val first = last - ((duration - 1) / period) * period
    Iterator.iterate(first)(_ + period).takeWhile(_ <= last).filter(s => t < s + duration)
  }
}

/** Windows over each key's rows in `order_by` (arrival) order: count and data-driven windows. */
sealed trait SequenceWindowSpec extends WindowSpec {
  override def leadingColumn: InputColumn = InputColumn.Order
}

/**
 * Count windows. align = "start" (KX `.qsp.window.count[size; frequency]`, Quix count windows,
 * SPL `count(N)`): windows start at the key's rows 0, step, 2·step, … and hold `size` rows.
 * align = "end" (eKuiper `COUNTWINDOW(size, step)`): at every step-th row, once at least `size`
 * rows have arrived, a window holds the latest `size` rows.
 */
@SerialVersionUID(7506678334228820425L)
final case class CountWindowSpec(size: Long, step: Long, alignEnd: Boolean = false) extends SequenceWindowSpec {
  require(size > 0 && step > 0 && step <= size, "0 < step <= size")
  override def function: String = "sw_count"
}

/** KX `.qsp.window.global` with a splitting trigger: a new window starts at each row where the predicate holds. */
case object SplitWindowSpec extends SequenceWindowSpec {
  override def function: String = "sw_split"
  override def hasSignal: Boolean = true
  override def signalColumn: Option[InputColumn] = Some(InputColumn.boolean("predicate", "a BOOLEAN column or condition"))
}

/**
 * SPL `delta(attribute, threshold)`: when a row's value minus the value of the current window's
 * oldest row is greater than `threshold`, the window is emitted and the row starts the next one.
 * Values are compared as doubles; timestamps in seconds.
 */
@SerialVersionUID(3241009931115639606L)
final case class DeltaWindowSpec(threshold: Double) extends SequenceWindowSpec {
  require(threshold >= 0, "threshold >= 0")
  override def function: String = "sw_delta"
  override def hasSignal: Boolean = true
  /** The value, read as a double (a timestamp in seconds). */
  override def signalColumn: Option[InputColumn] = Some(
    InputColumn("column", "a numeric or timestamp column")(t => t.isInstanceOf[NumericType] || InputColumn.isTimestamp(t),
      value => value.dataType match {
        case t if InputColumn.isTimestamp(t) => EpochSeconds(value)
        case DoubleType => value
        case _ => Cast(value, DoubleType)
      }))
}

/** SPL `punct()`: a row whose marker column is true closes the current window and is no member of any. */
case object PunctuationWindowSpec extends SequenceWindowSpec {
  override def function: String = "sw_punctuation"
  override def hasSignal: Boolean = true
  override def signalColumn: Option[InputColumn] = Some(InputColumn.boolean("column", "a BOOLEAN marker column"))
}

/**
 * KX `.qsp.window.global` with a user's trigger (Scala): like [[SplitWindowSpec]], but a stateful
 * function decides, row by row, where a new window starts. Compared by identity of the trigger.
 */
@SerialVersionUID(2911593202687400188L)
final case class TriggerSplitWindowSpec(trigger: streamwin.api.SplitTrigger[Any]) extends SequenceWindowSpec {
  override def function: String = "sw_split"
  override def hasSignal: Boolean = true
  override def toString: String = s"TriggerSplitWindowSpec(${trigger.getClass.getName})"
}
