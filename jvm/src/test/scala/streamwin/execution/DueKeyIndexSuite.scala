package streamwin.execution

import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.InternalRow
import java.util.UUID

import org.apache.spark.sql.execution.streaming.state.{StateStoreId, StateStoreProviderId}
import org.apache.spark.sql.types.{DataType, LongType}
import org.scalatest.funsuite.AnyFunSuite

class DueKeyIndexSuite extends AnyFunSuite {
  private val toKey = UnsafeProjection.create(Array[DataType](LongType))
  private def key(k: Long): UnsafeRow = toKey(InternalRow(k))
  private def keys(due: Iterator[UnsafeRow]): Set[Long] = due.map(_.getLong(0)).toSet
  private def store(checkpoint: String, partition: Int, run: UUID = UUID.randomUUID()): StateStoreProviderId =
    StateStoreProviderId(StateStoreId(checkpoint, 0L, partition, "default"), run)

  test("the keys due on the clock or idle in processing time, as their records' deadlines say") {
    val index = new DueKeyIndex
    index.update(key(1), 100L, Long.MaxValue)
    index.update(key(2), 300L, 50L)
    index.update(key(3), Long.MaxValue, Long.MaxValue)
    assert(keys(index.due(Some(100L), None)) == Set(1L))
    assert(keys(index.due(Some(299L), Some(50L))) == Set(1L, 2L))
    assert(keys(index.due(None, Some(49L))).isEmpty)
    // A key saved again has its new deadlines (the key row is copied: the caller reuses its own).
    val reused = key(1)
    index.update(reused, 400L, Long.MaxValue)
    reused.setLong(0, 9L)
    assert(keys(index.due(Some(300L), None)) == Set(2L) && index.size == 3)
    index.remove(key(2))
    assert(keys(index.due(Some(Long.MaxValue - 1), Some(Long.MaxValue - 1))) == Set(1L) && index.size == 2)
  }

  test("an executor's index of a store is taken once, and only by a task that loaded the version it was kept at") {
    val run = UUID.randomUUID()
    val checkpoint = s"/tmp/checkpoint-${System.nanoTime()}"
    val store = this.store(checkpoint, 3, run)
    val index = new DueKeyIndex
    index.update(key(1), 100L, Long.MaxValue)
    DueKeyIndex.keep(store, 5L, index)
    assert(DueKeyIndex.take(store, 5L).contains(index))
    assert(DueKeyIndex.take(store, 5L).isEmpty, "taken: a second task scans")
    DueKeyIndex.keep(store, 5L, index)
    // A task that loaded another version (a batch run again, another executor's commit) scans the store.
    assert(DueKeyIndex.take(store, 4L).isEmpty)
    assert(DueKeyIndex.take(store, 5L).isEmpty, "a stale index is dropped")
    assert(DueKeyIndex.take(this.store(checkpoint, 4, run), 5L).isEmpty)
    // A restarted query is a new run: it scans, though an earlier run kept the same version of the store.
    DueKeyIndex.keep(store, 5L, index)
    assert(DueKeyIndex.take(this.store(checkpoint, 3), 5L).isEmpty)
    assert(DueKeyIndex.take(store, 5L).contains(index))
  }

  test("an executor keeps at most MaxKeys keys, the least recently used stores' first out") {
    val before = DueKeyIndex.keptKeyCount
    val stores = (0 until 3).map(p => store(s"/tmp/checkpoint-big-${System.nanoTime()}", p))
    def filled(n: Int): DueKeyIndex = {
      val index = new DueKeyIndex
      (0 until n).foreach(i => index.update(key(i.toLong), i.toLong, Long.MaxValue))
      index
    }
    val half = DueKeyIndex.MaxKeys / 2
    DueKeyIndex.keep(stores(0), 1L, filled(half))
    DueKeyIndex.keep(stores(1), 1L, filled(half))
    DueKeyIndex.keep(stores(2), 1L, filled(half))
    assert(DueKeyIndex.keptKeyCount <= DueKeyIndex.MaxKeys)
    assert(DueKeyIndex.take(stores(0), 1L).isEmpty, "the eldest store's index made room")
    assert(DueKeyIndex.take(stores(2), 1L).map(_.size).contains(half))
    // A store with more keys than the limit keeps none.
    DueKeyIndex.keep(stores(0), 2L, filled(DueKeyIndex.MaxKeys + 1))
    assert(DueKeyIndex.take(stores(0), 2L).isEmpty)
    DueKeyIndex.take(stores(1), 1L)
    assert(DueKeyIndex.keptKeyCount <= before)
  }

  test("an index is full past MaxKeys keys, so a task stops building it") {
    val index = new DueKeyIndex
    (0 until DueKeyIndex.MaxKeys).foreach(i => index.update(key(i.toLong), 1L, Long.MaxValue))
    assert(!index.full)
    index.update(key(0L), 2L, Long.MaxValue)
    assert(!index.full, "a key saved again is not a new key")
    index.update(key(DueKeyIndex.MaxKeys.toLong), 1L, Long.MaxValue)
    assert(index.full)
  }
}
