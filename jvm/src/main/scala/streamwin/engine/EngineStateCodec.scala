package streamwin.engine

import java.io._

/**
 * Turns a per-key engine (its open windows, aggregation buffers, retained rows and progress) into
 * bytes and back, so a streaming host can keep it in Spark's state store between micro-batches and
 * a restarted query continues from its checkpoint.
 *
 * Only state is written, field by field in a fixed layout ([[StoredEngineFormat]]): no class names,
 * no Java serialization. The engine's wiring (its family, policies, aggregate evaluator and output
 * callbacks) is built again by the decoding task (`newEngine`), which then reads the state into it.
 * Engines stored by earlier streamwin versions as Java-serialized objects are still read, through a
 * filter that admits only the classes such an engine holds ([[JavaEngineState]]).
 *
 * @param wiring    the objects engines point to that are not state, as the Java form referenced them
 * @param newEngine a fresh engine of this task (same blueprint as the one that wrote the state)
 */
final class EngineStateCodec(wiring: Seq[AnyRef], newEngine: () => RowWindowEngine) {
  private val javaForm = new JavaEngineState(wiring)

  def encode(engine: RowWindowEngine): Array[Byte] = {
    val bytes = new ByteArrayOutputStream
    val out = new DataOutputStream(bytes)
    StoredEngineFormat.write(engine.asInstanceOf[KeyedWindowOperator], out)
    out.close()
    bytes.toByteArray
  }

  def decode(bytes: Array[Byte]): RowWindowEngine =
    if (JavaEngineState.isJavaForm(bytes)) javaForm.decode(bytes, StoredEngineFormat.userPackages(newEngine()))
    else {
      val engine = newEngine().asInstanceOf[KeyedWindowOperator]
      val in = new DataInputStream(new ByteArrayInputStream(bytes))
      try StoredEngineFormat.read(engine, in, StoredEngineFormat.userPackages(engine))
      catch {
        case e @ (_: EOFException | _: StoredEngineFormat.UnknownForm) =>
          throw EngineStateCodec.otherVersion(e.getMessage, e)
        // Bytes cut short or changed after they were written (lengths and counts out of range).
        case e @ (_: IOException | _: IndexOutOfBoundsException | _: NegativeArraySizeException |
                  _: IllegalArgumentException | _: NoSuchElementException | _: ClassCastException |
                  _: ClassNotFoundException) =>
          throw EngineStateCodec.otherVersion(s"unreadable window state: $e", e)
      } finally in.close()
      engine
    }

  /** The engine state in the form streamwin wrote before [[StoredEngineFormat]] (tests write it to read it back). */
  private[streamwin] def encodeJava(engine: RowWindowEngine): Array[Byte] = javaForm.encode(engine)

}

private[engine] object EngineStateCodec {
  def otherVersion(cause: String, e: Throwable): IllegalStateException = new IllegalStateException(
    "streamwin: this streaming checkpoint holds window state written by another streamwin version or on " +
      s"another Spark line, which this version cannot read ($cause); start the query with a new " +
      "checkpoint location (the state of open windows cannot be carried over)", e)
}
