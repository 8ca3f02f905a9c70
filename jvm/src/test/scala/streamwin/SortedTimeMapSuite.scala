package streamwin

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import streamwin.engine.SortedTimeMap

/** The map sliding windows keep their rows per timestamp in, against java.util.TreeMap as the reference. */
class SortedTimeMapSuite extends AnyFunSuite {
  private def check(map: SortedTimeMap[String], model: java.util.TreeMap[java.lang.Long, String]): Unit = {
    assert(map.size == model.size)
    assert(map.iterator.toList == model.asScala.toList.map { case (t, v) => (t.longValue, v) })
    if (!model.isEmpty) {
      assert(map.firstTime == model.firstKey)
      assert(map.lastTime == model.lastKey)
    }
  }

  test("appends, out-of-order inserts, lookups, ranges and removals of the oldest, as a TreeMap does them") {
    val random = new scala.util.Random(11)
    // A uniform draw from [0, n) (Scala 2.12's Random, on Spark 3.5, has no nextLong(bound)).
    def below(n: Long): Long = java.lang.Math.floorMod(random.nextLong(), n)
    // Mostly in order with some disorder (a stream's rows), then wide disorder, so that blocks fill, split and empty.
    for ((disorder, steps) <- Seq((3L, 20000), (400L, 20000), (100000L, 5000))) {
      val map = new SortedTimeMap[String]
      val model = new java.util.TreeMap[java.lang.Long, String]
      var clock = 0L
      for (step <- 0 until steps) {
        random.nextInt(12) match {
          case 0 | 1 | 2 | 3 | 4 | 5 =>
            clock += random.nextInt(3)
            val time = clock - (if (random.nextInt(4) == 0) below(disorder) else 0L)
            val made = map.getOrElseUpdate(time, s"v$step")
            val expected = model.computeIfAbsent(time, _ => s"v$step")
            assert(made == expected, s"getOrElseUpdate($time)")
          case 6 =>
            val time = clock - below(disorder + 1)
            map.put(time, s"p$step")
            model.put(time, s"p$step")
          case 7 | 8 if !model.isEmpty =>
            assert(map.removeFirst() == model.pollFirstEntry().getValue)
          case 9 =>
            val from = clock - below(disorder * 2 + 2)
            val to = from + below(disorder * 2 + 2) - 1
            val expected =
              if (from > to) Nil else model.subMap(from, true, to, true).asScala.toList.map { case (t, v) => (t.longValue, v) }
            assert(map.range(from, to).toList == expected, s"range($from, $to)")
            assert(map.valuesIn(from, to).toList == expected.map(_._2))
          case 10 =>
            val time = clock - below(disorder + 1)
            assert(map.get(time) == model.get(time))
          case _ =>
            if (random.nextInt(2000) == 0) { map.clear(); model.clear() }
        }
        if (step % 97 == 0) check(map, model)
      }
      check(map, model)
      val seen = scala.collection.mutable.ArrayBuffer.empty[String]
      map.foreachValue(seen += _)
      assert(seen.toList == model.values.asScala.toList)
    }
  }

  test("an empty map has no first or last time and reads empty") {
    val map = new SortedTimeMap[String]
    assert(map.isEmpty && map.get(5L) == null && map.range(Long.MinValue, Long.MaxValue).isEmpty && map.iterator.isEmpty)
    intercept[NoSuchElementException](map.firstTime)
    intercept[NoSuchElementException](map.removeFirst())
    map.put(Long.MinValue, "min")
    map.put(Long.MaxValue, "max")
    assert(map.range(Long.MinValue, Long.MaxValue).toList == List((Long.MinValue, "min"), (Long.MaxValue, "max")))
  }
}
