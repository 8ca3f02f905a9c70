"""Hot keys in streams: 99 % of a stream's rows on one key whose window stays open, in a small driver.

    .venv/bin/python benchmarks/stress_streams.py                     # 16M rows, 8 micro-batches, 2 GiB driver
    .venv/bin/python benchmarks/stress_streams.py --rows 2000000 --only session

The stream: ``rows`` readings in ``batches`` parquet files, read one per micro-batch (availableNow) into
Spark's ``noop`` sink with a 10 s watermark, on the RocksDB state store that ``sw.configure`` selects.
99 % of the rows belong to key ``hot`` (the rest spread over 100 other keys); event time advances 100 µs
per row, so a session with a 1 hour gap never closes over the whole stream. The cases (issue "Streaming
v3", hot keys): the select form of that session, the groupBy form, a count window of 1M rows, a count
window of 10,000 rows every 1,000, and the select form of a count window of 100,000 rows.

Each case runs in its own Python process and JVM (``spark.driver.memory``, default 2g, local[2]), so an
out-of-memory error ends only that case. Reported per case: wall time, the first and the last micro-batch
that read rows and their ratio (flat: the last within 1.5x of the first), the driver JVM's old-generation
peak (what the query kept alive on the heap), the state store's rows and memory at the end (where the open
window's rows live), or the error that ended the case. A benchmark, not a test: it asserts nothing and
is never run by ``bin/test``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import streamwin as sw

sys.path.insert(0, str(Path(__file__).resolve().parent))
from isolated import run_case as run_isolated, save_results  # noqa: E402


def aggs() -> list:
    return [F.sum("v").alias("s"), F.count("*").alias("n")]


#: (name, the query over the stream).
CASES: list[tuple[str, Callable[[DataFrame], DataFrame]]] = [
    ("session 1h, select", lambda s: s.select("k", "v", sw.session("ts", "1 hour", partition_by="k"))),
    ("session 1h, groupBy", lambda s: s.groupBy("k", sw.session("ts", "1 hour")).agg(*aggs())),
    ("count 1M, groupBy", lambda s: s.groupBy("k", sw.count(1_000_000, order_by="seq")).agg(*aggs())),
    ("count 10000 step 1000, groupBy",
     lambda s: s.groupBy("k", sw.count(10_000, step=1_000, order_by="seq")).agg(*aggs())),
    ("count 100000, select", lambda s: s.select("k", "v", sw.count(100_000, order_by="seq", partition_by="k"))),
]

SCHEMA = "k string, ts timestamp, v bigint, seq bigint"


def session(app: str) -> SparkSession:
    builder = (SparkSession.builder.master("local[2]").appName(app)
               .config("spark.sql.shuffle.partitions", "8").config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC"))
    spark = sw.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def prepare(folder: Path, rows: int, batches: int) -> None:
    """Writes the stream's files, one per micro-batch, in time order (the file source reads them so)."""
    spark = session("streamwin-stress-streams-data")
    spark.range(rows, numPartitions=batches).select(
        F.when(F.col("id") % 100 == 0, F.concat(F.lit("k"), (F.col("id") / 100 % 100).cast("int").cast("string")))
        .otherwise(F.lit("hot")).alias("k"),
        F.timestamp_micros(F.col("id") * 100).alias("ts"),
        (F.col("id") % 97).alias("v"),
        F.col("id").alias("seq"),
    ).repartitionByRange(batches, "seq").sortWithinPartitions("seq").write.parquet(str(folder))
    for i, file in enumerate(sorted(folder.glob("part-*.parquet"))):
        os.utime(file, (1_700_000_000 + i, 1_700_000_000 + i))
    spark.stop()


def run_case(name: str, folder: Path) -> dict:
    """Runs one case in this process (the child side)."""
    spark = session("streamwin-stress-streams")
    checkpoint = Path(tempfile.mkdtemp(prefix="streamwin-stress-checkpoint-"))
    stream = (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(folder))
              .withWatermark("ts", "10 seconds"))
    start = time.perf_counter()
    query = (dict(CASES)[name](stream).writeStream.format("noop").outputMode("append")
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    query.awaitTermination()
    seconds = time.perf_counter() - start
    progress = [p for p in query.recentProgress if p.get("numInputRows", 0) > 0]
    durations = [p["durationMs"].get("triggerExecution", 0) for p in progress]
    state = query.recentProgress[-1]["stateOperators"][0] if query.recentProgress else {}
    jvm = spark.sparkContext._jvm
    pools = jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
    old_gen = max((p.getPeakUsage().getUsed() for p in pools if "Old Gen" in str(p.getName())), default=0)
    spark.stop()
    shutil.rmtree(checkpoint, ignore_errors=True)
    return {"seconds": round(seconds, 1), "batches": len(durations),
            "first_batch_ms": durations[0] if durations else None, "last_batch_ms": durations[-1] if durations else None,
            "old_gen_peak_mib": round(old_gen / 2**20), "state_rows": state.get("numRowsTotal"),
            "state_memory_mib": round(state.get("memoryUsedBytes", 0) / 2**20)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=16_000_000)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--driver-memory", default="2g")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds a case may take")
    parser.add_argument("--only", default="", help="cases whose name contains one of these comma-separated texts")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # the child side: "<name>|<folder>"
    parser.add_argument("--prepare", help=argparse.SUPPRESS)  # the child side: the folder to write
    args = parser.parse_args()
    if args.prepare:
        prepare(Path(args.prepare), args.rows, args.batches)
        return
    if args.case:
        name, folder = args.case.split("|")
        print("RESULT " + json.dumps(run_case(name, Path(folder))), flush=True)
        return

    env = {**os.environ, "PYSPARK_SUBMIT_ARGS": f"--driver-memory {args.driver_memory} pyspark-shell"}
    with tempfile.TemporaryDirectory(prefix="streamwin-stress-streams-") as tmp:
        folder = Path(tmp) / "input"
        subprocess.run([sys.executable, __file__, "--rows", str(args.rows), "--batches", str(args.batches),
                        "--prepare", str(folder)], check=True, env=env)
        print(f"{args.rows:,} rows (99 % on one key) in {args.batches} micro-batches, driver {args.driver_memory}, "
              "local[2], RocksDB")
        print(f"{'case':32} {'seconds':>8} {'first ms':>9} {'last ms':>8} {'last/first':>10} {'old gen MiB':>12} "
              f"{'state rows':>11} {'state MiB':>10}  outcome")
        results = []
        for name, _ in CASES:
            if args.only and not any(part.strip() in name for part in args.only.split(",") if part.strip()):
                continue
            cmd = [sys.executable, __file__, "--case", f"{name}|{folder}"]
            row = {"case": name, **run_isolated(cmd, env, args.timeout)}
            first, last = row.get("first_batch_ms"), row.get("last_batch_ms")
            ratio = f"{last / first:.2f}x" if first and last else ""
            results.append({**row, "rows": args.rows, "last_over_first": ratio})
            print(f"{name:32} {row.get('seconds', ''):>8} {first or '':>9} {last or '':>8} {ratio:>10} "
                  f"{row.get('old_gen_peak_mib', ''):>12} {row.get('state_rows', ''):>11} "
                  f"{row.get('state_memory_mib', ''):>10}  {row['outcome']}", flush=True)
    save_results("stress_streams", results)


if __name__ == "__main__":
    main()
