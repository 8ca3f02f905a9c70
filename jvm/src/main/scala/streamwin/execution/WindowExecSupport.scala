package streamwin.execution

import org.apache.spark.SparkContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.unsafe.types.UTF8String

import streamwin.catalyst.WindowMetrics
import streamwin.engine.WindowPolicies

/** What every streamwin physical operator shares: its metrics and the window column it produces. */
trait StreamWindowOperator extends SparkPlan {
  def spec: streamwin.spec.WindowSpec
  def windowAttr: Attribute
  override lazy val metrics: Map[String, SQLMetric] = WindowMetrics.create(sparkContext)
  override def producedAttributes: AttributeSet =
    AttributeSet(output.filterNot(a => children.exists(_.outputSet.contains(a))))
  override def simpleString(maxFields: Int): String =
    s"$nodeName ${spec}${policiesString} ${output.map(_.name).mkString("[", ", ", "]")}"
  private def policiesString: String = productIterator.collectFirst { case p: WindowPolicies => p.toString }
    .getOrElse("")
}

/** A streamwin operator over one child. */
trait StreamWindowExec extends UnaryExecNode with StreamWindowOperator

/**
 * Builds output rows: `key ++ window ++ aggregate values` (groupBy) or `input row ++ window`
 * (select), where window is the struct (start, end, kind).
 */
final class WindowRowWriter(output: Seq[Attribute]) {
  private val project = UnsafeProjection.create(output.zipWithIndex.map { case (a, i) =>
    BoundReference(i, a.dataType, a.nullable)
  })
  private val inner = new JoinedRow
  private val outer = new JoinedRow
  private val windowHolder = new GenericInternalRow(1)

  private def struct(start: Any, end: Any, kind: UTF8String): InternalRow =
    new GenericInternalRow(Array[Any](start, end, kind))

  def aggregated(key: InternalRow, start: Any, end: Any, kind: UTF8String, values: InternalRow): InternalRow = {
    windowHolder.update(0, struct(start, end, kind))
    project(outer(key, inner(windowHolder, values))).copy()
  }

  def tagged(row: InternalRow, start: Any, end: Any, kind: UTF8String): InternalRow = {
    windowHolder.update(0, struct(start, end, kind))
    project(outer(row, windowHolder)).copy()
  }
}

/**
 * Turns a push-style engine into the pull-style iterator Spark wants: `advance()` consumes input
 * (one row, or the end of input) and the engine's output lands in a queue as single rows or as
 * runs of rows read lazily: a run (a window's member rows) is pulled row by row, so it never sits
 * in memory whole.
 */
abstract class PushToPullIterator extends Iterator[InternalRow] with OutputSink {
  // InternalRows and Iterator[InternalRow]s, in output order.
  private val pending = new java.util.ArrayDeque[AnyRef]
  private var finished = false

  /** Processes more input; returns false once the input is exhausted and the engine flushed. */
  protected def advance(): Boolean

  override def row(row: InternalRow): Unit = pending.addLast(row)
  override def rows(rows: Iterator[InternalRow]): Unit = pending.addLast(rows)

  override def hasNext: Boolean = {
    while (true) {
      pending.peekFirst() match {
        case null =>
          if (finished) return false
          finished = !advance()
        case run: Iterator[_] => if (run.hasNext) return true else pending.pollFirst()
        case _ => return true
      }
    }
    false
  }

  override def next(): InternalRow = {
    if (!hasNext) throw new NoSuchElementException
    pending.peekFirst() match {
      case run: Iterator[_] => run.next().asInstanceOf[InternalRow]
      case _ => pending.pollFirst().asInstanceOf[InternalRow]
    }
  }
}

/** Where an engine's output rows go: one at a time, or a run read lazily. */
trait OutputSink {
  def row(row: InternalRow): Unit
  def rows(rows: Iterator[InternalRow]): Unit
}
