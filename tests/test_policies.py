"""Event-time policies on every window (issue 5): order_by, lateness, late passthrough, update
emission, count trigger, empty windows, row accounting and bad policy specifications.
Seeds 000 (KX window options) and 002 (Quix grace, current()/final())."""

from __future__ import annotations

import random
import zlib

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

import streamwin as sw


def arrivals(spark, seconds, key="a"):
    """Rows arriving one by one in the given order: seq is the arrival order, ts the event time."""
    rows = [(key, i, s) for i, s in enumerate(seconds)]
    return spark.createDataFrame(rows, "k string, seq long, s long").withColumn("ts", F.timestamp_seconds("s"))


def windows(df, window, *aggs):
    """(start second, kind, sorted members) per output row, in output order."""
    out = df.groupBy("k", window).agg(F.sort_array(F.collect_list("s")).alias("members"), *aggs)
    return out, [(r.window.start.second + 60 * r.window.start.minute, r.window.kind, list(r.members))
                 for r in out.collect()]


def test_kx_lateness_rows_one_by_one(spark):
    df = arrivals(spark, [0, 4, 3, 8, 10, 1, 12, 9, 20, 18, 25])
    q, out = windows(df, sw.tumbling("ts", "10 seconds", lateness="2 seconds", order_by="seq"))
    assert sorted(out) == [(0, "final", [0, 1, 3, 4, 8]), (10, "final", [10, 12, 18]), (20, "final", [20, 25])]
    m = sw.window_metrics(q)
    assert (m["rowsWindowed"], m["lateRowsDropped"], m["rowsSkipped"]) == (10, 1, 0)


def test_kx_lateness_single_batch_without_order_is_event_time_order(spark):
    df = arrivals(spark, [0, 4, 3, 8, 10, 1, 12, 9, 20, 18, 25])
    q, out = windows(df, sw.tumbling("ts", "10 seconds", lateness="2 seconds"))
    assert sorted(out) == [(0, "final", [0, 1, 3, 4, 8, 9]), (10, "final", [10, 12, 18]), (20, "final", [20, 25])]
    assert sw.window_metrics(q)["lateRowsDropped"] == 0


def test_kx_passthrough_nothing_lost(spark):
    df = arrivals(spark, [60, 68, 70, 0, 15, 30, 83, 84])
    q, out = windows(df, sw.tumbling("ts", "10 seconds", late="passthrough", order_by="seq"))
    # KX: when the next window is triggered the late rows come out first, then the window.
    assert out == [(60, "final", [60, 68]), (0, "late", [0]), (10, "late", [15]), (30, "late", [30]),
                   (70, "final", [70]), (80, "final", [83, 84])]
    assert sorted(x for _, _, members in out for x in members) == [0, 15, 30, 60, 68, 70, 83, 84]
    m = sw.window_metrics(q)
    assert (m["rowsWindowed"], m["lateRowsPassedThrough"], m["lateRowsDropped"]) == (5, 3, 0)


def test_passthrough_in_select_tags_each_late_row(spark):
    df = arrivals(spark, [60, 68, 70, 0, 15, 30, 83, 84])
    out = df.select("s", sw.tumbling("ts", "10 seconds", late="passthrough", order_by="seq", partition_by="k"))
    tagged = sorted((r.s, r.window.kind, r.window.start.second + 60 * r.window.start.minute) for r in out.collect())
    assert tagged == [(0, "late", 0), (15, "late", 10), (30, "late", 30), (60, "final", 60), (68, "final", 60),
                      (70, "final", 70), (83, "final", 80), (84, "final", 80)]


def ms_rows(spark, millis):
    return spark.createDataFrame([("a", i, m) for i, m in enumerate(millis)], "k string, seq long, ms long") \
        .withColumn("ts", F.timestamp_millis("ms")).withColumn("value", F.lit(1))


def test_quix_current_updates_after_every_row(spark):
    out = ms_rows(spark, [100, 101, 102]).groupBy("k", sw.tumbling("ts", "10 seconds", emit="update")) \
        .agg(F.sum("value").alias("value")).collect()
    got = [(r.window.start.timestamp() * 1000, r.window.end.timestamp() * 1000, r.window.kind, r.value) for r in out]
    assert got == [(0, 10000, "update", 1), (0, 10000, "update", 2), (0, 10000, "update", 3),
                   (0, 10000, "final", 3)]


def test_quix_final_window_closes_when_progress_passes_its_end(spark):
    df = ms_rows(spark, [100, 101, 10001])
    out = df.groupBy("k", sw.tumbling("ts", "10 seconds", order_by="seq", emit="update")) \
        .agg(F.sum("value").alias("value")).collect()
    got = [(r.window.start.timestamp() * 1000, r.window.kind, r.value) for r in out]
    # The final of [0, 10000) comes right after the row at 10001 (its update), before the end of input
    # closes [10000, 20000).
    assert got == [(0, "update", 1), (0, "update", 2), (10000, "update", 1), (0, "final", 2), (10000, "final", 1)]
    finals = df.groupBy("k", sw.tumbling("ts", "10 seconds")).agg(F.sum("value").alias("value")).collect()
    assert sorted((r.window.start.timestamp() * 1000, r.window.kind, r.value) for r in finals) == \
        [(0, "final", 2), (10000, "final", 1)]


def test_count_trigger_flushes_partials(spark):
    df = arrivals(spark, list(range(25)))
    out = df.groupBy("k", sw.tumbling("ts", "1 minute", count_trigger=10)).count().collect()
    assert [(r.window.kind, r["count"]) for r in out] == [("partial", 10), ("partial", 10), ("final", 5)]


def test_emit_empty_windows_between_first_and_last(spark):
    df = arrivals(spark, [0, 35]).withColumn("v", F.lit(1.5))
    out = df.groupBy("k", sw.tumbling("ts", "10 seconds", emit_empty=True)) \
        .agg(F.count("*").alias("n"), F.sum("v").alias("total")).orderBy("window").collect()
    assert [(r.window.start.second, r.window.kind, r.n, r.total) for r in out] == \
        [(0, "final", 1, 1.5), (10, "final", 0, None), (20, "final", 0, None), (30, "final", 1, 1.5)]
    # Without it (the default) only the windows holding rows.
    assert df.groupBy("k", sw.tumbling("ts", "10 seconds")).count().count() == 2


def test_policies_on_count_and_data_windows(spark):
    df = arrivals(spark, list(range(7)))
    out = df.groupBy("k", sw.count(3, order_by="seq", emit="update")).agg(F.sum("s").alias("t")).collect()
    assert [(r.window.kind, r.t) for r in out] == [
        ("update", 0), ("update", 1), ("update", 3), ("final", 3), ("update", 3), ("update", 7), ("update", 12),
        ("final", 12), ("update", 6), ("partial", 6)]
    # Overlapping (Quix sliding count) windows: every open window holding the row is updated.
    out = df.where("s < 4").groupBy("k", sw.count(3, step=1, order_by="seq", emit="update")) \
        .agg(F.sum("s").alias("t")).collect()
    assert [(r.window.kind, r.t) for r in out] == [
        ("update", 0), ("update", 1), ("update", 1), ("update", 3), ("final", 3), ("update", 3), ("update", 2),
        ("update", 6), ("final", 6), ("update", 5), ("update", 3), ("partial", 5), ("partial", 3)]
    hop = df.groupBy("k", sw.count(4, step=2, order_by="seq", count_trigger=3)).agg(F.sum("s").alias("t")).collect()
    assert [(r.window.start, r.window.end, r.window.kind, r.t) for r in hop] == [
        (0, 2, "partial", 3), (3, 3, "final", 3), (2, 4, "partial", 9), (5, 5, "final", 5), (4, 6, "partial", 15),
        (6, 6, "partial", 6)]
    split = df.groupBy("k", sw.split(F.col("s") == 5, order_by="seq", count_trigger=2)).agg(F.sum("s").alias("t"))
    assert [(r.window.start, r.window.end, r.window.kind, r.t) for r in split.collect()] == [
        (0, 1, "partial", 1), (2, 3, "partial", 5), (4, 4, "final", 4), (5, 6, "partial", 11)]


def test_interval_panes_with_passthrough_and_updates(spark):
    df = arrivals(spark, [1, 12, 3])
    _, out = windows(df, sw.interval("ts", "10 seconds", order_by="seq", late="passthrough"))
    assert out == [(0, "final", [1]), (0, "late", [3]), (10, "final", [12])]
    df = arrivals(spark, [1, 2, 12])
    q, out = windows(df, sw.interval("ts", "10 seconds", emit="update"), F.sum("s").alias("t"))
    assert [(start, kind, members) for start, kind, members in out] == [
        (0, "update", [1]), (0, "update", [1, 2]), (10, "update", [12]), (0, "final", [1, 2]), (10, "final", [12])]
    m = sw.window_metrics(q)
    assert (m["rowsWindowed"], m["lateRowsPassedThrough"]) == (3, 0)


def test_sliding_windows_with_arrival_order(spark):
    df = arrivals(spark, [0, 5, 20, 3, 12])
    q, out = windows(df, sw.sliding("ts", "10 seconds", order_by="seq"))
    # 3 arrives after its own window and every later one within 10 s closed; 12 still joins [10, 20].
    assert [(start, kind, m) for start, kind, m in out] == [
        (3590, "final", [0]), (3595, "final", [0, 5]), (10, "final", [12, 20])]  # 23:59:50, 23:59:55
    m = sw.window_metrics(q)
    assert (m["rowsWindowed"], m["lateRowsDropped"]) == (4, 1)


def test_sessions_with_arrival_order_and_lateness(spark):
    df = arrivals(spark, [0, 3, 20, 2, 18])
    q, out = windows(df, sw.session("ts", "5 seconds", order_by="seq"))
    assert out == [(0, "final", [0, 3]), (18, "final", [18, 20])]
    assert sw.window_metrics(q)["lateRowsDropped"] == 1
    _, out = windows(df, sw.session("ts", "5 seconds", order_by="seq", lateness="15 seconds"))
    assert out == [(0, "final", [0, 2, 3]), (18, "final", [18, 20])]
    _, out = windows(df, sw.session("ts", "5 seconds", order_by="seq", late="passthrough"))
    assert out == [(0, "final", [0, 3]), (2, "late", [2]), (18, "final", [18, 20])]


REPLAYED = [
    ("tumbling", lambda **p: sw.tumbling("ts", "10 seconds", **p)),
    ("hopping", lambda **p: sw.hopping("ts", "10 seconds", "4 seconds", **p)),
    ("sliding", lambda **p: sw.sliding("ts", "10 seconds", **p)),
    ("session", lambda **p: sw.session("ts", "5 seconds", **p)),
]


@pytest.mark.parametrize("family,make", REPLAYED, ids=[r[0] for r in REPLAYED])
def test_replay_equals_the_slice_path_when_nothing_is_late(spark, family, make):
    """Rows in any arrival order with a lateness longer than the input (nothing late), or update
    emission in event-time order: the final windows equal those of the batch slice path."""
    rnd = random.Random(zlib.crc32(family.encode()))
    rows = [(rnd.choice("ab"), i, rnd.randrange(0, 200), rnd.randrange(0, 10)) for i in range(150)]
    rnd.shuffle(rows)
    df = spark.createDataFrame(rows, "k string, seq long, s long, v long").withColumn("ts", F.timestamp_seconds("s")) \
        .repartition(3)

    def finals(window):
        out = df.groupBy("k", window).agg(F.sum("v").alias("t"), F.count("*").alias("n"))
        return sorted((r.k, r.window.start, r.window.end, r.t, r.n) for r in out.collect() if r.window.kind == "final")

    expected = finals(make())
    assert finals(make(order_by="seq", lateness="1000 seconds")) == expected
    assert finals(make(emit="update")) == expected


@pytest.mark.parametrize("late", ["drop", "passthrough"])
def test_tumbling_order_by_aggregates_keys_that_arrived_in_order_and_replays_the_others(spark, late):
    """Tumbling windows with order_by (and lateness) are aggregated as Spark's window() for keys whose
    rows arrived in event-time order, and replayed for the others: the same windows and the same
    row accounting as a replay of every key (forced by a count trigger no window reaches)."""
    rnd = random.Random(7)
    rows, seq = [], 0
    for key in "abcdefgh":
        times = [rnd.randrange(i * 3, i * 3 + 3) for i in range(40)]  # in event-time order
        if key in "bf":
            times[25], times[5] = times[5], times[25]  # one row arrives 60 s late
        if key == "d":
            times[10] = None  # a row without event time: its order might tie, so the key is replayed
        for t in times:
            seq += 1
            rows.append((key, seq if rnd.random() > 0.03 else None, t, rnd.randrange(0, 10)))
    rnd.shuffle(rows)
    df = spark.createDataFrame(rows, "k string, seq long, s long, v long").withColumn("ts", F.timestamp_seconds("s")) \
        .repartition(3)

    def run(**extra):
        out = df.groupBy("k", sw.tumbling("ts", "10 seconds", order_by="seq", lateness="5 seconds", late=late, **extra)) \
            .agg(F.sum("v").alias("t"), F.count("*").alias("n"), F.min("s").alias("lo"), F.max("s").alias("hi"))
        got = sorted((r.k, r.window.start, r.window.kind, r.t, r.n, r.lo, r.hi) for r in out.collect())
        m = sw.window_metrics(out)
        m.pop("peakBufferedRows")
        return got, m, out._jdf.queryExecution().executedPlan().toString()

    fast, fast_metrics, plan = run()
    replayed, replayed_metrics, _ = run(count_trigger=10**9)
    assert "OrderedTumblingAggregate" in plan
    assert fast == replayed
    assert fast_metrics == replayed_metrics
    assert fast_metrics["lateRowsDropped"] + fast_metrics["lateRowsPassedThrough"] > 0


def test_tumbling_order_by_order_sensitive_aggregates_follow_order_by(spark):
    """first(), last() and collect_list() see a window's rows in order_by order, so those windows are
    replayed even when every row arrived in event-time order."""
    rows = [("a", 3, 1, 30), ("a", 1, 2, 10), ("a", 2, 5, 20), ("a", 4, 12, 40)]
    rows = [("a", seq, s, v) for seq, (_, _, s, v) in enumerate(sorted(rows, key=lambda r: r[2]))]
    df = spark.createDataFrame(rows, "k string, seq long, s long, v long").withColumn("ts", F.timestamp_seconds("s")) \
        .repartition(3)
    out = df.groupBy("k", sw.tumbling("ts", "10 seconds", order_by="seq", lateness="1 second")).agg(
        F.first("v").alias("first"), F.last("v").alias("last"), F.collect_list("v").alias("vs"))
    assert "OrderedTumblingAggregate" not in out._jdf.queryExecution().executedPlan().toString()
    assert sorted((r.first, r.last, r.vs) for r in out.collect()) == [(30, 20, [30, 10, 20]), (40, 40, [40])]


def test_tumbling_order_by_ties_fail_even_when_every_key_is_in_order(spark):
    rows = [("a", 1, 1), ("a", 2, 2), ("a", 2, 3), ("b", 1, 1)]  # seq 2 twice in one window of key a
    df = spark.createDataFrame(rows, "k string, seq long, s long").withColumn("ts", F.timestamp_seconds("s")).repartition(2)
    with pytest.raises(Exception, match=r"two rows of the same key have order_by `seq` = 2"):
        df.groupBy("k", sw.tumbling("ts", "10 seconds", order_by="seq", lateness="1 second")).count().collect()


def test_sql_uses_the_same_policy_names(spark):
    arrivals(spark, [0, 4, 3, 8, 10, 1, 12, 9, 20, 18, 25]).createOrReplaceTempView("kx_rows")
    w = "sw_tumbling(ts, '10 seconds', 'lateness', '2 seconds', 'order_by', seq)"
    pairs = spark.sql(f"SELECT {w} AS window, count(*) AS n FROM kx_rows GROUP BY k, {w} ORDER BY window").collect()
    w = ("sw_tumbling(ts, '10 seconds', lateness => INTERVAL 2 SECONDS, order_by => seq, late => 'drop', "
         "emit => 'final', emit_empty => false)")
    named = spark.sql(f"SELECT {w} AS window, count(*) AS n FROM kx_rows GROUP BY k, {w} ORDER BY window").collect()
    assert [(r.window.kind, r.n) for r in pairs] == [(r.window.kind, r.n) for r in named] == [("final", 5), ("final", 3), ("final", 2)]


# Every family with the policies it takes; each runs on random rows with null times and orders.
FAMILY_POLICIES = [
    ("tumbling", lambda **p: sw.tumbling("ts", "10 seconds", **p),
     [{}, {"order_by": "seq"}, {"order_by": "seq", "lateness": "5 seconds"},
      {"order_by": "seq", "late": "passthrough"}, {"order_by": "seq", "emit": "update", "count_trigger": 3},
      {"emit_empty": True}]),
    ("hopping", lambda **p: sw.hopping("ts", "10 seconds", "4 seconds", **p),
     [{}, {"order_by": "seq", "lateness": "3 seconds"}, {"order_by": "seq", "late": "passthrough", "count_trigger": 2},
      {"emit": "update", "emit_empty": True}]),
    ("hopping with gaps", lambda **p: sw.hopping("ts", "3 seconds", "7 seconds", **p),
     [{}, {"order_by": "seq", "late": "passthrough"}, {"order_by": "seq"}]),
    ("timer", lambda **p: sw.timer("10 seconds", ingest_time="ts", **p),
     [{}, {"count_trigger": 4}, {"emit": "update", "emit_empty": True}]),
    ("sliding", lambda **p: sw.sliding("ts", "10 seconds", **p),
     [{}, {"order_by": "seq", "lateness": "5 seconds"}, {"order_by": "seq", "late": "passthrough", "emit": "update"}]),
    ("session", lambda **p: sw.session("ts", "5 seconds", **p),
     [{}, {"order_by": "seq"}, {"order_by": "seq", "late": "passthrough", "count_trigger": 2}, {"emit": "update"}]),
    ("session with max_duration", lambda **p: sw.session("ts", "5 seconds", max_duration="20 seconds", **p), [{}]),
    ("interval", lambda **p: sw.interval("ts", "10 seconds", creation_period="5 seconds", **p),
     [{}, {"order_by": "seq", "discard_age": "3 seconds"}, {"order_by": "seq", "late": "passthrough"},
      {"order_by": "seq", "emit": "update"}]),
    ("count", lambda **p: sw.count(4, order_by="seq", **p), [{}, {"emit": "update"}, {"count_trigger": 3}]),
    ("sliding count", lambda **p: sw.count(4, step=1, order_by="seq", **p), [{}, {"emit": "update", "count_trigger": 3}]),
    ("split", lambda **p: sw.split(F.col("v") > 7, order_by="seq", **p), [{}, {"emit": "update", "count_trigger": 2}]),
    ("delta", lambda **p: sw.delta("v", 3, order_by="seq", **p), [{}, {"count_trigger": 2}]),
    ("punctuation", lambda **p: sw.punctuation(F.col("v") > 8, order_by="seq", **p), [{"emit": "update"}]),
]


@pytest.mark.parametrize("family,make,policies", FAMILY_POLICIES, ids=[f[0] for f in FAMILY_POLICIES])
def test_every_row_is_windowed_late_or_skipped(spark, family, make, policies):
    rnd = random.Random(zlib.crc32(family.encode()))
    rows = []
    for i in range(120):
        key = rnd.choice("abc")
        t = rnd.randrange(0, 90) if rnd.random() > 0.05 else None
        seq = i if rnd.random() > 0.05 else None
        v = rnd.randrange(0, 10) if rnd.random() > 0.05 else None
        rows.append((key, seq, t, v))
    df = spark.createDataFrame(rows, "k string, seq long, s long, v long").withColumn("ts", F.timestamp_seconds("s")) \
        .repartition(3)
    for p in policies:
        q = df.groupBy("k", make(**p)).count()
        q.collect()
        m = sw.window_metrics(q)
        accounted = m["rowsWindowed"] + m["lateRowsDropped"] + m["lateRowsPassedThrough"] + m["rowsSkipped"]
        assert accounted == len(rows), (family, p, m)


BAD_POLICIES = [
    ("lateness < 0", lambda: sw.tumbling("ts", "10 seconds", lateness="-1 second"),
     r"sw_tumbling: argument `lateness` must be zero or positive"),
    ("lateness a number", lambda: sw.tumbling("ts", "10 seconds", lateness=5),
     r"sw_tumbling: argument `lateness` must be a duration"),
    ("lateness in months", lambda: sw.hopping("ts", "10 seconds", "5 seconds", lateness="1 month"),
     r"sw_hopping: argument `lateness` must be a fixed duration"),
    ("unknown late value", lambda: sw.tumbling("ts", "10 seconds", late="keep"),
     r"sw_tumbling: argument `late` must be one of 'drop', 'passthrough', got 'keep'"),
    ("late not a string", lambda: sw.tumbling("ts", "10 seconds", late=True),
     r"sw_tumbling: argument `late` must be one of 'drop', 'passthrough'"),
    ("unknown emit value", lambda: sw.tumbling("ts", "10 seconds", emit="current"),
     r"sw_tumbling: argument `emit` must be one of 'final', 'update', got 'current'"),
    ("count_trigger zero", lambda: sw.tumbling("ts", "10 seconds", count_trigger=0),
     r"sw_tumbling: argument `count_trigger` must be a positive whole number of rows, got 0"),
    ("count_trigger negative", lambda: sw.hopping("ts", "10 seconds", "5 seconds", count_trigger=-3),
     r"sw_hopping: argument `count_trigger` must be a positive whole number of rows, got -3"),
    ("count_trigger fractional", lambda: sw.tumbling("ts", "10 seconds", count_trigger=2.5),
     r"sw_tumbling: argument `count_trigger` must be a positive whole number of rows"),
    ("count_trigger a string", lambda: sw.count(5, order_by="seq", count_trigger="10"),
     r"sw_count: argument `count_trigger` must be a positive whole number of rows"),
    ("emit_empty not boolean", lambda: sw.tumbling("ts", "10 seconds", emit_empty="yes"),
     r"sw_tumbling: argument `emit_empty` must be TRUE or FALSE"),
    ("emit_empty on a count window", lambda: sw.count(5, order_by="seq", emit_empty=True),
     r"sw_count: argument `emit_empty` is not available for sw_count: applies to time windows"),
    ("emit_empty on a split window", lambda: sw.split(F.col("flag"), order_by="seq", emit_empty=True),
     r"sw_split: argument `emit_empty` is not available for sw_split"),
    ("lateness on a count window", lambda: sw.count(5, order_by="seq", lateness="1 second"),
     r"sw_count: argument `lateness` is not available for sw_count: applies to event-time windows"),
    ("late on a delta window", lambda: sw.delta("v", 1.0, order_by="seq", late="passthrough"),
     r"sw_delta: argument `late` is not available for sw_delta"),
    ("lateness on a timer", lambda: sw.timer("5 seconds", lateness="1 second"),
     r"sw_timer: argument `lateness` is not available for sw_timer: timer windows follow processing time"),
    ("order_by on a timer", lambda: sw.timer("5 seconds", order_by="seq"),
     r"sw_timer: argument `order_by` is not available for sw_timer"),
    ("lateness on interval panes", lambda: sw.interval("ts", "10 seconds", lateness="1 second"),
     r"sw_interval: argument `lateness` is not available for sw_interval: use discard_age"),
    ("count trigger on interval panes", lambda: sw.interval("ts", "10 seconds", count_trigger=5),
     r"sw_interval: argument `count_trigger` is not available for sw_interval: SPL timeInterval re-emits"),
    ("emit_empty on interval panes", lambda: sw.interval("ts", "10 seconds", emit_empty=True),
     r"sw_interval: argument `emit_empty` is not available for sw_interval"),
    ("update on end-aligned count windows", lambda: sw.count(5, step=1, align="end", order_by="seq", emit="update"),
     r"sw_count: argument `emit` is not available for sw_count: needs start-aligned count windows"),
    ("count trigger on end-aligned count windows", lambda: sw.count(4, align="end", order_by="seq", count_trigger=2),
     r"sw_count: argument `count_trigger` is not available for sw_count"),
    ("count trigger on sliding windows", lambda: sw.sliding("ts", "10 seconds", count_trigger=5),
     r"sw_sliding: argument `count_trigger` is not available for sw_sliding: sliding windows overlap"),
    ("emit_empty on sliding windows", lambda: sw.sliding("ts", "10 seconds", emit_empty=True),
     r"sw_sliding: argument `emit_empty` is not available for sw_sliding"),
    ("update on sessions with max_duration", lambda: sw.session("ts", "10 seconds", max_duration="1 minute",
                                                               emit="update"),
     r"sw_session: argument `emit` is not available for sw_session: not available with max_duration"),
    ("lateness on dynamic-gap sessions", lambda: sw.session("ts", F.concat(F.lit("5 "), F.lit("seconds")), lateness="1 second"),
     r"sw_session: argument `lateness` is not available for sw_session"),
    ("emit_empty on sessions", lambda: sw.session("ts", "10 seconds", emit_empty=True),
     r"sw_session: argument `emit_empty` is not available for sw_session: a session always holds rows"),
    ("unknown policy name", lambda: sw.tumbling("ts", "10 seconds", grace="1 second"),
     r"sw_tumbling: argument `grace` is not an option of sw_tumbling; allowed options: .*lateness, late, emit, "
     r"count_trigger, emit_empty"),
    ("misspelt policy name", lambda: sw.count(5, order_by="seq", counttrigger=3),
     r"sw_count: argument `counttrigger` is not an option of sw_count"),
    ("order_by of an unsupported type", lambda: sw.tumbling("ts", "10 seconds", order_by="arr"),
     r"sw_tumbling: argument `order_by` must be a numeric, string, date or timestamp column, got ARRAY<INT>"),
    ("lateness twice", lambda: F.call_function("sw_tumbling", F.col("ts"), F.lit("1 second"), F.lit("lateness"),
                                               F.lit("1 second"), F.lit("lateness"), F.lit("2 seconds")),
     r"sw_tumbling: argument `lateness` is given more than once"),
    ("null lateness", lambda: F.call_function("sw_tumbling", F.col("ts"), F.lit("1 second"), F.lit("lateness"),
                                              F.lit(None)),
     r"sw_tumbling: argument `lateness` must be a duration.*not NULL"),
    ("idle_timeout on sliding windows", lambda: sw.sliding("ts", "10 seconds", idle_timeout="1 minute"),
     r"sw_sliding: argument `idle_timeout` is not available for sw_sliding: it outputs and flushes what a window "
     r"holds, as count_trigger does, and sliding windows overlap and share their rows"),
    ("idle_timeout on end-aligned count windows", lambda: sw.count(3, order_by="seq", align="end", idle_timeout="1 minute"),
     r"sw_count: argument `idle_timeout` is not available for sw_count"),
    ("idle_timeout not a duration", lambda: sw.tumbling("ts", "10 seconds", idle_timeout="soon"),
     r"sw_tumbling: argument `idle_timeout` must be a duration.*cannot parse 'soon'"),
    ("zero idle_timeout", lambda: sw.session("ts", "5 seconds", idle_timeout="0 seconds"),
     r"sw_session: argument `idle_timeout` must be"),
    ("partition_by in groupBy", lambda: sw.tumbling("ts", "10 seconds", emit="update", partition_by="k"),
     r"sw_tumbling: argument `partition_by` is only for select"),
]


@pytest.fixture(scope="module")
def typed(spark):
    return spark.sql("SELECT 'a' AS k, TIMESTAMP'2024-01-01 00:00:00' AS ts, 1L AS seq, 2.0 AS v, "
                     "true AS flag, array(1) AS arr")


@pytest.mark.parametrize("description,make,message", BAD_POLICIES, ids=[c[0] for c in BAD_POLICIES])
def test_bad_policy_specifications(typed, description, make, message):
    with pytest.raises(AnalysisException, match=message):
        typed.groupBy("k", make()).count().collect()


def test_at_least_25_bad_policy_cases():
    assert len(BAD_POLICIES) >= 25
