package streamwin

import java.io.{ByteArrayOutputStream, ObjectOutputStream}

/** Test helper: an object's bytes in Java serialization, as an earlier streamwin stored engine state. */
object JavaBytes {
  def of(o: AnyRef): Array[Byte] = {
    val bytes = new ByteArrayOutputStream
    val out = new ObjectOutputStream(bytes)
    try out.writeObject(o) finally out.close()
    bytes.toByteArray
  }
}
