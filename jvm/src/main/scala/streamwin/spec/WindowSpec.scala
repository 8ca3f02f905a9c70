package streamwin.spec

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.types.DataType

import streamwin.engine.{AggregateEvaluator, ContentsFactory, InMemoryWindowState, KeyedWindowOperator,
  RowWindowEngine, SliceBounds, WindowFamily, WindowPolicies, WindowTriggers}

/**
 * What a window function asked for, validated and normalised, and everything the rest of streamwin
 * needs to know about its family: the rules for its input columns (checked by the analyzer), its
 * plan string, how it is planned in batch and fed in streams, and the family the window operator
 * applies. Generic code asks the spec and never matches on a concrete family, so a family is one
 * definition file (under `streamwin.families`) plus its entry in `streamwin.api.functions`.
 * Specs travel to tasks inside plans (Java-serialized with the task); no stream's state holds one.
 */
trait WindowSpec extends Serializable {
  /** The SQL name of the function that built this spec (for error messages and plan strings). */
  def function: String
  /** True when the window reads a second column (a data window's signal, a dynamic session gap, an interval's order_by). */
  def hasSignal: Boolean = false
  /** What the first column must be: the event time (time windows) or the order_by (count and data windows). */
  def leadingColumn: InputColumn = InputColumn.Time
  /** What the signal column must be and how the engine reads it (when `hasSignal`); None: any column, as it is. */
  def signalColumn: Option[InputColumn] = None

  /** The window column as plans show it (`StreamWindow.toString`). */
  def describe(window: WindowCall): String

  /** True when the windows follow the query's processing time: on a stream, Spark's clock closes them. */
  def followsProcessingTime: Boolean = false

  /** How each key's rows are fed to the window operator, in batch and in streams. */
  def replay(columns: WindowColumns): RowReplay

  /** How a groupBy over this window runs on batch data. */
  def planGroupBy(policies: WindowPolicies, columns: WindowColumns): GroupByPlan

  /**
   * Over a stream, the slice (start, µs) into which a groupBy's rows are pre-aggregated within each
   * micro-batch before the shuffle, by Spark's partial aggregation, for families that place such
   * slices as they place rows (a micro-batch may bring slices older than the last one, see
   * [[streamwin.engine.Slice.inOrder]]). None: every row goes to the window operator.
   */
  def streamSlice(policies: WindowPolicies, columns: WindowColumns): Option[StreamSlices] = None

  /** How a select of this window runs (on batch data; over a stream, every select replays rows). */
  def planSelect(policies: WindowPolicies): SelectPlan

  /** The family the keyed window operator applies when it replays rows. */
  def family(policies: WindowPolicies): WindowFamily

  /**
   * Makes the per-key engines that replay rows: the keyed window operator over [[family]], unless a
   * family needs an engine of its own.
   *
   * @param evaluator the aggregates of a groupBy; None for a select
   */
  def replayEngine(policies: WindowPolicies, contents: ContentsFactory, evaluator: Option[AggregateEvaluator])
      : () => RowWindowEngine = {
    val (windows, triggers) = (family(policies), WindowTriggers.of(policies))
    () => new KeyedWindowOperator(windows, triggers, contents, new InMemoryWindowState(contents))
  }

  /**
   * The aggregates over each slice the family reads besides the user's, by name; its slice plans
   * ([[GroupByPlan.Slices]], [[StreamSlices]]) carry them as [[hiddenFunctions]].
   */
  def hiddenAggregates: Seq[HiddenAggregate] = Nil

  /** [[hiddenAggregates]] over the window's columns, in the order a slice's buffer holds them. */
  final def hiddenFunctions(columns: WindowColumns): Seq[AggregateFunction] = hiddenAggregates.map(_.build(columns))

  /**
   * How the window operator reads the slices of [[GroupByPlan.Slices]] (families planned so only): by
   * their start, unless the family reads bounds from its [[hiddenAggregates]], found by name in `slots`.
   */
  def sliceBounds(slots: HiddenSlots): SliceBounds = SliceBounds.AtStart

  /**
   * The signal column as the engine reads it (after the analyzer checked it), and the spec that reads
   * it so: a family may take part of its signal into its engine (a sliding window's condition that
   * reads `last_hit_time()`, which only the engine knows).
   */
  def bindSignal(signal: Expression): (WindowSpec, Expression) =
    (this, signalColumn.map(_.forEngine(signal)).getOrElse(signal))

  /** How the engine receives the signal column's values: as Catalyst holds them, unless a family wants them converted. */
  def signalConverter(signalType: DataType): Any => Any = identity
}

/** A window function's call as its plan string shows it (a [[streamwin.catalyst.StreamWindow]]). */
trait WindowCall {
  /** The event time, or the `order_by` of count and data windows. */
  def timeOrOrder: Expression
  /** The signal column, when the spec has one ([[WindowSpec.hasSignal]]). */
  def signal: Option[Expression]
  /** The explicit arrival order of a time window (`order_by`), if any. */
  def arrivalOrder: Option[Expression]
  def policies: WindowPolicies
}

/** A family of windows placed by each row's event time. */
trait EventTimeWindowSpec extends WindowSpec {
  /** Rows arrive in their `order_by` order, or in event-time order, where rows of equal time are interchangeable. */
  override def replay(columns: WindowColumns): RowReplay = RowReplay(
    order = columns.arrivalOrder.getOrElse(columns.timeOrOrder), signal = Some(columns.timeOrOrder),
    tiesAllowed = columns.arrivalOrder.isEmpty, eventTime = Some(columns.timeOrOrder))
}

/**
 * Windows over each key's rows in `order_by` (arrival) order: count and data-driven windows. They
 * always replay rows, with their own signal; no two rows of a key may share an order_by value.
 */
trait SequenceWindowSpec extends WindowSpec {
  override def leadingColumn: InputColumn = InputColumn.Order

  override def describe(w: WindowCall): String = s"${this}(${w.signal.getOrElse("")}, order_by=${w.timeOrOrder}${w.policies})"

  override def replay(columns: WindowColumns): RowReplay =
    RowReplay(order = columns.timeOrOrder, signal = columns.signal, tiesAllowed = false, eventTime = None)

  override def planGroupBy(policies: WindowPolicies, columns: WindowColumns): GroupByPlan = GroupByPlan.ReplayRows
  override def planSelect(policies: WindowPolicies): SelectPlan = SelectPlan.ReplayRows
}
