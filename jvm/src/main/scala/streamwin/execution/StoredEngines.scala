package streamwin.execution

import org.apache.spark.sql.catalyst.expressions.{Attribute, GenericInternalRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.streamwin.StoreLayout
import org.apache.spark.sql.types._

/**
 * A stream's state rows for windows fed rows (every window under policies, count and data windows,
 * per-event sliding windows, timer windows, every select form): one row per key, in the operator's
 * state store, keyed by the grouping columns (or `partition_by`), holding the times the key must be
 * visited again without rows and its window operator as bytes:
 *
 *  - `deadline`: when the stream's clock (the watermark, or processing time for timer windows) closes
 *    the key's next window (null: never);
 *  - `idle_deadline`: when the key's held rows time out in processing time (`idle_timeout`; null: never);
 *  - `engine`: the key's window operator, in streamwin's stored layout ([[streamwin.engine.EngineStateCodec]]:
 *    progress, open windows with their buffers and rows, late groups, kept rows; a fingerprint of the
 *    query's aggregation buffer and input types refuses a changed query).
 *
 * Not yet a stable form: a later streamwin keeps these windows' state one row per window and per kept
 * row, as it keeps windows fed slices ([[StoredSliceWindows]]), and refuses checkpoints of this form
 * with a message saying what to do.
 */
final class StoredEngines(keys: Seq[Attribute]) {
  private val layout = StoredEngines.stores(keys).head

  /** A task's reader and writer of the rows (projections are not shared between threads). */
  def access(): Access = new Access

  final class Access {
    private val value = UnsafeProjection.create(layout.valueSchema)

    /** The key's stored engine, if it has one. */
    def load(store: RowStore, key: UnsafeRow): Option[Array[Byte]] = Option(store.get(key)).map(_.getBinary(2))

    /** Stores the engine with its deadlines (Long.MaxValue: none), or removes the key (`engine` null). */
    def save(store: RowStore, key: UnsafeRow, engine: Array[Byte], deadline: Long, idleDeadline: Long): (Int, Int) =
      if (engine == null) { store.remove(key); (0, 1) }
      else {
        def time(t: Long): Any = if (t == Long.MaxValue) null else t
        store.put(key, value(new GenericInternalRow(Array[Any](time(deadline), time(idleDeadline), engine))))
        (1, 0)
      }

    /** Keys due on the clock (deadline at or before `clock`) or idle (idle deadline at or before `processingTime`). */
    def dueKeys(store: RowStore, clock: Option[Long], processingTime: Option[Long]): Iterator[UnsafeRow] = {
      val due = new scala.collection.mutable.ArrayBuffer[UnsafeRow]
      store.foreach { (key, row) =>
        if (clock.exists(c => !row.isNullAt(0) && row.getLong(0) <= c) ||
            processingTime.exists(p => !row.isNullAt(1) && row.getLong(1) <= p)) due += key.copy()
      }
      due.iterator
    }
  }
}

object StoredEngines {
  def stores(keys: Seq[Attribute]): Seq[StoreLayout] = Seq(StoreLayout(StoredSliceWindows.StoreName,
    StructType(keys.map(a => StructField(a.name, a.dataType, a.nullable))),
    StructType(Seq(StructField("deadline", TimestampType, nullable = true), StructField("idle_deadline", TimestampType,
      nullable = true), StructField("engine", BinaryType, nullable = false)))))
}
