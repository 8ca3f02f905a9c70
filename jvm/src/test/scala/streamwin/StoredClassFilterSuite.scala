package streamwin.engine

import java.io.ByteArrayInputStream

import org.scalatest.funsuite.AnyFunSuite

import streamwin.JavaBytes

/** The class filter of a split trigger's Java-serialized state, next to a JVM-wide `jdk.serialFilter`. */
class StoredClassFilterSuite extends AnyFunSuite {
  // A JVM-wide filter of `jdk.serialFilter`'s pattern (by reflection: the 3.5 suite is compiled for Java 8).
  private def jvmFilter(pattern: String): AnyRef = Class.forName("java.io.ObjectInputFilter$Config")
    .getMethod("createFilter", classOf[String]).invoke(null, pattern)

  private def read(bytes: Array[Byte], jvmFilter: AnyRef): AnyRef = {
    val in = new StoredClassFilter.FilteredInput(new ByteArrayInputStream(bytes),
      new StoredClassFilter(Nil, jvmFilter))
    try in.readFiltered() finally in.close()
  }

  test("what the JVM-wide filter refuses stays refused, by name; what it leaves undecided the stored filter decides") {
    val state = new java.util.TreeMap[String, java.lang.Long]
    state.put("a", java.lang.Long.valueOf(1L))
    assert(read(JavaBytes.of(state), null) == state)
    assert(read(JavaBytes.of(state), jvmFilter("java.util.*")) == state)
    val refused = intercept[IllegalStateException](read(JavaBytes.of(state), jvmFilter("!java.util.TreeMap")))
    assert(refused.getMessage.contains("names class java.util.TreeMap (refused by the JVM's jdk.serialFilter)"), refused.getMessage)
    val limited = intercept[IllegalStateException](read(JavaBytes.of(state), jvmFilter("maxdepth=1")))
    assert(limited.getMessage.contains("the JVM's jdk.serialFilter"), limited.getMessage)
    // Admitted by the JVM-wide filter is not admitted here: the stored filter still refuses a class no state holds.
    val gadget = intercept[IllegalStateException](read(JavaBytes.of(new _root_.gadget.Gadget), jvmFilter("*")))
    assert(gadget.getMessage.contains("names class gadget.Gadget"), gadget.getMessage)
  }

  test("the stream's own limits hold without a JVM-wide filter: nesting depth, and no dynamic proxies") {
    val deep = (1 to 100).foldLeft(new java.util.ArrayList[AnyRef]) { (inner, _) =>
      val outer = new java.util.ArrayList[AnyRef]; outer.add(inner); outer }
    intercept[java.io.InvalidClassException](read(JavaBytes.of(deep), null))
    val shallow = (1 to 10).foldLeft(new java.util.ArrayList[AnyRef]) { (inner, _) =>
      val outer = new java.util.ArrayList[AnyRef]; outer.add(inner); outer }
    assert(read(JavaBytes.of(shallow), null) == shallow)
    val proxy = java.lang.reflect.Proxy.newProxyInstance(getClass.getClassLoader, Array(classOf[Runnable], classOf[java.io.Serializable]),
      new ProxyHandler)
    val refused = intercept[IllegalStateException](read(JavaBytes.of(proxy), null))
    assert(refused.getMessage.contains("names class a proxy of java.lang.Runnable"), refused.getMessage)
  }

  test("without the JVM's filter API (a Java 8 before 8u121) the class list still refuses, before building") {
    def readWithoutApi(bytes: Array[Byte]): AnyRef = {
      val in = new StoredClassFilter.FilteredInput(new ByteArrayInputStream(bytes), new StoredClassFilter(Nil, null),
        filterApi = None)
      try in.readFiltered() finally in.close()
    }
    val state = new java.util.TreeMap[String, java.lang.Long]
    state.put("a", java.lang.Long.valueOf(1L))
    assert(readWithoutApi(JavaBytes.of(state)) == state)
    val gadget = intercept[IllegalStateException](readWithoutApi(JavaBytes.of(new _root_.gadget.Gadget)))
    assert(gadget.getMessage.contains("names class gadget.Gadget"), gadget.getMessage)
    assert(!_root_.gadget.Gadget.built, "the refused class was built")
  }

  test("the JVM's filter API is found by reflection on this JVM") {
    assert(StoredClassFilter.JvmFilterApi.nonEmpty)
  }
}

private class ProxyHandler extends java.lang.reflect.InvocationHandler with Serializable {
  override def invoke(proxy: AnyRef, method: java.lang.reflect.Method, args: Array[AnyRef]): AnyRef = null
}
