package streamwin.execution

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.streamwin.StoreLayout

import streamwin.engine.{KeyStateRows, KeyedWindowOperator, RowWindowEngine}

/** What moves a streaming key's time on besides its own rows. */
sealed trait StreamClock extends Serializable
object StreamClock {
  /** Only the key's rows (count and data windows, or no watermark defined). */
  case object Rows extends StreamClock
  /** Spark's event-time watermark (`withWatermark`): closes windows of keys that went idle. */
  case object Watermark extends StreamClock
  /** The trigger's processing time (`sw.timer`). */
  case object ProcessingTime extends StreamClock
}

/** How a stream's window operator is fed: pre-aggregated slices, or every row in arrival order. */
sealed trait WindowFeed extends Serializable

object WindowFeed {
  /** Spark's partial aggregates per (key, slice), the slice start at `ordinal` ([[SliceFeeder]]). */
  final case class Slices(ordinal: Int) extends WindowFeed
  /** Each row, in `order` ([[EngineFeeder]]): ties of `order` are refused unless `tiesAllowed`. */
  final case class Rows(order: Attribute, signal: Option[Attribute], tiesAllowed: Boolean) extends WindowFeed
}

/**
 * What a task of [[StatefulWindowExec]] builds before its first key: the engine's wiring (with its
 * code-generated projections), the feeder and the codec of the state rows. Made once per executor
 * thread and reused by the operator's later tasks and micro-batches ([[TaskKits]]), which would each
 * spend milliseconds building it. One kit serves one task at a time.
 */
private[execution] sealed abstract class WindowKit(blueprint: WindowEngineBlueprint) {
  /** The key being visited (its grouping columns, written into groupBy output rows). */
  var currentKey: InternalRow = InternalRow.empty
  /** The output of the visit. */
  val pending = new mutable.ArrayBuffer[InternalRow]
  protected val wiring: EngineWiring = blueprint.wire(() => currentKey, row => pending += row)
  /** What the feeder handed to the engine, for the row accounting. */
  def fed: FedRows

  /** A task begins with its partition's stores ([[WindowKit.stores]], in order). */
  def open(stores: Seq[RowStore]): Unit = ()

  /** The key's engine, with its stored state (a fresh one for a key without state). */
  def load(store: RowStore, key: UnsafeRow): RowWindowEngine
  /** Feeds the key's rows of the micro-batch (in the order the operator requires). */
  def feed(engine: RowWindowEngine, rows: Iterator[InternalRow]): Unit
  /**
   * Writes what the visit changed, with the times the key must be visited again without rows (µs; Long.MaxValue:
   * never): `deadline` on the stream's clock, `idleDeadline` in processing time. Nothing once `forget`. Returns
   * (rows written, rows removed).
   */
  def save(store: RowStore, key: UnsafeRow, engine: RowWindowEngine, deadline: Long, idleDeadline: Long,
      forget: Boolean): (Long, Long)
  /** The keys whose clock deadline is at or before `clock`, or idle deadline at or before `processingTime`. */
  def dueKeys(store: RowStore, clock: Option[Long], processingTime: Option[Long]): Iterator[UnsafeRow]
  /**
   * The partition's [[DueKeyIndex]] as of the store's loaded version, when the kit keeps one (windows fed
   * rows keep rows besides their records, which a scan would read all) and `dueIndexing` allows it: set by
   * the task before its visits, built by its scan when it had none, kept up to date by [[save]].
   */
  var dueIndex: Option[DueKeyIndex] = None
  var dueIndexing: Boolean = false
  def keepsDueIndex: Boolean = false
  /** State rows the task's [[dueKeys]] read (a scan of the store; none when the index answered). */
  var rowsScanned: Long = 0L

  /** The visit is over: what the engine holds (row bags, spill files) is released. */
  def release(engine: RowWindowEngine): Unit = engine.startKey()
}

private[execution] object WindowKit {
  def apply(blueprint: WindowEngineBlueprint, keys: Seq[Attribute], feed: WindowFeed): WindowKit = feed match {
    case WindowFeed.Slices(ordinal) => new SliceWindowsKit(blueprint, keys, ordinal)
    case WindowFeed.Rows(order, signal, tiesAllowed) => new EnginesKit(blueprint, keys, order, signal, tiesAllowed)
  }

  /** The state stores of an operator, without building a kit (the driver's schema checks and metadata). */
  def stores(blueprint: WindowEngineBlueprint, keys: Seq[Attribute], feed: WindowFeed): Seq[StoreLayout] = feed match {
    case WindowFeed.Slices(_) =>
      StoredSliceWindows.stores(keys, blueprint.aggregates.map(_._1).getOrElse(Seq.empty[AggregateFunction]))
    case WindowFeed.Rows(order, _, _) => StoredEngines.stores(keys, blueprint.storedLayout(order.dataType))
  }


}

/** A task's kit for windows fed slices: one window operator, its state rows one per open window. */
private[execution] final class SliceWindowsKit(blueprint: WindowEngineBlueprint, keys: Seq[Attribute], ordinal: Int)
    extends WindowKit(blueprint) {
  private val operator: KeyedWindowOperator = wiring.newEngine() match {
    case op: KeyedWindowOperator => op
    case other => throw new IllegalStateException(s"slices feed the window operator, not ${other.getClass.getName}")
  }
  private val evaluator = wiring.evaluator.getOrElse(throw new IllegalStateException("a window fed slices aggregates them"))
  private val feeder = new SliceFeeder(blueprint.spec, evaluator, ordinal, inOrder = false)
  private val access = new StoredSliceWindows(keys, evaluator).access()
  private var loaded: access.Loaded = _

  override def fed: FedRows = feeder

  /** The latest progress of a key's record this task wrote or scanned (µs); reset per task. */
  def latestProgress: Long = access.latestProgress
  def resetProgress(): Unit = access.resetProgress()

  override def load(store: RowStore, key: UnsafeRow): RowWindowEngine = {
    operator.startKey()
    loaded = access.load(store, key, operator)
    operator
  }

  override def feed(engine: RowWindowEngine, rows: Iterator[InternalRow]): Unit = {
    rows.foreach(feeder.partial(operator, _))
    feeder.flush(operator)
  }

  override def save(store: RowStore, key: UnsafeRow, engine: RowWindowEngine, deadline: Long, idleDeadline: Long,
      forget: Boolean): (Long, Long) = {
    val (written, removed) = access.save(store, key, operator, loaded, deadline, forget)
    (written.toLong, removed.toLong)
  }

  override def dueKeys(store: RowStore, clock: Option[Long], processingTime: Option[Long]): Iterator[UnsafeRow] = {
    access.rowsScanned = 0L
    val due = clock.map(access.dueKeys(store, _)).getOrElse(Iterator.empty)
    rowsScanned += access.rowsScanned
    due
  }
}

/** A task's kit for windows fed rows: each key's engine, its windows and kept rows as state rows ([[StoredEngines]]). */
private[execution] final class EnginesKit(blueprint: WindowEngineBlueprint, keys: Seq[Attribute], order: Attribute,
    signal: Option[Attribute], tiesAllowed: Boolean) extends WindowKit(blueprint) {
  private val feeder = new EngineFeeder(blueprint.spec, blueprint.input, order, signal, tiesAllowed)
  private val codec = wiring.codec(order.dataType)
  private val access = new StoredEngines(keys, codec.layout).access()
  private var inlineRows = StoredEngines.DefaultInlineRows
  // The state rows of the key being visited.
  private var rows: KeyStateRows = _

  override def fed: FedRows = feeder

  override def open(stores: Seq[RowStore]): Unit = inlineRows = StoredEngines.inlineRows()

  override def load(store: RowStore, key: UnsafeRow): RowWindowEngine = {
    rows = access.rowsOf(store, key, inlineRows)
    codec.load(rows).getOrElse {
      val engine = wiring.newEngine()
      engine.startKey()
      engine
    }
  }

  override def feed(engine: RowWindowEngine, rows: Iterator[InternalRow]): Unit = {
    feeder.startKey()
    rows.foreach(feeder.feed(engine, _))
  }

  override def save(store: RowStore, key: UnsafeRow, engine: RowWindowEngine, deadline: Long, idleDeadline: Long,
      forget: Boolean): (Long, Long) =
    if (forget) {
      dueIndex.foreach(_.remove(key))
      (0L, codec.forget(engine, rows))
    } else {
      dueIndex.foreach { index =>
        index.update(key, deadline, idleDeadline)
        if (index.full) dueIndex = None
      }
      codec.save(engine, rows, deadline, idleDeadline)
    }

  override def keepsDueIndex: Boolean = true

  override def dueKeys(store: RowStore, clock: Option[Long], processingTime: Option[Long]): Iterator[UnsafeRow] =
    dueIndex match {
      case Some(index) => index.due(clock, processingTime)
      case None =>
        val (due, scanned, index) =
          access.dueKeys(store, clock, processingTime, if (dueIndexing) Some(new DueKeyIndex) else None)
        rowsScanned += scanned
        dueIndex = index
        due
    }
}
