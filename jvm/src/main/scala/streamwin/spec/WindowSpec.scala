package streamwin.spec

/** What a window function asked for, validated and normalised. Pure data: no Spark types. */
sealed trait WindowSpec extends Serializable {
  /** The SQL name of the function that built this spec (for error messages and plan strings). */
  def function: String
}

/**
 * Aligned event-time windows (tumbling and hopping): windows start at `offset + k * step` for every
 * integer k and last `size`, as [start, end). All values in microseconds. A hopping window whose
 * step exceeds its size leaves gaps that belong to no window.
 */
final case class TimeWindowSpec(function: String, size: Long, step: Long, offset: Long)
    extends WindowSpec {
  require(size > 0 && step > 0, "size and step must be positive")

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

/** Windows over each key's rows in `order_by` (arrival) order: count and data-driven windows. */
sealed trait SequenceWindowSpec extends WindowSpec {
  /** True when the window also reads a per-row signal column (predicate, delta value, marker). */
  def hasSignal: Boolean = false
}

/**
 * Count windows. align = "start" (KX `.qsp.window.count[size; frequency]`, Quix count windows,
 * SPL `count(N)`): windows start at the key's rows 0, step, 2·step, … and hold `size` rows.
 * align = "end" (eKuiper `COUNTWINDOW(size, step)`): at every step-th row, once at least `size`
 * rows have arrived, a window holds the latest `size` rows.
 */
final case class CountWindowSpec(size: Long, step: Long, alignEnd: Boolean = false) extends SequenceWindowSpec {
  require(size > 0 && step > 0 && step <= size, "0 < step <= size")
  override def function: String = "sw_count"
}

/** KX `.qsp.window.global` with a splitting trigger: a new window starts at each row where the predicate holds. */
case object SplitWindowSpec extends SequenceWindowSpec {
  override def function: String = "sw_split"
  override def hasSignal: Boolean = true
}

/**
 * SPL `delta(attribute, threshold)`: when a row's value minus the value of the current window's
 * oldest row is greater than `threshold`, the window is emitted and the row starts the next one.
 * Values are compared as doubles; timestamps in seconds.
 */
final case class DeltaWindowSpec(threshold: Double) extends SequenceWindowSpec {
  require(threshold >= 0, "threshold >= 0")
  override def function: String = "sw_delta"
  override def hasSignal: Boolean = true
}

/** SPL `punct()`: a row whose marker column is true closes the current window and is no member of any. */
case object PunctuationWindowSpec extends SequenceWindowSpec {
  override def function: String = "sw_punctuation"
  override def hasSignal: Boolean = true
}

/**
 * KX `.qsp.window.global` with a user's trigger (Scala): like [[SplitWindowSpec]], but a stateful
 * function decides, row by row, where a new window starts. Compared by identity of the trigger.
 */
final case class TriggerSplitWindowSpec(trigger: streamwin.api.SplitTrigger[Any]) extends SequenceWindowSpec {
  override def function: String = "sw_split"
  override def hasSignal: Boolean = true
  override def toString: String = s"TriggerSplitWindowSpec(${trigger.getClass.getName})"
}
