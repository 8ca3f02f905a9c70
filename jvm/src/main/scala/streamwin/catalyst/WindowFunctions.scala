package streamwin.catalyst

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}

/**
 * One SQL function `sw_*`, declared by its family (under `streamwin.families`) and registered from
 * the list in `streamwin.api.functions`. build.sbt reads the names of these declarations from the
 * sources (`SqlWindowFunction("sw_…"`) into `BuildInfo.FunctionNamesText`, so keep the name a literal.
 *
 * @param usage   the usage line; `_FUNC_` stands for the name
 * @param example one SQL example
 * @param build   parses and validates the arguments (the function's name, the call's arguments) into
 *                a [[StreamWindow]]
 */
final case class SqlWindowFunction(name: String, usage: String, example: String)(
    build: (String, Seq[Expression]) => Expression) {

  /** What `SparkSessionExtensions.injectFunction` takes. */
  def registration: (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression) = {
    val info = new ExpressionInfo(classOf[StreamWindow].getName, null, name, usage, "",
      s"\n    > $example\n  ", "", "window_funcs", "", "", "")
    (FunctionIdentifier(name), info, args => build(name, args))
  }
}
