package streamwin.engine

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.DataType

/**
 * What a family keeps per key besides its windows ([[WindowState.record]]): a count family's place in
 * the key's rows, a data family's trigger state, a cut session's latest slice. Each family defines its
 * record beside itself (streamwin.families), with the form a stream stores it in
 * ([[WindowFamily.recordForm]]).
 */
trait FamilyRecord {
  /** Window contents the record holds of its own: stored with the key's rows, and released with its state. */
  def heldContents: Iterator[WindowContents] = Iterator.empty

  /** The key's state is cleared: contents the record holds free what they hold (spilled rows). */
  def release(): Unit = ()
}

/**
 * How a stream's state stores a family's record: as one typed field of the key's record state row, one
 * of [[StoredWindowLayout.FamilyRecordFields]] (the others stay null). The field's name and type are part
 * of the stored form (format 2), so a family with a record of its own uses one of them: `data` holds any
 * state value ([[StoredRecordIO.storedValue]]), as a split trigger's state and a sliding window's last
 * hit are kept.
 */
trait FamilyRecordForm {
  /** The record row's field this form writes. */
  def field: String

  /** The field's value for `record`, of the field's type in [[StoredWindowLayout]]. */
  def write(record: FamilyRecord, io: StoredRecordIO): Any

  /** The record stored in the field at `ordinal` of a key's record row `row` (not null there). */
  def read(row: InternalRow, ordinal: Int, io: StoredRecordIO): FamilyRecord
}

/** What a family's record form reads and writes besides its own fields: window contents, values of the order column, state values. */
trait StoredRecordIO {
  /** The type of the order column's values. */
  def orderType: DataType

  /** How many fields the struct in `field` of the record row has. */
  def width(field: String): Int

  /** Window contents as stored (null for none). */
  def contentsValue(contents: WindowContents): InternalRow

  /** Window contents stored ([[contentsValue]]) at `ordinal` of `row`, or null. */
  def readContents(row: InternalRow, ordinal: Int): WindowContents

  /** A state value (a split trigger's, a last hit) as bytes; a user's object only from the family's [[WindowFamily.userClasses]]. */
  def storedValue(value: Any): Array[Byte]

  /** A state value read back from [[storedValue]]'s bytes. */
  def valueOf(bytes: Array[Byte]): Any
}
