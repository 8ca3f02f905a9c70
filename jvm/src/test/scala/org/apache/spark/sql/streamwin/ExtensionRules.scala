package org.apache.spark.sql.streamwin

import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.execution.SparkStrategy

/** What a session built from `extensions` would plan with (an internal API). */
object ExtensionRules {
  def plannerStrategies(extensions: SparkSessionExtensions, session: SparkSession): Seq[SparkStrategy] =
    extensions.buildPlannerStrategies(session.asInstanceOf[SparkShim.ClassicSession])
}
