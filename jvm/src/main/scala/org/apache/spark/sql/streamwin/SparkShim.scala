package org.apache.spark.sql.streamwin

import org.apache.spark.sql.{internal, Column}
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

  /** `call(args...).alias(n)` with more arguments, for a call of a function whose name starts with `prefix`. */
  def appendArguments(column: Column, prefix: String, extra: Seq[Column]): Option[Column] = column.node match {
    case alias @ internal.Alias(call @ internal.UnresolvedFunction(name, args, _, _, _, _), _, _, _)
        if name.startsWith(prefix) =>
      Some(new Column(alias.copy(child = call.copy(arguments = args ++ extra.map(_.node)))))
    case _ => None
  }
}
