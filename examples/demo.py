"""streamwin demo: windows over a replay of sensor readings (examples/data/sensor_readings.csv).

Run it with `bin/demo` (which also builds everything), or on Spark 4.3 with the default line's jar:
    spark-submit --jars dist/streamwin.jar examples/demo.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import streamwin as sw

DATA = Path(__file__).resolve().parent / "data" / "sensor_readings.csv"


def main() -> None:
    builder = (SparkSession.builder.appName("streamwin-demo").master("local[2]")
               .config("spark.sql.session.timeZone", "UTC").config("spark.ui.showConsoleProgress", "false"))
    spark = sw.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    readings = (spark.read.option("header", True).schema("offset long, sensor string, ts timestamp, temp double")
                .csv(str(DATA)))
    print(f"{readings.count()} readings from {DATA.name}\n")

    print("Average temperature per sensor in 10-second tumbling windows (first rows):")
    (readings.groupBy("sensor", sw.tumbling("ts", "10 seconds"))
     .agg(F.round(F.avg("temp"), 2).alias("avg_temp"), F.count("*").alias("readings"))
     .orderBy("sensor", "window").show(6, truncate=False))

    print("Maximum over the last 30 seconds, every 10 seconds (hopping windows; pre-aggregated per slice):")
    (readings.groupBy("sensor", sw.hopping("ts", "30 seconds", "10 seconds"))
     .agg(F.max("temp").alias("max_temp")).orderBy("sensor", "window").show(6, truncate=False))

    print("Average over the last 30 seconds at every reading of s1 (per-event sliding windows, first rows):")
    (readings.where("sensor = 's1'").groupBy(sw.sliding("ts", "30 seconds"))
     .agg(F.round(F.avg("temp"), 2).alias("avg_temp"), F.count("*").alias("readings"))
     .orderBy("window").show(4, truncate=False))

    print("Sessions per sensor: readings at most 20 seconds apart, cut by a 40-second max duration (eKuiper rule):")
    (readings.groupBy("sensor", sw.session("ts", "20 seconds", max_duration="40 seconds"))
     .agg(F.count("*").alias("readings")).orderBy("sensor", "window").show(6, truncate=False))

    print("SPL timeInterval panes of 1 minute every 30 seconds, replayed in offset order ('update' = re-emitted for late rows):")
    (readings.groupBy("sensor", sw.interval("ts", "1 minute", creation_period="30 seconds", discard_age="1 minute",
                                            order_by="offset"))
     .agg(F.count("*").alias("readings")).orderBy("sensor", "window").show(6, truncate=False))

    print("Every 7 readings of a sensor, in arrival (offset) order; the incomplete tail is 'partial':")
    (readings.groupBy("sensor", sw.count(7, order_by="offset"))
     .agg(F.round(F.avg("temp"), 2).alias("avg_temp"), F.collect_list("temp").alias("temps"))
     .where("sensor = 's1'").orderBy("window").show(30, truncate=False))

    print("The same from SQL: sliding count windows of 3 readings (Quix sliding_count_window):")
    readings.createOrReplaceTempView("readings")
    spark.sql("""
        SELECT sensor, sw_count(3, 'step', 1, 'order_by', offset) AS window, round(avg(temp), 2) AS avg_temp
        FROM readings WHERE sensor = 's2'
        GROUP BY sensor, sw_count(3, 'step', 1, 'order_by', offset)
        ORDER BY window LIMIT 5""").show(truncate=False)

    print("SPL delta windows: a new window whenever s3's temperature rises more than 2.5 above the window's first reading:")
    (readings.where("sensor = 's3'").groupBy(sw.delta("temp", 2.5, order_by="offset"))
     .agg(F.count("*").alias("readings"), F.round(F.min("temp"), 2).alias("min"), F.round(F.max("temp"), 2).alias("max"))
     .orderBy("window").show(truncate=False))

    print("eKuiper COUNTWINDOW(4, 2) per sensor: every 2nd reading, the latest 4 (first rows):")
    (readings.groupBy("sensor", sw.count(4, step=2, align="end", order_by="offset"))
     .agg(F.collect_list("temp").alias("temps")).orderBy("sensor", "window").show(3, truncate=False))

    print("KX late-data passthrough: readings arrive (offset order) at 60 68 70, then 0 15 30, then 83 84 s;")
    print("the late ones come out as 'late' just before the next window closes, nothing is lost:")
    arrivals = spark.createDataFrame([("s1", i, s) for i, s in enumerate([60, 68, 70, 0, 15, 30, 83, 84])],
                                     "sensor string, offset long, second long").withColumn("ts", F.timestamp_seconds("second"))
    q = (arrivals.groupBy("sensor", sw.tumbling("ts", "10 seconds", order_by="offset", late="passthrough"))
         .agg(F.collect_list("second").alias("seconds")))
    q.show(truncate=False)  # in output order

    print("Row accounting of that query (every reading is windowed, late or skipped):")
    q.collect()  # the metrics are those of this DataFrame's own run (show() runs a limited plan)
    print(sw.window_metrics(q))

    streaming_demo(spark, readings)
    spark.stop()


def streaming_demo(spark: SparkSession, readings) -> None:
    """The same window columns on a stream: the readings arrive as 4 files, one per micro-batch, and
    Spark's state store (streamwin's stateful operator, on RocksDB) holds the open windows between micro-batches."""
    with tempfile.TemporaryDirectory(prefix="streamwin-demo-") as tmp:
        incoming = Path(tmp) / "incoming"
        incoming.mkdir()
        lines = DATA.read_text().splitlines()
        header, body = lines[0], lines[1:]
        for i in range(4):
            part = incoming / f"part-{i}.csv"
            part.write_text("\n".join([header] + body[i * len(body) // 4:(i + 1) * len(body) // 4]) + "\n")
            os.utime(part, (1_700_000_000 + i, 1_700_000_000 + i))
        stream = (spark.readStream.option("header", True).option("maxFilesPerTrigger", 1)
                  .schema("offset long, sensor string, ts timestamp, temp double").csv(str(incoming))
                  .withWatermark("ts", "20 seconds"))
        windows = (stream.groupBy("sensor", sw.tumbling("ts", "30 seconds"))
                   .agg(F.round(F.avg("temp"), 2).alias("avg_temp"), F.count("*").alias("readings")))
        query = (windows.writeStream.format("memory").queryName("demo_windows").outputMode("append")
                 .option("checkpointLocation", str(Path(tmp) / "checkpoint")).start())
        query.processAllAvailable()
        batches = query.lastProgress["batchId"] + 1
        query.stop()
        print(f"Structured Streaming: the readings as {batches} micro-batches; 30-second windows closed by each")
        print("sensor's progress or the watermark, emitted once in append mode (the last ones stay open):")
        streamed = spark.table("demo_windows")
        streamed.orderBy("sensor", "window").show(8, truncate=False)
        batch = (readings.groupBy("sensor", sw.tumbling("ts", "30 seconds"))
                 .agg(F.round(F.avg("temp"), 2).alias("avg_temp"), F.count("*").alias("readings")))
        same = streamed.exceptAll(batch).isEmpty()
        print(f"{streamed.count()} windows streamed; every one equals the batch result on the same readings: {same}")


if __name__ == "__main__":
    main()
