package org.apache.spark.sql.streamwin

import org.apache.spark.SparkContext

/** Tests read listener events only after Spark's listener bus has delivered them (an internal API). */
object ListenerEvents {
  def delivered(sc: SparkContext): Unit = sc.listenerBus.waitUntilEmpty()
}
