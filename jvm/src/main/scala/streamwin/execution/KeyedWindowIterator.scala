package streamwin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, UnsafeProjection}
import org.apache.spark.sql.execution.metric.SQLMetric

import streamwin.engine.RowBag

/**
 * One partition of a replaying window exec: rows clustered by key and sorted by (key, order), fed
 * to one window operator, reset per key. Output is pulled: each input row is consumed only once the
 * outputs of the previous one were read, and a window's rows are read lazily from its bag. At the
 * end of the partition the exec's metrics get the row accounting (every input row is windowed,
 * late, or skipped).
 *
 * @param input the partition's rows, sorted by (keys, order)
 * @param keys  the key columns (the groupBy keys, or a select's partition_by)
 */
final class KeyedWindowIterator(
    input: Iterator[InternalRow],
    blueprint: WindowEngineBlueprint,
    keys: Seq[Attribute],
    inputAttrs: Seq[Attribute],
    order: Attribute,
    signal: Option[Attribute],
    tiesAllowed: Boolean,
    metrics: Map[String, SQLMetric]) extends PushToPullIterator {

  private val outRows = metrics("numOutputRows")
  // The task's budget for kept rows: it counts what they spilled (read before the task ends).
  private val budget = RowBag.budget
  private val spilledBefore = budget.spilledBytes
  private val keyOf = UnsafeProjection.create(keys, inputAttrs)
  private var key: InternalRow = null
  private val engine = blueprint.wireRuns(() => key, new OutputSink {
    override def row(row: InternalRow): Unit = { outRows += 1; KeyedWindowIterator.this.row(row) }
    override def rows(rows: Iterator[InternalRow]): Unit =
      KeyedWindowIterator.this.rows(rows.map { row => outRows += 1; row })
  }).newEngine()
  private val feeder = new EngineFeeder(blueprint.spec, inputAttrs, order, signal, tiesAllowed)

  override protected def advance(): Boolean = {
    if (!input.hasNext) {
      if (key != null) engine.finishKey()
      report()
      return false
    }
    val row = input.next()
    val k = keyOf(row)
    if (key == null || k != key) {
      if (key != null) engine.finishKey()
      key = k.copy()
      engine.startKey()
      feeder.startKey()
    }
    feeder.feed(engine, row)
    true
  }

  private def report(): Unit = {
    metrics("peakBufferedRows").set(engine.peakBuffered)
    metrics("windowsEmitted") += engine.windowsEmitted
    RowAccounting.record(metrics, feeder, engine.rowsLate, engine.rowsPassedThrough, engine.rowsInNoWindow)
    metrics("spillSize") += budget.spilledBytes - spilledBefore
  }
}

/** The row accounting of a window operator, the same for batch partitions and streaming micro-batches. */
object RowAccounting {
  /**
   * Adds what `feeder` fed and the operator counted to `metrics`: every fed row is windowed, late
   * (dropped or passed through) or skipped (null order, no event time, between windows).
   */
  def record(metrics: Map[String, SQLMetric], feeder: FedRows, late: Long, passed: Long, inNoWindow: Long): Unit = {
    // Some rows only turn out to be in no window once they are evicted (eKuiper alignment).
    metrics("rowsWindowed") += feeder.accepted - inNoWindow
    metrics("rowsSkipped") += feeder.nullOrders + feeder.rejected - late - passed + inNoWindow
    metrics("lateRowsDropped") += late
    metrics("lateRowsPassedThrough") += passed
  }
}
