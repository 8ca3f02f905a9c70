package streamwin.engine

import java.io.{ByteArrayInputStream, ObjectInputFilter}

import org.scalatest.funsuite.AnyFunSuite

import streamwin.JavaBytes

/** The class filter of a split trigger's Java-serialized state, next to a JVM-wide `jdk.serialFilter`. */
class StoredClassFilterSuite extends AnyFunSuite {
  private def read(bytes: Array[Byte], jvmFilter: ObjectInputFilter): AnyRef = {
    val in = new StoredClassFilter.FilteredInput(new ByteArrayInputStream(bytes),
      new StoredClassFilter(Nil, jvmFilter))
    try in.readFiltered() finally in.close()
  }

  test("what the JVM-wide filter refuses stays refused, by name; what it leaves undecided the stored filter decides") {
    val state = new java.util.TreeMap[String, java.lang.Long](java.util.Map.of("a", java.lang.Long.valueOf(1L)))
    assert(read(JavaBytes.of(state), null) == state)
    assert(read(JavaBytes.of(state), ObjectInputFilter.Config.createFilter("java.util.*")) == state)
    val refused = intercept[IllegalStateException](read(JavaBytes.of(state), ObjectInputFilter.Config.createFilter("!java.util.TreeMap")))
    assert(refused.getMessage.contains("names class java.util.TreeMap (refused by the JVM's jdk.serialFilter)"), refused.getMessage)
    val limited = intercept[IllegalStateException](read(JavaBytes.of(state), ObjectInputFilter.Config.createFilter("maxdepth=1")))
    assert(limited.getMessage.contains("the JVM's jdk.serialFilter"), limited.getMessage)
    // Admitted by the JVM-wide filter is not admitted here: the stored filter still refuses a class no state holds.
    val gadget = intercept[IllegalStateException](read(JavaBytes.of(new _root_.gadget.Gadget), ObjectInputFilter.Config.createFilter("*")))
    assert(gadget.getMessage.contains("names class gadget.Gadget"), gadget.getMessage)
  }
}
