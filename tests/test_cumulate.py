"""Cumulative windows (Flink SQL's CUMULATE, issue 19): a period's windows share its start and grow
by a step; only windows holding rows are output."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

import streamwin as sw

# Flink's window TVF documentation: the Bid table.
BIDS = [("2020-04-15 08:05:00", 4.0, "C", "supplier1"), ("2020-04-15 08:07:00", 2.0, "A", "supplier1"),
        ("2020-04-15 08:09:00", 5.0, "D", "supplier2"), ("2020-04-15 08:11:00", 3.0, "B", "supplier2"),
        ("2020-04-15 08:13:00", 1.0, "E", "supplier1"), ("2020-04-15 08:17:00", 6.0, "F", "supplier2")]


def bids(spark):
    return spark.createDataFrame(BIDS, "bidtime string, price double, item string, supplier_id string") \
        .withColumn("bidtime", F.to_timestamp("bidtime"))


def test_flink_cumulate_bid_example(spark):
    """CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES) with
    SUM(price) per window: Flink's documented result, windows holding no bid yet are not output."""
    out = bids(spark).groupBy(sw.cumulate("bidtime", "10 minutes", "2 minutes")).agg(F.sum("price").alias("price"))
    got = [(r.window.start.strftime("%H:%M"), r.window.end.strftime("%H:%M"), r.price)
           for r in out.orderBy("window.start", "window.end").collect()]
    assert got == [("08:00", "08:06", 4.0), ("08:00", "08:08", 6.0), ("08:00", "08:10", 11.0),
                   ("08:10", "08:12", 3.0), ("08:10", "08:14", 4.0), ("08:10", "08:16", 4.0),
                   ("08:10", "08:18", 10.0), ("08:10", "08:20", 10.0)]
    assert {r.window.kind for r in out.collect()} == {"final"}


def test_cumulate_in_sql_and_per_key(spark):
    bids(spark).createOrReplaceTempView("bid")
    rows = spark.sql("""
        SELECT supplier_id, window.start, window.end, sum(price) AS price FROM bid
        GROUP BY supplier_id, sw_cumulate(bidtime, INTERVAL 10 MINUTES, INTERVAL 5 MINUTES)
        ORDER BY supplier_id, window.end""").collect()
    t = lambda m: dt.datetime(2020, 4, 15, 8, m)  # noqa: E731
    assert [(r.supplier_id, r.start, r.end, r.price) for r in rows] == [
        ("supplier1", t(0), t(10), 6.0), ("supplier1", t(10), t(15), 1.0), ("supplier1", t(10), t(20), 1.0),
        ("supplier2", t(0), t(10), 5.0), ("supplier2", t(10), t(15), 3.0), ("supplier2", t(10), t(20), 9.0)]


def test_cumulate_select_tags_each_row_with_every_window_holding_it(spark):
    out = bids(spark).where("item IN ('C', 'D')").select(
        "item", sw.cumulate("bidtime", "10 minutes", "2 minutes", partition_by="supplier_id"))
    got = sorted((r.item, r.window.end.strftime("%H:%M")) for r in out.collect())
    assert got == [("C", "08:06"), ("C", "08:08"), ("C", "08:10"), ("D", "08:10")]


def test_cumulate_with_order_by_and_lateness(spark):
    """A bid arriving after the 08:10 windows closed is late for them (KX lateness), dropped or passed through."""
    rows = [(i, t, p) for i, (t, p) in enumerate([("08:05", 4.0), ("08:13", 3.0), ("08:07", 2.0), ("08:15", 1.0)])]
    df = spark.createDataFrame(rows, "seq long, t string, price double") \
        .withColumn("ts", F.to_timestamp(F.concat(F.lit("2020-04-15 "), "t")))

    def windows(**policies):
        out = df.groupBy(sw.cumulate("ts", "10 minutes", "5 minutes", order_by="seq", **policies)) \
            .agg(F.sum("price").alias("p"))
        return sorted((r.window.end.strftime("%H:%M"), r.window.kind, r.p) for r in out.collect())

    # 08:13 moves progress past 08:10, so the 08:10 window fired before 08:07 arrived.
    assert windows() == [("08:10", "final", 4.0), ("08:15", "final", 3.0), ("08:20", "final", 4.0)]
    assert windows(lateness="5 minutes") == [("08:10", "final", 6.0), ("08:15", "final", 3.0), ("08:20", "final", 4.0)]
    assert windows(late="passthrough") == [("08:10", "final", 4.0), ("08:10", "late", 2.0), ("08:15", "final", 3.0),
                                           ("08:20", "final", 4.0)]


@pytest.mark.parametrize("make,message", [
    (lambda: sw.cumulate("bidtime", "10 minutes", "3 minutes"), r"sw_cumulate: argument `size` must be a whole multiple of step"),
    (lambda: sw.cumulate("bidtime", "10 minutes", "0 minutes"), r"sw_cumulate: argument `step` must be positive"),
    (lambda: sw.cumulate("bidtime", "10 minutes", "2 minutes", emit_empty=True),
     r"sw_cumulate: argument `emit_empty` is not available for sw_cumulate"),
    (lambda: sw.cumulate("price", "10 minutes", "2 minutes"), r"sw_cumulate: argument `time` must be a TIMESTAMP"),
])
def test_cumulate_bad_arguments(spark, make, message):
    with pytest.raises(AnalysisException, match=message):
        bids(spark).groupBy(make()).count().collect()


def _cumulate_model(rows, size, step, offset):
    """(k, start, end, n, total) of every cumulative window holding a row: the definition, row by row."""
    out = {}
    for k, t, v in rows:
        period = t - (t - offset) % size
        end = period + ((t - period) // step + 1) * step
        while end <= period + size:
            n, total = out.get((k, period, end), (0, 0))
            out[(k, period, end)] = (n + 1, total + v)
            end += step
    return sorted((k, s, e, n, total) for (k, s, e), (n, total) in out.items())


@pytest.mark.parametrize("seed", range(5))
def test_cumulate_slices_equal_the_definition_and_the_row_replay(spark, seed):
    # Without policies a groupBy pre-aggregates step-long slices; with an order_by it replays rows.
    rng = random.Random(seed)
    step = rng.choice([2, 3, 5])
    size = step * rng.choice([1, 2, 4, 7])
    offset = rng.randint(-10, 10)
    rows = [(rng.choice("ab"), rng.randint(-20, 80), rng.randint(1, 9)) for _ in range(rng.randint(1, 60))]
    # An arrival order that follows event time (distinct per key), so the replay drops nothing as late.
    ordered = [(k, t, v, t * 1000 + i) for i, (k, t, v) in enumerate(rows)]
    df = spark.createDataFrame(ordered, "k string, s long, v long, seq long").withColumn("ts", F.timestamp_seconds("s"))

    def run(window):
        out = df.groupBy("k", window).agg(F.count("*").alias("n"), F.sum("v").alias("total"))
        return sorted((r.k, int(r.window.start.timestamp()), int(r.window.end.timestamp()), r.n, r.total)
                      for r in out.collect())

    durations = (f"{size} seconds", f"{step} seconds")
    sliced = run(sw.cumulate("ts", *durations, offset=f"{offset} seconds"))
    replayed = run(sw.cumulate("ts", *durations, offset=f"{offset} seconds", order_by="seq"))
    assert sliced == _cumulate_model(rows, size, step, offset)
    assert replayed == sliced
