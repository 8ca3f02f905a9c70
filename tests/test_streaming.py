"""Structured Streaming: every window family on a streaming DataFrame, hosted by Spark's
transformWithState, gives exactly the batch result on the same rows (a stream is a replay).

Rows reach the stream as JSON files, one file per micro-batch (``maxFilesPerTrigger=1``), split at
random points of the arrival order (``order_by`` when given, else event time). A stream has no end,
so the last windows of each key stay open; the inputs end with a sentinel that closes them: a row
per key far after the data (the key's own progress closes its windows), or, with a watermark, one
row of a separate key (the watermark closes every key's windows). The sentinel's own windows and
the batch's teardown-only ``partial`` windows are the only allowed differences.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import shutil
import time
import uuid
import zlib
from collections import Counter
from pathlib import Path
from typing import Callable

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

import streamwin as sw
from spark_lines import SPARK_3, needs_state_readers

SCHEMA = "k string, s long, seq long, v long, flag boolean"
SENTINEL_S = 2000  # far after the data (event times < 400 s)
LAST_REAL_S: dict[str, int] = {}  # per key, the event time of its last real row (set per test)
SEED = int(os.environ.get("STREAMWIN_SEED", "20261122"))


def _rows(rng: random.Random, n: int = 60) -> list[tuple]:
    """Arrival order is seq; event times run ahead with jitter, so some rows arrive out of order."""
    out = []
    for seq in range(n):
        s = max(0, seq * 5 + rng.randint(-14, 3))
        out.append((rng.choice("abc"), s, seq, rng.randint(1, 9), rng.random() < 0.2))
    return out


def _with_sentinels(rows: list[tuple], watermark: bool) -> list[tuple]:
    seq = max(r[2] for r in rows) + 1
    keys = ["zz"] if watermark else sorted({r[0] for r in rows})
    return rows + [(k, SENTINEL_S, seq + i, 1, False) for i, k in enumerate(keys)]


def _batch(spark: SparkSession, rows: list[tuple]) -> DataFrame:
    return spark.createDataFrame(rows, SCHEMA).withColumn("ts", F.timestamp_seconds("s"))


def _write_micro_batches(folder: Path, rows: list[tuple], rng: random.Random, batches: int) -> None:
    """Rows in arrival order, cut at random points into ``batches`` micro-batches."""
    _write_splits(folder, rows, sorted(rng.sample(range(1, len(rows)), batches - 1)))


def _write_splits(folder: Path, rows: list[tuple], cuts: list[int]) -> None:
    """One JSON file per micro-batch (rows between cuts), with increasing modification times."""
    folder.mkdir(parents=True)
    for i, (lo, hi) in enumerate(zip([0] + cuts, cuts + [len(rows)])):
        path = folder / f"part-{i:04d}.json"
        path.write_text("".join(json.dumps(dict(zip(("k", "s", "seq", "v", "flag"), r))) + "\n" for r in rows[lo:hi]))
        os.utime(path, (1_000_000 + i, 1_000_000 + i))


def _source(spark: SparkSession, folder: Path, watermark: str | None) -> DataFrame:
    src = (
        spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(folder))
        .withColumn("ts", F.timestamp_seconds("s"))
    )
    return src.withWatermark("ts", watermark) if watermark else src


def _run_to_end(spark: SparkSession, out: DataFrame, checkpoint: Path, mode: str,
                metrics: dict | None = None) -> list[Row]:
    name = "sw_" + uuid.uuid4().hex[:12]
    query = (
        out.writeStream.format("memory").queryName(name).outputMode(mode)
        .option("checkpointLocation", str(checkpoint)).start()
    )
    try:
        query.processAllAvailable()
        # Timers past the last watermark fire in a no-data micro-batch that follows.
        _wait_until_idle(query)
        if metrics is not None:
            metrics.update(sw.window_metrics(query))
    finally:
        query.stop()
    result = spark.table(name).collect()
    spark.catalog.dropTempView(name)
    return result


def _wait_until_idle(query) -> None:
    last = -1
    for _ in range(40):
        query.processAllAvailable()
        progress = query.lastProgress
        batch = progress["batchId"] if progress else -1
        if batch == last:
            return
        last = batch
        time.sleep(0.5)


def _key(row: Row) -> tuple:
    return tuple(tuple(v) if isinstance(v, Row) else v for v in row)


Build = Callable[[DataFrame], DataFrame]


def _agg(window_of: Callable[[], object]) -> Build:
    return lambda df: df.groupBy("k", window_of()).agg(
        F.sum("v").alias("sv"), F.count("*").alias("n"), F.min("s").alias("lo"), F.max("s").alias("hi")
    )


def _select(window_of: Callable[[], object]) -> Build:
    return lambda df: df.select("k", "s", "seq", "v", window_of())


# (id, build, ordered by seq, event-time family)
TIME_CASES = [
    ("tumbling", _agg(lambda: sw.tumbling("ts", "10 seconds")), False),
    ("tumbling-order-lateness", _agg(lambda: sw.tumbling("ts", "10 seconds", order_by="seq", lateness="5 seconds")), True),
    ("tumbling-passthrough", _agg(lambda: sw.tumbling("ts", "10 seconds", order_by="seq", late="passthrough")), True),
    ("tumbling-count-trigger", _agg(lambda: sw.tumbling("ts", "20 seconds", count_trigger=2)), False),
    ("tumbling-emit-empty", _agg(lambda: sw.tumbling("ts", "10 seconds", emit_empty=True)), False),
    ("hopping", _agg(lambda: sw.hopping("ts", "20 seconds", "5 seconds")), False),
    ("hopping-order-passthrough", _agg(lambda: sw.hopping("ts", "20 seconds", "10 seconds", order_by="seq",
                                                             lateness="4 seconds", late="passthrough")), True),
    ("sliding", _agg(lambda: sw.sliding("ts", "10 seconds")), False),
    ("sliding-order-lateness", _agg(lambda: sw.sliding("ts", "10 seconds", order_by="seq", lateness="5 seconds")), True),
    ("sliding-delay-order-passthrough", _agg(lambda: sw.sliding("ts", "10 seconds", delay="4 seconds", order_by="seq",
                                                                  late="passthrough")), True),
    ("sliding-when-delay", _agg(lambda: sw.sliding("ts", "10 seconds", delay="4 seconds", when=F.col("v") % 3 == 0)),
     False),
    ("session", _agg(lambda: sw.session("ts", "6 seconds")), False),
    ("session-order-passthrough", _agg(lambda: sw.session("ts", "6 seconds", order_by="seq", late="passthrough")), True),
    ("session-max-duration", _agg(lambda: sw.session("ts", "6 seconds", max_duration="20 seconds")), False),
    ("session-dynamic-gap", _agg(lambda: sw.session("ts", F.when(F.col("v") > 5, F.lit("3 seconds"))
                                                      .otherwise(F.lit("8 seconds")))), False),
    ("interval", _agg(lambda: sw.interval("ts", "10 seconds", creation_period="5 seconds", discard_age="10 seconds")),
     False),
    ("interval-order-passthrough", _agg(lambda: sw.interval("ts", "10 seconds", discard_age="5 seconds", order_by="seq",
                                                              late="passthrough")), True),
    ("timer-ingest-time", _agg(lambda: sw.timer("10 seconds", ingest_time="ts")), False),
    ("cumulate", _agg(lambda: sw.cumulate("ts", "30 seconds", "10 seconds")), False),
    ("cumulate-order-passthrough", _agg(lambda: sw.cumulate("ts", "30 seconds", "10 seconds", order_by="seq",
                                                              lateness="5 seconds", late="passthrough")), True),
    ("select-cumulate", _select(lambda: sw.cumulate("ts", "20 seconds", "5 seconds")), False),
    ("select-tumbling-passthrough", _select(lambda: sw.tumbling("ts", "10 seconds", order_by="seq",
                                                                  late="passthrough")), True),
    ("select-session", _select(lambda: sw.session("ts", "6 seconds")), False),
    ("select-sliding", _select(lambda: sw.sliding("ts", "10 seconds")), False),
    ("select-sliding-delay", _select(lambda: sw.sliding("ts", "5 seconds", delay="3 seconds")), False),
    ("select-sliding-when", _select(lambda: sw.sliding("ts", "5 seconds", when=F.col("v") > 5)), False),
    ("select-session-max-duration", _select(lambda: sw.session("ts", "6 seconds", max_duration="20 seconds")), False),
]

UPDATE_CASES = [
    ("tumbling-update", _agg(lambda: sw.tumbling("ts", "10 seconds", order_by="seq", emit="update")), True),
    ("session-update", _agg(lambda: sw.session("ts", "6 seconds", emit="update")), False),
    ("interval-update", _agg(lambda: sw.interval("ts", "10 seconds", discard_age="5 seconds", order_by="seq",
                                                   emit="update")), True),
    ("count-update", _agg(lambda: sw.count(3, order_by="seq", emit="update")), True),
    ("count-overlapping-update", _agg(lambda: sw.count(4, step=2, order_by="seq", emit="update")), True),
    ("tumbling-emit-every", _agg(lambda: sw.tumbling("ts", "30 seconds", emit_every="10 seconds")), False),
    ("hopping-emit-every-order", _agg(lambda: sw.hopping("ts", "30 seconds", "10 seconds", order_by="seq",
                                                          lateness="5 seconds", emit_every="7 seconds")), True),
    ("session-emit-every", _agg(lambda: sw.session("ts", "6 seconds", emit_every="5 seconds")), False),
    ("cumulate-emit-every", _agg(lambda: sw.cumulate("ts", "30 seconds", "10 seconds", emit_every="10 seconds")), False),
]

SEQUENCE_CASES = [
    ("count", _agg(lambda: sw.count(3, order_by="seq"))),
    ("count-step", _agg(lambda: sw.count(4, step=2, order_by="seq"))),
    ("count-align-end", _agg(lambda: sw.count(3, step=2, align="end", order_by="seq"))),
    ("count-trigger", _agg(lambda: sw.count(5, order_by="seq", count_trigger=2))),
    ("split", _agg(lambda: sw.split("flag", order_by="seq"))),
    ("split-count-trigger", _agg(lambda: sw.split("flag", order_by="seq", count_trigger=2))),
    ("delta", _agg(lambda: sw.delta("v", 5, order_by="seq"))),
    ("punctuation", _agg(lambda: sw.punctuation("flag", order_by="seq"))),
    ("select-count", _select(lambda: sw.count(3, step=2, order_by="seq"))),
]


def _drop_sentinel_windows(rows: list[Row], select: bool) -> Counter:
    """Drops the sentinels' windows: those starting after the key's last real row (in the batch they
    close at teardown; in the stream they stay open), with the empty fillers before them."""
    if select:
        kept = [r for r in rows if r.s != SENTINEL_S and r.k != "zz"]
    else:
        kept = [r for r in rows if r.k != "zz" and r.window.start.timestamp() <= LAST_REAL_S[r.k]]
    return Counter(map(_key, kept))


def _stream_and_batch(spark, tmp_path, build: Build, by_seq: bool, watermark: str | None, seed: int,
                      mode: str = "append"):
    rng = random.Random(seed)
    real = _rows(rng)
    LAST_REAL_S.clear()
    for k, s, *_ in real:
        LAST_REAL_S[k] = max(s, LAST_REAL_S.get(k, s))
    rows = _with_sentinels(real, watermark is not None)
    arrival = sorted(rows, key=(lambda r: r[2]) if by_seq else (lambda r: (r[1], r[2])))
    _write_micro_batches(tmp_path / "in", arrival, rng, batches=rng.randint(3, 6))
    streamed = _run_to_end(spark, build(_source(spark, tmp_path / "in", watermark)), tmp_path / "checkpoint", mode)
    batch = build(_batch(spark, rows)).collect()
    return streamed, batch


@pytest.mark.parametrize("name,build,by_seq", TIME_CASES, ids=[c[0] for c in TIME_CASES])
def test_time_windows_stream_equals_batch(spark, tmp_path, name, build, by_seq):
    streamed, batch = _stream_and_batch(spark, tmp_path, build, by_seq, None, SEED + zlib.crc32(name.encode()) % 1000)
    select = name.startswith("select")
    assert _drop_sentinel_windows(streamed, select) == _drop_sentinel_windows(batch, select)
    assert all(r.window.kind != "partial" or "count-trigger" in name for r in streamed)
    assert len(streamed) > 10


def test_sliding_windows_double_sums_in_a_stream_equal_the_batch_to_the_bit(spark, tmp_path):
    """Floating-point sums depend on the order of their additions: a stream's sliding windows (rows kept
    across micro-batches) merge their timestamps in the order the batch merges its slices, so sums and
    averages of doubles are the same to the last bit."""
    rng = random.Random(SEED)
    rows, s = [], 0
    for seq in range(600):
        s += rng.randint(0, 3)
        rows.append({"k": rng.choice("ab"), "s": s, "seq": seq, "temp": round(rng.uniform(-30, 40), 3) + 0.1})
    last_real = {k: max(r["s"] for r in rows if r["k"] == k) for k in "ab"}
    rows += [{"k": k, "s": s + 10_000, "seq": 600 + i, "temp": 0.5} for i, k in enumerate("ab")]
    folder = tmp_path / "in"
    folder.mkdir()
    cuts = [0, 90, 200, 310, 420, 530, len(rows)]
    for i, (lo, hi) in enumerate(zip(cuts, cuts[1:])):
        path = folder / f"part-{i:04d}.json"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows[lo:hi]))
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    schema = "k string, s long, seq long, temp double"

    def windows(df: DataFrame) -> DataFrame:
        return df.withColumn("ts", F.timestamp_seconds("s")).groupBy("k", sw.sliding("ts", "30 seconds")).agg(
            F.sum("temp").alias("total"), F.avg("temp").alias("mean"))

    def by_window(result: list[Row]) -> dict:
        return {(r.k, r.window.start, r.window.end): (r.total, r.mean) for r in result
                if r.window.end.timestamp() <= last_real[r.k]}

    src = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(folder))
    streamed = by_window(_run_to_end(spark, windows(src), tmp_path / "checkpoint", "append"))
    batch = by_window(windows(spark.read.schema(schema).json(str(folder))).collect())
    assert len(batch) > 300
    assert streamed == batch
    # The sums are not sums of exact binary fractions: the order of additions shows in their last bits.
    assert any(total != round(total, 3) for total, _ in batch.values())


WATERMARK_CASES = [c for c in TIME_CASES if c[0] in {"tumbling", "hopping-order-passthrough", "sliding", "session",
                                                     "sliding-delay-order-passthrough", "sliding-when-delay",
                                                     "interval", "tumbling-emit-empty", "select-session",
                                                     "session-max-duration", "session-dynamic-gap"}]


@pytest.mark.parametrize("name,build,by_seq", WATERMARK_CASES, ids=[c[0] for c in WATERMARK_CASES])
def test_watermark_closes_every_key_like_the_end_of_a_batch(spark, tmp_path, name, build, by_seq):
    # One sentinel row of another key moves the watermark past every window: all keys close.
    streamed, batch = _stream_and_batch(spark, tmp_path, build, by_seq, "10 minutes", SEED + 7)
    select = name.startswith("select")
    assert _drop_sentinel_windows(streamed, select) == _drop_sentinel_windows(batch, select)


@pytest.mark.parametrize("name,build", SEQUENCE_CASES, ids=[c[0] for c in SEQUENCE_CASES])
def test_count_and_data_windows_stream_equals_batch_but_teardown_partials(spark, tmp_path, name, build):
    streamed, batch = _stream_and_batch(spark, tmp_path, build, True, None, SEED + zlib.crc32(name.encode()) % 1000)
    streamed_rows, batch_rows = Counter(map(_key, streamed)), Counter(map(_key, batch))
    assert not streamed_rows - batch_rows, "the stream output something the batch did not"
    missing = batch_rows - streamed_rows
    # Only the windows still open at the end of the stream are missing: the batch's teardown partials.
    window = batch[0].__fields__.index("window")
    assert missing and all(k[window][2] == "partial" for k in missing)
    keys = {r.k for r in batch}
    assert sum(missing.values()) <= 2 * len(keys) * (2 if "select" in name else 1) * 3


@pytest.mark.parametrize("name,build,by_seq", UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES])
def test_update_emission_streams_in_update_mode(spark, tmp_path, name, build, by_seq):
    streamed, batch = _stream_and_batch(spark, tmp_path, build, by_seq, None, SEED + 3, mode="update")
    streamed_rows = _drop_sentinel_windows(streamed, False) if "count" not in name else Counter(map(_key, streamed))
    batch_rows = _drop_sentinel_windows(batch, False) if "count" not in name else Counter(map(_key, batch))
    if "count" in name:
        missing = batch_rows - streamed_rows
        assert not streamed_rows - batch_rows
        assert all(k[1][2] == "partial" for k in missing)
    else:
        assert streamed_rows == batch_rows
    assert any(r.window.kind == "update" for r in streamed)


def test_idle_key_windows_close_on_the_watermark(spark, tmp_path):
    # Key "a" stops after 4 s; only "b" keeps arriving and moves the watermark past a's window.
    rows = [("a", 1, 0, 1, False), ("a", 4, 1, 2, False), ("b", 5, 2, 3, False), ("b", 13, 3, 5, False),
            ("b", 30, 4, 7, False)]
    _write_micro_batches(tmp_path / "in", rows, random.Random(1), batches=3)
    out = _agg(lambda: sw.tumbling("ts", "10 seconds"))(_source(spark, tmp_path / "in", "2 seconds"))
    result = _run_to_end(spark, out, tmp_path / "checkpoint", "append")
    got = sorted((r.k, r.window.start.timestamp(), r.window.kind, r.sv, r.n) for r in result)
    # a's [0, 10) has no later row of its own: the watermark (30 - 2 = 28 s) closed it.
    assert got == [("a", 0.0, "final", 3, 2), ("b", 0.0, "final", 3, 1), ("b", 10.0, "final", 5, 1)]


def test_emit_every_counts_the_watermark_moving_an_idle_key(spark, tmp_path):
    # Key "a" goes silent after 1 s; b's rows move the watermark to 30 - 2 = 28 s, past 10 s and 20 s:
    # a's open window outputs one early result for that move, as a row of its own at 28 s would.
    rows = [("a", 1, 0, 1, False), ("b", 2, 1, 3, False), ("b", 30, 2, 7, False)]
    _write_splits(tmp_path / "in", rows, [2])
    w = sw.tumbling("ts", "60 seconds", emit_every="10 seconds")
    result = _run_to_end(spark, _agg(lambda: w)(_source(spark, tmp_path / "in", "2 seconds")), tmp_path / "checkpoint",
                         "update")
    got = sorted((r.k, r.window.start.timestamp(), r.window.kind, r.sv, r.n) for r in result)
    assert got == [("a", 0.0, "update", 1, 1), ("b", 0.0, "update", 10, 2)]


def test_without_a_watermark_only_the_keys_own_rows_close_its_windows(spark, tmp_path):
    rows = [("a", 1, 0, 1, False), ("a", 4, 1, 2, False), ("b", 5, 2, 3, False), ("b", 30, 3, 7, False)]
    _write_micro_batches(tmp_path / "in", rows, random.Random(2), batches=2)
    out = _agg(lambda: sw.tumbling("ts", "10 seconds"))(_source(spark, tmp_path / "in", None))
    result = _run_to_end(spark, out, tmp_path / "checkpoint", "append")
    assert sorted((r.k, r.window.start.timestamp(), r.n) for r in result) == [("b", 0.0, 1)]


def test_late_rows_behind_the_watermark_reach_the_engine(spark, tmp_path):
    # Spark would drop the row at 9 s (behind the watermark 25 - 2 = 23 s) before a stateful operator;
    # streamwin's engine sees it and passes it through as `late`: nothing is lost.
    rows = [("a", 1, 0, 1, False), ("a", 25, 1, 2, False), ("a", 9, 2, 4, False), ("a", 40, 3, 8, False)]
    folder = tmp_path / "in"
    _write_splits(folder, rows, list(range(1, len(rows))))  # a micro-batch per row
    w = sw.tumbling("ts", "10 seconds", order_by="seq", late="passthrough")
    out = _agg(lambda: w)(_source(spark, folder, "2 seconds"))
    result = _run_to_end(spark, out, tmp_path / "checkpoint", "append", metrics := {})
    got = sorted((r.window.start.timestamp(), r.window.kind, r.sv) for r in result)
    assert (0.0, "late", 4) in got and (0.0, "final", 1) in got and (20.0, "final", 2) in got
    # Row accounting over the run: 3 rows windowed, 1 passed through, nothing lost.
    assert metrics["rowsWindowed"] == 3 and metrics["lateRowsPassedThrough"] == 1
    assert metrics["lateRowsDropped"] == 0 and metrics["rowsSkipped"] == 0
    assert metrics["numOutputRows"] == len(result) and metrics["windowsEmitted"] == len(result)


def test_sliding_when_late_rows_in_a_stream(spark, tmp_path):
    # Only v = 3 and v = 6 open a window. The window of 10 s, [5, 10], fires when the row at 12 s arrives;
    # the row at 5 s, a micro-batch later, is behind it and in no open window: late, passed through under
    # its own time's window [0, 5]. The row at 11 s, behind progress (13 s) too, opens none but joins the
    # window of 13 s, [8, 13], still open.
    rows = [("a", 10, 0, 3, False), ("a", 12, 1, 1, False), ("a", 5, 2, 1, False), ("a", 13, 3, 6, False),
            ("a", 11, 4, 2, False), ("a", 100, 5, 1, False)]
    folder = tmp_path / "in"
    _write_splits(folder, rows, [2, 4, 5])
    w = sw.sliding("ts", "5 seconds", when=F.col("v") % 3 == 0, late="passthrough")
    result = _run_to_end(spark, _agg(lambda: w)(_source(spark, folder, None)), tmp_path / "checkpoint", "append",
                         metrics := {})
    assert sorted((r.window.start.timestamp(), r.window.end.timestamp(), r.window.kind, r.sv) for r in result) == [
        (0.0, 5.0, "late", 1), (5.0, 10.0, "final", 3), (8.0, 13.0, "final", 12)]
    assert metrics["lateRowsPassedThrough"] == 1 and metrics["lateRowsDropped"] == 0


def test_streaming_row_accounting_counts_every_row(spark, tmp_path):
    # Late rows dropped and rows without an event time are counted, as in batch.
    rows = [("a", 1, 0, 1, False), ("a", 25, 1, 2, False), ("a", 9, 2, 4, False), ("a", 40, 3, 8, False)]
    _write_micro_batches(tmp_path / "in", rows, random.Random(4), batches=2)
    src = _source(spark, tmp_path / "in", None).withColumn("ts", F.when(F.col("s") != 40, F.col("ts")))
    out = _agg(lambda: sw.tumbling("ts", "10 seconds", order_by="seq"))(src)
    _run_to_end(spark, out, tmp_path / "checkpoint", "append", metrics := {})
    assert (metrics["rowsWindowed"], metrics["lateRowsDropped"], metrics["rowsSkipped"]) == (2, 1, 1)


@pytest.mark.parametrize("window_of", [
    lambda: sw.tumbling("ts", "10 seconds"),
    lambda: sw.hopping("ts", "20 seconds", "10 seconds"),
    lambda: sw.session("ts", "5 seconds"),
], ids=["tumbling", "hopping", "session"])
def test_time_windows_without_policies_pre_aggregate_each_micro_batch(spark, tmp_path, window_of):
    # Each micro-batch's rows are partially aggregated per (key, slice) before the shuffle, as in
    # batch; a late row (its windows closed by the key's own progress) and a row without a time are
    # still counted, one by one.
    rows = [("a", 1, 0, 1, False), ("a", 3, 1, 5, False), ("a", 25, 2, 2, False), ("a", 9, 3, 4, False),
            ("a", 40, 4, 8, False), ("a", 41, 5, 16, False)]
    _write_splits(tmp_path / "in", rows, [2, 3, 4])
    src = _source(spark, tmp_path / "in", None).withColumn("ts", F.when(F.col("s") != 41, F.col("ts")))
    out = _agg(window_of)(src)
    name = "sw_" + uuid.uuid4().hex[:12]
    query = (out.writeStream.format("memory").queryName(name).outputMode("append")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    try:
        query.processAllAvailable()
        plan = query._jsq.streamingQuery().lastExecution().executedPlan().toString()
        metrics = sw.window_metrics(query)
    finally:
        query.stop()
    result = spark.table(name).collect()
    spark.catalog.dropTempView(name)
    # streamwin's stateful operator over Spark's partial aggregation per (key, slice), after the shuffle.
    operator = plan.index("StatefulWindow")
    assert "TransformWithState" not in plan
    assert plan.index("Exchange", operator) < plan.index("partial_sum", operator), plan
    assert (metrics["rowsWindowed"], metrics["lateRowsDropped"], metrics["rowsSkipped"]) == (4, 1, 1)
    # The same windows as the batch on the rows that were not late (the row at 9 s is late in the stream).
    batch_rows = [r for r in rows if r[1] not in (9, 41)]
    expected = _agg(window_of)(_batch(spark, batch_rows)).collect()
    closed = {_key(r) for r in result}
    assert closed and closed <= {_key(r) for r in expected}
    assert all(r.window.end.timestamp() <= 40 for r in result)


def test_processing_time_timer_windows_hold_each_micro_batch(spark, tmp_path):
    rows = [("a", i, i, 1, False) for i in range(6)]
    _write_micro_batches(tmp_path / "in", rows, random.Random(3), batches=2)
    out = _source(spark, tmp_path / "in", None).groupBy("k", sw.timer("1 second")).agg(F.count("*").alias("n"))
    name = "sw_" + uuid.uuid4().hex[:12]
    query = out.writeStream.format("memory").queryName(name).outputMode("append") \
        .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(processingTime="300 milliseconds").start()
    try:
        deadline = time.time() + 60
        while time.time() < deadline and sum(r.n for r in spark.table(name).collect()) < len(rows):
            time.sleep(0.5)
    finally:
        query.stop()
    result = spark.table(name).collect()
    # Every row is in exactly one closed 1-second window of processing time, counted once.
    assert sum(r.n for r in result) == len(rows)
    assert all(r.window.kind == "final" and (r.window.end - r.window.start).total_seconds() == 1 for r in result)


@pytest.mark.parametrize("state", ["engine", "typed-windows", "sessions-out-of-order"])
def test_exactly_once_across_restarts_from_the_checkpoint(spark, tmp_path, state):
    """A file source -> file sink query stopped and restarted from its checkpoint at least 5 times,
    mid-stream (even while a micro-batch runs): the output equals the batch result, no window twice
    and none missing. Under policies each key's engine is kept; without, its typed open windows.
    Sessions out of event-time order drop late rows, so they equal the same stream run without a stop:
    each restart slices its first micro-batch per timestamp (no bound on the keys' progress is known
    yet), an uninterrupted run slices rows past every key's progress a gap wide."""
    rng = random.Random(SEED)
    rows = _with_sentinels(_rows(rng, 80), watermark=True)
    if state == "engine":
        arrival = sorted(rows, key=lambda r: r[2])
        build = _agg(lambda: sw.tumbling("ts", "10 seconds", order_by="seq", lateness="5 seconds", late="passthrough"))
    elif state == "sessions-out-of-order":
        arrival = sorted(rows, key=lambda r: r[2])
        build = _agg(lambda: sw.session("ts", "3 seconds"))
    else:
        # In event-time order no row is late, so the stream's windows are the batch's.
        arrival = sorted(rows, key=lambda r: (r[1], r[2]))
        build = _agg(lambda: sw.hopping("ts", "20 seconds", "10 seconds"))
    _write_micro_batches(tmp_path / "in", arrival, rng, batches=12)
    sink, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    restarts = 0
    while True:
        if restarts == 6:
            # A stop that lands after the last data batch commits but before the no-data batch that
            # applies its watermark leaves the last windows open: Spark runs a no-data batch only on
            # the previous execution's word, and a restarted query has none. One more row of the
            # watermark key (left out of the comparison) starts a data batch, as new input would.
            tail = tmp_path / "in" / "part-9999.json"
            tail.write_text(json.dumps({"k": "zz", "s": SENTINEL_S + 1, "seq": max(r[2] for r in rows) + 1,
                                        "v": 1, "flag": False}) + "\n")
            os.utime(tail, (2_000_000, 2_000_000))
        query = (
            build(_source(spark, tmp_path / "in", "10 minutes")).writeStream.format("parquet")
            .option("path", str(sink)).option("checkpointLocation", str(checkpoint)).outputMode("append").start()
        )
        if restarts == 6:
            _wait_until_idle(query)
            query.stop()
            break
        # Let one more micro-batch commit, then stop a moment later: often in the middle of the next one.
        before, deadline = _committed(checkpoint), time.time() + 60
        while _committed(checkpoint) <= before and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(rng.random() * 0.4)
        query.stop()
        restarts += 1
    assert restarts >= 5
    streamed = spark.read.parquet(str(sink)).collect()
    if state == "sessions-out-of-order":
        uninterrupted = _run_to_end(spark, build(_source(spark, tmp_path / "in", "10 minutes")), tmp_path / "checkpoint-2",
                                    "append", metrics := {})
        assert metrics["lateRowsDropped"] > 0
        assert Counter(map(_key, streamed)) == Counter(map(_key, uninterrupted))
        return
    batch = build(_batch(spark, rows)).collect()
    assert Counter(map(_key, [r for r in streamed if r.k != "zz"])) == \
        Counter(map(_key, [r for r in batch if r.k != "zz"]))


@needs_state_readers
def test_window_state_rows_are_readable_with_the_statestore_reader(spark, tmp_path):
    # Time windows without policies keep one state row per open window and a small record per key
    # (window_start null): plain typed columns, no serialized engine.
    rows = [("a", 1, 0, 1, False), ("a", 3, 1, 5, False), ("b", 4, 2, 2, False),
            ("a", 12, 3, 3, False), ("a", 25, 4, 7, False), ("b", 31, 5, 1, False)]
    _write_splits(tmp_path / "in", rows, [3])
    out = _source(spark, tmp_path / "in", "5 seconds").groupBy("k", sw.tumbling("ts", "10 seconds")).agg(
        F.sum("v").alias("sv"), F.count("*").alias("n"))
    checkpoint = tmp_path / "checkpoint"
    result = _run_to_end(spark, out, checkpoint, "append")
    assert sorted((r.k, r.window.start.timestamp(), r.sv, r.n) for r in result) == [
        ("a", 0.0, 6, 2), ("a", 10.0, 3, 1), ("b", 0.0, 2, 1)]

    def utc(seconds: int):
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(tzinfo=None)

    state = spark.read.format("statestore").load(str(checkpoint))
    assert state.schema["key"].dataType.fieldNames() == ["k", "window_start"]
    value = state.schema["value"].dataType
    assert value.fieldNames() == ["record", "window"]
    assert value["record"].dataType.fieldNames() == ["progress", "deadline", "windows"]
    assert value["window"].dataType.fieldNames() == ["end", "rows", "buffer"]
    # sum(v), count(*), then the hidden row count.
    assert value["window"].dataType["buffer"].dataType.fieldNames() == ["f0_sum", "f1_count", "f2_count"]
    records = {r.key.k: r.value.record for r in state.where("key.window_start IS NULL").collect()}
    # The watermark (31 - 5 = 26 s) closed every window but the last one of each key, and must pass
    # its end to close it. A key's progress is the start of its latest slice (a window's, here).
    assert (records["a"].progress, records["a"].deadline, records["a"].windows) == (utc(20), utc(30), [utc(20)])
    assert (records["b"].progress, records["b"].deadline, records["b"].windows) == (utc(30), utc(40), [utc(30)])
    windows = state.where("key.window_start IS NOT NULL").collect()
    assert all(r.value.record is None for r in windows)
    assert sorted((r.key.k, r.key.window_start, r.value.window.end, r.value.window.rows, tuple(r.value.window.buffer))
                  for r in windows) == [("a", utc(20), utc(30), 1, (7, 1, 1)), ("b", utc(30), utc(40), 1, (1, 1, 1))]


@needs_state_readers
def test_overlapping_hopping_windows_keep_their_slices_as_state_rows(spark, tmp_path):
    # Hopping 10 s every 5 s: each 5 s slice is one state row, shared by the two windows holding it and
    # written once, rather than a row per window; a window is assembled from its slices when it fires.
    rows = [("a", 1, 0, 1, False), ("a", 7, 1, 5, False), ("a", 12, 2, 3, False), ("b", 4, 3, 2, False),
            ("a", 23, 4, 7, False), ("a", 26, 5, 4, False), ("b", 31, 6, 1, False)]
    _write_splits(tmp_path / "in", rows, [4])
    out = _source(spark, tmp_path / "in", "5 seconds").groupBy("k", sw.hopping("ts", "10 seconds", "5 seconds")).agg(
        F.sum("v").alias("sv"), F.count("*").alias("n"))
    checkpoint = tmp_path / "checkpoint"
    result = _run_to_end(spark, out, checkpoint, "append")
    # The watermark (31 - 5 = 26 s) closed the windows ending by 26 s.
    assert sorted((r.k, r.window.start.timestamp(), r.sv, r.n) for r in result) == [
        ("a", -5.0, 1, 1), ("a", 0.0, 6, 2), ("a", 5.0, 8, 2), ("a", 10.0, 3, 1), ("a", 15.0, 7, 1),
        ("b", -5.0, 2, 1), ("b", 0.0, 2, 1)]

    def utc(seconds: int):
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(tzinfo=None)

    state = spark.read.format("statestore").load(str(checkpoint))
    records = {r.key.k: r.value.record for r in state.where("key.window_start IS NULL").collect()}
    # Key a's open windows [20, 30) and [25, 35) share slice [25, 30); [20, 25) is [20, 30)'s alone.
    assert (records["a"].deadline, records["a"].windows) == (utc(30), [utc(20), utc(25)])
    assert (records["b"].deadline, records["b"].windows) == (utc(35), [utc(30)])
    slices = state.where("key.window_start IS NOT NULL").collect()
    assert sorted((r.key.k, r.key.window_start, r.value.window.end, r.value.window.rows, tuple(r.value.window.buffer))
                  for r in slices) == [("a", utc(20), utc(25), 1, (7, 1, 1)), ("a", utc(25), utc(30), 1, (4, 1, 1)),
                                       ("b", utc(30), utc(35), 1, (1, 1, 1))]


@needs_state_readers
def test_cumulative_windows_keep_their_period_slices_as_state_rows(spark, tmp_path):
    # Cumulate 20 s every 5 s: each 5 s slice is one state row, shared by the windows of its period that
    # hold it; a window is assembled from its period's slices when it fires.
    rows = [("a", 1, 0, 1, False), ("a", 7, 1, 5, False), ("a", 12, 2, 3, False), ("b", 4, 3, 2, False),
            ("a", 23, 4, 7, False), ("a", 26, 5, 4, False), ("b", 31, 6, 1, False)]
    _write_splits(tmp_path / "in", rows, [4])
    out = _source(spark, tmp_path / "in", "5 seconds").groupBy("k", sw.cumulate("ts", "20 seconds", "5 seconds")).agg(
        F.sum("v").alias("sv"), F.count("*").alias("n"))
    checkpoint = tmp_path / "checkpoint"
    result = _run_to_end(spark, out, checkpoint, "append")
    # The watermark (31 - 5 = 26 s) closed the windows ending by 26 s.
    assert sorted((r.k, r.window.start.timestamp(), r.window.end.timestamp(), r.sv, r.n) for r in result) == [
        ("a", 0.0, 5.0, 1, 1), ("a", 0.0, 10.0, 6, 2), ("a", 0.0, 15.0, 9, 3), ("a", 0.0, 20.0, 9, 3),
        ("a", 20.0, 25.0, 7, 1),
        ("b", 0.0, 5.0, 2, 1), ("b", 0.0, 10.0, 2, 1), ("b", 0.0, 15.0, 2, 1), ("b", 0.0, 20.0, 2, 1)]

    def utc(seconds: int):
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(tzinfo=None)

    state = spark.read.format("statestore").load(str(checkpoint))
    records = {r.key.k: r.value.record for r in state.where("key.window_start IS NULL").collect()}
    # Key a's open windows [20, 30), [20, 35) and [20, 40) share both slices of the period so far.
    assert (records["a"].deadline, records["a"].windows) == (utc(30), [utc(20), utc(25)])
    assert (records["b"].deadline, records["b"].windows) == (utc(35), [utc(30)])
    slices = state.where("key.window_start IS NOT NULL").collect()
    assert sorted((r.key.k, r.key.window_start, r.value.window.end, r.value.window.rows, tuple(r.value.window.buffer))
                  for r in slices) == [("a", utc(20), utc(25), 1, (7, 1, 1)), ("a", utc(25), utc(30), 1, (4, 1, 1)),
                                       ("b", utc(30), utc(35), 1, (1, 1, 1))]


@pytest.mark.parametrize("window_of", [lambda: sw.tumbling("ts", "10 seconds"), lambda: sw.count(3, order_by="seq")],
                         ids=["slices", "rows"])
def test_the_avro_state_encoding_is_refused_naming_the_setting(spark, tmp_path, window_of):
    # Windows keep state as Spark's own aggregations do, in UnsafeRow: a clear error, not the state
    # store's assertion in a task.
    _write_splits(tmp_path / "in", [("a", 1, 0, 1, False), ("a", 3, 1, 5, False)], [])
    out = _agg(window_of)(_source(spark, tmp_path / "in", "5 seconds"))
    spark.conf.set("spark.sql.streaming.stateStore.encodingFormat", "avro")
    try:
        with pytest.raises(Exception) as refused:
            _run_to_end(spark, out, tmp_path / "checkpoint", "append")
    finally:
        spark.conf.unset("spark.sql.streaming.stateStore.encodingFormat")
    message = str(refused.value)
    assert "spark.sql.streaming.stateStore.encodingFormat" in message and "`avro`" in message, message
    assert "unsaferow" in message and "new checkpoint location" in message, message


def _query_plan_and_progress(spark, out, checkpoint: Path):
    name = "sw_" + uuid.uuid4().hex[:12]
    query = (out.writeStream.format("memory").queryName(name).outputMode("append")
             .option("checkpointLocation", str(checkpoint)).start())
    try:
        _wait_until_idle(query)
        progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
    finally:
        query.stop()
    result = spark.table(name).collect()
    spark.catalog.dropTempView(name)
    return result, progress


@pytest.mark.parametrize("provider", ["RocksDBStateStoreProvider", "HDFSBackedStateStoreProvider"])
def test_own_stateful_operator_reports_as_sparks_do_on_either_state_store(spark, tmp_path, provider):
    # The operator is a stateful operator of Spark's kind: its state info comes from the query (one
    # operator id per stateful operator, here beside Spark's own deduplication), its metadata names it
    # and its stores, the query progress reports its state rows and window metrics, and it runs on
    # Spark's default state store as well as on RocksDB.
    key = "spark.sql.streaming.stateStore.providerClass"
    previous = spark.conf.get(key)
    spark.conf.set(key, "org.apache.spark.sql.execution.streaming.state." + provider)
    try:
        # (Spark's deduplication drops rows at the epoch itself, at or before its first watermark, 0.)
        rows = [(k, ts + 1, *rest) for k, ts, *rest in _with_sentinels(_rows(random.Random(SEED + 11), 40), watermark=True)]
        arrival = sorted(rows, key=lambda r: (r[1], r[2]))
        _write_splits(tmp_path / "in", arrival, [10, 20, 30])
        build = _agg(lambda: sw.session("ts", "6 seconds"))
        src = _source(spark, tmp_path / "in", "10 minutes").dropDuplicates(["seq"])
        result, progress = _query_plan_and_progress(spark, build(src), tmp_path / "checkpoint")
    finally:
        spark.conf.set(key, previous)
    expected = build(_batch(spark, rows)).collect()
    assert Counter(map(_key, [r for r in result if r.k != "zz"])) == \
        Counter(map(_key, [r for r in expected if r.k != "zz"]))
    if not SPARK_3:  # (no state-metadata reader on 3.5)
        metadata = spark.read.format("state-metadata").load(str(tmp_path / "checkpoint")).collect()
        operators = {(m.operatorId, m.operatorName, m.stateStoreName) for m in metadata}
        assert {name for _, name, _ in operators} == {"streamwinWindow", "dedupe"}
        assert sorted(store for _, name, store in operators if name == "streamwinWindow") == ["default"]
        assert len({op for op, _, _ in operators}) == 2
    last = progress[-1]["stateOperators"]
    assert len({o["operatorName"] for o in last}) == 2
    window = next(o for o in last if o["operatorName"] == "streamwinWindow")
    assert window["numRowsTotal"] >= 1
    assert window["numShufflePartitions"] == int(spark.conf.get("spark.sql.shuffle.partitions"))
    assert set(window["customMetrics"]) >= {"windowsEmitted", "rowsWindowed", "lateRowsDropped", "rowsSkipped"}
    assert sum(next(o for o in p["stateOperators"] if o["operatorName"] == "streamwinWindow")["customMetrics"]
               ["rowsWindowed"] for p in progress) == len(rows)


def _run_with_rows_in_the_store(spark: SparkSession, writer, checkpoint: Path) -> list[dict]:
    """Runs `writer` until idle with every kept row a state row of its own; returns its progress."""
    spark.conf.set("spark.streamwin.stream.inlineKeptRows", "0")
    try:
        query = writer.option("checkpointLocation", str(checkpoint)).start()
        try:
            _wait_until_idle(query)
            return query.recentProgress
        finally:
            query.stop()
    finally:
        spark.conf.unset("spark.streamwin.stream.inlineKeptRows")


@needs_state_readers
def test_a_select_keeps_the_rows_of_its_open_windows_as_state_rows_of_their_own(spark, tmp_path):
    # Each row an open window holds is a state row (key, part 'row', id: its bag, seq -> the row's columns),
    # beside the key's record and its window's row (part 'window', holding the bag's range): a micro-batch
    # adds its rows and removes those of the windows it closed, nothing is rewritten. Spark's state reader
    # reads them back, typed. (Keys holding at most spark.streamwin.stream.inlineKeptRows rows keep them
    # inline: 0 here.)
    rows = _rows(random.Random(SEED + 9), 50)
    arrival = sorted(rows, key=lambda r: r[2])
    _write_splits(tmp_path / "in", arrival, [17, 33])
    checkpoint = tmp_path / "checkpoint"
    out = _source(spark, tmp_path / "in", None).select("k", "v", "seq", sw.count(4, order_by="seq", partition_by="k"))
    progress = _run_with_rows_in_the_store(spark, out.writeStream.format("noop"), checkpoint)[-1]
    # Per key, the rows after its last complete window of 4 are kept.
    expected = {}
    for k in sorted({r[0] for r in rows}):
        seqs = sorted(r[2] for r in rows if r[0] == k)
        expected[k] = seqs[len(seqs) // 4 * 4:]
    operator = progress["stateOperators"][0]
    # A record and a window row per key (a count window keeps its retained rows in one), and the kept rows.
    assert operator["numRowsTotal"] == 2 * len(expected) + sum(map(len, expected.values())), operator
    state = spark.read.format("statestore").load(str(checkpoint))
    assert state.schema["key"].dataType.fieldNames() == ["k", "part", "id", "seq"]
    records = state.where("key.part = 'record'").selectExpr("key.k", "key.id", "value.row", "value.window").collect()
    assert sorted(r.k for r in records) == sorted(expected)
    assert all(r.id is None and r.row is None and r.window is None for r in records)
    windows = {r.k: r for r in state.where("key.part = 'window'").selectExpr(
        "key.k", "value.window.held", "value.window.contents.kind", "value.window.contents.rows.bag",
        "value.window.contents.rows.from", "value.window.contents.rows.until").collect()}
    assert sorted(windows) == sorted(expected)
    kept = state.where("key.part = 'row'").selectExpr("key.k", "key.id AS bag", "key.seq AS place", "value.row.seq",
                                                      "value.row.v", "value.record").collect()
    assert {k: sorted(r.seq for r in kept if r.k == k) for k in expected} == expected
    by_seq = {r[2]: r for r in rows}
    assert all(r.v == by_seq[r.seq][3] and r.record is None for r in kept)
    # A key's rows are consecutive places of one bag, in arrival order: the range its window row holds.
    for k in expected:
        places = sorted((r.place, r.seq) for r in kept if r.k == k)
        # (A count window's rows are counted in the key's record, not in its window row's `held`.)
        stored = 0 if windows[k].bag is None else windows[k].until - windows[k]["from"]
        assert windows[k].kind == "rows" and stored == len(expected[k])
        if places:
            assert {r.bag for r in kept if r.k == k} == {windows[k].bag}
            assert [p for p, _ in places] == list(range(windows[k]["from"], windows[k].until))
        assert [s for _, s in places] == expected[k]


def test_keys_due_without_rows_are_found_without_scanning_the_kept_rows_again(spark, tmp_path):
    # A key whose window the watermark closes while it has no rows is found through the operator's due-key
    # index (each key's deadlines, kept between micro-batches), not by reading every state row again: the kept
    # rows of a key's open window would make each such micro-batch slower than the last. The first micro-batch
    # whose watermark moved scans the store and builds the index; the later ones read no state row to find
    # the keys due: b's session in the third micro-batch, a's first one in the last (without rows).
    a = lambda lo, hi: [("a", s, s, s % 7, False) for s in range(lo, hi)]
    rows = a(1, 11) + a(11, 21) + [("b", 12, 100, 5, False)] + a(21, 31) + a(31, 41) + [("a", 60, 60, 1, False)]
    _write_splits(tmp_path / "in", rows, [10, 21, 31])
    window = lambda: sw.session("ts", "5 seconds", partition_by="k")
    out = _source(spark, tmp_path / "in", "2 seconds").select("k", "seq", window())
    name = "sw_" + uuid.uuid4().hex[:12]
    progress = _run_with_rows_in_the_store(spark, out.writeStream.format("memory").queryName(name),
                                           tmp_path / "checkpoint")
    result = spark.table(name).collect()
    spark.catalog.dropTempView(name)
    scanned = [p["stateOperators"][0]["customMetrics"]["stateRowsScanned"] for p in progress]
    # Micro-batches 0-3 bring rows, 4 only moves the watermark past a's first session.
    assert len(scanned) == 5 and scanned[0] == 0 and scanned[1] > 0 and scanned[2:] == [0, 0, 0], scanned
    expected = _batch(spark, rows).select("k", "seq", window()).collect()
    # The session that begins at 60 is still open when the stream ends (the end of a batch closes it).
    assert Counter(map(tuple, result)) == Counter(map(tuple, [r for r in expected if r.seq != 60]))
    assert {r.k for r in result} == {"a", "b"} and len(result) == 41


# Spark's schema check of a changed aggregation's state, as each line words it. Spark 3.5 checks the schema
# only in the task of partition 0, so streamwin's own check of the window state may refuse first.
SCHEMA_REFUSED = ("StateSchemaNotCompatible|written by another query" if SPARK_3
                  else "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE")


@pytest.mark.parametrize("name, changed, refusal", [
    ("other aggregates", lambda df: df.groupBy("k", sw.count(4, step=2, order_by="seq")).agg(
        F.sum("v").alias("sv"), F.max("v").alias("mv")), SCHEMA_REFUSED),
    ("another window function", lambda df: df.groupBy("k", sw.tumbling("ts", "10 seconds", order_by="seq")).agg(
        F.sum("v").alias("sv")), "written by another query"),
    ("another input column", lambda df: df.withColumn("v2", F.col("v") * 2).select(
        "k", "s", "seq", "v", "v2", sw.count(4, step=2, order_by="seq", partition_by="k")),
     SCHEMA_REFUSED),
])
def test_a_changed_query_is_refused_by_its_windows_state_and_the_old_one_continues(spark, tmp_path, name, changed,
                                                                                     refusal):
    # Each key's windows are typed state rows: Spark's own schema check refuses a changed aggregation
    # buffer or input, as it refuses a changed aggregation of its own; another window function with state
    # rows of the same columns is refused by the fingerprint each key's record carries.
    rows = _with_sentinels(_rows(random.Random(SEED + 5), 40), watermark=False)
    arrival = sorted(rows, key=lambda r: r[2])
    folder, checkpoint, sink = tmp_path / "in", tmp_path / "checkpoint", tmp_path / "out"
    half = len(arrival) // 2
    _write_splits(folder, arrival[:half], [half // 2])
    original = {
        "other aggregates": lambda df: df.groupBy("k", sw.count(4, step=2, order_by="seq")).agg(F.sum("v").alias("sv")),
        "another window function": lambda df: df.groupBy("k", sw.count(4, step=2, order_by="seq")).agg(
            F.sum("v").alias("sv")),
        "another input column": lambda df: df.select("k", "s", "seq", "v",
                                                      sw.count(4, step=2, order_by="seq", partition_by="k")),
    }[name]

    def run(build: Build) -> None:
        query = (build(_source(spark, folder, None)).writeStream.format("parquet").option("path", str(sink))
                 .option("checkpointLocation", str(checkpoint)).outputMode("append").start())
        try:
            _wait_until_idle(query)
        finally:
            query.stop()

    run(original)
    if not SPARK_3:  # (no statestore reader on 3.5)
        assert spark.read.format("statestore").load(str(checkpoint)).where("value.record IS NOT NULL").count() == 3
    path = folder / "later.json"
    path.write_text("".join(json.dumps(dict(zip(("k", "s", "seq", "v", "flag"), r))) + "\n" for r in arrival[half:]))
    os.utime(path, (2_000_000, 2_000_000))
    with pytest.raises(Exception, match=refusal) as refused:
        run(changed)
    if refusal == "written by another query":
        assert "new checkpoint location" in str(refused.value)
    run(original)
    streamed = spark.read.parquet(str(sink)).collect()
    batch = original(_batch(spark, rows)).collect()
    # (A stream has no teardown: the batch's last, partial windows stay open.)
    assert Counter(map(_key, streamed)) == Counter(map(_key, [r for r in batch if r.window.kind != "partial"]))


def _committed(checkpoint: Path) -> int:
    commits = checkpoint / "commits"
    return len([p for p in commits.iterdir() if p.name.isdigit()]) if commits.exists() else 0


def test_sessions_with_max_duration_need_event_time_order_across_micro_batches(spark, tmp_path):
    # eKuiper's cut rule follows event time: a row older than its key's latest is late (counted).
    rows = [("a", 1, 0, 1, False), ("a", 5, 1, 2, False), ("a", 3, 2, 4, False), ("a", 30, 3, 8, False)]
    folder = tmp_path / "in"
    _write_splits(folder, rows, list(range(1, len(rows))))  # a micro-batch per row
    out = _agg(lambda: sw.session("ts", "6 seconds", max_duration="20 seconds"))(_source(spark, folder, None))
    result = _run_to_end(spark, out, tmp_path / "checkpoint", "append", metrics := {})
    assert [(r.window.start.timestamp(), r.window.end.timestamp(), r.sv) for r in result] == [(1.0, 11.0, 3)]
    assert (metrics["rowsWindowed"], metrics["lateRowsDropped"]) == (3, 1)


@pytest.mark.parametrize("name,build", [SEQUENCE_CASES[0], SEQUENCE_CASES[-1], TIME_CASES[2][:2]],
                         ids=["count", "select-count", "tumbling-passthrough"])
def test_windows_fed_rows_run_on_sparks_default_state_store(spark, tmp_path, name, build):
    # Every window runs on streamwin's own operator, on either of Spark's state store providers.
    key = "spark.sql.streaming.stateStore.providerClass"
    previous = spark.conf.get(key)
    spark.conf.set(key, "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider")
    try:
        rows = _with_sentinels(_rows(random.Random(SEED + 17), 40), watermark=False)
        arrival = sorted(rows, key=lambda r: r[2])
        _write_micro_batches(tmp_path / "in", arrival, random.Random(SEED + 18), batches=4)
        streamed = _run_to_end(spark, build(_source(spark, tmp_path / "in", None)), tmp_path / "checkpoint", "append")
    finally:
        spark.conf.set(key, previous)
    batch = build(_batch(spark, rows)).collect()
    # A stream has no teardown: the batch's partial windows (and the sentinels' last ones) stay open;
    # every other window is the batch's.
    closed = Counter(map(_key, [r for r in batch if r.window.kind != "partial"]))
    assert Counter(map(_key, streamed)) - closed == Counter()
    assert sum(closed.values()) - len(streamed) <= 2 * 3


def _chained(df: DataFrame) -> DataFrame:
    """10-second sums per key, windowed again by their event time (window_time) into 1-minute windows."""
    tens = df.groupBy("k", sw.tumbling("ts", "10 seconds")).agg(F.sum("v").alias("sv"), F.count("*").alias("n"))
    return (tens.select("k", F.window_time("window").alias("t"), "sv", "n")
            .groupBy("k", sw.tumbling("t", "1 minute")).agg(F.sum("sv").alias("sv"), F.sum("n").alias("n"),
                                                             F.count("*").alias("tens")))


def test_window_time_chains_windows_in_batch(spark):
    rows = [("a", s, i, 1 + i % 3, False) for i, s in enumerate([1, 5, 12, 25, 59, 61, 75, 130])]
    out = {(r.k, r.window.start.minute, r.window.start.second): (r.sv, r.n, r.tens)
           for r in _chained(_batch(spark, rows)).collect()}
    # 10-second windows at 0, 10, 20, 50 | 60, 70 | 130 s; their window_time is end - 1 µs.
    assert out == {("a", 0, 0): (1 + 2 + 3 + 1 + 2, 5, 4), ("a", 1, 0): (3 + 1, 2, 2), ("a", 2, 0): (2, 1, 1)}



CHAINED_SQL = [
    # The grouped window selected as `window`, in a CTE (Spark's own form with window()).
    """WITH tens AS (SELECT k, window, sum(v) AS sv, count(*) AS n FROM t GROUP BY k, sw_tumbling(ts, '10 seconds'))
       SELECT k, window, sum(sv) AS sv, sum(n) AS n, count(*) AS tens
       FROM (SELECT k, window_time(window) AS t, sv, n FROM tens) GROUP BY k, sw_tumbling(t, '1 minute')""",
    # Renamed, in a subquery grouped by ordinals.
    """SELECT k, window, sum(sv) AS sv, sum(n) AS n, count(*) AS tens
       FROM (SELECT k, window_time(w) AS t, sv, n
             FROM (SELECT k, sw_tumbling(ts, '10 seconds') AS w, sum(v) AS sv, count(*) AS n FROM t GROUP BY 1, 2))
       GROUP BY k, sw_tumbling(t, '1 minute')""",
]


@pytest.mark.parametrize("query", CHAINED_SQL, ids=["cte", "renamed subquery"])
def test_window_time_chains_windows_in_sql(spark, query):
    rows = [("a", s, i, 1 + i % 3, False) for i, s in enumerate([1, 5, 12, 25, 59, 61, 75, 130])]
    _batch(spark, rows).createOrReplaceTempView("t")
    assert sorted(spark.sql(query).collect()) == sorted(_chained(_batch(spark, rows)).collect())



@pytest.mark.parametrize("cuts", [[3, 6, 9], list(range(1, 11))], ids=["4 micro-batches", "a row per micro-batch"])
def test_window_time_chains_windows_in_a_stream(spark, tmp_path, cuts):
    # Two stateful operators in one stream: 10-second windows, then 1-minute windows over their
    # window_time. The watermark travels with the window column, so both close in append mode.
    rows = [("a", s, i, 1 + i % 3, False) for i, s in enumerate([1, 5, 12, 25, 59, 61, 75, 130, 200, 260, 400])]
    _write_splits(tmp_path / "in", rows, cuts)
    streamed = _run_to_end(spark, _chained(_source(spark, tmp_path / "in", "0 seconds")), tmp_path / "checkpoint",
                           "append")
    batch = _chained(_batch(spark, rows)).collect()
    # The last minute is still open when the stream's input ends; every window before it is final.
    last = max(r.window.start for r in batch)
    assert sorted(map(_key, streamed)) == sorted(_key(r) for r in batch if r.window.start < last)
    assert len(streamed) >= 4
