package streamwin.engine

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.DataType

// TEMPORARY in-memory stand-in with the agreed API, replaced by the spilling implementation.
final class RowBag(types: Seq[DataType]) extends Serializable {
  private var held = new mutable.ArrayBuffer[InternalRow]
  private var dropped = 0
  def append(row: InternalRow): Unit = held += row.copy()
  def size: Long = held.size - dropped
  def isEmpty: Boolean = size == 0
  def rows: RowRun = {
    val snapshot = held.slice(dropped, held.size).toVector
    new RowRun {
      private val it = snapshot.iterator

      def hasNext: Boolean = it.hasNext
      def next(): InternalRow = it.next()
      def close(): Unit = ()
    }
  }
  def dropFirst(n: Long): Unit = { dropped += n.toInt; if (dropped == held.size) clear() }
  def clear(): Unit = { held = new mutable.ArrayBuffer[InternalRow]; dropped = 0 }
  def appendAll(other: RowBag): Unit = { other.rows.foreach(r => held += r); other.clear() }
}

trait RowRun extends Iterator[InternalRow] with java.io.Closeable
