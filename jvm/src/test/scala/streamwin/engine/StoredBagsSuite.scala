package streamwin.engine

import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.types.{DataType, LongType}
import org.scalatest.funsuite.AnyFunSuite

import streamwin.MapKeptRows

/**
 * Row bags whose rows a stream keeps as state rows of their own ([[StoredBags]]): against a model of plain
 * lists, through appends, drops, clears and merges across visits, every visit's rows read back equal, and
 * the store holds exactly the rows the bags hold (none lost, none left behind).
 */
class StoredBagsSuite extends AnyFunSuite {
  private val types: Seq[DataType] = Seq(LongType)
  private val toUnsafe = UnsafeProjection.create(types.toArray)
  private def row(x: Long) = toUnsafe(new org.apache.spark.sql.catalyst.expressions.GenericInternalRow(Array[Any](x))).copy()
  private def values(bag: RowBag): Seq[Long] = { val run = bag.rows; try run.map(_.getLong(0)).toVector finally run.close() }
  // A bag as a state row holds it (inline rows, or a range), copied as a store copies it.
  private val rowsType = StoredWindowLayout(None, LongType, Seq("x" -> LongType)).rowsType
  private val toStored = UnsafeProjection.create(Array[DataType](rowsType))
  private def stored(rows: InternalRow): InternalRow =
    if (rows == null) null else toStored(new GenericInternalRow(Array[Any](rows))).getStruct(0, rowsType.length).copy()

  test("random appends, drops, clears and merges across stored visits equal the model; the store holds exactly the bags' rows") {
    for (seed <- 1 to 20) {
      val rnd = new Random(seed)
      val store = new MapKeptRows
      val model = ArrayBuffer.fill(4)(ArrayBuffer[Long]())
      var bags = ArrayBuffer.fill(4)(new RowBag(types))
      // Keys holding few rows keep them inline; from 8 rows on, in the store (and back).
      val inline = if (seed % 2 == 0) 0L else 8L
      var ledger = new StoredBags(store.of("k"), inline)
      var next = 0L
      for (step <- 0 until 300) {
        val i = rnd.nextInt(4)
        rnd.nextInt(10) match {
          case 0 | 1 | 2 | 3 =>
            val n = rnd.nextInt(5)
            (0 until n).foreach { _ => bags(i).append(row(next)); model(i) += next; next += 1 }
          case 4 | 5 =>
            val n = rnd.nextInt(6)
            bags(i).dropFirst(n)
            model(i).remove(0, math.min(n, model(i).size))
          case 6 =>
            bags(i).clear()
            model(i).clear()
          case 7 =>
            val j = (i + 1 + rnd.nextInt(3)) % 4
            bags(i).appendAll(bags(j))
            model(i) ++= model(j)
            model(j).clear()
          case _ =>
            // The visit ends: the bags are written (in a random order), then read back by the next visit.
            val order = rnd.shuffle((0 until 4).toVector)
            ledger.startEncode(bags.iterator)
            val written = order.map(b => b -> stored(ledger.write(bags(b))))
            ledger.finish()
            val held = model.map(_.size).sum
            assert(store.size == (if (held <= inline) 0 else held), s"seed $seed step $step: ${store.size} stored rows")
            val nextId = ledger.nextId
            ledger = new StoredBags(store.of("k"), inline)
            ledger.nextId = nextId
            val restored = ArrayBuffer.fill(4)(new RowBag(types))
            written.foreach { case (b, rows) => ledger.read(restored(b), rows, 1) }
            bags = restored
        }
        (0 until 4).foreach(b => assert(values(bags(b)) == model(b), s"seed $seed step $step bag $b"))
      }
      // The key is forgotten: nothing stays behind.
      ledger.removeAll()
      assert(store.size == 0, s"seed $seed: ${store.size} rows left")
    }
  }

  test("a run taken before a drop or a merge still reads the rows it was taken over") {
    val store = new MapKeptRows
    val ledger = new StoredBags(store.of("k"), 0L)
    val bag = new RowBag(types)
    (0L until 5L).foreach(x => bag.append(row(x)))
    ledger.startEncode(Iterator.single(bag))
    ledger.write(bag)
    ledger.finish()
    (5L until 8L).foreach(x => bag.append(row(x)))
    val run = bag.rows
    bag.dropFirst(6)
    assert(run.map(_.getLong(0)).toVector == (0L until 8L))
    assert(values(bag) == Seq(6L, 7L))
  }
}
