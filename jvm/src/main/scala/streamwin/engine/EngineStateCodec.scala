package streamwin.engine

import java.io._
import java.util.IdentityHashMap

/**
 * Turns a per-key engine (its open windows, aggregation buffers, retained rows and progress) into
 * bytes and back, so a streaming host can keep it in Spark's state store between micro-batches and
 * a restarted query continues from its checkpoint. Only state is written: the engine's wiring (the
 * aggregate evaluator and the callbacks that build output rows, recreated by every task) is written
 * as a reference to the same object of the decoding task's `wiring`.
 *
 * @param wiring the objects the engine points to that are not state; a decoding codec must list the
 *               equivalent objects in the same order (the host builds both from one blueprint)
 */
final class EngineStateCodec(wiring: Seq[AnyRef]) {
  import EngineStateCodec.readsAcrossLines
  private val wiringIndex = new IdentityHashMap[AnyRef, Integer]
  private val classes = new java.util.HashMap[String, Class[_]]
  wiring.zipWithIndex.foreach { case (w, i) => wiringIndex.put(w, i) }

  def encode(engine: RowWindowEngine): Array[Byte] = {
    val bytes = new ByteArrayOutputStream
    val out = new ObjectOutputStream(bytes) {
      enableReplaceObject(true)
      override protected def replaceObject(obj: AnyRef): AnyRef = {
        val index = wiringIndex.get(obj)
        if (index == null) obj else WiringReference(index)
      }
    }
    out.writeObject(engine)
    out.close()
    bytes.toByteArray
  }

  def decode(bytes: Array[Byte]): RowWindowEngine = {
    val in = new ObjectInputStream(new ByteArrayInputStream(bytes)) {
      enableResolveObject(true)
      override protected def resolveObject(obj: AnyRef): AnyRef = obj match {
        case WiringReference(index) => wiring(index)
        case other => other
      }
      // streamwin.jar (and a user's split trigger) may only be visible to the task's class loader.
      // Looked up once per task: every key's engine names the same classes.
      override protected def resolveClass(desc: ObjectStreamClass): Class[_] = {
        val known = classes.get(desc.getName)
        if (known != null) known
        else {
          val found = try Class.forName(desc.getName, false, Thread.currentThread.getContextClassLoader)
            catch { case _: ClassNotFoundException => super.resolveClass(desc) }
          classes.put(desc.getName, found)
          found
        }
      }
      // A class without a declared serialVersionUID (Spark's InternalRow, UTF8String, Decimal, …) gets
      // one computed from its methods, which differ between Spark lines: state written on Spark 4.0
      // would not be read on 4.3 although the class stores the same fields. Same fields, same form:
      // read it with the local class (an Externalizable one reads its own form; a form that changed
      // fails as a corrupt stream below). A class that pins its number fails on a mismatch: a real change.
      override protected def readClassDescriptor(): ObjectStreamClass = {
        val written = super.readClassDescriptor()
        val local = try Option(ObjectStreamClass.lookup(resolveClass(written))) catch {
          case _: ClassNotFoundException => None
        }
        local.filter(l => l.getSerialVersionUID != written.getSerialVersionUID && readsAcrossLines(l, written))
          .getOrElse(written)
      }
    }
    def otherVersion(cause: String, e: Throwable) = new IllegalStateException(
      "streamwin: this streaming checkpoint holds window state written by another streamwin version or on " +
        s"another Spark line, which this version cannot read ($cause); start the query with a new " +
        "checkpoint location (the state of open windows cannot be carried over)", e)
    try in.readObject() match {
      case engine: RowWindowEngine => engine
      case other => throw otherVersion(s"found a ${other.getClass.getName}", null)
    } catch {
      // A class whose stored fields differ (InvalidClassException), that is gone, or whose own form
      // changed (a corrupt stream).
      case e @ (_: ObjectStreamException | _: ClassNotFoundException | _: EOFException) => throw otherVersion(e.toString, e)
    } finally in.close()
  }
}

private object EngineStateCodec {
  /**
   * Whether bytes written under another computed serialVersionUID of a class read with the local
   * class: it declares none (so the number changed with its methods) and writes the same fields.
   */
  def readsAcrossLines(local: ObjectStreamClass, written: ObjectStreamClass): Boolean = {
    val cls = local.forClass
    def fields(c: ObjectStreamClass) = c.getFields.toSeq.map(f => (f.getName, f.getTypeCode, f.getTypeString))
    !cls.isArray && !cls.isEnum && !pinsSerialVersion(cls) && fields(local) == fields(written)
  }

  private def pinsSerialVersion(cls: Class[_]): Boolean =
    try { cls.getDeclaredField("serialVersionUID"); true } catch { case _: NoSuchFieldException => false }
}

/** Stands for the wiring object at `index` in an encoded engine. */
@SerialVersionUID(7158690600090649061L)
private final case class WiringReference(index: Int)
