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

/**
 * Start-aligned count windows (KX count, Quix count windows, SPL count(N)): per key, windows start
 * at the 0th, step-th, 2·step-th … row in arrival order and hold `size` rows.
 */
final case class CountWindowSpec(size: Long, step: Long) extends WindowSpec {
  require(size > 0 && step > 0 && step <= size, "0 < step <= size")
  override def function: String = "sw_count"
}
