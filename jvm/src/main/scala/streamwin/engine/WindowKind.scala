package streamwin.engine

import org.apache.spark.unsafe.types.UTF8String

/** The `kind` field of a window: why this output row exists. */
object WindowKind {
  /** The window closed normally. */
  val Final: UTF8String = UTF8String.fromString("final")
  /** A count or data window still incomplete when the input ended (KX: partial windows at teardown), or rows flushed by a count trigger. */
  val Partial: UTF8String = UTF8String.fromString("partial")
  /** A window's aggregate so far, after a row entered it (emit="update", Quix current()), or re-triggered by late rows (SPL timeInterval). */
  val Update: UTF8String = UTF8String.fromString("update")
  /** Rows that arrived after their window closed, passed through instead of dropped (KX passthrough). */
  val Late: UTF8String = UTF8String.fromString("late")
}
