package streamwin.execution

import org.apache.spark.SparkContext
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.analysis.SimpleAnalyzer
import org.apache.spark.sql.catalyst.encoders.RowEncoder
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Complete, Count}
import org.apache.spark.sql.catalyst.plans.logical.{EventTimeWatermark, LocalRelation, LogicalPlan, Project,
  TransformWithState}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.streaming.{OutputMode, TimeMode}
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.types.MetadataBuilder

import streamwin.catalyst.{SlicePartialAggregate, StreamWindowMetrics, WindowAggregate, WindowAssign, WindowNode,
  WithoutWatermarkMarker}
import streamwin.spec.{StreamSlices, StreamwinErrors, WindowPolicies, WindowSpec}

/**
 * Plans a window over a streaming DataFrame: the window node becomes Spark's `transformWithState`
 * with a [[WindowStatefulProcessor]] hosting the same engine as batch, so state lives in Spark's
 * state store, checkpoints and restarts are Spark's, and output modes follow Spark's rules. The
 * processor emits only closed windows (`final`, count-trigger `partial`, `late`) in append mode,
 * and under emit="update" also `update` rows (the operator then runs in update mode).
 *
 * The analyzer leaves the window node as it is over batch data, after [[prepare]] checked the
 * stream and made its metrics; the planner ([[StreamWindowStrategy]]) calls [[plan]] for every
 * micro-batch.
 */
object StreamingWindowHost {
  val RocksDbProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

  /** The rows a window node replays per key, and how. */
  private case class Replay(
      spec: WindowSpec,
      policies: WindowPolicies,
      streamKeys: Seq[Attribute],
      outputKeys: Seq[Attribute],
      order: Attribute,
      signal: Option[Attribute],
      aggregates: Option[(Seq[aggregate.AggregateFunction], Seq[Option[Expression]])],
      windowOutput: Seq[Attribute],
      child: LogicalPlan,
      tiesAllowed: Boolean,
      eventTime: Boolean)

  // Each family says in which order its rows arrive and what signal the operator reads
  // (WindowSpec.replay): the same as in batch.
  private def replayOf(node: WindowNode): Replay = {
    val r = node.spec.replay(node.columns)
    node match {
      case WindowAggregate(spec, policies, _, keys, _, _, windowAttr, functions, filters, resultAttrs, child) =>
        Replay(spec, policies, keys, keys, r.order, r.signal, Some((functions, filters)), windowAttr +: resultAttrs, child,
          r.tiesAllowed, r.eventTime.isDefined)
      case WindowAssign(spec, policies, _, _, _, partitionBy, windowAttr, child) =>
        Replay(spec, policies, partitionBy, Nil, r.order, r.signal, None, Seq(windowAttr), child, r.tiesAllowed,
          r.eventTime.isDefined)
    }
  }

  /**
   * What a window over a stream needs when the query is defined: the checks that cannot wait for
   * the query to start, and the metrics every micro-batch of its run adds to.
   */
  def prepare(spec: WindowSpec): StreamWindowMetrics = {
    requireRocksDb(spec.function)
    preAggregates(spec.function)
    new StreamWindowMetrics(WindowMetrics.create(SparkContext.getOrCreate()))
  }

  /**
   * `node` (a WindowAggregate or WindowAssign over a streaming child, analysed and optimised) as a
   * transformWithState plan with the same output, ready for the planner.
   */
  def plan(node: WindowNode): LogicalPlan = {
    val r = replayOf(node)
    val metrics = node.streamMetrics.getOrElse(prepare(r.spec))
    // sw.timer without ingest_time: rows arrive at the micro-batch's time (current_timestamp(),
    // which Spark sets per micro-batch), and processing time closes the windows. With an ingest_time
    // column, that column is the clock, as the event time of the other families.
    val hasWatermark = r.child.exists(_.isInstanceOf[EventTimeWatermark])
    val clock =
      if (r.spec.followsProcessingTime) StreamClock.ProcessingTime
      else if (r.eventTime && hasWatermark) StreamClock.Watermark
      else StreamClock.Rows
    // Spark's timers follow one time mode: idle_timeout's are processing-time timers (the processor
    // then reads the watermark at each visit instead of being woken by it).
    val timeMode =
      if (clock == StreamClock.ProcessingTime || r.policies.idleTimeout > 0) TimeMode.ProcessingTime()
      else if (clock == StreamClock.Watermark) TimeMode.EventTime()
      else TimeMode.None()
    if (timeMode == TimeMode.ProcessingTime() && runsToItsEnd()) {
      throw StreamwinErrors.misuse(r.spec.function, (if (r.policies.idleTimeout > 0) "idle_timeout runs" else
        "windows of processing time run") + " the query in Spark's processing-time mode, which starts a micro-batch " +
        "at every trigger, with or without new rows, so a query with trigger(availableNow=True) or trigger(once=True) " +
        "would never end. Run it with a processing-time trigger (the default, or trigger(processingTime=...))")
    }

    // Columns marked with the watermark are fed under a new id without the marker: Spark would
    // otherwise drop rows behind the watermark before the engine sees them.
    val marked = r.child.output.filter(_.metadata.contains(EventTimeWatermark.delayKey))
    val unmarked = marked.map(a => Alias(WithoutWatermarkMarker(a), a.name)(
      explicitMetadata = Some(new MetadataBuilder().withMetadata(a.metadata).remove(EventTimeWatermark.delayKey).build())))
    val remap = AttributeMap(marked.zip(unmarked.map(_.toAttribute)))
    def rebind[E <: Expression](e: E): E = e.transform { case a: Attribute if remap.contains(a) => remap(a) }.asInstanceOf[E]
    // transformWithState needs a grouping key: a window over the whole stream gets a constant one.
    val wholeStream = if (r.streamKeys.isEmpty) Some(Alias(Literal(0), "_sw_stream")()) else None
    val input = Project(r.child.output.map(a => if (remap.contains(a)) unmarked(marked.indexOf(a)) else a) ++ wholeStream,
      r.child)
    val outputAttrs = (if (r.aggregates.isDefined) r.outputKeys.map(rebind) else input.output) ++ r.windowOutput
    val aggregates = r.aggregates.map { case (functions, filters) => (functions.map(rebind), filters.map(_.map(rebind))) }
    val grouping = r.streamKeys.map(rebind) ++ wholeStream.map(_.toAttribute)
    val slice = node match {
      case agg: WindowAggregate if clock != StreamClock.ProcessingTime && preAggregates(r.spec.function) =>
        agg.spec.streamSlice(agg.policies, agg.columns)
      case _ => None
    }
    // Time windows and sessions without policies: each micro-batch's rows are pre-aggregated per (key, slice)
    // before the shuffle, as in batch, and the operator is fed slices; else it is fed every row.
    val (fed, blueprint) = (slice, aggregates) match {
      case (Some(StreamSlices(start, hidden)), Some((functions, filters))) =>
        // The family's hidden aggregates, then how many rows each slice holds.
        val withCount = functions ++ hidden.map(rebind) :+ Count(Literal(1))
        val partial = SlicePartialAggregate(grouping :+ Alias(rebind(start), "_sw_slice")(),
          withCount.zip(filters ++ withCount.drop(filters.size).map(_ => None)).map { case (f, filter) =>
            AggregateExpression(f, Complete, isDistinct = false, filter)
          },
          input)
        (partial, WindowEngineBlueprint(r.spec, r.policies, partial.output, outputAttrs,
          Some((withCount, withCount.map(_ => None))), slices = true))
      case _ => (input, WindowEngineBlueprint(r.spec, r.policies, input.output, outputAttrs, aggregates))
    }
    val inputAttrs = fed.output
    val processor = new WindowStatefulProcessor(blueprint, r.outputKeys.map(rebind), rebind(r.order), r.signal.map(rebind),
      r.tiesAllowed, clock, metrics.metrics, sliceOrdinal = if (blueprint.slices) Some(grouping.size) else None)
    def rows(attrs: Seq[Attribute]) = RowEncoder.encoderFor(DataTypeUtils.fromAttributes(attrs), lenient = true)
    // The analyzer resolves transformWithState's deserializers of keys and rows; made at planning, the
    // node is resolved here, over a stand-in with the input's columns that then gives way to the input.
    val standIn = LocalRelation(inputAttrs, isStreaming = true)
    val hosted = SimpleAnalyzer.execute(TransformWithState[Row, Row, Row](grouping, inputAttrs, processor, timeMode,
      if (r.policies.outputsUpdates) OutputMode.Update() else OutputMode.Append(), standIn)(
      rows(grouping), rows(inputAttrs), rows(outputAttrs))).transformUp {
      case t: TransformWithState => t.withNewChildren(fed +: t.children.tail)
    }
    // The node's own output attributes (ids included) come back on top, so the plan above resolves.
    val byId = outputAttrs.zip(hosted.output).map { case (a, h) => a.exprId -> h }.toMap
    Project(node.output.map { a =>
      Alias(byId(remap.get(a).map(_.exprId).getOrElse(a.exprId)), a.name)(exprId = a.exprId, qualifier = a.qualifier)
    }, hosted)
  }

  /**
   * True when the streaming query being planned (its micro-batches are planned on its own thread) runs
   * only until its input is read: trigger availableNow or once. Best effort, through Spark's internal
   * query classes; false when they cannot tell (a query started from a session that is not the default).
   */
  private def runsToItsEnd(): Boolean = try {
    val id = SparkContext.getOrCreate().getLocalProperty("sql.streaming.queryId")
    // A micro-batch runs in a clone of the session that started the query, whose query manager is its own.
    val sessions = (org.apache.spark.sql.SparkSession.getDefaultSession ++
      org.apache.spark.sql.SparkSession.getActiveSession).toSeq
    val query: AnyRef = if (id == null) null else sessions.map(_.streams.get(id)).find(_ != null).orNull
    if (query == null) false else {
      val execution = query.getClass.getMethod("streamingQuery").invoke(query)
      val trigger = execution.getClass.getMethod("trigger").invoke(execution)
      Set("AvailableNowTrigger", "OneTimeTrigger").contains(trigger.getClass.getSimpleName.stripSuffix("$"))
    }
  } catch { case scala.util.control.NonFatal(_) => false }

  /**
   * Session setting: "false" feeds the windows that slice row by row, as streamwin did before they
   * were pre-aggregated per micro-batch, so that a checkpoint written then continues (its state is
   * each key's engine, not typed windows). Read when the query is defined and at every micro-batch.
   */
  val PreAggregateConf = "spark.streamwin.streaming.preAggregate"

  private def preAggregates(function: String): Boolean =
    SQLConf.get.getConfString(PreAggregateConf, "true").trim.toLowerCase(java.util.Locale.ROOT) match {
      case "true" => true
      case "false" => false
      case other => throw StreamwinErrors.misuse(function, s"the session setting $PreAggregateConf must be true or " +
        s"false, not '$other'")
    }

  private def requireRocksDb(function: String): Unit = {
    val provider = SQLConf.get.getConfString("spark.sql.streaming.stateStore.providerClass", "")
    if (provider != RocksDbProvider) {
      throw StreamwinErrors.misuse(function,
        "windows on a streaming DataFrame keep their state in Spark's state store through transformWithState, " +
          s"which needs the RocksDB state store provider (this session uses ${if (provider.isEmpty) "the default" else provider}). " +
          "Build the session with streamwin.configure(SparkSession.builder) in Python, or set " +
          s"spark.sql.streaming.stateStore.providerClass=$RocksDbProvider")
    }
  }
}
