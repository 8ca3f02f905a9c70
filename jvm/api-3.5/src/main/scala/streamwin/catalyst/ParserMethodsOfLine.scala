package streamwin.catalyst

import org.apache.spark.sql.catalyst.parser.ParserInterface

/** Spark 3.5's parser has no methods beyond those of every line. */
trait ParserMethodsOfLine extends ParserInterface {
  protected def delegate: ParserInterface
}
