"""Per-event sliding windows and sessions: the seeds' examples, Spark's session_window, pure-Python models."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pyspark.sql import functions as F

import streamwin as sw

EPOCH = dt.datetime(1970, 1, 1)


def secs(t: dt.datetime) -> float:
    return (t - EPOCH).total_seconds()


# (key, event time in whole seconds or None, value); whole seconds make equal timestamps common.
rows_strategy = st.lists(
    st.tuples(st.integers(0, 4), st.one_of(st.none(), st.integers(-40, 120)), st.integers(-20, 20)),
    max_size=120,
)


def make_df(spark, rows, n):
    data = [(k, None if t is None else EPOCH + dt.timedelta(seconds=t), v) for k, t, v in rows]
    return spark.createDataFrame(data, "k int, ts timestamp, v int").repartition(n)


def summarise(df, with_kind=True):
    """{(k, start s, end s, kind): sorted values} of a grouped result with a `vs` column."""
    return {(r.k, secs(r.window.start), secs(r.window.end)) + ((r.window.kind,) if with_kind else ()): sorted(r.vs)
            for r in df.collect()}


# ---------------------------------------------------------------- sliding

def tagged_members(tagged):
    """{(k, start s, end s, kind): sorted values} of a select's tagged rows, as `summarise` of a groupBy."""
    members = defaultdict(list)
    for r in tagged.collect():
        members[(r.k, secs(r.window.start), secs(r.window.end), r.window.kind)].append(r.v)
    return {key: sorted(vs) for key, vs in members.items()}


QUIX_TEMPERATURES = [(30, 3600000), (29, 4800000), (28, 4800001), (27, 7200000), (26, 7200001)]


def test_quix_sliding_window_of_one_hour(spark):
    # Quix docs: .sliding_window(duration_ms=timedelta(hours=1)).mean() gives, per message, the average
    # over [t - 1h, t] with both ends inclusive: 30, 29.5, 29, 28.5, 27.5 (reading 30 leaves the last one).
    df = spark.createDataFrame([("s1", temp, ts) for temp, ts in QUIX_TEMPERATURES], "sensor string, temperature int, ms long")
    df = df.withColumn("ts", F.timestamp_millis("ms"))
    out = df.groupBy("sensor", sw.sliding("ts", "1 hour")).agg(F.avg("temperature").alias("avg_temperature"))
    got = [(r.avg_temperature, int(secs(r.window.start) * 1000), int(secs(r.window.end) * 1000), r.window.kind)
           for r in out.orderBy("window").collect()]
    assert got == [
        (30.0, 0, 3600000, "final"),
        (29.5, 1200000, 4800000, "final"),
        (29.0, 1200001, 4800001, "final"),
        (28.5, 3600000, 7200000, "final"),
        (27.5, 3600001, 7200001, "final"),
    ]


def test_sliding_rows_with_equal_timestamps_share_one_window(spark):
    # The rule: one window per distinct event time, holding every row at that time (Quix: no
    # redundant windows; every interval has a distinct aggregation). Arrival order does not matter.
    df = spark.sql("SELECT timestamp_seconds(s) AS ts, v FROM VALUES (0, 1), (5, 2), (5, 3), (9, 4) AS t(s, v)")
    out = df.groupBy(sw.sliding("ts", "5 seconds")).agg(F.sort_array(F.collect_list("v")).alias("vs"))
    assert [(secs(r.window.start), secs(r.window.end), r.vs) for r in out.orderBy("window").collect()] == [
        (-5, 0, [1]), (0, 5, [1, 2, 3]), (4, 9, [2, 3, 4])]


def model_sliding(rows, size, delay=0):
    """eKuiper's sliding windows: [t - size, t] per event time t, or [t - size, t + delay) with a delay."""
    by_key = defaultdict(list)
    for k, t, v in rows:
        if t is not None:
            by_key[k].append((t, v))
    out = {}
    for k, items in by_key.items():
        for t in {t for t, _ in items}:
            holds = (lambda u: t - size <= u <= t) if delay == 0 else (lambda u: t - size <= u < t + delay)
            out[(k, t - size, t + delay, "final")] = sorted(v for u, v in items if holds(u))
    return out


@given(rows=rows_strategy, size=st.integers(1, 30), n=st.integers(1, 5))
def test_sliding_matches_model_and_select_agrees(spark, rows, size, n):
    df = make_df(spark, rows, n)
    window = sw.sliding("ts", f"{size} seconds")
    grouped = df.groupBy("k", window).agg(F.collect_list("v").alias("vs"), F.sum("v").alias("s"), F.max("v").alias("hi"))
    expected = model_sliding(rows, size)
    assert summarise(grouped) == expected
    for r in grouped.collect():
        assert r.s == sum(r.vs) and r.hi == max(r.vs)
    m = sw.window_metrics(grouped)
    assert (m["rowsWindowed"], m["rowsSkipped"]) == (sum(t is not None for _, t, _ in rows), sum(t is None for _, t, _ in rows))
    tagged = df.select("k", "v", sw.sliding("ts", f"{size} seconds", partition_by="k"))
    assert tagged_members(tagged) == expected


def test_sliding_delay_takes_the_rows_up_to_delay_after_the_event(spark):
    # eKuiper SLIDINGWINDOW(ss, 5, 2): the window of t holds [t - 5, t + 2): t - 5 is in, t + 2 is out,
    # and window.end is t + 2. Without a delay both ends are in.
    df = spark.sql("SELECT timestamp_seconds(s) AS ts, v FROM VALUES (0, 1), (5, 2), (7, 3), (8, 4) AS t(s, v)")
    out = df.groupBy(sw.sliding("ts", "5 seconds", delay="2 seconds")).agg(F.sort_array(F.collect_list("v")).alias("vs"))
    assert [(secs(r.window.start), secs(r.window.end), r.vs) for r in out.orderBy("window").collect()] == [
        (-5, 2, [1]), (0, 7, [1, 2]), (2, 9, [2, 3, 4]), (3, 10, [2, 3, 4])]
    # A zero size with a delay: what follows each event, from the event on (eKuiper SLIDINGWINDOW(ss, 0, 10)).
    ahead = df.groupBy(sw.sliding("ts", "0 seconds", delay="3 seconds")).agg(F.sort_array(F.collect_list("v")).alias("vs"))
    assert [(secs(r.window.start), secs(r.window.end), r.vs) for r in ahead.orderBy("window").collect()] == [
        (0, 3, [1]), (5, 8, [2, 3]), (7, 10, [3, 4]), (8, 11, [4])]


@given(rows=rows_strategy, size=st.integers(0, 20), delay=st.integers(1, 15), n=st.integers(1, 4))
def test_sliding_delay_matches_model_in_groupby_and_select(spark, rows, size, delay, n):
    df = make_df(spark, rows, n)
    window = sw.sliding("ts", f"{size} seconds", delay=f"{delay} seconds")
    grouped = df.groupBy("k", window).agg(F.collect_list("v").alias("vs"), F.sum("v").alias("s"))
    expected = model_sliding(rows, size, delay)
    assert summarise(grouped) == expected
    m = sw.window_metrics(grouped)
    assert (m["rowsWindowed"], m["rowsSkipped"]) == (sum(t is not None for _, t, _ in rows), sum(t is None for _, t, _ in rows))
    tagged = df.select("k", "v", sw.sliding("ts", f"{size} seconds", delay=f"{delay} seconds", partition_by="k"))
    assert tagged_members(tagged) == expected


def test_sliding_delay_with_arrival_order_and_lateness(spark):
    # Rows in arrival order (order_by). The window of 10 s, [5, 12), fires once progress reaches 12. A
    # row at 6 arriving after that still joins the open window of 11 s, [6, 13); a row at 3 is in no
    # open window: late.
    rows = [(1, 10, 1), (2, 11, 2), (3, 12, 3), (4, 6, 4), (5, 3, 5), (6, 20, 6)]
    df = spark.createDataFrame([(seq, EPOCH + dt.timedelta(seconds=t), v) for seq, t, v in rows], "seq int, ts timestamp, v int")
    window = sw.sliding("ts", "5 seconds", delay="2 seconds", order_by="seq", late="passthrough")
    out = df.groupBy(window).agg(F.sort_array(F.collect_list("v")).alias("vs"))
    got = sorted((secs(r.window.start), secs(r.window.end), r.window.kind, r.vs) for r in out.collect())
    assert got == [(-2, 5, "late", [5]), (5, 12, "final", [1, 2]), (6, 13, "final", [1, 2, 3, 4]),
                   (7, 14, "final", [1, 2, 3]), (15, 22, "final", [6])]
    m = sw.window_metrics(out)
    assert (m["rowsWindowed"], m["lateRowsPassedThrough"]) == (5, 1)
    # Two seconds of lateness keep [5, 12) open until progress reaches 14: the row at 6 joins it too.
    tolerant = df.groupBy(sw.sliding("ts", "5 seconds", delay="2 seconds", order_by="seq", lateness="2 seconds")).agg(
        F.sort_array(F.collect_list("v")).alias("vs"))
    assert sorted((secs(r.window.start), secs(r.window.end), r.vs) for r in tolerant.collect()) == [
        (5, 12, [1, 2, 4]), (6, 13, [1, 2, 3, 4]), (7, 14, [1, 2, 3]), (15, 22, [6])]


def test_sliding_delay_with_update_emission(spark):
    # emit="update": after each row, every window holding it goes out as `update`, with the rows of its
    # range so far; the window of 1 s, [-4, 3), is `final` once progress reaches 3 (before the row at 3).
    df = spark.sql("SELECT timestamp_seconds(s) AS ts, s AS v FROM VALUES (1), (2), (3) AS t(s)")
    out = df.groupBy(sw.sliding("ts", "5 seconds", delay="2 seconds", emit="update")).agg(
        F.sort_array(F.collect_list("v")).alias("vs"))
    got = sorted((secs(r.window.start), secs(r.window.end), r.window.kind, tuple(r.vs)) for r in out.collect())
    assert got == sorted([
        (-4, 3, "update", (1,)), (-4, 3, "update", (1, 2)), (-3, 4, "update", (1, 2)), (-4, 3, "final", (1, 2)),
        (-3, 4, "update", (1, 2, 3)), (-2, 5, "update", (1, 2, 3)), (-3, 4, "final", (1, 2, 3)),
        (-2, 5, "final", (1, 2, 3))])


def test_sliding_delay_errors_name_the_argument(spark):
    df = spark.sql("SELECT timestamp_seconds(1) AS ts, 1 AS v")
    with pytest.raises(Exception, match=r"sw_sliding.*`delay`.*zero or positive"):
        df.groupBy(sw.sliding("ts", "5 seconds", delay="-1 seconds")).count().collect()
    with pytest.raises(Exception, match=r"sw_sliding: argument `size` must be positive, or zero with a delay"):
        df.groupBy(sw.sliding("ts", "0 seconds")).count().collect()
    with pytest.raises(Exception, match=r"sw_sliding: argument `size` must be zero or positive"):
        df.groupBy(sw.sliding("ts", "-1 seconds", delay="1 second")).count().collect()
    with pytest.raises(TypeError, match="argument `delay` must be a duration"):
        sw.sliding("ts", "5 seconds", delay=5)


def test_sliding_when_collects_around_the_matching_rows(spark):
    # "Collect one second before and one second after the temperature drops below zero": only the rows
    # below zero open a window, [t - 1 s, t + 1 s); the others join the windows that reach them.
    readings = [(0, 5.0), (1, 2.0), (2, -1.0), (3, 1.0), (6, -2.0), (9, 3.0)]
    df = spark.createDataFrame([(EPOCH + dt.timedelta(seconds=s), t) for s, t in readings], "ts timestamp, temp double")
    out = df.groupBy(sw.sliding("ts", "1 second", delay="1 second", when=F.col("temp") < 0)).agg(
        F.collect_list("temp").alias("temps"))
    assert sorted((secs(r.window.start), secs(r.window.end), r.temps) for r in out.collect()) == [
        (1, 3, [2.0, -1.0]), (5, 7, [-2.0])]
    # The same windows tag the rows in a select; rows no window reaches are in no output (as in eKuiper).
    tagged = df.select("temp", sw.sliding("ts", "1 second", delay="1 second", when=F.col("temp") < 0))
    assert sorted((secs(r.window.start), r.temp) for r in tagged.collect()) == [(1, -1.0), (1, 2.0), (5, -2.0)]
    # A null condition is false; a column name works as the condition.
    flagged = spark.sql("SELECT timestamp_seconds(s) AS ts, s AS v, IF(s = 4, true, IF(s = 2, NULL, false)) AS hot "
                        "FROM VALUES (1), (2), (4) AS t(s)")
    assert [(secs(r.window.start), secs(r.window.end), r.n) for r in
            flagged.groupBy(sw.sliding("ts", "3 seconds", when="hot")).agg(F.count("*").alias("n")).collect()] == [
        (1, 4, 3)]


def model_sliding_when(rows, size, delay, matches):
    """The windows of the event times where a row matches, each holding every row of its range."""
    everything = model_sliding(rows, size, delay)
    opened = {(k, t) for k, t, v in rows if t is not None and matches(v)}
    return {key: vs for key, vs in everything.items() if (key[0], key[1] + size) in opened}


@given(rows=rows_strategy, size=st.integers(0, 20), delay=st.integers(0, 10), n=st.integers(1, 4))
def test_sliding_when_matches_model_in_groupby_and_select(spark, rows, size, delay, n):
    assume(size > 0 or delay > 0)
    df = make_df(spark, rows, n)
    window = sw.sliding("ts", f"{size} seconds", delay=f"{delay} seconds", when=F.col("v") % 3 == 0)
    expected = model_sliding_when(rows, size, delay, lambda v: v % 3 == 0)
    assert summarise(df.groupBy("k", window).agg(F.collect_list("v").alias("vs"))) == expected
    tagged = df.select("k", "v", sw.sliding("ts", f"{size} seconds", delay=f"{delay} seconds",
                                            when=F.col("v") % 3 == 0, partition_by="k"))
    assert tagged_members(tagged) == expected


def test_sliding_when_errors_name_the_argument(spark):
    df = spark.sql("SELECT timestamp_seconds(1) AS ts, 1 AS v, 2 AS seq")
    with pytest.raises(Exception, match=r"sw_sliding: argument `when` must be a BOOLEAN condition, got INT \(v\)"):
        df.groupBy(sw.sliding("ts", "5 seconds", when="v")).count().collect()
    with pytest.raises(Exception, match=r"sw_sliding: argument `order_by` cannot be combined with `when`"):
        df.groupBy(sw.sliding("ts", "5 seconds", when=F.col("v") > 0, order_by="seq")).count().collect()


# ---------------------------------------------------------------- sessions

def spark_sessions(df, gap):
    out = df.groupBy("k", F.session_window("ts", gap).alias("window")).agg(F.collect_list("v").alias("vs"))
    return summarise(out, with_kind=False)


@given(rows=rows_strategy, gap=st.integers(1, 15), n=st.integers(1, 5))
def test_sessions_equal_spark_session_window(spark, rows, gap, n):
    df = make_df(spark, rows, n)
    ours = df.groupBy("k", sw.session("ts", f"{gap} seconds")).agg(F.collect_list("v").alias("vs"))
    assert {key[:3]: vs for key, vs in summarise(ours).items()} == spark_sessions(df, f"{gap} seconds")
    assert {key[3] for key in summarise(ours)} <= {"final"}
    tagged = df.select("k", "v", sw.session("ts", f"{gap} seconds", partition_by="k"))
    members = defaultdict(list)
    for r in tagged.collect():
        members[(r.k, secs(r.window.start), secs(r.window.end))].append(r.v)
    assert {key: sorted(vs) for key, vs in members.items()} == spark_sessions(df, f"{gap} seconds")


@given(rows=rows_strategy, gaps=st.lists(st.sampled_from([None, "0 seconds", "-1 seconds", "2 seconds", "5 seconds", "11 seconds"]),
                                         min_size=1, max_size=5), n=st.integers(1, 4))
def test_dynamic_gap_equals_spark_session_window(spark, rows, gaps, n):
    data = [(k, None if t is None else EPOCH + dt.timedelta(seconds=t), v, gaps[i % len(gaps)]) for i, (k, t, v) in enumerate(rows)]
    df = spark.createDataFrame(data, "k int, ts timestamp, v int, gap string").repartition(n)
    ours = df.groupBy("k", sw.session("ts", F.col("gap"))).agg(F.collect_list("v").alias("vs"))
    theirs = df.groupBy("k", F.session_window("ts", F.col("gap")).alias("window")).agg(F.collect_list("v").alias("vs"))
    assert {key[:3]: vs for key, vs in summarise(ours).items()} == summarise(theirs, with_kind=False)
    m = sw.window_metrics(ours)
    assert m["rowsWindowed"] + m["rowsSkipped"] == len(rows)


def model_ekuiper_sessions(times, gap, max_duration):
    """eKuiper's event-time SESSIONWINDOW, as its getNextSessionWindow + scan do it: recompute the
    next window end from the buffered rows, emit rows before it, repeat. Returns (start, end, times)."""
    inputs, out, start_at_tick = sorted(times), [], None
    while inputs:
        first = inputs[0]
        tick = first - first % max_duration + max_duration
        previous, end, ticked = None, None, False
        for t in inputs:
            if previous is not None and t - previous > gap:
                end = previous + gap
            if t > tick:
                if tick - max_duration > first and (end is None or tick < end):
                    end, ticked = tick, True
                tick += max_duration
            if end is not None:
                break
            previous = t
        if end is None:
            end = previous + gap  # end of input: the session times out
        members = [t for t in inputs if t < end]
        inputs = inputs[len(members):]
        out.append((start_at_tick if start_at_tick is not None else first, end, members))
        start_at_tick = end if ticked else None
    return out


def test_max_duration_cuts_at_aligned_check_times(spark):
    # gap 2 s, max duration 10 s, one row per second from 1 to 25: checks at 10, 20, 30 …; the check
    # at 10 cannot cut (the session began after 0), the one at 20 does (it began before 10). The row
    # at 20 opens the next session, reported as starting at 20; it times out at 25 + 2.
    df = spark.sql("SELECT timestamp_seconds(s) AS ts, s AS v FROM range(1, 26) AS t(s)")
    out = df.groupBy(sw.session("ts", "2 seconds", max_duration="10 seconds")).agg(F.collect_list("v").alias("vs"))
    got = [(secs(r.window.start), secs(r.window.end), sorted(r.vs)) for r in out.orderBy("window").collect()]
    assert got == [(1, 20, list(range(1, 20))), (20, 27, list(range(20, 26)))]
    assert [(s, e, m) for s, e, m in model_ekuiper_sessions(range(1, 26), 2, 10)] == got


@given(rows=rows_strategy, gap=st.integers(1, 6), extra=st.integers(0, 12), n=st.integers(1, 4))
def test_max_duration_matches_ekuiper_model(spark, rows, gap, extra, n):
    max_duration = gap + extra
    df = make_df(spark, rows, n)
    window = sw.session("ts", f"{gap} seconds", max_duration=f"{max_duration} seconds")
    got = summarise(df.groupBy("k", window).agg(F.collect_list("v").alias("vs")))
    by_key = defaultdict(list)
    for k, t, v in rows:
        if t is not None:
            by_key[k].append((t, v))
    expected = {}
    for k, items in by_key.items():
        for start, end, members in model_ekuiper_sessions([t for t, _ in items], gap, max_duration):
            vs = []
            for t in sorted(set(members)):
                vs += [v for u, v in items if u == t]
            expected[(k, start, end, "final")] = sorted(vs)
    assert got == expected
