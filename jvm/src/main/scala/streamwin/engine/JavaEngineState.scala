package streamwin.engine

import java.io._
import java.util.IdentityHashMap

/**
 * Which classes a Java-serialized stream in a checkpoint may name: whoever can write the checkpoint
 * folder must not be able to make an executor build objects of any other class (a deserialization
 * gadget). A class outside the list is refused before it is loaded or built, with a message naming it.
 *
 * @param userPackages   packages of a user's split trigger, whose state may be of its own classes
 * @param engineClasses  also admit what an engine stored by an earlier streamwin holds: streamwin's
 *                       classes, Spark's rows and types, and the buffers of Spark's aggregates
 * @param jvmFilter      the JVM-wide filter (`jdk.serialFilter`), if one is set: what it refuses stays
 *                       refused (a stream's own filter replaces the JVM-wide one, so this one asks it)
 */
private[engine] final class StoredClassFilter(userPackages: Seq[String], engineClasses: Boolean,
    jvmFilter: ObjectInputFilter = ObjectInputFilter.Config.getSerialFilter) extends ObjectInputFilter {
  import StoredClassFilter._

  override def checkInput(info: ObjectInputFilter.FilterInfo): ObjectInputFilter.Status = {
    if (info.depth > MaxDepth) return ObjectInputFilter.Status.REJECTED
    if (jvmFilter != null && jvmFilter.checkInput(info) == ObjectInputFilter.Status.REJECTED) {
      refused = Option(info.serialClass).map(c => s"${c.getName} (refused by the JVM's jdk.serialFilter)")
        .getOrElse("none (a limit of the JVM's jdk.serialFilter)")
      return ObjectInputFilter.Status.REJECTED
    }
    val cls = info.serialClass
    if (cls == null) ObjectInputFilter.Status.UNDECIDED
    else if (admits(cls)) ObjectInputFilter.Status.ALLOWED
    else {
      refused = cls.getName
      ObjectInputFilter.Status.REJECTED
    }
  }

  /** The last class refused, for the error message. */
  var refused: String = _

  private def admits(cls: Class[_]): Boolean =
    if (cls.isArray) admits(cls.getComponentType)
    else if (cls.isPrimitive) true
    else {
      val name = cls.getName
      val packageName = Option(cls.getPackageName).getOrElse("")
      ValueClasses.contains(name) || ValuePrefixes.exists(name.startsWith) ||
        ScalaValues.exists(name.startsWith) && !ScalaRefused.exists(name.startsWith) ||
        userPackages.contains(packageName) ||
        engineClasses && (EngineClasses.contains(name) || EnginePrefixes.exists(name.startsWith))
    }
}

private[engine] object StoredClassFilter {
  // Engine state nests a few levels (engine, state, maps, windows, contents, rows, values).
  private val MaxDepth = 64

  private val ValueClasses = Set(
    "java.lang.Number", "java.lang.Long", "java.lang.Integer", "java.lang.Double", "java.lang.Float", "java.lang.Short",
    "java.lang.Byte", "java.lang.Boolean", "java.lang.Character", "java.lang.String", "java.lang.Enum",
    "java.math.BigDecimal", "java.math.BigInteger", "java.math.MathContext", "java.math.RoundingMode",
    "java.util.Date", "java.sql.Date", "java.sql.Timestamp",
    // Collections a split trigger's state may use (List.of & co. are written as CollSer).
    "java.util.ArrayList", "java.util.LinkedList", "java.util.ArrayDeque", "java.util.HashMap", "java.util.LinkedHashMap",
    "java.util.TreeMap", "java.util.HashSet", "java.util.LinkedHashSet", "java.util.TreeSet", "java.util.CollSer",
    // (Their readObject checks the size of the array it is about to make, by its element class.)
    "java.lang.Object", "java.util.Map$Entry",
    // Spark's external rows (a trigger's state may keep the row it was given) and their schema.
    "org.apache.spark.sql.Row", "org.apache.spark.sql.catalyst.expressions.GenericRow",
    "org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema")
  private val ValuePrefixes = Seq("java.time.", "org.apache.spark.sql.types.")

  private val ScalaValues = Seq("scala.Option", "scala.Some", "scala.None$", "scala.Tuple", "scala.math.BigDecimal",
    "scala.math.BigInt", "scala.math.ScalaNumber", "scala.runtime.ModuleSerializationProxy", "scala.collection.generic.DefaultSerializationProxy",
    "scala.collection.generic.SerializeEnd$", "scala.collection.IterableFactory$", "scala.collection.MapFactory$",
    "scala.collection.SortedMapFactory$", "scala.collection.EvidenceIterableFactory$",
    "scala.collection.SpecificIterableFactory", "scala.collection.immutable.", "scala.collection.mutable.",
    "scala.math.Ordering$", "scala.runtime.Boxed")
  // Lazily evaluated collections hold functions: never data.
  private val ScalaRefused = Seq("scala.collection.immutable.LazyList", "scala.collection.immutable.Stream",
    "scala.collection.immutable.Stream$")

  private val EngineClasses = Set(
    "org.apache.spark.sql.catalyst.InternalRow", "org.apache.spark.sql.catalyst.expressions.SpecificInternalRow",
    "org.apache.spark.sql.catalyst.expressions.GenericInternalRow", "org.apache.spark.sql.catalyst.expressions.UnsafeRow",
    "org.apache.spark.sql.catalyst.expressions.JoinedRow", "org.apache.spark.sql.catalyst.util.ArrayData",
    "org.apache.spark.sql.catalyst.util.MapData", "org.apache.spark.sql.catalyst.util.GenericArrayData",
    "org.apache.spark.sql.catalyst.util.ArrayBasedMapData", "org.apache.spark.sql.catalyst.expressions.UnsafeArrayData",
    "org.apache.spark.sql.catalyst.expressions.UnsafeMapData",
    "org.apache.spark.sql.catalyst.util.QuantileSummaries", "org.apache.spark.sql.catalyst.util.QuantileSummaries$Stats")
  private val EnginePrefixes = Seq("streamwin.", "org.apache.spark.unsafe.types.",
    "org.apache.spark.sql.catalyst.expressions.Mutable",
    // Object buffers of Spark's aggregates (percentile, approx_percentile, sketches, histograms).
    "org.apache.spark.sql.catalyst.expressions.aggregate.ApproximatePercentile$PercentileDigest",
    "org.apache.spark.util.collection.OpenHashMap", "org.apache.spark.util.collection.OpenHashSet",
    "org.apache.spark.util.collection.BitSet", "scala.reflect.ClassTag", "scala.reflect.ManifestFactory",
    "org.apache.spark.util.sketch.", "org.apache.spark.sql.util.NumericHistogram")

  /** An object stream that loads classes from the task's class loader (where streamwin.jar is) and filters them. */
  class FilteredInput(bytes: InputStream, filter: StoredClassFilter,
      classes: java.util.HashMap[String, Class[_]] = new java.util.HashMap[String, Class[_]])
      extends ObjectInputStream(bytes) {
    setObjectInputFilter(filter)

    // streamwin.jar (and a user's split trigger) may only be visible to the task's class loader.
    // Looked up once per task (the codec's map): every key's engine names the same classes.
    override protected def resolveClass(desc: ObjectStreamClass): Class[_] = {
      val known = classes.get(desc.getName)
      if (known != null) known
      else {
        val found: Class[_] = try Class.forName(desc.getName, false, Thread.currentThread.getContextClassLoader)
          catch { case _: ClassNotFoundException => super.resolveClass(desc) }
        classes.put(desc.getName, found)
        found
      }
    }

    /** readObject, failing with a message naming the class the filter refused. */
    def readFiltered(): AnyRef = try readObject() catch {
      case e: InvalidClassException if filter.refused != null =>
        throw new IllegalStateException(s"streamwin: this streaming checkpoint's window state names class " +
          s"${filter.refused}, which streamwin does not read from window state; it was not read (a checkpoint folder written by " +
          "something other than streamwin?). Start the query with a new checkpoint location.", e)
    }
  }
}

/**
 * Engines as streamwin stored them before [[StoredEngineFormat]]: Java-serialized, with the wiring
 * written as references to the decoding task's `wiring` objects. Read through [[StoredClassFilter]].
 */
private[engine] final class JavaEngineState(wiring: Seq[AnyRef]) {
  import JavaEngineState.readsAcrossLines
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

  def decode(bytes: Array[Byte], userPackages: Seq[String]): RowWindowEngine = {
    val in = new StoredClassFilter.FilteredInput(new ByteArrayInputStream(bytes),
        new StoredClassFilter(userPackages, engineClasses = true), classes) {
      enableResolveObject(true)
      override protected def resolveObject(obj: AnyRef): AnyRef = obj match {
        case WiringReference(index) => wiring(index)
        case other => other
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
    try in.readFiltered() match {
      case engine: RowWindowEngine => engine
      case other => throw EngineStateCodec.otherVersion(s"found a ${other.getClass.getName}", null)
    } catch {
      // A class whose stored fields differ (InvalidClassException), that is gone, or whose own form
      // changed (a corrupt stream).
      case e @ (_: ObjectStreamException | _: ClassNotFoundException | _: EOFException) =>
        throw EngineStateCodec.otherVersion(e.toString, e)
    } finally in.close()
  }
}

private[engine] object JavaEngineState {
  /** A Java serialization stream begins with 0xACED. */
  def isJavaForm(bytes: Array[Byte]): Boolean = bytes.length >= 2 && bytes(0) == 0xAC.toByte && bytes(1) == 0xED.toByte

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

/** Stands for the wiring object at `index` in an engine stored in the Java form. */
@SerialVersionUID(7158690600090649061L)
private final case class WiringReference(index: Int)
