package streamwin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BoundReference, GenericInternalRow, JoinedRow, SpecificInternalRow,
  UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.execution.streaming.state.StateStore
import org.apache.spark.sql.streamwin.StoreLayout
import org.apache.spark.sql.types._

import streamwin.engine.{AggregateEvaluator, BufferContents, KeyedWindowOperator, NoContents, SharedSlices}

/**
 * A stream's state rows for windows fed slices (time windows and fixed-gap sessions without policies,
 * see [[streamwin.spec.WindowSpec.streamSlice]]): one row per open window, as Spark keeps one per
 * (key, session start) and Flink one per (key, window), and a small record per key, in the operator's
 * state store. All plain columns, so `spark.read.format("statestore")` shows them:
 *
 *  - key: the grouping columns and `window_start` (null in the key's record);
 *  - value `record` (the key's record; null in window rows): `progress` (the key's event-time progress:
 *    its latest slice, or the watermark), `deadline` (when the watermark must visit the key to close
 *    its first window; null: never) and `windows` (the starts of its window and slice rows, ascending);
 *  - value `window` (null in the record): `end`, `rows` (input rows aggregated) and `buffer`: the
 *    aggregation buffer, one field per buffer slot named `f<function>_<slot>` in the order of the
 *    query's aggregates, then the family's hidden ones and `f<n>_count`, the row count. Object buffers
 *    (collect_list, percentile_approx) are stored serialised, as Spark's partial aggregation ships them.
 *
 * Overlapping hopping windows keep one row per slice instead, shared by the windows holding it
 * ([[streamwin.engine.SharedSlices]]; `end` is the slice's): a window is assembled from its slices when
 * it fires. (Rows spanning a whole window there were stored before that, and are kept as windows.)
 *
 * A key's visit reads its record and the rows it lists, and writes back the windows and slices its
 * slices changed, the record, and removals of the windows that closed and slices no window holds. (One store, Spark's default one: Spark's
 * state reader reads only the default store of operators other than its own join.)
 *
 * @param keys      the grouping columns (none: one stream)
 * @param evaluator the evaluator of the slices' buffers (the wiring's)
 */
final class StoredSliceWindows(keys: Seq[Attribute], evaluator: AggregateEvaluator) {
  private val layout = StoredSliceWindows.stores(keys, evaluator.functions).head
  private val valueSchema = layout.valueSchema
  private val bufferTypes = evaluator.bufferTypes.toArray
  private val bufferWidth = bufferTypes.length

  /** A task's reader and writer of the rows (projections are not shared between threads). */
  def access(): Access = new Access

  final class Access {
    private val rowKey = UnsafeProjection.create(
      keys.indices.map(i => BoundReference(i, keys(i).dataType, keys(i).nullable)) :+
        BoundReference(keys.size, TimestampType, nullable = true))
    private val groupingOf = UnsafeProjection.create(keys.indices.map(i => BoundReference(i, keys(i).dataType, keys(i).nullable)))
    private val start = new SpecificInternalRow(Seq(TimestampType))
    private val joined = new JoinedRow
    private val value = UnsafeProjection.create(valueSchema)

    /** The latest progress this access wrote or scanned in a key's record (µs; the task's, see [[resetProgress]]). */
    var latestProgress: Long = Long.MinValue
    /** State rows read by [[dueKeys]]. */
    var rowsScanned: Long = 0L
    def resetProgress(): Unit = latestProgress = Long.MinValue

    private def keyOf(key: InternalRow, windowStart: Long): UnsafeRow = {
      start.setLong(0, windowStart)
      rowKey(joined(key, start))
    }

    private def recordKeyOf(key: InternalRow): UnsafeRow = {
      start.setNullAt(0)
      rowKey(joined(key, start))
    }

    /** What a key's visit read: the starts of its stored windows (none for a key without state). */
    final class Loaded(val stored: Boolean, val starts: Array[Long])

    /** Puts the key's stored windows into the started operator. */
    def load(store: RowStore, key: UnsafeRow, operator: KeyedWindowOperator): Loaded = {
      val stored = store.get(recordKeyOf(key))
      if (stored == null) return new Loaded(false, Array.emptyLongArray)
      val record = stored.getStruct(0, 3)
      operator.state.progress = record.getLong(0)
      val starts = record.getArray(2).toLongArray()
      var w = 0
      while (w < starts.length) {
        val row = store.get(keyOf(key, starts(w)))
        if (row == null) {
          throw new IllegalStateException(s"streamwin: the state store lists window ${starts(w)} of a key, but holds no " +
            "row for it: the checkpoint's state is damaged; start the query with a new checkpoint location")
        }
        val window = row.getStruct(1, 3)
        val values = window.getStruct(2, bufferWidth)
        val buffer = evaluator.blankBuffer()
        var i = 0
        while (i < bufferWidth) {
          buffer.update(i, if (values.isNullAt(i)) null else InternalRow.copyValue(values.get(i, bufferTypes(i))))
          i += 1
        }
        operator.restoreStoredRow(starts(w), window.getLong(0), window.getLong(1), evaluator.fromSerialized(buffer))
        w += 1
      }
      operator.storedRowsRestored()
      new Loaded(true, starts)
    }

    /**
     * Writes what the visit changed: windows that slices joined, removals of those that closed, and
     * the record (removed once the key holds nothing, `forget`). Returns (rows written, rows removed).
     * The operator's buffers are written in place (object buffers serialised), so it is cleared after.
     */
    def save(store: RowStore, key: UnsafeRow, operator: KeyedWindowOperator, loaded: Loaded, deadline: Long,
        forget: Boolean): (Int, Int) = {
      val state = operator.state
      val shared = state.hasSharedSlices
      if (state.hasLateGroups || state.keptSliceCount > (if (shared) state.sharedSlices.size else 0) ||
          state.lastClosedStart.isDefined || state.record != null) {
        throw new IllegalStateException("a stream's slice-fed windows keep only their open windows and shared slices")
      }
      // Windows without contents are assembled from the shared slices: the slices are their rows.
      val open = state.windows(Long.MinValue, true, Long.MaxValue, true).filter(_.contents ne NoContents).toArray
      val slices = if (shared) state.sharedSlices.entries.toArray else Array.empty[SharedSlices#Entry]
      val sliceStarts = slices.map(_.start)
      var written = 0
      var removed = 0
      loaded.starts.foreach { s =>
        val kept = { val w = state.window(s); w != null && (w.contents ne NoContents) } ||
          java.util.Arrays.binarySearch(sliceStarts, s) >= 0
        if (!kept) { store.remove(keyOf(key, s)); removed += 1 }
      }
      // A window stored by a version before shared slices starts at or before the key's progress then, and
      // the slices kept for the windows after it start after it (see AlignedWindows.placeSharedSlice).
      open.foreach { w =>
        if (java.util.Arrays.binarySearch(sliceStarts, w.start) >= 0) {
          throw new IllegalStateException(s"a window and a shared slice of a key both start at ${w.start}")
        }
      }
      def put(start: Long, end: Long, rows: Long, buffer: InternalRow): Unit = {
        store.put(keyOf(key, start), value(new GenericInternalRow(Array[Any](null,
          new GenericInternalRow(Array[Any](end, rows, evaluator.toSerialized(buffer)))))))
        written += 1
      }
      open.foreach { w =>
        if (w.changed || java.util.Arrays.binarySearch(loaded.starts, w.start) < 0) {
          w.contents match {
            case b: BufferContents => put(w.start, w.end, w.held, b.aggregationBuffer)
            case other => throw new IllegalStateException(s"a slice-fed window holds a buffer, not ${other.getClass.getSimpleName}")
          }
        }
      }
      slices.foreach { e => if (e.changed) put(e.start, e.end, e.rows, e.buffer) }
      if (forget) {
        if (loaded.stored) { store.remove(recordKeyOf(key)); removed += 1 }
      } else {
        val starts = new GenericArrayData((open.map(_.start) ++ slices.map(_.start)).sorted.map(s => s: Any))
        if (state.progress > latestProgress) latestProgress = state.progress
        store.put(recordKeyOf(key), value(new GenericInternalRow(Array[Any](new GenericInternalRow(Array[Any](
          state.progress, if (deadline == Long.MaxValue) null else deadline, starts)), null))))
        written += 1
      }
      (written, removed)
    }

    /**
     * The keys (grouping columns) whose record's deadline is at or before `time` (the store's rows, scanned;
     * every record's progress goes into [[latestProgress]]).
     */
    def dueKeys(store: RowStore, time: Long): Iterator[UnsafeRow] = {
      val due = new scala.collection.mutable.ArrayBuffer[UnsafeRow]
      store.foreach { (key, value) =>
        rowsScanned += 1
        if (!value.isNullAt(0)) {
          val record = value.getStruct(0, 3)
          if (record.getLong(0) > latestProgress) latestProgress = record.getLong(0)
          if (!record.isNullAt(1) && record.getLong(1) <= time) due += groupingOf(key).copy()
        }
      }
      due.iterator
    }
  }
}

/** What the state rows need of a state store (a store of Spark's, or a test's). */
trait RowStore {
  /** The value of `key`, or null; valid until the next call. */
  def get(key: UnsafeRow): UnsafeRow
  def put(key: UnsafeRow, value: UnsafeRow): Unit
  def remove(key: UnsafeRow): Unit
  /** Every row, as (key, value), each valid only during its call of `f`. */
  def foreach(f: (UnsafeRow, UnsafeRow) => Unit): Unit
}

object RowStore {
  def apply(store: StateStore): RowStore = new RowStore {
    override def get(key: UnsafeRow): UnsafeRow = store.get(key)
    override def put(key: UnsafeRow, value: UnsafeRow): Unit = store.put(key, value)
    override def remove(key: UnsafeRow): Unit = store.remove(key)
    override def foreach(f: (UnsafeRow, UnsafeRow) => Unit): Unit = store.iterator().foreach(pair => f(pair.key, pair.value))
  }
}

object StoredSliceWindows {
  /** The one store's name: Spark's default. */
  val StoreName: String = "default"

  /** The operator's store, for the slices' buffers of `functions` (the user's, the family's hidden ones, the row count). */
  def stores(keys: Seq[Attribute], functions: Seq[AggregateFunction]): Seq[StoreLayout] = {
    val bufferSchema = StructType(functions.zipWithIndex.flatMap { case (f, i) =>
      f.aggBufferAttributes.map(a => StructField(s"f${i}_${a.name}", a.dataType, nullable = true))
    })
    val keySchema = StructType(keys.map(a => StructField(a.name, a.dataType, a.nullable)) :+
      StructField("window_start", TimestampType, nullable = true))
    val recordSchema = StructType(Seq(
      StructField("progress", TimestampType, nullable = false), StructField("deadline", TimestampType, nullable = true),
      StructField("windows", ArrayType(TimestampType, containsNull = false), nullable = false)))
    val windowSchema = StructType(Seq(
      StructField("end", TimestampType, nullable = false), StructField("rows", LongType, nullable = false),
      StructField("buffer", bufferSchema, nullable = false)))
    val valueSchema = StructType(Seq(StructField("record", recordSchema, nullable = true),
      StructField("window", windowSchema, nullable = true)))
    Seq(StoreLayout(StoreName, keySchema, valueSchema))
  }
}
