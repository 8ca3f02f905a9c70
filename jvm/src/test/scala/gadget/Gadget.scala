package gadget

/**
 * Stands for a deserialization gadget in tests: a class outside streamwin whose `readObject` acts.
 * Reading a checkpoint's window state must never build one.
 */
final class Gadget extends Serializable {
  private def readObject(in: java.io.ObjectInputStream): Unit = {
    in.defaultReadObject()
    Gadget.built = true
  }
}

object Gadget {
  @volatile var built = false
}
