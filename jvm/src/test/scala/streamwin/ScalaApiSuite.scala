package streamwin

import java.sql.Timestamp

import org.apache.spark.sql.{AnalysisException, Encoder, Encoders, SparkSession}
import org.apache.spark.sql.expressions.Aggregator
import org.apache.spark.sql.functions._
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import streamwin.api.SplitTrigger
import streamwin.api.{functions => sw}

/** Sum of squares as a typed Scala Aggregator (a TypedImperativeAggregate once registered as a UDAF). */
object SumOfSquares extends Aggregator[Long, Long, Long] {
  override def zero: Long = 0L
  override def reduce(b: Long, a: Long): Long = b + a * a
  override def merge(b1: Long, b2: Long): Long = b1 + b2
  override def finish(r: Long): Long = r
  override def bufferEncoder: Encoder[Long] = Encoders.scalaLong
  override def outputEncoder: Encoder[Long] = Encoders.scalaLong
}

/** KX's high-water-mark trigger: a window starts whenever a value exceeds every earlier one (initially 15). */
object HighWaterMark extends SplitTrigger[Int] {
  override def initialState: Int = 15
  override def next(mark: Int, row: org.apache.spark.sql.Row): (Int, Boolean) = {
    val v = row.getInt(0)
    if (v > mark) (v, true) else (mark, false)
  }
}

/** Scala users: the functions object, SQL, and a Scala Aggregator UDAF, on a real local Spark. */
class ScalaApiSuite extends AnyFunSuite with BeforeAndAfterAll {
  // The extension is found on the classpath (META-INF/services), exactly as with --jars.
  private lazy val spark = SparkSession.builder().master("local[2]")
    .config("spark.sql.shuffle.partitions", "3").config("spark.ui.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC")
    .config("spark.sql.streaming.stateStore.providerClass", streamwin.execution.StreamingWindowHost.RocksDbProvider)
    .getOrCreate()

  override def afterAll(): Unit = spark.stop()

  private def ts(seconds: Long) = new Timestamp(seconds * 1000)

  test("tumbling and hopping from Scala equal Spark's window()") {
    import spark.implicits._
    val df = (0L until 200L).map(i => (i % 3, ts(i * 7 % 173), i)).toDF("k", "ts", "v").repartition(4)
    for ((ours, theirs) <- Seq(
      sw.tumbling(col("ts"), "10 seconds") -> window(col("ts"), "10 seconds"),
      sw.hopping(col("ts"), "30 seconds", "10 seconds", "5 seconds") -> window(col("ts"), "30 seconds", "10 seconds", "5 seconds"))) {
      val a = df.groupBy(col("k"), ours).agg(sum("v"), max("v")).select("k", "window.start", "window.end", "sum(v)", "max(v)")
      val b = df.groupBy(col("k"), theirs).agg(sum("v"), max("v")).select("k", "window.start", "window.end", "sum(v)", "max(v)")
      assert(a.collect().toSet == b.collect().toSet)
      assert(a.count() > 0)
    }
  }

  test("sliding, session, interval and timer windows from Scala and SQL") {
    import spark.implicits._
    val df = Seq((1L, 1L), (4L, 2L), (20L, 3L), (3L, 4L)).map { case (s, seq) => (ts(s), seq, s) }.toDF("ts", "seq", "v")
    def rows(c: org.apache.spark.sql.Column) =
      df.groupBy(c).agg(sum("v").as("s")).select("window.start", "window.end", "window.kind", "s")
        .collect().map(r => (r.getTimestamp(0).getTime / 1000, r.getTimestamp(1).getTime / 1000, r.getString(2), r.getLong(3))).sorted.toSeq
    assert(rows(sw.sliding(col("ts"), "5 seconds")) == Seq((-4L, 1L, "final", 1L), (-2L, 3L, "final", 4L), (-1L, 4L, "final", 8L),
      (15L, 20L, "final", 20L)))
    // With a delay of 2 s, the window of t is [t - 5 s, t + 2 s).
    assert(rows(sw.sliding(col("ts"), "5 seconds", "2 seconds")) == Seq((-4L, 3L, "final", 1L), (-2L, 5L, "final", 8L),
      (-1L, 6L, "final", 8L), (15L, 22L, "final", 20L)))
    // Only the rows with v > 3 open a window (at 4 s and 20 s); each holds the other rows of its range.
    assert(rows(sw.slidingWhen(col("ts"), "5 seconds", "0 seconds", col("v") > 3)) == Seq((-1L, 4L, "final", 8L),
      (15L, 20L, "final", 20L)))
    assert(rows(sw.slidingWhen(col("ts"), "5 seconds", "2 seconds", col("v") > 3)) == Seq((-1L, 6L, "final", 8L),
      (15L, 22L, "final", 20L)))
    assert(rows(sw.session(col("ts"), "5 seconds")) == Seq((1L, 9L, "final", 8L), (20L, 25L, "final", 20L)))
    assert(rows(sw.session(col("ts"), "2 seconds", "10 seconds")) == Seq((1L, 6L, "final", 8L), (20L, 22L, "final", 20L)))
    // In seq order 1, 4, 20, 3: the 20 closes [0,10) (final 5); the 3 is late but within the discard age (update 8).
    assert(rows(sw.interval(col("ts"), "10 seconds", "10 seconds", "30 seconds", col("seq"))) ==
      Seq((0L, 10L, "final", 5L), (0L, 10L, "update", 8L), (20L, 30L, "final", 20L)))
    assert(rows(sw.timer("10 seconds", col("ts"))) == Seq((0L, 10L, "final", 8L), (20L, 30L, "final", 20L)))
    df.createOrReplaceTempView("readings")
    val viaSql = spark.sql("SELECT sw_session(ts, '5 seconds', 'max_duration', '1 hour') AS window, sum(v) AS s FROM readings " +
      "GROUP BY sw_session(ts, '5 seconds', 'max_duration', '1 hour')").collect().map(_.getLong(1)).sorted.toSeq
    assert(viaSql == Seq(8L, 20L))
    val e = intercept[AnalysisException](df.groupBy(sw.session(col("ts"), "0 seconds")).count())
    assert(e.getMessage.contains("sw_session: argument `gap` must be positive"))
  }

  test("a Scala Aggregator UDAF in time and count windows") {
    import spark.implicits._
    val squares = udaf(SumOfSquares)
    val df = (1L to 12L).map(i => (ts(i), i)).toDF("ts", "v").repartition(3)
    val byTime = df.groupBy(sw.tumbling(col("ts"), "5 seconds")).agg(squares(col("v")).as("sq"))
      .orderBy("window").select("sq").as[Long].collect().toSeq
    assert(byTime == Seq(1L + 4 + 9 + 16, 25L + 36 + 49 + 64 + 81, 100L + 121 + 144))
    val byCount = df.groupBy(sw.count(4, 2, col("v"))).agg(squares(col("v")).as("sq"))
      .where("window.kind = 'final'").orderBy("window").select("sq").as[Long].collect().toSeq
    assert(byCount == Seq(1L + 4 + 9 + 16, 9L + 16 + 25 + 36, 25L + 36 + 49 + 64, 49L + 64 + 81 + 100, 81L + 100 + 121 + 144))
  }

  test("count windows in select with partitionBy, and SQL") {
    import spark.implicits._
    val df = Seq(("a", 1, 10), ("a", 2, 20), ("a", 3, 30), ("b", 1, 5)).toDF("k", "seq", "v")
    val tagged = df.select(col("k"), col("seq"), sw.count(2, 2, col("seq"), Seq(col("k"))))
      .orderBy("k", "seq").select("k", "seq", "window.kind").as[(String, Int, String)].collect().toSeq
    assert(tagged == Seq(("a", 1, "final"), ("a", 2, "final"), ("a", 3, "partial"), ("b", 1, "partial")))
    df.createOrReplaceTempView("t")
    val sums = spark.sql("SELECT k, sum(v) AS s FROM t GROUP BY k, sw_count(2, 'order_by', seq) ORDER BY k, s")
      .as[(String, Long)].collect().toSeq
    assert(sums == Seq(("a", 30L), ("a", 30L), ("b", 5L)))
  }

  test("data-driven windows and end-aligned count windows from Scala") {
    import spark.implicits._
    val temps = Seq(16.0, 16.4, 17.1, 17.6, 17.0, 19.2).zipWithIndex.toDF("temp", "seq")
    val byDelta = temps.groupBy(sw.delta(col("temp"), 1.5, col("seq"))).agg(count("*").as("n"))
      .orderBy("window").select("n", "window.kind").as[(Long, String)].collect().toSeq
    assert(byDelta == Seq((3L, "final"), (2L, "final"), (1L, "partial")))
    val events = (1L to 9L).toDF("event")
    val ek = events.groupBy(sw.countEndAligned(5, 2, col("event"))).agg(sum("event").as("s"))
      .orderBy("window").select("s").as[Long].collect().toSeq
    assert(ek == Seq(2L + 3 + 4 + 5 + 6, 4L + 5 + 6 + 7 + 8, 6L + 7 + 8 + 9))
    val marked = Seq((1, false), (2, true), (3, false), (4, false)).toDF("seq", "mark")
    val punct = marked.groupBy(sw.punctuation(col("mark"), col("seq"))).agg(count("*").as("n"))
      .orderBy("window").select("n").as[Long].collect().toSeq
    assert(punct == Seq(1L, 2L))
    val splitOnEven = marked.groupBy(sw.split(col("seq") % 2 === 1, col("seq"))).agg(count("*").as("n"))
      .orderBy("window").select("n").as[Long].collect().toSeq
    assert(splitOnEven == Seq(2L, 2L))
  }

  test("a custom stateful split trigger reproduces KX's high-water-mark example") {
    import spark.implicits._
    // Batches 0 1 5 | 14 15 16 | 17 18 | 16 17 16: the 16 ends the first window; 17 and 18 each end one.
    val df = Seq(0, 1, 5, 14, 15, 16, 17, 18, 16, 17, 16).zipWithIndex.map { case (v, i) => ("a", i, v) }
      .toDF("k", "seq", "val").repartition(3)
    val out = df.groupBy(col("k"), sw.splitBy(HighWaterMark, Seq(col("val")), col("seq")))
      .agg(collect_list("val").as("vals")).orderBy("window")
      .select("window.kind", "vals").as[(String, Seq[Int])].collect().toSeq
    assert(out == Seq(("final", Seq(0, 1, 5, 14, 15)), ("final", Seq(16)), ("final", Seq(17)),
      ("partial", Seq(18, 16, 17, 16))))
    val tagged = df.select(col("seq"), sw.splitBy(HighWaterMark, Seq(col("val")), col("seq"), col("k")))
      .orderBy("seq").select("window.start").as[Int].collect().toSeq
    assert(tagged == Seq(0, 0, 0, 0, 0, 5, 6, 7, 7, 7, 7))
  }

  test("a bad spec is an AnalysisException naming the argument") {
    val e = intercept[AnalysisException](spark.range(3).groupBy(sw.count(0, col("id"))).count().collect())
    assert(e.getMessage.contains("sw_count: argument `size` must be a positive whole number of rows, got 0"))
  }

  test("event-time policies from Scala use the SQL names: KX lateness and passthrough") {
    import spark.implicits._
    val df = Seq(0L, 4, 3, 8, 10, 1, 12, 9, 20, 18, 25).zipWithIndex.map { case (s, i) => ("a", i.toLong, ts(s), s) }
      .toDF("k", "seq", "ts", "s")
    val kx = df.groupBy(col("k"), sw.withOptions(sw.tumbling(col("ts"), "10 seconds"),
      "lateness" -> java.time.Duration.ofSeconds(2), "order_by" -> col("seq")))
      .agg(sort_array(collect_list("s")).as("members"))
    assert(kx.orderBy("window").collect().map(_.getSeq[Long](2)).toSeq ==
      Seq(Seq(0L, 1, 3, 4, 8), Seq(10L, 12, 18), Seq(20L, 25)))
    val passed = df.groupBy(col("k"), sw.withOptions(sw.tumbling(col("ts"), "10 seconds"), "order_by" -> col("seq"),
      "late" -> "passthrough", "count_trigger" -> 100L, "emit_empty" -> false))
      .agg(count("*").as("n")).select("window.kind", "n").collect().map(r => (r.getString(0), r.getLong(1)))
    assert(passed.toSeq.sorted == Seq(("final", 2L), ("final", 2L), ("final", 4L), ("late", 1L), ("late", 2L)))
    val e = intercept[AnalysisException](df.groupBy(sw.withOptions(sw.count(3, col("seq")), "emit_empty" -> true)).count())
    assert(e.getMessage.contains("sw_count: argument `emit_empty` is not available for sw_count"))
  }

  test("streams from Scala: a user's split trigger and a Scala Aggregator keep their state across micro-batches") {
    import spark.implicits._
    implicit val sqlContext: org.apache.spark.sql.SQLContext = spark.sqlContext
    val input = TestStreams.MemoryStream[(String, Long, Int)]
    val squares = udaf(SumOfSquares)
    val rows = (0L until 40L).map(i => (if (i % 3 == 0) "a" else "b", i, ((i * 37) % 23).toInt))
    val stream = input.toDF().toDF("k", "seq", "val")
    val query = stream.groupBy(col("k"), sw.splitBy(HighWaterMark, Seq(col("val")), col("seq")))
      .agg(collect_list("val").as("vals"), squares(col("seq")).as("sq"))
      .writeStream.format("memory").queryName("scala_split_stream").outputMode("append").start()
    try {
      rows.grouped(7).foreach { part =>
        input.addData(part: _*)
        query.processAllAvailable()
      }
    } finally query.stop()
    def render(df: org.apache.spark.sql.DataFrame) = df.collect().map(_.toString).sorted.toSeq
    val streamed = render(spark.table("scala_split_stream"))
    val batch = render(rows.toDF("k", "seq", "val").groupBy(col("k"), sw.splitBy(HighWaterMark, Seq(col("val")), col("seq")))
      .agg(collect_list("val").as("vals"), squares(col("seq")).as("sq")).where("window.kind = 'final'"))
    // Every window the stream closed, and only those: the batch's final windows (its teardown
    // partials are still open in the stream).
    assert(streamed.nonEmpty && streamed == batch)
  }
}
