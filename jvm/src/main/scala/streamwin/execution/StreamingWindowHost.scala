package streamwin.execution

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Complete, Count}
import org.apache.spark.sql.catalyst.plans.logical.{EventTimeWatermark, LogicalPlan, Project}
import org.apache.spark.sql.execution.{ProjectExec, SparkPlan}
import org.apache.spark.sql.streamwin.PlannedMicroBatch
import org.apache.spark.sql.streamwin.StreamingInternals.StatefulOperatorStateInfo
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.MetadataBuilder

import streamwin.catalyst.{SlicePartialAggregate, StreamWindowMetrics, WindowAggregate, WindowAssign, WindowNode,
  WithoutWatermarkMarker}
import streamwin.engine.WindowPolicies
import streamwin.spec.{StreamSlices, StreamwinErrors, WindowSpec}

/**
 * Plans a window over a streaming DataFrame on streamwin's own stateful operator ([[StatefulWindowExec]]),
 * on Spark's state store, hosting the same engine as batch, so checkpoints and restarts are Spark's.
 * Windows fed slices keep one state row per open window; the others, each key's engine.
 *
 * The analyzer leaves the window node as it is over batch data, after [[prepare]] checked the
 * stream and made its metrics; the planner ([[StreamWindowStrategy]]) calls [[plan]] for every
 * micro-batch.
 */
object StreamingWindowHost {
  /** Spark's RocksDB state store provider (`sw.configure` selects it for its memory profile). */
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

  /** Windows fed slices: time windows and plain sessions without policies, in a groupBy. */
  private def fedSlices(node: WindowNode): Option[StreamSlices] = node match {
    case agg: WindowAggregate if !agg.spec.followsProcessingTime => agg.spec.streamSlice(agg.policies, agg.columns)
    case _ => None
  }

  /** A window over a stream as planned for the micro-batch: what its operator reads (a logical plan, for the planner), and the operator. */
  final case class Hosted(input: LogicalPlan, operator: SparkPlan => SparkPlan)

  /** `node` (a WindowAggregate or WindowAssign over a streaming child, analysed and optimised), on streamwin's operator. */
  def plan(node: WindowNode): Hosted = {
    val r = replayOf(node)
    val metrics = node.streamMetrics.getOrElse(StreamWindowMetrics.create())
    // sw.timer without ingest_time: rows arrive at the micro-batch's time (current_timestamp(),
    // which Spark sets per micro-batch), and processing time closes the windows. With an ingest_time
    // column, that column is the clock, as the event time of the other families.
    val hasWatermark = r.child.exists(_.isInstanceOf[EventTimeWatermark])
    val clock =
      if (r.spec.followsProcessingTime) StreamClock.ProcessingTime
      else if (r.eventTime && hasWatermark) StreamClock.Watermark
      else StreamClock.Rows
    val microBatch = PlannedMicroBatch.current()
    // In processing time (and under idle_timeout) a micro-batch runs at every trigger, with or without rows.
    if ((clock == StreamClock.ProcessingTime || r.policies.idleTimeout > 0) && microBatch.exists(_.runsToItsEnd)) {
      throw StreamwinErrors.misuse(r.spec.function, (if (r.policies.idleTimeout > 0) "idle_timeout runs" else
        "windows of processing time run") + " the query in processing time, which starts a micro-batch " +
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
    val input = Project(r.child.output.map(a => if (remap.contains(a)) unmarked(marked.indexOf(a)) else a), r.child)
    val aggregates = r.aggregates.map { case (functions, filters) => (functions.map(rebind), filters.map(_.map(rebind))) }
    val keys = r.streamKeys.map(rebind)

    val (fed, feed, blueprint) = (fedSlices(node), aggregates) match {
      case (Some(slicing), Some((functions, filters))) =>
        // Each micro-batch's rows are pre-aggregated per (key, slice) before the shuffle, as in batch:
        // the family's hidden aggregates, then how many rows each slice holds.
        val withCount = functions ++ slicing.hidden.map(rebind) :+ Count(Literal(1))
        val start = rebind(slicing.start(progressBound(slicing, microBatch, metrics)))
        val slices = SlicePartialAggregate(keys :+ Alias(start, "_sw_slice")(),
          withCount.zip(filters ++ withCount.drop(filters.size).map(_ => None)).map { case (f, filter) =>
            AggregateExpression(f, Complete, isDistinct = false, filter)
          },
          input)
        (slices, WindowFeed.Slices(keys.size), WindowEngineBlueprint(r.spec, r.policies, slices.output,
          keys ++ r.windowOutput, Some((withCount, withCount.map(_ => None))), slices = true))
      case _ =>
        val outputAttrs = (if (aggregates.isDefined) r.outputKeys.map(rebind) else input.output) ++ r.windowOutput
        (input, WindowFeed.Rows(rebind(r.order), r.signal.map(rebind), r.tiesAllowed),
          WindowEngineBlueprint(r.spec, r.policies, input.output, outputAttrs, aggregates))
    }
    val stateInfo = microBatch.map(_.nextStateInfo())
    for (b <- microBatch; info <- stateInfo) {
      refuseAvroState(r.spec.function)
      refuseRetiredState(b, info, r.spec.function)
    }
    Hosted(fed, planned => {
      val settling = fedSlices(node).flatMap(_.settled).map(_ => metrics)
      val exec = StatefulWindowExec(blueprint, keys, feed, clock, metrics.metrics, stateInfo, microBatch, settling, planned)
      // The node's own output attributes (ids included) come back on top, so the plan above resolves.
      val byId = blueprint.output.map(_.exprId).zip(exec.output).toMap
      ProjectExec(node.output.map { a =>
        Alias(byId(remap.get(a).map(_.exprId).getOrElse(a.exprId)), a.name)(exprId = a.exprId, qualifier = a.qualifier)
      }, exec)
    })
  }

  /**
   * A time no key's progress is past in the micro-batch being planned, for the settled slices of
   * [[StreamSlices]]; None while none is known: in the first micro-batch of a restarted run, until one
   * scanned every key's record.
   */
  private def progressBound(slicing: StreamSlices, microBatch: Option[PlannedMicroBatch],
      metrics: StreamWindowMetrics): Option[Long] =
    if (slicing.settled.isEmpty) None
    else microBatch.flatMap { batch =>
      // A query's first micro-batch starts from empty state: nothing has progressed.
      if (batch.firstOfRun && batch.batchId == 0) metrics.cover(batch.runId, 0)
      metrics.progressBound(batch.runId, batch.batchId, batch.batchWatermarkMs * 1000L)
    }

  private val StateEncodingKey = "spark.sql.streaming.stateStore.encodingFormat"

  /**
   * How the value schema of the operator's first form for windows fed rows begins in a checkpoint's schema
   * file: a `record` of exactly (`deadline`, `idle_deadline`, `engine`). (A user's column named `engine` is
   * in the key or the kept rows' `row`, never first in the value.)
   */
  private val RetiredEngineRecord: String = "{\"type\":\"struct\",\"fields\":[{\"name\":\"record\",\"type\":" +
    "{\"type\":\"struct\",\"fields\":[{\"name\":\"deadline\",\"type\":\"timestamp\",\"nullable\":true," +
    "\"metadata\":{}},{\"name\":\"idle_deadline\",\"type\":\"timestamp\",\"nullable\":true,\"metadata\":{}}," +
    "{\"name\":\"engine\",\"type\":\"binary\",\"nullable\":false,\"metadata\":{}}]}"

  /**
   * The state rows are in Spark's UnsafeRow encoding, as those of Spark's own streaming aggregations,
   * which have no Avro form either (on Spark 4.0-4.3 only transformWithState has): refused up front
   * rather than by the state store's assertion in a task. The conf of a restarted query is the one
   * its checkpoint recorded.
   */
  private def refuseAvroState(function: String): Unit = {
    val encoding = SQLConf.get.getConfString(StateEncodingKey, "unsaferow")
    if (!encoding.equalsIgnoreCase("unsaferow")) {
      throw StreamwinErrors.misuse(function, s"the state store encoding of this stream is `$encoding` " +
        s"($StateEncodingKey, set in the session or recorded in the query's checkpoint): streamwin's windows keep " +
        "their state in Spark's UnsafeRow encoding, as Spark's own streaming aggregations do. Set it to `unsaferow` " +
        "(Spark's default) and start the query with a new checkpoint location")
    }
  }

  /**
   * A checkpoint this operator restarts from must hold its state in the form it writes. Forms never
   * released as stable are refused at once, with what to do, rather than by Spark's generic operator or
   * schema mismatch: streamwin's first streaming host (Spark's transformWithState), and its own operator's
   * first form for windows fed rows (each key's whole engine as one value).
   */
  private def refuseRetiredState(batch: PlannedMicroBatch, info: StatefulOperatorStateInfo, function: String): Unit =
    if (batch.firstOfRun && batch.batchId > 0) {
      val operator = new Path(info.checkpointLocation, info.operatorId.toString)
      val fs = operator.getFileSystem(SparkSession.active.sessionState.newHadoopConf())
      def refuse(form: String): Nothing =
        throw StreamwinErrors.misuse(function, s"the checkpoint ${new Path(info.checkpointLocation).getParent} holds " +
          s"this window's state (operator ${info.operatorId}) in $form, which this streamwin no longer reads: windows " +
          s"now keep a state row per open window in streamwin's own stateful operator (`${StatefulWindowExec.ShortName}`). " +
          "Start the query with a new checkpoint location, and replay the input from where its open windows began " +
          "(from the start, to get the batch's result)")
      if (fs.exists(new Path(operator, "_metadata/v2"))) {
        refuse("the form streamwin's first streaming host wrote it (Spark's transformWithState, state variables " +
          "`windows` and `engine`)")
      }
      // The operator's own first form for windows fed rows: each key's whole engine as one value.
      val schema = new Path(operator, "0/_metadata/schema")
      if (fs.exists(schema)) {
        val text = { val in = fs.open(schema); try new String(org.apache.commons.io.IOUtils.toByteArray(in), "UTF-8") finally in.close() }
        if (text.contains(StreamingWindowHost.RetiredEngineRecord)) {
          refuse("the first form of streamwin's operator (each key's whole engine as one `record.engine` value, " +
            "streamwin 0.1.0 before state rows per window)")
        }
      }
    }
}
