package streamwin.catalyst

import org.apache.spark.sql.catalyst.parser.ParserInterface

/** Spark 4.0's parser interface: nothing beyond the methods every line has. */
class StreamwinParser(sparkParser: ParserInterface) extends DelegatingParser(sparkParser)
