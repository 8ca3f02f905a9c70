package streamwin

import org.scalatest.funsuite.AnyFunSuite

import streamwin.engine.RingQueue

/** The queue count windows and slices keep their order values and slice times in, against a reference model. */
class RingQueueSuite extends AnyFunSuite {
  test("appends and removals at both ends, across wrap-around and growth, as a list would do them") {
    val random = new scala.util.Random(7)
    val queue = new RingQueue[Any](4)
    var model = Vector.empty[Any]
    for (step <- 0 until 20000) {
      random.nextInt(10) match {
        case 0 | 1 | 2 | 3 | 4 =>
          // Nulls too: an order_by value may be null.
          val item: Any = if (random.nextInt(8) == 0) null else step.toLong
          queue.append(item)
          model :+= item
        case 5 | 6 if model.nonEmpty => assert(queue.removeHead() == model.head); model = model.tail
        case 7 if model.nonEmpty => assert(queue.removeLast() == model.last); model = model.init
        case 8 if random.nextInt(200) == 0 => queue.clear(); model = Vector.empty
        case _ =>
      }
      assert(queue.size == model.size && queue.isEmpty == model.isEmpty && queue.nonEmpty == model.nonEmpty)
      if (model.nonEmpty) assert(queue.head == model.head && queue.last == model.last)
      if (step % 97 == 0) {
        assert(queue.iterator.toVector == model)
        assert(queue.toArray.toVector == model)
        val seen = Vector.newBuilder[Any]
        queue.foreach(seen += _)
        assert(seen.result() == model)
      }
    }
  }

  test("an empty queue has no head or last") {
    val queue = new RingQueue[Long]()
    intercept[NoSuchElementException](queue.head)
    intercept[NoSuchElementException](queue.last)
    intercept[NoSuchElementException](queue.removeHead())
    intercept[NoSuchElementException](queue.iterator.next())
  }
}
