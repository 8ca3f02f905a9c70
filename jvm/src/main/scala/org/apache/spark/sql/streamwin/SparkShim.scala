package org.apache.spark.sql.streamwin

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.ExpressionUtils

/**
 * The one place where streamwin reaches package-private Spark API: keep it thin. Columns holding a
 * Scala object (a user's split trigger) cannot go through a SQL function call, so they are built
 * from the expression directly.
 */
object SparkShim {
  def column(expression: Expression): Column = ExpressionUtils.column(expression)
  def expression(column: Column): Expression = ExpressionUtils.expression(column)
}
