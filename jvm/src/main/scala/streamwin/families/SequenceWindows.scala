package streamwin.families

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericInternalRow}

import streamwin.catalyst.StreamWindow
import streamwin.engine._
import streamwin.spec.{PolicyOptions, SequenceWindowSpec, StreamwinErrors, WindowArguments}

/** What the builders of count and data windows share: a required order_by and the same policy rules. */
private object SequenceWindows {
  private val eventTimeOnly =
    "applies to event-time windows (sw_tumbling, sw_hopping); count and data windows follow arrival order, " +
      "where no row is late"

  /** Count and data windows: update emission and count triggers; no event time, no empty windows. */
  def support(endAligned: Boolean): PolicyOptions.Support = {
    case "lateness" | "late" => eventTimeOnly
    case "emit_empty" => "applies to time windows; a count or data window always holds rows"
    case "emit" | "count_trigger" if endAligned =>
      "needs start-aligned count windows: an end-aligned window (eKuiper COUNTWINDOW) is only known when it is emitted"
  }

  def requiredOrder(a: WindowArguments): Expression = a.option("order_by").getOrElse(
    throw StreamwinErrors.invalidArgument(a.function, "order_by",
      "is required: these windows follow each key's arrival order, so name the column that gives it " +
        "(for example a Kafka offset, an ingestion sequence or the event time)"))

  /** The builder of a data window: its signal column first, then `extraPositional` arguments, then options. */
  def dataWindow(signalName: String, extraPositional: Seq[String])(spec: WindowArguments => DataWindowSpec)(
      function: String, args: Seq[Expression]): Expression = {
    val a = new WindowArguments(function, signalName +: extraPositional,
      Seq("order_by", "partition_by") ++ PolicyOptions.optionNames, Set("partition_by"), args)
    val policies = PolicyOptions.parse(a, orderGiven = false, support(endAligned = false))
    StreamWindow(spec(a), Seq(requiredOrder(a), a.positional(signalName)) ++ a.optionValues("partition_by"), policies)
  }
}

/** What a row does to the open window of a data family. */
sealed trait DataBoundary

object DataBoundary {
  /** The row joins the open window. */
  case object Joins extends DataBoundary
  /** The row starts the next window: the open one (if it holds rows) is output as `final`, then the row joins the new one. */
  case object Starts extends DataBoundary
  /** The row closes the open window (if it holds rows) and is no member of any (a punctuation marker). */
  case object Closes extends DataBoundary
  /** The row is no member and changes nothing (a delta row without a value). */
  case object Skipped extends DataBoundary
}

/**
 * Windows whose boundaries come from the data; they never overlap and one is open at a time. Each
 * row's [[DataBoundary]] comes from the spec (split: a true predicate, or a user's
 * [[streamwin.api.SplitTrigger]], starts a window; delta: a value more than the threshold above the
 * oldest member's starts one; punctuation: a marker row closes one and is no member).
 * The open window at the end of the input is emitted as `partial`.
 * Policies: `emit_update` outputs the window so far after each row that entered it;
 * `count_trigger` outputs the rows held as `partial` once they reach N and drops them (the window
 * goes on); each output's start and end are the first and last order_by value of its rows.
 */
final case class DataWindows(spec: DataWindowSpec) extends SequenceFamily {
  override def newRecord(): FamilyRecord = new DataRecord(spec.initialState)
  override def recordForm: Option[FamilyRecordForm] = Some(DataRecord.Form)
  override def userClasses: Seq[Class[_]] = spec.userClasses

  override def place(order: Any, signal: Any, row: InternalRow, op: KeyedWindowOperator): Boolean = {
    val r = op.state.record.asInstanceOf[DataRecord]
    spec.boundary(signal, r) match {
      case DataBoundary.Joins =>
        append(order, row, r, op)
        true
      case DataBoundary.Starts =>
        if (r.members > 0) close(WindowKind.Final, r, op)
        append(order, row, r, op)
        true
      case DataBoundary.Closes =>
        if (r.members > 0) close(WindowKind.Final, r, op)
        false
      case DataBoundary.Skipped => false
    }
  }

  override def teardown(op: KeyedWindowOperator): Unit = {
    val r = op.state.record.asInstanceOf[DataRecord]
    if (r.members > 0) close(WindowKind.Partial, r, op)
  }

  private def current(op: KeyedWindowOperator): WindowEntry = {
    val w = op.state.window(0L)
    if (w != null) w else op.open(0L, 0L, op.contents.buffered())
  }

  private def append(order: Any, row: InternalRow, r: DataRecord, op: KeyedWindowOperator): Unit = {
    val w = current(op)
    if (w.held == 0) w.first = order
    w.last = order
    r.members += 1
    op.enter(w, row)
  }

  private def close(kind: UTF8String, r: DataRecord, op: KeyedWindowOperator): Unit = {
    val w = current(op)
    if (w.held > 0) op.output(w, kind)
    op.flushRows(w)
    r.members = 0
  }
}

/**
 * Windows whose boundaries come from the data (split, delta, punctuation): one window is open at a
 * time, and each row's signal says whether it joins it, starts the next one, or closes it
 * ([[DataWindows]] applies the rule).
 */
trait DataWindowSpec extends SequenceWindowSpec {
  override def hasSignal: Boolean = true

  /** What a key's record holds before its first row ([[DataRecord.state]]). */
  def initialState: Any = null

  /** Classes of a user's code the spec runs (a split trigger), whose state a stream may keep. */
  def userClasses: Seq[Class[_]] = Nil

  /** What a row with `signal` does to the key's open window; may update `record.state`. */
  def boundary(signal: Any, record: DataRecord): DataBoundary

  override def family(policies: WindowPolicies): WindowFamily = DataWindows(this)
}

/**
 * Where a key is in its rows for [[DataWindows]]: how many rows the open window holds since it began, and
 * what the family remembers between rows (see [[DataWindowSpec.boundary]]; a sliding window's last hit).
 */
final class DataRecord(var state: Any) extends FamilyRecord with Serializable {
  var members = 0
}

object DataRecord {
  /** Stored as `data`: members, and the state as a stored value ([[StoredRecordIO.storedValue]]). */
  object Form extends FamilyRecordForm {
    override val field = "data"

    override def write(record: FamilyRecord, io: StoredRecordIO): Any = {
      val x = record.asInstanceOf[DataRecord]
      new GenericInternalRow(Array[Any](x.members, io.storedValue(x.state)))
    }

    override def read(row: InternalRow, ordinal: Int, io: StoredRecordIO): FamilyRecord = {
      val v = row.getStruct(ordinal, io.width(field))
      val x = new DataRecord(io.valueOf(v.getBinary(1)))
      x.members = v.getInt(0)
      x
    }
  }
}
