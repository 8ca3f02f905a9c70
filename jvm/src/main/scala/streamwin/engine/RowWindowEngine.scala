package streamwin.engine

import org.apache.spark.sql.catalyst.InternalRow

/**
 * A per-key state machine over rows in arrival (`order_by`) order. The host resets it per key,
 * feeds every row of the key with a non-null order, and finishes the key at the end of its input.
 */
abstract class RowWindowEngine extends Serializable {
  // (Read and restored by a stream's window state, WindowStateCodec.)
  private[engine] var emitted = 0L
  private[engine] var peak = 0
  protected[engine] var unwindowed = 0L
  protected[engine] var late = 0L
  protected[engine] var passed = 0L

  def windowsEmitted: Long = emitted
  def peakBuffered: Int = peak
  /** Rows accepted but dropped without ever being in a window (eKuiper: rows before the first full window). */
  def rowsInNoWindow: Long = unwindowed
  /** Rejected rows that were late (their windows were already gone), as opposed to in no window at all. */
  def rowsLate: Long = late
  /** Late rows output with kind `late` (passthrough), as opposed to dropped. */
  def rowsPassedThrough: Long = passed

  def startKey(): Unit

  /**
   * One row of the key. `signal` is the per-row value the family reads (split predicate, delta
   * value, punctuation marker, event time), null when absent. Returns false when the row is not a
   * window member (a punctuation marker, a delta row without a value, a late row), so the host
   * counts it as late or skipped.
   */
  def addRow(order: Any, signal: Any, row: InternalRow): Boolean

  def finishKey(): Unit

  // A streaming host keeps the engine between micro-batches and never finishes a key (a stream has
  // no end); these let it close windows on Spark's watermark or processing time instead.

  /**
   * Event time (µs) has reached `watermark` for the key, whatever its own rows say (Spark's
   * event-time watermark, or processing time for timer windows): windows it passed close.
   */
  def advanceTo(watermark: Long): Unit = ()

  /** Earliest time (µs) at which [[advanceTo]] would output something; Long.MaxValue when never. */
  def nextDeadline: Long = Long.MaxValue

  /**
   * True when the key holds nothing that a later row could need once its time reached `watermark`,
   * so a streaming host may forget the key: a fresh engine advanced to the watermark behaves the same.
   */
  def forgettable(watermark: Long): Boolean = false

  // KX's temporal timeout for idle streams (idle_timeout): the host gives its processing time (µs) and
  // the query's timeout (µs) at each visit of the key, in this order: visitStarts, then the clock's
  // advanceTo, then timeOut, then the key's rows, then visitEnded.

  /** A streaming host's visit of the key begins: what is output from here on ends the key's quiet period. */
  def visitStarts(): Unit = ()

  /** At processing time `now`: when the key has held rows for `timeout` with nothing output, they go out as `partial`. */
  def timeOut(now: Long, timeout: Long): Unit = ()

  /** The visit at `now` ends: what the key output and holds starts its next quiet period. */
  def visitEnded(now: Long): Unit = ()

  /** Processing time (µs) at which the key's held rows time out after `timeout`; Long.MaxValue when never. */
  def idleDeadline(timeout: Long): Long = Long.MaxValue

  protected final def countEmitted(): Unit = emitted += 1
  protected final def held(n: Int): Unit = if (n > peak) peak = n
}
