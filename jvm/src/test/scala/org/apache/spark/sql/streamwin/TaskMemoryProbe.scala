package org.apache.spark.sql.streamwin

import org.apache.spark.TaskContext

/** Tests' view of a task's execution memory (the task memory manager is Spark's own). */
object TaskMemoryProbe {
  /** Bytes of execution memory the current task's consumers hold now. */
  def heldByTask(): Long = TaskContext.get().taskMemoryManager().getMemoryConsumptionForThisTask
}
