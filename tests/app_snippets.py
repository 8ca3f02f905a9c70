"""Code shared by the applications that tests run in their own Python process (Spark Connect, the
installed wheel): those processes cannot import the test modules, so the code travels as text."""

#: Runs streamwin's tumbling window on a stream of three JSON files (one per micro-batch, event times
#: 1 4 | 12 15 | 31 s of key "a") into a memory table, and leaves its rows, ordered by window, in
#: ``streamed``. Needs ``spark``, ``F``, ``sw``, ``json`` and ``os`` in scope.
TUMBLING_STREAM = """
os.makedirs("incoming")
for i, seconds in enumerate([[1, 4], [12, 15], [31]]):
    with open(f"incoming/part-{i}.json", "w") as f:
        f.write("".join(json.dumps({"k": "a", "s": s}) + "\\n" for s in seconds))
    os.utime(f"incoming/part-{i}.json", (1_000_000 + i, 1_000_000 + i))
stream = (spark.readStream.schema("k string, s long").option("maxFilesPerTrigger", 1).json("incoming")
          .withColumn("ts", F.timestamp_seconds("s")))
query = (stream.groupBy("k", sw.tumbling("ts", "10 seconds")).agg(F.sum("s").alias("s"))
         .writeStream.format("memory").queryName("tumbling_stream").outputMode("append")
         .option("checkpointLocation", "checkpoint").start())
query.processAllAvailable()
query.stop()
streamed = spark.table("tumbling_stream").orderBy("window").collect()
"""

#: What TUMBLING_STREAM gives: windows [0, 10) and [10, 20) close when the last micro-batch moves the
#: key's progress to 31 s; [30, 40) waits for a later row of the key.
TUMBLING_STREAM_RESULT = [[0, "final", 5], [10, "final", 27]]
