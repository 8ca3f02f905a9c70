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
  import EngineStateCodec.sameForm
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
      // A class without a declared serialVersionUID (Spark's InternalRow, for one) gets one computed
      // from its methods, which differ between Spark lines: a checkpoint written on Spark 4.0 would
      // not be read on 4.3 although the class stores the same fields. Same fields, same form: read
      // it with the local class. A class whose fields changed still fails (InvalidClassException).
      override protected def readClassDescriptor(): ObjectStreamClass = {
        val written = super.readClassDescriptor()
        val local = try Option(ObjectStreamClass.lookup(resolveClass(written))) catch {
          case _: ClassNotFoundException => None
        }
        local.filter(l => l.getSerialVersionUID != written.getSerialVersionUID && sameForm(l, written))
          .getOrElse(written)
      }
    }
    def otherVersion(cause: String, e: Throwable) = new IllegalStateException(
      "streamwin: this streaming checkpoint holds window state written by another streamwin version, " +
        s"whose window engine this version cannot read ($cause); start the query with a new " +
        "checkpoint location (the state of open windows cannot be carried over)", e)
    try in.readObject() match {
      case engine: RowWindowEngine => engine
      case other => throw otherVersion(s"found a ${other.getClass.getName}", null)
    } catch {
      // State written by an earlier streamwin whose engine classes differ (Engine v2 replaced them).
      case e @ (_: InvalidClassException | _: ClassNotFoundException) => throw otherVersion(e.getMessage, e)
    } finally in.close()
  }
}

private object EngineStateCodec {
  /** Whether two descriptors of one class write the same fields (name and type), so one reads the other's bytes. */
  def sameForm(local: ObjectStreamClass, written: ObjectStreamClass): Boolean = {
    def form(c: ObjectStreamClass) = c.getFields.toSeq.map(f => (f.getName, f.getTypeCode, f.getTypeString))
    !local.forClass.isArray && !local.forClass.isEnum && form(local) == form(written)
  }
}

/** Stands for the wiring object at `index` in an encoded engine. */
private final case class WiringReference(index: Int)
