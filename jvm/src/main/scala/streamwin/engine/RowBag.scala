package streamwin.engine

import java.io.{BufferedOutputStream, File, FileInputStream, FileOutputStream, FilterOutputStream, InputStream,
  IOException, ObjectInputStream, ObjectOutputStream, OutputStream}
import java.lang.ref.{ReferenceQueue, WeakReference}
import java.util.Locale
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.streamwin.TaskMemoryUser
import org.apache.spark.sql.types.DataType
import org.apache.spark.storage.BlockId
import org.apache.spark.unsafe.Platform

/**
 * Rows kept in arrival order for one window (or one key's FIFO). Appends copy the row. Spills when the
 * task's [[MemoryBudget]] (shared by every bag of the task: execution memory of Spark's task memory
 * manager, capped by [[RowBag.MemoryBytesConf]] if set) needs the memory back.
 *
 * Layout: the rows live in chunks, each one byte page holding `[length: Int][UnsafeRow bytes]` entries
 * back to back. Only the last chunk of a bag takes appends; a page's written bytes never change, so a
 * [[RowRun]] taken earlier keeps reading the same bytes whatever the bag does next. A chunk is shared
 * (reference counted) by the bag that holds it and by every live run that still has to read it; when the
 * task's budget would be exceeded (or Spark's task memory manager asks for the memory), every in-memory
 * chunk of the task is written to one temporary file (one block per chunk) and its page freed; readers
 * then load a spilled chunk's block back on their own.
 * Chunks no one references any more free their page's budget, and a spill file is deleted once none of
 * its chunks is referenced: at once on dropFirst/clear/appendAll/a run's exhaustion or close(), or, for bags
 * and runs merely dropped, at a page allocation of the task after the garbage collector has found them;
 * anything left is deleted when the task completes (a bag must not be read after its task).
 *
 * `types` (the field types) is needed only to append rows that are not [[UnsafeRow]]s.
 *
 * In a stream, a bag restored from the state store starts with its rows there ([[StoredRowRange]]): they
 * come before the in-memory ones, are read from the store when the bag is read, and are dropped by
 * moving the range's start; only the rows appended since are written back ([[StoredBags]]).
 *
 * Not thread-safe: a bag, its runs and all bags of one task must be used by one thread at a time.
 */
final class RowBag(val numFields: Int, val types: Seq[DataType]) extends Serializable {
  import RowBag._

  /** A bag that takes only [[UnsafeRow]]s of `numFields` fields. */
  def this(numFields: Int) = this(numFields, null)
  /** A bag that takes any [[InternalRow]] of these field types (converting non-UnsafeRows). */
  def this(types: Seq[DataType]) = this(types.length, types)

  require(numFields >= 0, s"numFields must be >= 0, got $numFields")
  require(types == null || types.length == numFields, s"${types.length} types for $numFields fields")

  // The chunks in arrival order: a ring buffer (power-of-two capacity), allocated on the first append.
  @transient private var chunks: Array[Chunk] = _
  @transient private var first: Int = 0
  @transient private var numChunks: Int = 0
  @transient private var tail: Chunk = _
  @transient private var count: Long = 0L
  @transient private var converter: UnsafeProjection = _
  // The oldest rows, in a stream's state store (null: none).
  @transient private var stored: StoredRowRange = _

  private def storedLength: Long = if (stored == null) 0L else stored.length
  def size: Long = count + storedLength
  def isEmpty: Boolean = size == 0L

  /** Copies `row` to the end of the bag (converting it to an UnsafeRow first if it is not one). */
  def append(row: InternalRow): Unit = {
    val u = row match {
      case u: UnsafeRow =>
        if (u.numFields != numFields)
          throw new IllegalArgumentException(s"an UnsafeRow of ${u.numFields} fields appended to a RowBag of $numFields")
        u
      case other => toUnsafe(other)
    }
    val length = u.getSizeInBytes
    val t = room(length)
    val at = Platform.BYTE_ARRAY_OFFSET + t.used
    Platform.putInt(t.page, at, length)
    u.writeToMemory(t.page, at + 4)
    t.used += length + 4
    t.rows += 1
    count += 1
  }

  /**
   * The rows held now, in arrival order, read lazily (from disk for spilled parts). The run stays valid and
   * unchanged whatever happens to the bag afterwards (appends, dropFirst, clear, appendAll). Each row it
   * returns is a distinct UnsafeRow over the run's (immutable) page: it stays valid as long as it is referenced.
   * Costs O(number of chunks) now; reading a spilled chunk loads its block (at most one page) from disk.
   */
  def rows: RowRun =
    if (storedLength == 0L) memoryRows
    else if (count == 0L) stored.run()
    else RowRuns.concat(Vector(stored.run(), memoryRows))

  /** The rows held in memory (all of them, unless the bag was restored from a stream's state). */
  private[engine] def memoryRows: RowRun = {
    if (count == 0L) return RowRun.empty
    val n = numChunks
    val cs = new Array[Chunk](n)
    val skipRows = new Array[Int](n)
    val skipBytes = new Array[Int](n)
    val mask = chunks.length - 1
    var i = 0
    while (i < n) {
      val c = chunks((first + i) & mask)
      c.refs += 1
      cs(i) = c
      skipRows(i) = c.skipRows
      skipBytes(i) = c.skipBytes
      i += 1
    }
    new ChunkRun(numFields, cs, skipRows, skipBytes, tail.rows, count)
  }

  /** FIFO eviction of the `n` oldest rows (all of them if `n >= size`); O(n) amortised. */
  def dropFirst(n: Long): Unit = {
    require(n >= 0L, s"dropFirst($n)")
    if (n >= size) { clear(); return }
    val fromStore = math.min(n, storedLength)
    if (fromStore > 0L) stored.from += fromStore
    dropFromMemory(n - fromStore)
  }

  private def dropFromMemory(n: Long): Unit = {
    if (n == 0L) return
    if (n >= count) { clearMemory(); return }
    var left = n
    val mask = chunks.length - 1
    while (left > 0L) {
      val c = chunks(first)
      val live = c.rows - c.skipRows
      if (left >= live) {
        // n < count: the last chunk is never removed here.
        chunks(first) = null
        first = (first + 1) & mask
        numChunks -= 1
        release(c)
        left -= live
      } else {
        val k = left.toInt
        if (c.page != null && c.skipBytes >= 0) {
          var at = c.skipBytes
          var i = 0
          while (i < k) { at += 4 + Platform.getInt(c.page, Platform.BYTE_ARRAY_OFFSET + at); i += 1 }
          c.skipBytes = at
        } else c.skipBytes = -1 // spilled: readers find the offset when they load the block
        c.skipRows += k
        left = 0L
      }
    }
    count -= n
  }

  def clear(): Unit = {
    stored = null
    clearMemory()
  }

  private def clearMemory(): Unit = {
    if (numChunks > 0) {
      val mask = chunks.length - 1
      var i = 0
      while (i < numChunks) {
        val j = (first + i) & mask
        val c = chunks(j)
        chunks(j) = null
        release(c)
        i += 1
      }
    }
    if (chunks != null && chunks.length > 16) chunks = null
    first = 0
    numChunks = 0
    tail = null
    count = 0L
  }

  /**
   * Moves every row of `other` to the end of this bag (session merges); `other` becomes empty. Moves the
   * chunks themselves (no copy, spilled or not): O(number of chunks of `other`).
   */
  def appendAll(other: RowBag): Unit = {
    require(other ne this, "appendAll of a bag to itself")
    require(other.numFields == numFields, s"appendAll of a bag of ${other.numFields} fields to one of $numFields")
    if (other.storedLength > 0L) {
      // An empty bag takes the other's stored rows over; else they are read and appended (in memory).
      if (size == 0L) stored = other.stored
      else {
        val run = other.stored.run()
        try run.foreach(append) finally run.close()
      }
    }
    other.stored = null
    if (other.count == 0L) return
    val mask = other.chunks.length - 1
    var i = 0
    while (i < other.numChunks) {
      val j = (other.first + i) & mask
      push(other.chunks(j))
      other.chunks(j) = null
      i += 1
    }
    tail = other.tail
    count += other.count
    other.first = 0
    other.numChunks = 0
    other.tail = null
    other.count = 0L
  }

  override def toString: String =
    s"RowBag($count rows in $numChunks chunks${if (stored == null) "" else s", ${stored.length} in the state store"})"

  /** The bag (new, empty) holds the rows of `range` first. */
  private[engine] def restoreStored(range: StoredRowRange): Unit = {
    require(size == 0L && stored == null, "stored rows restored into a bag that holds rows")
    stored = range
  }

  /** The stored rows, if the bag has any (possibly none left). */
  private[engine] def storedRows: StoredRowRange = stored

  /** Every row of the bag is now in `range` (its in-memory rows were put into the store). */
  private[engine] def storedAs(range: StoredRowRange): Unit = {
    require(range.length == size, s"${range.length} stored rows for a bag of $size")
    clearMemory()
    stored = range
  }

  private def toUnsafe(row: InternalRow): UnsafeRow = {
    if (converter == null) {
      if (types == null)
        throw new IllegalArgumentException(
          s"RowBag($numFields) takes only UnsafeRows; construct it with the field types to append a ${row.getClass.getSimpleName}")
      converter = budget.converter(types)
    }
    converter(row)
  }

  private def push(c: Chunk): Unit = {
    if (chunks == null) chunks = new Array[Chunk](4)
    else if (numChunks == chunks.length) {
      val grown = new Array[Chunk](chunks.length * 2)
      var i = 0
      while (i < numChunks) { grown(i) = chunks((first + i) & (chunks.length - 1)); i += 1 }
      chunks = grown
      first = 0
    }
    chunks((first + numChunks) & (chunks.length - 1)) = c
    numChunks += 1
  }

  /** The chunk to write an entry of `length` row bytes into: the last one if its page has room. */
  private def room(length: Int): Chunk = {
    val need = length + 4
    val t = tail
    if (t != null && t.page != null && t.page.length - t.used >= need) return t
    val b = budget
    // A small last page grows (by doubling, copying its bytes) up to the budget's page size; then new chunks follow.
    val grow = t != null && t.page != null && (t.budget eq b) && t.used.toLong + need <= b.pageBytes
    val capacity =
      if (t == null) math.max(need, MinPageBytes)
      else if (grow) math.max(t.used + need, math.min(2L * t.page.length, b.pageBytes.toLong).toInt)
      else math.max(need, math.min(math.max(2L * t.capacity, MinPageBytes.toLong), b.pageBytes.toLong).toInt)
    b.acquire(capacity) // may spill every in-memory chunk of the task, `t` included
    val page = new Array[Byte](capacity)
    if (grow && t.page != null) {
      System.arraycopy(t.page, 0, page, 0, t.used)
      b.replacePage(t, page)
      t.capacity = capacity
      t
    } else {
      val c = new Chunk(b, page)
      b.register(c)
      push(c)
      tail = c
      c
    }
  }
}

/** A lazily read snapshot of a bag's rows. Frees what it holds once exhausted (or on close()). */
trait RowRun extends Iterator[InternalRow] with java.io.Closeable {
  /** The number of rows of the snapshot (constant; not the number left). */
  def numRows: Long
}

object RowRun {
  /** The run of an empty bag. */
  val empty: RowRun = new RowRun {
    override def numRows: Long = 0L
    override def hasNext: Boolean = false
    override def next(): InternalRow = throw new NoSuchElementException("empty RowRun")
    override def close(): Unit = ()
  }
}

object RowBag {
  /**
   * A cap on the bytes of rows the bags of one task keep on the heap before they spill, e.g. `64m` or
   * `67108864`. Unset (the default), a task's bags keep what Spark's task memory manager grants them: their
   * pages are execution memory of the task ([[MemoryBudget]]), sized by `spark.memory.*` and spilled when any
   * consumer of the task needs memory the executor does not have, as Spark's own sorts and aggregations are.
   * Outside Spark tasks (and for tests) the cap is [[DefaultMemoryBytes]].
   */
  val MemoryBytesConf = "spark.streamwin.buffer.memoryBytes"
  val DefaultMemoryBytes: Long = 64L * 1024 * 1024

  private[engine] val MinPageBytes = 128
  private[engine] val MaxPageBytes = 256 * 1024 // below G1's humongous-object threshold on common heap sizes

  private val taskBudgets = new ConcurrentHashMap[java.lang.Long, MemoryBudget]()
  private val taskBudgetCache = new ThreadLocal[MemoryBudget]
  private val threadBudget = new ThreadLocal[MemoryBudget]

  /** The memory budget of the current task (of the current thread outside tasks), created on first use. */
  def budget: MemoryBudget = {
    val tc = TaskContext.get()
    if (tc == null) {
      val b = threadBudget.get()
      if (b != null) b
      else {
        val created = new MemoryBudget(configuredMemoryBytes().getOrElse(DefaultMemoryBytes), null)
        threadBudget.set(created)
        created
      }
    } else {
      val cached = taskBudgetCache.get()
      if (cached != null && (cached.task eq tc) && !cached.isClosed) cached else taskBudget(tc)
    }
  }

  /** Bytes written to spill files by the current task's bags so far. */
  def spilledBytes: Long = budget.spilledBytes
  /** Spills (spill files written) by the current task's bags so far. */
  def spillCount: Long = budget.spillCount

  private def taskBudget(tc: TaskContext): MemoryBudget = {
    val id = java.lang.Long.valueOf(tc.taskAttemptId())
    var b = taskBudgets.get(id)
    if (b == null || b.isClosed) {
      val created = new MemoryBudget(configuredMemoryBytes().getOrElse(Long.MaxValue), tc)
      taskBudgets.put(id, created)
      b = created
      tc.addTaskCompletionListener[Unit] { _ =>
        created.close()
        taskBudgets.remove(id, created)
        if (taskBudgetCache.get() eq created) taskBudgetCache.remove()
      }
    }
    taskBudgetCache.set(b)
    b
  }

  /** The configured cap: [[MemoryBytesConf]] from the session (in tasks, the job's local properties), if set. */
  private[streamwin] def configuredMemoryBytes(): Option[Long] = {
    val value = try SQLConf.get.getConfString(MemoryBytesConf, null) catch { case NonFatal(_) => null }
    if (value == null || value.trim.isEmpty) None else Some(parseBytes(value))
  }

  /** "67108864", "64m", "64MiB", "512k", "1g" -> bytes. */
  private[streamwin] def parseBytes(value: String): Long = {
    val v = value.trim.toLowerCase(Locale.ROOT)
    val digits = v.takeWhile(_.isDigit)
    val unit = v.drop(digits.length).trim
    val scale = unit match {
      case "" | "b" => 1L
      case "k" | "kb" | "kib" => 1L << 10
      case "m" | "mb" | "mib" => 1L << 20
      case "g" | "gb" | "gib" => 1L << 30
      case _ => -1L
    }
    if (digits.isEmpty || scale < 0 || digits.length > 15 || digits.toLong <= 0L)
      throw new IllegalArgumentException(s"$MemoryBytesConf must be a positive size in bytes (e.g. 64m), got '$value'")
    digits.toLong * scale
  }

  /**
   * Runs `body` with a fresh budget of `limitBytes` for this thread (outside tasks only), then deletes what it
   * left on disk and restores the previous budget. For tests and for callers outside Spark tasks.
   */
  private[streamwin] def withThreadBudget[T](limitBytes: Long)(body: => T): T = {
    require(TaskContext.get() == null, "withThreadBudget outside Spark tasks only")
    val previous = threadBudget.get()
    val b = new MemoryBudget(limitBytes, null)
    threadBudget.set(b)
    try body finally {
      b.close()
      if (previous == null) threadBudget.remove() else threadBudget.set(previous)
    }
  }

  private[engine] def release(c: Chunk): Unit = {
    c.refs -= 1
    if (c.refs == 0) c.budget.free(c)
  }
}

/**
 * The memory budget of one task (or of one thread outside tasks), shared by all its bags: the bytes of
 * in-memory pages, the chunks (what a spill writes), the spill files not yet deleted, and the spill metrics.
 *
 * In a task the pages are execution memory of the task: the budget reserves them from Spark's task memory
 * manager (a step ahead, so that small pages do not each ask it) as a [[TaskMemoryUser]], and spills when the
 * manager asks it to (another consumer of the task, or this one, needs memory the executor does not have).
 * A grant that falls short even then does not stop the task: the page is taken on the heap all the same, as
 * Spark's own spillable collections go on. `limitBytes` caps the pages besides (Long.MaxValue: no cap).
 *
 * Chunks are released explicitly (reference counts), and also when they become garbage: a bag dropped
 * without clear() (e.g. an engine discarded after being serialized) is noticed through weak references at
 * a later page allocation of the task, after the JVM's garbage collector has found it; its budget is then
 * freed and its spill blocks released.
 */
final class MemoryBudget private[engine] (val limitBytes: Long, private[engine] val task: TaskContext) {
  require(limitBytes > 0L, s"memory budget must be positive, got $limitBytes")

  /** The largest page a bag allocates (bigger only for a single larger row). */
  private[engine] val pageBytes: Int =
    math.max(RowBag.MinPageBytes.toLong, math.min(RowBag.MaxPageBytes.toLong, limitBytes / 16)).toInt

  private var used = 0L
  private var spilled = 0L
  private var spills = 0L
  @volatile private var closed = false
  private val collected = new ReferenceQueue[Chunk]
  // Circular lists (sentinels) of the handles of in-memory and of spilled chunks.
  private val inMemory = ChunkHandle.sentinel()
  private val onDisk = ChunkHandle.sentinel()
  private val files = new java.util.HashSet[SpillFile]()
  private var converters: java.util.HashMap[Seq[DataType], UnsafeProjection] = _
  // The task's execution memory these pages hold (null outside tasks).
  private val execution: TaskMemoryUser = if (task == null) null else new TaskMemoryUser(task) {
    override protected def spillAll(): Unit = MemoryBudget.this.spillAndRelease()
  }

  /** Bytes of the task's execution memory the budget holds now (reserved ahead of its pages). */
  def executionMemory: Long = if (execution == null) 0L else execution.getUsed

  /** Bytes of in-memory pages held now. */
  def memoryUsed: Long = used
  /** Bytes written to spill files so far. */
  def spilledBytes: Long = spilled
  /** Spill files written so far. */
  def spillCount: Long = spills
  /** Spill files not deleted yet. */
  def openSpillFiles: Int = files.size
  private[streamwin] def spillFilePaths: Seq[File] = {
    val it = files.iterator()
    val out = Seq.newBuilder[File]
    while (it.hasNext) out += it.next().file
    out.result()
  }
  def isClosed: Boolean = closed

  /** Charges a new page of `bytes`, spilling first if it would exceed the cap or Spark's grant. */
  private[engine] def acquire(bytes: Int): Unit = {
    reclaim()
    if (used > 0L && used + bytes > limitBytes) spillAndRelease()
    // (The task memory manager may spill this budget while it decides.)
    if (execution != null && used + bytes > execution.getUsed) {
      execution.reserve(used + bytes + MemoryBudget.ReserveStep - execution.getUsed)
    }
    used += bytes
  }

  /** Gives back execution memory reserved well beyond the pages held. */
  private def trimReserve(): Unit =
    if (execution != null && execution.getUsed - used > 2 * MemoryBudget.ReserveStep) {
      execution.release(execution.getUsed - used - MemoryBudget.ReserveStep)
    }

  /** Spills every in-memory chunk and gives back the execution memory the pages held (someone needs it). */
  private def spillAndRelease(): Unit = {
    spill()
    if (execution != null) execution.release(execution.getUsed - used)
  }

  /** A new in-memory chunk (its page charged by acquire). */
  private[engine] def register(c: Chunk): Unit = {
    val h = new ChunkHandle(c, collected)
    h.page = c.page
    c.handle = h
    if (!closed) h.linkBefore(inMemory)
  }

  /** The page of in-memory chunk `c` replaced by a bigger copy (charged by acquire). */
  private[engine] def replacePage(c: Chunk, page: Array[Byte]): Unit = {
    if (c.handle.isLinked) used -= c.page.length else used -= page.length
    c.page = page
    c.handle.page = page
    trimReserve()
  }

  /** A chunk nobody references any more: frees its page's budget, releases its spill block. */
  private[engine] def free(c: Chunk): Unit = {
    val h = c.handle
    h.clear() // never enqueued now
    drop(h)
    c.page = null
    trimReserve()
  }

  private def drop(h: ChunkHandle): Unit = {
    if (h.isLinked) {
      h.unlink()
      if (h.page != null) used -= h.page.length
    }
    h.page = null
    if (h.file != null) {
      h.file.releaseBlock()
      h.file = null
    }
  }

  /** Frees the chunks the garbage collector found unreachable (bags and runs dropped without clear/close). */
  private def reclaim(): Unit = {
    var r = collected.poll()
    if (r == null) return
    while (r != null) {
      drop(r.asInstanceOf[ChunkHandle])
      r = collected.poll()
    }
    trimReserve()
  }

  private[engine] def converter(types: Seq[DataType]): UnsafeProjection = {
    if (converters == null) converters = new java.util.HashMap()
    var p = converters.get(types)
    if (p == null) {
      p = UnsafeProjection.create(types.toArray)
      converters.put(types, p)
    }
    p
  }

  /** Writes every in-memory chunk of the task to one new file (a block per chunk) and frees their pages. */
  private def spill(): Unit = {
    // The live chunks, held strongly while they are written; garbage ones are just dropped.
    val live = new java.util.ArrayList[Chunk]()
    var h = inMemory.after
    while (h ne inMemory) {
      val next = h.after
      val c = h.get()
      if (c == null) drop(h) else live.add(c)
      h = next
    }
    if (live.isEmpty) return
    val env = SparkEnv.get
    val blockManager = if (env == null) null else env.blockManager
    val (blockId, file) =
      if (blockManager != null) blockManager.diskBlockManager.createTempLocalBlock()
      else (null, File.createTempFile("streamwin-rowbag-", ".spill"))
    val sf = new SpillFile(this, file, blockId, if (blockManager != null) env else null)
    val out = new CountingOutputStream(new BufferedOutputStream(new FileOutputStream(file), 64 * 1024))
    var written = false
    try {
      var i = 0
      while (i < live.size) {
        val c = live.get(i)
        val start = out.count
        val block = sf.wrap(new UnclosableOutputStream(out))
        block.write(c.page, 0, c.used)
        block.close()
        c.fileOffset = start
        c.fileLength = out.count - start
        i += 1
      }
      out.close() // complete on disk before any reader can look at it
      written = true
    } finally {
      if (!written) {
        try out.close() catch { case NonFatal(_) => }
        file.delete()
      }
    }
    var i = 0
    while (i < live.size) {
      val c = live.get(i)
      val ch = c.handle
      used -= c.page.length
      c.capacity = c.page.length
      c.page = null
      ch.page = null
      ch.file = sf
      ch.unlink()
      ch.linkBefore(onDisk)
      i += 1
    }
    sf.liveBlocks = live.size
    files.add(sf)
    spilled += out.count
    spills += 1
  }

  private[engine] def deleteFile(sf: SpillFile): Unit = {
    sf.deleted = true
    files.remove(sf)
    if (!sf.file.delete() && sf.file.exists()) sf.file.deleteOnExit()
  }

  /**
   * At task completion: deletes every spill file left (bags and runs still holding them become unreadable) and
   * forgets the chunks, so that nothing keeps the task's pages reachable.
   */
  private[engine] def close(): Unit = {
    closed = true
    for (list <- Seq(inMemory, onDisk)) {
      var h = list.after
      while (h ne list) {
        val next = h.after
        h.before = null
        h.after = null
        h.page = null
        h.file = null
        h = next
      }
      list.before = list
      list.after = list
    }
    used = 0L
    if (execution != null) execution.release(execution.getUsed)
    converters = null
    val it = files.iterator()
    while (it.hasNext) {
      val sf = it.next()
      sf.deleted = true
      sf.file.delete()
    }
    files.clear()
  }
}

object MemoryBudget {
  /** How far ahead of its pages a task's budget reserves execution memory (one request per step, not per page). */
  val ReserveStep: Long = 1L << 20
}

/** A page of rows, in memory or as one block of a spill file; shared by a bag and the runs reading it. */
private[engine] final class Chunk(val budget: MemoryBudget, var page: Array[Byte]) {
  var capacity: Int = if (page == null) 0 else page.length
  var used: Int = 0 // bytes of entries written
  var rows: Int = 0 // entries written
  var refs: Int = 1 // the bag holding it, plus the runs that have not read past it
  // The rows the holding bag has dropped from this chunk (dropFirst); skipBytes is -1 if unknown (spilled).
  var skipRows: Int = 0
  var skipBytes: Int = 0
  // Once spilled: the block in handle.file.
  var fileOffset: Long = 0L
  var fileLength: Long = 0L
  var handle: ChunkHandle = _

  /** The page: in memory, or loaded from its block (a private copy for the caller). */
  def load(): Array[Byte] = {
    val p = page
    if (p != null) return p
    val sf = handle.file
    if (sf == null || sf.deleted)
      throw new IllegalStateException("RowBag: the spill file of these rows was deleted (its task completed)")
    val in = new FileInputStream(sf.file)
    try {
      in.getChannel.position(fileOffset)
      val block = sf.wrap(new BoundedInputStream(in, fileLength))
      val bytes = new Array[Byte](used)
      val n = org.apache.commons.io.IOUtils.read(block, bytes, 0, used)
      if (n != used) throw new IOException(s"RowBag: spill file ${sf.file} is truncated ($n of $used bytes)")
      bytes
    } finally in.close()
  }
}

/**
 * What the budget keeps of a chunk: its page (to spill it) or its spill file (to release its block), and a weak
 * reference to the chunk itself, so that a chunk no bag or run references any more is noticed even if nobody
 * released it.
 */
private[engine] final class ChunkHandle(chunk: Chunk, queue: ReferenceQueue[Chunk])
  extends WeakReference[Chunk](chunk, queue) {
  var page: Array[Byte] = _
  var file: SpillFile = _
  var before: ChunkHandle = _ // the budget's list links (Reference has its own `next`)
  var after: ChunkHandle = _

  def isLinked: Boolean = before != null
  def linkBefore(at: ChunkHandle): Unit = {
    before = at.before
    after = at
    at.before.after = this
    at.before = this
  }
  def unlink(): Unit = if (before != null) {
    before.after = after
    after.before = before
    before = null
    after = null
  }
}

private[engine] object ChunkHandle {
  def sentinel(): ChunkHandle = {
    val h = new ChunkHandle(null, null)
    h.before = h
    h.after = h
    h
  }
}

/**
 * A spill file: deleted once none of its blocks (chunks) is referenced any more. With a SparkEnv, each block
 * is compressed and encrypted as Spark's own spills are (spark.shuffle.spill.compress, spark.io.encryption.*).
 */
private[engine] final class SpillFile(budget: MemoryBudget, val file: File, blockId: BlockId, env: SparkEnv) {
  var liveBlocks: Int = 0
  var deleted: Boolean = false

  def wrap(out: OutputStream): OutputStream =
    if (env == null) out else env.serializerManager.wrapStream(blockId, out)
  def wrap(in: InputStream): InputStream =
    if (env == null) in else env.serializerManager.wrapStream(blockId, in)

  def releaseBlock(): Unit = {
    liveBlocks -= 1
    if (liveBlocks == 0 && !deleted) budget.deleteFile(this)
  }
}

/** A snapshot of a bag: its chunks then, with the dropped prefix of each and the row count of the last. */
private[engine] final class ChunkRun(
    numFields: Int, chunks: Array[Chunk], skipRows: Array[Int], skipBytes: Array[Int], lastRows: Int, total: Long)
  extends RowRun {
  private var remaining = total
  private var index = -1 // the chunk being read; chunks before it are released
  private var released = 0 // chunks(0 until released) are released
  private var page: Array[Byte] = _
  private var offset = 0
  private var left = 0 // rows left in the current chunk

  override def numRows: Long = total
  override def hasNext: Boolean = remaining > 0L

  override def next(): InternalRow = {
    if (remaining <= 0L) throw new NoSuchElementException("RowRun exhausted")
    while (left == 0) advance()
    if (offset > page.length - 4) throw corrupt()
    val at = Platform.BYTE_ARRAY_OFFSET + offset
    val length = Platform.getInt(page, at)
    if (length < 0 || length > page.length - offset - 4) throw corrupt()
    val row = new UnsafeRow(numFields)
    row.pointTo(page, at + 4, length)
    offset += 4 + length
    left -= 1
    remaining -= 1
    if (remaining == 0L) close()
    row
  }

  // Unsafe reads past a page would not fail cleanly: a bad length (a corrupt spill file) is checked first.
  private def corrupt() = new IllegalStateException(s"RowBag: corrupt row entry at byte $offset of a ${page.length}-byte page")

  private def advance(): Unit = {
    if (index >= 0) {
      RowBag.release(chunks(index))
      chunks(index) = null
      released = index + 1
    }
    index += 1
    val c = chunks(index)
    page = c.load()
    val end = if (index == chunks.length - 1) lastRows else c.rows
    if (skipBytes(index) >= 0) offset = skipBytes(index)
    else {
      offset = 0
      var i = 0
      while (i < skipRows(index)) { offset += 4 + Platform.getInt(page, Platform.BYTE_ARRAY_OFFSET + offset); i += 1 }
    }
    left = end - skipRows(index)
  }

  override def close(): Unit = {
    remaining = 0L
    page = null
    while (released < chunks.length) {
      val c = chunks(released)
      if (c != null) {
        RowBag.release(c)
        chunks(released) = null
      }
      released += 1
    }
  }
}

private final class CountingOutputStream(out: OutputStream) extends FilterOutputStream(out) {
  var count = 0L
  override def write(b: Int): Unit = { out.write(b); count += 1 }
  override def write(b: Array[Byte], off: Int, len: Int): Unit = { out.write(b, off, len); count += len }
}

/**
 * Lets a block's compression/encryption stream be closed (which writes the rest of its frame through `write`)
 * without closing or flushing the file: the file is flushed and closed once, after its last block.
 */
private final class UnclosableOutputStream(out: OutputStream) extends FilterOutputStream(out) {
  override def write(b: Array[Byte], off: Int, len: Int): Unit = out.write(b, off, len)
  override def flush(): Unit = ()
  override def close(): Unit = ()
}

/** At most `limit` bytes of `in` (one block of a spill file). */
private final class BoundedInputStream(in: InputStream, private var limit: Long) extends InputStream {
  override def read(): Int =
    if (limit <= 0L) -1 else { val b = in.read(); if (b >= 0) limit -= 1; b }
  override def read(b: Array[Byte], off: Int, len: Int): Int = {
    if (len == 0) return 0
    if (limit <= 0L) return -1
    val n = in.read(b, off, math.min(len.toLong, limit).toInt)
    if (n > 0) limit -= n
    n
  }
  override def available(): Int = math.min(in.available().toLong, limit).toInt
  override def close(): Unit = in.close()
}
