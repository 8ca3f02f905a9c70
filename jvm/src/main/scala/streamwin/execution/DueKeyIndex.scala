package streamwin.execution

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.streaming.state.StateStoreProviderId

/**
 * The deadlines of a partition's keys (windows fed rows), as their records in the state store hold them:
 * key (grouping columns) -> (deadline on the stream's clock, idle deadline in processing time), µs,
 * Long.MaxValue for none. It finds the keys due without a micro-batch's rows by looking at each key once,
 * where scanning the store reads every state row, the kept rows too: a hot key keeping millions of rows
 * made every micro-batch whose watermark moved scan them all, so the micro-batches grew slower as the key's
 * window grew.
 *
 * A task builds it while it scans (the records it reads), keeps it up to date as it saves keys, and leaves
 * it in this executor's [[DueKeyIndex.cache]] for the committed version and the query run; the next
 * micro-batch's task of the partition on this executor takes it if it loaded that same version, and
 * scans otherwise.
 */
private[execution] final class DueKeyIndex {
  private val deadlines = new java.util.HashMap[UnsafeRow, Array[Long]]

  def size: Int = deadlines.size

  /** More keys than an index may hold ([[DueKeyIndex.MaxKeys]]): the task drops it and the store is scanned. */
  def full: Boolean = deadlines.size > DueKeyIndex.MaxKeys

  /** The key's record was written with these deadlines (the key is copied the first time). */
  def update(key: UnsafeRow, deadline: Long, idleDeadline: Long): Unit = {
    val known = deadlines.get(key)
    if (known != null) { known(0) = deadline; known(1) = idleDeadline }
    else deadlines.put(key.copy(), Array(deadline, idleDeadline))
  }

  /** The key's record was removed. */
  def remove(key: UnsafeRow): Unit = deadlines.remove(key)

  /** Keys with a deadline at or before `clock`, or an idle deadline at or before `processingTime`. */
  def due(clock: Option[Long], processingTime: Option[Long]): Iterator[UnsafeRow] = {
    val (c, p) = (clock.getOrElse(Long.MinValue), processingTime.getOrElse(Long.MinValue))
    val found = new scala.collection.mutable.ArrayBuffer[UnsafeRow]
    val entries = deadlines.entrySet().iterator()
    while (entries.hasNext) {
      val e = entries.next()
      val d = e.getValue
      if ((clock.isDefined && d(0) <= c) || (processingTime.isDefined && d(1) <= p)) found += e.getKey
    }
    found.iterator
  }
}

private[execution] object DueKeyIndex {
  /**
   * The most keys an executor keeps indexes of, over all the partitions it ran (about 160 bytes a key,
   * 80 MB in all), and the most one task builds: a partition with more keys scans its store at every
   * micro-batch that moves the clock, as Spark's own operators do, and the partitions least recently run lose
   * theirs first.
   */
  val MaxKeys: Int = 500000
  private val MaxStores = 1024

  private final case class Kept(version: Long, index: DueKeyIndex)

  // Access order: the least recently used partition's index goes first when the total is too large.
  // By provider id: the store and the query run, so a restarted query (a new run) never takes an index kept
  // by an earlier run of the same checkpoint, whose versions it may have re-committed differently.
  private val cache = new java.util.LinkedHashMap[StateStoreProviderId, Kept](16, 0.75f, true)
  private var keptKeys = 0L

  /**
   * The index of a store (checkpoint, operator, partition, store name; query run) as of `version`, the version
   * the task loaded, if this executor kept it; taken, so no other task uses it.
   */
  def take(store: StateStoreProviderId, version: Long): Option[DueKeyIndex] = cache.synchronized {
    val kept = cache.remove(store)
    if (kept == null) None
    else {
      keptKeys -= kept.index.size
      if (kept.version == version) Some(kept.index) else None
    }
  }

  /** Keeps `index` as the due keys of `store` at `version` (committed). */
  def keep(store: StateStoreProviderId, version: Long, index: DueKeyIndex): Unit = if (index.size <= MaxKeys) cache.synchronized {
    val replaced = cache.put(store, Kept(version, index))
    if (replaced != null) keptKeys -= replaced.index.size
    keptKeys += index.size
    val eldest = cache.entrySet().iterator()
    while ((keptKeys > MaxKeys || cache.size > MaxStores) && eldest.hasNext) {
      keptKeys -= eldest.next().getValue.index.size
      eldest.remove()
    }
  }

  /** How many keys the executor keeps indexes of. */
  def keptKeyCount: Long = cache.synchronized(keptKeys)
}
