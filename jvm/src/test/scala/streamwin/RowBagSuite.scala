package streamwin

import java.io.{ByteArrayInputStream, File}

import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import streamwin.engine.{MemoryBudget, RowBag, RowRun}

/** RowBag against a plain in-memory model: snapshots, eviction, merges, spilling, file cleanup, serialization. */
class RowBagSuite extends AnyFunSuite with BeforeAndAfterAll {
  import RowBagSuite._

  private var sparkStarted = false
  private lazy val spark = {
    sparkStarted = true
    SparkSession.builder().master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
  }
  override def afterAll(): Unit = if (sparkStarted) spark.stop()

  private def usedHeap(): Long = {
    val rt = Runtime.getRuntime
    var i = 0
    while (i < 3) { System.gc(); Thread.sleep(50); i += 1 }
    rt.totalMemory() - rt.freeMemory()
  }

  for ((limit, label) <- Seq(1024L -> "1 KiB", 4096L -> "4 KiB", (64L << 20) -> "64 MiB")) {
    test(s"random operations equal the model, with runs consumed later (budget $label)") {
      var spills = 0L
      for (seed <- 1 to 6) {
        val result = RowBag.withThreadBudget(limit) {
          val r = fuzz(seed * 31L + limit, 2500)
          assert(RowBag.budget.openSpillFiles == 0, "spill files left after every run is closed and every bag cleared")
          assert(RowBag.budget.memoryUsed == 0L)
          r
        }
        if (limit < 64L * 1024) assert(result.spills >= 3, s"seed $seed: the tiny budget should spill")
        else assert(result.spills == 0L, "a bag within its budget never touches disk")
        assert(result.files.forall(f => !new File(f).exists()), "a spill file is still on disk")
        spills += result.spills
      }
      info(s"$spills spills")
    }
  }

  test("random operations inside Spark tasks: the conf is read, spills go through the block manager (compressed)") {
    val sc = spark.sparkContext
    sc.setLocalProperty(RowBag.MemoryBytesConf, "2k")
    val results = try {
      sc.parallelize(0 until 2, 2).mapPartitionsWithIndex { (i, _) =>
        val r = fuzz(1000L + i, 2000)
        val b = RowBag.budget
        Iterator((b.limitBytes, r.spills, RowBag.spillCount, RowBag.spilledBytes, b.openSpillFiles, r.files))
      }.collect()
    } finally sc.setLocalProperty(RowBag.MemoryBytesConf, null)
    // Without the conf a task's bags have no cap of their own: Spark's task memory manager sizes them.
    assert(sc.parallelize(0 until 1, 1).map(_ => RowBag.budget.limitBytes).collect().toSeq == Seq(Long.MaxValue))
    for ((limitBytes, spills, spillCount, spilledBytes, open, files) <- results) {
      assert(limitBytes == 2048L)
      assert(spills > 10 && spillCount == spills && spilledBytes > 0L)
      assert(open == 0)
      assert(files.nonEmpty && files.forall(f => new File(f).getName.startsWith("temp_local_")))
      assert(files.forall(f => !new File(f).exists()))
    }
  }

  test("in a task, bags hold execution memory of Spark's task memory manager, which spills them for another consumer") {
    val sc = spark.sparkContext
    val seen = sc.parallelize(0 until 1, 1).mapPartitions { _ =>
      val task = org.apache.spark.TaskContext.get()
      val rnd = new Random(11)
      val bag = new RowBag(types)
      val model = ArrayBuffer[R]()
      for (i <- 0 until 20000) { val r = randomRow(rnd, i); model += r; bag.append(genericRow(r)) }
      val budget = RowBag.budget
      val held = budget.executionMemory
      val pages = budget.memoryUsed
      // Another consumer of the task asks for more execution memory than the executor has: the manager
      // spills the other consumers first, the bags among them.
      val other = new org.apache.spark.sql.streamwin.TaskMemoryUser(task) { override protected def spillAll(): Unit = () }
      val granted = other.reserve(Long.MaxValue / 4)
      val after = (budget.executionMemory, budget.memoryUsed, RowBag.spillCount)
      other.release(granted)
      val rows = readAll(bag.rows)
      // More rows after the spill: pages are reserved again.
      for (i <- 0 until 1000) { val r = randomRow(rnd, 20000 + i); model += r; bag.append(genericRow(r)) }
      val again = budget.executionMemory
      val all = readAll(bag.rows)
      bag.clear()
      Iterator((held, pages, granted, after, rows == model.take(20000), again, all == model, budget.executionMemory))
    }.collect().head
    val (held, pages, granted, (heldAfter, pagesAfter, spills), rowsKept, again, allKept, atEnd) = seen
    assert(pages > 1000000L && held >= pages, s"the pages ($pages bytes) are execution memory of the task ($held)")
    assert(granted > 0L)
    assert(spills >= 1L && pagesAfter == 0L && heldAfter == 0L, s"spilled for the other consumer: $spills, $pagesAfter, $heldAfter")
    assert(rowsKept && allKept, "the spilled rows read back unchanged")
    assert(again > 0L, "pages taken after the spill are reserved again")
    assert(atEnd <= MemoryBudget.ReserveStep * 2, s"cleared bags give the memory back: $atEnd")
  }

  test("task completion deletes the spill files of bags and runs left behind") {
    val sc = spark.sparkContext
    sc.setLocalProperty(RowBag.MemoryBytesConf, "4096")
    val files = try {
      sc.parallelize(0 until 2, 2).mapPartitions { _ =>
        val rnd = new Random(5)
        val bag = new RowBag(types)
        for (i <- 0 until 3000) bag.append(genericRow(randomRow(rnd, i)))
        val run = bag.rows
        run.next() // partly read, never closed; the bag is never cleared
        val paths = RowBag.budget.spillFilePaths
        require(paths.nonEmpty && paths.forall(_.exists()), "the task spilled")
        paths.map(_.getPath).iterator
      }.collect()
    } finally sc.setLocalProperty(RowBag.MemoryBytesConf, null)
    assert(files.nonEmpty)
    assert(files.forall(f => !new File(f).exists()), "spill files left after the task completed")
  }

  test("dropFirst frees whole chunks: their memory and their spill files") {
    RowBag.withThreadBudget(4096L) {
      val budget = RowBag.budget
      val rnd = new Random(3)
      val bag = new RowBag(types)
      val model = ArrayBuffer[R]()
      for (i <- 0 until 5000) { val r = randomRow(rnd, i); model += r; bag.append(genericRow(r)) }
      val filesBefore = budget.openSpillFiles
      assert(filesBefore > 10)
      bag.dropFirst(4990)
      model.remove(0, 4990)
      assert(budget.openSpillFiles <= 2, s"${budget.openSpillFiles} of $filesBefore spill files kept for 10 rows")
      assert(budget.memoryUsed <= 4096L)
      assert(readAll(bag.rows) == model)
    }
    RowBag.withThreadBudget(64L << 20) {
      val budget = RowBag.budget
      val bag = new RowBag(types)
      val rnd = new Random(4)
      for (i <- 0 until 20000) bag.append(genericRow(randomRow(rnd, i)))
      val before = budget.memoryUsed
      bag.dropFirst(19990)
      assert(budget.memoryUsed < before / 4, s"${budget.memoryUsed} bytes kept of $before for 10 rows")
      bag.clear()
      assert(budget.memoryUsed == 0L && budget.spillCount == 0L)
    }
  }

  test("bags and runs dropped without clear() or close() are reclaimed after garbage collection") {
    RowBag.withThreadBudget(4096L) {
      val budget = RowBag.budget
      val rnd = new Random(8)
      def dropped(): Unit = {
        // As a streaming host does: an engine's bags written, then the engine discarded.
        val bag = new RowBag(types)
        for (i <- 0 until 300) bag.append(genericRow(randomRow(rnd, i)))
        val run = bag.rows
        run.next()
        roundTrip(bag)
      }
      for (_ <- 0 until 20) dropped()
      assert(budget.openSpillFiles > 10)
      val keep = new RowBag(types)
      var tries = 0
      while (budget.openSpillFiles > 0 && tries < 20) {
        System.gc()
        Thread.sleep(50)
        keep.append(genericRow(randomRow(rnd, tries))) // a page allocation now and then notices the garbage
        keep.clear()
        tries += 1
      }
      assert(budget.openSpillFiles == 0, "spill files of garbage bags")
      assert(budget.memoryUsed == 0L)
    }
  }

  test("after its budget is closed (task completion), a bag's spilled rows fail cleanly and clear() is safe") {
    var bag: RowBag = null
    var budget: MemoryBudget = null
    val model = ArrayBuffer[R]()
    val rnd = new Random(9)
    RowBag.withThreadBudget(1024L) {
      bag = new RowBag(types)
      for (i <- 0 until 200) { val r = randomRow(rnd, i); model += r; bag.append(genericRow(r)) }
      budget = RowBag.budget
      assert(budget.spillCount > 0L && budget.openSpillFiles > 0)
    }
    assert(budget.isClosed && budget.openSpillFiles == 0 && budget.memoryUsed == 0L)
    intercept[IllegalStateException](readAll(bag.rows))
    bag.dropFirst(5)
    bag.clear()
    assert(bag.isEmpty && budget.memoryUsed == 0L)
  }

  test("the stored form round trip (rows inline in a state row) keeps the rows, spilled or not") {
    for (limit <- Seq(1024L, 64L << 20)) RowBag.withThreadBudget(limit) {
      val rnd = new Random(limit)
      val bag = new RowBag(types)
      val other = new RowBag(types)
      val model = ArrayBuffer[R]()
      val otherModel = ArrayBuffer[R]()
      for (i <- 0 until 700) { val r = randomRow(rnd, i); model += r; bag.append(genericRow(r)) }
      for (i <- 0 until 300) { val r = randomRow(rnd, 1000 + i); otherModel += r; other.append(genericRow(r)) }
      bag.dropFirst(37); model.remove(0, 37)
      bag.appendAll(other); model ++= otherModel
      if (limit < 4096L) assert(RowBag.budget.spillCount > 0L)
      val copy = roundTrip(bag)
      assert(copy.size == model.size.toLong && copy.numFields == 3)
      assert(readAll(copy.rows) == model)
      assert(readAll(bag.rows) == model)
      // The copy takes appends (non-UnsafeRows too: it kept its types) and its budget applies again.
      val extra = randomRow(rnd, 5000)
      copy.append(genericRow(extra))
      assert(readAll(copy.rows) == model :+ extra)
      assert(readAll(roundTrip(new RowBag(types)).rows).isEmpty)
      bag.clear(); copy.clear()
      assert(RowBag.budget.openSpillFiles == 0 && RowBag.budget.memoryUsed == 0L)
    }
  }

  test("appending 2M rows of ~100 bytes under a 16 MiB budget keeps the heap small") {
    RowBag.withThreadBudget(16L << 20) {
      val project = UnsafeProjection.create(types.toArray)
      val text = UTF8String.fromString("x" * 72)
      val input = new GenericInternalRow(3)
      val n = 2000000
      val before = usedHeap()
      val bag = new RowBag(types.length)
      var dataBytes = 0L
      var i = 0
      while (i < n) {
        input.update(0, i.toLong); input.update(1, text); input.update(2, i)
        val row = project(input)
        dataBytes += row.getSizeInBytes
        bag.append(row)
        i += 1
      }
      val growth = usedHeap() - before
      assert(dataBytes > 180L * 1000 * 1000)
      info(s"heap grew by ${growth >> 20} MiB for ${dataBytes >> 20} MiB of rows, ${RowBag.spillCount} spills")
      assert(growth < dataBytes / 5, s"heap grew by $growth bytes for $dataBytes bytes of rows")
      assert(RowBag.budget.memoryUsed <= (16L << 20) && RowBag.spillCount > 0L)
      val run = bag.rows
      var seen = 0L
      var sum = 0L
      while (run.hasNext) { val r = run.next(); sum += r.getLong(0); seen += 1; assert(r.getInt(2) == r.getLong(0).toInt) }
      assert(seen == n.toLong && sum == n.toLong * (n - 1) / 2)
      bag.clear()
      assert(RowBag.budget.openSpillFiles == 0)
      assert(bag.size == 0L) // keeps the bag reachable up to here
    }
  }

  test("an empty bag allocates almost nothing") {
    val n = 1000000
    val before = usedHeap()
    val bags = new Array[RowBag](n)
    var i = 0
    while (i < n) { bags(i) = new RowBag(types); i += 1 }
    val growth = usedHeap() - before
    info(s"${growth / n} bytes per empty bag")
    assert(growth < n.toLong * 80, s"${growth / n} bytes per empty bag")
    assert(bags.forall(b => b.isEmpty && (b.rows eq RowRun.empty)))
  }

  test("argument checks") {
    val bag = new RowBag(2)
    intercept[IllegalArgumentException](bag.append(new GenericInternalRow(2)))
    intercept[IllegalArgumentException](bag.append(UnsafeProjection.create(types.toArray)(genericRow((1L, "a", null)))))
    intercept[IllegalArgumentException](bag.appendAll(bag))
    intercept[IllegalArgumentException](bag.appendAll(new RowBag(3)))
    intercept[IllegalArgumentException](bag.dropFirst(-1))
    intercept[IllegalArgumentException](new RowBag(2, types))
    assert(RowBag.parseBytes("64m") == (64L << 20) && RowBag.parseBytes("4096") == 4096L && RowBag.parseBytes(" 2 KiB") == 2048L)
    intercept[IllegalArgumentException](RowBag.parseBytes("-1"))
  }
}

object RowBagSuite {
  type R = (Long, String, Integer)
  val types: Seq[DataType] = Seq(LongType, StringType, IntegerType)

  def genericRow(r: R): InternalRow =
    new GenericInternalRow(Array[Any](r._1, if (r._2 == null) null else UTF8String.fromString(r._2), r._3))

  def decode(row: InternalRow): R =
    (row.getLong(0), if (row.isNullAt(1)) null else row.getUTF8String(1).toString,
      if (row.isNullAt(2)) null else Int.box(row.getInt(2)))

  /** Mostly small rows, some of several hundred bytes (bigger than the tiny budgets' pages), nulls. */
  def randomRow(rnd: Random, id: Long): R = {
    val s = rnd.nextInt(10) match {
      case 0 => null
      case 1 => rnd.alphanumeric.take(100 + rnd.nextInt(500)).mkString
      case _ => rnd.alphanumeric.take(rnd.nextInt(12)).mkString
    }
    (id, s, if (rnd.nextInt(5) == 0) null else Int.box(rnd.nextInt()))
  }

  def readAll(run: RowRun): Seq[R] = {
    val out = ArrayBuffer[R]()
    while (run.hasNext) out += decode(run.next())
    out.toSeq
  }

  /** The bag written inline as a stream's state row holds it, and read back into a new bag (rows in memory, spilling past the budget). */
  def roundTrip(bag: RowBag): RowBag = {
    val noStore = new streamwin.engine.KeptRowStore {
      override def inlineRows: Long = Long.MaxValue
      override def get(bag: Long, seq: Long) = throw new IllegalStateException("inline rows only")
      override def put(bag: Long, seq: Long, row: org.apache.spark.sql.catalyst.expressions.UnsafeRow): Unit =
        throw new IllegalStateException("inline rows only")
      override def remove(bag: Long, seq: Long): Unit = throw new IllegalStateException("inline rows only")
    }
    val rowsType = streamwin.engine.StoredWindowLayout(None, LongType,
      bag.types.zipWithIndex.map { case (t, i) => s"c$i" -> t }).rowsType
    val writer = new streamwin.engine.StoredBags(noStore, Long.MaxValue)
    writer.startEncode(Iterator.single(bag))
    val written = writer.write(bag)
    val stored = if (written == null) null else org.apache.spark.sql.catalyst.expressions.UnsafeProjection
      .create(Array[DataType](rowsType))(new GenericInternalRow(Array[Any](written))).getStruct(0, rowsType.length).copy()
    val copy = new RowBag(bag.numFields, bag.types)
    new streamwin.engine.StoredBags(noStore, Long.MaxValue).read(copy, stored, bag.numFields)
    copy
  }

  final case class FuzzResult(spills: Long, files: Seq[String])

  private final class Pending(val run: RowRun, val expected: IndexedSeq[R]) {
    var position = 0
  }

  /**
   * Random appends, snapshots, partial reads, evictions, clears and merges over several bags, each checked
   * against a model; runs are consumed at later random points, interleaved with mutations. Leaves every run
   * closed and every bag cleared. Throws on the first difference.
   */
  def fuzz(seed: Long, steps: Int): FuzzResult = {
    val rnd = new Random(seed)
    val budget = RowBag.budget
    val spillsBefore = budget.spillCount
    val project = UnsafeProjection.create(types.toArray)
    val bags = Array.fill(4)(new RowBag(types))
    val models = Array.fill(4)(ArrayBuffer[R]())
    val pending = ArrayBuffer[Pending]()
    val kept = ArrayBuffer[(InternalRow, R)]() // rows handed out earlier: they must stay valid
    val files = scala.collection.mutable.LinkedHashSet[String]()
    var nextId = 0L
    def check(cond: Boolean, what: => String): Unit =
      if (!cond) throw new AssertionError(s"seed $seed: $what")
    def advance(p: Pending, k: Int): Unit = {
      var i = 0
      val got = ArrayBuffer[InternalRow]()
      while (i < k && p.run.hasNext) { got += p.run.next(); i += 1 }
      for ((row, j) <- got.zipWithIndex) {
        val expected = p.expected(p.position + j)
        check(decode(row) == expected, s"run row ${p.position + j}: ${decode(row)} != $expected")
        if (rnd.nextInt(50) == 0) kept += ((row, expected))
      }
      p.position += got.size
      check(p.run.hasNext == (p.position < p.expected.size), s"hasNext at ${p.position} of ${p.expected.size}")
      if (!p.run.hasNext) pending -= p
    }
    for (_ <- 0 until steps) {
      val b = rnd.nextInt(bags.length)
      rnd.nextInt(100) match {
        case x if x < 45 =>
          val r = randomRow(rnd, nextId); nextId += 1
          // Half as UnsafeRows from a reused projection (the bag must copy), half as generic rows.
          bags(b).append(if (rnd.nextBoolean()) project(genericRow(r)) else genericRow(r))
          models(b) += r
        case x if x < 55 =>
          val run = bags(b).rows
          check(run.numRows == models(b).size.toLong, "numRows")
          pending += new Pending(run, models(b).toIndexedSeq)
        case x if x < 70 =>
          if (pending.nonEmpty) advance(pending(rnd.nextInt(pending.size)), 1 + rnd.nextInt(if (rnd.nextBoolean()) 5 else 200))
        case x if x < 73 =>
          if (pending.nonEmpty) { val p = pending(rnd.nextInt(pending.size)); p.run.close(); pending -= p
            check(!p.run.hasNext, "hasNext after close") }
        case x if x < 88 =>
          val size = models(b).size
          val k = if (rnd.nextInt(4) == 0) rnd.nextInt(size + 3) else rnd.nextInt(math.min(size, 10) + 1)
          bags(b).dropFirst(k.toLong)
          models(b).remove(0, math.min(k, size))
        case x if x < 90 =>
          bags(b).clear(); models(b).clear()
        case x if x < 95 =>
          val a = (b + 1 + rnd.nextInt(bags.length - 1)) % bags.length
          bags(b).appendAll(bags(a)); models(b) ++= models(a); models(a).clear()
          check(bags(a).isEmpty && bags(a).size == 0L, "appendAll leaves the other bag empty")
        case _ =>
          check(readAll(bags(b).rows) == models(b), s"bag $b differs from its model")
      }
      for (i <- bags.indices) check(bags(i).size == models(i).size.toLong && bags(i).isEmpty == models(i).isEmpty, s"size of bag $i")
      budget.spillFilePaths.foreach(f => files += f.getPath)
    }
    for (i <- bags.indices) check(readAll(bags(i).rows) == models(i), s"bag $i differs from its model at the end")
    while (pending.nonEmpty) advance(pending.head, Int.MaxValue)
    for ((row, expected) <- kept) check(decode(row) == expected, s"a row handed out earlier changed: ${decode(row)} != $expected")
    bags.foreach(_.clear())
    FuzzResult(budget.spillCount - spillsBefore, files.toSeq)
  }
}
