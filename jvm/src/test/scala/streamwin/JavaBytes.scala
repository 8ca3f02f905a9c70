package streamwin

import java.io.{ByteArrayOutputStream, ObjectOutputStream}

/** Test helper: an object's Java-serialized bytes (the form earlier streamwin versions stored engine state in). */
object JavaBytes {
  def of(o: AnyRef): Array[Byte] = {
    val bytes = new ByteArrayOutputStream
    val out = new ObjectOutputStream(bytes)
    try out.writeObject(o) finally out.close()
    bytes.toByteArray
  }
}
