package streamwin.engine

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeRow}
import org.apache.spark.sql.catalyst.util.GenericArrayData

/**
 * Where a stream keeps the rows of a key's row bags (a select's window members, the rows of windows
 * that merge, sliding windows' kept rows): one state row per row, keyed by (bag, seq) under the key
 * being visited. A micro-batch writes only the rows it added and removes only those no window needs
 * any more; a key's record and window rows hold each bag as a reference to its range of rows.
 */
trait KeptRowStore {
  /** How many rows a key keeps inline in its record and window rows before they become state rows of their own ([[StoredBags]]). */
  def inlineRows: Long
  /** The row, or null; valid until the next call. */
  def get(bag: Long, seq: Long): UnsafeRow
  def put(bag: Long, seq: Long, row: UnsafeRow): Unit
  def remove(bag: Long, seq: Long): Unit
}

/**
 * The rows `from` until `until` of bag `id` in a [[KeptRowStore]]: the oldest rows of a [[RowBag]]
 * restored from a stream's state (its newer rows are in memory until the key's state is written).
 */
final class StoredRowRange(val store: KeptRowStore, val id: Long, var from: Long, val until: Long) {
  def length: Long = until - from

  /** The rows now in the range, read one by one as the run is pulled (a copy of each). */
  def run(): RowRun = {
    val (first, end) = (from, until)
    new RowRun {
      private var at = first
      override val numRows: Long = end - first
      override def hasNext: Boolean = at < end
      override def next(): InternalRow = {
        if (at >= end) throw new NoSuchElementException("stored rows read to their end")
        val row = store.get(id, at)
        if (row == null) throw new IllegalStateException(
          s"streamwin: row $at of kept rows $id is missing from the stream's state store (a state store of another query?)")
        at += 1
        row.copy()
      }
      override def close(): Unit = at = end
    }
  }
}

/**
 * The row bags of one key's window state, from its read to its write: the ranges the state held
 * (so rows no bag holds any more are removed) and the key's next bag id.
 *
 * A key whose bags hold more than `inlineRows` rows in all keeps them as state rows: a bag written
 * moves its in-memory rows to the store and keeps only the reference, so rows are written once and
 * stay where they are. A key holding fewer keeps them inline in its record and window rows (read and written
 * at each visit): a few rows cost less there than a state row each, read back at every visit
 * (sliding windows re-aggregate their kept rows after each read). A key moves between the two as
 * its rows grow and shrink; the move's rows are written, or removed, once.
 */
final class StoredBags(store: KeptRowStore, inlineRows: Long) {
  private[engine] var nextId = 0L
  private val loaded = mutable.LongMap.empty[StoredRowRange]
  private val written = new java.util.IdentityHashMap[RowBag, java.lang.Boolean]
  private val live = mutable.LongMap.empty[StoredRowRange]
  // This write keeps the bags' rows inline.
  private var inline = false
  /** State rows put and removed by this key's writes. */
  var rowsWritten = 0L
  var rowsRemoved = 0L

  /** A write of a key whose bags are these begins. */
  def startEncode(bags: Iterator[RowBag]): Unit = {
    var rows = 0L
    while (rows <= inlineRows && bags.hasNext) rows += bags.next().size
    inline = rows <= inlineRows
  }

  /**
   * Restores `bag` (empty, new) from its stored `rows` (a [[StoredWindowLayout.rowsType]] value; null: empty):
   * inline rows are copied into it, stored rows stay in the store until read.
   */
  def read(bag: RowBag, rows: InternalRow, inputWidth: Int): Unit = if (rows != null) {
    if (!rows.isNullAt(0)) {
      val inline = rows.getArray(0)
      var i = 0
      while (i < inline.numElements()) { bag.append(inline.getStruct(i, inputWidth)); i += 1 }
    } else {
      val (id, from, until) = (rows.getLong(1), rows.getLong(2), rows.getLong(3))
      if (from < 0L || until < from || id >= nextId) throw new StoredForm.UnknownForm(
        s"kept rows $id from $from until $until (next id $nextId)")
      if (loaded.contains(id)) throw new StoredForm.UnknownForm(s"kept rows $id held twice")
      loaded(id) = new StoredRowRange(store, id, from, until)
      bag.restoreStored(new StoredRowRange(store, id, from, until))
    }
  }

  /**
   * `bag` as a [[StoredWindowLayout.rowsType]] value (null when empty): its rows (a key holding few), or its
   * range after putting its in-memory rows into the store. (Stored rows of a bag written inline are no longer
   * held: [[finish]] removes them.)
   */
  def write(bag: RowBag): InternalRow = {
    if (written.put(bag, java.lang.Boolean.TRUE) != null)
      throw new IllegalStateException("a row bag held twice in a key's window state")
    if (bag.isEmpty) return null
    if (inline) {
      val rows = new Array[Any](bag.size.toInt)
      val run = bag.rows
      try { var i = 0; while (run.hasNext) { rows(i) = run.next(); i += 1 } } finally run.close()
      // Rows it held in the store are removed by `finish`: the bag keeps them in memory from now on.
      if (bag.storedRows != null) {
        bag.clear()
        rows.foreach(r => bag.append(r.asInstanceOf[InternalRow]))
      }
      return new GenericInternalRow(Array[Any](new GenericArrayData(rows), null, null, null))
    }
    val stored = bag.storedRows
    val (id, from, start) =
      if (stored != null) (stored.id, stored.from, stored.until)
      else { val id = nextId; nextId += 1; (id, 0L, 0L) }
    var seq = start
    val memory = bag.memoryRows
    try memory.foreach { row => store.put(id, seq, row.asInstanceOf[UnsafeRow]); seq += 1 }
    finally memory.close()
    rowsWritten += seq - start
    val range = new StoredRowRange(store, id, from, seq)
    bag.storedAs(range)
    live(id) = new StoredRowRange(store, id, from, seq)
    new GenericInternalRow(Array[Any](null, id, from, seq))
  }

  /** The write is over: rows the state held that no bag holds any more are removed. */
  def finish(): Unit = {
    loaded.foreachValue { range =>
      val keptFrom = live.get(range.id).map(_.from).getOrElse(range.until)
      remove(range.id, range.from, math.min(keptFrom, range.until))
    }
    // What the state holds now (a key written again without a read in between: tests).
    loaded.clear()
    live.foreachValue(range => loaded(range.id) = range)
    written.clear()
    live.clear()
  }

  /** The key is forgotten: every row the state held is removed. */
  def removeAll(): Unit = {
    loaded.foreachValue(range => remove(range.id, range.from, range.until))
    loaded.clear()
  }

  private def remove(id: Long, from: Long, until: Long): Unit = {
    var seq = from
    while (seq < until) { store.remove(id, seq); seq += 1 }
    rowsRemoved += until - from
  }
}
