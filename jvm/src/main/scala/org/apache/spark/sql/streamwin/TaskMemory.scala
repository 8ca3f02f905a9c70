package org.apache.spark.sql.streamwin

import org.apache.spark.TaskContext
import org.apache.spark.memory.{MemoryConsumer, MemoryMode}

/**
 * A consumer of a task's execution memory, as Spark's sorters and aggregations are: what it holds is
 * charged to the task's memory manager (`spark.memory.*` sizes it), which asks it to spill when any
 * consumer of the task needs memory the executor does not have.
 */
abstract class TaskMemoryUser(task: TaskContext)
    extends MemoryConsumer(task.taskMemoryManager(), MemoryMode.ON_HEAP) {
  // The task's thread: only it uses the owner's memory (a spill asked from another thread is refused).
  private val owner = Thread.currentThread()

  /** Writes out what the owner holds in memory, freeing it through [[release]]. */
  protected def spillAll(): Unit

  /** Asks for `bytes` more execution memory; returns what was granted (less when the executor is short). */
  def reserve(bytes: Long): Long = if (bytes <= 0L) 0L else acquireMemory(bytes)

  /** Gives `bytes` of execution memory back. */
  def release(bytes: Long): Unit = if (bytes > 0L) freeMemory(math.min(bytes, getUsed))

  override def spill(size: Long, trigger: MemoryConsumer): Long = {
    if (Thread.currentThread() ne owner) return 0L
    val before = getUsed
    spillAll()
    before - getUsed
  }
}
