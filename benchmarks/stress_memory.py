"""Memory stress: one hot key holds 99 % of the rows, every window family in both forms, in a small driver.

    .venv/bin/python benchmarks/stress_memory.py                      # 10M rows, 1 GiB driver, local[2]
    .venv/bin/python benchmarks/stress_memory.py --rows 1000000 --only session,count

Each case runs in its own Python process and JVM (``spark.driver.memory``, default 1g, local[2]), so an
out-of-memory error ends only that case. Data: ``rows`` readings; 99 % belong to key ``hot`` and the
rest spread over 100 other keys; event time advances 100 ms per row, so the hot key's rows form one
long session and every time window of it holds many rows. A case runs one query into Spark's ``noop``
sink: ``groupBy(k, window).agg(sum, count)`` or ``select(k, v, window)`` (``partition_by="k"`` where the
family takes it). Reported per case: wall time, the driver JVM's old-generation peak (what the query
kept alive), peak resident memory (VmHWM) and max heap, or the error that ended it (``OOM`` when the
JVM ran out of heap). This is a benchmark, not a test: it asserts nothing and is never run by ``bin/test``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Callable

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

import streamwin as sw

sys.path.insert(0, str(Path(__file__).resolve().parent))
from isolated import run_case as run_isolated, save_results  # noqa: E402

#: (name, window Column builder for the select form, the same for groupBy). Sizes keep each row in at
#: most a few windows in the select form, so the output stays a small multiple of the input.
FAMILIES: list[tuple[str, Callable[[bool], Column]]] = [
    ("tumbling 10s", lambda select: sw.tumbling("ts", "10 seconds")),
    ("hopping 20s/10s", lambda select: sw.hopping("ts", "20 seconds", "10 seconds")),
    ("cumulate 10min/5min", lambda select: sw.cumulate("ts", "10 minutes", "5 minutes")),
    ("tumbling 1h emit_every 10min", lambda select: sw.tumbling("ts", "1 hour", emit_every="10 minutes")),
    ("tumbling 10s order_by+lateness", lambda select: sw.tumbling("ts", "10 seconds", order_by="seq",
                                                                  lateness="2 seconds")),
    ("sliding 300ms", lambda select: sw.sliding("ts", "300 milliseconds", **_partition(select))),
    ("session 5s", lambda select: sw.session("ts", "5 seconds", **_partition(select))),
    ("session 5s max 1h", lambda select: sw.session("ts", "5 seconds", max_duration="1 hour", **_partition(select))),
    ("interval 10s", lambda select: sw.interval("ts", "10 seconds", order_by="seq", **_partition(select))),
    ("timer 10s", lambda select: sw.timer("10 seconds", ingest_time="ts")),
    ("count 1000", lambda select: sw.count(1000, order_by="seq", **_partition(select))),
    ("count 100 step 50", lambda select: sw.count(100, step=50, order_by="seq", **_partition(select))),
    ("count end 100/50", lambda select: sw.count(100, step=50, align="end", order_by="seq", **_partition(select))),
    ("split", lambda select: sw.split(F.col("v") == 0, order_by="seq", **_partition(select))),
    ("delta", lambda select: sw.delta("v", 90, order_by="seq", **_partition(select))),
    ("punctuation", lambda select: sw.punctuation(F.col("v") == 0, order_by="seq", **_partition(select))),
]


def _partition(select: bool) -> dict:
    return {"partition_by": "k"} if select else {}


def readings(spark: SparkSession, rows: int) -> DataFrame:
    return spark.range(rows, numPartitions=8).select(
        F.when(F.col("id") % 100 == 0, F.concat(F.lit("k"), (F.col("id") / 100 % 100).cast("int").cast("string")))
        .otherwise(F.lit("hot")).alias("k"),
        F.timestamp_micros(F.col("id") * 100_000).alias("ts"),
        (F.col("id") % 97).alias("v"),
        F.col("id").alias("seq"),
    )


def run_case(name: str, form: str, rows: int) -> dict:
    """Runs one case in this process (the child side): returns time and peak memory."""
    builder = (SparkSession.builder.master("local[2]").appName("streamwin-stress")
               .config("spark.sql.shuffle.partitions", "8").config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC"))
    spark = sw.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    window = dict(FAMILIES)[name](form == "select")
    df = readings(spark, rows)
    query = (df.groupBy("k", window).agg(F.sum("v").alias("s"), F.count("*").alias("n")) if form == "groupBy"
             else df.select("k", "v", window))
    start = time.perf_counter()
    query.write.format("noop").mode("overwrite").save()
    seconds = time.perf_counter() - start
    jvm = spark.sparkContext._jvm
    pools = jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
    # The old generation's peak: what the query kept alive (eden and survivor peaks are garbage churn).
    old_gen = max((p.getPeakUsage().getUsed() for p in pools if "Old Gen" in str(p.getName())), default=0)
    pid = jvm.java.lang.ProcessHandle.current().pid()
    rss_kib = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                   if line.startswith("VmHWM:"))
    max_heap = jvm.java.lang.Runtime.getRuntime().maxMemory()
    spark.stop()
    return {"seconds": round(seconds, 1), "old_gen_peak_mib": round(old_gen / 2**20), "peak_rss_mib": round(rss_kib / 1024),
            "max_heap_mib": round(max_heap / 2**20)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--driver-memory", default="1g")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds a case may take")
    parser.add_argument("--only", default="", help="cases whose name contains one of these comma-separated texts")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # the child side: "<name>|<form>"
    args = parser.parse_args()
    if args.case:
        name, form = args.case.split("|")
        print("RESULT " + json.dumps(run_case(name, form, args.rows)), flush=True)
        return

    print(f"{args.rows:,} rows (99 % on one key), driver {args.driver_memory}, local[2]")
    print(f"{'case':34} {'form':8} {'seconds':>8} {'old gen peak MiB':>17} {'peak RSS MiB':>13} {'max heap MiB':>13}  outcome")
    results = []
    for name, _ in FAMILIES:
        if args.only and not any(part.strip() in name for part in args.only.split(",")):
            continue
        for form in ("groupBy", "select"):
            cmd = [sys.executable, __file__, "--rows", str(args.rows), "--case", f"{name}|{form}"]
            conf = {"PYSPARK_SUBMIT_ARGS": f"--driver-memory {args.driver_memory} pyspark-shell"}
            row = {"case": name, "form": form, **run_isolated(cmd, {**os.environ, **conf}, args.timeout)}
            results.append(row)
            print(f"{name:34} {form:8} {row.get('seconds', ''):>8} {row.get('old_gen_peak_mib', ''):>17} "
                  f"{row.get('peak_rss_mib', ''):>13} {row.get('max_heap_mib', ''):>13}  {row['outcome']}", flush=True)
    save_results("stress_memory", results)


if __name__ == "__main__":
    main()
