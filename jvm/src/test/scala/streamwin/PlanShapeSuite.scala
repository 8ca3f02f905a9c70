package streamwin

import java.sql.Timestamp

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning
import org.apache.spark.sql.execution.{GenerateExec, InputAdapter, SortExec, SparkPlan, WholeStageCodegenExec}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec
import org.apache.spark.sql.catalyst.expressions.aggregate.{Final, Partial}
import org.apache.spark.sql.functions._
import org.apache.spark.sql.streamwin.StreamingInternals.StreamingQueryWrapper
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import streamwin.api.WindowMetricsReport
import streamwin.api.functions.{count => countWindow, hopping, session, sliding, tumbling, withOptions}
import streamwin.catalyst.WindowAggregate
import streamwin.execution.{ArrivalOrderSummaryExec, OrderedTumblingAggregateExec, WindowReplayExec,
  StatefulWindowExec, StreamingWindowHost, TimeWindowAggregateExec, TimeWindowAssignExec, TumblingWindowResultExec, WindowFeed}

/** The physical plans streamwin chooses: pre-aggregation below the exchange, one exchange, no needless sort. */
class PlanShapeSuite extends AnyFunSuite with BeforeAndAfterAll {
  // Adaptive execution off, so the executed plan is the planned one (no AQE wrapper, no stage rewrites).
  private lazy val spark = SparkSession.builder().master("local[2]")
    .config("spark.sql.shuffle.partitions", "3").config("spark.ui.enabled", "false")
    .config("spark.sql.adaptive.enabled", "false").config("spark.sql.session.timeZone", "UTC")
    .config("spark.sql.streaming.stateStore.providerClass", StreamingWindowHost.RocksDbProvider)
    .getOrCreate()

  override def afterAll(): Unit = spark.stop()

  test("streamwin registers once in a session that names it twice (spark.sql.extensions and the ServiceLoader)") {
    val extensions = new org.apache.spark.sql.SparkSessionExtensions
    new StreamwinExtensions().apply(extensions)
    new StreamwinExtensions().apply(extensions)
    val strategies = org.apache.spark.sql.streamwin.ExtensionRules.plannerStrategies(extensions, spark)
    assert(strategies.count(_ == streamwin.execution.StreamWindowStrategy) == 1, strategies)
  }

  private def readings: DataFrame = {
    import spark.implicits._
    (0L until 100L).map(i => (i % 3, new Timestamp(i * 1000), i)).toDF("k", "ts", "v")
  }

  private def nodes(plan: SparkPlan): Seq[SparkPlan] = plan.collect { case p => p }
  private def exchanges(plan: SparkPlan) = plan.collect { case e: ShuffleExchangeExec => e }
  /** The operator itself, without the whole-stage code generation wrappers around it. */
  private def unwrapped(plan: SparkPlan): SparkPlan = plan match {
    case w: WholeStageCodegenExec => unwrapped(w.child)
    case i: InputAdapter => unwrapped(i.child)
    case other => other
  }

  /** The plan has one exchange, and `exec` reads it through a sort by `order` (a local sort: no other sort). */
  private def assertSortedAboveOneExchange(plan: SparkPlan, exec: SparkPlan, order: Seq[Expression]): Unit = {
    assert(exchanges(plan).size == 1, plan.treeString)
    unwrapped(exec.children.head) match {
      case sort: SortExec =>
        assert(!sort.global, plan.treeString)
        assert(sort.sortOrder.map(_.child).zip(order).forall { case (a, b) => a.semanticEquals(b) } &&
          sort.sortOrder.size == order.size, plan.treeString)
        assert(unwrapped(sort.child).isInstanceOf[ShuffleExchangeExec], plan.treeString)
      case other => fail(s"expected a sort below ${exec.nodeName}, got ${other.nodeName}\n${plan.treeString}")
    }
    assert(nodes(plan).count(_.isInstanceOf[SortExec]) == 1, plan.treeString)
  }

  private def column(plan: SparkPlan, name: String): Attribute = plan.output.find(_.name == name).get

  /**
   * The aggregation directly below the only exchange is Spark's partial (map-side) one (for tumbling
   * with an arrival order, through the node that summarizes its arrival orders and passes it on).
   */
  private def assertPartialBelowOneExchange(plan: SparkPlan): Unit = {
    val shuffles = exchanges(plan)
    assert(shuffles.size == 1, plan.treeString)
    val belowShuffle = unwrapped(shuffles.head.child) match {
      case summary: ArrivalOrderSummaryExec => unwrapped(summary.child)
      case other => other
    }
    belowShuffle match {
      case partial: BaseAggregateExec => assert(partial.aggregateExpressions.forall(_.mode == Partial), plan.treeString)
      case other => fail(s"expected a partial aggregation below the exchange, got ${other.nodeName}\n${plan.treeString}")
    }
  }

  test("tumbling without policies is Spark's hash aggregation by (key, window start): no sort") {
    val df = readings.groupBy(col("k"), tumbling(col("ts"), "10 seconds")).agg(sum("v"), max("v"))
    val plan = df.queryExecution.executedPlan
    assertPartialBelowOneExchange(plan)
    assert(!nodes(plan).exists(_.isInstanceOf[SortExec]), plan.treeString)
    val result = plan.collectFirst { case r: TumblingWindowResultExec => r }.getOrElse(fail(plan.treeString))
    unwrapped(result.child) match {
      case last: BaseAggregateExec => assert(last.aggregateExpressions.forall(_.mode == Final), plan.treeString)
      case other => fail(s"expected the final aggregation under the window result, got ${other.nodeName}")
    }
    // The same windows as Spark's own window().
    val theirs = readings.groupBy(col("k"), window(col("ts"), "10 seconds")).agg(sum("v"), max("v"))
    def rows(d: DataFrame) = d.select("k", "window.start", "window.end", "sum(v)", "max(v)").collect().toSet
    assert(rows(df) == rows(theirs) && rows(df).size == 30)
  }

  test("hopping windows pre-aggregate slices below the one exchange, then sort them by (key, slice)") {
    val plan = readings.groupBy(col("k"), hopping(col("ts"), "30 seconds", "10 seconds")).agg(sum("v"))
      .queryExecution.executedPlan
    assertPartialBelowOneExchange(plan)
    val windows = plan.collectFirst { case t: TimeWindowAggregateExec => t }.getOrElse(fail(plan.treeString))
    assertSortedAboveOneExchange(plan, windows, windows.keys :+ windows.slice)
  }

  test("count windows: one exchange by key, each key sorted by order_by, no partial aggregation") {
    val plan = readings.groupBy(col("k"), countWindow(3, col("v"))).agg(sum("v")).queryExecution.executedPlan
    val windows = plan.collectFirst { case s: WindowReplayExec => s }.getOrElse(fail(plan.treeString))
    assertSortedAboveOneExchange(plan, windows, Seq(column(windows.child, "k"), column(windows.child, "v")))
    assert(!nodes(plan).exists(_.isInstanceOf[BaseAggregateExec]), plan.treeString)
    // In a select, partition_by columns are the keys.
    val tagged = readings.select(col("v"), countWindow(3, 1, col("v"), Seq(col("k")))).queryExecution.executedPlan
    val assign = tagged.collectFirst { case s: WindowReplayExec => s }.getOrElse(fail(tagged.treeString))
    assertSortedAboveOneExchange(tagged, assign, assign.streamKeys :+ assign.order)
  }

  test("arrival-order policies replay each key's rows sorted by (key, order_by) after one exchange") {
    val plan = readings.groupBy(col("k"), withOptions(hopping(col("ts"), "10 seconds", "5 seconds"), "order_by" -> col("v"),
      "lateness" -> "5 seconds")).agg(sum("v")).queryExecution.executedPlan
    val replay = plan.collectFirst { case e: WindowReplayExec => e }.getOrElse(fail(plan.treeString))
    assertSortedAboveOneExchange(plan, replay, Seq(column(replay.child, "k"), column(replay.child, "v")))
    assert(!nodes(plan).exists(_.isInstanceOf[BaseAggregateExec]), plan.treeString)
  }

  test("tumbling with order_by and lateness is aggregated as window() is, shuffled by key, no sort") {
    def query(d: DataFrame, options: (String, Any)*) = d.groupBy(col("k"), withOptions(tumbling(col("ts"), "10 seconds"),
      Seq[(String, Any)]("order_by" -> col("v"), "lateness" -> "2 seconds") ++ options: _*)).agg(sum("v"), count("*"))
    val df = query(readings)
    val plan = df.queryExecution.executedPlan
    assertPartialBelowOneExchange(plan)
    assert(exchanges(plan).head.outputPartitioning match {
      case h: HashPartitioning => h.expressions.map(_.asInstanceOf[Attribute].name) == Seq("k")
      case _ => false
    }, plan.treeString)
    val exec = plan.collectFirst { case e: OrderedTumblingAggregateExec => e }.getOrElse(fail(plan.treeString))
    // The aggregated windows are checked as the final aggregation hands them over: no sort.
    assert(!nodes(plan).exists(_.isInstanceOf[SortExec]), plan.treeString)
    assert(unwrapped(exec.windows).isInstanceOf[BaseAggregateExec], plan.treeString)
    assert(unwrapped(exchanges(plan).head.child).isInstanceOf[ArrivalOrderSummaryExec], plan.treeString)

    // The same windows and row accounting as the replay (a count trigger no window reaches forces it),
    // for keys in order, keys with late rows, and rows without order or time.
    import spark.implicits._
    val mixed = ((0L until 60L).map(i => (i % 3, Option(new Timestamp((if (i % 3 == 0 && i % 7 == 0) i / 2 else i) * 1000)), Option(i))) ++
      Seq((1L, None, Some(100L)), (2L, Some(new Timestamp(5000)), None))).toDF("k", "ts", "v")
    for (late <- Seq("drop", "passthrough")) {
      val fast = query(mixed, "late" -> late)
      val replayed = query(mixed, "late" -> late, "count_trigger" -> 1000000L)
      assert(fast.queryExecution.executedPlan.collectFirst { case e: OrderedTumblingAggregateExec => e }.isDefined)
      assert(fast.collect().map(_.toString).sorted.toSeq == replayed.collect().map(_.toString).sorted.toSeq)
      def accounting(d: DataFrame) = { val m = WindowMetricsReport.of(d); m.remove("peakBufferedRows"); m }
      assert(accounting(fast) == accounting(replayed) && accounting(fast).get("lateRowsDropped") +
        accounting(fast).get("lateRowsPassedThrough") > 0, accounting(fast))
    }
  }

  test("tumbling with order_by: the map tasks' arrival-order spans spare the check job when they prove every key in order") {
    // Jobs that checked the windows' arrival orders, by the call site Spark names them after.
    val checkJobs = new java.util.concurrent.atomic.AtomicInteger
    val listener = new org.apache.spark.scheduler.SparkListener {
      override def onJobStart(job: org.apache.spark.scheduler.SparkListenerJobStart): Unit =
        if (job.stageInfos.exists(_.name.startsWith("collect at OrderedTumblingAggregateExec"))) checkJobs.incrementAndGet()
    }
    def run(d: DataFrame): (Seq[String], Int) = {
      org.apache.spark.sql.streamwin.ListenerEvents.delivered(spark.sparkContext)
      checkJobs.set(0)
      val rows = d.collect().map(_.toString).sorted.toSeq
      org.apache.spark.sql.streamwin.ListenerEvents.delivered(spark.sparkContext)
      (rows, checkJobs.get)
    }
    def query(d: DataFrame, options: (String, Any)*) = d.groupBy(col("k"), withOptions(tumbling(col("ts"), "10 seconds"),
      Seq[(String, Any)]("order_by" -> col("v"), "lateness" -> "2 seconds") ++ options: _*)).agg(sum("v"), count("*"))
    // Four map tasks of 150 rows, each a stretch of arrival order over 75 s of event time: the windows
    // [70 s, 80 s) and [220 s, 230 s) continue from one task into the next.
    val inOrder = spark.range(0, 600, 1, 4).select(col("id") % 3 as "k", timestamp_micros(col("id") * 500000) as "ts",
      col("id") as "v")
    // The same rows dealt round-robin: every task holds rows from the whole stretch, so spans overlap.
    val interleaved = inOrder.repartition(4)
    // A late row: key 1's row 301 (150.5 s) carries 90.3 s instead. It is key 1's first row in the
    // fourth task, which still chains on its own: only the spans across tasks (the third task's last
    // window starts at 140 s, the fourth's first at 90 s) show it.
    val late = inOrder.withColumn("ts", when(col("v") === 301, timestamp_micros(col("v") * 300000)).otherwise(col("ts")))
    spark.sparkContext.addSparkListener(listener)
    try {
      for (adaptive <- Seq("false", "true")) {
        spark.conf.set("spark.sql.adaptive.enabled", adaptive)
        val (replayed, _) = run(query(inOrder, "count_trigger" -> 1000000L))
        assert(run(query(inOrder)) == ((replayed, 0)), s"adaptive $adaptive")
        assert(run(query(interleaved)) == ((replayed, 1)), s"adaptive $adaptive")
        val (lateReplayed, _) = run(query(late, "count_trigger" -> 1000000L))
        assert(lateReplayed != replayed && run(query(late)) == ((lateReplayed, 1)), s"adaptive $adaptive")
      }
    } finally {
      spark.conf.set("spark.sql.adaptive.enabled", "false")
      spark.sparkContext.removeSparkListener(listener)
    }
  }

  test("sessions and sliding windows in a select: the window operator tags rows after one exchange and a sort, no aggregation") {
    for (windowColumn <- Seq(session(col("ts"), "5 seconds", col("k")), sliding(col("ts"), "5 seconds", col("k")))) {
      val plan = readings.select(col("v"), windowColumn).queryExecution.executedPlan
      val assign = plan.collectFirst { case e: WindowReplayExec => e }.getOrElse(fail(plan.treeString))
      assertSortedAboveOneExchange(plan, assign, assign.streamKeys :+ assign.order)
      // No collect_list of whole rows and no explode: rows stay rows.
      assert(!nodes(plan).exists(n => n.isInstanceOf[BaseAggregateExec] || n.isInstanceOf[GenerateExec]), plan.treeString)
    }
  }

  test("tumbling in a select is a map over the rows: no exchange, no sort") {
    val plan = readings.select(col("v"), tumbling(col("ts"), "10 seconds")).queryExecution.executedPlan
    assert(exchanges(plan).isEmpty && !nodes(plan).exists(_.isInstanceOf[SortExec]), plan.treeString)
    assert(plan.collectFirst { case t: TimeWindowAssignExec => t }.isDefined, plan.treeString)
  }

  test("a window over a stream is analysed as over batch data and planned on streamwin's operator per micro-batch") {
    import spark.implicits._
    implicit val sqlContext: org.apache.spark.sql.SQLContext = spark.sqlContext
    val input = TestStreams.MemoryStream[(String, Long, Long, String)]
    val windowed = input.toDF().toDF("k", "seq", "v", "note").groupBy(col("k"), countWindow(2, col("seq"))).agg(sum("v"))
    // The analyzer only resolves: the window node, with the metrics its micro-batches share.
    val analyzed = windowed.queryExecution.analyzed
    assert(analyzed.collectFirst { case w: WindowAggregate => w }.exists(_.streamMetrics.isDefined), analyzed.treeString)
    // With adaptive execution on, the stateful plan must still not be adaptive (Spark keeps AQE to stateless streams).
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    val query = try windowed.writeStream.format("memory").queryName("plan_shape_stream").outputMode("append").start()
    finally spark.conf.set("spark.sql.adaptive.enabled", "false")
    val batches = Seq(Seq(("a", 1L, 1L), ("a", 2L, 2L), ("b", 3L, 4L)), Seq(("a", 4L, 8L), ("b", 5L, 16L)),
      Seq(("a", 5L, 32L), ("b", 6L, 64L))).map(_.map { case (k, seq, v) => (k, seq, v, "x") })
    try {
      batches.foreach { rows =>
        input.addData(rows: _*)
        query.processAllAvailable()
      }
      val execution = query.asInstanceOf[StreamingQueryWrapper].streamingQuery.lastExecution
      val plan = execution.executedPlan
      assert(!plan.isInstanceOf[AdaptiveSparkPlanExec], plan.treeString)
      val hosts = plan.collect { case t: StatefulWindowExec => t }
      assert(hosts.size == 1 && hosts.head.feed.isInstanceOf[WindowFeed.Rows], plan.treeString)
      // The rows fed to the state keep every column of the stream (unused ones too): the layout of
      // rows kept in a checkpoint does not depend on what the optimizer could prune.
      assert(hosts.head.blueprint.input.map(_.name) == Seq("k", "seq", "v", "note"), plan.treeString)
      assert(exchanges(plan).size == 1, plan.treeString)
      // Each micro-batch planned its own processor, and every one added to the same metrics.
      val metrics = WindowMetricsReport.ofQuery(query)
      assert(metrics.get("rowsWindowed") == 7L && metrics.get("windowsEmitted") == 3L, metrics.toString)
    } finally query.stop()
    // a: [1, 2] [8, 32]; b: [4, 16] (b's 64 waits for its next row).
    assert(spark.table("plan_shape_stream").select("k", "sum(v)").as[(String, Long)].collect().sorted.toSeq ==
      Seq(("a", 3L), ("a", 40L), ("b", 20L)))
  }
}
