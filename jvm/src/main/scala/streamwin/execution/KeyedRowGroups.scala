package streamwin.execution

import org.apache.spark.TaskContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, RowOrdering, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.{GroupedIterator, LeafExecNode, SortExec, SparkPlan}
import org.apache.spark.sql.streamwin.TaskMemoryUser
import org.apache.spark.unsafe.Platform

import streamwin.engine.RowBag

/**
 * A stream task's rows of windows fed rows, grouped by key, each key's rows in `order`: what Spark's sort
 * by (key, order) gives, for less. Each key's rows arrive as one run in order per map task (a key read
 * from one Kafka partition or file comes in order), so the rows are kept per key as they come, in pages
 * of execution memory of the task, and only a key whose rows did not come in order is sorted (stably,
 * so ties keep their arrival order, as Spark's sort keeps them).
 *
 * The pages are reserved from Spark's task memory manager. When it grants less than asked, or past
 * `spark.streamwin.buffer.memoryBytes` if set, the rows kept so far and the rest go to Spark's own
 * external sort by (key, order) instead ([[fallback]], a `SortExec`'s sorter), which spills: a hot key
 * or a large micro-batch never needs to fit in memory.
 *
 * @param fallback the sort by (key, order) of the same rows, made on the driver
 */
private[execution] final class KeyedRowGroups(input: Iterator[InternalRow], keys: Seq[Attribute], order: Attribute,
    output: Seq[Attribute], fallback: SortExec) {
  import KeyedRowGroups._

  private val task = TaskContext.get()
  private val toUnsafe = UnsafeProjection.create(output, output)
  private val keyOf = UnsafeProjection.create(keys, output)
  private val inOrder = RowOrdering.create(Seq(SortOrder(order, Ascending)), output)
  private val cap = RowBag.configuredMemoryBytes().getOrElse(Long.MaxValue)
  private val memory = new TaskMemoryUser(task) {
    // The pages are read until the task's last key is visited: nothing can be written out meanwhile.
    override protected def spillAll(): Unit = ()
  }
  private var reserved = 0L
  private var used = 0L

  private val pages = new java.util.ArrayList[Array[Byte]]()
  private var page: Array[Byte] = null
  private var pageOffset = 0
  private val byKey = new java.util.LinkedHashMap[UnsafeRow, KeyRows]()
  private val viewA = new UnsafeRow(output.length)
  private val viewB = new UnsafeRow(output.length)
  // The row being kept when memory ran short.
  private var pending: UnsafeRow = null

  task.addTaskCompletionListener[Unit](_ => freeAll())

  /** True when memory ran short and Spark's sort took the rows. */
  private[execution] var sortedBySpark = false

  /** The keys of the task, each with its rows in order. */
  val groups: Iterator[(InternalRow, Iterator[InternalRow])] = if (keep()) kept() else sorted()

  /** Keeps every row of the input; false when memory ran short (what was kept stays for [[sorted]]). */
  private def keep(): Boolean = {
    var last: KeyRows = null
    while (input.hasNext) {
      val row = unsafe(input.next())
      val key = keyOf(row)
      val rows = if (last != null && last.key == key) last else {
        var found = byKey.get(key)
        if (found == null) {
          if (!account(KeyBytes)) { pending = row; return false }
          found = new KeyRows(key.copy())
          byKey.put(found.key, found)
        }
        found
      }
      val size = row.getSizeInBytes
      val newPage = if (page == null || pageOffset + 4 + size > page.length) pageLength(size) else 0
      if (!account(RowBytes + newPage)) { pending = row; return false }
      val address = append(row, size)
      if (rows.inOrder && rows.count > 0 && inOrder.compare(at(rows.last, viewA), row) > 0) rows.inOrder = false
      rows.add(address)
      last = rows
    }
    true
  }

  private def kept(): Iterator[(InternalRow, Iterator[InternalRow])] = {
    val entries = byKey.values().iterator()
    new Iterator[(InternalRow, Iterator[InternalRow])] {
      override def hasNext: Boolean = entries.hasNext || { freeAll(); false }
      override def next(): (InternalRow, Iterator[InternalRow]) = {
        val rows = entries.next()
        if (!rows.inOrder) rows.sortBy((a, b) => inOrder.compare(at(a, viewA), at(b, viewB)))
        (rows.key, rows.iterator(viewA))
      }
    }
  }

  /** Spark's external sort of everything: the rows kept so far, the row that did not fit and the rest. */
  private def sorted(): Iterator[(InternalRow, Iterator[InternalRow])] = {
    // The sorter takes its memory from the same manager: the pages' is given back first (they are garbage
    // once copied into the sorter).
    memory.release(reserved)
    reserved = 0L
    sortedBySpark = true
    val sorter = fallback.createSorter()
    byKey.values().forEach(rows => rows.iterator(viewA).foreach(r => sorter.insertRow(r.asInstanceOf[UnsafeRow])))
    byKey.clear()
    freeAll()
    sorter.insertRow(pending)
    pending = null
    while (input.hasNext) sorter.insertRow(unsafe(input.next()))
    GroupedIterator(sorter.sort(), keys, output)
  }

  // (A shuffle's rows are unsafe rows already.)
  private def unsafe(row: InternalRow): UnsafeRow = row match {
    case u: UnsafeRow => u
    case other => toUnsafe(other)
  }

  /** Reserves memory for `bytes` more (asking a step ahead); false when the manager or the cap grants less. */
  private def account(bytes: Long): Boolean = {
    if (used + bytes > cap) return false
    if (used + bytes > reserved) {
      val asked = used + bytes + ReserveStep - reserved
      reserved += memory.reserve(asked)
      if (used + bytes > reserved) return false
    }
    used += bytes
    true
  }

  /** Copies the row into the pages, after its size; returns its address (page, offset). */
  private def append(row: UnsafeRow, size: Int): Long = {
    if (page == null || pageOffset + 4 + size > page.length) {
      page = new Array[Byte](pageLength(size))
      pages.add(page)
      pageOffset = 0
    }
    Platform.putInt(page, Platform.BYTE_ARRAY_OFFSET + pageOffset, size)
    row.writeToMemory(page, Platform.BYTE_ARRAY_OFFSET + pageOffset + 4)
    val address = (pages.size - 1).toLong << 32 | pageOffset.toLong
    pageOffset += 4 + size
    address
  }

  // Pages grow from small (a micro-batch of a few rows) to MaxPageBytes; a larger row gets a page of its own.
  private def pageLength(size: Int): Int = math.max(4 + size, math.min(MaxPageBytes, MinPageBytes << math.min(pages.size, 8)))

  /** `view` pointed at the row kept at `address`. */
  private def at(address: Long, view: UnsafeRow): UnsafeRow = {
    val p = pages.get((address >>> 32).toInt)
    val offset = Platform.BYTE_ARRAY_OFFSET + (address & 0xFFFFFFFFL)
    view.pointTo(p, offset + 4, Platform.getInt(p, offset))
    view
  }

  /** A key's rows: their addresses in arrival order, and whether they came in order. */
  private final class KeyRows(val key: UnsafeRow) {
    private var addresses = new Array[Long](4)
    var count = 0
    var inOrder = true
    def last: Long = addresses(count - 1)
    def add(address: Long): Unit = {
      if (count == addresses.length) addresses = java.util.Arrays.copyOf(addresses, count * 2)
      addresses(count) = address
      count += 1
    }
    /** Sorts the rows by `compare`, keeping ties in arrival order. */
    def sortBy(compare: (Long, Long) => Int): Unit = {
      val boxed = new Array[java.lang.Long](count)
      var i = 0
      while (i < count) { boxed(i) = addresses(i); i += 1 }
      java.util.Arrays.sort(boxed, (a: java.lang.Long, b: java.lang.Long) => compare(a, b)) // a stable merge sort
      i = 0
      while (i < count) { addresses(i) = boxed(i); i += 1 }
      inOrder = true
    }
    def iterator(view: UnsafeRow): Iterator[InternalRow] = new Iterator[InternalRow] {
      private var i = 0
      override def hasNext: Boolean = i < KeyRows.this.count
      override def next(): InternalRow = { i += 1; at(addresses(i - 1), view) }
    }
  }

  private def freeAll(): Unit = {
    pages.clear()
    page = null
    memory.release(reserved)
    reserved = 0L
    used = 0L
  }
}

private[execution] object KeyedRowGroups {
  private val MinPageBytes = 8 * 1024
  private val MaxPageBytes = 256 * 1024 // below G1's humongous-object threshold on common heap sizes
  private val ReserveStep = 1024L * 1024
  // Memory counted per key and per row besides the row's bytes (the key's entry, a row's address).
  private val KeyBytes = 128L
  private val RowBytes = 8L

  /** Spark's sort by (key, order) of a stream task's rows, the fallback of [[KeyedRowGroups]]. */
  def fallbackSort(keys: Seq[Attribute], order: Attribute, output: Seq[Attribute]): SortExec =
    SortExec((keys :+ order).map(SortOrder(_, Ascending)), global = false, child = RowsOfTask(output))

  /** The rows a [[fallbackSort]] sorts: given to its sorter by the task, never executed as a plan. */
  private[execution] final case class RowsOfTask(output: Seq[Attribute]) extends LeafExecNode {
    override protected def doExecute(): RDD[InternalRow] =
      throw new UnsupportedOperationException("the rows of a stream task are given to its sorter, not executed")
  }
}
