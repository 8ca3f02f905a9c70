package streamwin

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types.LongType
import org.scalatest.funsuite.AnyFunSuite

import streamwin.execution.{ArrivalOrderSpan, ArrivalOrderSpans, KeyWindowRanges}

/** How map tasks' arrival-order spans prove keys in order (the ordered tumbling operator's skipped check). */
class ArrivalOrderSpansSuite extends AnyFunSuite {
  private val below = ArrivalOrderSpan.below(LongType)

  private def key(k: Long): UnsafeRow = UnsafeProjection.create(Seq(BoundReference(0, LongType, nullable = false)))(
    InternalRow(k)).copy()

  /** A task's windows as the partial aggregation outputs them: key, window start, (first, last, increasing). */
  private def task(windows: (Long, Any, Any, Any, Boolean)*): KeyWindowRanges = {
    val ranges = new KeyWindowRanges(UnsafeProjection.create(Seq(BoundReference(0, LongType, nullable = false))), 1,
      row => row.getStruct(2, 3), LongType, tiesAllowed = false)
    windows.foreach { case (k, start, first, last, increasing) =>
      ranges.add(InternalRow(k, start, InternalRow(first, last, increasing)))
    }
    ranges
  }

  test("a task's windows prove a key when, in start order, their arrival orders strictly increase") {
    val inOrder = task((1L, 20L, 21L, 29L, true), (1L, 0L, 1L, 9L, true), (1L, 10L, 11L, 19L, true))
    assert(ArrivalOrderSpans.ofTask(inOrder).get.toSeq == Seq((key(1), ArrivalOrderSpan(0, 20, 1L, 29L))))
    // A later window's rows arrived before an earlier window's last row.
    assert(ArrivalOrderSpans.ofTask(task((1L, 0L, 1L, 12L, true), (1L, 10L, 11L, 19L, true))).isEmpty)
    // Rows of a window not seen in increasing order (or tied).
    assert(ArrivalOrderSpans.ofTask(task((1L, 0L, 1L, 9L, false))).isEmpty)
    // The same window twice in one task (a partial aggregation that spilled) proves nothing.
    assert(ArrivalOrderSpans.ofTask(task((1L, 0L, 1L, 4L, true), (1L, 0L, 5L, 9L, true))).isEmpty)
    // Rows with an order but no event time; rows with neither are skipped and prove nothing either way.
    assert(ArrivalOrderSpans.ofTask(task((1L, null, 3L, 3L, true))).isEmpty)
    assert(ArrivalOrderSpans.ofTask(task((1L, null, null, null, true), (1L, 0L, 1L, 9L, true))).get.length == 1)
    // One key that fails makes the task prove nothing.
    assert(ArrivalOrderSpans.ofTask(task((1L, 0L, 1L, 9L, true), (2L, 0L, 1L, 9L, false))).isEmpty)
  }

  test("spans chain across tasks when arrival orders follow one another and windows do not go back") {
    // A window may continue in the next task.
    assert(ArrivalOrderSpan.chain(Seq(ArrivalOrderSpan(20, 30, 21L, 35L), ArrivalOrderSpan(0, 20, 1L, 20L)), below))
    // Arrival orders of two tasks overlap (rows dealt round-robin).
    assert(!ArrivalOrderSpan.chain(Seq(ArrivalOrderSpan(0, 20, 1L, 22L), ArrivalOrderSpan(20, 30, 21L, 35L)), below))
    // Equal orders in two tasks: a tie.
    assert(!ArrivalOrderSpan.chain(Seq(ArrivalOrderSpan(0, 20, 1L, 21L), ArrivalOrderSpan(20, 30, 21L, 35L)), below))
    // The later task in arrival order starts at an earlier window: a late row.
    assert(!ArrivalOrderSpan.chain(Seq(ArrivalOrderSpan(0, 20, 1L, 20L), ArrivalOrderSpan(10, 30, 21L, 35L)), below))
  }

  test("the driver decides only once every map task reported, and keeps the last report of a task run again") {
    val spans = new ArrivalOrderSpans
    val first = Some(Array((key(1), ArrivalOrderSpan(0, 10, 1L, 10L))))
    val second = Some(Array((key(1), ArrivalOrderSpan(10, 20, 11L, 20L))))
    spans.add((0, first))
    assert(!spans.provesEveryKeyInOrder(2, below), "task 1 has not reported")
    val fromExecutor = spans.copyAndReset()
    assert(fromExecutor.isZero)
    fromExecutor.add((1, second))
    spans.merge(fromExecutor)
    assert(spans.provesEveryKeyInOrder(2, below))
    // A task that proved nothing.
    spans.add((1, None))
    assert(!spans.provesEveryKeyInOrder(2, below))
    spans.add((1, second))
    assert(spans.provesEveryKeyInOrder(2, below))
    // Past the driver's limit every span is dropped, and nothing is proven any more.
    val overflowing = (key(2), ArrivalOrderSpan(0, 0, 1L, 1L)) // one key made once: key() generates code
    spans.add((2, Some(Array.fill(ArrivalOrderSpans.MaxSpans)(overflowing))))
    assert(!spans.provesEveryKeyInOrder(3, below) && spans.value.isEmpty)
    spans.reset()
    assert(spans.isZero)
  }
}
