package streamwin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.execution.SparkPlan

import streamwin.engine.WindowKind
import streamwin.spec.WindowSpec

/**
 * groupBy over windows that are one slice each ([[streamwin.spec.GroupByPlan.HashPerWindow]]: tumbling
 * and timer windows without policies that need arrival order), so the whole aggregation is Spark's own (keys, window start) hash aggregation — partial
 * map-side, shuffled, final — with no sort. This operator only turns each aggregated group into the
 * window row and keeps the row accounting.
 *
 * @param size  the windows' length (µs): a window ends `size` after its start
 * @param child output: keys, window start (null: rows with a null time), the user's aggregate values,
 *              then the hidden count of the group's input rows
 */
case class TumblingWindowResultExec(
    spec: WindowSpec,
    size: Long,
    keys: Seq[Attribute],
    windowAttr: Attribute,
    resultAttrs: Seq[Attribute],
    child: SparkPlan) extends StreamWindowExec {

  override def output: Seq[Attribute] = keys ++ (windowAttr +: resultAttrs)

  override protected def doExecute(): RDD[InternalRow] = {
    val (outRows, windows, windowed, skipped) = (longMetric("numOutputRows"), longMetric("windowsEmitted"),
      longMetric("rowsWindowed"), longMetric("rowsSkipped"))
    val startOrdinal = keys.size
    val rowsOrdinal = keys.size + 1 + resultAttrs.size
    val childOutput = child.output
    child.execute().mapPartitions { groups =>
      val keyOf = UnsafeProjection.create(keys, childOutput)
      val valuesOf = UnsafeProjection.create(childOutput.slice(startOrdinal + 1, rowsOrdinal), childOutput)
      val writer = new WindowRowWriter(output)
      groups.flatMap { group =>
        val rows = group.getLong(rowsOrdinal)
        if (group.isNullAt(startOrdinal)) {
          skipped += rows
          Iterator.empty
        } else {
          windowed += rows
          windows += 1
          outRows += 1
          val start = group.getLong(startOrdinal)
          Iterator.single(writer.aggregated(keyOf(group), start, start + size, WindowKind.Final, valuesOf(group)))
        }
      }
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): TumblingWindowResultExec = copy(child = newChild)
}
