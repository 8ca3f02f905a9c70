package streamwin.api

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper

import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.streaming.StreamingQuery
import org.apache.spark.sql.streamwin.SparkShim
import org.apache.spark.sql.streamwin.StreamingInternals.{StreamExecution, StreamingQueryWrapper}

import streamwin.execution.{StatefulWindowExec, StreamWindowOperator}

/**
 * Row accounting of a query after it ran: the sum of each streamwin metric over every streamwin
 * operator of its executed plan (the same numbers the Spark UI shows).
 */
object WindowMetricsReport extends AdaptiveSparkPlanHelper {
  def of(df: DataFrame): java.util.Map[String, java.lang.Long] = {
    val plan = SparkShim.executedPlan(df).getOrElse(throw new IllegalArgumentException(
      s"window metrics are read from a classic (non-Connect) DataFrame, got ${df.getClass.getName}"))
    sum(collect(plan) { case e: StreamWindowOperator => e.metrics })
  }

  /**
   * Row accounting of a streaming query: the sums over the micro-batches it ran since it (re)started,
   * of every streamwin window it hosts (no `peakBufferedRows`).
   */
  def ofQuery(query: StreamingQuery): java.util.Map[String, java.lang.Long] = {
    val execution = query match {
      case wrapper: StreamingQueryWrapper => Option(wrapper.streamingQuery.lastExecution)
      case execution: StreamExecution => Option(execution.lastExecution)
      case other => throw new IllegalArgumentException(
        s"window metrics are read from a classic (non-Connect) streaming query, got ${other.getClass.getName}")
    }
    sum(execution.toSeq.flatMap(e => collect(e.executedPlan) {
      case s: StatefulWindowExec => s.streamMetrics
    }))
  }

  private def sum(metrics: Seq[Map[String, SQLMetric]]): java.util.Map[String, java.lang.Long] = {
    val sums = new java.util.TreeMap[String, java.lang.Long]()
    metrics.foreach(_.foreach { case (name, metric) => sums.put(name, sums.getOrDefault(name, 0L) + metric.value) })
    sums
  }
}
