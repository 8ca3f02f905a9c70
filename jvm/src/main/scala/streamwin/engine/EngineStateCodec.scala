package streamwin.engine

import java.io._
import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import org.apache.spark.sql.types.DataType

/**
 * Turns a per-key engine (its open windows, aggregation buffers, retained rows and progress) into
 * bytes and back, so a streaming host can keep it in Spark's state store between micro-batches and
 * a restarted query continues from its checkpoint.
 *
 * Only state is written, field by field in a fixed layout ([[StoredEngineFormat]]): no class names,
 * no Java serialization. The rows the engine keeps (bags) are not in the bytes: they are state rows of
 * their own in `rows` ([[StoredBags]]), of the key being visited; the bytes hold their ranges. The engine's wiring (its family, policies, aggregate evaluator and output
 * callbacks) is built again by the decoding task (`newEngine`), which then reads the state into it.
 *
 * @param newEngine a fresh engine of this task (same blueprint as the one that wrote the state)
 * @param shape     what the bytes' meaning depends on besides the layout: state written for another
 *                  shape (the query's aggregates or input changed) is refused, not misread
 */
final class EngineStateCodec(newEngine: () => RowWindowEngine, shape: StoredStateShape) {
  /**
   * The engine's state, its bags' new rows put into `rows` and the rows it no longer holds removed from
   * there. Returns the bytes and the (rows put, rows removed).
   */
  def encode(engine: RowWindowEngine, rows: KeptRowStore): Array[Byte] = {
    val op = engine.asInstanceOf[KeyedWindowOperator]
    val bytes = new ByteArrayOutputStream
    val out = new DataOutputStream(bytes)
    StoredEngineFormat.write(op, out, shape.fingerprint, op.bagsIn(rows))
    out.close()
    bytes.toByteArray
  }

  /** The key's state is dropped: the rows it kept in `rows` are removed. */
  def forget(engine: RowWindowEngine, rows: KeptRowStore): Unit =
    engine.asInstanceOf[KeyedWindowOperator].bagsIn(rows).removeAll()

  /** State rows of bags that the engine's encodes and forgets put and removed (since its decode or start). */
  def rowsChanged(engine: RowWindowEngine): (Long, Long) = engine match {
    case op: KeyedWindowOperator if op.storedBags != null => (op.storedBags.rowsWritten, op.storedBags.rowsRemoved)
    case _ => (0L, 0L)
  }

  /** An engine with the state `encode` wrote; its bags read their rows from `rows`, when read. */
  def decode(bytes: Array[Byte], rows: KeptRowStore): RowWindowEngine = {
      val engine = newEngine().asInstanceOf[KeyedWindowOperator]
      val in = new DataInputStream(new ByteArrayInputStream(bytes))
      try StoredEngineFormat.read(engine, in, StoredEngineFormat.userPackages(engine), shape.fingerprint,
        engine.bagsIn(rows))
      catch {
        case _: StoredEngineFormat.OtherShape => throw EngineStateCodec.otherQuery(shape)
        case e @ (_: EOFException | _: StoredEngineFormat.UnknownForm) =>
          throw EngineStateCodec.otherVersion(e.getMessage, e)
        // Bytes cut short or changed after they were written (lengths and counts out of range).
        case e @ (_: IOException | _: IndexOutOfBoundsException | _: NegativeArraySizeException |
                  _: IllegalArgumentException | _: IllegalStateException | _: NoSuchElementException |
                  _: ClassCastException | _: MatchError |
                  _: ClassNotFoundException) =>
          throw EngineStateCodec.otherVersion(s"unreadable window state: $e", e)
      } finally in.close()
      engine
    }

}

private[engine] object EngineStateCodec {
  def otherVersion(cause: String, e: Throwable): IllegalStateException = new IllegalStateException(
    "streamwin: this streaming checkpoint holds window state written by another streamwin version or on " +
      s"another Spark line, which this version cannot read ($cause); start the query with a new " +
      "checkpoint location (the state of open windows cannot be carried over)", e)

  def otherQuery(shape: StoredStateShape): IllegalStateException = new IllegalStateException(
    "streamwin: this streaming checkpoint holds window state written by another query: its windows were " +
      "kept for another window function, other aggregates or other input columns than this query's " +
      s"(${shape.describe}). Restart the query as it was written, or start the changed query with a new " +
      "checkpoint location (as Spark asks when a streaming aggregation's aggregates change)")
}

/**
 * What a stored engine's bytes mean besides their layout: the window function, the types of its
 * aggregation buffer (a groupBy) and of the rows it keeps. Format 2 stores a fingerprint of it, so a
 * query restarted from a checkpoint with other aggregates or input columns is refused instead of
 * reading buffers and rows of other types. The window's arguments (size, gap) and policies are not part
 * of it: as with Spark's own windows, changing them goes on from the state as it is.
 *
 * The fingerprint is part of the stored form: what goes into [[describe]] never changes.
 */
final class StoredStateShape(val function: String, val bufferTypes: Option[Seq[DataType]], val rowTypes: Seq[DataType]) {
  def describe: String = {
    def struct(types: Seq[DataType]) = types.map(_.catalogString).mkString("<", ", ", ">")
    bufferTypes match {
      case Some(buffer) => s"$function in a groupBy, aggregation buffer ${struct(buffer)}, input rows ${struct(rowTypes)}"
      case None => s"$function in a select, input rows ${struct(rowTypes)}"
    }
  }

  /** The first 8 bytes of the SHA-256 of [[describe]]. */
  lazy val fingerprint: Long = java.nio.ByteBuffer.wrap(
    MessageDigest.getInstance("SHA-256").digest(describe.getBytes(StandardCharsets.UTF_8))).getLong
}
