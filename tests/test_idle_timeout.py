"""idle_timeout: KX's temporal timeout for idle streams. On a stream, when a key has held rows for the
timeout (processing time) with nothing output for it, what its open windows hold goes out as
``partial`` and is cleared; the windows stay open and later output the rest (``partial`` or
``final``). A batch DataFrame has no processing time: the option changes nothing there.

The streaming tests wait for processing time to pass (a trigger every 300 ms, timeouts of seconds):
they assert what is output, never how fast.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Callable

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

import streamwin as sw

SCHEMA = "k string, s long, seq long, v long"


def _frame(spark: SparkSession, rows: list[tuple]) -> DataFrame:
    return spark.createDataFrame(rows, SCHEMA).withColumn("ts", F.timestamp_seconds("s"))


def _sums(df: DataFrame, window: Callable) -> DataFrame:
    return df.groupBy("k", window()).agg(F.sum("v").alias("total"), F.count("*").alias("n"))


def _outputs(rows: list[Row]) -> list[tuple]:
    """(key, start: seconds of a time window or a count window's first seq, kind, total, n), sorted."""
    def start(r: Row) -> float:
        return r.window.start.timestamp() if hasattr(r.window.start, "timestamp") else float(r.window.start)
    return sorted((r.k, start(r), r.window.kind, r.total, r.n) for r in rows)


_FAMILIES = {
    "tumbling": lambda **o: sw.tumbling("ts", "10 seconds", **o),
    "hopping ordered": lambda **o: sw.hopping("ts", "10 seconds", "5 seconds", order_by="seq", lateness="5 seconds", **o),
    "session": lambda **o: sw.session("ts", "4 seconds", **o),
    "count": lambda **o: sw.count(3, order_by="seq", **o),
    "count overlapping": lambda **o: sw.count(4, step=2, order_by="seq", **o),
    "split": lambda **o: sw.split(F.col("v") > 5, order_by="seq", **o),
}


@pytest.mark.parametrize("family", sorted(_FAMILIES))
def test_idle_timeout_changes_nothing_in_a_batch(spark, family):
    rows = [(k, s, seq, (seq * 7) % 10) for seq, (k, s) in enumerate(
        [("a", 1), ("b", 2), ("a", 5), ("a", 3), ("b", 14), ("a", 12), ("a", 21), ("b", 15), ("a", 40), ("a", 41)])]
    df = _frame(spark, rows)
    window = _FAMILIES[family]

    def outputs(**options) -> list[tuple]:
        return sorted((r.k, str(r.window.start), r.window.kind, r.total, r.n)
                      for r in _sums(df, lambda: window(**options)).collect())

    plain = outputs()
    assert len(plain) >= 4
    assert outputs(idle_timeout="1 second") == plain


class _Stream:
    """A file source (one JSON file per micro-batch) feeding a memory sink on a 300 ms trigger."""

    def __init__(self, spark: SparkSession, tmp_path: Path, build: Callable[[DataFrame], DataFrame],
                 watermark: str | None = None):
        self.spark, self.folder, self.files = spark, tmp_path / "in", 0
        self.folder.mkdir()
        src = spark.readStream.schema(SCHEMA).json(str(self.folder)).withColumn("ts", F.timestamp_seconds("s"))
        if watermark:
            src = src.withWatermark("ts", watermark)
        self.name = "sw_" + uuid.uuid4().hex[:12]
        self.query = (build(src).writeStream.format("memory").queryName(self.name).outputMode("append")
                      .option("checkpointLocation", str(tmp_path / "checkpoint"))
                      .trigger(processingTime="300 milliseconds").start())

    def write(self, rows: list[tuple]) -> None:
        path = self.folder / f"part-{self.files:04d}.json"
        tmp = self.folder / f".part-{self.files:04d}.tmp"
        tmp.write_text("".join(json.dumps(dict(zip(("k", "s", "seq", "v"), r))) + "\n" for r in rows))
        os.replace(tmp, path)
        self.files += 1

    def wait_for(self, done: Callable[[list[tuple]], bool], what: str) -> list[tuple]:
        deadline = time.time() + 90
        while time.time() < deadline:
            if self.query.exception():
                raise AssertionError(str(self.query.exception()))
            out = self.output()
            if done(out):
                return out
            time.sleep(0.3)
        raise AssertionError(f"{what} did not come within 90 s; output so far: {self.output()}")

    def output(self) -> list[tuple]:
        return _outputs(self.spark.table(self.name).collect())

    def stop(self) -> None:
        self.query.stop()
        self.spark.catalog.dropTempView(self.name)


def test_idle_key_outputs_held_rows_as_partial_and_its_window_the_rest_later(spark, tmp_path):
    stream = _Stream(spark, tmp_path, lambda df: _sums(df, lambda: sw.tumbling("ts", "10 seconds",
                                                                                 idle_timeout="2 seconds")))
    try:
        stream.write([("a", 1, 0, 1), ("a", 2, 1, 2), ("b", 3, 2, 5)])
        # Nothing closes a window (no watermark, no later rows): the timeout outputs what each key holds.
        out = stream.wait_for(lambda o: len(o) == 2, "the timed-out rows of a and b")
        assert out == [("a", 0.0, "partial", 3, 2), ("b", 0.0, "partial", 5, 1)]
        # a's window goes on: a row for it, then a row that closes it. Its final holds only the new row.
        stream.write([("a", 4, 3, 10), ("a", 12, 4, 100)])
        out = stream.wait_for(lambda o: any(r[2] == "final" for r in o), "a's final")
        # ... and the row at 12 s, alone in [10, 20), times out too.
        out = stream.wait_for(lambda o: len(o) == 4, "the timed-out row at 12 s")
    finally:
        stream.stop()
    assert out == [("a", 0.0, "final", 10, 1), ("a", 0.0, "partial", 3, 2), ("a", 10.0, "partial", 100, 1),
                   ("b", 0.0, "partial", 5, 1)]
    # Each window's outputs add up to the batch's window.
    batch = _outputs(_sums(_frame(spark, [("a", 1, 0, 1), ("a", 2, 1, 2), ("b", 3, 2, 5), ("a", 4, 3, 10),
                                          ("a", 12, 4, 100)]), lambda: sw.tumbling("ts", "10 seconds")).collect())
    totals: dict = {}
    for k, start, _, total, n in out:
        t, c = totals.get((k, start), (0, 0))
        totals[(k, start)] = (t + total, c + n)
    assert totals == {(k, start): (total, n) for k, start, _, total, n in batch}


def test_with_a_watermark_an_idle_keys_window_closes_as_final_at_its_next_visit(spark, tmp_path):
    stream = _Stream(spark, tmp_path, lambda df: _sums(df, lambda: sw.tumbling("ts", "10 seconds",
                                                                                 idle_timeout="3 seconds")),
                     watermark="5 seconds")
    try:
        stream.write([("a", 1, 0, 1), ("b", 3, 1, 5)])
        stream.wait_for(lambda o: len(o) == 2, "the timed-out rows of a and b")
        # b gets one more row for [0, 10); a moves the watermark to 25 s. b's window is then closed by the
        # watermark (read when the key's timer visits it), as final, with the row it held since.
        stream.write([("b", 5, 2, 7), ("a", 30, 3, 100)])
        out = stream.wait_for(lambda o: any(r[0] == "b" and r[2] == "final" for r in o), "b's final")
    finally:
        stream.stop()
    assert [r for r in out if r[0] == "b"] == [("b", 0.0, "final", 7, 1), ("b", 0.0, "partial", 5, 1)]
    assert ("a", 0.0, "partial", 1, 1) in out and not any(r[:3] == ("a", 0.0, "final") for r in out)


def test_idle_timeout_on_count_windows_of_a_stream(spark, tmp_path):
    stream = _Stream(spark, tmp_path, lambda df: df.groupBy("k", sw.count(3, order_by="seq", idle_timeout="2 seconds"))
                     .agg(F.sum("v").alias("total"), F.count("*").alias("n")))
    try:
        stream.write([("a", 0, 0, 1), ("a", 0, 1, 2)])
        stream.wait_for(lambda o: len(o) == 1, "the timed-out rows")
        # The window still ends at its third row; the next one starts after it.
        stream.write([("a", 0, 2, 4), ("a", 0, 3, 8), ("a", 0, 4, 16), ("a", 0, 5, 32)])
        out = stream.wait_for(lambda o: len(o) == 3, "the two finals")
    finally:
        stream.stop()
    assert [(kind, total, n) for _, _, kind, total, n in out] == [("partial", 3, 2), ("final", 4, 1), ("final", 56, 3)]


@pytest.mark.parametrize("window", [
    lambda: sw.tumbling("ts", "10 seconds", idle_timeout="1 second"),
    lambda: sw.timer("1 second"),
], ids=["idle_timeout", "processing-time timer"])
def test_processing_time_queries_refuse_a_trigger_that_runs_to_the_end(spark, tmp_path, window):
    # Processing-time mode starts a micro-batch at every trigger: an availableNow query would never end.
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "part-0000.json").write_text(json.dumps({"k": "a", "s": 1, "seq": 0, "v": 1}) + "\n")
    src = spark.readStream.schema(SCHEMA).json(str(tmp_path / "in")).withColumn("ts", F.timestamp_seconds("s"))
    query = (_sums(src, window).writeStream.format("noop").option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    try:
        with pytest.raises(StreamingQueryException, match=r"processing time.*trigger\(availableNow=True\).*would "
                                                          r"never end"):
            query.awaitTermination(120)
    finally:
        query.stop()


def test_idle_timeout_continues_across_a_restart(spark, tmp_path):
    """A key's quiet period and its timer are state: a query restarted from its checkpoint times out the
    rows held before the restart, and its windows go on. Spark runs no micro-batch for a restarted query
    until new input arrives (it cannot know that the state holds timers), so a row of another key starts
    the restarted query; from then on it runs at every trigger and key a's timer fires."""
    (tmp_path / "in").mkdir()
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def start():
        src = spark.readStream.schema(SCHEMA).json(str(tmp_path / "in"))
        counted = src.groupBy("k", sw.count(3, order_by="seq", idle_timeout="6 seconds")).agg(
            F.sum("v").alias("total"), F.count("*").alias("n"))
        return (counted.writeStream.format("parquet").option("path", str(out))
                .option("checkpointLocation", str(checkpoint)).trigger(processingTime="300 milliseconds").start())

    def write(name: str, rows: list[tuple]) -> None:
        tmp = tmp_path / "in" / f".{name}.tmp"
        tmp.write_text("".join(json.dumps(dict(zip(("k", "s", "seq", "v"), r))) + "\n" for r in rows))
        os.replace(tmp, tmp_path / "in" / f"{name}.json")

    def outputs() -> list[tuple]:
        if not (out / "_spark_metadata").exists():
            return []
        return [(r.k, r.window.kind, r.total, r.n)
                for r in spark.read.parquet(str(out)).orderBy("k", "window.start").collect()]

    def wait_for(query, done: Callable[[list[tuple]], bool], what: str) -> list[tuple]:
        deadline = time.time() + 90
        while time.time() < deadline:
            if query.exception():
                raise AssertionError(str(query.exception()))
            if done(outputs()):
                return outputs()
            time.sleep(0.3)
        raise AssertionError(f"{what} did not come within 90 s; output so far: {outputs()}")

    query = start()
    try:
        write("part-0000", [("a", 0, 0, 1), ("a", 0, 1, 2)])
        deadline = time.time() + 60
        while not any(p["numInputRows"] for p in query.recentProgress) and time.time() < deadline:
            time.sleep(0.1)
    finally:
        query.stop()
    # Stopped within the quiet period: the rows are held in the checkpoint, nothing was output.
    assert outputs() == []
    query = start()
    try:
        write("part-0001", [("b", 0, 0, 100)])
        timed_out = wait_for(query, lambda o: ("a", "partial", 3, 2) in o, "key a's timed-out rows after the restart")
        assert ("a", "partial", 3, 2) == timed_out[0]
        write("part-0002", [("a", 0, 2, 4), ("a", 0, 3, 8), ("a", 0, 4, 16), ("a", 0, 5, 32)])
        result = wait_for(query, lambda o: len(o) == 4, "key a's two finals and key b's timed-out row")
    finally:
        query.stop()
    assert result == [("a", "partial", 3, 2), ("a", "final", 4, 1), ("a", "final", 56, 3), ("b", "partial", 100, 1)]
