package streamwin.engine

import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.catalyst.util.{ArrayData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** Which of a key's state rows: its record, an open window, a late group, or a kept row. */
sealed abstract class StatePart(val name: String) {
  val utf8: UTF8String = UTF8String.fromString(name)
}

object StatePart {
  case object Record extends StatePart("record")
  case object Window extends StatePart("window")
  case object LateGroup extends StatePart("late")
  case object Row extends StatePart("row")
}

/**
 * The state rows of the key being visited (windows fed rows), by part and id: the record (no id), a
 * window or late group (id: its start), a kept row (id: its bag, `seq`: its place in the bag). Values
 * are rows of [[StoredWindowLayout.valueSchema]].
 */
trait KeyStateRows {
  /** How many rows a key keeps inline (in its record and window rows) before they become rows of their own. */
  def inlineRows: Long
  /** The value, or null; valid until the next call. */
  def get(part: StatePart, id: Long, seq: Long): UnsafeRow
  def put(part: StatePart, id: Long, seq: Long, value: UnsafeRow): Unit
  def remove(part: StatePart, id: Long, seq: Long): Unit
}

/**
 * The typed layout of a stream's state rows for windows fed rows: every value has the fields
 * `record`, `window` and `row`, one of them set.
 *
 *  - `record` (the key's record): `format` (2), `shape` (the fingerprint of the query's
 *    [[StoredStateShape]]), `deadline` and `idle_deadline` (when the clock or processing time must
 *    visit the key; null: never), `progress`, `last_closed_start`, the key's counters, `windows` and
 *    `late_groups` (the starts of its window rows, ascending), `next_bag`, `kept` (the rows kept by
 *    event time, per time: sliding windows), and the family's own record (`count`, `row_count`, `data`
 *    or `cut_session`; null for the others);
 *  - `window` (an open window or a late group): `end`, `held`, `fired`, `changed`, `first` and `last`
 *    (order values of its first and last row) and `contents`: `kind` (none, buffer, fifo, rows), the
 *    aggregation `buffer` (a groupBy; one typed field per buffer slot, object buffers serialised), the
 *    `fifo` of per-row buffers of overlapping count windows, or the `rows` it holds;
 *  - `row` (a kept row): the input columns.
 *
 * Rows (`rows`, and each `kept` time's) are `inline` while the key holds at most
 * [[KeyStateRows.inlineRows]] of them, else a `bag` range `from` until `until` of kept-row state rows.
 */
final class StoredWindowLayout(buffer: Option[StructType], val orderType: DataType, val input: StructType) {
  import StoredWindowLayout.field

  val rowsType: StructType = StructType(Seq(field("inline", ArrayType(input, containsNull = false)),
    field("bag", LongType), field("from", LongType), field("until", LongType)))
  private val fifoType: Option[StructType] = buffer.map(b => StructType(Seq(field("back", ArrayType(b, containsNull = false)),
    field("front", ArrayType(b, containsNull = false)), field("back_aggregate", b))))
  val contentsType: StructType = StructType(Seq(field("kind", StringType), field("held", LongType)) ++
    buffer.map(field("buffer", _)) ++ fifoType.map(field("fifo", _)) :+ field("rows", rowsType))
  val windowType: StructType = StructType(Seq(field("end", LongType), field("held", LongType),
    field("fired", BooleanType), field("changed", BooleanType), field("first", orderType), field("last", orderType),
    field("contents", contentsType)))
  val recordType: StructType = StructType(Seq(
    field("format", IntegerType), field("shape", LongType),
    field("deadline", TimestampType), field("idle_deadline", TimestampType),
    field("progress", LongType), field("last_closed_start", LongType),
    field("emitted", LongType), field("peak", IntegerType), field("unwindowed", LongType), field("late", LongType),
    field("passed", LongType), field("held_rows", LongType), field("quiet_since", LongType), field("late_row", BooleanType),
    field("windows", ArrayType(LongType, containsNull = false)),
    field("late_groups", ArrayType(LongType, containsNull = false)),
    field("next_bag", LongType),
    field("kept", ArrayType(StructType(Seq(field("time", LongType), field("rows", rowsType))), containsNull = false)),
    field("kept_count", LongType),
    field("count", StructType(Seq(field("rows", LongType), field("oldest_retained", LongType),
      field("covered_until", LongType), field("orders", ArrayType(orderType, containsNull = true))))),
    field("row_count", LongType),
    field("data", StructType(Seq(field("members", IntegerType), field("state", BinaryType)))),
    field("cut_session", StructType(Seq(field("first_time", LongType), field("next_check", LongType),
      field("latest_first", LongType), field("latest_reach", LongType), field("latest_rows", LongType),
      field("latest", contentsType))))))
  val valueSchema: StructType = StructType(Seq(field("record", recordType), field("window", windowType),
    field("row", input)))

  /** The ordinals of the record's fields the store scans for due keys. */
  val deadlineOrdinal: Int = recordType.fieldIndex("deadline")
  val idleDeadlineOrdinal: Int = recordType.fieldIndex("idle_deadline")
}

object StoredWindowLayout {
  /**
   * The current `record.format`. 2: a count window's record keeps only the `order_by` values a window can
   * start or end with (1 kept every row's); a streamwin that reads 1 only refuses 2 instead of misreading it.
   */
  val Format = 2
  /** The formats this version reads: a format-1 record's orders are compacted on its first visit. */
  val ReadableFormats: Set[Int] = Set(1, 2)

  /**
   * The record row's fields that families keep their records in ([[FamilyRecordForm]]; `recordType` gives
   * their types). They are part of the stored form: a new one would change every family's state schema.
   */
  val FamilyRecordFields: Seq[String] = Seq("count", "row_count", "data", "cut_session")

  private def field(name: String, dataType: DataType): StructField = StructField(name, dataType, nullable = true)

  /**
   * The layout of a window over `input` (its columns, names made unique) ordered by a column of `orderType`,
   * aggregating with `functions` (None: a select).
   */
  def apply(functions: Option[Seq[AggregateFunction]], orderType: DataType, input: Seq[(String, DataType)]): StoredWindowLayout = {
    val buffer = functions.map(fs => StructType(fs.zipWithIndex.flatMap { case (f, i) =>
      f.aggBufferAttributes.map(a => field(s"f${i}_${a.name}", a.dataType))
    }))
    val names = input.map(_._1)
    val rowFields = input.zipWithIndex.map { case ((name, dataType), i) =>
      field(if (names.count(_ == name) > 1) s"${name}_$i" else name, dataType)
    }
    new StoredWindowLayout(buffer, orderType, StructType(rowFields))
  }
}

/**
 * Reads a key's engine from its state rows and writes back what a visit changed ([[StoredWindowLayout]]):
 * the record, one row per open window and per late group, and the kept rows ([[StoredBags]]). A window
 * row is put only when its value changed since it was read, and removed once the window closed.
 *
 * Only state is written, field by field: no class names, and no Java serialization but for a user's
 * split trigger state ([[StoredValues]]). The engine's wiring (family, policies, evaluator, outputs) is
 * built again by the reading task (`newEngine`).
 *
 * @param newEngine a fresh engine of this task (same blueprint as the one that wrote the state)
 * @param shape     what the state's meaning depends on besides its layout: state written for another
 *                  shape (the query's aggregates or input changed) is refused, not misread
 */
final class WindowStateCodec(newEngine: () => RowWindowEngine, shape: StoredStateShape,
    evaluator: Option[AggregateEvaluator], val layout: StoredWindowLayout) {
  import StatePart._

  private val value = UnsafeProjection.create(layout.valueSchema)
  private val record = layout.recordType
  private val window = layout.windowType
  private val contents = layout.contentsType
  private val rowsType = layout.rowsType
  private val inputWidth = layout.input.length
  private val recordWidth = record.length
  private val windowWidth = window.length
  private val bufferTypes = evaluator.map(_.bufferTypes.toArray).getOrElse(Array.empty[DataType])
  private val bufferWidth = bufferTypes.length
  private val objectBuffers = evaluator.exists(_.hasObjectBuffers)
  private def r(name: String): Int = record.fieldIndex(name)
  private def c(name: String): Int = contents.fieldIndex(name)

  /** A key's kept rows (bags) as state rows of part `row`. */
  private final class KeptRows(rows: KeyStateRows) extends KeptRowStore {
    override def inlineRows: Long = rows.inlineRows
    override def get(bag: Long, seq: Long): UnsafeRow = {
      val stored = rows.get(Row, bag, seq)
      if (stored == null) null else stored.getStruct(2, inputWidth)
    }
    override def put(bag: Long, seq: Long, row: UnsafeRow): Unit =
      rows.put(Row, bag, seq, value(new GenericInternalRow(Array[Any](null, null, row))))
    override def remove(bag: Long, seq: Long): Unit = rows.remove(Row, bag, seq)
  }

  /** The key's engine with its stored state, or None for a key without state. */
  def load(rows: KeyStateRows): Option[RowWindowEngine] = {
    val stored = rows.get(Record, 0L, 0L)
    if (stored == null) return None
    val op = newEngine().asInstanceOf[KeyedWindowOperator]
    op.startKey()
    reading(op)
    try {
      if (stored.isNullAt(0)) throw new StoredForm.UnknownForm("a key's record without its fields")
      read(op, stored.getStruct(0, recordWidth).copy(), rows)
    } catch {
      case _: WindowStateCodec.OtherShape => throw WindowStateCodec.otherQuery(shape)
      // (IOException: a user's split trigger state cut short or changed.)
      case e @ (_: java.io.IOException | _: IndexOutOfBoundsException | _: NegativeArraySizeException |
                _: IllegalArgumentException | _: ClassCastException | _: NullPointerException | _: MatchError |
                _: ClassNotFoundException | _: NoSuchElementException) =>
        throw WindowStateCodec.otherVersion(s"unreadable window state: $e", e)
    }
    Some(op)
  }

  private def read(op: KeyedWindowOperator, rec: UnsafeRow, rows: KeyStateRows): Unit = {
    if (rec.isNullAt(r("format")) || !StoredWindowLayout.ReadableFormats(rec.getInt(r("format")))) {
      throw new StoredForm.UnknownForm(s"window state format ${if (rec.isNullAt(0)) "none" else rec.getInt(0)}; " +
        s"this version reads ${StoredWindowLayout.ReadableFormats.toSeq.sorted.mkString(" and ")}")
    }
    if (rec.getLong(r("shape")) != shape.fingerprint) throw new WindowStateCodec.OtherShape
    val bags = op.bagsIn(new KeptRows(rows))
    bags.nextId = rec.getLong(r("next_bag"))
    op.emitted = rec.getLong(r("emitted"))
    op.peak = rec.getInt(r("peak"))
    op.unwindowed = rec.getLong(r("unwindowed"))
    op.late = rec.getLong(r("late"))
    op.passed = rec.getLong(r("passed"))
    op.heldRows = rec.getLong(r("held_rows"))
    op.quietSince = rec.getLong(r("quiet_since"))
    op.lateRow = rec.getBoolean(r("late_row"))
    val state = op.state.asInstanceOf[InMemoryWindowState]
    state.progress = rec.getLong(r("progress"))
    state.lastClosedStart = if (rec.isNullAt(r("last_closed_start"))) None else Some(rec.getLong(r("last_closed_start")))
    state.record = readFamilyRecord(op, rec, bags)
    val loaded = new LoadedWindowRows(rec)
    def entries(part: StatePart, starts: Array[Long], into: mutable.LongMap[UnsafeRow]): Seq[WindowEntry] =
      starts.toSeq.map { start =>
        val v = rows.get(part, start, 0L)
        if (v == null) throw new IllegalStateException(s"streamwin: the state store lists ${part.name} $start of a key, " +
          "but holds no row for it: the checkpoint's state is damaged; start the query with a new checkpoint location")
        val copy = v.copy()
        into(start) = copy
        readWindow(start, copy.getStruct(1, windowWidth), bags)
      }
    entries(Window, rec.getArray(r("windows")).toLongArray(), loaded.windows).foreach(state.putWindow)
    entries(LateGroup, rec.getArray(r("late_groups")).toLongArray(), loaded.lateGroups).foreach(state.putLateGroup)
    val kept = rec.getArray(r("kept"))
    var i = 0
    while (i < kept.numElements()) {
      val entry = kept.getStruct(i, 2)
      val bag = op.contents.bag()
      bags.read(bag, entry.getStruct(1, rowsType.length), inputWidth)
      state.restoreKept(entry.getLong(0), bag)
      i += 1
    }
    state.keptCount = rec.getLong(r("kept_count"))
    op.storedRows = loaded
  }

  /**
   * Writes what the visit changed, with the key's deadlines (Long.MaxValue: none). Returns the state rows
   * (put, removed).
   */
  def save(engine: RowWindowEngine, rows: KeyStateRows, deadline: Long, idleDeadline: Long): (Long, Long) = {
    val op = engine.asInstanceOf[KeyedWindowOperator]
    val state = op.state.asInstanceOf[InMemoryWindowState]
    if (state.hasTimestampSlices || state.hasSharedSlices || state.slicesIfAny != null) {
      throw new IllegalStateException("a stream feeds these windows rows: slices are not stored with them")
    }
    val bags = op.bagsIn(new KeptRows(rows))
    val (rowsPutBefore, rowsRemovedBefore) = (bags.rowsWritten, bags.rowsRemoved)
    val loaded = Option(op.storedRows).getOrElse(new LoadedWindowRows(null))
    bags.startEncode(keptBags(state))
    var put = 0L
    var removed = 0L
    def writeEntries(part: StatePart, entries: Iterator[WindowEntry], before: mutable.LongMap[UnsafeRow]): Array[Long] = {
      val starts = mutable.ArrayBuilder.make[Long]
      val now = mutable.LongMap.empty[UnsafeRow]
      entries.foreach { w =>
        val v = value(new GenericInternalRow(Array[Any](null, windowValue(w, bags), null)))
        starts += w.start
        val old = before.getOrNull(w.start)
        if (old == null || old != v) { rows.put(part, w.start, 0L, v); put += 1 }
        now(w.start) = if (old != null && old == v) old else v.copy()
      }
      before.foreachKey(s => if (!now.contains(s)) { rows.remove(part, s, 0L); removed += 1 })
      before.clear()
      now.foreach { case (s, v) => before(s) = v }
      starts.result()
    }
    val windowStarts = writeEntries(Window, state.openWindows, loaded.windows)
    val lateStarts = writeEntries(LateGroup, state.lateGroups, loaded.lateGroups)
    val rec = new GenericInternalRow(recordWidth)
    writeFamilyRecord(op, rec, bags)
    rec.update(r("kept"), new GenericArrayData(state.keptBags.map { case (time, bag) =>
      new GenericInternalRow(Array[Any](time, bags.write(bag)))
    }.toArray[Any]))
    rec.update(r("format"), StoredWindowLayout.Format)
    rec.update(r("shape"), shape.fingerprint)
    if (deadline != Long.MaxValue) rec.update(r("deadline"), deadline)
    if (idleDeadline != Long.MaxValue) rec.update(r("idle_deadline"), idleDeadline)
    rec.update(r("progress"), state.progress)
    state.lastClosedStart.foreach(s => rec.update(r("last_closed_start"), s))
    rec.update(r("emitted"), op.emitted)
    rec.update(r("peak"), op.peak)
    rec.update(r("unwindowed"), op.unwindowed)
    rec.update(r("late"), op.late)
    rec.update(r("passed"), op.passed)
    rec.update(r("held_rows"), op.heldRows)
    rec.update(r("quiet_since"), op.quietSince)
    rec.update(r("late_row"), op.lateRow)
    rec.update(r("windows"), new GenericArrayData(windowStarts.map(s => s: Any)))
    rec.update(r("late_groups"), new GenericArrayData(lateStarts.map(s => s: Any)))
    rec.update(r("kept_count"), state.keptCount)
    // Written last: the bags written above took their ids from it.
    rec.update(r("next_bag"), bags.nextId)
    val v = value(new GenericInternalRow(Array[Any](rec, null, null)))
    if (loaded.record == null || loaded.record != v.getStruct(0, recordWidth)) {
      rows.put(Record, 0L, 0L, v)
      put += 1
    }
    loaded.record = v.getStruct(0, recordWidth).copy()
    op.storedRows = loaded
    bags.finish()
    (put + bags.rowsWritten - rowsPutBefore, removed + bags.rowsRemoved - rowsRemovedBefore)
  }

  /** The key's state is dropped: every state row it held is removed. Returns the rows removed. */
  def forget(engine: RowWindowEngine, rows: KeyStateRows): Long = {
    val op = engine.asInstanceOf[KeyedWindowOperator]
    val bags = op.bagsIn(new KeptRows(rows))
    val before = bags.rowsRemoved
    var removed = 0L
    val loaded = op.storedRows
    if (loaded != null) {
      loaded.windows.foreachKey { s => rows.remove(Window, s, 0L); removed += 1 }
      loaded.lateGroups.foreachKey { s => rows.remove(LateGroup, s, 0L); removed += 1 }
      if (loaded.record != null) { rows.remove(Record, 0L, 0L); removed += 1 }
      op.storedRows = null
    }
    bags.removeAll()
    removed + bags.rowsRemoved - before
  }

  // ---- windows ----

  private def windowValue(w: WindowEntry, bags: StoredBags): InternalRow = new GenericInternalRow(Array[Any](
    w.end, w.held, w.fired, w.changed, w.first, w.last, contentsValue(w.contents, bags)))

  private def readWindow(start: Long, v: UnsafeRow, bags: StoredBags): WindowEntry = {
    val w = new WindowEntry(start, v.getLong(0), if (v.isNullAt(6)) null else readContents(v.getStruct(6, contents.length), bags))
    w.held = v.getLong(1)
    w.fired = v.getBoolean(2)
    w.changed = v.getBoolean(3)
    w.first = if (v.isNullAt(4)) null else InternalRow.copyValue(v.get(4, layout.orderType))
    w.last = if (v.isNullAt(5)) null else InternalRow.copyValue(v.get(5, layout.orderType))
    w
  }

  private def contentsValue(wc: WindowContents, bags: StoredBags): InternalRow = {
    if (wc == null) return null
    val v = new GenericInternalRow(contents.length)
    def kind(k: String): Unit = v.update(c("kind"), UTF8String.fromString(k))
    wc match {
      case NoContents => kind("none")
      case b: BufferContents =>
        kind("buffer")
        v.update(c("held"), b.held)
        v.update(c("buffer"), bufferValue(b.aggregationBuffer))
      case f: FifoContents =>
        kind("fifo")
        val (back, front, aggregate) = f.fifo.buffers
        def all(bs: collection.Seq[InternalRow]) = new GenericArrayData(bs.map(b => bufferValue(b): Any).toArray)
        v.update(c("fifo"), new GenericInternalRow(Array[Any](all(back), all(front), bufferValue(aggregate))))
      case rc: RowContents =>
        kind("rows")
        v.update(c("rows"), bags.write(rc.bag))
    }
    v
  }

  private def readContents(v: InternalRow, bags: StoredBags): WindowContents = v.getUTF8String(c("kind")).toString match {
    case "none" => NoContents
    case "buffer" =>
      val b = new BufferContents(evaluatorOf, contentsOutput, readBuffer(v.getStruct(c("buffer"), bufferWidth)))
      b.held = v.getLong(c("held"))
      b
    case "fifo" =>
      val f = factory.fifo().asInstanceOf[FifoContents]
      val fifo = v.getStruct(c("fifo"), 3)
      def all(a: ArrayData) = mutable.ArrayBuffer.tabulate[InternalRow](a.numElements())(i => readBuffer(a.getStruct(i, bufferWidth)))
      f.fifo.restore(all(fifo.getArray(0)), all(fifo.getArray(1)), readBuffer(fifo.getStruct(2, bufferWidth)))
      f
    case "rows" =>
      val rc = factory.kept().asInstanceOf[RowContents]
      bags.read(rc.bag, if (v.isNullAt(c("rows"))) null else v.getStruct(c("rows"), rowsType.length), inputWidth)
      rc
    case other => throw new StoredForm.UnknownForm(s"window contents of kind $other")
  }

  // The contents factory of the engine being read (set by `load` for its duration).
  private var factory: ContentsFactory = _
  private def evaluatorOf: AggregateEvaluator =
    evaluator.getOrElse(throw new StoredForm.UnknownForm("an aggregation buffer in the state of a select"))
  private def contentsOutput: WindowOutput = factory.output

  private def bufferValue(buffer: InternalRow): InternalRow = {
    val b = if (objectBuffers) evaluatorOf.toSerialized(buffer.copy()) else buffer
    val out = new GenericInternalRow(bufferWidth)
    var i = 0
    while (i < bufferWidth) {
      if (!b.isNullAt(i)) out.update(i, b.get(i, bufferTypes(i)) match {
        // A serialised object buffer may be its serializer's own array, which its next call overwrites
        // (Spark's UnsafeRow.getBytes): copied, as the value is written after every buffer of the window.
        case bytes: Array[Byte] if objectBuffers => bytes.clone()
        case value => value
      })
      i += 1
    }
    out
  }

  private def readBuffer(values: InternalRow): InternalRow = {
    val buffer = evaluatorOf.blankBuffer()
    var i = 0
    while (i < bufferWidth) {
      if (values.isNullAt(i)) buffer.setNullAt(i) else buffer.update(i, InternalRow.copyValue(values.get(i, bufferTypes(i))))
      i += 1
    }
    evaluatorOf.fromSerialized(buffer)
  }

  // ---- the family's record (its form is the family's, see [[FamilyRecordForm]]) ----

  /** What a family's record form reads and writes through this codec, for a key whose kept rows are `bags`. */
  private final class RecordIO(bags: StoredBags, userPackages: Seq[String]) extends StoredRecordIO {
    override def orderType: DataType = layout.orderType
    override def width(field: String): Int = record(field).dataType.asInstanceOf[StructType].length
    override def contentsValue(wc: WindowContents): InternalRow = WindowStateCodec.this.contentsValue(wc, bags)
    override def readContents(row: InternalRow, ordinal: Int): WindowContents =
      if (row.isNullAt(ordinal)) null else WindowStateCodec.this.readContents(row.getStruct(ordinal, contents.length), bags)
    override def storedValue(value: Any): Array[Byte] = {
      val bytes = new java.io.ByteArrayOutputStream
      val out = new java.io.DataOutputStream(bytes)
      StoredValues.write(value, out, userPackages)
      out.close()
      bytes.toByteArray
    }
    override def valueOf(bytes: Array[Byte]): Any = {
      val in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(bytes))
      try StoredValues.read(in, userPackages) finally in.close()
    }
  }

  private def writeFamilyRecord(op: KeyedWindowOperator, rec: GenericInternalRow, bags: StoredBags): Unit =
    if (op.state.record != null) {
      val form = op.family.recordForm.getOrElse(throw new IllegalStateException(
        s"${op.family.getClass.getSimpleName} keeps a record but declares no recordForm to store it in"))
      rec.update(r(form.field), form.write(op.state.record, new RecordIO(bags, StoredFormats.userPackages(op))))
    }

  /** The family's record in `rec`, or null; a record of another family's form is refused, not misread. */
  private def readFamilyRecord(op: KeyedWindowOperator, rec: UnsafeRow, bags: StoredBags): FamilyRecord = {
    val form = op.family.recordForm
    form.filter(f => !rec.isNullAt(r(f.field))) match {
      case Some(f) => f.read(rec, r(f.field), new RecordIO(bags, StoredFormats.userPackages(op)))
      case None =>
        StoredWindowLayout.FamilyRecordFields.find(f => !rec.isNullAt(r(f))).foreach { other =>
          throw new StoredForm.UnknownForm(s"a key's record in `$other`, which ${op.family.getClass.getSimpleName} " +
            s"does not keep (${form.fold("no record")(f => s"its record is `${f.field}`")})")
        }
        null
    }
  }

  /** Every bag of rows the key holds. */
  private def keptBags(state: InMemoryWindowState): Iterator[RowBag] = {
    def bagOf(wc: WindowContents): Iterator[RowBag] = wc match {
      case rc: RowContents => Iterator.single(rc.bag)
      case _ => Iterator.empty
    }
    val fromRecord = if (state.record == null) Iterator.empty else state.record.heldContents.flatMap(bagOf)
    state.openWindows.flatMap(w => bagOf(w.contents)) ++ state.lateGroups.flatMap(g => bagOf(g.contents)) ++
      state.keptBags.map(_._2) ++ fromRecord
  }

  /** Sets what reading an engine's contents needs (its factory). */
  private def reading(op: KeyedWindowOperator): Unit = factory = op.contents
}

/** What a key's visit read of its window rows: the values as stored, so only changed ones are written back. */
private[engine] final class LoadedWindowRows(var record: UnsafeRow) {
  val windows: mutable.LongMap[UnsafeRow] = mutable.LongMap.empty
  val lateGroups: mutable.LongMap[UnsafeRow] = mutable.LongMap.empty
}

private[engine] object WindowStateCodec {
  /** The state was written for another [[StoredStateShape]]. */
  final class OtherShape extends Exception("window state of another shape")

  def otherVersion(cause: String, e: Throwable): IllegalStateException = new IllegalStateException(
    "streamwin: this streaming checkpoint holds window state written by another streamwin version or on " +
      s"another Spark line, which this version cannot read ($cause); start the query with a new " +
      "checkpoint location (the state of open windows cannot be carried over)", e)

  def otherQuery(shape: StoredStateShape): IllegalStateException = new IllegalStateException(
    "streamwin: this streaming checkpoint holds window state written by another query: its windows were " +
      "kept for another window function, other aggregates or other input columns than this query's " +
      s"(${shape.describe}). Restart the query as it was written, or start the changed query with a new " +
      "checkpoint location (as Spark asks when a streaming aggregation's aggregates change)")
}

/** What stored forms share: their errors, and where a user's classes in the state may come from. */
private[engine] object StoredFormats {
  /**
   * Packages of a user's code the engine runs (a split trigger and its initial state), whose classes its
   * state may hold. Not Java's, Scala's or Spark's own (a state that is a Scala tuple does not admit all of
   * `scala`): their value classes are admitted one by one ([[StoredClassFilter]]).
   */
  def userPackages(engine: RowWindowEngine): Seq[String] = engine match {
    case op: KeyedWindowOperator => op.family.userClasses.map(StoredClassFilter.packageOf)
      .filterNot(p => PlatformPackages.exists(root => p == root || p.startsWith(root + "."))).distinct
    case _ => Nil
  }
  private val PlatformPackages = Seq("java", "javax", "jdk", "sun", "scala", "org.apache.spark")
}

private[engine] object StoredForm {
  final class UnknownForm(message: String) extends java.io.IOException(message)

  /**
   * `n`, a count or length just read, unless the bytes are broken: negative, or more elements of `bytesEach`
   * than the bytes left. Guards allocations sized by it.
   */
  def checked(n: Long, in: java.io.DataInputStream, bytesEach: Int = 1): Int = {
    val left = in.available().toLong
    if (n < 0 || n > Int.MaxValue || n * bytesEach > left) throw new UnknownForm(s"a count of $n with $left bytes left")
    n.toInt
  }
}

/**
 * What a stream's window state means besides its layout: the window function, the types of its
 * aggregation buffer (a groupBy) and of the rows it keeps. The state stores a fingerprint of it, so a
 * query restarted from a checkpoint with other aggregates or input columns is refused instead of
 * reading buffers and rows of other types. The window's arguments (size, gap) and policies are not part
 * of it: as with Spark's own windows, changing them goes on from the state as it is.
 *
 * The fingerprint is part of the stored form: what goes into [[describe]] never changes.
 */
final class StoredStateShape(val function: String, val bufferTypes: Option[Seq[DataType]], val rowTypes: Seq[DataType]) {
  def describe: String = {
    def struct(types: Seq[DataType]) = types.map(_.catalogString).mkString("<", ", ", ">")
    bufferTypes match {
      case Some(buffer) => s"$function in a groupBy, aggregation buffer ${struct(buffer)}, input rows ${struct(rowTypes)}"
      case None => s"$function in a select, input rows ${struct(rowTypes)}"
    }
  }

  /** The first 8 bytes of the SHA-256 of [[describe]]. */
  lazy val fingerprint: Long = java.nio.ByteBuffer.wrap(
    MessageDigest.getInstance("SHA-256").digest(describe.getBytes(StandardCharsets.UTF_8))).getLong
}
