package streamwin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BoundReference, GenericInternalRow, JoinedRow,
  UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.streamwin.StoreLayout
import org.apache.spark.sql.types._

import streamwin.engine.KeptRowStore

/**
 * A stream's state rows for windows fed rows (every window under policies, count and data windows,
 * per-event sliding windows, timer windows, every select form), in the operator's one store, keyed by
 * the grouping columns (or `partition_by`), `bag` and `seq`:
 *
 *  - the key's record (`bag` and `seq` null), `value.record`:
 *    - `deadline`: when the stream's clock (the watermark, or processing time for timer windows) closes
 *      the key's next window (null: never);
 *    - `idle_deadline`: when the key's held rows time out in processing time (`idle_timeout`; null: never);
 *    - `engine`: progress, open windows with their buffers, late groups, and the key's kept rows (a few)
 *      or their ranges, in streamwin's stored layout ([[streamwin.engine.EngineStateCodec]]; a fingerprint
 *      of the query's aggregation buffer and input types refuses a changed query);
 *  - one row per row the key's windows keep once they keep more than [[StoredEngines.InlineRowsConf]]
 *    (a select's members, the rows of sessions under policies, sliding windows' kept rows), `value.row`:
 *    the row's input columns, typed; `bag` says which rows (a window's, or a timestamp's) and `seq` the
 *    row's place in them. A micro-batch puts the rows it added and removes those no window needs any
 *    more ([[streamwin.engine.StoredBags]]).
 *
 * One store, as Spark's own operators keep one: a second store costs every task of every micro-batch
 * its commit, and Spark 4.1-4.3's state reader reads only an operator's `default` store.
 *
 * Not yet a stable form: a later streamwin keeps these windows one state row per window, as it keeps
 * windows fed slices ([[StoredSliceWindows]]), and refuses checkpoints of this form with a message
 * saying what to do.
 */
final class StoredEngines(keys: Seq[Attribute], input: Seq[Attribute]) {
  private val layout = StoredEngines.stores(keys, input).head

  /** A task's reader and writer of the rows (projections are not shared between threads). */
  def access(): Access = new Access

  final class Access {
    private val value = UnsafeProjection.create(layout.valueSchema)
    private val rowKey = UnsafeProjection.create(
      keys.indices.map(i => BoundReference(i, keys(i).dataType, keys(i).nullable)) ++
        Seq(BoundReference(keys.size, LongType, nullable = true), BoundReference(keys.size + 1, LongType, nullable = true)))
    private val groupingOf = UnsafeProjection.create(keys.indices.map(i => BoundReference(i, keys(i).dataType, keys(i).nullable)))
    private val position = new GenericInternalRow(2)
    private val joined = new JoinedRow
    private val rowValue = new GenericInternalRow(2)

    private def keyOf(key: InternalRow, bag: Any, seq: Any): UnsafeRow = {
      position.update(0, bag)
      position.update(1, seq)
      rowKey(joined(key, position))
    }

    /** The key's stored engine, if it has one. */
    def load(store: RowStore, key: UnsafeRow): Option[Array[Byte]] =
      Option(store.get(keyOf(key, null, null))).map(_.getStruct(0, 3).getBinary(2))

    /** Stores the engine with its deadlines (Long.MaxValue: none), or removes the key's record (`engine` null). */
    def save(store: RowStore, key: UnsafeRow, engine: Array[Byte], deadline: Long, idleDeadline: Long): (Int, Int) =
      if (engine == null) { store.remove(keyOf(key, null, null)); (0, 1) }
      else {
        def time(t: Long): Any = if (t == Long.MaxValue) null else t
        store.put(keyOf(key, null, null), value(new GenericInternalRow(Array[Any](
          new GenericInternalRow(Array[Any](time(deadline), time(idleDeadline), engine)), null))))
        (1, 0)
      }

    /** The kept rows of `key` (the key being visited). */
    def keptRows(store: RowStore, key: UnsafeRow, inline: Long): KeptRowStore = new KeptRowStore {
      override def inlineRows: Long = inline
      override def get(bag: Long, seq: Long): UnsafeRow = {
        val stored = store.get(keyOf(key, bag, seq))
        if (stored == null) null else stored.getStruct(1, input.size)
      }
      override def put(bag: Long, seq: Long, row: UnsafeRow): Unit = {
        rowValue.update(0, null)
        rowValue.update(1, row)
        store.put(keyOf(key, bag, seq), value(rowValue))
      }
      override def remove(bag: Long, seq: Long): Unit = store.remove(keyOf(key, bag, seq))
    }

    /** Keys due on the clock (deadline at or before `clock`) or idle (idle deadline at or before `processingTime`). */
    def dueKeys(store: RowStore, clock: Option[Long], processingTime: Option[Long]): Iterator[UnsafeRow] = {
      val due = new scala.collection.mutable.ArrayBuffer[UnsafeRow]
      store.foreach { (key, row) =>
        if (!row.isNullAt(0)) {
          val record = row.getStruct(0, 3)
          if (clock.exists(c => !record.isNullAt(0) && record.getLong(0) <= c) ||
              processingTime.exists(p => !record.isNullAt(1) && record.getLong(1) <= p)) due += groupingOf(key).copy()
        }
      }
      due.iterator
    }
  }
}

object StoredEngines {
  /**
   * How many rows a key's windows may keep in its `engine` bytes before its rows become state rows of their
   * own ([[streamwin.engine.StoredBags]]). A few rows cost less there (sliding windows read their kept rows
   * back at every visit); a key holding many writes each row once and keeps it in the store.
   */
  val InlineRowsConf = "spark.streamwin.stream.inlineKeptRows"
  val DefaultInlineRows = 1024L

  /** The session's [[InlineRowsConf]] (read in a task). */
  def inlineRows(): Long = {
    val value = org.apache.spark.sql.internal.SQLConf.get.getConfString(InlineRowsConf, null)
    if (value == null) DefaultInlineRows
    else scala.util.Try(value.trim.toLong).toOption.filter(_ >= 0).getOrElse(throw new IllegalArgumentException(
      s"streamwin: $InlineRowsConf must be a number of rows, 0 or more (0: every kept row is a state row), not '$value'"))
  }

  def stores(keys: Seq[Attribute], input: Seq[Attribute]): Seq[StoreLayout] = {
    val keyFields = keys.map(a => StructField(a.name, a.dataType, a.nullable))
    // The input's columns by name (a name taken twice gets its position appended).
    val names = input.map(_.name)
    val rowFields = input.zipWithIndex.map { case (a, i) =>
      StructField(if (names.count(_ == a.name) > 1) s"${a.name}_$i" else a.name, a.dataType, nullable = true)
    }
    val record = StructType(Seq(StructField("deadline", TimestampType, nullable = true),
      StructField("idle_deadline", TimestampType, nullable = true), StructField("engine", BinaryType, nullable = false)))
    Seq(StoreLayout(StoredSliceWindows.StoreName,
      StructType(keyFields :+ StructField("bag", LongType, nullable = true) :+ StructField("seq", LongType, nullable = true)),
      StructType(Seq(StructField("record", record, nullable = true), StructField("row", StructType(rowFields), nullable = true)))))
  }
}
