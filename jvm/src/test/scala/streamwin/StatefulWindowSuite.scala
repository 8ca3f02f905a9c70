package streamwin

import java.nio.file.Files
import java.sql.Timestamp

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions._
import org.apache.spark.sql.streaming.StreamingQuery
import org.apache.spark.sql.streamwin.StreamingInternals.{StateStoreWriter, StatefulOperatorStateInfo, StreamingQueryWrapper}
import org.scalatest.funsuite.AnyFunSuite

import streamwin.api.functions.tumbling
import streamwin.execution.{StatefulWindowExec, StreamingWindowHost}

/**
 * streamwin's own stateful operator takes its place among Spark's: Spark hands it state info from the
 * query's own counter (the seam of [[org.apache.spark.sql.streamwin.PlannedMicroBatch]]), its watermark
 * from Spark's propagation, and Spark's metadata, state reader and restart checks see it as one of
 * theirs, on both of Spark's state store providers. Runs on every supported Spark line.
 */
class StatefulWindowSuite extends AnyFunSuite {
  private val providers = Seq(
    "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider", StreamingWindowHost.RocksDbProvider)

  private def session(provider: String): SparkSession = SparkSession.builder().master("local[2]")
    .config("spark.sql.shuffle.partitions", "3").config("spark.ui.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC").config("spark.sql.streaming.stateStore.providerClass", provider)
    .getOrCreate()

  // Two keys; rows every second in event-time order, with a repeated row the deduplication drops.
  private val rows: Seq[(String, Long, Long)] =
    (1L to 60L).map(s => (if (s % 3 == 0) "b" else "a", s, s)) :+ (("a", 7L, 7L))

  /** Spark's deduplication, then 10-second sums, then those windowed again into 30-second ones (three stateful operators). */
  private def windows(df: DataFrame): DataFrame = {
    val tens = df.dropDuplicates("seq").groupBy(col("k"), tumbling(col("ts"), "10 seconds")).agg(sum("v").as("sv"))
    tens.select(col("k"), window_time(col("window")).as("t"), col("sv"))
      .groupBy(col("k"), tumbling(col("t"), "30 seconds")).agg(sum("sv").as("sv"), count(lit(1)).as("tens"))
  }

  // Spark 3.5 has no state-metadata or statestore reader (4.0 added them).
  private val stateReaders = !org.apache.spark.SPARK_VERSION.startsWith("3.")

  /** A stateful operator's id and name (protected members on Spark 3.5, public in the bytecode of every line). */
  private def idAndName(operator: StateStoreWriter): (Long, String) = {
    def call(name: String): AnyRef = operator.getClass.getMethod(name).invoke(operator)
    (call("getStateInfo").asInstanceOf[StatefulOperatorStateInfo].operatorId, call("shortName").asInstanceOf[String])
  }

  private def operators(query: StreamingQuery): Seq[StateStoreWriter] =
    query.asInstanceOf[StreamingQueryWrapper].streamingQuery.lastExecution.executedPlan.collect { case w: StateStoreWriter => w }

  for (provider <- providers) test(s"three stateful operators of one query, streamwin's among Spark's (${provider.split('.').last})") {
    val spark = session(provider)
    import spark.implicits._
    implicit val sqlContext: org.apache.spark.sql.SQLContext = spark.sqlContext
    val checkpoint = Files.createTempDirectory("streamwin-stateful").toString
    try {
      val input = TestStreams.MemoryStream[(String, Long, Long)]
      val stream = input.toDF().toDF("k", "s", "v").withColumn("seq", col("s"))
        .withColumn("ts", timestamp_seconds(col("s"))).withWatermark("ts", "5 seconds")
      val sink = Files.createTempDirectory("streamwin-stateful-out").toString
      def start(): StreamingQuery = windows(stream).writeStream.format("parquet").option("path", sink)
        .outputMode("append").option("checkpointLocation", checkpoint).start()

      // Half the rows, a stop, then the rest on the same checkpoint (and a far row that closes every window).
      var query = start()
      input.addData(rows.take(20): _*)
      query.processAllAvailable()
      input.addData(rows.slice(20, 35): _*)
      query.processAllAvailable()
      val ids = operators(query).map(idAndName)
      query.stop()
      query = start()
      input.addData(rows.drop(35) :+ (("z", 1000L, 0L)): _*)
      query.processAllAvailable()
      query.processAllAvailable()
      val writers = operators(query)
      query.stop()

      // One id each, the same after the restart; Spark's deduplication is one of them.
      assert(ids.map(_._1).distinct.size == 3 && ids.map(_._2).sorted == Seq("dedupe", "streamwinWindow", "streamwinWindow"), ids)
      assert(writers.map(idAndName).toSet == ids.toSet)
      // The watermark reached streamwin's operators through Spark's propagation.
      val ours = writers.collect { case w: StatefulWindowExec => w }
      assert(ours.size == 2 && ours.forall(_.stateInfo.exists(_.numPartitions == 3)))
      if (stateReaders) {
        val metadata = spark.read.format("state-metadata").load(checkpoint)
          .select("operatorId", "operatorName", "stateStoreName").as[(Long, String, String)].collect().toSet
        assert(metadata == ids.map { case (id, name) => (id, name, "default") }.toSet, metadata)
      }

      val expected = windows(rows.toDF("k", "s", "v").withColumn("seq", col("s")).withColumn("ts", timestamp_seconds(col("s"))))
        .select("k", "window.start", "sv", "tens").as[(String, Timestamp, Long, Long)].collect().sortBy(r => (r._1, r._2.getTime))
      val streamed = spark.read.parquet(sink).where(col("k") =!= "z")
        .select("k", "window.start", "sv", "tens").as[(String, Timestamp, Long, Long)].collect().sortBy(r => (r._1, r._2.getTime))
      assert(streamed.toSeq == expected.toSeq)
      // The state of streamwin's operators reads back as typed columns.
      if (stateReaders) {
        val first = ids.collect { case (id, "streamwinWindow") => id }.min
        val state = spark.read.format("statestore").option("operatorId", first).load(checkpoint)
        assert(state.schema.fieldNames.take(2).toSeq == Seq("key", "value"))
        assert(state.select("key.window_start", "value.window.end").schema.fieldNames.toSeq == Seq("window_start", "end"))
      }
    } finally {
      spark.streams.active.foreach(_.stop())
      spark.stop()
    }
  }
}
