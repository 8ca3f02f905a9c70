"""Golden checkpoints: streams stopped with open windows, written by a released streamwin, which every
later streamwin must continue (tests/test_golden_checkpoints.py).

Each case is a file-to-file query over rows of a few keys, in a window whose state layout is stable. The writer runs the first part of the rows
through it (two micro-batches), so each key ends with open windows in the state store, and stores
under ``tests/golden_checkpoints/spark-<line>/<case>/``: the checkpoint, the input files it read, the
rows (all of them, the first ``written`` already read) and what the query output so far. Existing cases
are never rewritten (they stand for checkpoints users already have): the writer adds the missing ones.

    python tests/checkpoint_cases.py tests/golden_checkpoints
"""

from __future__ import annotations

import datetime
import json
import os
import random
import shutil
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Callable, NamedTuple

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

import streamwin as sw

SCHEMA = "k string, s long, seq long, v long, flag boolean"
FIELDS = ("k", "s", "seq", "v", "flag")
SENTINEL_S = 2000
WATERMARK = "10 minutes"


def _agg(window_of: Callable[[], object]) -> Callable[[DataFrame], DataFrame]:
    return lambda df: df.groupBy("k", window_of()).agg(
        F.sum("v").alias("sv"), F.count("*").alias("n"), F.min("s").alias("lo"), F.max("s").alias("hi"))


def _select(window_of: Callable[[], object]) -> Callable[[DataFrame], DataFrame]:
    return lambda df: df.select("k", "s", "seq", "v", window_of())


class Case(NamedTuple):
    query: Callable[[DataFrame], DataFrame]
    by_seq: bool  # arrival order is seq, else event time
    closes_on_watermark: bool  # else by rows only (count windows)
    encoding: str = "unsaferow"  # the state store's encoding (spark.sql.streaming.stateStore.encodingFormat)


# Every family in its stable state layout, kept by streamwin's own stateful operator: windows fed slices
# keep one state row per open window or slice (key, window_start) and a record per key; windows fed rows
# (policies, count and data windows, sliding windows, sessions with max_duration, select forms) keep a
# record per key, one state row per open window and late group (key, part, id) and their kept rows.
CASES: dict[str, Case] = {
    "tumbling": Case(_agg(lambda: sw.tumbling("ts", "10 seconds")), False, True),
    # Written when overlapping hopping windows kept one state row per window; the stores of later
    # versions keep one per slice (hopping-slices), and go on from these.
    "hopping": Case(_agg(lambda: sw.hopping("ts", "20 seconds", "5 seconds")), False, True),
    "hopping-slices": Case(_agg(lambda: sw.hopping("ts", "20 seconds", "5 seconds")), False, True),
    "session": Case(_agg(lambda: sw.session("ts", "6 seconds")), False, True),
    "cumulate": Case(_agg(lambda: sw.cumulate("ts", "20 seconds", "5 seconds")), False, True),
    # Windows fed rows.
    "tumbling-late": Case(_agg(lambda: sw.tumbling("ts", "10 seconds", order_by="seq", lateness="4 seconds",
                                                   late="passthrough")), True, True),
    "interval": Case(_agg(lambda: sw.interval("ts", "10 seconds", discard_age="6 seconds", order_by="seq")), True, True),
    "sliding": Case(_agg(lambda: sw.sliding("ts", "10 seconds")), False, True),
    "sliding-select": Case(_select(lambda: sw.sliding("ts", "10 seconds", partition_by="k")), False, True),
    "session-max": Case(_agg(lambda: sw.session("ts", "6 seconds", max_duration="20 seconds")), False, True),
    "session-select": Case(_select(lambda: sw.session("ts", "6 seconds", partition_by="k")), False, True),
    "count": Case(_agg(lambda: sw.count(4, step=2, order_by="seq")), True, False),
    "count-select": Case(_select(lambda: sw.count(4, order_by="seq", partition_by="k")), True, False),
    "count-end": Case(_agg(lambda: sw.count(3, step=2, align="end", order_by="seq")), True, False),
    "split": Case(_agg(lambda: sw.split("flag", order_by="seq")), True, False),
    "split-select": Case(_select(lambda: sw.split("flag", order_by="seq", partition_by="k")), True, False),
    "delta": Case(_agg(lambda: sw.delta("s", 30, order_by="seq")), True, False),
    "punctuation": Case(_agg(lambda: sw.punctuation("flag", order_by="seq")), True, False),
}
# Windows fed rows, whose state rows are keyed by (key, part, id, seq); the others by (key, window_start).
FED_ROWS = {"tumbling-late", "interval", "sliding", "sliding-select", "session-max", "session-select", "count",
            "count-select", "count-end", "split", "split-select", "delta", "punctuation"}
# Checkpoints of forms never released as stable, kept only to show that each is refused at start with what
# to do (tests/test_golden_checkpoints.py): streamwin's first streaming host (transformWithState), and its
# own operator's first form for windows fed rows (each key's whole engine as one `record.engine` value).
RETIRED = {
    "transformWithState-count": Case(_agg(lambda: sw.count(4, step=2, order_by="seq")), True, False),
    "engine-count": Case(_agg(lambda: sw.count(4, step=2, order_by="seq")), True, False),
}
ENCODING = "spark.sql.streaming.stateStore.encodingFormat"


def rows_of(seed: int, n: int = 48) -> list[tuple]:
    """Three keys; event times run ahead of arrival (seq) with jitter; a last row of another key far
    after the data moves the watermark past every window."""
    rng = random.Random(seed)
    rows = []
    for seq in range(n):
        s = max(0, seq * 4 + rng.randint(-10, 3))
        rows.append((rng.choice("abc"), s, seq, rng.randint(1, 9), rng.random() < 0.2))
    return rows + [("zz", SENTINEL_S, n, 1, False)]


def arrival(rows: list[tuple], by_seq: bool) -> list[tuple]:
    """The rows in the order the stream reads them: by seq, or by event time."""
    return sorted(rows, key=(lambda r: r[2]) if by_seq else (lambda r: (r[1], r[2])))


def write_json(path: Path, rows: list[tuple], mtime: float) -> None:
    """One input file of the stream, modified at ``mtime`` (the file source reads files in that order)."""
    path.write_text("".join(json.dumps(dict(zip(FIELDS, r))) + "\n" for r in rows))
    os.utime(path, (mtime, mtime))


def source(spark: SparkSession, folder: Path) -> DataFrame:
    """The stream over ``folder``: a file per micro-batch, with the cases' watermark."""
    return (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(folder))
            .withColumn("ts", F.timestamp_seconds("s")).withWatermark("ts", WATERMARK))


def batch(spark: SparkSession, rows: list[tuple]) -> DataFrame:
    """The same rows as a batch DataFrame: what the stream must add up to."""
    return spark.createDataFrame([tuple(r) for r in rows], SCHEMA).withColumn("ts", F.timestamp_seconds("s"))


def plain(value: object) -> object:
    """A JSON-able, comparable form of an output value (timestamps as UTC ISO text, structs as lists).

    >>> plain(Row(k="a", n=2))
    ['a', 2]
    """
    if isinstance(value, Row):
        return [plain(v) for v in value]
    if isinstance(value, datetime.datetime):
        # pyspark gives naive local times, whatever the session's time zone.
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None).isoformat()
    return value


def run_to_end(spark: SparkSession, out: DataFrame, checkpoint: Path, sink: Path) -> None:
    """Runs the query on its checkpoint until no micro-batch is left (timers included), then stops it."""
    query = (out.writeStream.format("parquet").option("path", str(sink))
             .option("checkpointLocation", str(checkpoint)).outputMode("append").start())
    try:
        last = None
        for _ in range(40):
            query.processAllAvailable()
            batch_id = query.lastProgress["batchId"] if query.lastProgress else None
            if batch_id is not None and batch_id == last:
                break
            last = batch_id
            time.sleep(0.5)
        else:
            raise AssertionError(f"the query did not settle in 40 rounds (last micro-batch {last})")
    finally:
        query.stop()


def relocate(checkpoint: Path, written_in: str, moved_to: Path) -> float:
    """Moves a checkpoint's absolute paths from ``written_in`` (the folder it was written in) to
    ``moved_to``, which holds ``checkpoint/`` and ``input/`` as before, and gives each input file the
    modification time the source log recorded for it. Returns the latest of those times (seconds).

    The paths are those of the files the source read (its log) and of the operators' state schema
    files (their metadata). The times matter because a file's copy (or a fresh clone) is modified
    now: once a later file moves the source's cutoff (``maxFileAge``, 7 days) past the recorded
    times, the source forgets them, and would read files with a newer time again.
    """
    texts = list((checkpoint / "sources").rglob("*")) + list(checkpoint.glob("state/*/_metadata/**/*"))
    moved = urllib.parse.quote(str(moved_to))
    rewritten, latest = 0, 0.0
    for path in texts:
        if not path.is_file() or path.name.startswith("."):
            continue
        text = path.read_text()
        if written_in + "/" in text:
            path.write_text(text.replace(written_in + "/", moved + "/"))
            rewritten += 1
            crc = path.with_name(f".{path.name}.crc")
            if crc.exists():
                crc.unlink()  # a stale checksum would fail the read; Hadoop checks none when it is absent
    for log in (checkpoint / "sources").rglob("*"):
        if log.is_file() and not log.name.startswith("."):
            for line in log.read_text().splitlines()[1:]:
                entry = json.loads(line)
                seconds = entry["timestamp"] / 1000
                name = entry["path"].rsplit("/", 1)[-1]
                os.utime(moved_to / "input" / name, (seconds, seconds))
                latest = max(latest, seconds)
    if rewritten < 2 or latest == 0.0:
        raise AssertionError(f"no source log or operator metadata named {written_in} in {checkpoint}")
    return latest


def write_case(spark: SparkSession, name: str, target: Path) -> None:
    case = CASES.get(name) or RETIRED[name]
    rows = rows_of(20261125 + sum(map(ord, name)))
    ordered = arrival(rows, case.by_seq)
    written = len(ordered) // 2
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp).resolve()
        (work / "input").mkdir()
        for i, part in enumerate([ordered[: written // 2], ordered[written // 2: written]]):
            write_json(work / "input" / f"part-{i:04d}.json", part, 1_000_000 + i)
        # Read when the query starts, then kept in the checkpoint.
        spark.conf.set(ENCODING, case.encoding)
        try:
            run_to_end(spark, case.query(source(spark, work / "input")), work / "checkpoint", work / "out")
        finally:
            spark.conf.unset(ENCODING)
        output = sorted(json.dumps(plain(r)) for r in spark.read.parquet(str(work / "out")).collect())
        target.mkdir(parents=True)
        shutil.copytree(work / "input", target / "input")
        shutil.copytree(work / "checkpoint", target / "checkpoint")
    meta = {"spark": spark.version, "streamwin": sw.__version__, "encoding": case.encoding, "written_in": str(work),
            "written": written}
    lists = {"rows": [json.dumps(r) for r in ordered], "output": output}
    (target / "case.json").write_text(
        "{\n" + "".join(f"{json.dumps(k)}: {json.dumps(v)},\n" for k, v in meta.items())
        + ",\n".join(f'{json.dumps(k)}: [\n' + ",\n".join(v) + "\n]" for k, v in lists.items()) + "\n}\n")


def main(root: str, cases: dict[str, Case] = CASES) -> None:
    builder = (SparkSession.builder.master("local[2]").appName("streamwin-golden-checkpoints")
               .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
               .config("spark.ui.enabled", "false"))
    spark = sw.configure(builder).getOrCreate()
    line = ".".join(spark.version.split(".")[:2])
    folder = Path(root) / f"spark-{line}"
    # A case written once stands for checkpoints users have: it is never rewritten, only new cases are added.
    for name in cases:
        if (folder / name).exists():
            print(f"kept {name} for Spark {line}")
        else:
            write_case(spark, name, folder / name)
            print(f"wrote {name} for Spark {spark.version}")
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).parent / "golden_checkpoints"))
