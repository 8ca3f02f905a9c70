package streamwin

import scala.collection.mutable
import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeReference, GenericInternalRow, JoinedRow,
  UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateFunction, Count, Max, Sum}
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import streamwin.engine.{AggregateEvaluator, KeyedWindowOperator, RowWindowEngine, WindowPolicies}
import streamwin.execution.{EngineFeeder, RowStore, SliceFeeder, StoredSliceWindows, WindowEngineBlueprint}
import streamwin.families.{CumulateWindowSpec, SessionWindowSpec, TimeWindowSpec}
import streamwin.spec.{WindowColumns, WindowSpec}

/**
 * A stream's time windows and sessions without policies are fed slices pre-aggregated per micro-batch (Spark's
 * partial aggregation per key and slice, see `WindowSpec.streamSlice`) instead of rows. This suite
 * drives both feeds the way the streaming processor does (micro-batches cut at random, rows late
 * by up to 25 s across micro-batches, Spark's watermark with a random delay, the engine kept
 * between micro-batches (fed slices: as the state rows of streamwin's stateful operator, in a store of
 * UnsafeRows), timers at its deadline, a closing no-data batch) and requires the same
 * windows in the same order, the same late and skipped rows, and the same deadlines. Each slice is
 * split into one to three partial rows, as several map tasks send them.
 */
class StreamSliceParitySuite extends AnyFunSuite {
  import EngineParitySuite.{S, generate, input, k, ts, v, timeWindow, Case}

  private val functions: Seq[AggregateFunction] = Seq(Sum(v), Count(v), Max(v))
  private val results = functions.map(f => AttributeReference(f.prettyName, f.dataType)())
  private val output: Seq[Attribute] = k +: timeWindow +: results

  private val families: Seq[(String, WindowSpec)] = Seq(
    "tumbling 10s" -> TimeWindowSpec("sw_tumbling", 10 * S, 10 * S, 0),
    "tumbling 6s offset -2s" -> TimeWindowSpec("sw_tumbling", 6 * S, 6 * S, -2 * S),
    "hopping 10s step 4s" -> TimeWindowSpec("sw_hopping", 10 * S, 4 * S, 0),
    "hopping 9s step 3s offset 1s" -> TimeWindowSpec("sw_hopping", 9 * S, 3 * S, 1 * S),
    "hopping 3s step 7s (gaps)" -> TimeWindowSpec("sw_hopping", 3 * S, 7 * S, 0),
    "timer 10s (ingest_time)" -> TimeWindowSpec("sw_timer", 10 * S, 10 * S, 0),
    "cumulate 12s step 3s" -> CumulateWindowSpec(12 * S, 3 * S, 0),
    "cumulate 10s step 2s offset 3s" -> CumulateWindowSpec(10 * S, 2 * S, 3 * S),
    "cumulate 5s step 5s" -> CumulateWindowSpec(5 * S, 5 * S, 0),
    "session 5s" -> SessionWindowSpec(5 * S, dynamicGap = false, None),
    "session 2s" -> SessionWindowSpec(2 * S, dynamicGap = false, None))

  for ((label, spec) <- families) {
    test(s"slices fed per micro-batch = rows fed per micro-batch: $label, 12 seeds") {
      val outputs = (1 to 12).map { seed =>
        val c = Case("slices", s"$label | seed $seed", spec, WindowPolicies.Default, select = false, ts, Some(ts),
          tiesAllowed = true, eventTime = true, (20, 60), seqTies = false, flagOneIn = 5)
        val rows = generate(c)
        val rnd = new Random(seed * 7919L)
        val chunks = 2 + rnd.nextInt(4)
        val cuts = (Seq(0, rows.size) ++ rnd.shuffle((1 until rows.size).toList).take(chunks - 1)).sorted
        // A last micro-batch far ahead moves the watermark past every window, so keys are forgotten.
        val latest = rows.filterNot(_.isNullAt(3)).map(_.getLong(3)).max
        val batches = cuts.sliding(2).map(p => rows.slice(p(0), p(1))).toSeq :+ Seq(new GenericInternalRow(Array[Any](
          rows.size.toLong, UTF8String.fromString("zz"), rows.size.toLong, latest + 1000 * S, 1L, false, 0.0, null)))
        val delay = Seq(0L, 2 * S, 5 * S, 12 * S)(rnd.nextInt(4))
        // A restarted run knows no bound on its keys' progress until a micro-batch scanned them all.
        val boundFrom = rnd.nextInt(3)
        val byRows = new Stream(c, slices = false).run(batches, delay, rnd.nextLong())
        val sliced = new Stream(c, slices = true)
        val bySlices = sliced.run(batches, delay, rnd.nextLong(), boundFrom)
        withClue(s"seed $seed, ${batches.size} micro-batches, watermark delay ${delay / S} s, bound from ${boundFrom}: ") {
          assert(bySlices.mkString("\n") == byRows.mkString("\n"))
        }
        (byRows, sliced.settledRows, sliced.sharedSliceRows, sliced.forgotten)
      }
      // The cases are not vacuous: windows close and rows are late.
      assert(outputs.exists(_._1.exists(_.contains(" final "))))
      assert(outputs.exists(_._1.exists(l => l.startsWith("~") && !l.endsWith("/0"))), "some rows are late")
      // Sessions: rows beyond every key's progress went in gap-long slices.
      if (spec.isInstanceOf[SessionWindowSpec]) assert(outputs.map(_._2).sum > 0)
      assert(outputs.map(_._4).sum > 0, "keys are forgotten")
      // Overlapping windows keep their slices as state rows; other windows keep one row per window.
      spec match {
        case t: TimeWindowSpec => assert((outputs.map(_._3).sum > 0) == t.overlapping)
        case c: CumulateWindowSpec => assert((outputs.map(_._3).sum > 0) == (c.size > c.step))
        case _ =>
      }
    }
  }

  test("sessions: a gap-long bucket holding a late row and a timely one is sliced per timestamp, not merged") {
    // Key a's session [105 s, 115 s) makes its progress 105 s; the watermark is only 85 s. Of a@91 and a@97
    // (one bucket, [90 s, 100 s)), 91 reaches 101 s, before the session: late; 97 joins it.
    val spec = SessionWindowSpec(10 * S, dynamicGap = false, None)
    val c = Case("slices", "straddling bucket", spec, WindowPolicies.Default, select = false, ts, Some(ts),
      tiesAllowed = true, eventTime = true, (1, 1), seqTies = false, flagOneIn = 5)
    def row(id: Long, key: String, seconds: Long, value: Long): InternalRow = new GenericInternalRow(Array[Any](
      id, UTF8String.fromString(key), id, seconds * S, value, false, 0.0, null))
    // Key b moves the watermark past a's session.
    val batches = Seq(Seq(row(0, "a", 105, 1)), Seq(row(1, "a", 91, 10), row(2, "a", 97, 100)), Seq(row(3, "b", 200, 1000)))
    val byRows = new Stream(c, slices = false).run(batches, 20 * S, 1L)
    assert(byRows.exists(_.startsWith("a 97.0..115.0 final 101 ")), byRows.mkString("\n"))
    assert(byRows.contains("~2 a dl=115000000 n=0/1"), byRows.mkString("\n"))
    // The bound is the key's progress (105 s), not the watermark: both rows stay per timestamp.
    val sliced = new Stream(c, slices = true)
    assert(sliced.run(batches, 20 * S, 1L, boundFrom = 0).mkString("\n") == byRows.mkString("\n"))
    assert(sliced.settledRows == 1) // a@105, in bucket [100 s, 110 s) (b@200 starts its bucket)
  }

  test("a stream's slices are its family's: none under policies, processing time, max_duration or a dynamic gap") {
    val columns = WindowColumns(ts, None, None)
    val hopping = TimeWindowSpec("sw_hopping", 10 * S, 4 * S, 0)
    assert(hopping.streamSlice(WindowPolicies.Default, columns).isDefined)
    assert(hopping.streamSlice(WindowPolicies.Default.copy(lateness = S), columns).isEmpty)
    assert(hopping.streamSlice(WindowPolicies.Default.copy(latePassthrough = true), columns).isEmpty)
    assert(hopping.streamSlice(WindowPolicies.Default.copy(emitUpdate = true), columns).isEmpty)
    assert(hopping.streamSlice(WindowPolicies.Default.copy(arrivalOrder = true), WindowColumns(ts, None, Some(v))).isEmpty)
    assert(TimeWindowSpec("sw_timer", 10 * S, 10 * S, 0, processingTime = true)
      .streamSlice(WindowPolicies.Default, columns).isEmpty)
    assert(CumulateWindowSpec(60 * S, 10 * S, 0).streamSlice(WindowPolicies.Default, columns).isDefined)
    assert(CumulateWindowSpec(60 * S, 10 * S, 0).streamSlice(WindowPolicies.Default.copy(lateness = S), columns).isEmpty)
    assert(SessionWindowSpec(5 * S, dynamicGap = false, None).streamSlice(WindowPolicies.Default, columns).isDefined)
    assert(SessionWindowSpec(5 * S, dynamicGap = false, Some(20 * S)).streamSlice(WindowPolicies.Default, columns).isEmpty)
    assert(SessionWindowSpec(0, dynamicGap = true, None).streamSlice(WindowPolicies.Default, columns).isEmpty)
    assert(SessionWindowSpec(5 * S, dynamicGap = false, None)
      .streamSlice(WindowPolicies.Default.copy(emitUpdate = true), columns).isEmpty)
  }

  /** One feed of a case, micro-batch by micro-batch, as the streaming processor calls the engine. */
  private final class Stream(c: Case, slices: Boolean) {
    private val lines = ArrayBuffer[String]()
    private var key: InternalRow = null
    private val slicing = c.spec.streamSlice(c.policies, WindowColumns(ts, None, None)).get
    private val withCount = functions ++ slicing.hidden :+ Count(Literal(1))
    // The partial aggregation's output: key, slice start, each function's buffer.
    private val slice = AttributeReference("_sw_slice", LongType)()
    private val partialAttrs: Seq[Attribute] = Seq(k, slice) ++ withCount.flatMap(_.inputAggBufferAttributes)
    private val blueprint =
      if (slices) WindowEngineBlueprint(c.spec, c.policies, partialAttrs, output, Some((withCount, withCount.map(_ => None))),
        slices = true)
      else WindowEngineBlueprint(c.spec, c.policies, input, output, Some((functions, functions.map(_ => None))))
    private var sliceOf = UnsafeProjection.create(Seq(slicing.slice), input)
    private val fineSliceOf = UnsafeProjection.create(Seq(slicing.slice), input)
    /** Rows that went into a settled slice (a coarser one than their fine slice). */
    var settledRows = 0L
    /** State rows seen that span less than a window: shared slices of overlapping windows. */
    var sharedSliceRows = 0L
    /** Keys forgotten once the watermark passed all they held. */
    var forgotten = 0

    /**
     * The store holds a record for each key the stream keeps and nothing for a forgotten one; a record
     * lists exactly its key's rows (a row it does not list would never be read or removed again).
     */
    private def checkStore(keys: collection.Set[String]): Unit = {
      val listed = mutable.Map[String, Seq[Long]]()
      val stored = mutable.Map[String, ArrayBuffer[Long]]()
      rowStore.foreach { (key, value) =>
        val name = key.getUTF8String(0).toString
        if (key.isNullAt(1)) listed(name) = value.getStruct(0, 3).getArray(2).toLongArray().toSeq
        else {
          stored.getOrElseUpdate(name, ArrayBuffer()) += key.getLong(1)
          c.spec match {
            case t: TimeWindowSpec if value.getStruct(1, 3).getLong(0) - key.getLong(1) < t.size => sharedSliceRows += 1
            case c: CumulateWindowSpec if value.getStruct(1, 3).getLong(0) - key.getLong(1) < c.size => sharedSliceRows += 1
            case _ =>
          }
        }
      }
      assert(listed.keySet == keys, "a record for each key kept, none for a forgotten one")
      listed.foreach { case (name, starts) => assert(stored.get(name).map(_.sorted.toSeq).getOrElse(Nil) == starts, name) }
      assert(stored.keySet.subsetOf(listed.keySet), "rows of a key without a record")
    }
    private val toUnsafe = UnsafeProjection.create(input.map(_.dataType).toArray)
    private val partialRow = UnsafeProjection.create(partialAttrs.map(_.dataType).toArray)
    private var accepted, rejected, nullOrders = 0L

    private def render(r: InternalRow): Unit = {
      val w = r.getStruct(1, 3)
      def long(i: Int) = if (r.isNullAt(i)) "null" else r.getLong(i).toString
      lines += s"${r.getUTF8String(0)} ${w.getLong(0) / 1e6}..${w.getLong(1) / 1e6} ${w.getUTF8String(2)} " +
        s"${long(2)} ${long(3)} ${long(4)}"
    }

    /** The partial rows map tasks would send for one key's rows of a micro-batch (a slice split among 1-3 tasks). */
    private def partials(rowsOfKey: Seq[InternalRow], rnd: Random): Seq[InternalRow] = {
      val evaluator = new AggregateEvaluator(withCount, withCount.map(_ => None), input)
      rowsOfKey.groupBy { r =>
        val s = sliceOf(r)
        if (s.isNullAt(0)) None
        else {
          if (s.getLong(0) != fineSliceOf(r).getLong(0)) settledRows += 1
          Some(s.getLong(0))
        }
      }.toSeq
        .flatMap { case (start, rs) =>
          rs.groupBy(_ => rnd.nextInt(1 + rnd.nextInt(3))).values.map { part =>
            val buffer = evaluator.newBuffer()
            part.foreach(evaluator.update(buffer, _))
            partialRow(new JoinedRow(new GenericInternalRow(Array[Any](key.getUTF8String(0), start.orNull)), buffer)).copy()
          }
        }
        .sortBy(_ => rnd.nextInt()) // as they reach the processor: in no order
    }

    // Slice-fed keys' state rows (StoredSliceWindows), in a store of UnsafeRows as Spark's keeps them.
    private val rowStore = new MapRowStore
    private val keyRow = UnsafeProjection.create(Seq(k), Seq(k))

    /**
     * @param boundFrom the first micro-batch whose slices know a bound on the keys' progress (the latest
     *                  any record was written with, or the watermark), as the operator's scans give it
     */
    def run(batches: Seq[Seq[InternalRow]], delay: Long, seed: Long, boundFrom: Int = Int.MaxValue): Seq[String] = {
      val rnd = new Random(seed)
      var latestProgress = Long.MinValue
      val state = mutable.TreeMap[String, Option[Long]]()
      val keyRows = new MapKeyRows
      var maxSeen: Option[Long] = None
      val tsOrdinal = input.indexOf(ts)
      for ((batch, b) <- (batches.map(Some(_)) :+ None).zipWithIndex) {
        val watermark = maxSeen.map(m => Math.floorDiv(m, 1000L) - delay / 1000L).filter(_ > 0).map(_ * 1000L)
        val wiring = blueprint.wire(() => key, render) // a new task
        val codec = wiring.codec(c.order.dataType)
        val rowFeeder = new EngineFeeder(c.spec, input, c.order, c.signal, c.tiesAllowed)
        val sliceFeeder = new SliceFeeder(c.spec, wiring.evaluator.get, sliceOrdinal = 1, inOrder = false)
        val access = new StoredSliceWindows(Seq(k), wiring.evaluator.get).access()
        var loaded: access.Loaded = null
        val bound = Some(math.max(latestProgress, watermark.getOrElse(Long.MinValue))).filter(_ => b >= boundFrom)
        sliceOf = UnsafeProjection.create(Seq(slicing.start(bound)), input)

        def visit(name: String, rowsOfKey: Seq[InternalRow], expired: Option[Long]): Unit = {
          key = new GenericInternalRow(Array[Any](UTF8String.fromString(name)))
          val engine: RowWindowEngine = state.get(name).filter(_ => !slices) match {
            case Some(_) => codec.load(keyRows.of(name)).get
            case None =>
              val e = wiring.newEngine(); e.startKey()
              if (slices) loaded = access.load(rowStore, keyRow(key).copy(), e.asInstanceOf[KeyedWindowOperator])
              e
          }
          // The counters of this call (typed state does not keep them: the processor adds each call's to the metrics).
          val (emittedBefore, lateBefore) = (engine.windowsEmitted, engine.rowsLate)
          watermark.foreach(engine.advanceTo)
          if (slices) {
            val operator = engine.asInstanceOf[KeyedWindowOperator]
            partials(rowsOfKey, rnd).sortBy(r => if (r.isNullAt(1)) Long.MinValue else r.getLong(1))
              .foreach(sliceFeeder.partial(operator, _))
            sliceFeeder.flush(operator)
          } else {
            rowFeeder.startKey()
            rowsOfKey.map(toUnsafe(_).copy()).sortBy(r => if (r.isNullAt(tsOrdinal)) Long.MinValue else r.getLong(tsOrdinal))
              .foreach(rowFeeder.feed(engine, _))
          }
          val deadline = engine.nextDeadline
          val forget = watermark.exists(engine.forgettable)
          if (slices) {
            // The state rows, written as the operator writes them (the record goes once nothing is open).
            access.save(rowStore, keyRow(key).copy(), engine.asInstanceOf[KeyedWindowOperator], loaded, deadline, forget)
          }
          if (forget) {
            forgotten += 1
            if (!slices) codec.forget(engine, keyRows.of(name))
            state.remove(name)
          } else {
            val timer = Some(deadline).filter(_ != Long.MaxValue)
              .map(d => Math.floorDiv(d, 1000L) + (if (Math.floorMod(d, 1000L) == 0) 0 else 1)).filterNot(expired.contains)
            if (!slices) codec.save(engine, keyRows.of(name), deadline, Long.MaxValue)
            state(name) = timer
          }
          lines += s"~${b + 1} $name dl=$deadline n=${engine.windowsEmitted - emittedBefore}/${engine.rowsLate - lateBefore}"
          engine.startKey()
        }
        val byKey = batch.getOrElse(Nil).groupBy(r => r.getUTF8String(1).toString)
        for (name <- byKey.keys.toSeq.sorted) visit(name, byKey(name), None)
        watermark.foreach { w =>
          for ((name, Some(ms)) <- state.toSeq if ms * 1000L <= w) visit(name, Nil, Some(ms))
        }
        if (slices) checkStore(state.keySet)
        latestProgress = math.max(latestProgress, access.latestProgress)
        val fed = if (slices) sliceFeeder else rowFeeder
        accepted += fed.accepted
        rejected += fed.rejected
        nullOrders += fed.nullOrders
        batch.getOrElse(Nil).foreach { r =>
          if (!r.isNullAt(tsOrdinal)) maxSeen = Some(maxSeen.fold(r.getLong(tsOrdinal))(math.max(_, r.getLong(tsOrdinal))))
        }
      }
      lines += s"= fed=$accepted/$rejected/$nullOrders"
      lines.toSeq
    }
  }
}

/** A state store of UnsafeRows in a map, keeping copies, as Spark's state store providers do. */
final class MapRowStore extends RowStore {
  private val rows = mutable.LinkedHashMap[UnsafeRow, UnsafeRow]()
  override def get(key: UnsafeRow): UnsafeRow = rows.get(key).orNull
  override def put(key: UnsafeRow, value: UnsafeRow): Unit = rows(key.copy()) = value.copy()
  override def remove(key: UnsafeRow): Unit = rows.remove(key)
  override def foreach(f: (UnsafeRow, UnsafeRow) => Unit): Unit = rows.foreach { case (k, v) => f(k, v) }
  def size: Int = rows.size
}

/**
 * A stream's kept rows ([[streamwin.engine.KeptRowStore]]) in a map, per key name, copied as Spark's stores
 * copy them.
 */
final class MapKeptRows(inline: Long = 0L) {
  private val rows = mutable.HashMap[(String, Long, Long), UnsafeRow]()
  /** The kept rows of one key. */
  def of(key: String): streamwin.engine.KeptRowStore = new streamwin.engine.KeptRowStore {
    override def inlineRows: Long = inline
    override def get(bag: Long, seq: Long): UnsafeRow = rows.get((key, bag, seq)).orNull
    override def put(bag: Long, seq: Long, row: UnsafeRow): Unit = rows((key, bag, seq)) = row.copy()
    override def remove(bag: Long, seq: Long): Unit =
      if (rows.remove((key, bag, seq)).isEmpty) throw new IllegalStateException(s"no row $seq of bag $bag of $key to remove")
  }
  def size: Int = rows.size
}

/**
 * A stream's state rows of windows fed rows ([[streamwin.engine.KeyStateRows]]) in a map, per key name, copied
 * as Spark's stores copy them: what a test's engines put into their state store.
 */
final class MapKeyRows(inline: Long = 0L) {
  import streamwin.engine.{KeyStateRows, StatePart}
  private val rows = mutable.HashMap[(String, StatePart, Long, Long), UnsafeRow]()
  /** The state rows of one key. */
  def of(key: String): KeyStateRows = new KeyStateRows {
    override def inlineRows: Long = inline
    override def get(part: StatePart, id: Long, seq: Long): UnsafeRow = rows.get((key, part, id, seq)).orNull
    override def put(part: StatePart, id: Long, seq: Long, value: UnsafeRow): Unit = rows((key, part, id, seq)) = value.copy()
    override def remove(part: StatePart, id: Long, seq: Long): Unit =
      if (rows.remove((key, part, id, seq)).isEmpty) throw new IllegalStateException(s"no ${part.name} $id/$seq of $key to remove")
  }
  /** How many state rows `key` has (of `part`, or of any). */
  def count(key: String, part: Option[StatePart] = None): Int =
    rows.keys.count(k => k._1 == key && part.forall(_ == k._2))
  /** How many kept rows all keys have. */
  def keptRows: Int = rows.keys.count(_._2 == StatePart.Row)
  def size: Int = rows.size
  /** The bytes of `key`'s state rows. */
  def bytes(key: String): Long = rows.iterator.filter(_._1._1 == key).map(_._2.getSizeInBytes.toLong).sum
  /** The values of `key`'s state rows. */
  def values(key: String): Seq[UnsafeRow] = rows.iterator.filter(_._1._1 == key).map(_._2).toSeq
  /** Removes one state row (a damaged store). */
  def drop(key: String, part: StatePart): Unit = rows.keys.find(k => k._1 == key && k._2 == part).foreach(rows.remove)
  /** Replaces `key`'s record value. */
  def replaceRecord(key: String, value: UnsafeRow): Unit = rows((key, StatePart.Record, 0L, 0L)) = value.copy()
  def record(key: String): UnsafeRow = rows((key, StatePart.Record, 0L, 0L))
}
