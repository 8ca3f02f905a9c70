package streamwin.engine

import java.io._

/**
 * Which classes the Java-serialized state of a user's split trigger (Scala API) in a checkpoint may
 * name: whoever can write the checkpoint folder must not be able to make an executor build objects of
 * any other class (a deserialization gadget). A class outside the list is refused before it is built
 * (when [[StoredClassFilter.FilteredInput]] resolves it), with a message naming it.
 *
 * The JVM's serialization filter API (`java.io.ObjectInputFilter`, or `sun.misc.ObjectInputFilter` on
 * Java 8) is reached by reflection, because the Spark 3.5 jar is compiled for Java 8: through it a
 * stream also limits the nesting depth and keeps what the JVM-wide filter refuses refused.
 *
 * @param userPackages   packages of the user's split trigger, whose state may be of its own classes
 * @param jvmFilter      the JVM-wide filter (`jdk.serialFilter`), if one is set: what it refuses stays
 *                       refused (a stream's own filter replaces the JVM-wide one, so this one asks it)
 */
private[engine] final class StoredClassFilter(userPackages: Seq[String],
    jvmFilter: AnyRef = StoredClassFilter.JvmFilterApi.map(_.jvmWideFilter).orNull) {
  import StoredClassFilter._

  /** The last class refused, for the error message. */
  var refused: String = _

  /** Whether a stored state may name `cls`; remembers it as refused if not. */
  def check(cls: Class[_]): Boolean = admits(cls) || { refused = cls.getName; false }

  /** The filter for the JVM's API: depth, then the JVM-wide filter, then this list. */
  private[engine] def checkInput(api: SerialFilterApi, info: AnyRef): AnyRef = {
    if (api.depth(info) > MaxDepth) return api.Rejected
    if (jvmFilter != null && api.check(jvmFilter, info) == api.Rejected) {
      refused = Option(api.serialClass(info)).map(c => s"${c.getName} (refused by the JVM's jdk.serialFilter)")
        .getOrElse("none (a limit of the JVM's jdk.serialFilter)")
      return api.Rejected
    }
    val cls = api.serialClass(info)
    if (cls == null) api.Undecided else if (check(cls)) api.Allowed else api.Rejected
  }

  private def admits(cls: Class[_]): Boolean =
    if (cls.isArray) admits(cls.getComponentType)
    else if (cls.isPrimitive) true
    else {
      val name = cls.getName
      ValueClasses.contains(name) || ValuePrefixes.exists(name.startsWith) ||
        ScalaValues.exists(name.startsWith) && !ScalaRefused.exists(name.startsWith) ||
        userPackages.contains(packageOf(cls))
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

  /** The package a class is declared in ("" for the unnamed package); `Class.getPackageName` is Java 9+. */
  def packageOf(cls: Class[_]): String = {
    val name = cls.getName
    val dot = name.lastIndexOf('.')
    if (dot < 0) "" else name.substring(0, dot)
  }

  /**
   * The JVM's serialization filter interface, by reflection: `java.io.ObjectInputFilter` (Java 9+, set on
   * the stream) or `sun.misc.ObjectInputFilter` (Java 8 from 8u121, set through its `Config`).
   */
  private[engine] final class SerialFilterApi private (packageName: String) {
    private def load(name: String): Class[_] = Class.forName(s"$packageName.ObjectInputFilter$name")
    private val filterInterface = load("")
    private val infoInterface = load("$FilterInfo")
    private val config = load("$Config")
    private val status = load("$Status")
    private val depthMethod = infoInterface.getMethod("depth")
    private val serialClassMethod = infoInterface.getMethod("serialClass")
    private val checkInputMethod = filterInterface.getMethod("checkInput", infoInterface)
    private val setOnStream: (ObjectInputStream, AnyRef) => Unit =
      if (packageName == "java.io") {
        val set = classOf[ObjectInputStream].getMethod("setObjectInputFilter", filterInterface)
        (in, filter) => set.invoke(in, filter)
      } else {
        val set = config.getMethod("setObjectInputFilter", classOf[ObjectInputStream], filterInterface)
        (in, filter) => set.invoke(null, in, filter)
      }
    val Rejected: AnyRef = status.getField("REJECTED").get(null)
    val Allowed: AnyRef = status.getField("ALLOWED").get(null)
    val Undecided: AnyRef = status.getField("UNDECIDED").get(null)

    private val getSerialFilter = config.getMethod("getSerialFilter")
    def jvmWideFilter: AnyRef = getSerialFilter.invoke(null)
    def depth(info: AnyRef): Long = depthMethod.invoke(info).asInstanceOf[java.lang.Long]
    def serialClass(info: AnyRef): Class[_] = serialClassMethod.invoke(info).asInstanceOf[Class[_]]
    def check(filter: AnyRef, info: AnyRef): AnyRef = checkInputMethod.invoke(filter, info)

    /** Sets `filter` as `in`'s filter, as an object of the JVM's interface. */
    def install(in: ObjectInputStream, filter: StoredClassFilter): Unit = {
      val handler = new java.lang.reflect.InvocationHandler {
        override def invoke(proxy: AnyRef, method: java.lang.reflect.Method, args: Array[AnyRef]): AnyRef =
          method.getName match {
            case "checkInput" => filter.checkInput(SerialFilterApi.this, args(0))
            case "hashCode" => Int.box(System.identityHashCode(proxy))
            case "equals" => Boolean.box(proxy eq args(0))
            case "toString" => "streamwin's stored class filter"
            case other => throw new UnsupportedOperationException(other)
          }
      }
      setOnStream(in, java.lang.reflect.Proxy.newProxyInstance(filterInterface.getClassLoader, Array(filterInterface), handler))
    }
  }

  private[engine] object SerialFilterApi {
    private[engine] def load(packageName: String): Option[SerialFilterApi] =
      try Some(new SerialFilterApi(packageName)) catch { case _: ReflectiveOperationException => None }
  }

  /** The JVM's filter API; none on a Java 8 older than 8u121 (the class list still holds, in resolveClass). */
  private[engine] lazy val JvmFilterApi: Option[SerialFilterApi] =
    SerialFilterApi.load("java.io").orElse(SerialFilterApi.load("sun.misc"))

  /** An object stream that loads classes from the task's class loader (where streamwin.jar is) and filters them. */
  class FilteredInput(bytes: InputStream, filter: StoredClassFilter,
      classes: java.util.HashMap[String, Class[_]] = new java.util.HashMap[String, Class[_]],
      filterApi: Option[SerialFilterApi] = JvmFilterApi)
      extends ObjectInputStream(bytes) {
    filterApi.foreach(_.install(this, filter))

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
    } match {
      // Refused here, before any object of it is built (and where the JVM has no filter API at all).
      case cls if !filter.check(cls) => throw new InvalidClassException(cls.getName, "not a class of a split trigger's state")
      case cls => cls
    }

    // A state never holds a dynamic proxy.
    override protected def resolveProxyClass(interfaces: Array[String]): Class[_] = {
      filter.refused = s"a proxy of ${interfaces.mkString(", ")}"
      throw new InvalidClassException(filter.refused, "not a class of a split trigger's state")
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
