package streamwin.execution

import scala.collection.mutable
import scala.concurrent.Await
import scala.concurrent.duration.Duration
import scala.util.Try

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, GenericInternalRow, InterpretedOrdering, UnsafeProjection,
  UnsafeRow}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.adaptive.QueryStageExec
import org.apache.spark.sql.execution.exchange.{ReusedExchangeExec, ShuffleExchangeLike}
import org.apache.spark.sql.streamwin.SparkShim
import org.apache.spark.sql.types.DataType
import org.apache.spark.util.AccumulatorV2

import streamwin.catalyst.ArrivalOrderRange

/**
 * The arrival-order span of one key's tumbling windows: their first and last window start, and
 * the least and greatest arrival order they hold. It exists only when the windows, in start order,
 * held strictly increasing arrival orders that never overlap from one window to the next (within a
 * window too, unless ties are allowed): the rows then arrived in event-time order. (Ties are allowed
 * only when the order is the event time itself, where nothing can be late; a window's range then
 * holds the first and last order seen, which need not be its least and greatest.)
 */
final case class ArrivalOrderSpan(firstStart: Long, lastStart: Long, firstOrder: Any, lastOrder: Any)

/**
 * Gathers aggregated tumbling windows, in any order, and tells for each key whether its windows
 * prove its rows arrived in event-time order ([[ArrivalOrderSpan]]). Fed either the final windows
 * (the check job of [[OrderedTumblingAggregateExec]]) or one map task's partial windows
 * ([[ArrivalOrderSummaryExec]]); a window start seen twice for a key proves nothing.
 *
 * @param keyOf        the key of a window row
 * @param startOrdinal where a row holds its window start (null: rows without an order or an event time)
 * @param rangeOf      the row's [[streamwin.catalyst.ArrivalOrderRange]] (first, last, increasing)
 */
final class KeyWindowRanges(keyOf: UnsafeProjection, startOrdinal: Int, rangeOf: InternalRow => InternalRow,
    orderType: DataType, tiesAllowed: Boolean) {
  private val unproven = new mutable.HashSet[UnsafeRow]
  // Per key: (window start, first order, last order) of each window.
  private val windows = new mutable.HashMap[UnsafeRow, mutable.ArrayBuffer[(Long, Any, Any)]]
  private var windowCount = 0L

  /** The windows gathered, for the keys that still may be proven in order. */
  def size: Long = windowCount

  /** Whether some key's windows already failed to prove it in order. */
  def anyUnproven: Boolean = unproven.nonEmpty

  def add(row: InternalRow): Unit = {
    val key = keyOf(row)
    if (!unproven.contains(key)) {
      val range = rangeOf(row)
      val proves =
        if (row.isNullAt(startOrdinal)) range.isNullAt(0) // rows with an order but no time: their ties cannot be ruled out
        else !range.isNullAt(0) && !range.isNullAt(1) && (tiesAllowed || range.getBoolean(2))
      if (!proves) {
        unproven += key.copy()
        windows.remove(key).foreach(gathered => windowCount -= gathered.size)
      } else if (!row.isNullAt(startOrdinal)) {
        windows.getOrElseUpdate(key.copy(), new mutable.ArrayBuffer) += ((row.getLong(startOrdinal),
          InternalRow.copyValue(range.get(0, orderType)), InternalRow.copyValue(range.get(1, orderType))))
        windowCount += 1
      }
    }
  }

  /** Each key gathered, with its span when its windows prove its rows arrived in event-time order. */
  def spans: Iterator[(UnsafeRow, Option[ArrivalOrderSpan])] = {
    val below = ArrivalOrderSpan.below(orderType)
    unproven.iterator.map(key => (key, None)) ++ windows.iterator.map { case (key, gathered) =>
      val byStart = gathered.sortBy(_._1)
      val chained = byStart.iterator.zip(byStart.iterator.drop(1)).forall { case (previous, next) =>
        previous._1 < next._1 && below(previous._3, next._2)
      }
      (key, if (chained) Some(ArrivalOrderSpan(byStart.head._1, byStart.last._1, byStart.head._2, byStart.last._3)) else None)
    }
  }
}

object ArrivalOrderSpan {
  /** Strictly below, in the order of `orderType`. */
  def below(orderType: DataType): (Any, Any) => Boolean = {
    val ordering = InterpretedOrdering.forSchema(Seq(orderType))
    (a, b) => ordering.compare(new GenericInternalRow(Array[Any](a)), new GenericInternalRow(Array[Any](b))) < 0
  }

  /**
   * Whether one key's spans, one per map task that held its windows, prove the key in order: taken
   * in arrival order, each task's arrival orders all precede the next task's, and its windows start
   * no later than the next task's (a window may continue in the next task). Then, over all the key's
   * windows in start order, arrival orders strictly increase: its rows arrived in event-time order.
   */
  def chain(spans: Seq[ArrivalOrderSpan], below: (Any, Any) => Boolean): Boolean = {
    val byOrder = spans.sortWith((a, b) => below(a.firstOrder, b.firstOrder))
    byOrder.iterator.zip(byOrder.iterator.drop(1)).forall { case (previous, next) =>
      below(previous.lastOrder, next.firstOrder) && previous.lastStart <= next.firstStart
    }
  }
}

/**
 * Between the partial aggregation of [[OrderedTumblingAggregateExec]]'s windows and their shuffle:
 * passes the partial windows on unchanged, and sends the driver, from each map task, each key's
 * [[ArrivalOrderSpan]] in the task (its partial windows are few: one per key and window). When every
 * key's spans chain from task to task ([[ArrivalOrderSpan.chain]]), every key arrived in
 * event-time order and the operator skips its check job, a second read of the shuffle and a second
 * final aggregation. That needs each map task's rows to be a stretch of arrival order (a file or
 * partition written in order); after a shuffle that deals rows round-robin, or with a late row, a
 * task proves nothing and the check job decides, as without this node. A task also stops gathering,
 * to bound its memory, once one key fails or past [[ArrivalOrderSummaryExec.MaxWindowsPerTask]]
 * windows.
 *
 * @param keyCount the number of grouping keys: partial rows hold the keys, the window start, the
 *                 aggregation buffers, and last the three of [[streamwin.catalyst.ArrivalOrderRange]]
 */
case class ArrivalOrderSummaryExec(keyCount: Int, orderType: DataType, tiesAllowed: Boolean, child: SparkPlan)
    extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output
  override def outputPartitioning: Partitioning = child.outputPartitioning
  override def simpleString(maxFields: Int): String =
    s"$nodeName keys=$keyCount, order=${orderType.catalogString}${if (tiesAllowed) ", ties allowed" else ""}"

  /**
   * Filled by the map tasks; one instance per executed node, read by the operator above the shuffle.
   * Unnamed, so that Spark's UI and event log do not carry every task's spans.
   */
  @transient private lazy val spans: ArrivalOrderSpans = {
    val accumulator = new ArrivalOrderSpans
    sparkContext.register(accumulator)
    accumulator
  }

  // Decided once the map stage ran, then kept (the shuffle it read is reused) and the spans dropped.
  @transient private var decision: Option[Boolean] = None

  /** Whether the spans of the shuffle's `mapTasks` tasks prove every key in order (driver side). */
  def provesEveryKeyInOrder(mapTasks: Int): Boolean = synchronized {
    if (decision.isEmpty) {
      decision = Some(spans.provesEveryKeyInOrder(mapTasks, ArrivalOrderSpan.below(orderType)))
      spans.reset()
    }
    decision.get
  }

  override protected def doExecute(): RDD[InternalRow] = {
    val (accumulator, childOutput, keys, ordered, ties) = (spans, child.output, keyCount, orderType, tiesAllowed)
    child.execute().mapPartitionsWithIndex { (task, rows) =>
      val keyOf = UnsafeProjection.create(childOutput.take(keys), childOutput)
      val rangeOf = UnsafeProjection.create(childOutput.takeRight(3), childOutput)
      var gathered = new KeyWindowRanges(keyOf, keys, row => rangeOf(row), ordered, ties)
      var reported = false
      new Iterator[InternalRow] {
        override def hasNext: Boolean = {
          val more = rows.hasNext
          if (!more && !reported) {
            reported = true
            accumulator.add((task, Option(gathered).flatMap(ArrivalOrderSpans.ofTask)))
            gathered = null
          }
          more
        }
        override def next(): InternalRow = {
          val row = rows.next()
          if (gathered != null) {
            gathered.add(row)
            // The task can no longer prove every key: the check job will decide; nothing more to keep.
            if (gathered.anyUnproven || gathered.size > ArrivalOrderSummaryExec.MaxWindowsPerTask) gathered = null
          }
          row
        }
      }
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): ArrivalOrderSummaryExec = copy(child = newChild)
}

object ArrivalOrderSummaryExec {
  def apply(keyCount: Int, orderType: DataType, tiesAllowed: Boolean, partialWindows: SparkPlan): ArrivalOrderSummaryExec = {
    require(partialWindows.output.takeRight(3).map(_.name) == ArrivalOrderRange.BufferNames,
      s"the partial windows end with the arrival-order range buffer: ${partialWindows.output.mkString(", ")}")
    new ArrivalOrderSummaryExec(keyCount, orderType, tiesAllowed, partialWindows)
  }

  /** Windows one map task gathers at most (tens of MB); past it, the check job decides. */
  val MaxWindowsPerTask: Long = 200000L

  /**
   * Whether the map side of `windows` (the final aggregation of the ordered tumbling operator)
   * proved every key in arrival order. Materializes the shuffle first when it has not run (adaptive
   * execution has run it already); the later read of the shuffle reuses it. If that fails (a failed
   * or cancelled job, whose future Spark keeps), the check job decides, and runs the map stage anew.
   */
  def provesEveryKeyInOrder(windows: SparkPlan): Boolean = summarizedShuffle(windows).exists { case (exchange, summary) =>
    Try(Await.result(SparkShim.submitShuffleJob(exchange), Duration.Inf)).isSuccess && summary.provesEveryKeyInOrder(exchange.numMappers)
  }

  private def summarizedShuffle(plan: SparkPlan): Option[(ShuffleExchangeLike, ArrivalOrderSummaryExec)] = plan match {
    case stage: QueryStageExec => summarizedShuffle(stage.plan)
    case reused: ReusedExchangeExec => summarizedShuffle(reused.child)
    case exchange: ShuffleExchangeLike => exchange.child match {
      case summary: ArrivalOrderSummaryExec => Some((exchange, summary))
      case _ => None
    }
    case other => other.children.iterator.map(summarizedShuffle).collectFirst { case Some(found) => found }
  }
}

/**
 * The spans of each map task, by task index; None: the task proved nothing (a key failed, or it
 * gathered too many windows). A task run again (a retry, a lost shuffle file) sends the same spans:
 * the last one is kept. Past [[ArrivalOrderSpans.MaxSpans]] spans on the driver, all are dropped,
 * to bound the driver's memory.
 */
final class ArrivalOrderSpans
    extends AccumulatorV2[(Int, Option[Array[(UnsafeRow, ArrivalOrderSpan)]]), Map[Int, Option[Array[(UnsafeRow, ArrivalOrderSpan)]]]] {
  private type TaskSpans = Option[Array[(UnsafeRow, ArrivalOrderSpan)]]
  private val byTask = mutable.HashMap.empty[Int, TaskSpans]
  private var spanCount = 0L
  private var overflowed = false

  override def isZero: Boolean = synchronized(byTask.isEmpty && !overflowed)
  override def copy(): ArrivalOrderSpans = synchronized {
    val copied = new ArrivalOrderSpans
    copied.byTask ++= byTask
    copied.spanCount = spanCount
    copied.overflowed = overflowed
    copied
  }
  // What tasks receive: an empty one, without copying the driver's spans first.
  override def copyAndReset(): ArrivalOrderSpans = new ArrivalOrderSpans
  override def reset(): Unit = synchronized { byTask.clear(); spanCount = 0; overflowed = false }
  override def add(task: (Int, TaskSpans)): Unit = synchronized {
    if (!overflowed) {
      def count(spans: TaskSpans): Long = spans.fold(0L)(_.length.toLong)
      spanCount += count(task._2) - byTask.get(task._1).fold(0L)(count)
      byTask(task._1) = task._2
      if (spanCount > ArrivalOrderSpans.MaxSpans) { overflowed = true; byTask.clear(); spanCount = 0 }
    }
  }
  override def merge(other: AccumulatorV2[(Int, TaskSpans), Map[Int, TaskSpans]]): Unit = other match {
    case spans: ArrivalOrderSpans =>
      val (tasks, otherOverflowed) = spans.synchronized((spans.byTask.toSeq, spans.overflowed))
      synchronized { if (otherOverflowed) { overflowed = true; byTask.clear(); spanCount = 0 } }
      tasks.foreach(add)
    case _ => throw new UnsupportedOperationException(s"cannot merge ${other.getClass.getName} into arrival-order spans")
  }
  override def value: Map[Int, TaskSpans] = synchronized(byTask.toMap)

  /** Every one of the shuffle's `mapTasks` proved its keys, and each key's spans chain from task to task. */
  def provesEveryKeyInOrder(mapTasks: Int, below: (Any, Any) => Boolean): Boolean = {
    val (tasks, dropped) = synchronized((byTask.toMap, overflowed))
    !dropped && (0 until mapTasks).forall(task => tasks.get(task).exists(_.isDefined)) && {
      val perKey = new mutable.HashMap[UnsafeRow, mutable.ArrayBuffer[ArrivalOrderSpan]]
      tasks.valuesIterator.flatMap(_.iterator.flatten).foreach { case (key, span) =>
        perKey.getOrElseUpdate(key, new mutable.ArrayBuffer) += span
      }
      perKey.valuesIterator.forall(spans => ArrivalOrderSpan.chain(spans.toSeq, below))
    }
  }
}

object ArrivalOrderSpans {
  /** Spans the driver holds at most (keys times map tasks); past it, the check job decides. */
  val MaxSpans: Int = 500000

  /** A task's report: every key's span, or None when some key's windows do not prove it in order. */
  def ofTask(gathered: KeyWindowRanges): Option[Array[(UnsafeRow, ArrivalOrderSpan)]] = {
    val spans = gathered.spans.toArray
    if (spans.forall(_._2.isDefined)) Some(spans.map { case (key, span) => (key, span.get) }) else None
  }
}
