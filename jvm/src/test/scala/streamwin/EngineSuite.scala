package streamwin

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, GenericInternalRow, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate._
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.types.{DoubleType, LongType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import streamwin.engine._
import streamwin.execution.EngineWiring
import streamwin.families.{CountRecord, CountWindowSpec, SessionWindowSpec, TimeWindowSpec}

/** The engine on its own, against naive models, with Spark's real aggregate functions. */
class EngineSuite extends AnyFunSuite {
  // State rows of the engines the tests store (one key, "k"), as a stream's state store holds them.
  private val keyRows = new MapKeyRows
  private val v = AttributeReference("v", LongType)()
  private def functions: Seq[AggregateFunction] =
    Seq(Sum(v), Max(v), Min(v), First(v, ignoreNulls = false), Last(v, ignoreNulls = false), CollectList(v), Count(v))
  private def evaluator = new AggregateEvaluator(functions, functions.map(_ => None), Seq(v))
  private def row(x: Long): InternalRow = new GenericInternalRow(Array[Any](x))

  /** (sum, max, min, first, last, list, count) of values, as the evaluator reports them. */
  private def expected(xs: Seq[Long]): Seq[Any] =
    if (xs.isEmpty) Seq(null, null, null, null, null, Seq.empty, 0L)
    else Seq(xs.sum, xs.max, xs.min, xs.head, xs.last, xs, xs.size.toLong)

  private def actual(r: InternalRow): Seq[Any] = Seq(
    if (r.isNullAt(0)) null else r.getLong(0), if (r.isNullAt(1)) null else r.getLong(1),
    if (r.isNullAt(2)) null else r.getLong(2), if (r.isNullAt(3)) null else r.getLong(3),
    if (r.isNullAt(4)) null else r.getLong(4), r.getArray(5).toLongArray().toSeq, r.getLong(6))

  /** The window operator over `spec`'s family, fed slices (a groupBy without policies), emitting (start, end, values). */
  private def sliceOperator(spec: streamwin.spec.WindowSpec, ev: AggregateEvaluator, emit: (Long, Long, InternalRow) => Unit)
      : KeyedWindowOperator = {
    val out = new WindowOutput {
      override def values(start: Any, end: Any, kind: UTF8String, values: InternalRow): Unit = {
        assert(kind == WindowKind.Final)
        emit(start.asInstanceOf[Long], end.asInstanceOf[Long], values)
      }
      override def rows(start: Any, end: Any, kind: UTF8String, rows: RowRun): Unit = fail("slices hold no rows")
    }
    val contents = new ContentsFactory(Some(ev), out, () => fail("slices keep no rows"))
    val op = new KeyedWindowOperator(spec.family(WindowPolicies.Default), WindowTriggers.Default, contents,
      new InMemoryWindowState(contents))
    op.startKey()
    op
  }

  private def sliceOf(time: Long, first: Long, last: Long, reach: Long, buffer: InternalRow): Slice = {
    val s = new Slice
    s.time = time; s.first = first; s.last = last; s.reach = reach; s.buffer = buffer; s.rows = 1
    s
  }

  test("new buffers are initialised and independent of each other and of the results (decimal and object slots too)") {
    val d = AttributeReference("d", org.apache.spark.sql.types.DecimalType(20, 2))()
    val fs: Seq[AggregateFunction] = Seq(Sum(v), Max(v), Sum(d), CollectList(v), Count(v))
    val ev = new AggregateEvaluator(fs, fs.map(_ => None), Seq(v, d))
    def in(x: Long) = new GenericInternalRow(Array[Any](x, org.apache.spark.sql.types.Decimal(x * 100 + 1, 20, 2)))
    def values(r: InternalRow): Seq[Any] = Seq(if (r.isNullAt(0)) null else r.getLong(0), if (r.isNullAt(1)) null else r.getLong(1),
      if (r.isNullAt(2)) null else r.getDecimal(2, 20, 2).toJavaBigDecimal, r.getArray(3).toLongArray().toSeq, r.getLong(4))
    val empty = values(ev.evaluate(ev.newBuffer()))
    assert(empty == Seq(null, null, null, Seq.empty, 0L))
    val a = ev.newBuffer()
    Seq(3L, 9L).foreach(x => ev.update(a, in(x)))
    val resultA = ev.evaluate(a)
    val b = ev.newBuffer()
    assert(values(ev.evaluate(b)) == empty, "a buffer made after another was updated starts empty")
    ev.update(b, in(5L))
    ev.merge(b, a)
    assert(values(ev.evaluate(b)) == Seq(17L, 9L, new java.math.BigDecimal("17.03"), Seq(5L, 3L, 9L), 3L))
    assert(values(resultA) == Seq(12L, 9L, new java.math.BigDecimal("12.02"), Seq(3L, 9L), 2L),
      "a result does not change with the buffers after it")
    val blank = ev.blankBuffer()
    (0 until ev.bufferWidth).foreach(i => blank.update(i, a.get(i, ev.bufferTypes(i))))
    assert(values(ev.evaluate(blank)) == values(resultA), "a blank buffer holds what its caller sets")
  }

  test("FIFO aggregate equals the aggregate of the queue after any push/evict sequence") {
    val rnd = new Random(7)
    for (_ <- 1 to 30) {
      val ev = evaluator
      val fifo = new FifoAggregator(ev)
      val queue = scala.collection.mutable.Queue[Long]()
      for (_ <- 1 to 300) {
        if (queue.nonEmpty && rnd.nextInt(3) == 0) { fifo.evictOldest(); queue.dequeue() }
        else {
          val x = rnd.nextInt(1000).toLong - 500
          val b = ev.newBuffer(); ev.update(b, row(x)); fifo.push(b); queue.enqueue(x)
        }
        assert(fifo.size == queue.size)
        assert(actual(fifo.result()) == expected(queue.toSeq))
      }
    }
  }

  test("FIFO merges do not grow with the window: O(1) amortised per element") {
    var merges = 0L
    val counting = new AggregateEvaluator(Seq(Sum(v)), Seq(None), Seq(v)) {
      override def merge(buffer: InternalRow, other: InternalRow): Unit = { merges += 1; super.merge(buffer, other) }
    }
    for (window <- Seq(10, 1000)) {
      merges = 0
      val fifo = new FifoAggregator(counting)
      val n = 20000
      for (i <- 0 until n) {
        val b = counting.newBuffer(); counting.update(b, row(i)); fifo.push(b)
        if (fifo.size > window) fifo.evictOldest()
        fifo.result()
      }
      assert(merges <= 4L * n, s"window $window: $merges merges for $n elements")
    }
  }

  /** A count window engine (groupBy collect_list(v)) recording (start, end, kind, members). */
  private def countEngine(spec: CountWindowSpec): (RowWindowEngine, scala.collection.mutable.ArrayBuffer[(Any, Any, String, Seq[Long])]) = {
    val members = CollectList(v)
    val window = AttributeReference("window", org.apache.spark.sql.types.StructType.fromDDL(
      "start bigint, end bigint, kind string"))()
    val blueprint = streamwin.execution.WindowEngineBlueprint(spec, WindowPolicies.Default,
      Seq(v), Seq(window, AttributeReference("members", members.dataType)()), Some((Seq(members), Seq(None))))
    val out = scala.collection.mutable.ArrayBuffer[(Any, Any, String, Seq[Long])]()
    val engine = blueprint.wire(() => InternalRow.empty, { r =>
      val w = r.getStruct(0, 3)
      out += ((w.getLong(0), w.getLong(1), w.getUTF8String(2).toString, r.getArray(1).toLongArray().toSeq))
    }).newEngine()
    (engine, out)
  }

  test("count engine: windows start every step rows and hold size rows; the rest is partial") {
    for (size <- 1 to 6; step <- 1 to size; n <- 0 to 14) {
      val (engine, recorded) = countEngine(CountWindowSpec(size, step))
      engine.startKey()
      (0 until n).foreach(i => engine.addRow(i * 10L, null, row(i)))
      engine.finishKey()
      val model = (0 until n by step).map { s =>
        val members = (s until math.min(s + size, n)).map(_.toLong)
        (members.head * 10, members.last * 10, if (members.size == size) "final" else "partial", members)
      }
      assert(recorded.map(w => (w._1, w._2, w._3, w._4)).sortBy(w => (w._1.asInstanceOf[Long], w._3)) ==
        model.sortBy(w => (w._1, w._3)), s"size=$size step=$step n=$n")
      assert(engine.windowsEmitted == model.size)
      assert(engine.rowsInNoWindow == 0, s"start-aligned windows hold every row: size=$size step=$step n=$n")
      assert(engine.peakBuffered <= size)
    }
  }

  test("KX count[10] on til 25: two full windows, five rows emitted as partial on teardown") {
    val (engine, recorded) = countEngine(CountWindowSpec(10, 10))
    engine.startKey()
    (0 until 25).foreach(i => engine.addRow(i.toLong, null, row(i)))
    assert(recorded.map(_._3) == Seq("final", "final"))
    engine.finishKey()
    assert(recorded.map(w => (w._3, w._4.size)) == Seq(("final", 10), ("final", 10), ("partial", 5)))
  }

  /** Replays seconds `times` (value = time) through aligned windows; outputs (start s, kind, members s). */
  private def replay(size: Long, step: Long, policies: WindowPolicies, times: Seq[Long]): (Seq[(Long, String, Seq[Long])], RowWindowEngine) = {
    val s = 1000000L
    val members = CollectList(v)
    val window = AttributeReference("window", org.apache.spark.sql.types.StructType.fromDDL(
      "start bigint, end bigint, kind string"))()
    val blueprint = streamwin.execution.WindowEngineBlueprint(TimeWindowSpec("sw_hopping", size * s, step * s, 0), policies,
      Seq(v), Seq(window, AttributeReference("members", members.dataType)()), Some((Seq(members), Seq(None))))
    val out = scala.collection.mutable.ArrayBuffer[(Long, String, Seq[Long])]()
    val engine = blueprint.wire(() => InternalRow.empty, { r =>
      val w = r.getStruct(0, 3)
      out += ((w.getLong(0) / s, w.getUTF8String(2).toString, r.getArray(1).toLongArray().toSeq))
    }).newEngine()
    engine.startKey()
    times.foreach(t => engine.addRow(t, t * s, row(t)))
    engine.finishKey()
    (out.toSeq, engine)
  }

  test("KX lateness: 10 s windows, 2 s lateness, rows one by one at 0 4 3 8 10 1 12 9 20 18 25") {
    val (out, engine) = replay(10, 10, WindowPolicies(arrivalOrder = true, lateness = 2000000L),
      Seq(0L, 4, 3, 8, 10, 1, 12, 9, 20, 18, 25))
    assert(out == Seq((0L, "final", Seq(0L, 4, 3, 8, 1)), (10L, "final", Seq(10L, 12, 18)), (20L, "final", Seq(20L, 25))))
    assert(engine.rowsLate == 1 && engine.rowsPassedThrough == 0)
  }

  test("KX passthrough: late rows come out as late groups before the next windows close") {
    val (out, engine) = replay(10, 10, WindowPolicies(arrivalOrder = true, latePassthrough = true),
      Seq(60L, 68, 70, 0, 15, 30, 83, 84))
    assert(out == Seq((60L, "final", Seq(60L, 68)), (0L, "late", Seq(0L)), (10L, "late", Seq(15L)), (30L, "late", Seq(30L)),
      (70L, "final", Seq(70L)), (80L, "final", Seq(83L, 84))))
    assert(engine.rowsPassedThrough == 3 && engine.rowsLate == 0)
  }

  test("count trigger, update emission and empty windows") {
    assert(replay(100, 100, WindowPolicies(countTrigger = 10), (0L until 25))._1.map(w => (w._2, w._3.size)) ==
      Seq(("partial", 10), ("partial", 10), ("final", 5)))
    assert(replay(10, 10, WindowPolicies(emitUpdate = true), Seq(1L, 2, 11))._1 == Seq((0L, "update", Seq(1L)),
      (0L, "update", Seq(1L, 2)), (10L, "update", Seq(11L)), (0L, "final", Seq(1L, 2)), (10L, "final", Seq(11L))))
    assert(replay(10, 10, WindowPolicies(emitEmpty = true), Seq(0L, 35))._1 ==
      Seq((0L, "final", Seq(0L)), (10L, "final", Nil), (20L, "final", Nil), (30L, "final", Seq(35L))))
    // Hopping: a row late for some of its windows still enters the open ones.
    val (hop, engine) = replay(10, 5, WindowPolicies(arrivalOrder = true), Seq(0L, 12, 7))
    assert(hop == Seq((-5L, "final", Seq(0L)), (0L, "final", Seq(0L)), (5L, "final", Seq(12L, 7)), (10L, "final", Seq(12L))))
    assert(engine.rowsLate == 0)
  }

  test("a window function's policies compose into triggers: the first that fires decides, completion outputs final last") {
    def outputs(t: WindowTriggers, held: Long, completes: Boolean): Seq[String] = {
      val out = scala.collection.mutable.ArrayBuffer[String]()
      t.afterRow(held, completes)(kind => out += kind.toString, out += "purge")
      out.toSeq
    }
    val both = WindowTriggers.of(WindowPolicies(countTrigger = 3, emitUpdate = true))
    assert(both.chain.toSeq == Seq(CountTrigger(3), UpdateTrigger))
    // Below the count: an update; at it: partial and a purge, not also an update; a completing row: update, then final.
    assert(outputs(both, 2, completes = false) == Seq("update"))
    assert(outputs(both, 3, completes = false) == Seq("partial", "purge"))
    assert(outputs(both, 3, completes = true) == Seq("update", "final"))
    assert(outputs(WindowTriggers.Default, 5, completes = false).isEmpty)
    assert(outputs(WindowTriggers.Default, 5, completes = true) == Seq("final"))
    // Late groups: only the count trigger fires on them (as `late`); the late-row evictor keeps or drops.
    val late = scala.collection.mutable.ArrayBuffer[String]()
    both.afterLateRow(3)(kind => late += kind.toString, late += "purge")
    both.afterLateRow(2)(kind => late += kind.toString, late += "purge")
    assert(late == Seq("late", "purge"))
    assert(!both.lateRows.keeps && WindowTriggers.of(WindowPolicies(latePassthrough = true)).lateRows.keeps)
    // emit_every: event times at multiples of the period plus the alignment; the first move from no progress passes one.
    val every = WindowTriggers.of(WindowPolicies(emitEvery = 10, emitAlignment = 3))
    assert(every.firesInEventTime && !both.firesInEventTime)
    assert(every.nextEarlyTime(3) == 13 && every.nextEarlyTime(12) == 13 && every.nextEarlyTime(-8) == -7)
    assert(every.passesEarlyTime(12, 13) && !every.passesEarlyTime(13, 22) && every.passesEarlyTime(Long.MinValue, 0))
    assert(every.nextEarlyTime(Long.MaxValue - 1) == Long.MaxValue && !both.passesEarlyTime(0, 100))
    assert(intercept[IllegalArgumentException](CountTrigger(0)).getMessage.contains("one row or more"))
  }

  /**
   * idle_timeout as a streaming host drives it: visits at processing times (s) with the rows of each
   * (value = event time s; count windows take the row index as order), then the end of the input.
   */
  private def idleVisits(spec: streamwin.spec.WindowSpec, policies: WindowPolicies,
      visits: Seq[(Long, Seq[Long])]): (Seq[(String, Seq[Long])], RowWindowEngine, Seq[Long]) = {
    val s = 1000000L
    val members = CollectList(v)
    val window = AttributeReference("window", org.apache.spark.sql.types.StructType.fromDDL(
      "start bigint, end bigint, kind string"))()
    val blueprint = streamwin.execution.WindowEngineBlueprint(spec, policies,
      Seq(v), Seq(window, AttributeReference("members", members.dataType)()), Some((Seq(members), Seq(None))))
    val out = scala.collection.mutable.ArrayBuffer[(String, Seq[Long])]()
    val engine = blueprint.wire(() => InternalRow.empty, { r =>
      out += ((r.getStruct(0, 3).getUTF8String(2).toString, r.getArray(1).toLongArray().toSeq))
    }).newEngine()
    val deadlines = scala.collection.mutable.ArrayBuffer[Long]()
    engine.startKey()
    var index = 0L
    visits.foreach { case (at, times) =>
      engine.visitStarts()
      engine.timeOut(at * s, policies.idleTimeout)
      times.foreach { t =>
        val timed = !spec.isInstanceOf[CountWindowSpec]
        engine.addRow(if (timed && !policies.arrivalOrder) t * s else index, if (timed) t * s else null, row(t))
        index += 1
      }
      engine.visitEnded(at * s)
      val deadline = engine.idleDeadline(policies.idleTimeout)
      deadlines += (if (deadline == Long.MaxValue) -1L else deadline / s)
    }
    engine.finishKey()
    (out.toSeq, engine, deadlines.toSeq)
  }

  test("idle_timeout (KX's temporal timeout): rows held that long with nothing output go out as partial, flushed") {
    val s = 1000000L
    val idle = WindowPolicies(idleTimeout = 5 * s)
    // 100 s windows: rows at visits 1000 and 1003 wait; at 1005 they time out; the window goes on.
    val (out, engine, deadlines) = idleVisits(TimeWindowSpec("sw_tumbling", 100 * s, 100 * s, 0), idle,
      Seq(1000L -> Seq(1L, 2L), 1003L -> Seq(3L), 1005L -> Nil, 1006L -> Seq(4L), 1008L -> Nil))
    assert(out == Seq(("partial", Seq(1L, 2L, 3L)), ("final", Seq(4L))))
    // The timeout counts from the first row held without output, not from the last row.
    assert(deadlines == Seq(1005L, 1005L, -1L, 1011L, 1011L))
    assert(engine.windowsEmitted == 2)
    // An output starts the quiet period again: the row at 150 s closes [0, 100) at visit 1004.
    val (closing, _, closingDeadlines) = idleVisits(TimeWindowSpec("sw_tumbling", 100 * s, 100 * s, 0), idle,
      Seq(1000L -> Seq(1L), 1004L -> Seq(150L), 1008L -> Nil, 1009L -> Nil))
    assert(closing == Seq(("final", Seq(1L)), ("partial", Seq(150L))))
    assert(closingDeadlines == Seq(1005L, 1009L, 1009L, -1L))
    // What the stream's clock closes is output too: it starts the quiet period again (here the watermark
    // closes [0, 10) at visit 1030, before the row at 25 s; that row times out at 1090, not at 1060).
    val clocked = new scala.collection.mutable.ArrayBuffer[String]()
    val wired = streamwin.execution.WindowEngineBlueprint(TimeWindowSpec("sw_tumbling", 10 * s, 10 * s, 0),
      WindowPolicies(idleTimeout = 60 * s), Seq(v), Seq(AttributeReference("window", org.apache.spark.sql.types.StructType
        .fromDDL("start bigint, end bigint, kind string"))(), AttributeReference("n", LongType)()),
      Some((Seq(Count(v)), Seq(None)))).wire(() => InternalRow.empty, r => clocked += r.getStruct(0, 3).getUTF8String(2).toString)
    val op = wired.newEngine()
    op.startKey()
    op.visitStarts(); op.timeOut(1000 * s, 60 * s); op.addRow(1 * s, 1 * s, row(1)); op.visitEnded(1000 * s)
    op.visitStarts(); op.advanceTo(20 * s); op.timeOut(1030 * s, 60 * s); op.addRow(25 * s, 25 * s, row(25))
    op.visitEnded(1030 * s)
    assert(clocked == Seq("final") && op.idleDeadline(60 * s) == 1090 * s)
    op.visitStarts(); op.timeOut(1060 * s, 60 * s); op.visitEnded(1060 * s)
    assert(clocked == Seq("final"))
    op.visitStarts(); op.timeOut(1090 * s, 60 * s); op.visitEnded(1090 * s)
    assert(clocked == Seq("final", "partial") && op.idleDeadline(60 * s) == Long.MaxValue)
    // Late rows kept for passthrough go out as their late group; the open window's rows as partial.
    val (late, _, _) = idleVisits(TimeWindowSpec("sw_tumbling", 10 * s, 10 * s, 0),
      WindowPolicies(arrivalOrder = true, latePassthrough = true, idleTimeout = 5 * s),
      Seq(1000L -> Seq(15L, 3L), 1005L -> Nil))
    assert(late == Seq(("late", Seq(3L)), ("partial", Seq(15L))))
    // Without the timeout the visits change nothing.
    assert(idleVisits(TimeWindowSpec("sw_tumbling", 100 * s, 100 * s, 0), WindowPolicies.Default,
      Seq(1000L -> Seq(1L, 2L), 1010L -> Seq(3L)))._1 == Seq(("final", Seq(1L, 2L, 3L))))
    // Sessions keep their bounds: a row within the gap of the flushed rows extends the same session.
    val session = SessionWindowSpec(10 * s, dynamicGap = false, maxDuration = None)
    assert(idleVisits(session, idle, Seq(1000L -> Seq(1L, 5L), 1006L -> Seq(12L), 1007L -> Seq(40L)))._1 ==
      Seq(("partial", Seq(1L, 5L)), ("final", Seq(12L)), ("final", Seq(40L))))
  }

  test("idle_timeout on count windows: a timed-out window's rows are partial, the window still ends at its size-th row") {
    val s = 1000000L
    val idle = WindowPolicies(idleTimeout = 5 * s)
    val (tumbling, engine, _) = idleVisits(CountWindowSpec(3, 3), idle,
      Seq(1000L -> Seq(0L, 1L), 1005L -> Seq(2L, 3L, 4L, 5L)))
    assert(tumbling == Seq(("partial", Seq(0L, 1L)), ("final", Seq(2L)), ("final", Seq(3L, 4L, 5L))))
    assert(engine.rowsInNoWindow == 0)
    // Overlapping count windows each flush their own rows.
    val (overlapping, _, _) = idleVisits(CountWindowSpec(4, 2), idle, Seq(1000L -> Seq(0L, 1L, 2L), 1005L -> Seq(3L)))
    assert(overlapping == Seq(("partial", Seq(0L, 1L, 2L)), ("partial", Seq(2L)), ("final", Seq(3L)),
      ("partial", Seq(3L))))
  }

  test("idle_timeout: a key whose rows timed out stores its windows' bounds and progress, not its rows") {
    val s = 1000000L
    val members = CollectList(v)
    val window = AttributeReference("window", org.apache.spark.sql.types.StructType.fromDDL(
      "start bigint, end bigint, kind string"))()
    for (select <- Seq(false, true)) {
      val blueprint = streamwin.execution.WindowEngineBlueprint(TimeWindowSpec("sw_tumbling", 3600 * s, 3600 * s, 0),
        WindowPolicies(idleTimeout = 5 * s), Seq(v),
        if (select) Seq(v, window) else Seq(window, AttributeReference("members", members.dataType)()),
        if (select) None else Some((Seq(members), Seq(None))))
      val wired = blueprint.wire(() => InternalRow.empty, _ => ())
      val engine = wired.newEngine()
      val kept = new MapKeyRows
      val codec = wired.codec(LongType)
      engine.startKey()
      engine.visitStarts()
      (0L until 2000L).foreach(t => engine.addRow(t * s, t * s, row(t)))
      engine.visitEnded(1000 * s)
      codec.save(engine, kept.of("k"), Long.MaxValue, Long.MaxValue)
      val holding = kept.bytes("k")
      // A select's rows are state rows of their own (its window row holds their range); a groupBy's buffer.
      assert(kept.keptRows == (if (select) 2000 else 0), s"${kept.keptRows} kept rows")
      assert(kept.count("k") == (if (select) 2002 else 2), s"${kept.count("k")} state rows")
      engine.visitStarts()
      engine.timeOut(1005 * s, 5 * s)
      engine.visitEnded(1005 * s)
      codec.save(engine, kept.of("k"), Long.MaxValue, Long.MaxValue)
      val flushed = kept.bytes("k")
      assert(engine.windowsEmitted == 1 && engine.idleDeadline(5 * s) == Long.MaxValue)
      assert(kept.keptRows == 0 && kept.count("k") == 2 && (select || flushed * 5 < holding),
        s"$flushed bytes after the timeout, $holding before")
    }
  }


  test("time slices: windows equal the sum of the rows they hold, for any size, step and offset") {
    val rnd = new Random(11)
    for (_ <- 1 to 200) {
      val size = 1 + rnd.nextInt(12)
      val step = 1 + rnd.nextInt(12)
      val spec = TimeWindowSpec("sw_hopping", size, step, rnd.nextInt(30) - 15)
      val times = Seq.fill(rnd.nextInt(40))(rnd.nextInt(200).toLong - 100).sorted
      val ev = new AggregateEvaluator(Seq(Sum(v)), Seq(None), Seq(v))
      val got = scala.collection.mutable.Map[(Long, Long), Long]()
      val engine = sliceOperator(spec, ev, (s, e, r) => {
        assert(!got.contains((s, e)), "a window is emitted once")
        got((s, e)) = r.getLong(0)
      })
      times.groupBy(spec.sliceStart).toSeq.sortBy(_._1).foreach { case (slice, ts) =>
        val b = ev.newBuffer(); ts.foreach(t => ev.update(b, row(t))); engine.addSlice(sliceOf(slice, slice, slice, slice, b))
      }
      engine.finishKey()
      val model = times.flatMap(t => spec.windowStartsHolding(t).map(s => (s, s + size) -> t))
        .groupBy(_._1).map { case (w, ts) => w -> ts.map(_._2).sum }
      assert(got.toMap == model, s"$spec on $times")
    }
  }

  test("sessions: buckets pre-aggregated per gap (and max-duration period) equal one slice per timestamp") {
    val t = AttributeReference("t", LongType)()
    val functions = Seq(Sum(v), Min(t), Max(t), Count(Literal(1L)))
    val rnd = new Random(5)
    for (_ <- 1 to 400) {
      val gap = 1L + rnd.nextInt(6)
      val spec = SessionWindowSpec(gap, dynamicGap = false,
        if (rnd.nextBoolean()) Some(gap + (if (rnd.nextBoolean()) 0 else rnd.nextInt(12))) else None)
      val times = Seq.fill(rnd.nextInt(60))(rnd.nextInt(120).toLong - 20).sorted
      def run(bucketOf: Long => Long, perTimestamp: Boolean) = {
        val ev = new AggregateEvaluator(functions, functions.map(_ => None), Seq(v, t))
        val out = scala.collection.mutable.ArrayBuffer[(Long, Long, Long)]()
        val engine = sliceOperator(spec, ev, (s, e, r) => out += ((s, e, r.getLong(0))))
        times.groupBy(bucketOf).toSeq.sortBy(_._1).foreach { case (slice, ts) =>
          val b = ev.newBuffer(); ts.foreach(x => ev.update(b, new GenericInternalRow(Array[Any](x * 10 + 1, x))))
          engine.addSlice(
            if (perTimestamp) sliceOf(slice, slice, slice, slice + gap, b)
            else sliceOf(slice, b.getLong(1), b.getLong(2), b.getLong(2) + gap, b))
        }
        engine.finishKey()
        out.toSeq
      }
      val perTimestamp = run(identity, perTimestamp = true)
      val bucketed = run(x => x - Math.floorMod(x, spec.bucket), perTimestamp = false)
      assert(bucketed == perTimestamp, s"$spec on $times")
      assert(perTimestamp.map(_._3).sum == times.map(_ * 10 + 1).sum)
    }
  }

  test("an engine stored and restored between micro-batches (the streaming host) continues exactly") {
    val t = AttributeReference("t", LongType)()
    val input = Seq(v, t)
    val aggregates = Seq(Sum(v), CollectList(v), Count(v))
    val window = AttributeReference("window", org.apache.spark.sql.types.StructType.fromDDL(
      "start bigint, end bigint, kind string"))()
    val results = aggregates.map(f => AttributeReference(f.prettyName, f.dataType)())
    val s = 1000000L
    val families: Seq[(String, streamwin.spec.WindowSpec, WindowPolicies)] = Seq(
      ("hopping", TimeWindowSpec("sw_hopping", 10 * s, 5 * s, 0), WindowPolicies(arrivalOrder = true, lateness = 3 * s,
        latePassthrough = true)),
      ("tumbling update", TimeWindowSpec("sw_tumbling", 10 * s, 10 * s, 0), WindowPolicies(emitUpdate = true, emitEmpty = true)),
      ("sliding", streamwin.families.SlidingWindowSpec(7 * s), WindowPolicies(arrivalOrder = true, lateness = 2 * s)),
      ("session", SessionWindowSpec(4 * s, dynamicGap = false, maxDuration = None), WindowPolicies(countTrigger = 3)),
      ("interval", streamwin.families.IntervalWindowSpec(10 * s, 5 * s, 6 * s, 0, arrivalOrder = true),
        WindowPolicies(latePassthrough = true)),
      ("session max", SessionWindowSpec(4 * s, dynamicGap = false, maxDuration = Some(10 * s)), WindowPolicies.Default),
      ("count", CountWindowSpec(4, 2), WindowPolicies(emitUpdate = true)),
      ("count end", CountWindowSpec(3, 2, alignEnd = true), WindowPolicies.Default))
    val rnd = new Random(11)
    for ((name, spec, policies) <- families; select <- Seq(false, true)) {
      val times = (0 until 80).map(i => math.max(0L, i * 2L + rnd.nextInt(9) - 6))
      def run(storeEvery: Int): Seq[String] = {
        val out = scala.collection.mutable.ArrayBuffer[String]()
        val blueprint = streamwin.execution.WindowEngineBlueprint(spec, policies, input,
          if (select) input :+ window else window +: results, if (select) None else Some((aggregates, aggregates.map(_ => None))))
        // The output's window column is a struct here; render rows generically.
        def wiring() = blueprint.wire(() => InternalRow.empty, r => out += r.toString)
        val orderType = if (name == "session max") org.apache.spark.sql.types.TimestampType else LongType
        var wired = wiring()
        var codec = wired.codec(orderType)
        var engine = wired.newEngine()
        val kept = new MapKeyRows
        engine.startKey()
        times.zipWithIndex.foreach { case (time, i) =>
          if (storeEvery > 0 && i % storeEvery == 0) {
            codec.save(engine, kept.of("k"), Long.MaxValue, Long.MaxValue)
            // Typed state rows: no Java serialization stream, no class names.
            kept.values("k").foreach { value =>
              val text = new String(value.getBytes, java.nio.charset.StandardCharsets.ISO_8859_1)
              assert(!text.contains("streamwin.") && !text.contains("org.apache") && !text.contains("java.") &&
                !text.contains("\u00ac\u00ed"), name)
            }
            // A new task: new evaluator, callbacks and codec (wiring generates code: not at every row).
            if (storeEvery > 1) { wired = wiring(); codec = wired.codec(orderType) }
            engine = codec.load(kept.of("k")).get
          }
          val signal: Any = if (spec.isInstanceOf[CountWindowSpec]) null else time * s
          // (Sessions with a maximum duration take event time as their order.)
          val order: Any = if (name == "session max") time * s else i.toLong
          engine.addRow(order, signal, new GenericInternalRow(Array[Any](i.toLong, time)))
        }
        out.toSeq
      }
      val uninterrupted = run(0)
      assert(uninterrupted.nonEmpty, name)
      Seq(1, 3, 7).foreach(every => assert(run(every) == uninterrupted, s"$name (select: $select), stored every $every rows"))
    }
  }

  test("a stored engine writes its retained rows' buffers and order values typed, not as Java objects") {
    // count(1000, step=1) over sum(v): the engine retains 1000 per-row buffers and order values.
    val sum = Sum(v)
    val window = AttributeReference("window", org.apache.spark.sql.types.StructType.fromDDL(
      "start bigint, end bigint, kind string"))()
    val blueprint = streamwin.execution.WindowEngineBlueprint(CountWindowSpec(1000, 1), WindowPolicies.Default,
      Seq(v), Seq(window, AttributeReference("s", sum.dataType)()), Some((Seq(sum), Seq(None))))
    val out = scala.collection.mutable.ArrayBuffer[Long]()
    def wiring() = blueprint.wire(() => InternalRow.empty, r => out += r.getLong(1))
    var wired = wiring()
    var engine = wired.newEngine()
    val kept = new MapKeyRows
    engine.startKey()
    (0L until 1500L).foreach { i =>
      if (i % 250 == 0) {
        wired.codec(LongType).save(engine, kept.of("k"), Long.MaxValue, Long.MaxValue)
        if (i == 1000) assert(kept.bytes("k") < 1000 * 40, s"${kept.bytes("k")} bytes for 1000 retained rows")
        wired = wiring()
        engine = wired.codec(LongType).load(kept.of("k")).get
      }
      engine.addRow(i, null, row(i))
    }
    // Each window is the sum of its 1000 rows, whatever was stored in between.
    assert(out.toSeq == (999L until 1500L).map(last => (last - 999 to last).sum))
  }

  test("count windows keep the order values of a window's first and newest rows only, stored or not") {
    // Orders are 10 x the row's index and v is the index, so an output's sum must be the sum of the rows
    // from its start / 10 to its end / 10: its first and last order values are its own rows'.
    val window = AttributeReference("window", org.apache.spark.sql.types.StructType.fromDDL(
      "start bigint, end bigint, kind string"))()
    val sum = Sum(v)
    val cases: Seq[(CountWindowSpec, WindowPolicies)] = Seq(
      (CountWindowSpec(1000, 1000), WindowPolicies.Default), (CountWindowSpec(100, 10), WindowPolicies.Default),
      (CountWindowSpec(7, 3, alignEnd = true), WindowPolicies.Default), (CountWindowSpec(5, 5, alignEnd = true),
        WindowPolicies.Default), (CountWindowSpec(50, 50), WindowPolicies(countTrigger = 7)),
      (CountWindowSpec(20, 20), WindowPolicies(emitUpdate = true)), (CountWindowSpec(4, 1), WindowPolicies.Default))
    for ((spec, policies) <- cases) {
      val blueprint = streamwin.execution.WindowEngineBlueprint(spec, policies, Seq(v),
        Seq(window, AttributeReference("s", sum.dataType)()), Some((Seq(sum), Seq(None))))
      def run(storeEvery: Int): Seq[(Long, Long, String, Long)] = {
        val out = scala.collection.mutable.ArrayBuffer[(Long, Long, String, Long)]()
        def wiring() = blueprint.wire(() => InternalRow.empty, { r =>
          val w = r.getStruct(0, 3)
          out += ((w.getLong(0), w.getLong(1), w.getUTF8String(2).toString, r.getLong(1)))
        })
        var wired = wiring()
        // A task makes its codec once (it generates code); so does each wiring here.
        var codec = wired.codec(LongType)
        var engine = wired.newEngine()
        val kept = new MapKeyRows
        engine.startKey()
        (0L until 2345L).foreach { i =>
          if (storeEvery > 0 && i % storeEvery == 0) {
            codec.save(engine, kept.of("k"), Long.MaxValue, Long.MaxValue)
            // Wired anew as a new task would be, where that is not every few rows (wiring generates code).
            if (storeEvery >= 400) { wired = wiring(); codec = wired.codec(LongType) }
            engine = codec.load(kept.of("k")).get
          }
          engine.addRow(i * 10, null, row(i))
          val orders = engine.asInstanceOf[KeyedWindowOperator].state.record.asInstanceOf[CountRecord].orders.size
          assert(orders <= spec.size / spec.step + 2, s"$spec: $orders order values kept at row $i")
        }
        engine.finishKey()
        out.toSeq
      }
      val uninterrupted = run(0)
      assert(uninterrupted.nonEmpty && uninterrupted.exists(_._3 == "final"), spec)
      uninterrupted.foreach { case (start, end, kind, total) =>
        assert(total == (start / 10 to end / 10).sum, s"$spec: $kind window $start..$end sums to $total")
      }
      Seq(1, 13, 400).foreach(every => assert(run(every) == uninterrupted, s"$spec $policies, stored every $every rows"))
    }
  }

  /** A count(4, 2) groupBy of sum(v), wired as a task would be, collecting its output rows as strings. */
  private def countWiring(spec: streamwin.spec.WindowSpec = CountWindowSpec(4, 2), out: String => Unit = _ => ()) = {
    val window = AttributeReference("window", org.apache.spark.sql.types.StructType.fromDDL(
      "start bigint, end bigint, kind string"))()
    val sum = Sum(v)
    streamwin.execution.WindowEngineBlueprint(spec, WindowPolicies.Default, Seq(v),
      Seq(window, AttributeReference("s", sum.dataType)()), Some((Seq(sum), Seq(None))))
      .wire(() => InternalRow.empty, r => out(r.toString))
  }

  test("stored engines keep order values of every orderable type: count windows' first and last values") {
    val samples: Seq[(String, Int => Any)] = Seq(
      "long" -> (i => i * 7L), "int" -> (i => i * 3), "short" -> (i => i.toShort), "byte" -> (i => i.toByte),
      "double" -> (i => i * 0.5), "float" -> (i => i * 0.25f), "boolean" -> (i => i > 4),
      "string" -> (i => UTF8String.fromString(s"k-$i-\u00e9")),
      "decimal" -> (i => org.apache.spark.sql.types.Decimal(BigDecimal(i) / 7, 20, 10)),
      "binary" -> (i => Array[Byte](i.toByte, -1)))
    val orderTypes: Map[String, org.apache.spark.sql.types.DataType] = Map("long" -> LongType,
      "int" -> org.apache.spark.sql.types.IntegerType, "short" -> org.apache.spark.sql.types.ShortType,
      "byte" -> org.apache.spark.sql.types.ByteType, "double" -> org.apache.spark.sql.types.DoubleType,
      "float" -> org.apache.spark.sql.types.FloatType, "boolean" -> org.apache.spark.sql.types.BooleanType,
      "string" -> org.apache.spark.sql.types.StringType, "decimal" -> org.apache.spark.sql.types.DecimalType(20, 10),
      "binary" -> org.apache.spark.sql.types.BinaryType)
    for ((name, order) <- samples) {
      val out = scala.collection.mutable.ArrayBuffer[String]()
      def render(x: Any): String = x match {
        case b: Array[Byte] => b.toSeq.mkString("binary(", ",", ")")
        case other => s"${other.getClass.getSimpleName}($other)"
      }
      val output = new WindowOutput {
        override def values(start: Any, end: Any, kind: UTF8String, values: InternalRow): Unit =
          out += s"${render(start)} ${render(end)} $kind ${values.getLong(0)}"
        override def rows(start: Any, end: Any, kind: UTF8String, rows: RowRun): Unit = fail("a groupBy")
      }
      val sum = Sum(v)
      val ev = new AggregateEvaluator(Seq(sum), Seq(None), Seq(v))
      val bags = () => new RowBag(Seq(LongType))
      val contents = new ContentsFactory(Some(ev), output, bags)
      def newEngine(): RowWindowEngine =
        new KeyedWindowOperator(CountWindowSpec(4, 2).family(WindowPolicies.Default), WindowTriggers.Default, contents,
          new InMemoryWindowState(contents))
      def run(store: Boolean): Seq[String] = {
        out.clear()
        val codec = new WindowStateCodec(() => newEngine(),
          new StoredStateShape("sw_count", Some(ev.bufferTypes), Seq(LongType)), Some(ev),
          StoredWindowLayout(Some(Seq(sum)), orderTypes(name), Seq("v" -> LongType)))
        var engine = newEngine()
        engine.startKey()
        val rows = new MapKeyRows
        (0 until 11).foreach { i =>
          if (store) {
            codec.save(engine, rows.of("k"), Long.MaxValue, Long.MaxValue)
            engine = codec.load(rows.of("k")).get
          }
          engine.addRow(order(i), null, row(i.toLong))
        }
        engine.finishKey()
        out.toSeq
      }
      val uninterrupted = run(store = false)
      assert(uninterrupted.size == 6, uninterrupted)
      assert(run(store = true) == uninterrupted, name)
    }
  }

  test("stored state of another format, or missing a window row it lists, is refused with a message asking for a new checkpoint") {
    val codec = countWiring().codec(LongType)
    // A key's engine after 7 rows, stored into new state rows.
    def stored(): (RowWindowEngine, MapKeyRows) = {
      val engine = countWiring().newEngine()
      engine.startKey()
      (0L until 7L).foreach(i => engine.addRow(i, null, row(i)))
      val rows = new MapKeyRows
      codec.save(engine, rows.of("k"), Long.MaxValue, Long.MaxValue)
      (engine, rows)
    }
    val (engine, rows) = stored()
    assert(rows.count("k", Some(StatePart.Window)) == 1, "count windows keep their retained rows in one window row")
    val (_, otherFormat) = stored()
    val changed = otherFormat.record("k").copy()
    changed.getStruct(0, codec.layout.recordType.length).setInt(codec.layout.recordType.fieldIndex("format"), 9)
    otherFormat.replaceRecord("k", changed)
    val (_, missing) = stored()
    missing.drop("k", StatePart.Window)
    for ((name, broken) <- Seq("format" -> otherFormat, "missing" -> missing)) {
      val e = intercept[IllegalStateException](countWiring().codec(LongType).load(broken.of("k")))
      assert(e.getMessage.contains("new checkpoint location"), s"$name: ${e.getMessage}")
    }
    assert(countWiring().codec(LongType).load(rows.of("k")).get.windowsEmitted == engine.windowsEmitted)
  }

  test("a family reads its own record from the stored state, and refuses the record of another form of its function") {
    // Count windows of 4 rows every 2 keep a CountRecord; under emit="update" the same function keeps a RowCount.
    def wiring(policies: WindowPolicies) = {
      val window = AttributeReference("window", org.apache.spark.sql.types.StructType.fromDDL(
        "start bigint, end bigint, kind string"))()
      val sum = Sum(v)
      streamwin.execution.WindowEngineBlueprint(CountWindowSpec(4, 2), policies, Seq(v),
        Seq(window, AttributeReference("s", sum.dataType)()), Some((Seq(sum), Seq(None))))
        .wire(() => InternalRow.empty, _ => ())
    }
    val updating = WindowPolicies(emitUpdate = true)
    for ((policies, field) <- Seq(WindowPolicies.Default -> "count", updating -> "row_count")) {
      val w = wiring(policies)
      val engine = w.newEngine()
      engine.startKey()
      (0L until 5L).foreach(i => engine.addRow(i, null, row(i)))
      val rows = new MapKeyRows
      w.codec(LongType).save(engine, rows.of("k"), Long.MaxValue, Long.MaxValue)
      val layout = w.codec(LongType).layout
      val record = rows.record("k").getStruct(0, layout.recordType.length)
      assert(StoredWindowLayout.FamilyRecordFields.filterNot(f => record.isNullAt(layout.recordType.fieldIndex(f))) == Seq(field))
      val read = w.codec(LongType).load(rows.of("k")).get.asInstanceOf[KeyedWindowOperator].state.record
      val rowsSeen = read match {
        case r: CountRecord => r.rows
        case r: streamwin.families.RowCount => r.rows
      }
      assert(rowsSeen == 5L, field)
      val other = if (policies == updating) WindowPolicies.Default else updating
      val e = intercept[IllegalStateException](wiring(other).codec(LongType).load(rows.of("k")))
      assert(e.getMessage.contains("new checkpoint location") && e.getMessage.contains(s"`$field`"), e.getMessage)
    }
  }

  test("stored state with a damaged split trigger state, bag reference or record is refused with the new-checkpoint message") {
    def refused(wiring: => EngineWiring, rows: MapKeyRows): Unit = {
      val e = intercept[IllegalStateException](wiring.codec(LongType).load(rows.of("k")))
      assert(e.getMessage.contains("new checkpoint location"), e.getMessage)
    }
    // The key's record rewritten with `change` (a damaged store).
    def damage(rows: MapKeyRows, codec: WindowStateCodec)(change: (GenericInternalRow, String => Int) => Unit): Unit = {
      val layout = codec.layout
      val record = new GenericInternalRow(rows.record("k").getStruct(0, layout.recordType.length).toSeq(layout.recordType).toArray)
      change(record, layout.recordType.fieldIndex)
      rows.replaceRecord("k", org.apache.spark.sql.catalyst.expressions.UnsafeProjection.create(layout.valueSchema)(
        new GenericInternalRow(Array[Any](record, null, null))))
    }
    // A split trigger's state, cut short.
    val spec = streamwin.families.TriggerSplitWindowSpec(RisingMark.asInstanceOf[streamwin.api.SplitTrigger[Any]])
    val split = countWiring(spec)
    val engine = split.newEngine()
    engine.startKey()
    Seq(3L, 1L, 4L, 1L, 5L).zipWithIndex.foreach { case (x, i) => engine.addRow(i.toLong, org.apache.spark.sql.Row(x), row(x)) }
    val cut = new MapKeyRows
    split.codec(LongType).save(engine, cut.of("k"), Long.MaxValue, Long.MaxValue)
    damage(cut, split.codec(LongType)) { (record, field) =>
      val data = record.getStruct(field("data"), 2)
      val state = data.getBinary(1)
      assert(state.length > 2)
      record.update(field("data"), new GenericInternalRow(Array[Any](data.getInt(0), state.take(state.length / 2))))
    }
    refused(countWiring(spec), cut)
    // A select's rows kept as state rows, its record's next bag id behind the bags it holds; and its record without fields.
    val window = AttributeReference("window", org.apache.spark.sql.types.StructType.fromDDL(
      "start bigint, end bigint, kind string"))()
    def select = streamwin.execution.WindowEngineBlueprint(CountWindowSpec(4, 2), WindowPolicies.Default, Seq(v),
      Seq(v, window), None).wire(() => InternalRow.empty, _ => ())
    for (broken <- Seq("next bag", "no fields")) {
      val wired = select
      val kept = wired.newEngine()
      kept.startKey()
      (0L until 7L).foreach(i => kept.addRow(i, null, row(i)))
      val rows = new MapKeyRows(inline = 0L)
      wired.codec(LongType).save(kept, rows.of("k"), Long.MaxValue, Long.MaxValue)
      assert(rows.keptRows > 0)
      if (broken == "next bag") damage(rows, wired.codec(LongType))((record, field) => record.update(field("next_bag"), 0L))
      else rows.replaceRecord("k", org.apache.spark.sql.catalyst.expressions.UnsafeProjection.create(
        wired.codec(LongType).layout.valueSchema)(new GenericInternalRow(3)))
      refused(select, rows)
    }
  }

  test("state written for another window function, other aggregates or other input columns is refused, naming the query's") {
    val window = AttributeReference("window", org.apache.spark.sql.types.StructType.fromDDL(
      "start bigint, end bigint, kind string"))()
    def wiring(spec: streamwin.spec.WindowSpec, input: Seq[AttributeReference],
        aggregates: Option[Seq[AggregateFunction]]) =
      streamwin.execution.WindowEngineBlueprint(spec, WindowPolicies.Default, input,
        aggregates.fold[Seq[AttributeReference]](input :+ window)(fs =>
          window +: fs.map(f => AttributeReference(f.prettyName, f.dataType)())),
        aggregates.map(fs => (fs, fs.map(_ => None)))).wire(() => InternalRow.empty, _ => ())
    val w = AttributeReference("w", LongType)()
    val i = AttributeReference("v", org.apache.spark.sql.types.IntegerType)()
    val written = wiring(CountWindowSpec(4, 2), Seq(v), Some(Seq(Sum(v))))
    val engine = written.newEngine()
    engine.startKey()
    (0L until 7L).foreach(x => engine.addRow(x, null, row(x)))
    written.codec(LongType).save(engine, keyRows.of("k"), Long.MaxValue, Long.MaxValue)
    val others = Seq(
      "other aggregates" -> wiring(CountWindowSpec(4, 2), Seq(v), Some(Seq(Sum(v), Max(v)))),
      "an input column of another type" -> wiring(CountWindowSpec(4, 2), Seq(i), Some(Seq(Sum(i)))),
      "another input column" -> wiring(CountWindowSpec(4, 2), Seq(v, w), Some(Seq(Sum(v)))),
      "a select" -> wiring(CountWindowSpec(4, 2), Seq(v), None),
      "another family" -> wiring(SessionWindowSpec(4, dynamicGap = false, maxDuration = None), Seq(v), Some(Seq(Sum(v)))))
    for ((name, other) <- others) {
      val e = intercept[IllegalStateException](other.codec(LongType).load(keyRows.of("k")))
      assert(e.getMessage.contains("written by another query") && e.getMessage.contains("new checkpoint location") &&
        e.getMessage.contains(other.shape.describe), s"$name: ${e.getMessage}")
    }
    assert(others.map(_._2.shape.fingerprint).toSet.size == others.size)
    // The window's arguments are not part of the shape (as with Spark's windows); nor are names of columns.
    val same = Seq(wiring(CountWindowSpec(5, 1), Seq(v), Some(Seq(Sum(v)))),
      wiring(CountWindowSpec(4, 2), Seq(AttributeReference("renamed", LongType)()), Some(Seq(Sum(v)))))
    same.foreach(s => assert(s.codec(LongType).load(keyRows.of("k")).get.windowsEmitted == engine.windowsEmitted))
    assert(others.head._2.shape.describe == "sw_count in a groupBy, aggregation buffer <bigint, bigint>, input rows <bigint>")
  }

  test("a user's split trigger keeps a state of its own classes across stored engines; other classes are refused") {
    def run(trigger: streamwin.api.SplitTrigger[_], storeEvery: Int): Seq[String] = {
      val out = scala.collection.mutable.ArrayBuffer[String]()
      val spec = streamwin.families.TriggerSplitWindowSpec(trigger.asInstanceOf[streamwin.api.SplitTrigger[Any]])
      var wired = countWiring(spec, out += _)
      var engine = wired.newEngine()
      engine.startKey()
      Seq(3L, 1L, 4L, 1L, 5L, 9L, 2L, 6L, 5L, 3L, 5L, 8L).zipWithIndex.foreach { case (x, i) =>
        if (storeEvery > 0 && i % storeEvery == 0) {
          wired.codec(LongType).save(engine, keyRows.of("k"), Long.MaxValue, Long.MaxValue)
          wired = countWiring(spec, out += _)
          engine = wired.codec(LongType).load(keyRows.of("k")).get
        }
        engine.addRow(i.toLong, org.apache.spark.sql.Row(x), row(x))
      }
      engine.finishKey()
      out.toSeq
    }
    val uninterrupted = run(RisingMark, 0)
    assert(uninterrupted.size == 4, uninterrupted)
    assert(run(RisingMark, 1) == uninterrupted)
    // Java collections and Scala decimals in a trigger's state.
    val mixed = run(EveryThirdRow, 0)
    assert(mixed.size == 4 && run(EveryThirdRow, 1) == mixed, mixed)
    // The trigger and its initial state live in package streamwin: a state of another package's class fails
    // where it is stored, by name, and is never built.
    gadget.Gadget.built = false
    val e = intercept[IllegalStateException](run(GadgetState, 2))
    assert(e.getMessage.contains("cannot be kept in a stream's state") && e.getMessage.contains("gadget.Gadget"),
      e.getMessage)
    assert(!gadget.Gadget.built)
  }

  test("sliding windows' sweep over kept rows equals aggregating each window's rows; not used for growing buffers") {
    val fixed: Seq[AggregateFunction] = Seq(Sum(v), Max(v), Count(Seq(v)))
    val sums = new AggregateEvaluator(fixed, fixed.map(_ => None), Seq(v))
    assert(sums.boundedBuffers)
    val lists: Seq[AggregateFunction] = Seq(Sum(v), CollectList(v))
    assert(!new AggregateEvaluator(lists, lists.map(_ => None), Seq(v)).boundedBuffers)
    val rnd = new Random(7)
    for (_ <- 1 to 20) {
      val kept = new java.util.TreeMap[java.lang.Long, RowBag]
      val sweep = new KeptRowsSweep(sums)
      def keep(time: Long): Unit = {
        val row = new GenericInternalRow(Array[Any](rnd.nextInt(100).toLong))
        kept.computeIfAbsent(time, _ => new RowBag(Seq(LongType))).append(row)
        sweep.rowKept(time, row)
      }
      var end = 0L
      for (_ <- 1 to 200) {
        // Mostly in time order; now and then a tie or a row out of order.
        keep(if (rnd.nextInt(8) == 0) end - rnd.nextInt(5) else end + rnd.nextInt(3))
        end += (if (rnd.nextInt(10) == 0) -rnd.nextInt(4) else rnd.nextInt(3))
        val start = end - 10
        val got = sweep.aggregate(start, end, (first, last) =>
          kept.subMap(first, true, last, true).entrySet().asScala.iterator.map(e => (e.getKey.longValue, e.getValue.rows)))
        val expected = sums.newBuffer()
        kept.subMap(start, true, end, true).values().asScala.foreach(bag => bag.rows.foreach(sums.update(expected, _)))
        val want = sums.evaluate(expected)
        assert((0 until 3).map(i => if (got.isNullAt(i)) null else got.getLong(i)) ==
          (0 until 3).map(i => if (want.isNullAt(i)) null else want.getLong(i)), s"window [$start, $end]")
      }
    }
  }
  test("a session's slices carry its hidden aggregates by name, after the user's and before the row count") {
    val t = AttributeReference("t", LongType)()
    val columns = streamwin.spec.WindowColumns(t, None, None)
    val fixed = SessionWindowSpec(5, dynamicGap = false, None)
    val user = Seq[AggregateFunction](Sum(v), CollectList(v))
    val functions = user ++ fixed.hiddenFunctions(columns) :+ Count(Literal(1))
    assert(fixed.hiddenFunctions(columns) == Seq(Min(t), Max(t)))
    val ev = new AggregateEvaluator(functions, functions.map(_ => None), Seq(v, t))
    val slots = new streamwin.spec.HiddenSlots(fixed, ev)
    assert(slots("first_time") == ev.offsetOf(2) && slots("last_time") == ev.offsetOf(3) && slots.rowCount == ev.offsetOf(4))
    val unknown = intercept[IllegalArgumentException](slots("max_gap")).getMessage
    assert(unknown.contains("no hidden aggregate 'max_gap'") && unknown.contains("first_time, last_time"), unknown)
    // Read back through the bounds: a slice of rows at 3 and 9 reaches a gap past 9.
    val buffer = ev.newBuffer()
    Seq(9L, 3L).foreach(x => ev.update(buffer, new GenericInternalRow(Array[Any](x, x))))
    val slice = new Slice
    slice.time = 0L
    slice.buffer = buffer
    fixed.sliceBounds(slots).fill(slice)
    assert((slice.first, slice.last, slice.reach) == ((3L, 9L, 14L)))

    val g = AttributeReference("g", LongType)()
    val dynamic = SessionWindowSpec(0, dynamicGap = true, None)
    assert(dynamic.hiddenFunctions(streamwin.spec.WindowColumns(t, Some(g), None)) == Seq(Max(g)))
    val short = new AggregateEvaluator(Seq(Count(Literal(1))), Seq(None), Seq(v))
    assert(intercept[IllegalArgumentException](new streamwin.spec.HiddenSlots(fixed, short)).getMessage.contains("fewer than its hidden ones"))
  }

  test("sliding windows' double sums have the same bits fed slices (batch) or kept rows swept again after each decode (stream)") {
    val d = AttributeReference("d", DoubleType)()
    val fns: Seq[AggregateFunction] = Seq(Sum(d), Average(d), Max(d))
    val eval = new AggregateEvaluator(fns, fns.map(_ => None), Seq(d))
    val rnd = new Random(11)
    def bits(r: InternalRow): Seq[Any] = (0 until 3).map(i => if (r.isNullAt(i)) null else java.lang.Double.doubleToLongBits(r.getDouble(i)))
    for (size <- Seq(1L, 7L, 30L, 1000L)) {
      // A key's rows in time order, some timestamps with several rows; temperatures with two decimals.
      val times = Iterator.iterate(0L)(_ + 1 + rnd.nextInt(4)).take(400).toVector
      val rows = times.map(t => t -> Vector.fill(1 + (if (rnd.nextInt(5) == 0) 2 else 0))(new GenericInternalRow(
        Array[Any](math.round(rnd.nextGaussian() * 1000 + 2000) / 100.0))))
      // Batch: one slice per timestamp, each window [t - size, t] aggregated once slices up to t are kept.
      val batch = TimestampSlices.blockLengthFor(size) match {
        case block =>
          val slices = new TimestampSlices(eval, block)
          rows.map { case (t, rs) =>
            val buffer = eval.newBuffer()
            rs.foreach(eval.update(buffer, _))
            slices.keep(t, buffer)
            bits(slices.aggregate(t - size, t).copy())
          }
      }
      // Stream: the same rows kept by time; the sweep is made again every few windows, as after each micro-batch.
      val kept = new java.util.TreeMap[java.lang.Long, RowBag]
      var sweep = new KeptRowsSweep(eval)
      val stream = rows.zipWithIndex.map { case ((t, rs), i) =>
        if (i % (1 + rnd.nextInt(9)) == 0) sweep = new KeptRowsSweep(eval)
        rs.foreach { r => kept.computeIfAbsent(t, _ => new RowBag(Seq(DoubleType))).append(r); sweep.rowKept(t, r) }
        bits(sweep.aggregate(t - size, t, (first, last) =>
          kept.subMap(first, true, last, true).entrySet().asScala.iterator.map(e => (e.getKey.longValue, e.getValue.rows))).copy())
      }
      assert(stream == batch, s"size $size")
      // Any block length gives each window's exact aggregate: blocks between (shorter blocks) or one block (longer).
      for (block <- Seq(1L, 3L, math.max(1L, size / 3), 2 * size + 1)) {
        val slices = new TimestampSlices(eval, block)
        rows.foreach { case (t, rs) =>
          val buffer = eval.newBuffer()
          rs.foreach(eval.update(buffer, _))
          slices.keep(t, buffer)
          val got = slices.aggregate(t - size, t)
          val inWindow = rows.filter { case (u, _) => u >= t - size && u <= t }.flatMap(_._2).map(_.getDouble(0))
          assert(math.abs(got.getDouble(0) - inWindow.sum) < 1e-6 && got.getDouble(2) == inWindow.max, s"block $block, t $t")
        }
      }
      // Both are the windows' sums (to rounding).
      rows.indices.foreach { i =>
        val (t, _) = rows(i)
        val exact = rows.filter { case (u, _) => u >= t - size && u <= t }.flatMap(_._2).map(_.getDouble(0)).sum
        assert(math.abs(java.lang.Double.longBitsToDouble(batch(i)(0).asInstanceOf[Long]) - exact) < 1e-6)
      }
    }
  }
}

/** A split trigger with a state of its own class: a window starts at a value above the last mark. */
final case class Mark(level: Long, rows: Int)

object RisingMark extends streamwin.api.SplitTrigger[Mark] {
  override def initialState: Mark = Mark(2L, 0)
  override def next(mark: Mark, row: org.apache.spark.sql.Row): (Mark, Boolean) = {
    val x = row.getLong(0)
    if (x > mark.level) (Mark(x, mark.rows + 1), true) else (mark.copy(rows = mark.rows + 1), false)
  }
}

/** A split trigger whose state becomes an object of a class of another package than the trigger's and its initial state's. */
object GadgetState extends streamwin.api.SplitTrigger[AnyRef] {
  override def initialState: AnyRef = "start"
  override def next(state: AnyRef, row: org.apache.spark.sql.Row): (AnyRef, Boolean) = (new gadget.Gadget, false)
}

/** A split trigger whose state holds a Java list and a Scala decimal: a window starts at every third row. */
object EveryThirdRow extends streamwin.api.SplitTrigger[(java.util.ArrayList[java.lang.Long], BigDecimal)] {
  override def initialState: (java.util.ArrayList[java.lang.Long], BigDecimal) = (new java.util.ArrayList, BigDecimal(0))
  override def next(state: (java.util.ArrayList[java.lang.Long], BigDecimal), row: org.apache.spark.sql.Row)
      : ((java.util.ArrayList[java.lang.Long], BigDecimal), Boolean) = {
    val seen = new java.util.ArrayList(state._1)
    seen.add(row.getLong(0))
    ((seen, state._2 + BigDecimal(row.getLong(0)) / 3), seen.size % 3 == 1)
  }
}
