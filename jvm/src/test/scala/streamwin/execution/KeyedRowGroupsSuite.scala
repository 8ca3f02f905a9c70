package streamwin.execution

import scala.util.Random

import org.apache.spark.sql.streamwin.TaskMemoryProbe
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import streamwin.engine.RowBag

/** A stream task's grouping of rows by key in arrival order, in place of Spark's sort, inside real Spark tasks. */
class KeyedRowGroupsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var sparkStarted = false
  private lazy val spark = {
    sparkStarted = true
    SparkSession.builder().master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
  }
  override def afterAll(): Unit = if (sparkStarted) spark.stop()

  private val k = AttributeReference("k", StringType)()
  private val order = AttributeReference("o", LongType, nullable = true)()
  private val v = AttributeReference("v", IntegerType)()
  private val output = Seq(k, order, v)

  /** Groups `data` (key, order, value) in one task; returns each key's values in the order given, Spark's sort used, memory left. */
  private def group(data: Seq[(String, java.lang.Long, Int)], cap: Option[String]): (Seq[(String, Seq[Int])], Boolean, Long) = {
    val sc = spark.sparkContext
    val (key, o, columns) = (k, order, output) // the closure takes these, not the suite
    val sort = KeyedRowGroups.fallbackSort(Seq(key), o, columns)
    cap.foreach(sc.setLocalProperty(RowBag.MemoryBytesConf, _))
    try sc.parallelize(Seq(0), 1).mapPartitions { _ =>
      val toRow = UnsafeProjection.create(Array[DataType](StringType, LongType, IntegerType))
      // One row object reused for every row, as a shuffle's reader does.
      val input = data.iterator.map { case (name, time, value) =>
        toRow(new GenericInternalRow(Array[Any](UTF8String.fromString(name), time, value)))
      }
      val grouping = new KeyedRowGroups(input, Seq(key), o, columns, sort)
      val groups = grouping.groups.map { case (name, rows) => name.getUTF8String(0).toString -> rows.map(_.getInt(2)).toVector }.toVector
      Iterator((groups, grouping.sortedBySpark, TaskMemoryProbe.heldByTask()))
    }.collect().head finally sc.setLocalProperty(RowBag.MemoryBytesConf, null)
  }

  test("rows grouped by key in order: keys that came in order as they came, the others sorted keeping ties; Spark's sort when memory is short") {
    val rnd = new Random(7)
    // Five keys interleaved; k3's orders (with ties and nulls) come out of order, the others in order with ties.
    val data = (0 until 20000).map { i =>
      val key = s"k${rnd.nextInt(5)}"
      val o: java.lang.Long = if (key != "k3") (i / 3).toLong else if (rnd.nextInt(20) == 0) null else rnd.nextInt(300).toLong
      (key, o, i)
    }
    // Nulls first, as Spark's ascending sort; a stable sort keeps ties in arrival order.
    val expected = data.groupBy(_._1).map { case (key, rows) =>
      key -> rows.sortBy(r => if (r._2 == null) Long.MinValue else r._2.longValue).map(_._3)
    }
    val (kept, sortedKept, memoryKept) = group(data, None)
    assert(!sortedKept)
    assert(kept.map(_._1) == kept.map(_._1).distinct && kept.toMap == expected)
    assert(memoryKept == 0L)
    // A 64 KiB cap: the first rows are kept, then Spark's external sort takes them and the rest.
    val (sorted, sortedBySpark, memorySorted) = group(data, Some("64k"))
    assert(sortedBySpark)
    assert(sorted.map(_._1) == expected.keys.toSeq.sorted && sorted.toMap == expected)
    assert(memorySorted == 0L)
    // No rows: no keys.
    assert(group(Nil, None)._1.isEmpty)
  }
}
