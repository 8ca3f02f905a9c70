package streamwin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BoundReference, GenericInternalRow, JoinedRow,
  UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.streamwin.StoreLayout
import org.apache.spark.sql.types._

import streamwin.engine.{KeyStateRows, StatePart, StoredWindowLayout}

/**
 * A stream's state rows for windows fed rows (every window under policies, count and data windows,
 * per-event sliding windows, timer windows, every select form), in the operator's one store, keyed by
 * the grouping columns (or `partition_by`), `part`, `id` and `seq`:
 *
 *  - `record` (id and seq null): the key's record, its progress and deadlines, counters, the starts of
 *    its windows and late groups, and its family's record ([[StoredWindowLayout]]);
 *  - `window` and `late` (id: the start): one row per open window and per late group, with its bounds,
 *    flags and contents (a typed aggregation buffer, a FIFO of buffers, or its rows);
 *  - `row` (id: the bag, seq: the row's place in it): a row the key's windows keep, once the key keeps
 *    more than [[StoredEngines.InlineRowsConf]] (a select's members, sessions' rows under policies, sliding
 *    windows' kept rows): the row's input columns, typed ([[streamwin.engine.StoredBags]]).
 *
 * A visit reads the key's record and the window rows it lists, and writes back only the rows that changed.
 * One store, as Spark's own operators keep one: a second store costs every task of every micro-batch
 * its commit, and Spark 4.1-4.3's state reader reads only an operator's `default` store.
 */
final class StoredEngines(keys: Seq[Attribute], layout: StoredWindowLayout) {
  private val keySchema = StoredEngines.keySchema(keys)

  /** A task's reader and writer of the rows (projections are not shared between threads). */
  def access(): Access = new Access

  final class Access {
    private val rowKey = UnsafeProjection.create(keySchema)
    private val groupingOf = UnsafeProjection.create(keys.indices.map(i => BoundReference(i, keys(i).dataType, keys(i).nullable)))
    private val position = new GenericInternalRow(3)
    private val joined = new JoinedRow
    private val recordWidth = layout.recordType.length

    private def keyOf(key: InternalRow, part: StatePart, id: Long, seq: Long): UnsafeRow = {
      position.update(0, part.utf8)
      part match {
        case StatePart.Record => position.setNullAt(1); position.setNullAt(2)
        case StatePart.Row => position.update(1, id); position.update(2, seq)
        case _ => position.update(1, id); position.setNullAt(2)
      }
      rowKey(joined(key, position))
    }

    /** The state rows of `key` (the key being visited). */
    def rowsOf(store: RowStore, key: UnsafeRow, inline: Long): KeyStateRows = new KeyStateRows {
      override def inlineRows: Long = inline
      override def get(part: StatePart, id: Long, seq: Long): UnsafeRow = store.get(keyOf(key, part, id, seq))
      override def put(part: StatePart, id: Long, seq: Long, value: UnsafeRow): Unit = store.put(keyOf(key, part, id, seq), value)
      override def remove(part: StatePart, id: Long, seq: Long): Unit = store.remove(keyOf(key, part, id, seq))
    }

    /**
     * Keys due on the clock (deadline at or before `clock`) or idle (idle deadline at or before `processingTime`),
     * found by scanning every state row; every record's deadlines go into `index`, if given, until it is
     * [[DueKeyIndex.full]]. Returns them, the rows read and the index if it holds every key.
     */
    def dueKeys(store: RowStore, clock: Option[Long], processingTime: Option[Long], index: Option[DueKeyIndex])
        : (Iterator[UnsafeRow], Long, Option[DueKeyIndex]) = {
      val due = new scala.collection.mutable.ArrayBuffer[UnsafeRow]
      val (deadline, idle) = (layout.deadlineOrdinal, layout.idleDeadlineOrdinal)
      var scanned = 0L
      var indexing = index.orNull
      store.foreach { (key, row) =>
        scanned += 1
        if (!row.isNullAt(0)) {
          val record = row.getStruct(0, recordWidth)
          val keyDeadline = if (record.isNullAt(deadline)) Long.MaxValue else record.getLong(deadline)
          val idleDeadline = if (record.isNullAt(idle)) Long.MaxValue else record.getLong(idle)
          val grouping = groupingOf(key)
          if (indexing != null) {
            indexing.update(grouping, keyDeadline, idleDeadline)
            if (indexing.full) indexing = null
          }
          if (clock.exists(keyDeadline <= _) || processingTime.exists(idleDeadline <= _)) due += grouping.copy()
        }
      }
      (due.iterator, scanned, Option(indexing))
    }
  }
}

object StoredEngines {
  /**
   * How many rows a key's windows may keep inline (in its record and window rows) before its rows become
   * state rows of their own ([[streamwin.engine.StoredBags]]). A few rows cost less there (sliding windows
   * read their kept rows back at every visit); a key holding many writes each row once and keeps it in the store.
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

  private def keySchema(keys: Seq[Attribute]): StructType =
    StructType(keys.map(a => StructField(a.name, a.dataType, a.nullable)) ++ Seq(
      StructField("part", StringType, nullable = false), StructField("id", LongType, nullable = true),
      StructField("seq", LongType, nullable = true)))

  def stores(keys: Seq[Attribute], layout: StoredWindowLayout): Seq[StoreLayout] =
    Seq(StoreLayout(StoredSliceWindows.StoreName, keySchema(keys), layout.valueSchema))
}
