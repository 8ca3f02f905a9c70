package streamwin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._

import streamwin.engine.{AggregateEvaluator, BufferContents, KeyedWindowOperator, WindowEntry}

/**
 * The typed streaming state of a key whose windows are fed slices (time windows and fixed-gap
 * sessions without policies, see [[streamwin.spec.WindowSpec.streamSlice]]): one value per key in the state variable
 * [[StoredSliceWindows.StateName]], made only of plain columns (no Java serialization), so that
 * `spark.read.format("statestore")` shows it:
 *
 *  - `progress`: the key's event-time progress (µs; the largest slice start seen, or the watermark);
 *  - `timer`: the processing timer registered at the key's next deadline (ms), if any;
 *  - `windows`: the open windows by start, each with `start` and `end` (µs), `rows` (input rows
 *    aggregated), `fired` (output as `final` already: false without policies) and `changed` (rows
 *    joined since its last output), and `buffer`: the aggregation buffer, one field per buffer slot named `f<function>_<slot>` in the
 *    order of the query's aggregates, then `f<n>_count`, the hidden row count. Object buffers
 *    (collect_list, percentile_approx) are stored serialised, as Spark's partial aggregation ships them.
 *
 * @param evaluator the evaluator of the slices' buffers (the wiring's)
 */
final class StoredSliceWindows(evaluator: AggregateEvaluator) {
  private val bufferSchema = StructType(evaluator.functions.zipWithIndex.flatMap { case (f, i) =>
    f.aggBufferAttributes.map(a => StructField(s"f${i}_${a.name}", a.dataType, nullable = true))
  })
  private val windowSchema = StructType(Seq(
    StructField("start", LongType, nullable = false), StructField("end", LongType, nullable = false),
    StructField("rows", LongType, nullable = false), StructField("fired", BooleanType, nullable = false),
    StructField("changed", BooleanType, nullable = false), StructField("buffer", bufferSchema, nullable = false)))
  val schema: StructType = StructType(Seq(
    StructField("progress", LongType, nullable = false), StructField("timer", LongType, nullable = true),
    StructField("windows", ArrayType(windowSchema, containsNull = false), nullable = false)))

  /**
   * The state variable's encoder. Its objects are InternalRows of [[schema]], the engine's own form: a
   * stored value is the same row Spark would store for an external Row of the schema, without making one
   * (an external Row encoder of this nested schema took longer to make, per task, than the key visits).
   */
  lazy val stateEncoder: ExpressionEncoder[InternalRow] = RowConverters.internalRowEncoder(schema)
  private val bufferTypes = bufferSchema.fields.map(_.dataType)
  private val bufferWidth = bufferTypes.length
  private val windowWidth = windowSchema.length

  /** Puts the stored windows into a started operator; returns the stored timer. */
  def restore(stored: InternalRow, operator: KeyedWindowOperator): Option[Long] = {
    val state = operator.state
    state.progress = stored.getLong(0)
    val windows = stored.getArray(2)
    var w = 0
    while (w < windows.numElements()) {
      val window = windows.getStruct(w, windowWidth)
      val values = window.getStruct(5, bufferWidth)
      val buffer = evaluator.newBuffer()
      var i = 0
      while (i < bufferWidth) {
        buffer.update(i, if (values.isNullAt(i)) null else InternalRow.copyValue(values.get(i, bufferTypes(i))))
        i += 1
      }
      val entry = new WindowEntry(window.getLong(0), window.getLong(1), operator.contents.ofSlice(evaluator.fromSerialized(buffer)))
      entry.held = window.getLong(2)
      entry.fired = window.getBoolean(3)
      entry.changed = window.getBoolean(4)
      state.putWindow(entry)
      w += 1
    }
    if (stored.isNullAt(1)) None else Some(stored.getLong(1))
  }

  /**
   * The operator's windows as a state value. The value shares the operator's live buffers (object buffers
   * serialised in place), so the operator is not used afterwards and the caller encodes the value at once
   * (`ValueState.update` does).
   */
  def snapshot(operator: KeyedWindowOperator, timer: Option[Long]): InternalRow = {
    val state = operator.state
    if (state.hasLateGroups || state.keptSliceCount > 0 || state.lastClosedStart.isDefined || state.record != null) {
      throw new IllegalStateException("a stream's slice-fed windows keep only their open windows")
    }
    val windows = state.windows(Long.MinValue, true, Long.MaxValue, true).map { w =>
      val buffer = w.contents match {
        case b: BufferContents => evaluator.toSerialized(b.aggregationBuffer)
        case other => throw new IllegalStateException(s"a slice-fed window holds a buffer, not ${other.getClass.getSimpleName}")
      }
      new GenericInternalRow(Array[Any](w.start, w.end, w.held, w.fired, w.changed, buffer))
    }.toArray[Any]
    new GenericInternalRow(Array[Any](state.progress, timer.map(Long.box).orNull, new GenericArrayData(windows)))
  }
}

object StoredSliceWindows {
  /** The state variable of slice-fed windows (other windows keep their engine in `engine`). */
  val StateName = "windows"
}
