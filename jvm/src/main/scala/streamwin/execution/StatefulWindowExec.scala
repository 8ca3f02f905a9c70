package streamwin.execution

import java.util.concurrent.TimeUnit.NANOSECONDS

import org.apache.spark.SparkContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, AttributeSet, SortOrder, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.physical.{AllTuples, Distribution}
import org.apache.spark.sql.execution.{GroupedIterator, SortExec, SparkPlan}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.execution.streaming.state.{StateStore, StateStoreProviderId}
import org.apache.spark.sql.streamwin.{OperatorStateStores, OperatorStoresRDD, OperatorStoresWriter, PlannedMicroBatch,
  StateStoresWriterExec, StoreLayout}
import org.apache.spark.sql.streamwin.StreamingInternals.{StatefulOperatorCustomMetric, StatefulOperatorPartitioning,
  StatefulOperatorStateInfo}

import streamwin.catalyst.StreamWindowMetrics
import streamwin.engine.RowWindowEngine

/**
 * streamwin's stateful operator: a window over a stream, on Spark's state store, built as Spark's own
 * stateful operators are (`StateStoreSaveExec`, the session window operators): a physical node over the
 * micro-batch's rows, clustered by key, with Spark's state info, watermarks and metrics, whose tasks
 * open their partition's state store at the micro-batch's version, visit each key, and commit.
 *
 * Each key's visit runs the same window operator batch runs: its stored state is loaded, its rows of
 * the micro-batch are fed in the order the operator requires (`feed`: Spark's partial aggregates per
 * (key, slice) for windows without policies, else every row in arrival order), and what changed is
 * written back. The stream's clock moves the key's time on: with an event-time watermark, to the
 * previous micro-batch's watermark before its rows (what is late) and to the current one after them
 * (what closes), as Spark's own aggregation filters and evicts; with processing time (timer windows
 * without `ingest_time`), to the micro-batch's time. After the input, the keys the clock reached, or
 * whose held rows timed out (`idle_timeout`), are visited without rows, so windows of idle keys close too.
 * Outputs are what the windows output: closed windows (`final`, count-trigger `partial`, `late`), and
 * `update` rows under emit="update" or emit_every.
 *
 * @param blueprint    the engine's wiring: its input is the child's output
 * @param keys         the state key (grouping columns, or a select's `partition_by`); none: one stream
 * @param feed         what the child's rows are: slices, or rows in arrival order
 * @param clock        what moves a key's time on besides its rows
 * @param streamMetrics the window metrics of the query's run (made when the query was analysed, summed
 *                     over its micro-batches: `sw.window_metrics(query)`)
 * @param stateInfo    Spark's state info of this operator in the micro-batch
 * @param microBatch   the micro-batch being planned (watermarks and time), None outside a running query
 * @param settling     the query's stream metrics, when slices are coarser for rows no key's progress reached
 *                     ([[streamwin.spec.StreamSlices]]): tasks add the progress they write or scan to it, and
 *                     a micro-batch that scans every key's record lets the next ones use those slices
 */
case class StatefulWindowExec(
    blueprint: WindowEngineBlueprint,
    keys: Seq[Attribute],
    feed: WindowFeed,
    clock: StreamClock,
    streamMetrics: Map[String, SQLMetric],
    stateInfo: Option[StatefulOperatorStateInfo],
    microBatch: Option[PlannedMicroBatch],
    settling: Option[StreamWindowMetrics],
    child: SparkPlan) extends StateStoresWriterExec(Seq(StoredSliceWindows.StoreName))
    with OperatorStoresWriter {

  override def output: Seq[Attribute] = blueprint.output
  override def producedAttributes: AttributeSet = AttributeSet(output.filterNot(child.outputSet.contains))

  override def requiredChildDistribution: Seq[Distribution] =
    if (keys.isEmpty) AllTuples :: Nil
    else StatefulOperatorPartitioning.getCompatibleDistribution(keys,
      stateInfo.map(_.numPartitions).getOrElse(conf.numShufflePartitions), conf) :: Nil

  // Each key's slices together, by start (several map tasks may send slices of the same start). Rows are
  // grouped by key and put in arrival order by the task itself (KeyedRowGroups), which sorts only the keys
  // whose rows did not come in order.
  override def requiredChildOrdering: Seq[Seq[SortOrder]] = feed match {
    case WindowFeed.Slices(ordinal) => (keys :+ child.output(ordinal)).map(SortOrder(_, Ascending)) :: Nil
    case _: WindowFeed.Rows => Seq(Nil)
  }

  override def shortName: String = StatefulWindowExec.ShortName

  override def simpleString(maxFields: Int): String =
    s"$nodeName ${blueprint.spec}${blueprint.policies} keys=${keys.map(_.name).mkString("[", ", ", "]")} " +
      s"${stateInfo.map(i => s"operator ${i.operatorId}").getOrElse("")}"

  private def idleTimeout: Long = blueprint.policies.idleTimeout

  // The operator's state store (the driver's schema checks and metadata; tasks have their kits).
  @transient private lazy val stores = WindowKit.stores(blueprint, keys, feed)

  /** The windows' own metrics, per micro-batch (the query progress shows them with the state store's). */
  override protected def customStatefulOperatorMetrics: Seq[StatefulOperatorCustomMetric] =
    (StatefulWindowExec.WindowMetricNames ++ StatefulWindowExec.StoreMetricNames).map { case (metricName, description) =>
      new StatefulOperatorCustomMetric {
        override def name: String = metricName
        override def desc: String = description
        override def createSQLMetric(sc: SparkContext): SQLMetric = SQLMetrics.createMetric(sc, description)
      }
    }

  override protected def storeLayouts: Seq[StoreLayout] = stores

  /**
   * A micro-batch without new rows runs when the watermark moved (it may close windows), and at every
   * trigger in processing time (timer windows, idle_timeout), as Spark's processing-time timeouts do.
   */
  override def shouldRunAnotherBatch(newInputWatermark: Long): Boolean =
    clock == StreamClock.ProcessingTime || idleTimeout > 0 ||
      (clock == StreamClock.Watermark && newInputWatermark > evictionWatermarkMs.getOrElse(0L))

  private def evictionWatermarkMs: Option[Long] =
    for (b <- microBatch; i <- stateInfo) yield b.evictionWatermarkMs(i.operatorId)

  override protected def doExecute(): RDD[InternalRow] = {
    metrics // made on the driver
    val info = getStateInfo
    val processingTime = microBatch.map(_.batchTimestampMs * 1000L)
    val times = clock match {
      // The watermark (µs), once there is one: the current micro-batch's, and the previous one's.
      case StreamClock.Watermark =>
        val now = evictionWatermarkMs.filter(_ > 0).map(_ * 1000L)
        val before = microBatch.map(_.previousWatermarkMs(info.operatorId)).filter(_ > 0).map(_ * 1000L)
        ClockTimes(before, now, processingTime, scan = now.exists(n => before.forall(_ < n)) || idleTimeout > 0)
      case StreamClock.ProcessingTime => ClockTimes(processingTime, processingTime, processingTime, scan = true)
      case StreamClock.Rows => ClockTimes(None, None, processingTime, scan = idleTimeout > 0)
    }
    // The scan reads every key's record: from the next micro-batch of the run on, the progress gathered
    // bounds every key's.
    if (times.scan && times.now.isDefined) for (s <- settling; b <- microBatch) s.cover(b.runId, b.batchId + 1)
    val fallbackSort = feed match {
      case WindowFeed.Rows(order, _, _) => Some(KeyedRowGroups.fallbackSort(keys, order, child.output))
      case _ => None
    }
    new OperatorStoresRDD[InternalRow, InternalRow](child.execute(), info, stores, session.sessionState,
      Some(OperatorStateStores.coordinator(session)),
      (opened, input) => new Partition(opened, input, times, info.queryRunId, fallbackSort).output)
  }

  /** The clock of one micro-batch (µs): before a key's rows, after them, and processing time; `scan`: look for due keys. */
  private case class ClockTimes(beforeRows: Option[Long], now: Option[Long], processing: Option[Long], scan: Boolean)

  /** One task: its partition's store and the micro-batch's rows of its keys, through a kit of this thread. */
  private final class Partition(opened: Seq[StateStore], input: Iterator[InternalRow], times: ClockTimes,
      queryRunId: java.util.UUID, fallbackSort: Option[SortExec]) {
    private val stores = opened.map(RowStore(_))
    private val store = stores.head
    private val kitKey = blueprint.canonical(keys, feed)
    private val kit = TaskKits.borrow(kitKey)(WindowKit(blueprint, keys, feed))
    kit.open(stores)
    kit.rowsScanned = 0L
    // (With checkpoint ids, one version may have several lineages: the store is scanned.)
    kit.dueIndexing = kit.keepsDueIndex &&
      !OperatorStateStores.checkpointIdsOn(conf)
    private val indexId = StateStoreProviderId(opened.head.id, queryRunId)
    kit.dueIndex = if (kit.dueIndexing) DueKeyIndex.take(indexId, opened.head.version) else None
    kit.pending.clear()
    kit.fed.resetCounts()
    private val slicesKit = kit match {
      case k: SliceWindowsKit if settling.isDefined => k.resetProgress(); Some(k)
      case _ => None
    }
    private val groups = (feed, fallbackSort) match {
      case (WindowFeed.Rows(order, _, _), Some(sort)) => new KeyedRowGroups(input, keys, order, child.output, sort).groups
      case _ => GroupedIterator(input, keys, child.output)
    }
    private var written = 0L
    private var removed = 0L
    private var updatesNs = 0L

    private val visits = new Iterator[InternalRow] {
      private var idleKeys: Iterator[UnsafeRow] = null
      private var index = 0
      override def hasNext: Boolean = {
        while (index >= kit.pending.size) {
          kit.pending.clear()
          index = 0
          if (groups.hasNext) {
            val (key, rows) = groups.next()
            visit(key.asInstanceOf[UnsafeRow], rows)
          } else {
            if (idleKeys == null) idleKeys = dueKeys()
            if (idleKeys.hasNext) visit(idleKeys.next(), Iterator.empty) else return false
          }
        }
        true
      }
      override def next(): InternalRow = {
        if (!hasNext) throw new NoSuchElementException
        index += 1
        kit.pending(index - 1)
      }
    }

    /** The output; once it is read to its end, the store commits. */
    val output: Iterator[InternalRow] = new Iterator[InternalRow] {
      private var finished = false
      override def hasNext: Boolean = visits.hasNext || { if (!finished) { finished = true; finish() }; false }
      override def next(): InternalRow = { longMetric("numOutputRows") += 1; visits.next() }
    }

    /**
     * Keys the clock reached though they had no rows in the micro-batch (their stored deadline passed), and
     * keys whose held rows timed out. A key visited with rows has later deadlines by now.
     */
    private def dueKeys(): Iterator[UnsafeRow] =
      if (!times.scan) Iterator.empty
      else kit.dueKeys(store, times.now, if (idleTimeout > 0) times.processing else None)

    private def visit(key: UnsafeRow, rows: Iterator[InternalRow]): Unit = {
      val start = System.nanoTime()
      kit.currentKey = key
      val engine = kit.load(store, key)
      val counts = EngineCounts(engine)
      // idle_timeout (KX's temporal timeout): what the visit outputs ends the key's quiet period; rows held
      // too long go out before the new ones join.
      if (idleTimeout > 0) engine.visitStarts()
      (if (rows.hasNext) times.beforeRows else times.now).foreach(engine.advanceTo)
      if (idleTimeout > 0) times.processing.foreach(engine.timeOut(_, idleTimeout))
      if (rows.hasNext) kit.feed(engine, rows)
      times.now.foreach(engine.advanceTo)
      if (idleTimeout > 0) times.processing.foreach(engine.visitEnded)
      val deadline = if (clock == StreamClock.Rows) Long.MaxValue else engine.nextDeadline
      val forget = times.now.exists(engine.forgettable)
      val (w, r) = kit.save(store, key, engine, deadline, engine.idleDeadline(idleTimeout), forget)
      written += w
      removed += r
      account(counts, engine)
      kit.release(engine)
      updatesNs += System.nanoTime() - start
    }

    /** Adds the visit's rows to the micro-batch's metrics and the query's, as the batch execs count them. */
    private def account(before: EngineCounts, engine: RowWindowEngine): Unit = {
      val after = EngineCounts(engine)
      val (late, passed, inNoWindow) = (after.late - before.late, after.passed - before.passed,
        after.inNoWindow - before.inNoWindow)
      Seq(streamMetrics, metrics).foreach { m =>
        m("windowsEmitted") += after.emitted - before.emitted
        RowAccounting.record(m, kit.fed, late, passed, inNoWindow)
      }
      streamMetrics("numOutputRows") += kit.pending.size
      longMetric("numRowsDroppedByWatermark") += late
      kit.fed.resetCounts()
    }

    private def finish(): Unit = {
      longMetric("allUpdatesTimeMs") += NANOSECONDS.toMillis(updatesNs)
      longMetric("numUpdatedStateRows") += written
      longMetric("numRemovedStateRows") += removed
      var versions = Seq.empty[Long]
      longMetric("commitTimeMs") += timeTakenMs { versions = opened.map(_.commit()) }
      kit.dueIndex.foreach(DueKeyIndex.keep(indexId, versions.head, _))
      kit.dueIndex = None
      longMetric("stateRowsScanned") += kit.rowsScanned
      for (s <- settling; k <- slicesKit) s.keyProgress.add(k.latestProgress)
      opened.foreach(recordStoreMetrics)
      reportCheckpointIds(opened)
      setOperatorMetrics(opened.size)
      kit.currentKey = InternalRow.empty
      TaskKits.giveBack(kitKey, kit)
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): StatefulWindowExec = copy(child = newChild)
}

object StatefulWindowExec {
  /** The operator's name in the query progress and in the checkpoint's operator metadata. */
  val ShortName = "streamwinWindow"

  /** The window metrics every streamwin operator reports ([[WindowMetrics]]) that a micro-batch adds to. */
  val WindowMetricNames: Seq[(String, String)] = Seq(
    "windowsEmitted" -> "windows emitted",
    "rowsWindowed" -> "input rows in windows",
    "lateRowsDropped" -> "late rows dropped",
    "lateRowsPassedThrough" -> "late rows passed through (kind late)",
    "rowsSkipped" -> "rows skipped (null time or order, or between windows)")

  /** How the operator used its store, per micro-batch, besides Spark's own store metrics. */
  val StoreMetricNames: Seq[(String, String)] = Seq(
    "stateRowsScanned" -> "state rows read to find the keys due without rows (a scan; none when the due-key index answered)")
}

/** What an engine counted so far, to tell what a visit added. */
private[execution] case class EngineCounts(emitted: Long, late: Long, passed: Long, inNoWindow: Long)

private[execution] object EngineCounts {
  def apply(e: RowWindowEngine): EngineCounts = EngineCounts(e.windowsEmitted, e.rowsLate, e.rowsPassedThrough, e.rowsInNoWindow)
}
