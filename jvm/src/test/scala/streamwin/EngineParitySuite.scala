package streamwin

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.zip.CRC32

import scala.collection.mutable
import scala.collection.mutable.ArrayBuffer
import scala.util.Random
import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateFunction, CollectList, Count, Max, Sum}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import streamwin.execution.{EngineFeeder, WindowEngineBlueprint}
import streamwin.engine.WindowPolicies
import streamwin.families._
import streamwin.spec._

/**
 * Safety net for engine rewrites: pins the exact output of the per-key window engines on seeded
 * random inputs, for every window family with every combination of policies it accepts, in
 * groupBy form (sum, count, max, collect_list of `v`) and select form (rows tagged with their
 * windows, for the families a select replays: aligned time windows, count and data windows).
 *
 * Engines are driven only through the entry points the hosts use, which stay through a rewrite:
 * `WindowEngineBlueprint(...).wire(key, out).newEngine()`, `EngineFeeder`, the wiring's
 * `EngineStateCodec`, and the engine's `startKey`/`addRow` (through the feeder)/`finishKey`,
 * `advanceTo`, `nextDeadline`, `forgettable` and counters. No engine class is named.
 *
 * Each case runs in two modes:
 *  - batch: as the batch execs drive it: keys in order, each key's rows sorted by the order
 *    column (nulls first, ties in input order), startKey / feed every row / finishKey;
 *  - stream: as the streaming processor drives it: the rows, in arrival order, cut into 2–4
 *    micro-batches; per batch a new wiring (a new task), each key's engine decoded from the bytes
 *    the previous batch encoded, advanced to Spark's watermark (event-time families: max event
 *    time of earlier batches minus a delay, once positive), fed the key's rows of the batch sorted
 *    by the order column; then expired timers (at the engine's nextDeadline) advance idle keys; a
 *    key whose engine is forgettable at the watermark is dropped; no finishKey ever. A last
 *    no-data batch moves the watermark over the last batch's rows.
 *
 * Recorded per case: every output row in emission order, the counters (windowsEmitted, rowsLate,
 * rowsPassedThrough, rowsInNoWindow; the feeder's accepted, rejected, nullOrders), per streaming
 * step nextDeadline and forgettable, and any exception (class and message). The golden files are
 * `jvm/src/test/resources/engine-parity/<family>.txt`; their format is described in their header.
 *
 * REGENERATE the golden files (only when a change of engine output is intended) with
 * {{{
 *   STREAMWIN_PARITY_RECORD=1 bin/sbt "testOnly streamwin.EngineParitySuite"
 * }}}
 * (or the system property `-DSTREAMWIN_PARITY_RECORD=1` in the test JVM): the suite then writes
 * the files instead of comparing, and `git diff` shows what changed.
 */
class EngineParitySuite extends AnyFunSuite {
  import EngineParitySuite._

  private val record: Boolean =
    sys.env.get(RecordFlag).contains("1") || sys.props.get(RecordFlag).contains("1")

  for ((file, cases) <- allCases.groupBy(_.file).toSeq.sortBy(_._1)) {
    test(s"engine parity: $file (${cases.size} cases)") {
      val actual = cases.map(c => c.name -> runCase(c))
      if (record) {
        writeGolden(file, actual)
        info(s"recorded ${cases.size} cases into ${goldenFile(file).getPath}")
      } else {
        compare(file, readGolden(file), actual, cases)
      }
    }
  }

  private def compare(file: String, expected: Seq[(String, Seq[String])], actual: Seq[(String, Seq[String])],
      cases: Seq[Case]): Unit = {
    val expectedNames = expected.map(_._1)
    val actualNames = actual.map(_._1)
    val missing = actualNames.filterNot(expectedNames.toSet)
    val stale = expectedNames.filterNot(actualNames.toSet)
    if (missing.nonEmpty || stale.nonEmpty) {
      fail(s"$file: the cases differ from the golden file (regenerate with $RecordFlag=1 if intended)\n" +
        missing.take(10).map("  not in golden: " + _).mkString("\n") + "\n" +
        stale.take(10).map("  only in golden: " + _).mkString("\n"))
    }
    val expectedByName = expected.toMap
    val differing = actual.filter { case (name, lines) => expectedByName(name) != lines }
    if (differing.nonEmpty) {
      val (name, lines) = differing.head
      val c = cases.find(_.name == name).get
      fail(s"$file: ${differing.size} of ${actual.size} cases differ from the golden file; first: $name\n" +
        diff(expectedByName(name), lines) +
        s"\ninput (id k seq ts v flag dv gap, arrival order):\n" + generate(c).map(renderInput).mkString("  ", "\n  ", "") +
        (if (differing.size > 1) differing.drop(1).take(20).map(_._1).mkString("\nother differing cases:\n  ", "\n  ", "") else "") +
        s"\n(regenerate with $RecordFlag=1 only if the change is intended)")
    }
  }

  /** The first difference of two line lists, with context. */
  private def diff(expected: Seq[String], actual: Seq[String]): String = {
    val i = expected.indices.find(i => i >= actual.size || expected(i) != actual(i)).getOrElse(expected.size)
    val from = math.max(0, i - 4)
    def show(lines: Seq[String]): String = (from until math.min(lines.size, i + 6)).map { j =>
      f"${if (j == i) ">" else " "} ${j + 1}%4d | ${lines(j)}"
    }.mkString("\n") + (if (lines.size <= i) s"\n  (ends after line ${lines.size})" else "")
    val section = expected.take(i + 1).reverse.find(_.startsWith("-- ")).getOrElse("")
    s"first difference at line ${i + 1}, in '$section' (expected ${expected.size} lines, got ${actual.size}):\n" +
      s"expected:\n${show(expected)}\nactual:\n${show(actual)}"
  }

  private lazy val resourceRoot: Option[File] = {
    var dir = new File(sys.props("user.dir")).getAbsoluteFile
    var found: Option[File] = None
    while (dir != null && found.isEmpty) {
      val candidate = new File(dir, "jvm/src/test/resources")
      if (new File(dir, "build.sbt").isFile && candidate.isDirectory) found = Some(candidate)
      dir = dir.getParentFile
    }
    found
  }

  private def goldenFile(file: String): File = new File(resourceRoot.getOrElse(
    throw new IllegalStateException("cannot find jvm/src/test/resources above " + sys.props("user.dir"))),
    s"$GoldenFolder/$file.txt")

  private def writeGolden(file: String, cases: Seq[(String, Seq[String])]): Unit = {
    val f = goldenFile(file)
    f.getParentFile.mkdirs()
    val text = new StringBuilder
    Header.foreach(h => text ++= s"# $h\n")
    for ((name, lines) <- cases) {
      text ++= s"$CaseMarker$name\n"
      lines.foreach { l => text ++= l; text += '\n' }
    }
    Files.write(f.toPath, text.toString.getBytes(StandardCharsets.UTF_8))
  }

  private def readGolden(file: String): Seq[(String, Seq[String])] = {
    val text = resourceRoot.map(_ => goldenFile(file)).filter(_.isFile) match {
      case Some(f) => new String(Files.readAllBytes(f.toPath), StandardCharsets.UTF_8)
      case None =>
        val in = getClass.getResourceAsStream(s"/$GoldenFolder/$file.txt")
        if (in == null) fail(s"no golden file $GoldenFolder/$file.txt; record it with $RecordFlag=1")
        try new String(org.apache.commons.io.IOUtils.toByteArray(in), StandardCharsets.UTF_8) finally in.close()
    }
    val out = ArrayBuffer[(String, ArrayBuffer[String])]()
    text.split("\n", -1).dropRight(1).foreach { line =>
      if (line.startsWith(CaseMarker)) out += ((line.stripPrefix(CaseMarker), ArrayBuffer[String]()))
      else if (!line.startsWith("#")) out.last._2 += line
    }
    out.map { case (n, ls) => (n, ls.toSeq) }.toSeq
  }
}

object EngineParitySuite {
  val RecordFlag = "STREAMWIN_PARITY_RECORD"
  val GoldenFolder = "engine-parity"
  val CaseMarker = "=== "
  val Header: Seq[String] = Seq(
    "Engine parity golden file, written by EngineParitySuite (STREAMWIN_PARITY_RECORD=1); do not edit by hand.",
    "A case: '=== family | policies | form[ | seed]', then '-- batch' and '-- stream ...' output.",
    "groupBy row: key start..end kind sum count max [collect_list]; select row: key start..end kind #ids",
    "  (consecutive rows tagged with the same window on one line; #id{...} if a field differs from the input row).",
    "Times are in seconds (µs / 1e6). '= n=E/L/P/N' are windowsEmitted/rowsLate/rowsPassedThrough/rowsInNoWindow,",
    "'feed=A/R/N' the feeder's accepted/rejected/nullOrders; '!! class: message' an exception.",
    "Stream step: '~batch key +rows|timer wm=watermark dl=nextDeadline fg=forgettable(wm) n=E/L/P/N' after the step",
    "  (fg=y: the key's state is dropped; count and data windows have no clock: no wm, dl, fg).")

  val S = 1000000L

  // One set of attributes for every case, so that generated code is compiled once.
  val id = AttributeReference("id", LongType, nullable = false)()
  val k = AttributeReference("k", StringType, nullable = false)()
  val seq = AttributeReference("seq", LongType)()
  val ts = AttributeReference("ts", TimestampType)()
  val v = AttributeReference("v", LongType)()
  val flag = AttributeReference("flag", BooleanType)()
  val dv = AttributeReference("dv", DoubleType)()
  val gap = AttributeReference("gap", LongType)()
  val input: Seq[Attribute] = Seq(id, k, seq, ts, v, flag, dv, gap)
  val functions: Seq[AggregateFunction] = Seq(Sum(v), Count(v), Max(v), CollectList(v))
  val results: Seq[Attribute] = functions.map(f => AttributeReference(f.prettyName, f.dataType)())
  private def windowType(bound: DataType): StructType = StructType(Seq(
    StructField("start", bound, nullable = false), StructField("end", bound, nullable = false),
    StructField("kind", StringType, nullable = false)))
  val timeWindow = AttributeReference("window", windowType(TimestampType), nullable = false)()
  val seqWindow = AttributeReference("window", windowType(LongType), nullable = false)()

  /** One case: a spec, its policies, a form, and how a host feeds it. */
  final case class Case(
      file: String,
      name: String,
      spec: WindowSpec,
      policies: WindowPolicies,
      select: Boolean,
      order: Attribute,
      signal: Option[Attribute],
      tiesAllowed: Boolean,
      eventTime: Boolean,
      rows: (Int, Int),
      seqTies: Boolean,
      flagOneIn: Int) {
    /** start and end have the type of the time column (time families) or of the order_by column. */
    def boundIsTime: Boolean = eventTime || order.dataType == TimestampType
    def window: Attribute = if (boundIsTime) timeWindow else seqWindow
    def output: Seq[Attribute] = if (select) input :+ window else (k +: window +: results)
    def blueprint: WindowEngineBlueprint = WindowEngineBlueprint(spec, policies, input, output,
      if (select) None else Some((functions, functions.map(_ => None))))
    def seed: Long = { val crc = new CRC32; crc.update(name.getBytes(StandardCharsets.UTF_8)); crc.getValue }
  }

  /** Policy options as a user gives them (interval: discard_age is the spec's, order_by goes into the spec). */
  final case class Pol(order: Boolean = false, lateness: Long = 0, passthrough: Boolean = false, update: Boolean = false,
      trigger: Long = 0, empty: Boolean = false, discard: Long = 0) {
    def name: String = Seq(
      Some("order_by").filter(_ => order),
      Some(s"discard_age=${secs(discard)}").filter(_ => discard > 0),
      Some(s"lateness=${secs(lateness)}").filter(_ => lateness > 0),
      Some("late=passthrough").filter(_ => passthrough),
      Some("emit=update").filter(_ => update),
      Some(s"count_trigger=$trigger").filter(_ => trigger > 0),
      Some("emit_empty").filter(_ => empty)).flatten.mkString(",") match {
      case "" => "none"
      case n => n
    }
    def policies(arrivalOrder: Boolean): WindowPolicies =
      WindowPolicies(arrivalOrder, lateness, passthrough, update, trigger, empty)
  }

  private sealed trait Kind
  /** Tumbling, hopping, timer, sliding and plain sessions: replayed with the event time as signal. */
  private case object EventTime extends Kind
  /** SPL timeInterval: order_by is part of the spec. */
  private case object Interval extends Kind
  /** Sessions with max_duration or a dynamic gap: event-time order, the gap as signal. */
  private case object OrderedSession extends Kind
  /** Count and data windows: order_by order, their own signal. */
  private final case class Sequence(signal: Option[Attribute], orderByTime: Boolean = false) extends Kind

  private final case class Family(file: String, label: String, kind: Kind, spec: Pol => WindowSpec, pols: Seq[Pol],
      selectForm: Boolean, seeds: Int = 1, seqTies: Boolean = false, flagOneIn: Int = 5)

  private def secs(us: Long): String = BigDecimal(us, 6).bigDecimal.stripTrailingZeros.toPlainString + "s"

  private val alignedPolicies: Seq[Pol] = Seq(
    Pol(), Pol(order = true), Pol(lateness = 5 * S), Pol(passthrough = true),
    Pol(order = true, lateness = 5 * S), Pol(order = true, passthrough = true),
    Pol(order = true, lateness = 3 * S, passthrough = true), Pol(update = true), Pol(order = true, update = true),
    Pol(trigger = 3), Pol(order = true, trigger = 3), Pol(empty = true), Pol(order = true, lateness = 2 * S, empty = true),
    Pol(order = true, update = true, trigger = 3), Pol(order = true, passthrough = true, trigger = 2),
    Pol(update = true, empty = true), Pol(order = true, passthrough = true, update = true, empty = true))
  private val fewAlignedPolicies: Seq[Pol] = Seq(Pol(), Pol(order = true, lateness = 3 * S),
    Pol(order = true, passthrough = true, trigger = 2), Pol(update = true, empty = true), Pol(order = true, empty = true),
    Pol(order = true, update = true))
  private val gapPolicies: Seq[Pol] = Seq(Pol(), Pol(order = true), Pol(passthrough = true),
    Pol(order = true, passthrough = true), Pol(order = true, lateness = 2 * S), Pol(order = true, update = true, trigger = 2),
    Pol(empty = true), Pol(order = true, passthrough = true, update = true, empty = true))
  private val slidingPolicies: Seq[Pol] = Seq(Pol(), Pol(order = true), Pol(lateness = 5 * S), Pol(passthrough = true),
    Pol(order = true, lateness = 5 * S), Pol(order = true, passthrough = true),
    Pol(order = true, lateness = 3 * S, passthrough = true), Pol(order = true, passthrough = true, update = true),
    Pol(update = true), Pol(order = true, update = true))
  private val sessionPolicies: Seq[Pol] = Seq(Pol(), Pol(order = true), Pol(lateness = 5 * S), Pol(passthrough = true),
    Pol(order = true, lateness = 15 * S), Pol(order = true, lateness = 5 * S), Pol(order = true, passthrough = true),
    Pol(order = true, passthrough = true, trigger = 2), Pol(update = true), Pol(trigger = 3),
    Pol(order = true, update = true), Pol(order = true, update = true, trigger = 2))
  private val intervalPolicies: Seq[Pol] = Seq(Pol(), Pol(order = true), Pol(order = true, discard = 3 * S),
    Pol(order = true, passthrough = true), Pol(order = true, update = true),
    Pol(order = true, discard = 5 * S, passthrough = true, update = true), Pol(update = true), Pol(passthrough = true),
    Pol(discard = 4 * S))
  private val sequencePolicies: Seq[Pol] = Seq(Pol(), Pol(update = true), Pol(trigger = 3), Pol(update = true, trigger = 2))

  private def time(name: String, size: Long, step: Long, offset: Long = 0): Pol => WindowSpec =
    _ => TimeWindowSpec(name, size * S, step * S, offset * S)
  private def interval(duration: Long, period: Long, offset: Long = 0): Pol => WindowSpec =
    p => IntervalWindowSpec(duration * S, period * S, p.discard, offset * S, arrivalOrder = p.order)

  private val families: Seq[Family] = Seq(
    Family("tumbling", "tumbling 10s", EventTime, time("sw_tumbling", 10, 10), alignedPolicies, selectForm = true),
    Family("tumbling", "tumbling 6s offset -2s", EventTime, time("sw_tumbling", 6, 6, -2), fewAlignedPolicies,
      selectForm = true),
    Family("hopping", "hopping 10s step 4s", EventTime, time("sw_hopping", 10, 4), alignedPolicies, selectForm = true),
    Family("hopping", "hopping 9s step 3s offset 1s", EventTime, time("sw_hopping", 9, 3, 1), fewAlignedPolicies,
      selectForm = true),
    Family("hopping", "hopping 3s step 7s (gaps)", EventTime, time("sw_hopping", 3, 7), gapPolicies, selectForm = true),
    Family("timer", "timer 10s (ingest_time)", EventTime, time("sw_timer", 10, 10),
      Seq(Pol(), Pol(trigger = 4), Pol(update = true), Pol(update = true, empty = true)), selectForm = true),
    Family("sliding", "sliding 10s", EventTime, _ => SlidingWindowSpec(10 * S), slidingPolicies, selectForm = false,
      seeds = 2),
    Family("sliding", "sliding 3s", EventTime, _ => SlidingWindowSpec(3 * S), slidingPolicies.take(6), selectForm = false,
      seeds = 2),
    Family("sliding", "sliding 6s delay 3s", EventTime, _ => SlidingWindowSpec(6 * S, 3 * S), slidingPolicies,
      selectForm = false, seeds = 2),
    Family("sliding", "sliding 0s delay 4s", EventTime, _ => SlidingWindowSpec(0L, 4 * S), slidingPolicies.take(6),
      selectForm = false),
    Family("session", "session 5s", EventTime, _ => SessionWindowSpec(5 * S, dynamicGap = false, None), sessionPolicies,
      selectForm = false, seeds = 2),
    Family("session", "session 2s", EventTime, _ => SessionWindowSpec(2 * S, dynamicGap = false, None),
      sessionPolicies.take(8), selectForm = false, seeds = 2),
    Family("session", "session 5s max_duration 20s", OrderedSession,
      _ => SessionWindowSpec(5 * S, dynamicGap = false, Some(20 * S)), Seq(Pol()), selectForm = false, seeds = 4),
    Family("session", "session 2s max_duration 6s", OrderedSession,
      _ => SessionWindowSpec(2 * S, dynamicGap = false, Some(6 * S)), Seq(Pol()), selectForm = false, seeds = 4),
    Family("session", "session dynamic gap", OrderedSession, _ => SessionWindowSpec(0, dynamicGap = true, None),
      Seq(Pol()), selectForm = false, seeds = 4),
    Family("interval", "interval 10s period 5s", Interval, interval(10, 5), intervalPolicies, selectForm = false,
      seeds = 2),
    Family("interval", "interval 10s period 10s", Interval, interval(10, 10), intervalPolicies.take(6),
      selectForm = false, seeds = 2),
    Family("interval", "interval 4s period 7s offset 1s (gaps)", Interval, interval(4, 7, 1), intervalPolicies.take(6),
      selectForm = false, seeds = 2),
    Family("count", "count 4", Sequence(None), _ => CountWindowSpec(4, 4), sequencePolicies, selectForm = true),
    Family("count", "count 4 step 1", Sequence(None), _ => CountWindowSpec(4, 1), sequencePolicies, selectForm = true),
    Family("count", "count 5 step 2", Sequence(None), _ => CountWindowSpec(5, 2), sequencePolicies, selectForm = true),
    Family("count", "count 4 step 1 align end", Sequence(None), _ => CountWindowSpec(4, 1, alignEnd = true), Seq(Pol()),
      selectForm = true, seeds = 2),
    Family("count", "count 4 step 2 align end", Sequence(None), _ => CountWindowSpec(4, 2, alignEnd = true), Seq(Pol()),
      selectForm = true, seeds = 2),
    Family("count", "count 3 align end", Sequence(None), _ => CountWindowSpec(3, 3, alignEnd = true), Seq(Pol()),
      selectForm = true),
    Family("count", "count 5 step 3 align end", Sequence(None), _ => CountWindowSpec(5, 3, alignEnd = true), Seq(Pol()),
      selectForm = true),
    Family("split", "split on flag", Sequence(Some(flag)), _ => SplitWindowSpec, sequencePolicies, selectForm = true,
      seeds = 2),
    Family("delta", "delta dv 3", Sequence(Some(dv)), _ => DeltaWindowSpec(3.0), sequencePolicies, selectForm = true,
      seeds = 2),
    Family("delta", "delta dv 0", Sequence(Some(dv)), _ => DeltaWindowSpec(0.0), Seq(Pol()), selectForm = true),
    Family("punctuation", "punctuation on flag", Sequence(Some(flag)), _ => PunctuationWindowSpec, sequencePolicies,
      selectForm = true, seeds = 2, flagOneIn = 6),
    // Ties in order_by: the hosts fail these queries (the feeder throws); in streaming only within a micro-batch.
    Family("ties", "count 3 order_by ts", Sequence(None, orderByTime = true), _ => CountWindowSpec(3, 3), Seq(Pol()),
      selectForm = true),
    Family("ties", "split order_by seq with ties", Sequence(Some(flag)), _ => SplitWindowSpec, Seq(Pol()),
      selectForm = true, seqTies = true),
    Family("ties", "tumbling 10s order_by seq with ties", EventTime, time("sw_tumbling", 10, 10),
      Seq(Pol(order = true)), selectForm = true, seqTies = true),
    Family("ties", "sliding 10s order_by seq with ties", EventTime, _ => SlidingWindowSpec(10 * S), Seq(Pol(order = true)),
      selectForm = false, seqTies = true),
    Family("ties", "interval 10s order_by seq with ties", Interval, interval(10, 5), Seq(Pol(order = true)),
      selectForm = false, seqTies = true))

  val allCases: Seq[Case] = for {
    f <- families
    p <- f.pols
    select <- if (f.selectForm) Seq(false, true) else Seq(false)
    s <- 1 to f.seeds
  } yield {
    val name = s"${f.label} | ${p.name} | ${if (select) "select" else "groupBy"}" + (if (f.seeds > 1) s" | seed $s" else "")
    // Update emission outputs every window a row enters: fewer rows keep the golden files small.
    val rows = if (select || p.update) (20, 28) else (20, 40)
    val spec = f.spec(p)
    f.kind match {
      case EventTime =>
        Case(f.file, name, spec, p.policies(arrivalOrder = p.order), select, if (p.order) seq else ts, Some(ts),
          tiesAllowed = !p.order, eventTime = true, rows, f.seqTies, f.flagOneIn)
      case Interval =>
        Case(f.file, name, spec, p.policies(arrivalOrder = false), select, if (p.order) seq else ts, Some(ts),
          tiesAllowed = !p.order, eventTime = true, rows, f.seqTies, f.flagOneIn)
      case OrderedSession =>
        val dynamic = spec.asInstanceOf[SessionWindowSpec].dynamicGap
        Case(f.file, name, spec, p.policies(arrivalOrder = false), select, ts, if (dynamic) Some(gap) else None,
          tiesAllowed = true, eventTime = true, rows, f.seqTies, f.flagOneIn)
      case Sequence(signal, byTime) =>
        Case(f.file, name, spec, p.policies(arrivalOrder = false), select, if (byTime) ts else seq, signal,
          tiesAllowed = false, eventTime = false, rows, f.seqTies, f.flagOneIn)
    }
  }

  /**
   * The case's rows in arrival order: 1–3 keys, event times in whole seconds (some half) rising
   * with arrival over 1–1.5 s per row with jitter and some rows 1–25 s late (so ts order differs from
   * arrival order), duplicate times, occasional nulls in every nullable column.
   */
  def generate(c: Case): IndexedSeq[InternalRow] = {
    val rnd = new Random(c.seed)
    val n = c.rows._1 + rnd.nextInt(c.rows._2 - c.rows._1 + 1)
    val keys = "abc".take(Seq(1, 2, 2, 3)(rnd.nextInt(4)))
    val span = n + rnd.nextInt(n / 2 + 1)
    var order = rnd.nextInt(5).toLong
    var walk = rnd.nextInt(10).toDouble
    (0 until n).map { i =>
      def maybeNull(oneIn: Int)(value: => Any): Any = if (rnd.nextInt(oneIn) == 0) null else value
      val key = keys(rnd.nextInt(keys.length)).toString
      order += (if (c.seqTies) rnd.nextInt(2) else 1 + rnd.nextInt(3))
      val seqValue = maybeNull(25)(order)
      val jitter = if (rnd.nextInt(7) == 0) -(1 + rnd.nextInt(25)) else rnd.nextInt(6) - 4
      val t = (i * span / n + jitter) * S + (if (rnd.nextInt(10) == 0) S / 2 else 0L)
      val tsValue = maybeNull(25)(t)
      val value = maybeNull(20)(rnd.nextInt(10).toLong)
      val flagValue = maybeNull(30)(rnd.nextInt(c.flagOneIn) == 0)
      walk += (rnd.nextInt(7) - 2) * 0.5
      val dvValue = maybeNull(20)(walk)
      val gapValue = maybeNull(20)((1 + rnd.nextInt(6)) * S)
      new GenericInternalRow(Array[Any](i.toLong, UTF8String.fromString(key), seqValue, tsValue, value, flagValue,
        dvValue, gapValue))
    }
  }

  def renderInput(r: InternalRow): String = input.indices.map { i =>
    if (r.isNullAt(i)) "null"
    else input(i).dataType match {
      case TimestampType => secs(r.getLong(i))
      case dt => String.valueOf(r.get(i, dt))
    }
  }.mkString(" ")

  private def time(us: Long): String =
    if (us == Long.MaxValue) "max" else if (us == Long.MinValue) "min" else BigDecimal(us, 6).bigDecimal.stripTrailingZeros.toPlainString

  /** Sorts one key's rows as the hosts do: by the order column, nulls first, ties in input order. */
  private def arrivalSorted(c: Case, rows: Seq[InternalRow]): Seq[InternalRow] = {
    val ordinal = input.indexWhere(_.exprId == c.order.exprId)
    rows.sortBy(r => if (r.isNullAt(ordinal)) (0, 0L) else (1, r.getLong(ordinal)))
  }

  private def keyOf(r: InternalRow): String = r.getUTF8String(1).toString

  /** Renders output rows in emission order (select: consecutive rows of one window on one line). */
  private final class Renderer(c: Case, byId: Map[Long, InternalRow]) {
    val lines = ArrayBuffer[String]()
    private var runKey: String = null
    private val runIds = new StringBuilder
    private val windowOrdinal = c.output.indexWhere(_.exprId == c.window.exprId)

    private def bound(w: InternalRow, i: Int): String = if (c.boundIsTime) time(w.getLong(i)) else w.getLong(i).toString

    def apply(r: InternalRow): Unit = {
      val w = r.getStruct(windowOrdinal, 3)
      val window = s"${bound(w, 0)}..${bound(w, 1)} ${w.getUTF8String(2)}"
      if (c.select) {
        val rowId = r.getLong(0)
        val original = byId(rowId)
        val same = input.indices.forall { i =>
          r.isNullAt(i) == original.isNullAt(i) && (r.isNullAt(i) || r.get(i, input(i).dataType) == original.get(i, input(i).dataType))
        }
        val ref = if (same) s"#$rowId" else s"#$rowId{${renderInput(r)}}"
        val key = s"${keyOf(r)} $window"
        if (key != runKey) { flush(); runKey = key }
        runIds ++= " " ++= ref
      } else {
        def long(i: Int) = if (r.isNullAt(i)) "null" else r.getLong(i).toString
        val list = r.getArray(5).toLongArray().mkString("[", ",", "]")
        lines += s"${r.getUTF8String(0)} $window ${long(2)} ${long(3)} ${long(4)} $list"
      }
    }

    def flush(): Unit = if (runKey != null) {
      lines += runKey + runIds.toString
      runKey = null
      runIds.clear()
    }

    def line(s: String): Unit = { flush(); lines += s }
  }

  private def failure(e: Throwable): String =
    s"!! ${e.getClass.getName}: ${String.valueOf(e.getMessage).replace("\n", "\\n")}"

  /** Both modes of one case, as golden lines. */
  def runCase(c: Case): Seq[String] = {
    val rows = generate(c)
    val byId = rows.map(r => r.getLong(0) -> r).toMap
    val out = new Renderer(c, byId)
    out.line("-- batch")
    runBatch(c, rows, out)
    val rnd = new Random(c.seed ^ 0x5eed)
    val chunks = 2 + rnd.nextInt(3)
    val cuts = (Seq(0, rows.size) ++ rnd.shuffle((1 until rows.size).toList).take(chunks - 1)).sorted
    val delay = Seq(0L, 2 * S, 5 * S)(rnd.nextInt(3))
    out.line(s"-- stream chunks=${cuts.sliding(2).map(p => p(1) - p(0)).mkString(",")}" +
      (if (c.eventTime) s" delay=${time(delay)}" else ""))
    runStream(c, cuts.sliding(2).map(p => rows.slice(p(0), p(1))).toSeq, delay, out)
    out.flush()
    out.lines.toSeq
  }

  private def runBatch(c: Case, rows: Seq[InternalRow], out: Renderer): Unit = {
    var key: InternalRow = null
    val engine = c.blueprint.wire(() => key, out.apply).newEngine()
    val feeder = new EngineFeeder(c.spec, input, c.order, c.signal, c.tiesAllowed)
    // Spark's operators hand over one reused UnsafeRow: an engine must copy what it keeps.
    val reused = UnsafeProjection.create(input.map(_.dataType).toArray)
    try {
      for (keyName <- rows.map(keyOf).distinct.sorted) {
        if (key != null) engine.finishKey()
        key = new GenericInternalRow(Array[Any](UTF8String.fromString(keyName)))
        engine.startKey()
        feeder.startKey()
        arrivalSorted(c, rows.filter(r => keyOf(r) == keyName)).foreach(r => feeder.feed(engine, reused(r)))
      }
      if (key != null) engine.finishKey()
      out.line(s"= n=${engine.windowsEmitted}/${engine.rowsLate}/${engine.rowsPassedThrough}/${engine.rowsInNoWindow} " +
        s"feed=${feeder.accepted}/${feeder.rejected}/${feeder.nullOrders}")
    } catch {
      case NonFatal(e) => out.line(failure(e))
    }
  }

  /** The streaming processor's calls, micro-batch by micro-batch (see the suite's doc). */
  private def runStream(c: Case, chunks: Seq[Seq[InternalRow]], delay: Long, out: Renderer): Unit = {
    final case class Stored(timerMs: Option[Long])
    val state = mutable.TreeMap[String, Stored]()
    val keyRows = new MapKeyRows(inline = 4L) // keys move between both forms of kept rows
    var maxSeen: Option[Long] = None
    var accepted = 0L
    var rejected = 0L
    var nullOrders = 0L
    val tsOrdinal = input.indexOf(ts)
    val toUnsafe = UnsafeProjection.create(input.map(_.dataType).toArray)
    // Event-time families follow the watermark; a last no-data batch moves it over the last rows.
    val batches: Seq[Option[Seq[InternalRow]]] = chunks.map(Some(_)) ++ (if (c.eventTime) Seq(None) else Nil)
    try {
      for ((batch, b) <- batches.zipWithIndex) {
        val watermark: Option[Long] =
          if (!c.eventTime) None else maxSeen.map(m => (Math.floorDiv(m, 1000L) - delay / 1000L)).filter(_ > 0).map(_ * 1000L)
        var key: InternalRow = null
        val wiring = c.blueprint.wire(() => key, out.apply) // a new task
        val codec = wiring.codec(c.order.dataType)
        val feeder = new EngineFeeder(c.spec, input, c.order, c.signal, c.tiesAllowed)

        // handleInputRows for every key with rows, then the timers the watermark passed (Spark's order).
        val byKey = batch.getOrElse(Nil).groupBy(keyOf)
        def visit(keyName: String, rowsOfKey: Seq[InternalRow], expired: Option[Long]): Unit = {
          key = new GenericInternalRow(Array[Any](UTF8String.fromString(keyName)))
          val engine = state.get(keyName) match {
            case Some(_) => codec.load(keyRows.of(keyName)).get
            case None => val e = wiring.newEngine(); e.startKey(); e
          }
          watermark.foreach(engine.advanceTo)
          feeder.startKey()
          // (The processor converts each row to an UnsafeRow of its own.)
          arrivalSorted(c, rowsOfKey).foreach(r => feeder.feed(engine, toUnsafe(r).copy()))
          val forgettable = watermark.map(engine.forgettable)
          val deadline = engine.nextDeadline
          val kept = !forgettable.contains(true)
          if (kept) {
            val timer = if (c.eventTime && deadline != Long.MaxValue) {
              val ms = Math.floorDiv(deadline, 1000L) + (if (Math.floorMod(deadline, 1000L) == 0) 0 else 1)
              if (expired.contains(ms)) None else Some(ms)
            } else None
            codec.save(engine, keyRows.of(keyName), deadline, Long.MaxValue)
            state(keyName) = Stored(timer)
          } else {
            codec.forget(engine, keyRows.of(keyName))
            // A forgotten key leaves no state row behind.
            if (keyRows.count(keyName) != 0) throw new IllegalStateException(s"$keyName forgotten with state rows left")
            state.remove(keyName)
          }
          // (Count and data windows follow their rows only: no clock, so no deadline or forgetting.)
          out.line(s"~${b + 1} $keyName ${if (expired.isEmpty) s"+${rowsOfKey.size}" else "timer"} " +
            (if (!c.eventTime) "" else s"wm=${watermark.map(time).getOrElse("-")} " +
              s"dl=${if (deadline == Long.MaxValue) "-" else time(deadline)} " +
              s"fg=${forgettable.map(f => if (f) "y" else "n").getOrElse("-")} ") +
            s"n=${engine.windowsEmitted}/${engine.rowsLate}/${engine.rowsPassedThrough}/${engine.rowsInNoWindow}")
        }
        for (keyName <- byKey.keys.toSeq.sorted) visit(keyName, byKey(keyName), None)
        watermark.foreach { w =>
          val due = state.toSeq.collect { case (name, Stored(Some(ms))) if ms * 1000L <= w => (name, ms) }
          for ((name, ms) <- due) visit(name, Nil, Some(ms))
        }
        accepted += feeder.accepted
        rejected += feeder.rejected
        nullOrders += feeder.nullOrders
        batch.getOrElse(Nil).foreach { r =>
          if (!r.isNullAt(tsOrdinal)) maxSeen = Some(maxSeen.fold(r.getLong(tsOrdinal))(math.max(_, r.getLong(tsOrdinal))))
        }
      }
      out.line(s"= feed=$accepted/$rejected/$nullOrders")
    } catch {
      case NonFatal(e) => out.line(failure(e))
    }
  }
}
