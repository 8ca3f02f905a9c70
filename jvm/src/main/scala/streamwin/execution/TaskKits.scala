package streamwin.execution

/**
 * Objects a task builds before its first row and that a later task of the same operator can reuse:
 * kept per executor thread (a thread runs one task at a time), by the operator's canonical form, so
 * that the next micro-batch's tasks, planned anew, find them too. A task borrows a kit and gives it
 * back once its output is read; a task that fails keeps it, and the next one builds another.
 */
private[execution] object TaskKits {
  private val MaxPerThread = 16

  private val kits = ThreadLocal.withInitial[java.util.LinkedHashMap[AnyRef, AnyRef]](() =>
    new java.util.LinkedHashMap[AnyRef, AnyRef](16, 0.75f, true) {
      override def removeEldestEntry(eldest: java.util.Map.Entry[AnyRef, AnyRef]): Boolean = size() > MaxPerThread
    })

  /** This thread's kit for `key`, or a new one: not given to another borrower until it is given back. */
  def borrow[K <: AnyRef](key: AnyRef)(make: => K): K = {
    val found = kits.get().remove(key)
    if (found != null) found.asInstanceOf[K] else make
  }

  def giveBack(key: AnyRef, kit: AnyRef): Unit = kits.get().put(key, kit)
}
