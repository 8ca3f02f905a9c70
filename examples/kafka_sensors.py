"""Sensor readings from Kafka, windowed by streamwin, written to another Kafka topic and to parquet.

Each record of the input topic is one reading, its value JSON: ``{"sensor": "s1", "ts":
"2026-01-01T09:00:01Z", "temp": 20.5}``, its key the sensor (so each sensor's readings stay in one
partition, in order). Two streaming queries read the topic:

- ``sessions``: a session per sensor (readings at most 30 seconds apart), in Kafka offset order, with
  10 seconds of lateness; readings that arrive after their session closed come out as ``late`` groups.
- ``counts``: every 5 readings of a sensor, in offset order (count windows).

Each micro-batch's windows go to ``<output>/<query>/batch_id=<n>/`` as parquet (a micro-batch Spark
runs again after a failure overwrites its own folder: written once) and to the output topic, one JSON
record per window, keyed by sensor, with the query and micro-batch in headers (at least once: a
consumer drops a record whose ``streamwin.query``/``streamwin.batch`` headers and value it has seen).
docs/kafka.md explains the ordering and what happens on restart.

    spark-submit --jars dist/streamwin.jar --packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0 \\
      examples/kafka_sensors.py --bootstrap-servers localhost:9092 --input-topic readings \\
      --output-topic sensor-windows --output /data/sensor-windows --checkpoint /data/checkpoints
"""

from __future__ import annotations

import argparse
from typing import Callable, Optional, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

import streamwin as sw

#: The JSON value of an input record.
READING_SCHEMA = "sensor STRING, ts TIMESTAMP, temp DOUBLE"
SESSION_GAP = "30 seconds"
LATENESS = "10 seconds"
READINGS_PER_COUNT_WINDOW = 5
#: Each window's keys: the sensor, and the Kafka partition its readings are in. Offsets order only the
#: records of one partition; with the producer keying records by sensor, each sensor is in one
#: partition, so this is a window per sensor (docs/kafka.md, "Order").
KEYS = ("sensor", "partition")


def readings_from_kafka(records: DataFrame) -> DataFrame:
    """The readings of Kafka records (the Kafka source's rows, a stream or a batch): the JSON value's
    ``sensor``, ``ts`` and ``temp``, and the record's ``partition`` and ``offset``.

    A value that is not such JSON gives nulls: the windows below skip its row and count it
    (``rowsSkipped`` in ``sw.window_metrics``).

    Example::

        >>> from pyspark.sql import SparkSession
        >>> spark = SparkSession.builder.getOrCreate()
        >>> records = spark.createDataFrame(
        ...     [(b"s1", b'{"sensor": "s1", "ts": "2026-01-01T09:00:01Z", "temp": 20.5}', 0, 7)],
        ...     "key binary, value binary, partition int, offset long")
        >>> readings_from_kafka(records).select("sensor", "temp", "partition", "offset").first()
        Row(sensor='s1', temp=20.5, partition=0, offset=7)
    """
    reading = F.from_json(F.col("value").cast("string"), READING_SCHEMA)
    return records.select(reading.alias("reading"), "partition", "offset").select("reading.*", "partition", "offset")


def sensor_sessions(readings: DataFrame) -> DataFrame:
    """A session per sensor: readings at most ``SESSION_GAP`` apart, replayed in offset order; a
    session closes when the sensor's readings pass its end by ``LATENESS``, and readings for a closed
    session come out as a group of ``kind = "late"``.

    Example::

        >>> from pyspark.sql import SparkSession
        >>> spark = SparkSession.builder.getOrCreate()
        >>> readings = spark.createDataFrame(
        ...     [("s1", "2026-01-01 09:00:00", 20.0, 0, 0), ("s1", "2026-01-01 09:00:20", 21.0, 0, 1),
        ...      ("s1", "2026-01-01 09:02:00", 22.0, 0, 2), ("s1", "2026-01-01 09:00:10", 19.0, 0, 3)],
        ...     "sensor string, ts string, temp double, partition int, offset long",
        ... ).withColumn("ts", F.to_timestamp("ts"))
        >>> [(r.window.kind, r.readings) for r in sensor_sessions(readings).orderBy("first_offset").collect()]
        [('final', 2), ('final', 1), ('late', 1)]
    """
    session = sw.session("ts", SESSION_GAP, order_by="offset", lateness=LATENESS, late="passthrough")
    return readings.groupBy(*KEYS, session).agg(*_summary(), F.min("offset").alias("first_offset"),
                                                F.max("offset").alias("last_offset"))


def sensor_counts(readings: DataFrame) -> DataFrame:
    """Every ``READINGS_PER_COUNT_WINDOW`` readings of a sensor, in offset order (``window.start`` and
    ``window.end`` are the first and last reading's offsets).

    Example::

        >>> from pyspark.sql import SparkSession
        >>> spark = SparkSession.builder.getOrCreate()
        >>> readings = spark.range(7).selectExpr(
        ...     "'s1' AS sensor", "timestamp_seconds(id) AS ts", "20.0 + id AS temp", "0 AS partition", "id AS offset")
        >>> [(r.window.start, r.window.end, r.window.kind, r.readings) for r in
        ...  sensor_counts(readings).orderBy("window.start").collect()]
        [(0, 4, 'final', 5), (5, 6, 'partial', 2)]
    """
    # A record that is not a reading (no ts) gets no order: streamwin skips it and counts it, as sessions
    # skip a row without a time.
    window = sw.count(READINGS_PER_COUNT_WINDOW, order_by=F.when(F.col("ts").isNotNull(), F.col("offset")))
    return readings.groupBy(*KEYS, window).agg(*_summary(), F.min("ts").alias("first_ts"),
                                               F.max("ts").alias("last_ts"))


def _summary() -> list[Column]:
    return [F.count("*").alias("readings"), F.avg("temp").alias("avg_temp"),
            F.min("temp").alias("min_temp"), F.max("temp").alias("max_temp")]


#: The windows each query writes, by query name.
QUERIES: dict[str, Callable[[DataFrame], DataFrame]] = {"sessions": sensor_sessions, "counts": sensor_counts}


def kafka_source(spark: SparkSession, bootstrap_servers: str, topic: str, *, stream: bool = True,
                 max_offsets_per_trigger: Optional[int] = None) -> DataFrame:
    """The records of a topic, from its earliest offsets: a stream, or (``stream=False``) a batch of what
    the topic holds now, on which the same windows give the result a stream reaches.

    Example::

        >>> from pyspark.sql import SparkSession
        >>> spark = SparkSession.builder.getOrCreate()
        >>> records = kafka_source(spark, "localhost:9092", "readings", stream=False)   # doctest: +SKIP
        >>> sensor_sessions(readings_from_kafka(records)).show()                        # doctest: +SKIP
    """
    reader = spark.readStream if stream else spark.read
    reader = (reader.format("kafka").option("kafka.bootstrap.servers", bootstrap_servers)
              .option("subscribe", topic).option("startingOffsets", "earliest"))
    if stream and max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", max_offsets_per_trigger)
    return reader.load()


def _writer(name: str, bootstrap_servers: str, output_topic: str, output: str) -> Callable[[DataFrame, int], None]:
    """What each micro-batch of a query does with its windows: parquet, then the output topic."""

    def write(windows: DataFrame, batch_id: int) -> None:
        windows.persist()
        try:
            # Overwriting the micro-batch's own folder makes a micro-batch run again (after a failure,
            # with the same offsets and state) replace what its first run wrote.
            windows.write.mode("overwrite").parquet(f"{output}/{name}/batch_id={batch_id}")
            headers = F.array(
                F.struct(F.lit("streamwin.query").alias("key"), F.lit(name).cast("binary").alias("value")),
                F.struct(F.lit("streamwin.batch").alias("key"), F.lit(str(batch_id)).cast("binary").alias("value")))
            (windows.select(F.col("sensor").alias("key"), F.to_json(F.struct("*")).alias("value"),
                            headers.alias("headers"))
             .write.format("kafka").option("kafka.bootstrap.servers", bootstrap_servers)
             .option("topic", output_topic).save())
        finally:
            windows.unpersist()

    return write


def start_queries(spark: SparkSession, bootstrap_servers: str, input_topic: str, output_topic: str, output: str,
                  checkpoint: str, *, available_now: bool = False, trigger_interval: str = "10 seconds",
                  max_offsets_per_trigger: Optional[int] = None) -> list[StreamingQuery]:
    """Start the ``sessions`` and ``counts`` queries: records of ``input_topic`` in, windows out to
    ``output_topic`` and to ``<output>/<query>/batch_id=<n>/`` (parquet). Each query keeps its offsets
    and its windows' state in ``<checkpoint>/<query>``: started again with the same checkpoint, it goes
    on where it stopped. ``available_now`` processes what the topic holds, then stops.

    Example::

        >>> from pyspark.sql import SparkSession
        >>> spark = SparkSession.builder.getOrCreate()
        >>> queries = start_queries(spark, "localhost:9092", "readings", "sensor-windows",   # doctest: +SKIP
        ...                         "/data/sensor-windows", "/data/checkpoints")
        >>> spark.streams.awaitAnyTermination()                                            # doctest: +SKIP
    """
    readings = readings_from_kafka(kafka_source(spark, bootstrap_servers, input_topic,
                                                max_offsets_per_trigger=max_offsets_per_trigger))
    queries = []
    for name, windows in QUERIES.items():
        writer = (windows(readings).writeStream.queryName(f"kafka_sensors_{name}")
                  .foreachBatch(_writer(name, bootstrap_servers, output_topic, output))
                  .option("checkpointLocation", f"{checkpoint}/{name}").outputMode("append"))
        writer = writer.trigger(availableNow=True) if available_now else writer.trigger(processingTime=trigger_interval)
        queries.append(writer.start())
    return queries


def parse_arguments(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line of the script (``--help`` lists it).

    Example::

        >>> args = parse_arguments(["--bootstrap-servers", "localhost:9092", "--output", "/tmp/out",
        ...                         "--checkpoint", "/tmp/checkpoints", "--available-now"])
        >>> args.input_topic, args.output_topic, args.available_now
        ('readings', 'sensor-windows', True)
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap-servers", required=True, help="Kafka's bootstrap servers, host:port[,...]")
    parser.add_argument("--input-topic", default="readings", help="the readings' topic (default: %(default)s)")
    parser.add_argument("--output-topic", default="sensor-windows", help="the windows' topic (default: %(default)s)")
    parser.add_argument("--output", required=True, help="the parquet folder (a path or a Hadoop URI)")
    parser.add_argument("--checkpoint", required=True, help="the checkpoint folder of the queries")
    parser.add_argument("--trigger-interval", default="10 seconds", help="between micro-batches (default: %(default)s)")
    parser.add_argument("--max-offsets-per-trigger", type=int, help="records per micro-batch at most")
    parser.add_argument("--available-now", action="store_true",
                        help="process what the topic holds now, then stop (a catch-up run)")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Run the queries until they stop (``--available-now``) or one fails."""
    args = parse_arguments(argv)
    # sw.configure adds streamwin's jar to those of spark-submit's --jars and --packages (the connector),
    # and selects the RocksDB state store, which keeps the windows' state off the JVM heap.
    spark = sw.configure(SparkSession.builder.appName("streamwin-kafka-sensors")
                         .config("spark.sql.session.timeZone", "UTC")).getOrCreate()
    queries = start_queries(spark, args.bootstrap_servers, args.input_topic, args.output_topic, args.output,
                            args.checkpoint, available_now=args.available_now,
                            trigger_interval=args.trigger_interval,
                            max_offsets_per_trigger=args.max_offsets_per_trigger)
    if args.available_now:
        for query in queries:
            query.awaitTermination()
    else:
        spark.streams.awaitAnyTermination()   # they run until one fails (or the process is stopped)
    for query in queries:
        metrics = sw.window_metrics(query)
        print(f"{query.name}: {metrics['rowsWindowed']} readings windowed, {metrics['lateRowsPassedThrough']} late "
              f"passed through, {metrics['rowsSkipped']} skipped (not a reading)")


if __name__ == "__main__":
    main()
