"""SPL timeInterval panes (with late re-triggers) and processing-time timer windows."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import functions as F

import streamwin as sw

EPOCH = dt.datetime(1970, 1, 1)


def secs(t: dt.datetime) -> float:
    return (t - EPOCH).total_seconds()


SPL_PANES = dict(creation_period="5 seconds", discard_age="15 seconds")


def test_spl_panes_of_the_seed(spark):
    # SPL: intervalDuration(10.0), creationPeriod(5.0), discardAge(15.0) makes panes [0,10), [5,15),
    # [10,20), …; T(7) is in [0,10) and [5,15); T(10) is not in [0,10) (closed left, open right).
    df = spark.sql("SELECT timestamp_seconds(s) AS ts, s FROM VALUES (7), (10) AS t(s)")
    out = df.groupBy(sw.interval("ts", "10 seconds", **SPL_PANES)).agg(F.sort_array(F.collect_list("s")).alias("s"))
    assert [(secs(r.window.start), secs(r.window.end), r.window.kind, r.s) for r in out.orderBy("window").collect()] == [
        (0, 10, "final", [7]), (5, 15, "final", [7, 10]), (10, 20, "final", [10])]
    tagged = df.select("s", sw.interval("ts", "10 seconds", **SPL_PANES))
    assert sorted((r.s, secs(r.window.start)) for r in tagged.collect()) == [(7, 0), (7, 5), (10, 5), (10, 10)]


def test_late_rows_update_the_pane_until_discard_age(spark):
    # Arrival order 1, 12, 3, 26, 8 with 10 s panes and a 15 s discard age. 12 closes [0,10) (final
    # {1}); 3 is late but 12 < 10 + 15, so the pane is emitted again whole (update {1, 3}); 26 closes
    # [10,20) and passes 10 + 15, so [0,10) is gone and 8 is late: dropped and counted.
    df = spark.sql("SELECT 'a' AS k, timestamp_seconds(s) AS ts, s, seq FROM VALUES "
                   "(1, 1), (12, 2), (3, 3), (26, 4), (8, 5) AS t(s, seq)")
    out = df.groupBy("k", sw.interval("ts", "10 seconds", discard_age="15 seconds", order_by="seq")).agg(
        F.collect_list("s").alias("s"))
    got = [(secs(r.window.start), r.window.kind, r.s) for r in out.collect()]
    assert sorted(got) == [(0, "final", [1]), (0, "update", [1, 3]), (10, "final", [12]), (20, "final", [26])]
    m = sw.window_metrics(out)
    assert (m["rowsWindowed"], m["lateRowsDropped"], m["rowsSkipped"]) == (4, 1, 0)
    # Without order_by the rows are replayed in event-time order: nothing is late.
    in_time = df.groupBy("k", sw.interval("ts", "10 seconds", discard_age="15 seconds")).agg(F.collect_list("s").alias("s"))
    assert sorted((secs(r.window.start), r.window.kind, sorted(r.s)) for r in in_time.collect()) == [
        (0, "final", [1, 3, 8]), (10, "final", [12]), (20, "final", [26])]


def test_discard_age_zero_drops_every_late_row(spark):
    df = spark.sql("SELECT timestamp_seconds(s) AS ts, seq FROM VALUES (1, 1), (10, 2), (2, 3) AS t(s, seq)")
    out = df.groupBy(sw.interval("ts", "10 seconds", order_by="seq")).count()
    assert sorted((secs(r.window.start), r.window.kind, r["count"]) for r in out.collect()) == [(0, "final", 1), (10, "final", 1)]
    assert sw.window_metrics(out)["lateRowsDropped"] == 1


def test_interval_order_by_ties_are_an_error(spark):
    import pytest
    from pyspark.errors import PySparkException
    from py4j.protocol import Py4JJavaError

    df = spark.sql("SELECT timestamp_seconds(s) AS ts, 1 AS seq FROM VALUES (1), (2) AS t(s)")
    with pytest.raises((PySparkException, Py4JJavaError), match="two rows of the same key have order_by"):
        df.groupBy(sw.interval("ts", "10 seconds", order_by="seq")).count().collect()


def model_interval(rows, duration, period, discard, offset):
    """Replays each key's rows in seq order: panes, progress, triggers, discards (all in seconds)."""
    by_key = defaultdict(list)
    for k, t, seq, v in rows:
        by_key[k].append((seq, t, v))
    out, late, skipped = [], 0, 0
    for k, items in by_key.items():
        panes, progress = {}, None  # start -> [values, triggered, changed]
        for _, t, v in sorted(items):
            if t is None:
                skipped += 1
                continue
            starts = [s for s in range(t - duration - period, t + 1) if (s - offset) % period == 0 and s <= t < s + duration]
            accepted = False
            for s in starts:
                if progress is None or s + duration + discard > progress:
                    pane = panes.setdefault(s, [[], False, False])
                    pane[0].append(v)
                    pane[2] = True
                    accepted = True
            if not accepted:
                late, skipped = late + bool(starts), skipped + (not starts)
            progress = t if progress is None else max(progress, t)
            for s in sorted(panes):
                pane = panes[s]
                if s + duration <= progress:
                    if pane[2]:
                        out.append((k, s, s + duration, "update" if pane[1] else "final", sorted(pane[0])))
                        pane[1], pane[2] = True, False
                    if s + duration + discard <= progress:
                        del panes[s]
        for s in sorted(panes):
            if panes[s][2]:
                out.append((k, s, s + duration, "update" if panes[s][1] else "final", sorted(panes[s][0])))
    return sorted(out), late, skipped


interval_rows = st.lists(
    st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(-30, 90)), st.integers(-20, 20)), max_size=100,
).map(lambda rows: [(k, t, seq, v) for seq, (k, t, v) in enumerate(rows)])


@given(rows=interval_rows, duration=st.integers(1, 20), period=st.integers(1, 25), discard=st.integers(0, 30),
       offset=st.integers(-10, 10), n=st.integers(1, 4))
def test_interval_matches_model(spark, rows, duration, period, discard, offset, n):
    data = [(k, None if t is None else EPOCH + dt.timedelta(seconds=t), seq, v) for k, t, seq, v in rows]
    df = spark.createDataFrame(data, "k int, ts timestamp, seq long, v int").repartition(n)
    window = sw.interval("ts", f"{duration} seconds", creation_period=f"{period} seconds", discard_age=f"{discard} seconds",
                         offset=f"{offset} seconds", order_by="seq")
    out = df.groupBy("k", window).agg(F.collect_list("v").alias("vs"))
    got = sorted((r.k, secs(r.window.start), secs(r.window.end), r.window.kind, sorted(r.vs)) for r in out.collect())
    expected, late, skipped = model_interval(rows, duration, period, discard, offset)
    assert got == expected
    m = sw.window_metrics(out)
    assert (m["lateRowsDropped"], m["rowsSkipped"]) == (late, skipped)
    assert m["rowsWindowed"] + late + skipped == len(rows)
    # select: every emitted pane (final and update) with its member rows; tagged rows equal the grouped ones.
    tagged = df.select("v", sw.interval("ts", f"{duration} seconds", creation_period=f"{period} seconds",
                                        discard_age=f"{discard} seconds", offset=f"{offset} seconds", order_by="seq",
                                        partition_by="k"), "k")
    members = defaultdict(list)
    for r in tagged.collect():
        members[(r.k, secs(r.window.start), secs(r.window.end), r.window.kind)].append(r.v)
    assert sorted(key + (sorted(vs),) for key, vs in members.items()) == expected


# ---------------------------------------------------------------- timer

def test_timer_groups_by_arrival_time(spark):
    # KX timer / SPL time(T): what arrived in each period, whatever its event time.
    df = spark.sql("SELECT timestamp_seconds(a) AS arrived, timestamp_seconds(e) AS ts, v FROM VALUES "
                   "(1, 100, 1), (4, 3, 2), (5, 50, 3), (12, 1, 4) AS t(a, e, v)")
    out = df.groupBy(sw.timer("5 seconds", ingest_time="arrived")).agg(F.sort_array(F.collect_list("v")).alias("vs"))
    assert [(secs(r.window.start), secs(r.window.end), r.window.kind, r.vs) for r in out.orderBy("window").collect()] == [
        (0, 5, "final", [1, 2]), (5, 10, "final", [3]), (10, 15, "final", [4])]
    tagged = df.select("v", sw.timer("5 seconds", ingest_time="arrived"))
    assert sorted((r.v, secs(r.window.start)) for r in tagged.collect()) == [(1, 0), (2, 0), (3, 5), (4, 10)]


def test_timer_without_ingest_time_is_one_arrival_now(spark):
    df = spark.range(10)
    before = dt.datetime.now()
    rows = df.groupBy(sw.timer("1 hour")).count().collect()
    after = dt.datetime.now()
    assert len(rows) == 1 and rows[0]["count"] == 10
    w = rows[0].window
    assert (w.end - w.start) == dt.timedelta(hours=1) and w.start <= after and before < w.end


@given(rows=st.lists(st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(-50, 200)), st.integers(-9, 9)), max_size=100),
       period=st.integers(1, 40), n=st.integers(1, 4))
def test_timer_matches_model(spark, rows, period, n):
    data = [(k, None if a is None else EPOCH + dt.timedelta(seconds=a), v) for k, a, v in rows]
    df = spark.createDataFrame(data, "k int, arrived timestamp, v int").repartition(n)
    out = df.groupBy("k", sw.timer(f"{period} seconds", ingest_time="arrived")).agg(F.collect_list("v").alias("vs"))
    got = {(r.k, secs(r.window.start), secs(r.window.end), r.window.kind): sorted(r.vs) for r in out.collect()}
    expected = defaultdict(list)
    for k, a, v in rows:
        if a is not None:
            start = a - a % period
            expected[(k, start, start + period, "final")].append(v)
    assert got == {key: sorted(vs) for key, vs in expected.items()}
    m = sw.window_metrics(out)
    assert (m["rowsWindowed"], m["rowsSkipped"]) == (sum(a is not None for _, a, _ in rows), sum(a is None for _, a, _ in rows))
