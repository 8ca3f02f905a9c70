package streamwin.catalyst

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.types.StructType

/** The parser methods Spark 4 has and 3.5 has not, passed to Spark's parser. */
trait ParserMethodsOfLine extends ParserInterface {
  protected def delegate: ParserInterface
  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
}
