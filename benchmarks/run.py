"""streamwin against the best Spark-native formulation of the same result, on the same data.

    .venv/bin/python benchmarks/run.py                 # 10M rows over 1000 keys (the reference run)
    .venv/bin/python benchmarks/run.py --rows 2000000  # quicker
    .venv/bin/python benchmarks/run.py --only hopping,split  # cases whose name contains "hopping" or "split"

Data: ``rows`` readings over 1000 keys (sensors), 10 readings per key per second of event time
(row i: key i % 1000, event time i * 100 us, value i % 97, sequence i). It is generated once and
cached, so both sides read the same in-memory rows. Each query runs to completion into Spark's
``noop`` sink; each side first runs ``--warmup`` times untimed (its own query: a baseline shared by
several cases would otherwise run warm against a streamwin query compiled moments before), then
``--repeat`` times, and the best time counts. Runs on local[2].
Prints rows/s (input rows per second) for both and the ratio spark_time / streamwin_time (above 1:
streamwin is faster), with the goal the issue sets, and writes the table as JSON to
benchmarks/results/latest.json. The run ends with the streaming cases (``--stream-rows`` of the same
rows as ``--stream-batches`` parquet files, one per micro-batch): streamwin's windows on a stream,
against Spark's own streaming ``window()`` and ``session_window()`` where Spark has them, and as a share
of the floor any operator on Spark's state store pays, Spark's stateful ``groupBy("k")`` on the same
rows, measured in the same run (``--changelog`` sets RocksDB's changelog checkpointing).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

import streamwin as sw


def timed_run(run: Callable[[], None], repeat: int) -> list[float]:
    """The seconds of each of ``repeat`` calls of ``run`` (the best counts; the others measure the spread)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def timed(build: Callable[[], DataFrame], repeat: int) -> list[float]:
    """The seconds of each of ``repeat`` runs of the query into the noop sink."""
    return timed_run(lambda: build().write.format("noop").mode("overwrite").save(), repeat)


def spread(times: list[float]) -> float:
    """How far the slowest timed run of one side is from its best: (max - min) / min."""
    return (max(times) - min(times)) / min(times)


# Cases whose baseline is not a Spark query on Spark's engine alone, named so on the table and the chart.
BASELINES = {"delta 40 on value": "a Python pass over groupByKey"}


def machine(spark: SparkSession) -> dict:
    """What the run ran on: the numbers are only comparable as ratios within one run, but a reader needs
    the machine to read the rows/s."""
    memory_kib = next((int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal:")), 0) if Path("/proc/meminfo").exists() else 0
    jvm = spark.sparkContext._jvm.java.lang.System  # type: ignore[union-attr]
    return {"cores": os.cpu_count(), "memory_gib": round(memory_kib / 2**20, 1),
            "java": f"{jvm.getProperty('java.vm.name')} {jvm.getProperty('java.version')}",
            "spark": spark.version, "python": sys.version.split()[0], "master": spark.sparkContext.master,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def cases(df: DataFrame) -> list[tuple[str, Callable[[], DataFrame], Callable[[], DataFrame], str]]:
    aggs = [F.sum("v").alias("s"), F.count("*").alias("n")]

    def time_case(name: str, ours, theirs, goal: str):
        return (name, lambda: df.groupBy("k", ours()).agg(*aggs), lambda: df.groupBy("k", theirs()).agg(*aggs), goal)

    rows_frame = Window.partitionBy("k").orderBy("seq").rowsBetween(0, 99)
    trailing = Window.partitionBy("k").orderBy("seq").rowsBetween(-99, 0)
    by_key = Window.partitionBy("k").orderBy("seq")
    so_far = by_key.rowsBetween(Window.unboundedPreceding, 0)
    marker = F.col("v") == 0
    per_window_so_far = Window.partitionBy("k", "w").orderBy("seq").rowsBetween(Window.unboundedPreceding, 0)

    def range_frame(seconds: int):
        # RANGE frame over event time in microseconds: [t - seconds, t], both ends inclusive.
        return Window.partitionBy("k").orderBy(F.unix_micros("ts")).rangeBetween(-seconds * 1_000_000, 0)
  # about every 97th row of a key starts a new window
    return [
        time_case("tumbling 10s", lambda: sw.tumbling("ts", "10 seconds"), lambda: F.window("ts", "10 seconds"),
                  ">= 1x"),
        time_case("hopping 10s/1s", lambda: sw.hopping("ts", "10 seconds", "1 second"),
                  lambda: F.window("ts", "10 seconds", "1 second"), ""),
        time_case("hopping 60s/1s", lambda: sw.hopping("ts", "60 seconds", "1 second"),
                  lambda: F.window("ts", "60 seconds", "1 second"), ">= 20x, <= 2x own tumbling"),
        # Flink's CUMULATE: an hourly total output every minute. Spark-native: per-minute windows, then a
        # running sum per (key, hour) ordered by the minute (every minute of a key holds rows here, so
        # the windows are the same).
        ("cumulate 1h/1min",
         lambda: df.groupBy("k", sw.cumulate("ts", "1 hour", "1 minute")).agg(*aggs),
         lambda: df.groupBy("k", F.window("ts", "1 minute").alias("w")).agg(F.sum("v").alias("s"), F.count("*").alias("n"))
         .withColumn("hour", F.window("w.start", "1 hour").start)
         .select("k", "hour", F.col("w.end").alias("end"),
                 F.sum("s").over(Window.partitionBy("k", "hour").orderBy("w.end").rowsBetween(Window.unboundedPreceding, 0))
                 .alias("s"),
                 F.sum("n").over(Window.partitionBy("k", "hour").orderBy("w.end").rowsBetween(Window.unboundedPreceding, 0))
                 .alias("n")),
         "faster than the running sum"),
        # An arrival order with lateness: the data arrives in event-time order, so nothing is late and
        # the result equals Spark's window(); streamwin aggregates as window() does and proves the order
        # from the map tasks' summaries (a key that arrived out of order would be replayed).
        time_case("tumbling 10s, order_by + lateness 2s",
                  lambda: sw.tumbling("ts", "10 seconds", order_by="seq", lateness="2 seconds"),
                  lambda: F.window("ts", "10 seconds"), ">= 1x"),
        # Update emission: one output row per input row (the window's aggregate so far) plus the finals;
        # Spark-native: a running frame per (key, window) ordered by arrival.
        ("tumbling 10s, emit update",
         lambda: df.groupBy("k", sw.tumbling("ts", "10 seconds", emit="update")).agg(*aggs),
         lambda: df.withColumn("w", F.window("ts", "10 seconds")).select(
             "k", "w", F.sum("v").over(per_window_so_far).alias("s"), F.count("*").over(per_window_so_far).alias("n")),
         ""),
        time_case("session gap 5s, order_by", lambda: sw.session("ts", "5 seconds", order_by="seq"),
                  lambda: F.session_window("ts", "5 seconds"), ""),
        time_case("session gap 5s", lambda: sw.session("ts", "5 seconds"), lambda: F.session_window("ts", "5 seconds"),
                  ">= 3x"),
        # One window per event: the RANGE frame gives the same value per row (timestamps are distinct per key).
        ("sliding 60s (max)",
         lambda: df.groupBy("k", sw.sliding("ts", "60 seconds")).agg(F.max("v").alias("m")),
         lambda: df.select("k", "ts", F.max("v").over(range_frame(60)).alias("m")),
         ">= 8x"),
        ("sliding 10s (max)",
         lambda: df.groupBy("k", sw.sliding("ts", "10 seconds")).agg(F.max("v").alias("m")),
         lambda: df.select("k", "ts", F.max("v").over(range_frame(10)).alias("m")),
         "flat in window length"),
        ("count tumbling 100",
         lambda: df.groupBy("k", sw.count(100, order_by="seq")).agg(*aggs),
         lambda: df.withColumn("bucket", F.floor((F.row_number().over(Window.partitionBy("k").orderBy("seq")) - 1) / 100))
         .groupBy("k", "bucket").agg(*aggs, F.min("seq").alias("start"), F.max("seq").alias("end")),
         ""),
        ("count sliding 100 (sum, max)",
         lambda: df.groupBy("k", sw.count(100, step=1, order_by="seq")).agg(F.sum("v").alias("s"), F.max("v").alias("m")),
         lambda: df.select("k", "seq", F.sum("v").over(rows_frame).alias("s"), F.max("v").over(rows_frame).alias("m")),
         ">= 3x"),
        ("count end-aligned 100/10 (sum, max)",
         lambda: df.groupBy("k", sw.count(100, step=10, align="end", order_by="seq")).agg(F.sum("v").alias("s"), F.max("v").alias("m")),
         # eKuiper COUNTWINDOW(100, 10): the trailing 100-row frame, kept at every 10th row from the 100th.
         lambda: df.select("k", "seq", F.row_number().over(by_key).alias("rn"), F.sum("v").over(trailing).alias("s"),
                           F.max("v").over(trailing).alias("m")).where("rn >= 100 AND rn % 10 = 0"),
         ">= 3x"),
        ("split on a predicate",
         lambda: df.groupBy("k", sw.split(marker, order_by="seq")).agg(*aggs),
         # Window id = running count of split rows, then a groupBy per (key, window id).
         lambda: df.withColumn("wid", F.sum(marker.cast("int")).over(so_far)).groupBy("k", "wid")
         .agg(*aggs, F.min("seq").alias("start"), F.max("seq").alias("end")),
         ">= 3x"),
        ("delta 40 on value",
         lambda: df.groupBy("k", sw.delta("v", 40, order_by="seq")).agg(*aggs),
         # A delta window depends on its own oldest row, which no window function can express: the
         # best Spark-native formulation is a per-key pass in Python over the grouped rows.
         lambda: df.select("k", "seq", "v").rdd.map(lambda r: (r[0], (r[1], r[2]))).groupByKey()
         .flatMap(_delta_windows_in_python).toDF("k string, start long, end long, s long, n long"),
         ">= 3x"),
    ]


def _delta_windows_in_python(item):
    key, members = item
    out, first, oldest, total, count, last = [], None, None, 0, 0, None
    for seq, v in sorted(members):
        if count and v - oldest > 40:
            out.append((str(key), first, last, total, count))
            count, total = 0, 0
        if not count:
            first, oldest = seq, v
        total, count, last = total + v, count + 1, seq
    if count:
        out.append((str(key), first, last, total, count))
    return out


# Per-batch durations (ms) of the last streaming run of each case: (first micro-batch, last one).
BATCH_TIMES: dict[str, tuple[int, int]] = {}

CHANGELOG = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
FLOOR = "floor: stateful groupBy(k)"
ROW_FLOOR = "floor: every row shuffled by key"


def streaming_cases(spark: SparkSession, df: DataFrame, rows: int, batches: int, folder: Path):
    """The same rows as a stream: ``batches`` parquet files read one per micro-batch, to completion
    (availableNow) into the noop sink, with a 10 s watermark, on the RocksDB state store. Each case is
    (name, streamwin's run, Spark's own equivalent or None, goal as a share of the floor or None, goal text).
    The floors: Spark reading and dropping the rows (no state), Spark's stateful groupBy("k") in update
    mode on the same rows, what any operator on Spark's state store pays, and Spark shuffling every row by
    key (no state), what a window fed rows in arrival order pays besides its state."""
    shutil.rmtree(folder, ignore_errors=True)
    # A stream arrives in time order: file i holds the i-th run of `seq` (and so of event time), and the
    # files' modification times follow that order, which is the order the file source reads them in.
    df.limit(rows).repartitionByRange(batches, "seq").sortWithinPartitions("seq").write.parquet(str(folder))
    files = sorted(folder.glob("part-*.parquet"))
    for i, file in enumerate(files):
        os.utime(file, (1_700_000_000 + i, 1_700_000_000 + i))
    aggs = [F.sum("v").alias("s"), F.count("*").alias("n")]

    def stream() -> DataFrame:
        return (spark.readStream.schema(df.schema).option("maxFilesPerTrigger", 1).parquet(str(folder))
                .withWatermark("ts", "10 seconds"))

    def run(name: str, build: Callable[[DataFrame], DataFrame], mode: str = "append") -> Callable[[], None]:
        def go() -> None:
            checkpoint = folder.parent / ("checkpoint-" + folder.name)
            shutil.rmtree(checkpoint, ignore_errors=True)
            query = (build(stream()).writeStream.format("noop").outputMode(mode)
                     .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
            query.awaitTermination()
            # Micro-batches that read a file (the last ones may only move the watermark).
            durations = [p["durationMs"].get("triggerExecution", 0) for p in query.recentProgress
                         if p.get("numInputRows", 0) > 0]
            if durations:
                BATCH_TIMES[name] = (durations[0], durations[-1])
        return go

    def grouped(window: Callable[[], object], *agg) -> Callable[[DataFrame], DataFrame]:
        return lambda s: s.groupBy("k", window()).agg(*(agg or aggs))

    marker = F.col("v") == 0
    return [
        ("floor: stateless read", run("floor: stateless read", lambda s: s.select("k", "v")), None, None,
         "Spark reading and dropping the rows"),
        (FLOOR, run(FLOOR, lambda s: s.groupBy("k").agg(*aggs), "update"), None, None,
         "Spark's stateful machinery without windows"),
        # What a window fed rows in arrival order pays at least, state aside: every row (all its columns,
        # which the window's state layout keeps) shuffled to its key's task. Spark's stateful floor above
        # shuffles a partial aggregate per key and task instead.
        (ROW_FLOOR, run(ROW_FLOOR, lambda s: s.repartition("k")), None, None,
         "Spark shuffling every row by key, no state"),
        ("stream tumbling 10s", run("stream tumbling 10s", grouped(lambda: sw.tumbling("ts", "10 seconds"))),
         run("spark window 10s", grouped(lambda: F.window("ts", "10 seconds"))), 0.9, ">= 1x window()"),
        ("stream hopping 60s/1s", run("stream hopping 60s/1s", grouped(lambda: sw.hopping("ts", "60 seconds", "1 second"))),
         run("spark window 60s/1s", grouped(lambda: F.window("ts", "60 seconds", "1 second"))), 0.9, ">= 1x window()"),
        # Spark's own operator on the state layout hopping 60s/1s keeps (item 2 of issue 35: a state row
        # per open slice): a state row per key and 1-s window, put and removed as often as hopping's slices.
        ("stream hopping's slice floor: window 1s", run("stream hopping's slice floor: window 1s",
                                                       grouped(lambda: F.window("ts", "1 second"))), None, None,
         "Spark's window() writing a state row per 1-s slice"),
        ("stream cumulate 60s/10s", run("stream cumulate 60s/10s",
                                        grouped(lambda: sw.cumulate("ts", "60 seconds", "10 seconds"))), None, 0.9, ""),
        ("stream session 5s", run("stream session 5s", grouped(lambda: sw.session("ts", "5 seconds"))),
         run("spark session_window 5s", grouped(lambda: F.session_window("ts", "5 seconds"))), 0.9,
         ">= 1x session_window()"),
        ("stream count 100", run("stream count 100", grouped(lambda: sw.count(100, order_by="seq"))), None, 0.9, ""),
        ("stream sliding 60s", run("stream sliding 60s", grouped(lambda: sw.sliding("ts", "60 seconds"),
                                                                  F.max("v").alias("m"))), None, 0.6, ""),
        ("stream count sliding 1000", run("stream count sliding 1000", grouped(
            lambda: sw.count(1000, step=1, order_by="seq"), F.max("v").alias("m"))), None, 0.6, ""),
        ("stream split", run("stream split", grouped(lambda: sw.split(marker, order_by="seq"))), None, 0.6, ""),
        ("stream delta 40", run("stream delta 40", grouped(lambda: sw.delta("v", 40, order_by="seq"))), None, 0.6, ""),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed runs of both sides of every case before its timed runs")
    parser.add_argument("--stream-rows", type=int, default=2_000_000, help="rows of the streaming cases")
    parser.add_argument("--stream-batches", type=int, default=8, help="micro-batches of the streaming cases")
    parser.add_argument("--changelog", choices=["off", "on", "both"], default="off",
                        help="RocksDB changelog checkpointing in the streaming cases (both: the whole section twice)")
    parser.add_argument("--only", default="", help="run only the cases whose name contains one of these comma-separated texts")
    parser.add_argument("--own-only", default="",
                        help="streaming cases whose name contains one of these comma-separated texts run streamwin's "
                             "side and the floors only (Spark's hopping window() takes about half an hour at 10M rows)")
    parser.add_argument("--no-save", action="store_true",
                        help="do not write benchmarks/results/latest.json (bin/demo's short run keeps the reference table)")
    parser.add_argument("--chart", type=Path, default=None,
                        help="also draw the table as a PNG chart there (saved runs also write benchmarks/results/latest.png)")
    args = parser.parse_args()

    builder = (SparkSession.builder.master("local[2]").appName("streamwin-benchmarks")
               .config("spark.driver.memory", "12g").config("spark.sql.shuffle.partitions", "8")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC"))
    spark = sw.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.range(args.rows, numPartitions=8).select(
        (F.col("id") % args.keys).alias("k"),
        F.timestamp_micros(F.col("id") * 100).alias("ts"),
        (F.col("id") % 97).alias("v"),
        F.col("id").alias("seq"),
    ).cache()
    df.count()

    results = []
    host = machine(spark)
    print(f"{args.rows:,} rows, {args.keys} keys, local[2], best of {args.repeat}; {host['cores']} cores, "
          f"{host['memory_gib']} GiB, {host['java']}, Spark {host['spark']}")
    print(f"{'case':32} {'streamwin rows/s':>17} {'spark rows/s':>14} {'ratio':>8}  goal")
    # Cases whose name contains one of the --only texts (empty parts, as in "a,", are ignored).
    wanted = [part.strip() for part in args.only.split(",") if part.strip()]
    own_only = [part.strip() for part in args.own_only.split(",") if part.strip()]
    selected = [case for case in cases(df) if not wanted or any(part in case[0] for part in wanted)]
    for name, ours, theirs, goal in selected:
        # Untimed runs of both sides: Spark compiles each query's generated code and the JIT warms it per
        # query, so each side has run its own query before it is timed (a baseline shared by several
        # cases otherwise ran warm against a streamwin query seen for the first time).
        for _ in range(args.warmup):
            for build in (ours, theirs):
                build().write.format("noop").mode("overwrite").save()
        ours_runs = timed(ours, args.repeat)
        theirs_runs = timed(theirs, args.repeat)
        ours_s, theirs_s = min(ours_runs), min(theirs_runs)
        row = {"case": name, "rows": args.rows, "streamwin_s": round(ours_s, 3), "spark_s": round(theirs_s, 3),
               "streamwin_rows_per_s": round(args.rows / ours_s), "spark_rows_per_s": round(args.rows / theirs_s),
               "ratio": round(theirs_s / ours_s, 2), "goal": goal,
               "streamwin_runs_s": [round(t, 3) for t in ours_runs], "spark_runs_s": [round(t, 3) for t in theirs_runs]}
        if name in BASELINES:
            row["baseline"] = BASELINES[name]
        results.append(row)
        print(f"{name:32} {row['streamwin_rows_per_s']:>17,} {row['spark_rows_per_s']:>14,} {row['ratio']:>7.2f}x  {goal}"
              + (f"  (spread {spread(ours_runs):.0%} / {spread(theirs_runs):.0%})" if args.repeat > 1 else "")
              + (f"  baseline: {BASELINES[name]}" if name in BASELINES else ""), flush=True)
    with tempfile.TemporaryDirectory(prefix="streamwin-bench-") as tmp:
        rows = min(args.stream_rows, args.rows)
        settings = {"off": [False], "on": [True], "both": [False, True]}[args.changelog]
        # --stream-rows 0 runs the batch cases only.
        stream_cases = streaming_cases(spark, df, rows, args.stream_batches, Path(tmp) / "input") if rows > 0 else []
        for changelog in settings:
            spark.conf.set(CHANGELOG, str(changelog).lower())
            if stream_cases:
                print(f"streams: {rows:,} rows in {args.stream_batches} micro-batches, RocksDB changelog "
                      f"checkpointing {'on' if changelog else 'off'}; share of {FLOOR}")
            floor_s = row_floor_s = None
            for name, ours, theirs, floor_goal, goal in stream_cases:
                if wanted and not any(part in name for part in wanted) and not name.startswith("floor"):
                    continue
                if any(part in name for part in own_only):
                    theirs = None
                # As for the batch cases: untimed runs of both sides first.
                for _ in range(args.warmup):
                    ours()
                    if theirs:
                        theirs()
                ours_runs = timed_run(ours, args.repeat)
                theirs_runs = timed_run(theirs, args.repeat) if theirs else None
                ours_s = min(ours_runs)
                theirs_s = min(theirs_runs) if theirs_runs else None
                if name == FLOOR:
                    floor_s = ours_s
                if name == ROW_FLOOR:
                    row_floor_s = ours_s
                row = {"case": name, "rows": rows, "changelog": changelog, "streamwin_s": round(ours_s, 3),
                       "streamwin_rows_per_s": round(rows / ours_s), "goal": goal,
                       "streamwin_runs_s": [round(t, 3) for t in ours_runs]}
                if theirs_runs:
                    row.update(spark_s=round(theirs_s, 3), spark_rows_per_s=round(rows / theirs_s),
                               ratio=round(theirs_s / ours_s, 2), spark_runs_s=[round(t, 3) for t in theirs_runs])
                if floor_s and not name.startswith("floor"):
                    row["share_of_floor"] = round(floor_s / ours_s, 2)
                if row_floor_s and not name.startswith("floor"):
                    row["share_of_row_floor"] = round(row_floor_s / ours_s, 2)
                first_last = BATCH_TIMES.get(name)
                if first_last:
                    row["first_batch_ms"], row["last_batch_ms"] = first_last
                results.append(row)
                share = row.get("share_of_floor")
                row_share = row.get("share_of_row_floor")
                spark_side = (f"{row['spark_rows_per_s']:>14,} {row['ratio']:>7.2f}x" if "ratio" in row
                              else f"{'-':>14} {'-':>8}")
                print(f"{name:32} {row['streamwin_rows_per_s']:>17,} {spark_side}  "
                      f"{'' if share is None else f'{share:.0%} of floor'}"
                      f"{'' if row_share is None else f', {row_share:.0%} of row floor'}"
                      f"{'' if floor_goal is None else f' (goal >= {floor_goal:.0%})'}  {goal}"
                      + (f"  (micro-batches: first {first_last[0]} ms, last {first_last[1]} ms: "
                         f"{first_last[1] / first_last[0]:.2f}x)" if first_last else "")
                      + ((f"  (spread {spread(ours_runs):.0%}" + (f" / {spread(theirs_runs):.0%})" if theirs_runs else ")"))
                         if args.repeat > 1 else ""),
                      flush=True)
        spark.conf.unset(CHANGELOG)
    by_name = {r["case"]: r for r in results}
    if "sliding 60s (max)" in by_name and "sliding 10s (max)" in by_name:
        flat = by_name["sliding 60s (max)"]["streamwin_s"] / by_name["sliding 10s (max)"]["streamwin_s"]
        print(f"sliding 60s takes {flat:.2f}x streamwin's own sliding 10s time (flat: about 1x)")
    if "hopping 60s/1s" in by_name and "tumbling 10s" in by_name:
        own = by_name["hopping 60s/1s"]["streamwin_s"] / by_name["tumbling 10s"]["streamwin_s"]
        print(f"hopping 60s/1s takes {own:.2f}x streamwin's own tumbling 10s time (goal <= 2x)")
    if args.repeat > 1 and results:
        spreads = sorted(spread(r[side]) for r in results for side in ("streamwin_runs_s", "spark_runs_s")
                         if len(r.get(side, [])) > 1)
        print(f"run-to-run spread of one side's timed runs: median {spreads[len(spreads) // 2]:.0%}, "
              f"largest {spreads[-1]:.0%} over {len(spreads)} sides")
    if not args.no_save:
        out = Path(__file__).resolve().parent / "results"
        out.mkdir(exist_ok=True)
        (out / "latest.json").write_text(json.dumps({"machine": host, "cases": results}, indent=2))
    charts = ([args.chart] if args.chart else []) + ([] if args.no_save else [Path(__file__).resolve().parent / "results" / "latest.png"])
    if charts and results:
        from chart import draw_chart  # benchmarks/chart.py, next to this file (needs matplotlib)
        stream_rows = min(args.stream_rows, args.rows)
        title = (f"streamwin vs Spark, {args.rows:,} rows over {args.keys} keys"
                 + (f" (streaming cases: {stream_rows:,} rows)" if stream_rows > 0 else "") + ", local[2]\n"
                 + f"{host['cores']} cores, {host['memory_gib']} GiB, {host['java']}, Spark {host['spark']}, {host['date']}")
        for chart in charts:
            print(f"chart: {draw_chart(results, chart, title)}")
    spark.stop()


if __name__ == "__main__":
    main()
