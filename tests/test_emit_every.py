"""emit_every: periodic early results in event time (Flink's ContinuousEventTimeTrigger, Beam's early
firings). After a row moves a key's progress past a multiple of the period (aligned to the epoch plus
the window's offset), each window open before the row and still open after it outputs one ``update``
including that row; windows the row closes output only their ``final``."""

from __future__ import annotations

import datetime
import random

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

import streamwin as sw


def _frame(spark, rows, columns="k string, s long, v long"):
    return spark.createDataFrame(rows, columns).withColumn("ts", F.timestamp_seconds("s"))


def _outputs(df):
    """(start s, end s, kind, n, total) per output row, in a stable order."""
    return sorted(
        (int(r.window.start.timestamp()), int(r.window.end.timestamp()), r.window.kind, r.n, r.total)
        for r in df.collect()
    )


def _agg(df, window):
    return df.groupBy("k", window).agg(F.count("*").alias("n"), F.sum("v").alias("total"))


def model(times_values, size, step, period, offset=0):
    """Aligned windows in event-time order (no lateness): the rule of the issue, row by row."""
    out = []
    open_windows: dict[int, list[int]] = {}
    progress = None
    for t, v in times_values:
        before = dict(open_windows)
        passes = progress is None or t > progress and any(
            progress < m <= t for m in range(progress - (progress - offset) % period + period, t + 1, period))
        # the row joins its windows
        first = t - (t - offset) % step
        start = first
        while start > t - size:
            open_windows.setdefault(start, []).append(v)
            start -= step
        progress = t if progress is None else max(progress, t)
        # windows whose end progress reached fire
        for s in sorted(open_windows):
            if s + size <= progress:
                out.append((s, s + size, "final", len(open_windows[s]), sum(open_windows[s])))
                del open_windows[s]
        if passes and progress is not None:
            for s in sorted(before):
                if s in open_windows:
                    out.append((s, s + size, "update", len(open_windows[s]), sum(open_windows[s])))
    for s in sorted(open_windows):
        out.append((s, s + size, "final", len(open_windows[s]), sum(open_windows[s])))
    return sorted(out)


def test_a_daily_window_over_rows_every_minute_updates_at_each_hour_inside_the_day(spark):
    # The example: one row per minute of a day (plus the next midnight, which closes it).
    rows = [("a", m * 60, 1) for m in range(24 * 60 + 1)]
    out = _agg(_frame(spark, rows), sw.tumbling("ts", "1 day", emit_every="1 hour"))
    day = [r for r in _outputs(out) if r[0] == 0]
    updates = [r for r in day if r[2] == "update"]
    assert len(updates) == 23
    # The update at hour h is output by the row at h:00 and includes it: h * 60 + 1 rows.
    assert sorted(r[3] for r in updates) == [h * 60 + 1 for h in range(1, 24)]
    assert [r for r in day if r[2] == "final"] == [(0, 86400, "final", 1440, 1440)]


def test_one_update_per_row_however_many_multiples_it_passes(spark):
    rows = [("a", 1, 1), ("a", 2, 2), ("a", 13, 4), ("a", 31, 8)]
    out = _agg(_frame(spark, rows), sw.tumbling("ts", "30 seconds", emit_every="5 seconds"))
    # 13 passes 5 and 10: one update of [0, 30) with 1 + 2 + 4. 31 closes [0, 30): final only.
    assert _outputs(out) == [(0, 30, "final", 3, 7), (0, 30, "update", 3, 7), (30, 60, "final", 1, 8)]


def test_the_multiples_align_to_the_window_offset(spark):
    rows = [("a", 1, 1), ("a", 6, 2), ("a", 8, 4)]
    w = sw.tumbling("ts", "20 seconds", offset="2 seconds", emit_every="5 seconds")
    # Windows [-18, 2), [2, 22); multiples at 2, 7, 12, ...: the row at 6 passes 2 and closes [-18, 2) (final
    # only); the row at 8 passes 7, and [2, 22), open before it, outputs an update.
    assert _outputs(_agg(_frame(spark, rows), w)) == [
        (-18, 2, "final", 1, 1), (2, 22, "final", 2, 6), (2, 22, "update", 2, 6)]


def test_a_window_opened_by_the_row_that_passes_a_multiple_does_not_update(spark):
    rows = [("a", 3, 1), ("a", 10, 2), ("a", 12, 4)]
    w = sw.hopping("ts", "10 seconds", "5 seconds", emit_every="10 seconds")
    # The row at 10 passes 10 and closes [-5, 5) and [0, 10) (finals only); it opens [5, 15) and [10, 20),
    # which held no row before that time, so nothing updates (as Flink's continuous trigger).
    assert _outputs(_agg(_frame(spark, rows), w)) == [
        (-5, 5, "final", 1, 1), (0, 10, "final", 1, 1), (5, 15, "final", 2, 6), (10, 20, "final", 2, 6)]


@pytest.mark.parametrize("seed", range(6))
def test_aligned_windows_match_the_model(spark, seed):
    rng = random.Random(seed)
    size, step = rng.choice([(20, 20), (20, 5), (30, 10), (10, 15)])
    period = rng.choice([3, 5, 7, 10])
    times = sorted(rng.randint(0, 120) for _ in range(rng.randint(5, 40)))
    rows = [("a", t, rng.randint(1, 9)) for t in times]
    w = sw.hopping("ts", f"{size} seconds", f"{step} seconds", emit_every=f"{period} seconds")
    assert _outputs(_agg(_frame(spark, rows), w)) == model([(t, v) for _, t, v in rows], size, step, period)


def test_sessions_update_while_they_last(spark):
    rows = [("a", 1, 1), ("a", 4, 2), ("a", 7, 4), ("a", 20, 8), ("a", 22, 16)]
    w = sw.session("ts", "5 seconds", emit_every="5 seconds")
    # 7 passes 5: the session so far (1 + 2) with the row (4), now [1, 12), outputs an update of 7; 20 passes
    # 10, 15 and 20 and closes [1, 12) (final only); 22 passes nothing.
    assert _outputs(_agg(_frame(spark, rows), w)) == [
        (1, 12, "final", 3, 7), (1, 12, "update", 3, 7), (20, 27, "final", 2, 24)]


def test_cumulate_windows_update_too(spark):
    rows = [("a", 1, 1), ("a", 12, 2), ("a", 25, 4), ("a", 41, 8)]
    w = sw.cumulate("ts", "30 seconds", "10 seconds", emit_every="15 seconds")
    out = _outputs(_agg(_frame(spark, rows), w))
    finals = [r for r in out if r[2] == "final"]
    assert finals == [(0, 10, "final", 1, 1), (0, 20, "final", 2, 3), (0, 30, "final", 3, 7), (30, 50, "final", 1, 8),
                      (30, 60, "final", 1, 8)]
    # 25 passes 15: [0, 30) is open before and after (with 1 + 2 + 4); [0, 20) closes at 20 (final only).
    assert [r for r in out if r[2] == "update"] == [(0, 30, "update", 3, 7)]


def test_select_tags_each_row_of_an_early_result(spark):
    rows = [("a", 1, 1), ("a", 6, 2), ("a", 12, 4)]
    out = _frame(spark, rows).select("s", sw.tumbling("ts", "10 seconds", emit_every="5 seconds"))
    got = sorted((r.s, int(r.window.start.timestamp()), r.window.kind) for r in out.collect())
    assert got == [(1, 0, "final"), (1, 0, "update"), (6, 0, "final"), (6, 0, "update"), (12, 10, "final")]


def test_timedelta_and_sql(spark):
    rows = [("a", 1, 1), ("a", 6, 2), ("a", 12, 4)]
    df = _frame(spark, rows)
    by_delta = _outputs(_agg(df, sw.tumbling("ts", "10 seconds", emit_every=datetime.timedelta(seconds=5))))
    df.createOrReplaceTempView("emit_every_rows")
    sql = spark.sql(
        "SELECT k, sw_tumbling(ts, '10 seconds', 'emit_every', '5 seconds') AS window, count(*) AS n, sum(v) AS total "
        "FROM emit_every_rows GROUP BY k, sw_tumbling(ts, '10 seconds', 'emit_every', '5 seconds')")
    assert _outputs(sql) == by_delta == [(0, 10, "final", 2, 3), (0, 10, "update", 2, 3), (10, 20, "final", 1, 4)]


@pytest.mark.parametrize("window,message", [
    (lambda: sw.sliding("ts", "10 seconds", emit_every="5 seconds"), "sw_sliding: argument `emit_every` is not available"),
    (lambda: sw.count(3, order_by="s", emit_every="5 seconds"), "sw_count: argument `emit_every` is not available"),
    (lambda: sw.interval("ts", "10 seconds", emit_every="5 seconds"), "sw_interval: argument `emit_every` is not available"),
    (lambda: sw.timer("10 seconds", ingest_time="ts", emit_every="5 seconds"), "sw_timer: argument `emit_every` is not available"),
    (lambda: sw.session("ts", "5 seconds", max_duration="1 minute", emit_every="5 seconds"),
     "sw_session: argument `emit_every` is not available for sw_session: not available with max_duration"),
    (lambda: sw.tumbling("ts", "10 seconds", emit="update", emit_every="5 seconds"),
     "sw_tumbling: argument `emit_every` adds nothing to emit='update'"),
    (lambda: sw.tumbling("ts", "10 seconds", emit_every="0 seconds"), "sw_tumbling: argument `emit_every` must be positive"),
])
def test_clear_errors_where_it_does_not_apply(spark, window, message):
    df = _frame(spark, [("a", 1, 1)])
    with pytest.raises(AnalysisException, match=message.replace("(", r"\(").replace(")", r"\)")):
        _agg(df, window()).collect()
