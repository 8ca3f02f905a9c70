package streamwin.engine

/**
 * A queue on a growable circular array: append and remove at both ends, read both ends, iterate oldest
 * first. Null elements are allowed (an `order_by` value may be null). Scala 2.12 (Spark 3.5) has no
 * `mutable.ArrayDeque`, and `java.util.ArrayDeque` refuses nulls.
 */
final class RingQueue[A](initialCapacity: Int = 16) extends Serializable {
  private var items = new Array[AnyRef](math.max(4, Integer.highestOneBit(math.max(1, initialCapacity - 1)) << 1))
  private var first = 0
  private var used = 0

  def size: Int = used
  def isEmpty: Boolean = used == 0
  def nonEmpty: Boolean = used > 0

  private def slot(i: Int): Int = (first + i) & (items.length - 1)

  def append(item: A): Unit = {
    if (used == items.length) grow()
    items(slot(used)) = item.asInstanceOf[AnyRef]
    used += 1
  }

  def head: A = { if (used == 0) throw new NoSuchElementException("head of an empty queue"); items(first).asInstanceOf[A] }
  def last: A = { if (used == 0) throw new NoSuchElementException("last of an empty queue"); items(slot(used - 1)).asInstanceOf[A] }

  def removeHead(): A = {
    val item = head
    items(first) = null
    first = slot(1)
    used -= 1
    item
  }

  def removeLast(): A = {
    val item = last
    items(slot(used - 1)) = null
    used -= 1
    item
  }

  def clear(): Unit = {
    java.util.Arrays.fill(items, null)
    first = 0
    used = 0
  }

  def iterator: Iterator[A] = new Iterator[A] {
    private var i = 0
    override def hasNext: Boolean = i < used
    override def next(): A = {
      if (i >= used) throw new NoSuchElementException
      i += 1
      items(slot(i - 1)).asInstanceOf[A]
    }
  }

  def foreach(f: A => Unit): Unit = { var i = 0; while (i < used) { f(items(slot(i)).asInstanceOf[A]); i += 1 } }

  def toArray: Array[Any] = { val out = new Array[Any](used); var i = 0; while (i < used) { out(i) = items(slot(i)); i += 1 }; out }

  private def grow(): Unit = {
    val larger = new Array[AnyRef](items.length * 2)
    var i = 0
    while (i < used) { larger(i) = items(slot(i)); i += 1 }
    items = larger
    first = 0
  }
}
