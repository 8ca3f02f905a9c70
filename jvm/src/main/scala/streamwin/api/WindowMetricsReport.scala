package streamwin.api

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper

import streamwin.execution.StreamWindowExec

/**
 * Row accounting of a query after it ran: the sum of each streamwin metric over every streamwin
 * operator of its executed plan (the same numbers the Spark UI shows).
 */
object WindowMetricsReport extends AdaptiveSparkPlanHelper {
  def of(df: DataFrame): java.util.Map[String, java.lang.Long] = {
    val plan = df match {
      case classic: org.apache.spark.sql.classic.Dataset[_] => classic.queryExecution.executedPlan
      case other => throw new IllegalArgumentException(
        s"window metrics are read from a classic (non-Connect) DataFrame, got ${other.getClass.getName}")
    }
    val sums = new java.util.TreeMap[String, java.lang.Long]()
    collect(plan) { case e: StreamWindowExec => e }.foreach { exec =>
      exec.metrics.foreach { case (name, metric) =>
        sums.put(name, sums.getOrDefault(name, 0L) + metric.value)
      }
    }
    sums
  }
}
