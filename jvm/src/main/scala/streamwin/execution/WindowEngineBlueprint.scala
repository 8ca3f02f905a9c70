package streamwin.execution

import org.apache.spark.SparkException
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.types.DataType
import org.apache.spark.unsafe.types.UTF8String

import streamwin.engine._
import streamwin.spec.WindowSpec

/**
 * How to build the per-key engine of one window operator that replays rows (count, data and
 * timeInterval windows, and every event-time family under policies or in streaming). The batch
 * execs and the streaming processor both build their engines here, so they cannot drift apart.
 *
 * @param aggregates the functions and FILTER predicates of a groupBy; None for a select, whose
 *                   engine tags every input row with its windows
 * @param input      the rows fed to the engine
 * @param output     key ++ window ++ aggregate values (groupBy), or input row ++ window (select)
 * @param slices     the engine is fed slices, not rows ([[SliceFeeder]]): `input` holds Spark's partial
 *                   aggregation buffers of the functions, which have no FILTER left to apply
 */
final case class WindowEngineBlueprint(
    spec: WindowSpec,
    policies: WindowPolicies,
    input: Seq[Attribute],
    output: Seq[Attribute],
    aggregates: Option[(Seq[AggregateFunction], Seq[Option[Expression]])],
    slices: Boolean = false) {

  /**
   * The blueprint with expression ids numbered in order of appearance (and the operator's `extra`):
   * equal for the same operator planned again in another micro-batch, where Spark gives the same
   * columns new ids, so tasks of every micro-batch can share what they build ([[TaskKits]]).
   */
  def canonical(extra: Any*): AnyRef = {
    val ids = scala.collection.mutable.LinkedHashMap.empty[ExprId, ExprId]
    def numbered(e: Expression): Expression = e.transform {
      case a: AttributeReference => a.withExprId(ids.getOrElseUpdate(a.exprId, ExprId(ids.size))).withQualifier(Nil)
    }
    def numberedAll(extras: Seq[Any]): Seq[Any] = extras.map {
      case e: Expression => numbered(e)
      case es: Seq[_] => numberedAll(es)
      case other => other
    }
    (spec, policies, input.map(numbered), output.map(numbered),
      aggregates.map { case (functions, filters) => (functions.map(numbered), filters.map(_.map(numbered))) }, slices,
      numberedAll(extra))
  }

  /**
   * Wires engines to a task: `key()` is the current key row, `out` receives each output row. The
   * wiring is built once per task; engines come from it fresh, or read from a state store.
   */
  def wire(key: () => InternalRow, out: InternalRow => Unit): EngineWiring = wireRuns(key, new OutputSink {
    override def row(row: InternalRow): Unit = out(row)
    override def rows(rows: Iterator[InternalRow]): Unit = rows.foreach(out)
  })

  /**
   * As [[wire]], with output handed over as runs of rows read lazily: a window's member rows (a
   * select) are read from its bag while the consumer pulls them, so they never sit in memory at once.
   */
  def wireRuns(key: () => InternalRow, out: OutputSink): EngineWiring = {
    val writer = new WindowRowWriter(output)
    val bags = new NewRowBag(input.map(_.dataType))
    val evaluator = aggregates.map { case (functions, filters) =>
      if (slices) new AggregateEvaluator(functions, functions.map(_ => None), Nil)
      else new AggregateEvaluator(functions, filters, input)
    }
    val windowOutput: WindowOutput = evaluator match {
      case Some(e) => new AggregatedOutput(writer, key, out, e)
      case None => new TaggedOutput(writer, out)
    }
    val contents = new ContentsFactory(evaluator, windowOutput, bags)
    EngineWiring(spec.replayEngine(policies, contents, evaluator), evaluator,
      new StoredStateShape(spec.function, evaluator.map(_.bufferTypes), input.map(_.dataType)), storedLayout)
  }

  /** The layout of a stream's state rows of these windows, whose rows arrive ordered by a column of `orderType`. */
  def storedLayout(orderType: DataType): StoredWindowLayout =
    StoredWindowLayout(aggregates.map(_._1), orderType, input.map(a => a.name -> a.dataType))
}

/** A task's engine factory, its evaluator, and the codec of its engines' state in a stream ([[WindowStateCodec]]). */
final case class EngineWiring(newEngine: () => RowWindowEngine, evaluator: Option[AggregateEvaluator],
    shape: StoredStateShape, layoutOf: DataType => StoredWindowLayout) {
  /** The codec of the state of engines whose rows arrive ordered by a column of `orderType` (one per task). */
  def codec(orderType: DataType): WindowStateCodec = new WindowStateCodec(newEngine, shape, evaluator, layoutOf(orderType))
}

/** groupBy output: the key, the window and the aggregate values (of a buffer, or of a window's rows). */
final class AggregatedOutput(writer: WindowRowWriter, key: () => InternalRow, out: OutputSink,
    evaluator: AggregateEvaluator) extends WindowOutput {
  override def values(start: Any, end: Any, kind: UTF8String, values: InternalRow): Unit =
    out.row(writer.aggregated(key(), start, end, kind, values))
  override def rows(start: Any, end: Any, kind: UTF8String, rows: RowRun): Unit = {
    val buffer = evaluator.newBuffer()
    try rows.foreach(evaluator.update(buffer, _)) finally rows.close()
    values(start, end, kind, evaluator.evaluate(buffer))
  }
}

/** select output: each member row of a window tagged with it, produced while the consumer reads them. */
final class TaggedOutput(writer: WindowRowWriter, out: OutputSink) extends WindowOutput {
  override def values(start: Any, end: Any, kind: UTF8String, values: InternalRow): Unit =
    throw new IllegalStateException("a select outputs rows, not aggregate values")
  override def rows(start: Any, end: Any, kind: UTF8String, rows: RowRun): Unit =
    out.rows(rows.map(writer.tagged(_, start, end, kind)))
}

/** New, empty bags of the input's rows. */
final class NewRowBag(types: Seq[DataType]) extends (() => RowBag) with Serializable {
  // Indexed: a bag asks for their number, and a window fed rows makes a bag per kept timestamp.
  private val indexed = types.toIndexedSeq
  override def apply(): RowBag = new RowBag(indexed)
}


/**
 * Feeds rows of one key to its engine in arrival order: reads each row's order_by and signal,
 * skips rows with a null order_by, and fails on two rows of a key with the same order_by (their
 * order, and so the windows, would be arbitrary) unless the order is the event time itself, where
 * rows of equal time are interchangeable. Counts what the engine accepted and rejected.
 */
final class EngineFeeder(spec: WindowSpec, input: Seq[Attribute], order: Attribute, signal: Option[Attribute],
    tiesAllowed: Boolean) extends FedRows {
  private val orderOrdinal = input.indexWhere(_.exprId == order.exprId)
  private val orderType = order.dataType
  private val signalOrdinal = signal.map(s => input.indexWhere(_.exprId == s.exprId)).getOrElse(-1)
  private val signalType = signal.map(_.dataType).orNull
  private val signalToScala: Any => Any = spec.signalConverter(signalType)
  private var previousOrder: Any = null

  /** Arrival order of rows of one key: by order_by, rows with a null order_by first. */
  lazy val arrivalOrdering: Ordering[InternalRow] =
    new InterpretedOrdering(Seq(SortOrder(BoundReference(orderOrdinal, orderType, nullable = true), Ascending)))

  def startKey(): Unit = previousOrder = null

  def feed(engine: RowWindowEngine, row: InternalRow): Unit = {
    if (row.isNullAt(orderOrdinal)) {
      nullOrders += 1
      return
    }
    val orderValue = InternalRow.copyValue(row.get(orderOrdinal, orderType))
    if (!tiesAllowed && previousOrder != null && previousOrder == orderValue) {
      throw new SparkException(s"${spec.function}: two rows of the same key have order_by " +
        s"`${order.name}` = $orderValue; these windows need a distinct arrival order per key, so " +
        "order by a unique column (a Kafka offset, an ingestion sequence) or add a tie-breaker")
    }
    previousOrder = orderValue
    val signalValue =
      if (signalOrdinal < 0 || row.isNullAt(signalOrdinal)) null
      else signalToScala(row.get(signalOrdinal, signalType))
    if (engine.addRow(orderValue, signalValue, row)) accepted += 1 else rejected += 1
  }
}
