package streamwin.engine

import org.apache.spark.unsafe.types.UTF8String

/** The `kind` field of a window: why this output row exists. */
object WindowKind {
  /** The window closed normally. */
  val Final: UTF8String = UTF8String.fromString("final")
  /** A count or data window still incomplete when the input ended (KX: partial windows at teardown). */
  val Partial: UTF8String = UTF8String.fromString("partial")
  /** A window emitted again because rows arrived after it first closed (SPL timeInterval late re-trigger). */
  val Update: UTF8String = UTF8String.fromString("update")
}
