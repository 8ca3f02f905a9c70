package streamwin.engine

import java.io._

/**
 * Which classes the Java-serialized state of a user's split trigger (Scala API) in a checkpoint may
 * name: whoever can write the checkpoint folder must not be able to make an executor build objects of
 * any other class (a deserialization gadget). A class outside the list is refused before it is loaded
 * or built, with a message naming it.
 *
 * @param userPackages   packages of the user's split trigger, whose state may be of its own classes
 * @param jvmFilter      the JVM-wide filter (`jdk.serialFilter`), if one is set: what it refuses stays
 *                       refused (a stream's own filter replaces the JVM-wide one, so this one asks it)
 */
private[engine] final class StoredClassFilter(userPackages: Seq[String],
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
        userPackages.contains(packageName)
    }
}

private[engine] object StoredClassFilter {
  // A trigger's state nests a few levels (collections of tuples of values).
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
          s"${filter.refused}, which streamwin does not read from a split trigger's state; it was not read (a " +
          "checkpoint folder written by something other than streamwin?). Start the query with a new checkpoint location.", e)
    }
  }
}
